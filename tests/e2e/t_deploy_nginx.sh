#!/bin/bash
# t_deploy_nginx.sh — nginx configured with the contrib/nginx files
# themselves (listen address and socket paths filled in with sed):
#   1. flowcgi-site.conf + flowcgi-upstream-tcp.conf: a whole site at /,
#      flowcgi on a TCP port that serves nginx's address only
#      (server.allowed_clients);
#   2. flowcgi-prefix.conf inside an existing server + flowcgi-upstream-
#      unix.conf: /flow/, flowcgi started by contrib/spawn-fcgi/
#      flowcgi-spawn-fcgi on a unix socket (the binary accepts on fd 0),
#      mode 0660, serving only nginx's user (server.allowed_users).
# Each: CRUD, a streamed run whose first event comes before the run ends,
# uploads, the admin page and the redirects to it.
. "$(dirname "$0")/lib.sh"

# exited <pid>: the child is gone or a zombie (not reaped yet: kill -0
# still finds it)
exited() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	case ${s##*) } in Z*) return 0 ;; esac
	return 1
}
. "$TOP/tests/tools/deploy_lib.sh"
trap 'deploy_cleanup; finish; exit $?' EXIT

NC=$TOP/contrib/nginx
NG=$T_DIR/ngx

# start_contrib_nginx <http-level includes...>: nginx with a main config
# of ours around the contrib files copied into its conf dir (NG); sets
# NG_PORT (also filled in for "listen 80;") and BASE.
start_contrib_nginx() {
	local f
	mkdir -p "$NG/tmp"
	cp /etc/nginx/fastcgi_params "$NC/flowcgi_params" "$NG/"
	{
		echo "worker_processes 1;"
		echo "daemon off;"
		echo "pid $NG/nginx.pid;"
		echo "error_log $NG/error.log warn;"
		[ "$(id -u)" = 0 ] && echo "user root;"
		echo "events { worker_connections 512; }"
		echo "http {"
		echo "	access_log off;"
		for d in client_body fastcgi proxy uwsgi scgi; do
			echo "	${d}_temp_path $NG/tmp/$d;"
		done
		for f in "$@"; do echo "	include $f;"; done
		echo "}"
	} >"$NG/nginx.conf"
	nginx -t -p "$NG" -c "$NG/nginx.conf" >"$NG/configtest.log" 2>&1 ||
	    { sed 's/^/# /' "$NG/configtest.log"; return 1; }
	nginx -p "$NG" -c "$NG/nginx.conf" >>"$NG/stdout.log" 2>&1 &
	NGINX_PID=$!
	wait_port "$NG_PORT" || { sed 's/^/# /' "$NG/error.log"; return 1; }
	BASE="http://127.0.0.1:$NG_PORT"
}

# redirect_of <path>: "<status> <Location>"
redirect_of() {
	curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "$BASE$1"
}

# ====== 1. the whole site at /, TCP ======

FLOWCGI_SERVER_ALLOWED_CLIENTS=127.0.0.1 must start_flowcgi fc
TOKEN=$(admin_token)
python3 "$TOP/tests/tools/fcgi_probe.py" --port "$FC_PORT" --bind 127.0.0.2 \
    >"$T_DIR/probe.json"
is "$(jq -r .result "$T_DIR/probe.json")" closed \
    "site: a client from 127.0.0.2 (not in server.allowed_clients) is closed"
NG_PORT=$(free_port)
mkdir -p "$NG"
sed "s|server 127.0.0.1:9000;|server 127.0.0.1:$FC_PORT;|" \
    "$NC/flowcgi-upstream-tcp.conf" >"$NG/flowcgi-upstream-tcp.conf"
sed "s|listen 80;|listen 127.0.0.1:$NG_PORT;|" "$NC/flowcgi-site.conf" \
    >"$NG/flowcgi-site.conf"
grep -q "127.0.0.1:$FC_PORT" "$NG/flowcgi-upstream-tcp.conf" &&
    grep -q "listen 127.0.0.1:$NG_PORT;" "$NG/flowcgi-site.conf"
ok $? "site: the contrib files with the ports filled in"
must start_contrib_nginx flowcgi-upstream-tcp.conf flowcgi-site.conf
TOKEN=none req GET /healthz
is "$STATUS $(jqr .status)" "200 ok" "site: /healthz"
crud_checks site ""
admin_check site ""
is "$(redirect_of /)" "302 $BASE/admin/" "site: / redirects to the admin page"
import_slow ""
stream_gap "$BASE/v1/workflows/run" "$SLOW_KEY" 2
echo "# site: first event after $FIRST_MS ms, $GAP_MS ms before the last"
[ "$GAP_MS" -ge 1500 ]
ok $? "site: the first event came ${GAP_MS} ms before the run ended"
is "$STREAM_DONE" yes "site: the streamed run finished with its outputs"
upload_check site "" "$SLOW_APP" "$SLOW_KEY"
head -c $((5 * 1048576)) /dev/urandom >"$T_DIR/big.bin"
req POST "/console/api/apps/$SLOW_APP/assets/files?name=big.bin" \
    -H 'Content-Type: application/octet-stream' --data-binary @"$T_DIR/big.bin"
is "$STATUS $(jqr .size)" "201 $((5 * 1048576))" \
    "site: a 5 MiB upload (past nginx's 1m default body size)"
stop_nginx
kill -TERM "$FC_PID"; wait "$FC_PID"

# ====== 2. under /flow/ in an existing server, unix socket, spawn-fcgi ======

SOCK=$T_DIR/run/flowcgi.sock
SDATA=$T_DIR/spawn-data
mkdir -p "$SDATA"
ap_own "$SDATA"	# the user spawn-fcgi switches to, as root
# served: nginx's workers' user only (www-data in a real set-up; the
# user who runs this test here)
NGU=$(id -un)
printf 'server:\n  data_dir: "%s"\n  workers: 4\n  allowed_users: ["%s"]\n  shutdown_grace: 600\n' \
    "$SDATA" "$NGU" >"$T_DIR/spawn.yml"
# The unprivileged user may not reach the checkout (a home directory is
# 0700): it runs a copy, as an installed binary would be.
mkdir -p "$T_DIR/bin"
install -m 0755 "$FLOWCGI_BIN" "$T_DIR/bin/flowcgi"
SPAWN_BIN=$T_DIR/bin/flowcgi
FLOWCGI_BIN=$SPAWN_BIN FLOWCGI_CONFIG=$T_DIR/spawn.yml \
    FLOWCGI_SOCKET=$SOCK FLOWCGI_PIDFILE=$T_DIR/run/flowcgi.pid \
    FLOWCGI_USER=${AP_USER:-nobody} FLOWCGI_SOCKET_GROUP=${AP_GROUP:-nogroup} \
    sh "$TOP/contrib/spawn-fcgi/flowcgi-spawn-fcgi" -n >>"$T_DIR/spawn.log" 2>&1 &
SPID=$!
FLOWCGI_PIDS="$FLOWCGI_PIDS $SPID"
wait_until 10 test -S "$SOCK"
ok $? "spawn-fcgi: the socket exists"
if [ -n "$AP_USER" ]; then
	is "$(stat -c '%a %U %G' "$SOCK")" "660 $AP_USER $AP_GROUP" \
	    "spawn-fcgi: mode 0660, owned by the flowcgi user and the web server's group"
fi
# spawn-fcgi made the socket, then executes flowcgi in its place
is_flowcgi() { [ "$(readlink "/proc/$SPID/exe")" = "$(readlink -f "$SPAWN_BIN")" ]; }
wait_until 10 is_flowcgi
ok $? "spawn-fcgi -n: the process is flowcgi itself"
is "$(readlink "/proc/$SPID/fd/0" | cut -d: -f1)" socket \
    "spawn-fcgi: its standard input is the socket"
[ -z "$AP_USER" ] || is "$(stat -c %U "/proc/$SPID")" "$AP_USER" \
    "spawn-fcgi: flowcgi runs as the unprivileged user"
# (it says so once it has opened its store: slower than its exec)
wait_until 20 grep -q 'accepting on the socket passed on standard input' \
    "$T_DIR/spawn.log"
ok $? "spawn-fcgi: flowcgi says it accepts on standard input"

sed "s|server unix:/run/flowcgi/flowcgi.sock;|server unix:$SOCK;|" \
    "$NC/flowcgi-upstream-unix.conf" >"$NG/flowcgi-upstream-unix.conf"
cp "$NC/flowcgi-prefix.conf" "$NG/flowcgi-prefix.conf"
NG_PORT=$(free_port)
cat >"$NG/existing-site.conf" <<EOF
server {
	listen 127.0.0.1:$NG_PORT;
	location / { return 200 "the existing site"; }
	include flowcgi-prefix.conf;
}
EOF
grep -q "unix:$SOCK;" "$NG/flowcgi-upstream-unix.conf"
ok $? "prefix: the contrib upstream with the socket filled in"
must start_contrib_nginx flowcgi-upstream-unix.conf existing-site.conf
TOKEN=$(head -n1 "$SDATA/admin_token")
TOKEN=none req GET /flow/healthz
is "$STATUS $(jqr .status)" "200 ok" "prefix: /flow/healthz over the unix socket"
req GET /
is "$BODY" "the existing site" "prefix: the rest of the site is untouched"
crud_checks prefix /flow
admin_check prefix /flow
is "$(redirect_of /flow)" "301 $BASE/flow/" "prefix: /flow redirects to /flow/"
is "$(redirect_of /flow/)" "302 $BASE/flow/admin/" \
    "prefix: /flow/ redirects to the admin page"
import_slow /flow
stream_gap "$BASE/flow/v1/workflows/run" "$SLOW_KEY" 2
echo "# prefix: first event after $FIRST_MS ms, $GAP_MS ms before the last"
[ "$GAP_MS" -ge 1500 ]
ok $? "prefix: the first event came ${GAP_MS} ms before the run ended"
is "$STREAM_DONE" yes "prefix: the streamed run finished with its outputs"
upload_check prefix /flow "$SLOW_APP" "$SLOW_KEY"
stop_nginx
if [ -n "$AP_USER" ] && [ "$AP_USER" != "$NGU" ]; then
	# flowcgi's own user may open the socket (its owner), but is not
	# nginx's: closed by flowcgi
	install -m 0755 "$TOP/tests/tools/fcgi_probe.py" "$T_DIR/bin/"
	setpriv --reuid="$AP_USER" --regid="$AP_GROUP" --clear-groups \
	    /usr/bin/python3 "$T_DIR/bin/fcgi_probe.py" --unix "$SOCK" \
	    >"$T_DIR/probe.json" 2>"$T_DIR/probe.err"
	is "$(jq -r .result "$T_DIR/probe.json")" closed \
	    "spawn-fcgi: a peer that is not nginx's user is closed (server.allowed_users)"
	grep -q "refused a connection from uid $(id -u "$AP_USER")" "$T_DIR/spawn.log"
	ok $? "spawn-fcgi: ... and logged"
else
	skip "a second user to connect as (needs root)"
fi

# at once, not after server.shutdown_grace (600 s in spawn.yml): the
# state waited for is the exit; how fast is make bench's
t0=$(date +%s%N)
kill -TERM "$SPID"
wait_until 120 exited "$SPID"
ok $? "spawn-fcgi: SIGTERM on an inherited socket exits without waiting for server.shutdown_grace"
kill -KILL "$SPID" 2>/dev/null
wait "$SPID"; rc=$?
echo "# spawn-fcgi: exited in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
is "$rc" 0 "spawn-fcgi: SIGTERM, exit 0"
