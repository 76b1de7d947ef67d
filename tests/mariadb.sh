#!/usr/bin/env bash
# A private MariaDB for tests and benchmarks: its own data directory, a unix
# socket, no TCP, no option files, root without a password.
#
#   tests/mariadb.sh start DIR [fast]   prints the DSN on stdout
#   tests/mariadb.sh stop DIR           never fails if already stopped
#
# DIR is a temporary directory the caller owns and removes. "fast" trades
# durability for speed (test runs only); benchmarks use the durable default.
set -euo pipefail

usage() {
	echo "usage: $0 start DIR [fast] | stop DIR" >&2
	exit 2
}

# Prints the pid of our server, or nothing. The pid is checked against the
# process name so a recycled pid is never signalled.
server_pid() {
	local dir=$1 pid f
	for f in "$dir/mysqld.pid" "$dir/server.pid"; do
		[[ -s $f ]] || continue
		pid=$(<"$f")
		[[ $pid =~ ^[0-9]+$ ]] || continue
		if [[ -r /proc/$pid/comm ]] &&
			[[ $(<"/proc/$pid/comm") == mariadbd ]]; then
			echo "$pid"
			return 0
		fi
	done
	return 0
}

# Waits up to $2 seconds for process $1 to exit; 1 if it is still there.
wait_exit() {
	local pid=$1 ticks=$(($2 * 10))
	while ((ticks-- > 0)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	! kill -0 "$pid" 2>/dev/null
}

cmd_start() {
	local dir=$1 mode=${2:-} user sock pid ticks
	local -a fast=()

	case $mode in
	'') ;;
	fast)
		fast=(--innodb-flush-log-at-trx-commit=2
			--skip-innodb-doublewrite --sync-binlog=0
			--innodb-flush-method=nosync)
		;;
	*) usage ;;
	esac

	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd -P)
	sock=$dir/mysqld.sock
	user=$(id -un)
	# sun_path holds 108 bytes with the NUL.
	if ((${#sock} > 107)); then
		echo "mariadb.sh: socket path too long: $sock" >&2
		exit 1
	fi
	if [[ -n $(server_pid "$dir") ]]; then
		echo "mariadb.sh: a server already runs in $dir" >&2
		exit 1
	fi

	if ! mariadb-install-db --no-defaults \
		--auth-root-authentication-method=normal \
		--datadir="$dir/data" --user="$user" --skip-test-db \
		>"$dir/install.log" 2>&1; then
		echo "mariadb.sh: mariadb-install-db failed:" >&2
		cat "$dir/install.log" >&2
		exit 1
	fi

	# Every descriptor is redirected: a caller reading our stdout through
	# $(...) must not wait for the server to close it. max-prepared-stmt-
	# count: each worker prepares the catalog once per connection.
	mariadbd --no-defaults --datadir="$dir/data" --socket="$sock" \
		--skip-networking --pid-file="$dir/mysqld.pid" \
		--log-error="$dir/error.log" --user="$user" \
		--innodb-buffer-pool-size=256M --max-connections=500 \
		--max-prepared-stmt-count=1048576 \
		--skip-name-resolve "${fast[@]}" \
		</dev/null >"$dir/mysqld.out" 2>&1 &
	pid=$!
	echo "$pid" >"$dir/server.pid"

	ticks=600
	until mariadb-admin --no-defaults --socket="$sock" -uroot ping \
		>/dev/null 2>&1; do
		if ! kill -0 "$pid" 2>/dev/null || ((--ticks <= 0)); then
			echo "mariadb.sh: the server did not start:" >&2
			cat "$dir/error.log" "$dir/mysqld.out" >&2 2>/dev/null ||
				true
			kill -9 "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			exit 1
		fi
		sleep 0.1
	done

	mariadb --no-defaults --socket="$sock" -uroot -e \
		'CREATE DATABASE IF NOT EXISTS redeem
		 CHARACTER SET utf8mb4 COLLATE utf8mb4_bin'
	echo "mysql://root@localhost/redeem?socket=$sock"
}

cmd_stop() {
	local dir=$1 pid
	[[ -d $dir ]] || return 0
	dir=$(cd "$dir" && pwd -P)
	pid=$(server_pid "$dir")
	if [[ -S $dir/mysqld.sock ]]; then
		mariadb-admin --no-defaults --socket="$dir/mysqld.sock" -uroot \
			shutdown >/dev/null 2>&1 || true
	fi
	if [[ -n $pid ]] && ! wait_exit "$pid" 20; then
		echo "mariadb.sh: server $pid ignored shutdown; killing it" >&2
		kill -9 "$pid" 2>/dev/null || true
		wait_exit "$pid" 5 || true
	fi
	rm -f "$dir/server.pid"
	return 0
}

(($# >= 2)) || usage
case $1 in
start)
	(($# <= 3)) || usage
	cmd_start "$2" "${3:-}"
	;;
stop)
	(($# == 2)) || usage
	cmd_stop "$2"
	;;
*) usage ;;
esac
