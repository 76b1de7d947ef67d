#!/bin/bash
# The dashboard rows of make bench: one tenant with BENCH_ADMIN_CODES codes
# (default 1000000) and BENCH_ADMIN_REDEEMED redemptions spread over the
# last 30 days (default 10000), served by real nginx and workers; wrk with
# one connection and a signed-in admin's cookie asks for the codes list,
# a search by code, the next keyset page deep in the list and the
# overview. Prints p50 and p99 latency (target: under 100 ms each) on
# SQLite and on MariaDB.
# Usage: bench/admin.sh WORK_DIR MARIADB_DSN   (BENCH_SECONDS)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$1
mdsn=$2
secs=${BENCH_SECONDS:-5}
ncodes=${BENCH_ADMIN_CODES:-1000000}
nred=${BENCH_ADMIN_REDEEMED:-10000}
password="bench admin password"
. bench/lib.sh

# sql DSN QUERY: runs one statement on the bench's database.
sql() {
	case $1 in
	sqlite:*) sqlite3 "${1#sqlite:}" "$2" ;;
	*) mariadb --no-defaults -S "${1#*socket=}" -uroot -N \
		"$(sed 's|^mysql://[^/]*/\([^?]*\).*|\1|' <<<"$1")" -e "$2" ;;
	esac
}

# seed DSN: the codes and an admin; sets search (a code in the middle).
seed() {
	local dsn=$1 t0
	export REDEEM_DB=$dsn
	"$ctl" migrate >/dev/null
	"$ctl" campaign create --name million >/dev/null
	"$ctl" campaign create --name busy >/dev/null
	t0=$(date +%s)
	"$ctl" codes generate --campaign million --count "$ncodes" \
		--max-uses 1 >"$work/codes.txt" 2>/dev/null
	search=$(sed -n "$((ncodes / 2))p" "$work/codes.txt")
	printf '%s\n' "$password" | "$ctl" admin create \
		--email bench@example.com --role owner --password-stdin \
		>/dev/null 2>&1
	echo "   seeded $ncodes codes in $(($(date +%s) - t0)) s"
}

# redemptions DSN: nred redemptions through the API (one code, as many
# accounts), then spread over the last 30 days.
redemptions() {
	local dsn=$1 key code t0
	t0=$(date +%s)
	key=$("$ctl" apikey create --scope redeem --label bench)
	code=$("$ctl" codes generate --campaign busy --count 1 \
		--max-uses "$nred")
	python3 - "$port" "$key" "$code" "$nred" <<'PY'
import http.client, json, sys
port, key, code, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = http.client.HTTPConnection("127.0.0.1", int(port))
for i in range(n):
    c.request("POST", "/api/v1/redeem",
              json.dumps({"code": code, "account": f"a{i}@bench.test"}),
              {"Authorization": f"Bearer {key}",
               "Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    if r.status != 200:
        sys.exit(f"redeem {i}: HTTP {r.status}")
PY
	sql "$dsn" "UPDATE redemptions SET redeemed_at = redeemed_at - \
		(id % 30) * 86400"
	echo "   $nred redemptions over 30 days in $(($(date +%s) - t0)) s"
}

# serve DSN NAME: starts nginx and the workers, signs in; sets port,
# cookie.
serve() {
	local dsn=$1 var=$work/admin-$2 jar csrf
	serve_start "$dsn" "$var"
	jar=$var/jar
	csrf=$(curl -sf -c "$jar" "http://127.0.0.1:$port/admin/login" |
		sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -1)
	curl -sf -b "$jar" -c "$jar" -o /dev/null \
		--data-urlencode "csrf=$csrf" \
		--data-urlencode "email=bench@example.com" \
		--data-urlencode "password=$password" \
		"http://127.0.0.1:$port/admin/login"
	cookie=$(awk '$6 == "redeem_admin" {print $7}' "$jar")
	[ -n "$cookie" ] || {
		echo "bench/admin.sh: could not sign in" >&2
		exit 1
	}
}

# row LABEL PATH: p50 and p99 of one connection asking for PATH.
row() {
	local label=$1 path=$2 out p50 p99 rps bad
	local url="http://127.0.0.1:$port$path"
	curl -sf -o /dev/null -b "redeem_admin=$cookie" "$url" || {
		printf '%-46s   (no 200 answer!)\n' "$label"
		record dashboard \
			"${label#"${label%%[! ]*}"}, $ncodes codes (no 200 answer!)" \
			"$engine" p99 - ms
		return 0
	}
	wrk -t1 -c1 -d1s -H "Cookie: redeem_admin=$cookie" "$url" >/dev/null
	out=$(wrk -t1 -c1 "-d${secs}s" --latency \
		-H "Cookie: redeem_admin=$cookie" "$url")
	rps=$(awk '/^Requests\/sec/ {print int($2)}' <<<"$out")
	p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
	p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
	bad=$(awk '/Non-2xx/ {print $5}' <<<"$out")
	printf '%-46s %9d %9s %9s' "$label" "$rps" "$p50" "$p99"
	[ -n "$bad" ] && printf '   (%s non-2xx answers!)' "$bad"
	echo
	record dashboard \
		"${label#"${label%%[! ]*}"}, $ncodes codes${bad:+ ($bad non-2xx!)}" \
		"$engine" p99 "$(ms "$p99")" ms
}

# engine DSN NAME
engine() {
	local dsn=$1 name=$2 after
	engine=$name
	echo "$name:"
	seed "$dsn"
	serve "$dsn" "$name"
	redemptions "$dsn"
	row "  codes list, first page" "/admin/codes"
	row "  codes list, a campaign, unused" \
		"/admin/codes?campaign=million&state=active"
	after=$(sql "$dsn" "SELECT MAX(id) - 1000 FROM codes")
	row "  codes list, a page deep in the list" "/admin/codes?after=$after"
	row "  search by code (any spelling)" \
		"/admin/codes?q=$(tr 'A-Z' 'a-z' <<<"$search" | tr -d -)"
	row "  overview (30 days of redemptions)" "/admin/"
	row "  redemptions list" "/admin/redemptions"
	stop_server
}

echo "The dashboard on one tenant of $ncodes codes, wrk -t1 -c1 (one admin), ${secs} s per row; target: p99 < 100 ms"
printf '%-46s %9s %9s %9s\n' "" "req/s" "p50" "p99"
engine "sqlite:$work/admin.db" sqlite
mysql -S "${mdsn#*socket=}" -u root -e "CREATE DATABASE redeem_admin"
engine "${mdsn/\/redeem\?//redeem_admin?}" mariadb
