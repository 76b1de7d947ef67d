#!/bin/bash
# The table make bench ends with: every row the sections appended to the
# summary file (TSV: section, row, engine, metric, value, unit, ratio,
# what the ratio is of; see bench_record in bench/bench.h and record in
# bench/lib.sh), in the order they were measured, all from this run.
# Usage: bench/summary.sh SUMMARY.tsv [MACHINE-LINE]
set -euo pipefail
file=$1
echo "Summary of this run${2:+ ($2)}"
echo "ratios: service/raw = the service layer against the raw statements of the same transactions (target 0.70);"
echo "to /ping = against the trivial FastCGI answer; split/one = a hot code split over 16 counter rows against one row"
echo "(target on MariaDB: 2.00); two/one = two front ends against one. Targets for p99: HTTP 20 ms, dashboard 100 ms."
echo
if [ ! -s "$file" ]; then
	echo "(no rows were recorded)"
	exit 0
fi
awk -F '\t' '
function num(v) {
	if (v == "-" || v == "") return v
	if (v == int(v)) return sprintf("%d", v)
	return v + 0 >= 100 ? sprintf("%.0f", v) : sprintf("%.2f", v)
}
function widen(c, v) {
	if (length(v) > w[c]) w[c] = length(v)
}
function line(a, b, c, d, e, f, g, h, s) {
	s = sprintf("%-" w[1] "s  %-" w[2] "s  %-" w[3] "s  %-" w[4] "s  %" \
	    w[5] "s %-" w[6] "s  %" w[7] "s %s", a, b, c, d, e, f, g, h)
	sub(/ +$/, "", s)
	print s
}
{
	n++
	v[n, 1] = $1; v[n, 2] = $2; v[n, 3] = $3; v[n, 4] = $4
	v[n, 5] = num($5); v[n, 6] = $6
	v[n, 7] = $7 == "" ? "" : sprintf("%.2fx", $7)
	v[n, 8] = $8 == "" ? "" : "(" $8 ")"
}
END {
	split("section row engine metric value unit ratio (of)", head, " ")
	for (c = 1; c <= 8; c++) {
		widen(c, head[c])
		for (i = 1; i <= n; i++)
			widen(c, v[i, c])
	}
	line(head[1], head[2], head[3], head[4], head[5], head[6], head[7],
	    head[8])
	for (i = 1; i <= n; i++) {
		if (i > 1 && v[i, 1] != v[i - 1, 1]) print ""
		line(v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5], v[i, 6],
		    v[i, 7], v[i, 8])
	}
}' "$file"
