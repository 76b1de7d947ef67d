#!/bin/bash
# redeemctl end to end on a real database: usage errors, every verb, exit
# statuses, streaming import/export, verify catching a broken row.
# Usage: tests/cli.sh REDEEMCTL DSN   (a mysql DSN's database is reset)
set -uo pipefail
R=$1
export REDEEM_DB=$2
t=$(mktemp -d "${TMPDIR:-/tmp}/cli.XXXXXX")
trap 'rm -rf "$t"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	echo "FAIL: $*"
}
# expect STATUS DESCRIPTION -- command...: checks the exit status.
expect() {
	local want=$1 what=$2 got
	shift 3
	"$@" >"$t/out" 2>"$t/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok; else
		bad "$what: exit $got, want $want"
		sed 's/^/  | /' "$t/out" "$t/err" | head -20
	fi
}
# stdin_is TEXT command...: runs the command with one line TEXT as its
# standard input; no_stdin command...: with none.
stdin_is() {
	local in=$1
	shift
	printf '%s\n' "$in" | "$@"
}
no_stdin() { "$@" </dev/null; }
has() { # has FILE TEXT DESCRIPTION
	if grep -q -- "$2" "$1"; then ok; else
		bad "$3: no \"$2\" in $1"
		sed 's/^/  | /' "$1" | head -10
	fi
}

# A MySQL database is emptied first so the run starts fresh.
case $REDEEM_DB in
mysql://*)
	sock=${REDEEM_DB#*socket=}
	db=${REDEEM_DB%%\?*}
	db=${db##*/}
	mariadb --no-defaults -S "$sock" -uroot \
		-e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
	;;
sqlite:*) rm -f "${REDEEM_DB#sqlite:}"* ;;
esac

# Usage and help.
expect 2 "no verb" -- "$R"
expect 0 "--help" -- "$R" --help
has "$t/out" "codes generate" "top help lists verbs"
for v in migrate init "tenant create" "admin create" "admin passwd" \
	"admin disable" "admin time-zone" "apikey create" \
	"apikey list" "apikey revoke" "campaign create" "campaign close" \
	"campaign list" "codes generate" "codes import" "codes export" \
	"codes show" redeem "pool claim" reverse revoke verify; do
	# shellcheck disable=SC2086
	expect 0 "$v --help" -- "$R" $v --help
	has "$t/out" "usage: redeemctl $v" "$v --help"
done
expect 2 "unknown verb" -- "$R" frobnicate
# A verb group alone or with --help lists its verbs.
expect 0 "apikey --help" -- "$R" apikey --help
has "$t/out" "apikey revoke ID" "apikey --help lists apikey revoke"
has "$t/out" "Revokes API key ID" "apikey --help says what each does"
expect 2 "admin alone" -- "$R" admin
has "$t/err" "admin time-zone ZONE" "admin alone lists its verbs"
expect 2 "apikey frob" -- "$R" apikey frob
has "$t/err" "unknown verb" "apikey frob is an unknown verb"
[ ! -s "$t/out" ] && ok || bad "apikey frob printed on stdout"
expect 2 "unknown option" -- "$R" campaign create --name x --bogus 1
expect 2 "missing value" -- "$R" campaign create --name
expect 2 "missing required" -- "$R" codes generate --count 3
expect 2 "bad number" -- "$R" codes generate --campaign c --count x \
	--max-uses 1
expect 2 "negative number" -- "$R" codes generate --campaign c --count -5 \
	--max-uses 1
expect 2 "extra argument" -- "$R" redeem A b c
expect 2 "missing argument" -- "$R" redeem A

# Database.
expect 3 "unreachable database" -- env REDEEM_DB="mysql://u@localhost/x?socket=/nonexistent" "$R" migrate
has "$t/err" "unavailable" "unreachable database says unavailable"
expect 0 "migrate" -- "$R" migrate
has "$t/out" "applied 001_init" "first migrate applies"
expect 0 "migrate again" -- "$R" migrate
has "$t/out" "up to date" "second migrate is a no-op"
expect 1 "unknown tenant" -- "$R" campaign list --tenant nosuch
has "$t/err" "not_found" "unknown tenant"

# First run: init migrates and prints the credentials, once.
lines() { [ "$(wc -l <"$1")" -eq "$2" ]; }
keyre='rdm_[a-z2-7]\{8\}_[a-z2-7]\{32\}'
case $REDEEM_DB in
sqlite:*)
	expect 0 "init on a fresh database" -- \
		env REDEEM_DB="sqlite:$t/fresh.db" "$R" init
	lines "$t/out" 2 && ok || bad "init on a fresh database: two lines"
	expect 0 "init migrated" -- env REDEEM_DB="sqlite:$t/fresh.db" \
		"$R" migrate
	has "$t/out" "up to date" "init applied the migrations"
	;;
esac
expect 0 "init" -- "$R" init
lines "$t/out" 2 && ok || bad "init prints two lines"
has "$t/out" "^admin login: admin@localhost [A-Za-z0-9]\{20\}$" \
	"init prints the admin login"
has "$t/out" "^api key: $keyre$" "init prints an API key"
expect 0 "init again" -- "$R" init
[ ! -s "$t/out" ] && ok || bad "init again prints nothing"
expect 0 "init's key is listed" -- "$R" apikey list
has "$t/out" "admin .*first run$" "init's key: admin scope, labelled"

# API keys: printed alone, listed without their secret, revoked.
expect 0 "apikey create" -- "$R" apikey create --scope redeem \
	--label "shop front"
lines "$t/out" 1 && grep -qx "$keyre" "$t/out" && ok ||
	bad "apikey create prints the key alone"
[ ! -s "$t/err" ] && ok || bad "apikey create: nothing on stderr"
key=$(cat "$t/out")
lookup=${key:4:8}
secret=${key:13}
expect 0 "apikey list" -- "$R" apikey list
has "$t/out" "rdm_$lookup redeem" "list shows the key's lookup and scope"
has "$t/out" "shop front" "list shows the label"
grep -q "$secret" "$t/out" && bad "list shows no secret" || ok
keyid=$(awk -v l="rdm_$lookup" '$2 == l {print $1}' "$t/out")
expect 0 "apikey revoke" -- "$R" apikey revoke "$keyid"
expect 0 "apikey revoke again" -- "$R" apikey revoke "$keyid"
expect 0 "apikey list after revoke" -- "$R" apikey list
awk -v l="rdm_$lookup" '$2 == l && $5 != "-"' "$t/out" | grep -q . &&
	ok || bad "list shows the revocation"
expect 1 "apikey revoke unknown" -- "$R" apikey revoke 999999
has "$t/err" "not_found" "apikey revoke unknown"
expect 2 "apikey revoke bad id" -- "$R" apikey revoke x
expect 2 "apikey bad scope" -- "$R" apikey create --scope root
expect 2 "apikey without scope" -- "$R" apikey create
expect 0 "apikey admin scope" -- "$R" apikey create --scope admin
grep -qx "$keyre" "$t/out" && ok || bad "admin-scope key printed"

# Dashboard admins.
expect 0 "admin create, password on stdin" -- stdin_is "s3cret-pass" \
	"$R" admin create --email " Ann@Example.com" --password-stdin
[ ! -s "$t/out" ] && ok || bad "nothing on stdout with --password-stdin"
has "$t/err" "ann@example.com (admin)" "admin create: canonical e-mail, role admin"
expect 0 "admin create, generated" -- "$R" admin create \
	--email bob@example.com --role viewer
lines "$t/out" 1 && grep -qx '[A-Za-z0-9]\{20\}' "$t/out" && ok ||
	bad "a generated password is printed alone"
has "$t/err" "(viewer)" "admin create --role"
expect 1 "duplicate admin" -- "$R" admin create --email ANN@example.com
has "$t/err" "conflict" "duplicate admin is a conflict"
expect 1 "duplicate admin, stdin" -- stdin_is "another-pass" \
	"$R" admin create --email ann@example.com --password-stdin
has "$t/err" "conflict" "duplicate admin from stdin is a conflict"
expect 1 "admin short password" -- stdin_is short \
	"$R" admin create --email c@example.com --password-stdin
has "$t/err" "bad_request" "short password"
expect 1 "admin no password on stdin" -- no_stdin \
	"$R" admin create --email c@example.com --password-stdin
has "$t/err" "bad_request" "empty stdin"
expect 1 "admin bad e-mail" -- "$R" admin create --email nobody
has "$t/err" "bad_request" "bad e-mail"
expect 2 "admin bad role" -- "$R" admin create --email d@example.com \
	--role god
expect 2 "admin without e-mail" -- "$R" admin create

# One number from the database (the audit rows the verbs leave).
sql1() {
	case $REDEEM_DB in
	sqlite:*) sqlite3 "${REDEEM_DB#sqlite:}" "$1" ;;
	mysql://*) mariadb --no-defaults -S "$sock" -uroot -N "$db" -e "$1" ;;
	esac
}
hash_of() { sql1 "SELECT password_hash FROM admins WHERE email = '$1'"; }

# admin passwd and disable, each audited: admin_id 0, from "cli".
h0=$(hash_of ann@example.com)
expect 0 "admin passwd, generated" -- "$R" admin passwd \
	--email " ANN@example.com"
lines "$t/out" 1 && grep -qx '[A-Za-z0-9]\{20\}' "$t/out" && ok ||
	bad "admin passwd prints the generated password alone"
has "$t/err" "ann@example.com in tenant default" "admin passwd names the admin"
h1=$(hash_of ann@example.com)
[ -n "$h1" ] && [ "$h1" != "$h0" ] && ok || bad "admin passwd changes the hash"
expect 0 "admin passwd, stdin" -- stdin_is "an0ther-pass" \
	"$R" admin passwd --email ann@example.com --password-stdin
[ ! -s "$t/out" ] && ok || bad "admin passwd: nothing on stdout with stdin"
[ "$(hash_of ann@example.com)" != "$h1" ] && ok ||
	bad "admin passwd --password-stdin changes the hash"
expect 1 "admin passwd unknown" -- "$R" admin passwd \
	--email nobody@example.com
has "$t/err" "not_found" "admin passwd unknown is not_found"
[ -z "$(cat "$t/out")" ] && ok || bad "no password printed for nobody"
expect 1 "admin passwd short" -- stdin_is short \
	"$R" admin passwd --email ann@example.com --password-stdin
has "$t/err" "bad_request" "admin passwd short password"
expect 1 "admin passwd no stdin" -- no_stdin \
	"$R" admin passwd --email ann@example.com --password-stdin
expect 1 "admin passwd bad e-mail" -- "$R" admin passwd --email nobody
has "$t/err" "bad_request" "admin passwd bad e-mail"
expect 2 "admin passwd without e-mail" -- "$R" admin passwd
expect 2 "admin passwd unknown option" -- "$R" admin passwd \
	--email ann@example.com --role owner
expect 1 "admin passwd, unknown tenant" -- "$R" admin passwd \
	--email ann@example.com --tenant nosuch
has "$t/err" "not_found" "admin passwd, unknown tenant"
# admin time-zone: a zone of the tz database, audited.
expect 0 "admin time-zone" -- "$R" admin time-zone --email ann@example.com \
	Europe/Berlin
has "$t/out" "now sees times in Europe/Berlin" "admin time-zone says the zone"
[ "$(sql1 "SELECT time_zone FROM admins WHERE email = \
	'ann@example.com'")" = Europe/Berlin ] && ok ||
	bad "admin time-zone stores the zone"
[ "$(sql1 "SELECT COUNT(*) FROM audit_log WHERE action = \
	'admin.time_zone' AND object = 'ann@example.com'")" = 1 ] && ok ||
	bad "admin time-zone is audited"
for z in Mars/Olympus ../../etc/passwd /etc/passwd Europe//Berlin ""; do
	expect 1 "admin time-zone $z" -- "$R" admin time-zone \
		--email ann@example.com "$z"
	has "$t/err" "bad_request" "admin time-zone $z is bad_request"
done
expect 1 "admin time-zone unknown admin" -- "$R" admin time-zone \
	--email nobody@example.com UTC
has "$t/err" "not_found" "admin time-zone unknown admin is not_found"
expect 2 "admin time-zone without a zone" -- "$R" admin time-zone \
	--email ann@example.com
expect 0 "admin disable" -- "$R" admin disable --email Bob@example.com
has "$t/out" "disabled admin bob@example.com in tenant default" \
	"admin disable names the admin"
expect 0 "admin disable again (idempotent)" -- "$R" admin disable \
	--email bob@example.com
expect 1 "admin disable unknown" -- "$R" admin disable \
	--email nobody@example.com
has "$t/err" "not_found" "admin disable unknown is not_found"
expect 2 "admin disable without e-mail" -- "$R" admin disable
[ "$(sql1 "SELECT COUNT(*) FROM admins WHERE email = 'bob@example.com' \
	AND disabled_at IS NOT NULL")" = 1 ] && ok || bad "bob is disabled"
[ "$(sql1 "SELECT COUNT(*) FROM audit_log WHERE admin_id = 0 AND \
	ip = 'cli' AND action = 'admin.passwd' AND \
	object = 'ann@example.com'")" = 2 ] && ok ||
	bad "two admin.passwd audit rows"
[ "$(sql1 "SELECT COUNT(*) FROM audit_log WHERE admin_id = 0 AND \
	ip = 'cli' AND action = 'admin.disable' AND \
	object = 'bob@example.com'")" = 2 ] && ok ||
	bad "two admin.disable audit rows"
[ "$(sql1 "SELECT COUNT(*) FROM audit_log")" = 5 ] && ok ||
	bad "refusals write no audit row"

# Campaigns.
expect 0 "campaign create" -- "$R" campaign create --name spring \
	--budget 100 --ends 2099-01-01T00:00:00Z
has "$t/out" '"ok":true' "campaign create prints JSON"
has "$t/out" '"ends_at":"2099-01-01T00:00:00Z"' "campaign ends"
expect 1 "duplicate campaign" -- "$R" campaign create --name spring
has "$t/err" "conflict" "duplicate campaign is a conflict"
expect 1 "bad campaign name" -- "$R" campaign create --name "a b"
has "$t/err" "bad_request" "bad campaign name"
expect 1 "bad kind" -- "$R" campaign create --name k --kind nope
expect 2 "bad time" -- "$R" campaign create --name k --ends tomorrow
expect 0 "pool create" -- "$R" campaign create --name pool1 --kind pool

# Generation: codes on stdout only (no terminal: no progress bar).
expect 0 "codes generate" -- "$R" codes generate --campaign spring \
	--count 50 --max-uses 2 --prefix SPR
cp "$t/out" "$t/codes"
[ "$(wc -l <"$t/codes")" -eq 50 ] && ok || bad "50 codes printed"
[ "$(sort -u "$t/codes" | wc -l)" -eq 50 ] && ok || bad "codes unique"
[ ! -s "$t/err" ] && ok || bad "no progress output off a terminal"
grep -qv '^SPR-' "$t/codes" && bad "prefix on every code" || ok
expect 1 "generate into unknown campaign" -- "$R" codes generate \
	--campaign nosuch --count 1 --max-uses 1
has "$t/err" "not_found" "unknown campaign"
expect 1 "pool codes are single-use" -- "$R" codes generate \
	--campaign pool1 --count 3 --max-uses 2
expect 0 "pool codes" -- "$R" codes generate --campaign pool1 --count 3 \
	--max-uses 1

# Redeem: JSON and exit status.
c1=$(sed -n 1p "$t/codes")
expect 0 "redeem" -- "$R" redeem "$c1" Ann@Example.com
has "$t/out" '"already":false' "fresh redemption"
has "$t/out" '"account":"ann@example.com"' "canonical account"
expect 0 "replay" -- "$R" redeem "$(echo "$c1" | tr 'A-Z' 'a-z')" \
	ann@example.com
has "$t/out" '"already":true' "replay answers already"
expect 0 "second use" -- "$R" redeem "$c1" bob@example.com
expect 1 "exhausted" -- "$R" redeem "$c1" cy@example.com
has "$t/out" '"error":"exhausted"' "exhausted word"
expect 1 "invalid" -- "$R" redeem NOPE-NOPE cy@example.com
has "$t/out" '"error":"invalid"' "invalid word"
expect 1 "bad account" -- "$R" redeem "$c1" "   "
has "$t/out" '"error":"bad_request"' "blank account"
expect 0 "pool claim" -- "$R" pool claim pool1 p@example.com
has "$t/out" '"code":"' "pool claim names the code"
expect 0 "codes show" -- "$R" codes show "$c1"
has "$t/out" '"state":"exhausted"' "show state"

# Reverse and revoke.
expect 0 "reverse" -- "$R" reverse 1 --reason refund --policy return_seat
has "$t/out" '"reversal_policy":"return_seat"' "reverse answer"
expect 2 "reverse bad policy" -- "$R" reverse 1 --reason x --policy maybe
expect 1 "reverse unknown" -- "$R" reverse 999999 --reason x \
	--policy keep_seat
has "$t/out" '"error":"not_found"' "reverse unknown"
expect 0 "revoke" -- "$R" revoke "$c1"
has "$t/out" '"state":"revoked"' "revoke answer"
expect 1 "redeem revoked" -- "$R" redeem "$c1" dee@example.com
has "$t/out" '"error":"revoked"' "revoked word"

# Import and export, streamed.
{
	echo "code,max_uses,expires_at"
	echo "SUMMER2026,3,"
	echo "winter-2026,,2099-01-01T00:00:00Z"
	echo "ABCDEFGH"
} >"$t/good.csv"
expect 0 "import" -- "$R" codes import "$t/good.csv" --campaign spring
has "$t/err" "imported 3 codes, 0 already there" "import summary"
expect 0 "import again" -- "$R" codes import "$t/good.csv" --campaign spring
has "$t/err" "imported 0 codes, 3 already there" "import is idempotent"
expect 0 "redeem imported" -- "$R" redeem summer-2026 eve@example.com
expect 0 "redeem imported without check character" -- "$R" redeem \
	abcdefgh eve@example.com
printf 'GOODONE1\nGOODONE2\nbad code!\n' >"$t/bad.csv"
expect 1 "import bad line" -- "$R" codes import "$t/bad.csv" \
	--campaign spring
has "$t/err" "line 3" "import names the bad line"
expect 1 "nothing imported from a bad file" -- "$R" codes show GOODONE1
expect 1 "import missing file" -- "$R" codes import "$t/nope.csv" \
	--campaign spring
expect 0 "export all" -- "$R" codes export --campaign spring
[ "$(($(wc -l <"$t/out") - 1))" -eq 53 ] && ok || bad "export all: 53 rows"
has "$t/out" "^code,campaign,state,uses,max_uses,expires_at$" "csv header"
expect 0 "export used" -- "$R" codes export --select used
[ "$(($(wc -l <"$t/out") - 1))" -eq 4 ] && ok || bad "export used: 4 rows"
expect 0 "export unused" -- "$R" codes export --campaign spring \
	--select unused
[ "$(($(wc -l <"$t/out") - 1))" -eq 50 ] && ok || bad "export unused: 50"
expect 2 "export bad select" -- "$R" codes export --select some

# Campaign close and list.
expect 0 "campaign close" -- "$R" campaign close pool1
has "$t/out" '"state":"closed"' "closed"
expect 0 "campaign list" -- "$R" campaign list
has "$t/out" "spring" "list shows campaigns"
expect 0 "tenant create" -- "$R" tenant create acme
expect 0 "tenant scoping" -- "$R" campaign list --tenant acme
grep -q spring "$t/out" && bad "tenant scoping hides other tenants" || ok
expect 0 "apikey list, other tenant" -- "$R" apikey list --tenant acme
grep -q "$lookup" "$t/out" && bad "keys are the tenant's own" || ok
expect 1 "apikey revoke across tenants" -- "$R" apikey revoke "$keyid" \
	--tenant acme
expect 0 "admin in another tenant" -- "$R" admin create \
	--email bob@example.com --tenant acme
expect 0 "init, other tenant with an admin" -- "$R" init --tenant acme
[ ! -s "$t/out" ] && ok || bad "init prints nothing when there is an admin"

# A hot code split over counter rows: its 3 seats over 3 rows, each
# taken once, then exhausted; uses is their sum everywhere.
expect 0 "campaign for a split code" -- "$R" campaign create --name tv
expect 0 "generate a split code" -- "$R" codes generate --campaign tv \
	--count 1 --max-uses 3 --shards 3
tv=$(cat "$t/out")
for a in a b c; do
	expect 0 "redeem split code ($a)" -- "$R" redeem "$tv" "$a@tv.example"
done
expect 1 "split code exhausted" -- "$R" redeem "$tv" d@tv.example
has "$t/out" '"error":"exhausted"' "split code answers exhausted"
expect 0 "show split code" -- "$R" codes show "$tv"
has "$t/out" '"uses":3' "split code's uses are its rows' sum"
has "$t/out" '"state":"exhausted"' "split code reads exhausted"
expect 2 "shards out of range" -- "$R" codes generate --campaign tv \
	--count 1 --max-uses 3 --shards 0
expect 0 "generate a hot code by the setting" -- env \
	REDEEM_SPLIT_MIN_USES=5 REDEEM_SPLIT_SHARDS=4 "$R" codes generate \
	--campaign tv --count 1 --max-uses 5
hot=$(cat "$t/out")
q="SELECT c.shards, COUNT(*) FROM codes c JOIN code_shards s ON
	s.code_id = c.id WHERE c.display = '$hot' GROUP BY c.shards"
case $REDEEM_DB in
sqlite:*) rows=$(sqlite3 -separator ' ' "${REDEEM_DB#sqlite:}" "$q") ;;
mysql://*) rows=$(mariadb --no-defaults -N -S "$sock" -uroot "$db" -e "$q" |
	tr '\t' ' ') ;;
esac
[ "$rows" = "4 4" ] && ok || bad "REDEEM_SPLIT_*: 4 rows, got '$rows'"

# verify: clean, then a broken row is named.
expect 0 "verify clean" -- "$R" verify
has "$t/out" "verify: ok" "verify says ok"
case $REDEEM_DB in
sqlite:*)
	sqlite3 "${REDEEM_DB#sqlite:}" \
		"UPDATE codes SET uses = uses + 1 WHERE code = 'SUMMER2026'"
	;;
mysql://*)
	mariadb --no-defaults -S "$sock" -uroot "$db" \
		-e "UPDATE codes SET uses = uses + 1 WHERE code = 'SUMMER2026'"
	;;
esac
expect 1 "verify catches a broken row" -- "$R" verify
has "$t/out" "VIOLATION G2 conservation: code" "verify names G2"

echo "redeemctl: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
