#!/bin/bash
# make bench: one run, both engines, printed as tables, then one summary
# table of every row (README.md keeps a copy with the command).
# BENCH_SECONDS per cell (default 5), BENCH_GEN codes for the generation
# row (default 1000000), BENCH_PERMIT_CLIENTS for the permit rows (default
# 1,8,32), BENCH_SWEEP holds for the sweeper row (default 100000),
# BENCH_DELIVERIES for the webhook row (default 10000), BENCH_ADMIN_CODES
# for the dashboard rows (default 1000000), BENCH_POOL_CODES for the mixed
# load's pool (default 50000); BENCH_ONLY=redeem,split,... limits
# build/bench to those sections. REDEEM_BIN: the directory of the
# binaries (make bench passes its BUILD; default build).
set -euo pipefail
cd "$(dirname "$0")/.."
REDEEM_BIN=${REDEEM_BIN:-build}
case $REDEEM_BIN in /*) ;; *) REDEEM_BIN=$PWD/$REDEEM_BIN ;; esac
export REDEEM_BIN
work=$(mktemp -d "${TMPDIR:-/tmp}/redeem-bench.XXXXXX")
trap 'tests/mariadb.sh stop "$work/mariadb" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
# Every section appends its rows here (bench_record, lib.sh's record).
export BENCH_SUMMARY=$work/summary.tsv
: >"$BENCH_SUMMARY"
# Durable settings, as in production: no "fast" here.
dsn=$(tests/mariadb.sh start "$work/mariadb")
# The webhook rows get databases of their own: the fan-out scans every
# event not yet enqueued, and the other rows leave a great many.
mysql -S "${dsn#*socket=}" -u root -e "CREATE DATABASE redeem_hooks"
machine="machine: $(nproc) cores, $(uname -sr); $(mariadbd --version | cut -d' ' -f1-4); sqlite $(sqlite3 --version | cut -d' ' -f1)"
echo "$machine"
echo
"$REDEEM_BIN/bench" "${BENCH_SECONDS:-5}" \
	"sqlite=sqlite:$work/bench.db=1,2" \
	"mariadb=$dsn=1,2,8,32" \
	--hooks "sqlite=sqlite:$work/hooks.db" \
	--hooks "mariadb=${dsn/\/redeem\?//redeem_hooks?}" \
	--permit-clients "${BENCH_PERMIT_CLIENTS:-1,8,32}" \
	--sweep-holds "${BENCH_SWEEP:-100000}" \
	--deliveries "${BENCH_DELIVERIES:-10000}" \
	--gen "${BENCH_GEN:-1000000}" \
	${BENCH_ONLY:+--only "$BENCH_ONLY"}
echo
bench/web.sh "$work" "$dsn"
echo
bench/mixed.sh "$work" "$dsn"
echo
bench/admin.sh "$work" "$dsn"
echo
bench/summary.sh "$BENCH_SUMMARY" "$machine"
