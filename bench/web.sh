#!/bin/bash
# The HTTP rows of make bench: wrk against real nginx and workers on this
# machine, in one run: an nginx static file, a trivial FastCGI answer from
# the worker binary (/ping), and POST /api/v1/redeem with a fresh account
# per request on SQLite and on MariaDB. Prints requests per second, p50
# and p99 latency, the ratio to the trivial answer, and the workers' peak
# resident memory.
# Usage: bench/web.sh WORK_DIR MARIADB_DSN   (BENCH_SECONDS, BENCH_CONNS)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$1
mdsn=$2
secs=${BENCH_SECONDS:-5}
conns=${BENCH_CONNS:-64}
. bench/lib.sh

# start_server DSN NAME [WORKERS]: sets port, var, key, code.
start_server() {
	local dsn=$1 name=$2 workers=${3:-}
	var=$work/web-$name
	serve_start "$dsn" "$var" "$workers"
	export REDEEM_DB=$dsn
	key=$("$ctl" apikey create --scope redeem --label bench)
	"$ctl" campaign create --name bench >/dev/null
	code=$("$ctl" codes generate --campaign bench --count 1 \
		--max-uses 1000000000)
}

# wrk_row LABEL PATH [SCRIPT]: prints a row, sets rps and p99ms.
wrk_row() {
	local label=$1 path=$2 script=${3:-} out p50 p99 bad
	local args=(-t2 "-c$conns" "-d${secs}s" --latency)
	[ -n "$script" ] && args+=(-s "$script")
	# A warm-up first (connections, caches, the database's files
	# grown to their working size).
	wrk -t2 "-c$conns" -d3s ${script:+-s "$script"} \
		"http://127.0.0.1:$port$path" >/dev/null
	out=$(BENCH_RUN="w$RANDOM" wrk "${args[@]}" "http://127.0.0.1:$port$path")
	rps=$(awk '/^Requests\/sec/ {print int($2)}' <<<"$out")
	p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
	p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
	p99ms=$(ms "$p99")
	bad=$(awk '/Non-2xx/ {print $5}' <<<"$out")
	printf '%-42s %9d %9s %9s' "$label" "$rps" "$p50" "$p99"
	[ -n "$bad" ] && printf '   (%s non-2xx answers!)' "$bad"
	return 0
}

# Peak resident memory of the worker processes (the pool's children).
worker_rss() {
	local sup pids kb max=0
	sup=$(pgrep -f "redeem-fcgi --socket $var/run/fcgi.sock" | head -1)
	pids=$(pgrep -P "$sup" || true)
	for p in $pids; do
		kb=$(awk '/^VmHWM/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
		[ "$kb" -gt "$max" ] && max=$kb
	done
	echo $((max / 1024))
}

echo "HTTP through nginx, wrk -t2 -c$conns, ${secs} s per row after a 3 s warm-up, $(nproc) cores shared by"
echo "wrk, nginx, the workers (one per core unless said) and the database; targets: p99 < 20 ms"
printf '%-42s %9s %9s %9s   %s\n' "" "req/s" "p50" "p99" "ratio to trivial (target)"
start_server "sqlite:$work/web.db" sqlite
wrk_row "nginx static file (/static/redeem.css)" /static/redeem.css
echo
record HTTP "static file, p99 ${p99ms} ms" nginx static "$rps" req/s
wrk_row "trivial FastCGI answer (GET /ping)" /ping
trivial=$rps
echo "   1.00"
record HTTP "GET /ping, p99 ${p99ms} ms" - trivial "$rps" req/s
# ratio RPS: to the trivial answer, two decimals, as printed.
ratio() {
	awk -v r="$1" -v t="$trivial" 'BEGIN {printf "%.2f", r / t}'
}
export BENCH_KEY=$key BENCH_CODE=$code
wrk_row "POST /api/v1/redeem, SQLite" /api/v1/redeem bench/redeem.lua
echo "   $(ratio "$rps") (0.40)"
record HTTP "POST /api/v1/redeem, p99 ${p99ms} ms" sqlite redeem "$rps" \
	req/s "$(ratio "$rps")" "to /ping"
rss_sqlite=$(worker_rss)
"$ctl" verify >/dev/null || echo "verify FAILED on SQLite"
stop_server
many=$((4 * $(nproc)))
start_server "sqlite:$work/web-many.db" sqlite-many "$many"
export BENCH_KEY=$key BENCH_CODE=$code
wrk_row "POST /api/v1/redeem, SQLite, $many workers" /api/v1/redeem bench/redeem.lua
echo "   $(ratio "$rps")"
record HTTP "POST /api/v1/redeem, $many workers, p99 ${p99ms} ms" sqlite \
	redeem "$rps" req/s "$(ratio "$rps")" "to /ping"
"$ctl" verify >/dev/null || echo "verify FAILED on SQLite"
stop_server

# A database of its own: the service rows above share "redeem" with raw
# transactions that write no events (verify would rightly complain).
mysql -S "${mdsn#*socket=}" -u root -e "CREATE DATABASE redeem_web"
start_server "${mdsn/\/redeem\?//redeem_web?}" mariadb
export BENCH_KEY=$key BENCH_CODE=$code
wrk_row "POST /api/v1/redeem, MariaDB" /api/v1/redeem bench/redeem.lua
echo "   $(ratio "$rps") (0.25)"
record HTTP "POST /api/v1/redeem, p99 ${p99ms} ms" mariadb redeem "$rps" \
	req/s "$(ratio "$rps")" "to /ping"
rss_mariadb=$(worker_rss)
"$ctl" verify >/dev/null || echo "verify FAILED on MariaDB"
stop_server
echo "worker peak resident memory: ${rss_sqlite} MB on SQLite, ${rss_mariadb} MB on MariaDB (target < 20 MB)"
record HTTP "worker peak resident memory" sqlite memory "$rss_sqlite" MB
record HTTP "worker peak resident memory" mariadb memory "$rss_mariadb" MB
