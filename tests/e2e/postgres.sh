#!/bin/sh
# postgres.sh — a private PostgreSQL server for the tests of the postgres
# storage backend, never the system's one.
#
#	postgres.sh start DIR	initdb + pg_ctl start on a free loopback port,
#				with database flowcgi; writes its URL to
#				DIR/url (user flowcgi, trust on loopback)
#	postgres.sh down DIR	stops the server (fast), keeping its data
#	postgres.sh up DIR	starts it again on the same port
#	postgres.sh stop DIR	stops it and removes its data
#
# Debian's postgresql package puts initdb and pg_ctl in
# /usr/lib/postgresql/<version>/bin, not on PATH; the newest is used. The
# server refuses to run as root: as root it runs as the postgres user (or
# nobody), in a data directory of its own under TMPDIR that that user owns
# (DIR/pgdata names it). Without PostgreSQL start exits 77 saying what is
# missing: the caller counts a skip.
set -u

die() { echo "postgres.sh: $*" >&2; exit 1; }

bindir() {
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		[ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
	done
	d=$(dirname "$(command -v initdb 2>/dev/null)" 2>/dev/null) &&
	    [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
	return 1
}

# as CMD...: runs CMD as the server's user.
as() {
	if [ "$(id -u)" -ne 0 ]; then
		"$@"
	elif command -v runuser >/dev/null 2>&1; then
		runuser -u "$(cat "$D/user")" -- "$@"
	else
		setpriv --reuid="$(cat "$D/user")" --regid="$(cat "$D/user")" \
		    --init-groups -- "$@"
	fi
}

free_port() {
	python3 - 2>/dev/null <<'PY' || shuf -i 20000-60000 -n 1
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])
PY
}

pg_up() {
	as "$(cat "$D/bin")/pg_ctl" -D "$(cat "$D/pgdata")" -w -t 30 \
	    -l "$(cat "$D/pgdata")/server.log" \
	    -o "-p $(cat "$D/port") -k $(cat "$D/pgdata") -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" \
	    start >/dev/null
}

pg_down() {
	as "$(cat "$D/bin")/pg_ctl" -D "$(cat "$D/pgdata")" -m fast -w -t 30 \
	    stop >/dev/null 2>&1
}

start() {
	bin=$(bindir) || { echo "initdb and pg_ctl are not installed" \
	    "(Debian: postgresql)"; exit 77; }
	mkdir -p "$D" || exit 1
	echo "$bin" >"$D/bin"
	user=$(id -un)
	if [ "$(id -u)" -eq 0 ]; then
		if id postgres >/dev/null 2>&1; then user=postgres; else
			user=nobody; fi
	fi
	echo "$user" >"$D/user"
	pgdata=$(mktemp -d "${TMPDIR:-/tmp}/flowcgi-pg.XXXXXX") || exit 1
	echo "$pgdata" >"$D/pgdata"
	[ "$(id -u)" -eq 0 ] && chown "$user" "$pgdata"
	free_port >"$D/port"
	if ! as "$bin/initdb" -D "$pgdata" -U flowcgi -A trust -E UTF8 \
	    --no-sync >"$D/initdb.log" 2>&1; then
		echo "initdb failed:"; tail -5 "$D/initdb.log"; exit 1
	fi
	if ! pg_up; then
		echo "postgres did not start:"; tail -5 "$pgdata/server.log"
		exit 1
	fi
	if ! as "$bin/createdb" -h 127.0.0.1 -p "$(cat "$D/port")" -U flowcgi \
	    flowcgi; then
		pg_down; exit 1
	fi
	echo "postgres://flowcgi@127.0.0.1:$(cat "$D/port")/flowcgi" >"$D/url"
}

stop() {
	[ -f "$D/pgdata" ] || return 0
	pg_down
	rm -rf "$(cat "$D/pgdata")"
	rm -f "$D/pgdata" "$D/url"
}

[ $# -eq 2 ] || die "usage: postgres.sh start|down|up|stop DIR"
D=$2
case $1 in
start) start ;;
down) pg_down ;;
up) pg_up ;;
stop) stop ;;
*) die "usage: postgres.sh start|down|up|stop DIR" ;;
esac
