#!/bin/bash
# Serves Redeem in the foreground: migrates the database (and on the first
# run creates the admin and an API key, printed once), writes the nginx
# config into $REDEEM_VAR, starts the FastCGI worker pool, the sweeper and
# nginx, and stops everything it started on Ctrl-C, SIGTERM, or when any
# of them dies.
#
# Environment: REDEEM_DB (default sqlite:var/redeem.db), REDEEM_PORT
# (8080), REDEEM_LISTEN (the address nginx listens on, default
# 127.0.0.1:REDEEM_PORT; 0.0.0.0:8080 behind a load balancer), REDEEM_VAR
# (var), REDEEM_BIN (build), REDEEM_WORKERS (one per
# core); the workers also read REDEEM_TENANT, REDEEM_TRUSTED_PROXIES,
# REDEEM_ABUSE_LIMIT, REDEEM_ABUSE_WINDOW, REDEEM_LOG.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export REDEEM_DB=${REDEEM_DB:-sqlite:var/redeem.db}
port=${REDEEM_PORT:-8080}
listen=${REDEEM_LISTEN:-127.0.0.1:$port}
# Where this script itself reaches nginx: the listen address, the
# loopback for a wildcard one.
local_url=http://${listen/#0.0.0.0:/127.0.0.1:}
local_url=${local_url/#http:\/\/\[::\]:/http://[::1]:}
var=${REDEEM_VAR:-var}
bin=${REDEEM_BIN:-$root/build}
workers=${REDEEM_WORKERS:-$(nproc)}
nginx=$(command -v nginx || echo /usr/sbin/nginx)

mkdir -p "$var/log" "$var/run" "$var/nginx"
var=$(cd "$var" && pwd)
case $bin in /*) ;; *) bin=$(cd "$bin" && pwd) ;; esac
case $REDEEM_DB in
sqlite:/*) ;;
sqlite:*) # relative to where make run was started
	mkdir -p "$(dirname "${REDEEM_DB#sqlite:}")"
	REDEEM_DB="sqlite:$(cd "$(dirname "${REDEEM_DB#sqlite:}")" && pwd)/$(basename "${REDEEM_DB#sqlite:}")"
	;;
esac

# Migrations, and the first admin and API key on the first run.
"$bin/redeemctl" init

user=""
[ "$(id -u)" -eq 0 ] && user="user root root;"
sed -e "s|@USER@|$user|" -e "s|@VAR@|$var|g" -e "s|@LISTEN@|$listen|g" \
	-e "s|@ROOT@|$root|g" -e "s|@SOCKET@|$var/run/fcgi.sock|g" \
	"$root/nginx/redeem.conf.in" >"$var/nginx.conf"
"$nginx" -t -q -p "$var/nginx" -c "$var/nginx.conf" -e "$var/log/nginx-error.log"

fcgi=""
web=""
sweep=""
stop() {
	trap - INT TERM EXIT
	[ -n "$web" ] && kill -TERM "$web" 2>/dev/null
	[ -n "$fcgi" ] && kill -TERM "$fcgi" 2>/dev/null
	[ -n "$sweep" ] && kill -TERM "$sweep" 2>/dev/null
	wait 2>/dev/null
	echo "stopped" >&2
}
trap 'stop; exit 0' INT TERM
trap stop EXIT

"$bin/redeem-fcgi" --socket "$var/run/fcgi.sock" --workers "$workers" \
	--templates "$root/templates" 2>>"$var/log/worker.log" &
fcgi=$!
for _ in $(seq 100); do
	[ -S "$var/run/fcgi.sock" ] && break
	kill -0 "$fcgi" 2>/dev/null || {
		tail -5 "$var/log/worker.log" >&2
		exit 1
	}
	sleep 0.05
done
"$bin/redeem-sweep" 2>>"$var/log/sweep.log" &
sweep=$!
"$nginx" -p "$var/nginx" -c "$var/nginx.conf" -e "$var/log/nginx-error.log" &
web=$!
for _ in $(seq 100); do
	curl -s -o /dev/null "$local_url/ping" && break
	kill -0 "$web" 2>/dev/null || exit 1
	sleep 0.05
done
echo "serving on $local_url/ (workers: $workers, database: ${REDEEM_DB%%\?*})"
# Either one ending ends the service.
wait -n "$fcgi" "$web" "$sweep" || true
echo "a server process ended; stopping" >&2
exit 1
