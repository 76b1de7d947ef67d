# shellcheck shell=bash
# What the HTTP rows of make bench share (sourced by web.sh, admin.sh and
# mixed.sh from the repository's root): the build's binaries, starting and
# stopping nginx and the workers of one database, and the summary's rows.

# The binaries of the build (make bench passes its BUILD); serve.sh reads
# the same variable.
REDEEM_BIN=${REDEEM_BIN:-build}
case $REDEEM_BIN in /*) ;; *) REDEEM_BIN=$PWD/$REDEEM_BIN ;; esac
export REDEEM_BIN
# shellcheck disable=SC2034 # used by the scripts that source this
ctl=$REDEEM_BIN/redeemctl

# Every serve.sh serve_start started and stop_server has not stopped yet;
# serve_pid is the last one.
serve_pids=()
serve_pid=""
# Stops the servers serve_start started (nothing when none runs).
stop_server() {
	local p
	for p in "${serve_pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${serve_pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	serve_pids=()
	serve_pid=""
}
trap stop_server EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# serve_start DSN VAR [WORKERS]: nginx/serve.sh on a free port (sets port
# and serve_pid) with its files in VAR, once /healthz answers; WORKERS
# defaults to one per core. Another call starts another front end beside
# it (its own nginx, workers and sweeper).
serve_start() {
	local dsn=$1 var=$2 workers=${3:-}
	port=$(free_port)
	mkdir -p "$var"
	REDEEM_DB=$dsn REDEEM_PORT=$port REDEEM_VAR=$var \
		REDEEM_WORKERS=${workers:-$(nproc)} nginx/serve.sh \
		>"$var/serve.out" 2>&1 &
	serve_pid=$!
	serve_pids+=("$serve_pid")
	# Ours answering, not another's that took the port meanwhile:
	# serve.sh says "serving on" once its nginx answers, and lives.
	for _ in $(seq 600); do
		if grep -q '^serving on' "$var/serve.out" &&
			kill -0 "$serve_pid" 2>/dev/null &&
			curl -sf -o /dev/null "http://127.0.0.1:$port/healthz"; then
			return 0
		fi
		sleep 0.05
	done
	echo "bench: the server on $dsn did not answer /healthz" >&2
	return 1
}

# ms TIME: wrk's "19.20ms", "824.00us" or "1.02s" in milliseconds.
ms() {
	awk -v t="$1" 'BEGIN {
		v = t + 0
		if (t ~ /us$/) v /= 1000
		else if (t ~ /ms$/) v += 0
		else if (t ~ /m$/) v *= 60000
		else if (t ~ /s$/) v *= 1000
		printf "%.2f", v
	}'
}

# record SECTION ROW ENGINE METRIC VALUE UNIT [RATIO RATIO_OF]: one row of
# the summary bench/run.sh prints last, appended to BENCH_SUMMARY (the
# fields of bench_record in bench/bench.h); nothing when it is unset.
record() {
	[ -n "${BENCH_SUMMARY:-}" ] || return 0
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" \
		"$6" "${7:-}" "${8:-}" >>"$BENCH_SUMMARY"
}
