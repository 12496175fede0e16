#!/usr/bin/env bash
# run-dev.sh <flowcgi binary> — `make run`: flowcgi behind nginx on
# http://127.0.0.1:8080 with the built-in defaults and data under ./var/.
# Ctrl-C stops both. nginx reaches flowcgi on a unix socket in ./var/
# (mode 0660, in a 0700 directory): no other local user can connect to
# it and pose as nginx, as anyone could on a loopback TCP port.
set -eu
BIN=$1
PORT=${FLOWCGI_RUN_PORT:-8080}
TOP=$(pwd)
VAR=$TOP/var
NGX=$VAR/nginx
mkdir -p "$VAR"
chmod 700 "$VAR"
mkdir -p "$NGX/tmp"

if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
	echo "flowcgi: port $PORT is in use; set FLOWCGI_RUN_PORT" >&2
	exit 1
fi
SOCK=$VAR/flowcgi.sock
SOCKDIR=
# a unix socket path has at most 107 bytes: a deep checkout keeps it in a
# private directory of its own
if [ "${#SOCK}" -gt 100 ]; then
	SOCKDIR=$(mktemp -d "${TMPDIR:-/tmp}/flowcgi-run.XXXXXX")
	SOCK=$SOCKDIR/flowcgi.sock
fi

# Debian keeps nginx in /usr/sbin, which a user's PATH may not have.
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
# nginx's workers keep request bodies past their memory buffer in
# $NGX/tmp, inside this checkout. Started by root, nginx would run them as
# nobody, who cannot reach a checkout in a private directory (/root, or a
# home made 0700) and answers every larger request with an HTML 500: they
# run as the user who runs this, as flowcgi does. (Started by anyone else,
# nginx cannot change user, and keeps it.)
WORKER_USER=
[ "$(id -u)" = 0 ] && WORKER_USER="user root;"

cp /etc/nginx/fastcgi_params "$NGX/fastcgi_params"
cp contrib/nginx/flowcgi_params "$NGX/flowcgi_params"
cat >"$NGX/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $NGX/nginx.pid;
error_log $NGX/error.log warn;
$WORKER_USER
events { worker_connections 1024; }
http {
	access_log $NGX/access.log;
	client_body_temp_path $NGX/tmp/body;
	fastcgi_temp_path $NGX/tmp/fastcgi;
	proxy_temp_path $NGX/tmp/proxy;
	uwsgi_temp_path $NGX/tmp/uwsgi;
	scgi_temp_path $NGX/tmp/scgi;
	upstream flowcgi {
		server unix:$SOCK;
		keepalive 8;
		keepalive_timeout 20s;	# below flowcgi's server.read_timeout
	}
	server {
		listen 127.0.0.1:$PORT;
		location / {
			include flowcgi_params;
			fastcgi_pass flowcgi;
			fastcgi_keep_conn on;
		}
	}
}
NGINX

# Only nginx, started by the same user, connects: the socket keeps its
# 0660 (server.socket_mode) and the user's group.
FLOWCGI_SERVER_DATA_DIR=$VAR "$BIN" serve --listen "unix:$SOCK" &
FPID=$!
# -e: not even a first line to the system's log, which a user cannot open.
"$NGINX" -p "$NGX" -e "$NGX/error.log" -c "$NGX/nginx.conf" &
NPID=$!

stop() {
	trap - INT TERM EXIT
	kill -TERM "$NPID" "$FPID" 2>/dev/null || true
	wait "$NPID" 2>/dev/null || true
	wait "$FPID" 2>/dev/null || true
	[ -z "$SOCKDIR" ] || rm -rf "$SOCKDIR"
	echo "flowcgi: stopped"
}
trap stop INT TERM EXIT

i=0
# up when nginx answers and flowcgi's socket is there
until (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && [ -S "$SOCK" ]; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 "$FPID" 2>/dev/null ||
	    ! kill -0 "$NPID" 2>/dev/null; then
		echo "flowcgi: start-up failed; see $NGX/error.log" >&2
		exit 1
	fi
	sleep 0.1
done
TOKEN=$(FLOWCGI_SERVER_DATA_DIR=$VAR "$BIN" token)
cat <<MSG

  flowcgi is running at  http://127.0.0.1:$PORT/
  admin token:           $TOKEN

  try:  curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:$PORT/console/api/apps

  Ctrl-C stops flowcgi and nginx.
MSG
wait "$FPID"
