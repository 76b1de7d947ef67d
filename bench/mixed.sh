#!/bin/bash
# The mixed load of make bench: wrk with bench/mixed.lua (redemptions of a
# hot code and of others, holds confirmed or released, pool claims,
# permits acquired, heartbeaten and released; no faults) through nginx on
# MariaDB, against one front end (nginx, the workers and the sweeper of
# nginx/serve.sh), then against two front ends on different ports
# sharing the one database, a wrk on each at once, their requests per
# second summed. The same wrk threads and connections in all (shared out
# between the two wrk processes). Prints requests per second, p99, the
# answers by status (409 exhausted and the like are outcomes, not faults;
# a 5xx is a fault and should not be), then runs redeemctl verify.
# Usage: bench/mixed.sh WORK_DIR MARIADB_DSN
#   (BENCH_SECONDS, BENCH_CONNS, BENCH_POOL_CODES: the pool's codes,
#   default 50000)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$1
mdsn=$2
secs=${BENCH_SECONDS:-5}
conns=${BENCH_CONNS:-64}
npool=${BENCH_POOL_CODES:-50000}
threads=2
. bench/lib.sh

# A database of its own, as the other HTTP rows have.
mysql -S "${mdsn#*socket=}" -u root -e "CREATE DATABASE redeem_mixed"
dsn=${mdsn/\/redeem\?//redeem_mixed?}
export REDEEM_DB=$dsn
serve_start "$dsn" "$work/mixed-1"
port1=$port

key=$("$ctl" apikey create --scope redeem --label bench-mixed)
admin=$("$ctl" apikey create --scope admin --label bench-mixed-admin)
"$ctl" campaign create --name mix >/dev/null
hot=$("$ctl" codes generate --campaign mix --count 1 --max-uses 1000000000)
others=$("$ctl" codes generate --campaign mix --count 31 \
	--max-uses 1000000 | paste -sd,)
"$ctl" campaign create --name holds >/dev/null
hold_code=$("$ctl" codes generate --campaign holds --count 1 \
	--max-uses 1000000000)
"$ctl" campaign create --name pool --kind pool >/dev/null
"$ctl" codes generate --campaign pool --count "$npool" --max-uses 1 \
	>/dev/null
sems=
for i in 1 2 3 4 5 6 7 8; do
	curl -sf -o /dev/null -X PUT -H "Authorization: Bearer $admin" \
		-H 'Content-Type: application/json' -d '{"capacity":1000000}' \
		"http://127.0.0.1:$port1/api/v1/semaphores/mix-$i"
	sems=${sems:+$sems,}mix-$i
done
export BENCH_KEY=$key BENCH_CODES=$hot,$others BENCH_HOLD_CODE=$hold_code \
	BENCH_POOL=pool BENCH_SEMS=$sems

# load NAME PORT...: a 3 s warm-up, then secs measured, one wrk per port
# at once (threads and connections shared out); prints a row and sets
# rps (summed), p99ms (the worst wrk's), n5xx and total (answers).
load() {
	local name=$1 i pid st t c out p99 pids=()
	shift
	t=$((threads / $#))
	c=$((conns / $#))
	for pass in warm run; do
		pids=()
		i=0
		for p in "$@"; do
			i=$((i + 1))
			out=$work/mixed-$name-$pass-$i.out
			if [ $pass = warm ]; then
				BENCH_RUN=w$i-$RANDOM wrk "-t$t" "-c$c" -d3s \
					-s bench/mixed.lua "http://127.0.0.1:$p/" >"$out" &
			else
				BENCH_RUN=m$i-$RANDOM wrk "-t$t" "-c$c" "-d${secs}s" \
					--latency -s bench/mixed.lua \
					"http://127.0.0.1:$p/" >"$out" &
			fi
			pids+=($!)
		done
		st=0
		for pid in "${pids[@]}"; do
			wait "$pid" || st=1
		done
		[ $st = 0 ] || {
			echo "bench/mixed.sh: wrk failed:" >&2
			cat "$work"/mixed-"$name"-$pass-*.out >&2
			return 1
		}
	done
	# The measured runs' outputs, summed.
	read -r rps s2xx s409 s429 s4xx n5xx sockerr <<<"$(awk '
		/^Requests\/sec/ { rps += $2 }
		/^  Socket errors/ { gsub(",", ""); err += $4 + $6 + $8 + $10 }
		/^mixed:/ {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				n[kv[1]] += kv[2]
			}
		}
		END {
			printf "%d %d %d %d %d %d %d\n", rps, n["s2xx"], n["s409"],
			    n["s429"], n["s4xx"], n["s5xx"], err
		}' "$work"/mixed-"$name"-run-*.out)"
	p99ms=0
	for out in "$work"/mixed-"$name"-run-*.out; do
		p99=$(ms "$(awk '$1 == "99%" {print $2}' "$out")")
		p99ms=$(awk -v a="$p99ms" -v b="$p99" 'BEGIN {print (b > a ? b : a)}')
	done
	total=$((s2xx + s409 + s429 + s4xx + n5xx))
	printf '%-28s %9d %9s %8d %6d %6d %6d %6d %6d' "$name" "$rps" \
		"${p99ms}ms" "$s2xx" "$s409" "$s429" "$s4xx" "$n5xx" "$sockerr"
	[ "$n5xx" -gt 0 ] && printf '   (5xx answers!)'
	echo
	kinds=$(awk '/^mixed:/ {
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				if (kv[1] !~ /^s[0-9]/) n[kv[1]] += kv[2]
			}
		}
		END {
			printf "redeem %d, hold %d, confirm %d, release %d, pool %d, ",
			    n["redeem"], n["hold"], n["confirm"], n["release"], n["pool"]
			printf "acquire %d, heartbeat %d, permit release %d",
			    n["acquire"], n["heartbeat"], n["drop"]
		}' "$work"/mixed-"$name"-run-*.out)
	echo "   requests sent: $kinds"
}

echo "Mixed load through nginx on MariaDB (bench/mixed.lua: 40% redeem on 32 codes, half on the hot one; 20% hold,"
echo "then confirm or release; 15% pool claim from $npool codes; 25% permit acquire, heartbeat, release on 8 semaphores),"
echo "wrk -t$threads -c$conns in all, ${secs} s after a 3 s warm-up; each front end: nginx, $(nproc) workers, a sweeper."
printf '%-28s %9s %9s %8s %6s %6s %6s %6s %6s\n' "" "req/s" "p99" "2xx" \
	"409" "429" "4xx" "5xx" "sockerr"
load "one front end" "$port1"
one=$rps one5xx=$n5xx onetotal=$total onep99=$p99ms
serve_start "$dsn" "$work/mixed-2"
port2=$port
load "two front ends" "$port1" "$port2"
ratio=$(awk -v a="$rps" -v b="$one" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')
echo "two front ends / one: ${ratio}x"
"$ctl" verify >/dev/null || echo "verify FAILED on MariaDB (mixed load)"
stop_server
record "mixed load" "1 front end, p99 $onep99 ms, 5xx $one5xx of $onetotal" \
	mariadb "1 front" "$one" req/s
record "mixed load" "2 front ends, p99 $p99ms ms, 5xx $n5xx of $total" \
	mariadb "2 fronts" "$rps" req/s "$ratio" "two/one"
