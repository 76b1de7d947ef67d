#!/usr/bin/env bash
# Runs libFuzzer targets for a while each: tests/fuzz/run.sh SECONDS BIN...
#
# Each target starts from a scratch copy of tests/fuzz/corpus/<name>, so
# what it discovers stays out of the tree. One line per target; on a
# crash, leak or timeout the scratch directory (with the artefact and the
# log) is kept under ${TMPDIR:-/tmp} and named, and the exit status is 1.
set -euo pipefail

if [ $# -lt 2 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
	echo "usage: $0 SECONDS BIN..." >&2
	exit 2
fi
secs=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/redeem-fuzz.XXXXXX")
failed=0

for bin in "$@"; do
	name=$(basename "$bin")
	dir=$work/$name
	mkdir -p "$dir/corpus" "$dir/artefacts"
	if [ -d "$here/corpus/$name" ]; then
		cp -R "$here/corpus/$name/." "$dir/corpus/"
	fi
	extra=()
	if [ -f "$here/$name.dict" ]; then
		extra+=("-dict=$here/$name.dict")
	fi
	rc=0
	"$bin" -max_total_time="$secs" -timeout=5 -rss_limit_mb=1024 \
		-print_final_stats=1 -artifact_prefix="$dir/artefacts/" \
		"${extra[@]}" "$dir/corpus" >"$dir/log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" |
		tail -n 1)
	cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$dir/log" | tail -n 1 || true)
	units=$(find "$dir/corpus" -type f | wc -l)
	artefacts=$(find "$dir/artefacts" -type f | wc -l)
	if [ "$rc" -eq 0 ] && [ "$artefacts" -eq 0 ]; then
		printf '%-12s ok   %ss, %s runs, %s, corpus %s\n' "$name" \
			"$secs" "${execs:-?}" "${cov:-cov: ?}" "$units"
	else
		failed=1
		printf '%-12s FAIL exit %s, %s runs; artefacts in %s, log %s\n' \
			"$name" "$rc" "${execs:-?}" "$dir/artefacts" "$dir/log"
		# The input itself too (as base64, when small): make test
		# removes its TMPDIR on exit.
		grep -E '^(==[0-9]+==ERROR|SUMMARY|Test unit written|Base64)' \
			"$dir/log" | head -n 6 | sed 's/^/    /' || true
	fi
done

if [ "$failed" -eq 0 ]; then
	rm -rf "$work"
else
	echo "fuzz: failures kept in $work" >&2
fi
exit "$failed"
