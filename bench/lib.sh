# shellcheck shell=bash
# What the HTTP rows of make bench share (sourced by web.sh and admin.sh):
# starting and stopping nginx and the workers of one database.

serve_pid=""
# Stops the server serve_start started (nothing when none runs).
stop_server() {
	if [ -n "$serve_pid" ]; then
		kill -TERM "$serve_pid" 2>/dev/null || true
		wait "$serve_pid" 2>/dev/null || true
		serve_pid=""
	fi
}
trap stop_server EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# serve_start DSN VAR [WORKERS]: nginx/serve.sh on a free port (sets port
# and serve_pid) with its files in VAR, once /healthz answers; WORKERS
# defaults to one per core.
serve_start() {
	local dsn=$1 var=$2 workers=${3:-}
	port=$(free_port)
	mkdir -p "$var"
	REDEEM_DB=$dsn REDEEM_PORT=$port REDEEM_VAR=$var \
		REDEEM_WORKERS=${workers:-$(nproc)} nginx/serve.sh \
		>"$var/serve.out" 2>&1 &
	serve_pid=$!
	for _ in $(seq 200); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && return 0
		sleep 0.05
	done
	echo "bench: the server on $dsn did not answer /healthz" >&2
	return 1
}
