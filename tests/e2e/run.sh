#!/bin/bash
# End to end: real nginx, FastCGI workers and the sweeper (nginx/serve.sh)
# on a loopback port, driven by the API, leases (holds, permits, webhooks),
# page, admin dashboard and admin browser tests, then stopped; nothing of
# the run may be left running, and the workers' and the sweeper's logs must
# hold no sanitizer report.
#
# Usage: tests/e2e/run.sh BIN DSN
#   BIN  the directory holding redeem-fcgi and redeemctl (build, build/asan)
#   DSN  "sqlite" (a fresh database in a temp dir) or a mysql:// DSN, whose
#        database is dropped and created again first
# Environment: REDEEM_ARTEFACTS (default build/test-artefacts) gets the page
# and dashboard screenshots; E2E_ONLY=word,... runs only the API, leases and
# admin checks whose name has a word; E2E_KEEP=1 keeps the temp dir;
# E2E_SERVE overrides nginx/serve.sh. The sweeper runs its release_leaked
# and deliver jobs every second (REDEEM_SWEEP_RELEASE_LEAKED,
# REDEEM_SWEEP_DELIVER, unless set) and may deliver webhooks to loopback
# (REDEEM_WEBHOOK_ALLOW_PRIVATE=1), for the leases test's receiver. The
# workers trust the loopback proxy's X-Forwarded-For
# (REDEEM_TRUSTED_PROXIES, unless set), so each admin test client has an
# address of its own and the login throttle of one never reaches another.
set -uo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BIN sqlite|mysql://..." >&2
	exit 2
fi
# BIN and REDEEM_ARTEFACTS are taken relative to where we are called from;
# the default artefact directory is the repository's build/test-artefacts.
bin=$(cd "$1" 2>/dev/null && pwd -P) || {
	echo "e2e: no directory $1" >&2
	exit 2
}
artefacts=${REDEEM_ARTEFACTS:-}
if [ -n "$artefacts" ]; then
	mkdir -p "$artefacts" && artefacts=$(cd "$artefacts" && pwd -P) || exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$root" || exit 2
artefacts=${artefacts:-$root/build/test-artefacts}
dsn=$2
serve=${E2E_SERVE:-$root/nginx/serve.sh}
workers=${E2E_WORKERS:-3}
case $bin in */asan) tag=asan- ;; *) tag= ;; esac
case $dsn in mysql://*) tag=${tag}mariadb ;; *) tag=${tag}sqlite ;; esac

for f in "$bin/redeem-fcgi" "$bin/redeemctl" "$serve"; do
	if [ ! -x "$f" ]; then
		echo "e2e: $f is missing or not executable" >&2
		exit 2
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/e2e.XXXXXX")
var=$tmp/var
mkdir -p "$var"
serve_pid=
serve2_pid=
child=
printer=
pass=0
fail=0

ok() {
	pass=$((pass + 1))
	echo "ok   $*"
}
bad() {
	fail=$((fail + 1))
	echo "FAIL $*"
}

# The processes of this run: in serve.sh's session (it is started with
# setsid) or naming the state directory on their command line.
run_procs() {
	local p sid cmd stat
	local -a args
	for p in /proc/[0-9]*; do
		{ read -r stat <"$p/stat" && mapfile -d '' args <"$p/cmdline"; } \
			2>/dev/null || continue
		# The fields after the command name; the 4th is the session id.
		stat=${stat##*) }
		read -r _ _ _ sid _ <<<"$stat"
		cmd=${args[*]}
		if [ "${sid:-0}" = "${serve_pid:-x}" ] || [[ $cmd == *"$var"* ]]; then
			echo "${p#/proc/} $cmd"
		fi
	done
}

# Stops serve.sh: SIGTERM, a bounded wait, then SIGKILL of its whole
# session. Prints what it had to kill. 0 when serve.sh stopped by itself.
stop_serve() {
	stop_pid "$serve_pid"
}
# stop_pid PID: the same for any serve.sh of ours (the second front end).
stop_pid() {
	local i rc=0 pid=$1
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 150; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "e2e: serve.sh still running 15 s after SIGTERM; killing it" >&2
		kill -KILL -- "-$pid" 2>/dev/null
		rc=1
	fi
	wait "$pid" 2>/dev/null
	return $rc
}

leftovers() {
	local i left
	# Children may take a moment to exit after their parent.
	for ((i = 0; i < 50; i++)); do
		left=$(run_procs | grep -E 'nginx|redeem-fcgi|redeem-sweep|serve\.sh')
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	echo "$left"
	return 1
}

cleanup() {
	local left
	trap - EXIT INT TERM
	# A test still running (we were interrupted) ends first.
	if [ -n "$child" ]; then
		kill -TERM "$child" 2>/dev/null
		wait "$child" 2>/dev/null # page_test.py closes the browser
	fi
	[ -n "$printer" ] && kill -TERM "$printer" 2>/dev/null
	# The second front end (MariaDB runs): its whole session.
	[ -n "$serve2_pid" ] && kill -TERM -- "-$serve2_pid" 2>/dev/null
	if [ -n "$serve_pid" ]; then
		stop_serve
		if ! left=$(leftovers); then
			echo "e2e: killing what serve.sh left behind:" >&2
			echo "$left" >&2
			while read -r pid _; do
				kill -KILL "$pid" 2>/dev/null
			done <<<"$left"
		fi
	fi
	if [ "${E2E_KEEP:-0}" = 1 ]; then
		echo "e2e: kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'echo "e2e: interrupted" >&2; exit 130' INT TERM

show_logs() {
	local f
	for f in "$tmp/serve.out" "$var/log/worker.log" \
		"$var/log/sweep.log" "$var/log/nginx-error.log"; do
		[ -s "$f" ] || continue
		echo "--- tail of $f"
		tail -n 25 "$f" | cut -c1-300 | sed 's/^/  | /'
	done
}

# A fresh database.
case $dsn in
sqlite)
	db="sqlite:$tmp/e2e.db"
	;;
mysql://*)
	db=$dsn
	sock=${dsn#*socket=}
	sock=${sock%%&*}
	name=${dsn%%\?*}
	name=${name##*/}
	if ! mariadb --no-defaults -S "$sock" -uroot -e \
		"DROP DATABASE IF EXISTS \`$name\`; CREATE DATABASE \`$name\`"; then
		echo "e2e: cannot reset database $name on $sock" >&2
		exit 2
	fi
	;;
*)
	echo "e2e: DSN must be sqlite or mysql://...: $dsn" >&2
	exit 2
	;;
esac

# A free loopback port: the kernel's choice, released just before use.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"

echo "== e2e on $tag: $base, state in $var"
t0=$(date +%s)
# The sweeper's: leaked holds and permits and webhook deliveries within a
# second or two, and webhooks to the test's receiver on 127.0.0.1.
export REDEEM_SWEEP_RELEASE_LEAKED=${REDEEM_SWEEP_RELEASE_LEAKED:-1}
export REDEEM_SWEEP_DELIVER=${REDEEM_SWEEP_DELIVER:-1}
export REDEEM_WEBHOOK_ALLOW_PRIVATE=1
export REDEEM_TRUSTED_PROXIES=${REDEEM_TRUSTED_PROXIES:-127.0.0.1,::1}
REDEEM_DB=$db REDEEM_PORT=$port REDEEM_VAR=$var REDEEM_BIN=$bin \
	REDEEM_WORKERS=$workers setsid "$serve" >"$tmp/serve.out" 2>&1 </dev/null &
serve_pid=$!

# Ready: the banner and /healthz 200, within 30 s; fail fast if serve.sh
# exits.
ready=0
for ((i = 0; i < 300; i++)); do
	if ! kill -0 "$serve_pid" 2>/dev/null; then
		break
	fi
	if grep -q "serving on http://127.0.0.1:$port/" "$tmp/serve.out" &&
		[ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$base/healthz")" = 200 ]; then
		ready=1
		break
	fi
	sleep 0.1
done
if [ $ready = 1 ]; then
	ok "serve.sh ready and /healthz 200 in $(($(date +%s) - t0)) s"
else
	bad "serve.sh did not become ready within 30 s"
	show_logs
	echo "$pass passed, $fail failed"
	exit 1
fi

key() { # key TENANT SCOPE
	REDEEM_DB=$db "$bin/redeemctl" apikey create --tenant "$1" --scope "$2"
}
admin_key=$(key default admin) && redeem_key=$(key default redeem) &&
	REDEEM_DB=$db "$bin/redeemctl" tenant create "other-$port" >/dev/null &&
	other_key=$(key "other-$port" admin)
if [ -n "${other_key:-}" ] && [[ $admin_key == rdm_* ]] && [[ $redeem_key == rdm_* ]]; then
	ok "API keys created"
else
	bad "redeemctl apikey create failed or printed something else"
fi

export REDEEM_DB=$db E2E_BIN=$bin E2E_VAR=$var E2E_SID=$serve_pid
export E2E_ADMIN_KEY=${admin_key:-} E2E_REDEEM_KEY=${redeem_key:-}
export E2E_OTHER_ADMIN_KEY=${other_key:-} E2E_WORKERS=$workers

# Each test script prints "ok NAME" or "FAIL NAME: why" and a summary line.
# run_test OUT SCRIPT ARGS...: runs a Python test in the background (so a
# signal reaches our trap at once, not after it ends), showing its output
# as it comes. Its exit status.
run_test() {
	local out=$1 rc
	shift
	: >"$out" # before tail looks for it, which may be before the child runs
	python3 -u "$@" >"$out" 2>&1 </dev/null &
	child=$!
	tail -s 0.2 -n +1 -f --pid="$child" "$out" &
	printer=$!
	wait "$child"
	rc=$?
	wait "$printer"
	child=
	printer=
	return $rc
}
tally() { # tally FILE: adds its ok and FAIL lines to ours
	local n
	n=$(grep -c '^ok ' "$1")
	pass=$((pass + n))
	n=$(grep -c '^FAIL ' "$1")
	fail=$((fail + n))
}
# py_test NAME SCRIPT ARGS...: runs one Python test and tallies it; a
# script that dies without a FAIL line is a failure of its own.
py_test() {
	local name=$1 rc=0
	shift
	run_test "$tmp/$name.out" "$@" || rc=$?
	tally "$tmp/$name.out"
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$tmp/$name.out"; then
		bad "$(basename "$1") exited $rc"
	fi
}
mkdir -p "$artefacts"
py_test api tests/e2e/api_test.py "$base/"
py_test leases tests/e2e/leases_test.py "$base/"
py_test page tests/e2e/page_test.py "$base/" "$artefacts" "$tag"
py_test admin tests/e2e/admin_test.py "$base/"
py_test campaigns tests/e2e/admin_campaigns_test.py "$base/"
py_test codes tests/e2e/admin_codes_test.py "$base/"
py_test leases-admin tests/e2e/admin_leases_test.py "$base/"
py_test hooks tests/e2e/admin_hooks_test.py "$base/"
py_test jobs tests/e2e/admin_jobs_test.py "$base/"
py_test adminb tests/e2e/admin_browser_test.py "$base/" "$artefacts" "$tag"

# On MariaDB, a second front end (its own nginx, workers and sweeper on
# another port) on the same database, and requests split between the two
# racing on the same codes and semaphores.
if [[ $dsn == mysql://* ]]; then
	port2=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	mkdir -p "$tmp/var2"
	REDEEM_DB=$db REDEEM_PORT=$port2 REDEEM_VAR=$tmp/var2 REDEEM_BIN=$bin \
		REDEEM_WORKERS=$workers setsid "$serve" >"$tmp/serve2.out" 2>&1 \
		</dev/null &
	serve2_pid=$!
	for ((i = 0; i < 300; i++)); do
		[ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' \
			"http://127.0.0.1:$port2/healthz")" = 200 ] && break
		sleep 0.1
	done
	py_test fronts tests/e2e/two_fronts_test.py "$base/" \
		"http://127.0.0.1:$port2/"
	if stop_pid "$serve2_pid"; then
		ok "the second front end stopped on SIGTERM"
	else
		bad "the second front end did not stop within 15 s of SIGTERM"
	fi
	serve2_pid=
fi

# The guarantees hold on the database the workers wrote.
if out=$(REDEEM_DB=$db "$bin/redeemctl" verify 2>&1); then
	ok "redeemctl verify after the run"
else
	bad "redeemctl verify after the run: $out"
fi

# Stop: SIGTERM, and nothing of this run may be left.
if stop_serve; then
	ok "serve.sh stopped on SIGTERM"
else
	bad "serve.sh did not stop within 15 s of SIGTERM"
fi
if left=$(leftovers); then
	ok "no nginx or worker process left"
else
	bad "processes left after serve.sh stopped:"
	while read -r line; do echo "  | $line"; done <<<"$left"
fi
serve_pid=

# Sanitizers report to the workers' and the sweeper's stderr.
for log in worker.log sweep.log; do
	if [ ! -f "$var/log/$log" ]; then
		bad "no $var/log/$log"
	elif grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$var/log/$log"; then
		bad "sanitizer report in $log:"
		grep -E -A12 'AddressSanitizer|runtime error|LeakSanitizer' \
			"$var/log/$log" | head -60 | sed 's/^/  | /'
	else
		ok "no sanitizer report in $log"
	fi
done

if [ "$fail" -ne 0 ]; then
	show_logs
fi
echo "== e2e $tag: $pass passed, $fail failed ($(($(date +%s) - t0)) s)"
[ "$fail" -eq 0 ]
