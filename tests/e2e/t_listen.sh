#!/bin/bash
# t_listen.sh — who may talk to flowcgi's FastCGI socket (issue
# "Hardening"; docs/operations.md "The FastCGI socket"):
#   1. a TCP listener serves only server.allowed_clients: nginx bound to
#      127.0.0.2 is served, a direct client from 127.0.0.1 that claims
#      REMOTE_ADDR 10.9.9.9 to read /metrics is closed before a byte is
#      read, refusals are logged one line a second at most;
#   2. a unix socket, mode 0660 in the web server's group, served through
#      nginx; a stale socket left by a dead process is replaced, a live
#      one or a file that is no socket is left alone;
#   3. server.allowed_users on a unix socket: another user is closed
#      (SO_PEERCRED), without the setting the socket's mode decides;
#   4. at server.max_connections, 1,100 idle connections do not keep
#      nginx's request waiting: the oldest idle ones are closed.
. "$(dirname "$0")/lib.sh"

PROBE=$T_DIR/fcgi_probe.py
cp "$TOP/tests/tools/fcgi_probe.py" "$PROBE"	# readable by nobody too
chmod 755 "$T_DIR"
MTOKEN=metrics-secret-$$

# probe <args...>: tests/tools/fcgi_probe.py; sets PR (its JSON line).
probe() { PR=$(python3 "$PROBE" "$@"); }
prj() { printf '%s' "$PR" | jq -r "$1"; }

# ====== 1. TCP: server.allowed_clients ======

FLOWCGI_SERVER_ALLOWED_CLIENTS=127.0.0.2 FLOWCGI_METRICS_ENABLED=true \
    FLOWCGI_METRICS_TOKEN=$MTOKEN FLOWCGI_METRICS_ALLOW=10.0.0.0/8 \
    start_flowcgi tcp || exit 1
TCP_PORT=$FC_PORT
probe --port "$TCP_PORT" --bind 127.0.0.2
is "$(prj .result) $(prj .status)" "answered 200" \
    "tcp: a client from 127.0.0.2 (in allowed_clients) is served"
probe --port "$TCP_PORT" --uri /metrics --param REMOTE_ADDR=10.9.9.9 \
    --param "HTTP_AUTHORIZATION=Bearer $MTOKEN"
is "$(prj .result)" closed \
    "tcp: a direct client from 127.0.0.1 claiming REMOTE_ADDR 10.9.9.9 gets no /metrics"
probe --port "$TCP_PORT" --silent --timeout 20
echo "# a refused client that sends nothing was closed after $(prj .ms) ms"
is "$(prj .result)" closed "tcp: ... and one that sends nothing is closed"
ok "$([ "$(prj .ms)" -lt 5000 ] && echo 0 || echo 1)" \
    "tcp: ... at once, not after server.read_timeout ($(prj .ms) ms)"
grep -q 'refused a connection from 127.0.0.1 (not in server.allowed_clients)' \
    "$T_DIR/tcp.log"
ok $? "tcp: the log names the address and the setting"

# nginx from 127.0.0.1 is refused too; bound to 127.0.0.2 it is served,
# and passes the real client's address, which metrics.allow then judges
start_nginx "127.0.0.1:$TCP_PORT" || exit 1
TOKEN=none req GET /healthz
is "$STATUS" 502 "tcp: nginx connecting from 127.0.0.1 is refused (502)"
stop_nginx
NGINX_LOCATION_EXTRA="fastcgi_bind 127.0.0.2;" start_nginx \
    "127.0.0.1:$TCP_PORT" || exit 1
TOKEN=none req GET /healthz
is "$STATUS $(jqr .status)" "200 ok" \
    "tcp: nginx bound to 127.0.0.2 is served (fastcgi_bind)"
TOKEN=$MTOKEN req GET /metrics
is "$STATUS" 403 \
    "tcp: /metrics through nginx sees the real client (not in metrics.allow)"
stop_nginx

# 300 refused connections in a burst: a few log lines, then a count
before=$(grep -c 'refused' "$T_DIR/tcp.log")
before_lines=$(wc -l <"$T_DIR/tcp.log")
python3 "$TOP/tests/tools/idle_conns.py" --port "$TCP_PORT" --n 300 \
    --wait-close 10 >"$T_DIR/refused.json"
is "$(jq -r .closed "$T_DIR/refused.json")" 300 \
    "tcp: 300 connections from 127.0.0.1 are each closed"
refusals_counted() {	# a line with a count, after the burst began
	tail -n +"$((before_lines + 1))" "$T_DIR/tcp.log" |
	    grep -q '[0-9] more connections refused'
}
wait_until 10 refusals_counted
ok $? "tcp: the refusals not logged one by one are counted in a line"
n=$(( $(grep -c 'refused' "$T_DIR/tcp.log") - before ))
echo "# $n log lines for 300 refused connections"
ok "$([ "$n" -ge 1 ] && [ "$n" -le 30 ] && echo 0 || echo 1)" \
    "tcp: refusals are logged at a bounded rate ($n lines for 300)"
# /metrics, asked from an allowed address for a client in metrics.allow
probe --port "$TCP_PORT" --bind 127.0.0.2 --uri /metrics \
    --param REMOTE_ADDR=10.1.1.1 --param "HTTP_AUTHORIZATION=Bearer $MTOKEN" \
    --body-file "$T_DIR/metrics.txt"
dropped=$(sed -n 's/^flowcgi_connections_dropped_total{.*reason="not_allowed".*} //p' \
    "$T_DIR/metrics.txt" | head -1)
echo "# flowcgi_connections_dropped_total{reason=\"not_allowed\"} $dropped"
ok "$([ "$(prj .status)" = 200 ] && [ "${dropped:-0}" -ge 300 ] && echo 0 || echo 1)" \
    "tcp: /metrics counts the refused connections (${dropped:-none})"
kill -TERM "$FC_PID"; wait "$FC_PID"

# an empty list would serve nobody on TCP: start-up says so
FLOWCGI_SERVER_ALLOWED_CLIENTS= FLOWCGI_SERVER_DATA_DIR=$T_DIR/data \
    timeout 10 "$FLOWCGI_BIN" serve --listen "127.0.0.1:$(free_port)" \
    >"$T_DIR/empty.log" 2>&1
rc=$?
said=1
grep -q 'server.allowed_clients is empty' "$T_DIR/empty.log" && said=0
ok "$([ "$rc" != 0 ] && [ "$said" = 0 ] && echo 0 || echo 1)" \
    "tcp: an empty server.allowed_clients stops start-up (exit $rc)"

# ====== 2. a unix socket in the web server's group ======

RUN=$T_DIR/run
SOCK=$RUN/flowcgi.sock
mkdir -p "$RUN"
chmod 755 "$RUN"
GROUP=$(id -gn nobody 2>/dev/null || echo nogroup)
getent group "$GROUP" >/dev/null || GROUP=$(id -gn)

# a socket left by a process that died: bound, never unlinked
python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()' "$SOCK"
ok "$([ -S "$SOCK" ] && echo 0 || echo 1)" "unix: a stale socket is there"
OWNER=
[ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && OWNER=nobody
FLOWCGI_SERVER_SOCKET_GROUP=$GROUP FLOWCGI_SERVER_SOCKET_OWNER=$OWNER \
    start_flowcgi_unix unix "$SOCK" || exit 1
grep -q "replacing the stale socket '$SOCK'" "$T_DIR/unix.log"
ok $? "unix: the stale socket was replaced (and the log says so)"
if [ "$(id -u)" = 0 ]; then
	is "$(stat -c '%a %U %G' "$SOCK")" "660 ${OWNER:-$(id -un)} $GROUP" \
	    "unix: mode 0660, socket_owner's, the web server's group (server.socket_group)"
else
	is "$(stat -c '%a' "$SOCK")" 660 "unix: mode 0660"
fi
start_nginx "unix:$SOCK" || exit 1
TOKEN=none req GET /healthz
is "$STATUS $(jqr .status)" "200 ok" "unix: nginx serves flowcgi on the socket"
TOKEN=$(admin_token)
req GET /console/api/apps
is "$STATUS" 200 "unix: the console answers through it"
inode=$(stat -c %i "$SOCK")

# a second server on the same path leaves the live one alone (one that
# started instead would be ended by timeout)
FLOWCGI_SERVER_DATA_DIR=$T_DIR/data2 timeout 10 "$FLOWCGI_BIN" serve \
    --listen "unix:$SOCK" >"$T_DIR/second.log" 2>&1
rc=$?
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" \
    "unix: a second server on a live socket does not start (exit $rc)"
grep -q 'another process accepts on it' "$T_DIR/second.log"
ok $? "unix: ... and says another process accepts on it"
is "$(stat -c %i "$SOCK" 2>/dev/null)" "$inode" "unix: the socket is the same one"
TOKEN=none req GET /healthz
is "$STATUS" 200 "unix: the first server still answers through nginx"
stop_nginx
kill -TERM "$FC_PID"; wait "$FC_PID"
ok "$([ ! -e "$SOCK" ] && echo 0 || echo 1)" \
    "unix: a server that stops removes its socket"

# a file that is no socket is never removed
printf 'keep me\n' >"$RUN/notasocket"
FLOWCGI_SERVER_DATA_DIR=$T_DIR/data2 timeout 10 "$FLOWCGI_BIN" serve \
    --listen "unix:$RUN/notasocket" >"$T_DIR/file.log" 2>&1
rc=$?
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" \
    "unix: a path holding a regular file: no start (exit $rc)"
is "$(cat "$RUN/notasocket" 2>/dev/null)" "keep me" "unix: ... and the file is untouched"
grep -q 'a file that is no socket is there' "$T_DIR/file.log"
ok $? "unix: ... and the log says why"

# ====== 3. server.allowed_users on a unix socket ======

if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1 ||
    [ ! -x /usr/bin/python3 ] || ! command -v setpriv >/dev/null; then
	skip "peer credentials: needs root, a nobody user, setpriv and /usr/bin/python3"
else
	# the system's python: a user's (pyenv) may be closed to nobody
	as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" \
	    --clear-groups "$@"; }
	SYSPY=/usr/bin/python3
	# mode 0666: the file lets anyone connect; the setting decides
	FLOWCGI_SERVER_SOCKET_MODE=0666 FLOWCGI_SERVER_ALLOWED_USERS=root \
	    start_flowcgi_unix creds "$SOCK" || exit 1
	PR=$(as_nobody "$SYSPY" "$PROBE" --unix "$SOCK")
	is "$(prj .result)" closed \
	    "creds: nobody (not in server.allowed_users) is closed"
	grep -q "refused a connection from uid $(id -u nobody) " "$T_DIR/creds.log"
	ok $? "creds: the log names the peer's uid"
	probe --unix "$SOCK"
	is "$(prj .result) $(prj .status)" "answered 200" \
	    "creds: root (in server.allowed_users) is served"
	start_nginx "unix:$SOCK" || exit 1
	TOKEN=none req GET /healthz
	is "$STATUS" 200 "creds: nginx's workers (root here) are served"
	stop_nginx
	kill -TERM "$FC_PID"; wait "$FC_PID"
	FLOWCGI_SERVER_SOCKET_MODE=0666 FLOWCGI_SERVER_ALLOWED_GROUPS=0 \
	    start_flowcgi_unix groups "$SOCK" || exit 1
	PR=$(as_nobody "$SYSPY" "$PROBE" --unix "$SOCK")
	is "$(prj .result)" closed \
	    "creds: nobody (primary group not in server.allowed_groups) is closed"
	kill -TERM "$FC_PID"; wait "$FC_PID"
	# no setting: whoever may open the socket is served
	FLOWCGI_SERVER_SOCKET_MODE=0666 start_flowcgi_unix open "$SOCK" ||
	    exit 1
	PR=$(as_nobody "$SYSPY" "$PROBE" --unix "$SOCK")
	is "$(prj .result) $(prj .status)" "answered 200" \
	    "creds: without the setting the socket's mode decides (0666: nobody is served)"
	kill -TERM "$FC_PID"; wait "$FC_PID"
	FLOWCGI_SERVER_SOCKET_MODE=0660 FLOWCGI_SERVER_SOCKET_GROUP=root \
	    start_flowcgi_unix closed "$SOCK" || exit 1
	PR=$(as_nobody "$SYSPY" "$PROBE" --unix "$SOCK")
	is "$(prj .result)" refused \
	    "creds: mode 0660 in a group nobody is not in: nobody cannot connect"
	kill -TERM "$FC_PID"; wait "$FC_PID"
fi

# ====== 4. 1,100 idle connections at server.max_connections (1024) ======

FLOWCGI_METRICS_ENABLED=true start_flowcgi full || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
TOKEN=none req GET /healthz
is "$STATUS" 200 "full: served before the flood"
rm -f "$T_DIR/ready"
python3 "$TOP/tests/tools/idle_conns.py" --port "$FC_PORT" --n 1100 \
    --ready "$T_DIR/ready" --wait-close 25 >"$T_DIR/idle.json" &
IDLE=$!
wait_until 60 test -e "$T_DIR/ready"
ok $? "full: 1,100 idle FastCGI connections are open"
t0=$(date +%s%N)
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 40 "$BASE/healthz")
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "# /healthz through nginx with 1,100 idle connections: $ms ms"
is "$code" 200 "full: nginx's request is served"
ok "$([ "$ms" -lt 5000 ] && echo 0 || echo 1)" \
    "full: ... without waiting for an idle one to time out ($ms ms < 5000)"
t0=$(date +%s%N)
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 40 \
    -H "Authorization: Bearer $(admin_token)" "$BASE/console/api/apps")
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "# the console through nginx, still flooded: $ms ms"
is "$code $([ "$ms" -lt 5000 ] && echo fast)" "200 fast" \
    "full: ... and so is the console ($ms ms)"
grep -q 'to make room (server.max_connections 1024)' "$T_DIR/full.log"
ok $? "full: the log says idle connections were closed to make room"
wait $IDLE
closed=$(jq -r .closed "$T_DIR/idle.json")
echo "# idle connections the server closed to make room: $closed"
ok "$([ "$closed" -ge 76 ] && echo 0 || echo 1)" \
    "full: the oldest idle ones were closed ($closed of 1,100)"
TOKEN=$(admin_token) req GET /metrics
dropped=$(printf '%s\n' "$BODY" |
    sed -n 's/^flowcgi_connections_dropped_total{.*reason="idle_for_room".*} //p' |
    head -1)
echo "# flowcgi_connections_dropped_total{reason=\"idle_for_room\"} $dropped"
ok "$([ "${dropped:-0}" -ge 76 ] && echo 0 || echo 1)" \
    "full: /metrics counts them (${dropped:-none})"
