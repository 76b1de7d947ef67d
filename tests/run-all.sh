#!/bin/bash
# Every test, both backends: starts a private MariaDB (stopped on any exit),
# runs the unit and race suites on SQLite and MariaDB, again under
# ASan/UBSan, the CLI tests, and the format check.
set -uo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d "${TMPDIR:-/tmp}/redeem-test.XXXXXX")
# The unit suites' databases (a fresh one per test: a SQLite file, or a
# MariaDB database made and dropped) and the private MariaDB live in
# memory when /dev/shm has room: a file created, synced and unlinked per
# test costs 2-3 times as much on a disk, minutes in all. Durability is
# not what these suites test; the end-to-end runs keep to the disk.
scratch=$work
if avail=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}') &&
	[ "${avail:-0}" -gt 2097152 ] &&
	d=$(mktemp -d /dev/shm/redeem-test.XXXXXX 2>/dev/null); then
	scratch=$d
fi
bg_pids=()
cleanup() {
	local p
	for p in "${bg_pids[@]}"; do
		pkill -TERM -P "$p" 2>/dev/null
		kill -TERM "$p" 2>/dev/null
	done
	tests/mariadb.sh stop "$scratch/mariadb" >/dev/null 2>&1 || true
	rm -rf "$work" "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== starting a private MariaDB in $scratch/mariadb"
if ! dsn=$(tests/mariadb.sh start "$scratch/mariadb" fast); then
	echo "could not start MariaDB" >&2
	exit 1
fi
export TMPDIR="$work"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

pass=0
fail=0
failed=""
step() {
	local name=$1 t0 rc
	shift
	echo
	echo "== $name"
	t0=$(date +%s)
	"$@"
	rc=$?
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1))
		echo "-- ok: $name ($(($(date +%s) - t0)) s)"
	else
		fail=$((fail + 1))
		failed="$failed
  $name"
		echo "-- FAILED: $name (exit $rc)"
	fi
}

# bg_step NAME CMD...: a step run beside the next ones (its output kept
# and shown by bg_wait), for one that needs a core the others leave idle.
bg_names=()
bg_step() {
	local name=$1 out
	shift
	out="$work/bg-${#bg_pids[@]}.out"
	echo
	echo "== $name (beside the next steps)"
	(
		t0=$(date +%s)
		"$@" >"$out" 2>&1
		rc=$?
		echo "$rc $(($(date +%s) - t0))" >"$out.rc"
	) &
	bg_names+=("$name")
	bg_pids+=($!)
}
bg_wait() {
	local i rc secs
	for i in "${!bg_pids[@]}"; do
		wait "${bg_pids[$i]}"
		read -r rc secs <"$work/bg-$i.out.rc" || rc=1
		echo
		echo "== ${bg_names[$i]} (its output)"
		cat "$work/bg-$i.out"
		if [ "$rc" -eq 0 ]; then
			pass=$((pass + 1))
			echo "-- ok: ${bg_names[$i]} ($secs s)"
		else
			fail=$((fail + 1))
			failed="$failed
  ${bg_names[$i]}"
			echo "-- FAILED: ${bg_names[$i]} (exit $rc)"
		fi
	done
	bg_names=()
	bg_pids=()
}

# RACE_ROUNDS scales every race scenario's rounds (fr_rounds: 100 is each
# scenario's default, 100 redemption races and 10-20 hold and permit
# races; make unit runs them all). Here SQLite runs 30% of them,
# MariaDB, whose rounds are the slowest, 20%; the sanitizer runs, there
# for memory errors, a few, and leaks are looked for on SQLite (at every
# test's exit: 70 ms each), the same code but the driver: make test must
# stay well inside CI's time limit.
step "unit and race tests, SQLite" \
	env TMPDIR="$scratch" REDEEM_TEST_DB=sqlite RACE_ROUNDS=30 build/unit-tests
step "unit and race tests, MariaDB" \
	env TMPDIR="$scratch" REDEEM_TEST_DB="$dsn" RACE_ROUNDS=20 build/unit-tests
step "unit tests under ASan/UBSan, SQLite" \
	env TMPDIR="$scratch" REDEEM_TEST_DB=sqlite RACE_ROUNDS=3 \
	build/asan/unit-tests
# Under the sanitizers on MariaDB, the suites that reach every path of
# the MySQL driver (statements, transactions, retries, streaming, the
# races); the SQLite run above has every suite.
asan_mariadb() {
	local su rc=0
	for su in db redeem race holds permits codes; do
		env TMPDIR="$scratch" REDEEM_TEST_DB="$dsn" RACE_ROUNDS=3 \
			CK_RUN_SUITE=$su \
			ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
			build/asan/unit-tests || rc=1
	done
	return $rc
}
step "unit tests under ASan/UBSan, MariaDB (driver suites)" asan_mariadb
step "redeemctl, SQLite" tests/cli.sh build/redeemctl "sqlite:$work/cli.db"
step "redeemctl, MariaDB" tests/cli.sh build/redeemctl "$dsn"
step "redeemctl under ASan/UBSan, SQLite" \
	tests/cli.sh build/asan/redeemctl "sqlite:$work/cli-asan.db"
# The fuzzers keep one core busy; the end-to-end run mostly waits.
bg_step "fuzz targets, a short run each" tests/fuzz/run.sh 5 build/fuzz/fuzz_*
step "nginx + workers end to end, SQLite" tests/e2e/run.sh build sqlite
bg_wait
step "nginx + workers end to end, MariaDB" tests/e2e/run.sh build "$dsn"
step "nginx + workers under ASan/UBSan, SQLite" tests/e2e/run.sh build/asan sqlite
# The fault-injection suite, short (make faults runs it for 10 minutes
# an engine): seeded load with faults on SQLite, then on MariaDB (a
# private durable server of its own, killed and restarted during the
# run), then the negative control, a PLANTED_BUG build the checker must
# fail. Its outputs go to /tmp, kept when a run fails.
faults_short() {
	local rc=0
	# The checkers first, on synthetic runs: each must fail on its
	# planted violation.
	PYTHONDONTWRITEBYTECODE=1 python3 tests/faults/check_selftest.py \
		>"$work/check-selftest.out" 2>&1 ||
		{ cat "$work/check-selftest.out"; return 1; }
	tail -1 "$work/check-selftest.out"
	make -s --no-print-directory -j2 BUILD=build/planted PLANTED_BUG=1 \
		build/planted/redeemctl build/planted/redeem-fcgi \
		build/planted/redeem-sweep || return 1
	TMPDIR=/tmp FAULTS_SECONDS=30 tests/faults/run.sh sqlite build || rc=1
	TMPDIR=/tmp FAULTS_SECONDS=30 tests/faults/run.sh mariadb build || rc=1
	TMPDIR=/tmp FAULTS_SECONDS=20 tests/faults/run.sh --expect-fail sqlite \
		build/planted || rc=1
	return $rc
}
step "fault injection, short (SQLite, MariaDB, negative control)" \
	faults_short
step "format-check" make -s format-check

echo
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
