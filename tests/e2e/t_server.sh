#!/bin/bash
# t_server.sh — the program around the API: command line (--help,
# --version, unknown commands, bad configuration naming file:line:key),
# the admin token, SIGTERM (prompt exit 0, and an in-flight request
# finished first), the unix-socket listen mode behind nginx, plain CGI,
# 500 when memory runs out, 507 when storage is full.
. "$(dirname "$0")/lib.sh"

# exited <pid>: the child is gone or a zombie (not reaped yet: kill -0
# still finds it)
exited() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	case ${s##*) } in Z*) return 0 ;; esac
	return 1
}

BIN=$FLOWCGI_BIN
export FLOWCGI_SERVER_DATA_DIR=$T_DIR/data
ASAN=0
grep -qa __asan_init "$BIN" && ASAN=1

# ---- command line ----
out=$("$BIN" --help </dev/null 2>&1); rc=$?
is "$rc" 0 "--help exits 0"
printf '%s' "$out" | grep -q '^usage: flowcgi'
ok $? "--help prints usage"
out=$("$BIN" --version </dev/null 2>&1); rc=$?
is "$rc" 0 "--version exits 0"
is "$out" "flowcgi $(cat "$TOP/VERSION")" "--version prints the version"
"$BIN" </dev/null >/dev/null 2>"$T_DIR/err"; rc=$?
is "$rc" 2 "no command exits 2"
grep -q usage "$T_DIR/err"
ok $? "no command prints usage on stderr"
"$BIN" frobnicate </dev/null >"$T_DIR/out" 2>"$T_DIR/err"; rc=$?
is "$rc" 2 "an unknown command exits 2"
grep -q "unknown command 'frobnicate'" "$T_DIR/err"
ok $? "... naming the command"
is "$(wc -c <"$T_DIR/out")" 0 "... with nothing on stdout"
"$BIN" serve --bogus </dev/null >/dev/null 2>&1; rc=$?
is "$rc" 2 "an unknown option exits 2"
"$BIN" token extra </dev/null >/dev/null 2>"$T_DIR/err"; rc=$?
is "$rc" 2 "an extra argument exits 2"
grep -q "unexpected argument 'extra'" "$T_DIR/err"
ok $? "... naming it"

# ---- bad configuration: exit 2, file:line:key ----
printf 'server:\n  workers: 8\n\nlimits:\n  max_json_depth: 0\n' >"$T_DIR/bad.yml"
"$BIN" serve -c "$T_DIR/bad.yml" </dev/null >/dev/null 2>"$T_DIR/err"; rc=$?
is "$rc" 2 "an impossible value in the config file exits 2"
grep -qF "$T_DIR/bad.yml:5: key 'limits.max_json_depth'" "$T_DIR/err"
ok $? "... naming file:line:key ($(head -c 200 "$T_DIR/err"))"
printf 'server:\n  workers: 8\n  lisen: "x"\n' >"$T_DIR/unknown.yml"
FLOWCGI_CONFIG=$T_DIR/unknown.yml "$BIN" serve </dev/null >/dev/null \
    2>"$T_DIR/err"; rc=$?
is "$rc" 2 "an unknown key (file from FLOWCGI_CONFIG) exits 2"
grep -qF "$T_DIR/unknown.yml:3: key 'server.lisen'" "$T_DIR/err"
ok $? "... naming file:line:key"
printf 'storage:\n  sync: sometimes\n' >"$T_DIR/type.yml"
"$BIN" token --config "$T_DIR/type.yml" </dev/null >/dev/null 2>"$T_DIR/err"
is "$?" 2 "a wrong type exits 2, for token too"
grep -qF "$T_DIR/type.yml:2: key 'storage.sync'" "$T_DIR/err"
ok $? "... naming file:line:key"
"$BIN" serve -c "$T_DIR/nonexistent.yml" </dev/null >/dev/null 2>"$T_DIR/err"
is "$?" 2 "a missing config file exits 2"
grep -qF "$T_DIR/nonexistent.yml" "$T_DIR/err"
ok $? "... naming the file"
FLOWCGI_SERVER_WORKERS=lots "$BIN" serve </dev/null >/dev/null 2>"$T_DIR/err"
is "$?" 2 "a bad environment value exits 2"
grep -q FLOWCGI_SERVER_WORKERS "$T_DIR/err"
ok $? "... naming the variable"
"$BIN" token -c "$TOP/conf/flowcgi.yml" </dev/null >/dev/null 2>"$T_DIR/err"
ok $? "the shipped conf/flowcgi.yml is accepted ($(head -c 200 "$T_DIR/err"))"

# ---- the admin token ----
TOKEN=$("$BIN" token </dev/null 2>"$T_DIR/err"); rc=$?
is "$rc" 0 "flowcgi token exits 0"
[[ "$TOKEN" =~ ^fca-[A-Za-z0-9_-]{40,}$ ]]
ok $? "the token looks like one ($TOKEN)"
is "$(stat -c %a "$T_DIR/data/admin_token")" 600 "the token file is mode 0600"
is "$(head -n1 "$T_DIR/data/admin_token")" "$TOKEN" "the file holds the token"
is "$("$BIN" token </dev/null)" "$TOKEN" "the token is stable"
is "$(stat -c %a "$T_DIR/data")" 700 "the data directory is mode 0700"
# server.shutdown_grace far beyond any wait below: an idle SIGTERM that
# waited for it would show, however loaded the machine
FLOWCGI_SERVER_SHUTDOWN_GRACE=600 start_flowcgi fc || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
req GET /console/api/apps
is "$STATUS" 200 "the server takes the token that flowcgi token printed"
is "$("$BIN" token </dev/null)" "$TOKEN" "... and token prints the same while it runs"
FLOWCGI_SERVER_DATA_DIR=$T_DIR/other "$BIN" token >"$T_DIR/other.tok" </dev/null
[ "$(cat "$T_DIR/other.tok")" != "$TOKEN" ]
ok $? "another data directory has another token"
TOKEN=$(cat "$T_DIR/other.tok") req GET /console/api/apps
is "$STATUS" 401 "... which this server refuses"

# ---- a kept connection after an answer that left the body unread ----
# nginx keeps its FastCGI connections (fastcgi_keep_conn) when it sent the
# whole body, which a small one fits in the socket's buffers: a refusal
# that comes before the body is read (an unsigned upload link) must not
# leave the rest of that body to be taken for the next request's records
# (flowcgi waited for a request that never came whole, nginx answered 502).
# 20 and 60 KB are more than libfcgi reads ahead and are drained; 3 MB
# nginx cannot send before the answer, and does not keep the connection.
n=0
for size in 20000 60000 3000000 20000 60000 3000000; do
	head -c $size /dev/zero | tr '\0' a >"$T_DIR/body"
	a=$(curl -s -o /dev/null -w '%{http_code}' -X PUT \
	    --data-binary "@$T_DIR/body" \
	    "$BASE/console/api/files/bundle-imports/0/upload")
	req GET /console/api/apps
	[ "$a" = 403 ] && [ "$STATUS" = 200 ] && n=$((n + 1))
done
is "$n" 6 "an unread body does not spoil the kept connection's next request"

# ---- SIGTERM: prompt exit 0 ----
# Idle, it exits at once rather than after server.shutdown_grace (600 s
# here): the state waited for is the exit; how fast is make bench's.
t0=$(date +%s%N)
kill -TERM "$FC_PID"
wait_until 120 exited "$FC_PID"
ok $? "SIGTERM: exits when idle, without waiting for server.shutdown_grace"
kill -KILL "$FC_PID" 2>/dev/null
wait "$FC_PID"; rc=$?
echo "# SIGTERM: exited in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
is "$rc" 0 "SIGTERM: exit status 0"
grep -q 'stopped' "$T_DIR/fc.log"
ok $? "SIGTERM: logs that it stopped"
! (exec 3<>"/dev/tcp/127.0.0.1/$FC_PORT") 2>/dev/null
ok $? "SIGTERM: the port is closed"

# ---- SIGTERM with a request in flight: it is finished, then exit 0 ----
# A FastCGI client in bash: the body is sent in two halves with the
# SIGTERM in between, so the request is surely in flight.
hex() { printf '\\x%02x' "$@"; }
fcgi_rec() {	# fcgi_rec <type> <content file>: one record to stdout
	local n
	n=$(wc -c <"$2")
	printf "$(hex 1 "$1" 0 1 $((n >> 8)) $((n & 255)) 0 0)"
	cat "$2"
}
fcgi_nv() {	# fcgi_nv <name> <value>: one name-value pair (short ones)
	printf "$(hex ${#1} "$(printf '%s' "$2" | wc -c)")%s%s" "$1" "$2"
}
start_flowcgi fc2 || exit 1
BODY1='{"name":"in flight","mo'
BODY2='de":"completion"}'
{
	fcgi_nv GATEWAY_INTERFACE CGI/1.1
	fcgi_nv REQUEST_METHOD POST
	fcgi_nv REQUEST_URI /console/api/apps
	fcgi_nv CONTENT_TYPE application/json
	fcgi_nv CONTENT_LENGTH $(( ${#BODY1} + ${#BODY2} ))
	fcgi_nv HTTP_AUTHORIZATION "Bearer $TOKEN"
	fcgi_nv HTTP_HOST example.org
} >"$T_DIR/params"
printf "$(hex 0 1 0 0 0 0 0 0)" >"$T_DIR/begin"
: >"$T_DIR/empty"
printf '%s' "$BODY1" >"$T_DIR/in1"
printf '%s' "$BODY2" >"$T_DIR/in2"
# sockets the server holds: one more once it accepted ours
socks() { find "/proc/$FC_PID/fd" -lname 'socket:*' 2>/dev/null | wc -l; }
held=$(socks)
exec 5<>"/dev/tcp/127.0.0.1/$FC_PORT"
{ fcgi_rec 1 "$T_DIR/begin"; fcgi_rec 4 "$T_DIR/params"
  fcgi_rec 4 "$T_DIR/empty"; fcgi_rec 5 "$T_DIR/in1"; } >&5
wait_until 10 eval '[ "$(socks)" -gt "$held" ]'
ok $? "SIGTERM in flight: the server accepted the connection"
kill -TERM "$FC_PID"
# it took the signal once it listens no more; it is still there after
closed() { ! (exec 3<>"/dev/tcp/127.0.0.1/$FC_PORT") 2>/dev/null; }
wait_until 10 closed
ok $? "SIGTERM in flight: no new connections are accepted"
kill -0 "$FC_PID" 2>/dev/null
ok $? "SIGTERM in flight: the server waits for the request"
{ fcgi_rec 5 "$T_DIR/in2"; fcgi_rec 5 "$T_DIR/empty"; } >&5
timeout 10 cat <&5 >"$T_DIR/fcgi.out"
exec 5<&-
grep -aq 'Status: 201' "$T_DIR/fcgi.out"
ok $? "SIGTERM in flight: the request is answered 201"
grep -aq '"name":"in flight"' "$T_DIR/fcgi.out"
ok $? "SIGTERM in flight: with the created app"
wait "$FC_PID"; rc=$?
is "$rc" 0 "SIGTERM in flight: then exit 0"

# ---- plain CGI ----
cgi() {	# cgi <method> <uri> [VAR=value...]: stdin is the body
	local m=$1 u=$2
	shift 2
	env GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD="$m" REQUEST_URI="$u" \
	    QUERY_STRING="${u#*\?}" SERVER_PORT=80 HTTP_HOST=cgi.example \
	    "$@" "$BIN" >"$T_DIR/cgi.out" 2>"$T_DIR/cgi.err"
}
cgi_body() { sed '1,/^\r$/d' "$T_DIR/cgi.out"; }
cgi GET /healthz </dev/null; rc=$?
is "$rc" 0 "CGI: exits 0"
is "$(head -n1 "$T_DIR/cgi.out")" $'Status: 200 OK\r' "CGI: a Status line first"
grep -q $'^Content-Type: application/json\r$' "$T_DIR/cgi.out"
ok $? "CGI: a Content-Type header"
grep -q $'^\r$' "$T_DIR/cgi.out"
ok $? "CGI: a blank line ends the headers"
is "$(cgi_body | jq -r .status)" ok "CGI: the JSON body"
cgi GET /console/api/apps </dev/null QUERY_STRING=
is "$(head -n1 "$T_DIR/cgi.out")" $'Status: 401 Unauthorized\r' "CGI: 401 without the token"
printf '{"name":"by CGI","mode":"chat"}' >"$T_DIR/cgi.in"
cgi POST /cgi-bin/flowcgi/console/api/apps \
    CONTENT_TYPE=application/json CONTENT_LENGTH=$(wc -c <"$T_DIR/cgi.in") \
    HTTP_AUTHORIZATION="Bearer $TOKEN" <"$T_DIR/cgi.in"
is "$(head -n1 "$T_DIR/cgi.out")" $'Status: 201 Created\r' "CGI: POST creates an app"
is "$(cgi_body | jq -r .api_base_url)" "/cgi-bin/flowcgi/v1" \
    "CGI: the prefix comes from the request URI"
CGI_ID=$(cgi_body | jq -r .id)
cgi GET "/console/api/apps/$CGI_ID" HTTP_AUTHORIZATION="Bearer $TOKEN" \
    QUERY_STRING= SERVER_PORT=8080 </dev/null
is "$(cgi_body | jq -r .name)" "by CGI" "CGI: GET reads it back"
is "$(cgi_body | jq -r .api_base_url)" "/v1" \
    "CGI: api_base_url takes nothing from the Host header or SERVER_PORT"
cgi GET "/console/api/apps?name=in%20flight" HTTP_AUTHORIZATION="Bearer $TOKEN" </dev/null
is "$(cgi_body | jq -r '.data[0].mode')" completion \
    "the app created while stopping was stored"
printf '{"name":"short"' >"$T_DIR/cgi.in"
cgi POST /console/api/apps CONTENT_TYPE=application/json CONTENT_LENGTH=100 \
    HTTP_AUTHORIZATION="Bearer $TOKEN" <"$T_DIR/cgi.in"
is "$(head -n1 "$T_DIR/cgi.out")" $'Status: 400 Bad Request\r' "CGI: a body shorter than CONTENT_LENGTH is 400"
cgi POST /console/api/apps CONTENT_TYPE=application/json CONTENT_LENGTH=-5 \
    HTTP_AUTHORIZATION="Bearer $TOKEN" </dev/null
is "$(head -n1 "$T_DIR/cgi.out")" $'Status: 400 Bad Request\r' "CGI: a negative CONTENT_LENGTH is 400"
cgi POST /console/api/apps CONTENT_TYPE=application/json \
    CONTENT_LENGTH=99999999999999999999 HTTP_AUTHORIZATION="Bearer $TOKEN" </dev/null
is "$(head -n1 "$T_DIR/cgi.out")" $'Status: 400 Bad Request\r' "CGI: an overflowing CONTENT_LENGTH is 400"

# ---- unix socket behind nginx ----
kill "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null
SOCK=$T_DIR/fc.sock
"$BIN" serve --listen "unix:$SOCK" >>"$T_DIR/unix.log" 2>&1 </dev/null &
UPID=$!
FLOWCGI_PIDS="$FLOWCGI_PIDS $UPID"
wait_until 10 test -S "$SOCK"
ok $? "unix: the socket exists"
is "$(stat -c %a "$SOCK")" 660 "unix: owner and group may connect (0660)"
start_nginx "unix:$SOCK" || exit 1
req GET /healthz
is "$STATUS" 200 "unix: /healthz through nginx"
req POST /flow/console/api/apps -H 'Content-Type: application/json' \
    --data-binary '{"name":"over a unix socket","mode":"workflow"}'
is "$STATUS" 201 "unix: create under /flow"
req GET /console/api/apps?name=unix
is "$(jqr .total)" 1 "unix: listed"
kill -TERM "$UPID"; wait "$UPID"; rc=$?
is "$rc" 0 "unix: SIGTERM exits 0"
[ ! -e "$SOCK" ]
ok $? "unix: the socket file is removed on exit"

# ---- 507 when storage is full (LMDB's map) ----
kill "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null
if [ "${FLOWCGI_STORAGE_BACKEND:-lmdb}" = postgres ]; then
	for i in 1 2 3 4 5; do
		skip "storage.max_map_size is LMDB's: the store is PostgreSQL"
	done
else
FC_DATA=$T_DIR/full FLOWCGI_STORAGE_MAP_SIZE=1m FLOWCGI_STORAGE_MAX_MAP_SIZE=1m \
    FLOWCGI_STORAGE_SYNC=false start_flowcgi full || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
# The command line opens the store too: with the server's settings, as from
# one configuration file (a process with a larger map makes the file larger,
# and no process ever cuts the file under another's map).
TOKEN=$(FC_DATA=$T_DIR/full FLOWCGI_STORAGE_MAP_SIZE=1m \
    FLOWCGI_STORAGE_MAX_MAP_SIZE=1m admin_token)
PAD=$(for i in $(seq 400); do printf '💾'; done)
ICON=$(for i in $(seq 1024); do printf '💾'; done)
made=0
for i in $(seq 1 400); do
	req POST /console/api/apps -H 'Content-Type: application/json' \
	    --data-binary "{\"name\":\"fill $i\",\"mode\":\"workflow\",\"description\":\"$PAD\",\"icon\":\"$ICON\"}"
	[ "$STATUS" = 201 ] || break
	made=$((made + 1))
done
echo "# $made apps fit in 1 MiB"
is "$STATUS" 507 "a full map answers 507"
is "$(jqr '[.code,.status]|map(tostring)|join(",")')" "insufficient_storage,507" \
    "507 is a JSON error"
jqr .message | grep -q max_map_size
ok $? "507 names storage.max_map_size"
req GET "/console/api/apps?limit=1"
is "$(jqr .total)" "$made" "reads still work when full; every 201 is there"
req GET /healthz
is "$STATUS" 200 "healthy when full"
fi

# ---- 500 when memory runs out (not under ASan: it needs the address space) ----
kill "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null
if [ "$ASAN" = 1 ]; then
	echo "# skipping the out-of-memory test under AddressSanitizer"
else
	FC_DATA=$T_DIR/oom FLOWCGI_SERVER_WORKERS=2 FLOWCGI_STORAGE_MAP_SIZE=1m \
	    start_flowcgi oomprobe || exit 1
	vm=$(awk '/^VmSize/ {print $2}' "/proc/$FC_PID/status")
	kill -TERM "$FC_PID"; wait "$FC_PID"
	(
		ulimit -v $((vm + 24000))
		FC_DATA=$T_DIR/oom FLOWCGI_SERVER_WORKERS=2 \
		    FLOWCGI_STORAGE_MAP_SIZE=1m FLOWCGI_LIMITS_MAX_JSON_BODY=1g \
		    start_flowcgi oom && echo "$FC_PID $FC_PORT" >"$T_DIR/oom.pid"
		disown -a
	)
	read -r OPID OPORT <"$T_DIR/oom.pid"
	FLOWCGI_PIDS="$FLOWCGI_PIDS $OPID"
	start_nginx "127.0.0.1:$OPORT" || exit 1
	TOKEN=$(FC_DATA=$T_DIR/oom admin_token)
	{ printf '{"name":"huge","mode":"chat","pad":"'
	  head -c 60000000 /dev/zero | tr '\0' a; printf '"}'; } >"$T_DIR/huge"
	req POST /console/api/apps -H 'Content-Type: application/json' \
	    --data-binary "@$T_DIR/huge"
	is "$STATUS" 500 "out of memory for a body: 500"
	is "$(jqr '[.code,.status]|map(tostring)|join(",")')" \
	    "internal_server_error,500" "... as a JSON error"
	kill -0 "$OPID" 2>/dev/null
	ok $? "... and the server is still running"
	req POST /console/api/apps -H 'Content-Type: application/json' \
	    --data-binary '{"name":"small","mode":"chat"}'
	is "$STATUS" 201 "... and still creates apps"
	kill -TERM "$OPID"
fi
