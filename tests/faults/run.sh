#!/bin/bash
# The fault-injection suite: a fresh database, the front end(s) (two on
# MariaDB, each its own nginx, workers and sweeper), then faults.py's
# seeded load and nemesis for FAULTS_SECONDS, a settle, and the checker
# (tests/faults/check.py) on what it recorded.
#
# Usage: tests/faults/run.sh [--expect-fail] sqlite|mariadb [BIN]
#   BIN            the directory holding redeem-fcgi, redeem-sweep and
#                  redeemctl (default build)
#   --expect-fail  the negative control: BIN is a PLANTED_BUG=1 build; a
#                  short race-heavy run without faults that succeeds only
#                  when the checker finds a violation
# Environment: FAULTS_SECONDS (600; 30 with --expect-fail), FAULTS_SEED
# (random), FAULTS_CLIENTS (8; 10 with --expect-fail), FAULTS_OUT (a temp
# dir, removed after a pass, kept on failure), FAULTS_WORKERS (workers per
# front end: 3 on SQLite, 2 on MariaDB).
# Replay a failure with the seed it prints: the faults and each client's
# choices follow the seed (timing still differs).
set -uo pipefail

expect_fail=0
if [ "${1:-}" = --expect-fail ]; then
	expect_fail=1
	shift
fi
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 [--expect-fail] sqlite|mariadb [BIN]" >&2
	exit 2
fi
engine=$1
case $engine in sqlite | mariadb) ;; *)
	echo "faults: ENGINE is sqlite or mariadb, not $engine" >&2
	exit 2
	;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd -P)
bin=$(cd "${2:-$root/build}" 2>/dev/null && pwd -P) || {
	echo "faults: no directory ${2:-build}" >&2
	exit 2
}
cd "$root" || exit 2
for f in redeem-fcgi redeem-sweep redeemctl; do
	if [ ! -x "$bin/$f" ]; then
		echo "faults: $bin/$f is missing" >&2
		exit 2
	fi
done

if [ $expect_fail = 1 ]; then
	seconds=${FAULTS_SECONDS:-30}
	clients=${FAULTS_CLIENTS:-10}
	mode=race
else
	seconds=${FAULTS_SECONDS:-600}
	clients=${FAULTS_CLIENTS:-8}
	mode=faults
fi
seed=${FAULTS_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
if [ -n "${FAULTS_OUT:-}" ]; then
	out=$FAULTS_OUT
	mkdir -p "$out" && out=$(cd "$out" && pwd -P) || exit 2
else
	out=$(mktemp -d "${TMPDIR:-/tmp}/faults.XXXXXX")
fi
tag="$engine"
[ $expect_fail = 1 ] && tag="$engine, negative control"
replay="FAULTS_SEED=$seed FAULTS_SECONDS=$seconds tests/faults/run.sh"
[ $expect_fail = 1 ] && replay="$replay --expect-fail"
replay="$replay $engine"
[ -n "${2:-}" ] && replay="$replay $2"
echo "== faults on $tag: seed $seed, $seconds s, $clients clients, out $out"

# Every process of the run reads these (serve.sh passes its environment
# to the workers and the sweeper; faults.py to redeemctl and its own
# sweeper).
export REDEEM_SPLIT_MIN_USES=50
export REDEEM_SWEEP_RELEASE_LEAKED=1 REDEEM_SWEEP_DELIVER=1
export REDEEM_SWEEP_LEASE=5 REDEEM_SWEEP_EXPIRE=5
export REDEEM_WEBHOOK_ALLOW_PRIVATE=1
export REDEEM_ABUSE_LIMIT=1000000
export REDEEM_TRUSTED_PROXIES=127.0.0.1,::1

mdir=
serve_pids=()
cleanup() {
	local p i
	trap - EXIT INT TERM
	if [ -n "${faults_pid:-}" ]; then
		# It kills its clients, receiver and sweeper first.
		kill -TERM "$faults_pid" 2>/dev/null
		wait "$faults_pid" 2>/dev/null
	fi
	for p in "${serve_pids[@]}"; do
		# SIGCONT first: a worker the nemesis stopped must see SIGTERM.
		pkill -CONT -s "$p" 2>/dev/null
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${serve_pids[@]}"; do
		for ((i = 0; i < 150; i++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$p" 2>/dev/null && kill -KILL -- "-$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ -n "$mdir" ] && tests/mariadb.sh stop "$mdir" >/dev/null 2>&1
	if [ "${verdict:-fail}" = pass ] && [ -z "${FAULTS_OUT:-}" ]; then
		rm -rf "$out"
	fi
}
trap cleanup EXIT
trap 'echo "faults: interrupted" >&2; exit 130' INT TERM

failed() {
	echo "faults: FAILED on $tag: $*"
	echo "faults: seed $seed; history, faults and logs in $out"
	echo "replay: $replay"
	exit 1
}

# A fresh database. MariaDB: a private server on the disk, durable
# (innodb_flush_log_at_trx_commit = 1, not mariadb.sh's fast mode): the
# checker holds every acknowledged redemption to surviving a SIGKILL of
# mariadbd.
case $engine in
sqlite)
	db="sqlite:$out/redeem.db"
	workers=${FAULTS_WORKERS:-3}
	fronts=1
	;;
mariadb)
	mdir=$out/mariadb
	db=$(tests/mariadb.sh start "$mdir") || failed "MariaDB did not start"
	workers=${FAULTS_WORKERS:-2}
	fronts=2
	;;
esac
export REDEEM_DB=$db
"$bin/redeemctl" migrate >/dev/null || failed "redeemctl migrate"

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
ports=()
vars=()
for ((f = 1; f <= fronts; f++)); do
	port=$(free_port)
	var=$out/var$f
	mkdir -p "$var"
	REDEEM_PORT=$port REDEEM_VAR=$var REDEEM_BIN=$bin REDEEM_WORKERS=$workers \
		setsid nginx/serve.sh >"$out/serve$f.out" 2>&1 </dev/null &
	serve_pids+=($!)
	ready=0
	for ((i = 0; i < 300; i++)); do
		kill -0 "${serve_pids[-1]}" 2>/dev/null || break
		if [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' \
			"http://127.0.0.1:$port/healthz")" = 200 ]; then
			ready=1
			break
		fi
		sleep 0.1
	done
	[ $ready = 1 ] || {
		tail -20 "$out/serve$f.out" "$var/log/worker.log" 2>/dev/null
		failed "front end $f did not become ready"
	}
	ports+=("$port")
	vars+=("$var")
done

t0=$(date +%s)
join() {
	local IFS=,
	echo "$*"
}
PYTHONDONTWRITEBYTECODE=1 python3 -u tests/faults/faults.py --out "$out" --engine "$engine" \
	--dsn "$db" --bin "$bin" --ports "$(join "${ports[@]}")" \
	--var "$(join "${vars[@]}")" --serve-pids "$(join "${serve_pids[@]}")" \
	--mariadb-dir "$mdir" --seconds "$seconds" --seed "$seed" \
	--clients "$clients" --mode "$mode" &
faults_pid=$!
wait "$faults_pid"
rc=$?
faults_pid=
[ $rc -eq 0 ] || failed "faults.py exited $rc"
for p in "${serve_pids[@]}"; do
	kill -0 "$p" 2>/dev/null || failed "a front end (serve.sh $p) died during the run"
done
echo "== load and faults done in $(($(date +%s) - t0)) s; checking"

check=tests/faults/check.py
[ -f "$check" ] || check=tests/faults/check_standin.py
PYTHONDONTWRITEBYTECODE=1 python3 -u "$check" --out "$out" --redeemctl "$bin/redeemctl" 2>&1 | tee "$out/check.out"
crc=${PIPESTATUS[0]}
if [ $expect_fail = 1 ]; then
	if [ "$crc" -eq 0 ]; then
		failed "the checker passed the PLANTED_BUG build (negative control)"
	fi
	echo "== negative control: the checker caught the planted bug (exit $crc)"
else
	[ "$crc" -eq 0 ] || failed "the checker found violations (exit $crc)"
fi
verdict=pass
echo "== faults on $tag: passed in $(($(date +%s) - t0)) s (seed $seed)"
