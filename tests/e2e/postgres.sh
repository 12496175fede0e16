#!/bin/sh
# postgres.sh — a private PostgreSQL server for the tests of the postgres
# storage backend, never the system's one.
#
#	postgres.sh start DIR	initdb + pg_ctl start on a free loopback port,
#				with database flowcgi; writes its URL to
#				DIR/url (user flowcgi, trust on loopback)
#	postgres.sh start DIR tls
#				the same, but loopback connections must use
#				TLS and a password (scram-sha-256): the
#				server's certificate (for IP 127.0.0.1) is
#				DIR/root.crt, the password DIR/password and
#				a libpq password file DIR/pgpass; DIR/url
#				asks for verify-full and names no password
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
	auth="-A trust"
	if [ "$TLS" = tls ]; then
		command -v openssl >/dev/null 2>&1 || {
			echo "openssl is not installed (Debian: openssl)"; exit 77; }
		openssl rand -hex 16 >"$D/password"
		# initdb reads it as the server's user, and wants pgdata empty
		pwfile=$(mktemp "${TMPDIR:-/tmp}/flowcgi-pgpw.XXXXXX") || exit 1
		cp "$D/password" "$pwfile"
		[ "$(id -u)" -eq 0 ] && chown "$user" "$pwfile"
		auth="--auth-local=trust --auth-host=scram-sha-256 --pwfile=$pwfile"
	fi
	# shellcheck disable=SC2086
	if ! as "$bin/initdb" -D "$pgdata" -U flowcgi $auth -E UTF8 \
	    --no-sync >"$D/initdb.log" 2>&1; then
		[ "$TLS" = tls ] && rm -f "$pwfile"
		echo "initdb failed:"; tail -5 "$D/initdb.log"; exit 1
	fi
	[ "$TLS" = tls ] && rm -f "$pwfile"
	[ "$TLS" = tls ] && { tls_setup || exit 1; }
	if ! pg_up; then
		echo "postgres did not start:"; tail -5 "$pgdata/server.log"
		exit 1
	fi
	# through the server's own socket, which trusts its user
	if ! as "$bin/createdb" -h "$pgdata" -p "$(cat "$D/port")" -U flowcgi \
	    flowcgi; then
		pg_down; exit 1
	fi
	if [ "$TLS" = tls ]; then
		echo "postgres://flowcgi@127.0.0.1:$(cat "$D/port")/flowcgi?sslmode=verify-full&sslrootcert=$D/root.crt" >"$D/url"
	else
		echo "postgres://flowcgi@127.0.0.1:$(cat "$D/port")/flowcgi" >"$D/url"
	fi
}

# A certificate for 127.0.0.1 (its own root), TLS on, and loopback
# connections only over TLS with a password; DIR/pgpass for libpq.
tls_setup() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
	    -addext subjectAltName=IP:127.0.0.1 -keyout "$pgdata/server.key" \
	    -out "$pgdata/server.crt" >"$D/openssl.log" 2>&1 ||
	    { echo "openssl failed:"; tail -3 "$D/openssl.log"; return 1; }
	chmod 600 "$pgdata/server.key"
	[ "$(id -u)" -eq 0 ] && chown "$user" "$pgdata/server.key" \
	    "$pgdata/server.crt"
	cp "$pgdata/server.crt" "$D/root.crt"
	printf "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n" |
	    as tee -a "$pgdata/postgresql.conf" >/dev/null
	printf 'local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n' |
	    as tee "$pgdata/pg_hba.conf" >/dev/null
	printf '127.0.0.1:%s:flowcgi:flowcgi:%s\n' "$(cat "$D/port")" \
	    "$(cat "$D/password")" >"$D/pgpass"
	chmod 600 "$D/pgpass"
}

stop() {
	[ -f "$D/pgdata" ] || return 0
	pg_down
	rm -rf "$(cat "$D/pgdata")"
	rm -f "$D/pgdata" "$D/url"
}

[ $# -eq 2 ] || { [ $# -eq 3 ] && [ "$1 $3" = "start tls" ]; } ||
    die "usage: postgres.sh start|down|up|stop DIR, or start DIR tls"
D=$2
TLS=${3:-}
case $1 in
start) start ;;
down) pg_down ;;
up) pg_up ;;
stop) stop ;;
*) die "usage: postgres.sh start|down|up|stop DIR" ;;
esac
