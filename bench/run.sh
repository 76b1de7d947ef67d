#!/bin/bash
# make bench: one run, both engines, printed as a table (README.md keeps a
# copy with the command). BENCH_SECONDS per cell (default 5), BENCH_GEN
# codes for the generation row (default 1000000).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/redeem-bench.XXXXXX")
trap 'tests/mariadb.sh stop "$work/mariadb" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
# Durable settings, as in production: no "fast" here.
dsn=$(tests/mariadb.sh start "$work/mariadb")
echo "machine: $(nproc) cores, $(uname -sr); $(mariadbd --version | cut -d' ' -f1-4); sqlite $(sqlite3 --version | cut -d' ' -f1)"
echo
build/bench "${BENCH_SECONDS:-5}" \
	"sqlite=sqlite:$work/bench.db=1,2" \
	"mariadb=$dsn=1,2,8,32" \
	--gen "${BENCH_GEN:-1000000}"
echo
bench/web.sh "$work" "$dsn"
