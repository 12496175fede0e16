# t_concurrency.sh — runs never starve the server (docs/architecture.md),
# through real nginx: 200 simultaneous streaming chats on one process with
# default settings while /healthz and the console answer; idle, slow and
# broken FastCGI connections that hold no thread and are closed at
# server.read_timeout; app.max_active_requests across two processes and
# server.max_runs with 429 / 503 and Retry-After; clients that go away
# (the run finishes, or stops with run.stop_on_disconnect); SIGTERM that
# stops runs past the grace. Outcomes are asserted, timings only logged.
. "$(dirname "$0")/lib.sh"

J='Content-Type: application/json'
A=/console/api/apps
TOOLS=$TOP/tests/tools
ANSWER=$(printf 'w%d ' $(seq 30))
# 30 chunks, 0.1 s apart: each answer takes 3 s.
SCRIPT=$(jq -cn --arg a "$ANSWER" \
    '[{chunks: ($a | split(" ") | map(select(. != "")) | map(. + " ")),
       delay: 0.1, repeat: true}]')

# run_status <app> <run id>: the stored status of a run, via the console.
run_status() {
	curl -s -H "Authorization: Bearer $TOKEN" \
	    "$BASE$A/$1/workflow-runs/$2" | jq -r .status
}

# wait_status <app> <run id> <status>: polls up to 15 s.
wait_status() {
	local i=0 s
	while :; do
		s=$(run_status "$1" "$2")
		[ "$s" = "$3" ] && break
		i=$((i + 1)); [ $i -gt 150 ] && break; sleep 0.1
	done
	echo "$s"
}

stream() {	# stream <key> <user> <out file> [curl args]: in the background
	local k=$1 u=$2 f=$3
	shift 3
	curl -sS -N -H "Authorization: Bearer $k" -H "$J" "$@" \
	    -d "{\"inputs\":{},\"query\":\"hi\",\"user\":\"$u\",\"response_mode\":\"streaming\"}" \
	    "$BASE/v1/chat-messages" >"$f" 2>/dev/null &
}

start_fake llm LLM || exit 1
llm_script "$SCRIPT"

# ====== 200 simultaneous streams, default settings ======

FLOWCGI_LLM_BASE_URL=$LLM/v1 start_front || exit 1
import_app "$TOP/tests/e2e/apps/chat_stream.yml"
CHAT=$APP
python3 "$TOOLS/stream_load.py" --base "$BASE" --key "$KEY" --n 200 \
    --expect "$ANSWER" --token "$TOKEN" --probes 10 --verify \
    >"$T_DIR/load.json"
L=$(cat "$T_DIR/load.json")
echo "# 200 streams: $(jq -c '{started, completed, seconds, errors}' <<<"$L")"
echo "# /healthz during the load, ms: $(jq -c .healthz_ms <<<"$L")"
echo "# GET /console/api/apps during the load, ms: $(jq -c .console_ms <<<"$L")"
is "$(jq -r .started <<<"$L")" 200 "200 streams were going at once"
is "$(jq -r .completed <<<"$L")" 200 "all 200 ended with message_end"
is "$(jq -r .answers_ok <<<"$L")" 200 "every streamed answer is whole"
is "$(jq -r .stored_ok <<<"$L")" 200 "every stored message is complete"
is "$(jq -r '[.probe_status[] | select(. == 200)] | length' <<<"$L")" 20 \
    "/healthz and the console answered 200 during the load"
is "$(curl -s "$LLM/_streams" | jq -r .completed)" 200 \
    "the model sent 200 whole answers"

# ====== Idle, slow and broken connections ======

stop_nginx
kill "$FC_PID"; wait "$FC_PID" 2>/dev/null
FLOWCGI_SERVER_READ_TIMEOUT=2 FLOWCGI_SERVER_THREAD_IDLE=1 \
    FLOWCGI_LLM_BASE_URL=$LLM/v1 start_flowcgi idle
start_nginx "127.0.0.1:$FC_PORT"
rm -f "$T_DIR/ready"
python3 "$TOOLS/idle_conns.py" --port "$FC_PORT" --n 500 --ready "$T_DIR/ready" \
    --wait-close 20 >"$T_DIR/idle.json" &
IDLE=$!
i=0; while [ ! -e "$T_DIR/ready" ]; do i=$((i + 1)); [ $i -gt 400 ] && break; sleep 0.05; done
ok "$([ -e "$T_DIR/ready" ] && echo 0 || echo 1)" "500 idle FastCGI connections are open"
t0=$(date +%s%N)
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$BASE/healthz")
echo "# /healthz with 500 idle connections: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
is "$code" 200 "/healthz answers through nginx while they are held"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
    -H "Authorization: Bearer $TOKEN" "$BASE$A")
is "$code" 200 "... and the console"
IDLE_THREADS=$(awk '/^Threads:/ {print $2}' "/proc/$FC_PID/status")
echo "# threads with 500 idle connections: $IDLE_THREADS"
ok "$([ "$IDLE_THREADS" -lt 100 ] && echo 0 || echo 1)" \
    "idle connections hold no thread ($IDLE_THREADS threads)"
wait $IDLE
is "$(jq -r '.closed' "$T_DIR/idle.json")" 500 \
    "all 500 are closed after server.read_timeout"
threads() { awk '/^Threads:/ {print $2}' "/proc/$FC_PID/status"; }
for kind in partial garbage halfclose; do
	python3 "$TOOLS/idle_conns.py" --port "$FC_PORT" --n 20 --kind $kind \
	    --wait-close 15 >"$T_DIR/$kind.json" &
	if [ $kind = partial ]; then	# up to 5 s on a busy machine
		i=0
		while grown=$(threads); [ "$grown" -le 20 ] && [ $i -lt 50 ]
		do
			i=$((i + 1)); sleep 0.1
		done
	fi
	wait $!
	is "$(jq -r .closed "$T_DIR/$kind.json")" 20 "$kind requests: each closed"
done
# Each half-sent request held a thread of its own while it was read; the
# spare ones end after server.thread_idle (1 s here), down to workers (4).
ok "$([ "$grown" -gt 20 ] && echo 0 || echo 1)" \
    "threads grew on demand for 20 slow requests ($grown threads)"
i=0; while [ "$(threads)" -gt "$IDLE_THREADS" ]; do i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.1; done
# (at most as many as then: a request's spare thread may have been
# ending when they were counted)
now=$(threads)
ok "$([ "$now" -le "$IDLE_THREADS" ] && echo 0 || echo 1)" \
    "spare threads end when idle ($now threads, $IDLE_THREADS before)"
is "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/healthz")" 200 \
    "nothing else was affected"
grep -q 'closed: no request within server.read_timeout' "$T_DIR/idle.log"
ok $? "the log says why an idle connection was closed"
grep -q 'closed: no complete request within server.read_timeout' "$T_DIR/idle.log"
ok $? "... and why a half-sent request was"
grep -q 'closed: no FastCGI request' "$T_DIR/idle.log"
ok $? "... and why garbage was"
n=$(grep -c 'closed:' "$T_DIR/idle.log")
ok "$([ "$n" -le 600 ] && echo 0 || echo 1)" \
    "one line per connection at most ($n lines for 560)"
stop_nginx
kill "$FC_PID"; wait "$FC_PID" 2>/dev/null

# A client that never reads a 32 MB download is dropped after
# server.write_timeout; the server serves others meanwhile.
FLOWCGI_SERVER_WRITE_TIMEOUT=2 FLOWCGI_ASSETS_MAX_FILE_SIZE=64m \
    FLOWCGI_ASSETS_MAX_APP_SIZE=256m start_flowcgi noread
start_nginx "127.0.0.1:$FC_PORT"
head -c 33554432 /dev/zero >"$T_DIR/big.bin"
req POST "$A/$CHAT/assets/files?name=big.bin" \
    -H 'Content-Type: application/octet-stream' --data-binary @"$T_DIR/big.bin"
BIG=$(jqr .id)
is "$STATUS" 201 "a 32 MB file to download"
python3 "$TOOLS/fcgi_noread.py" --port "$FC_PORT" --token "$TOKEN" \
    --uri "$A/$CHAT/assets/files/$BIG/download" --hold 8 >/dev/null &
NR=$!
# the state itself: flowcgi has written to the client, which reads none
# of it (bytes queued on the client's socket, connected to flowcgi)
unread() {
	ss -Htn state established "( dport = :$FC_PORT )" |
	    awk '$1 > 0 { f = 1 } END { exit !f }'
}
wait_until 10 unread
ok $? "the download is under way to a client that does not read"
is "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$BASE/healthz")" 200 \
    "others are served while a client does not read"
i=0; while ! grep -q 'closed: client stopped reading for server.write_timeout' "$T_DIR/noread.log"; do
	i=$((i + 1)); [ $i -gt 150 ] && break; sleep 0.1; done
grep -q 'closed: client stopped reading for server.write_timeout' "$T_DIR/noread.log"
ok $? "the client that never reads is dropped, and the log says why"
wait $NR

stop_nginx
kill "$FC_PID"; wait "$FC_PID" 2>/dev/null

# ====== app.max_active_requests across two processes, server.max_runs ======

is "$(curl -s -o /dev/null -w '%{http_code}' "$LLM/_streams")" 200 \
    "the fake model is still up"

export FLOWCGI_APP_MAX_ACTIVE_REQUESTS=2
FLOWCGI_LLM_BASE_URL=$LLM/v1 start_flowcgi lim1
P1=$FC_PORT PID1=$FC_PID
FLOWCGI_LLM_BASE_URL=$LLM/v1 start_flowcgi lim2
P2=$FC_PORT PID2=$FC_PID
unset FLOWCGI_APP_MAX_ACTIVE_REQUESTS
# nginx in front of the second process, in a folder of its own
SAVE_T=$T_DIR
T_DIR=$SAVE_T/ng2; mkdir -p "$T_DIR"
start_nginx "127.0.0.1:$P2"
BASE2=$BASE NGINX2=$NGINX_PID
T_DIR=$SAVE_T
FLOWCGI_PIDS="$FLOWCGI_PIDS $NGINX2"
start_nginx "127.0.0.1:$P1"
stream "$KEY" a1 "$T_DIR/s1.txt"; S1=$!
stream "$KEY" a2 "$T_DIR/s2.txt"; S2=$!
sse_first "$T_DIR/s1.txt" .workflow_run_id >/dev/null
sse_first "$T_DIR/s2.txt" .workflow_run_id >/dev/null
svc "$KEY" POST /v1/chat-messages -H "$J" \
    -d '{"inputs":{},"query":"hi","user":"a3","response_mode":"streaming"}'
is "$STATUS $(jqr .code)" "429 too_many_requests" \
    "the third simultaneous run of the app is refused at once"
is "$(grep -i '^retry-after:' <<<"$HDRS" | tr -d ' ' | cut -d: -f2)" 1 "... with Retry-After"
BASE=$BASE2 svc "$KEY" POST /v1/chat-messages -H "$J" \
    -d '{"inputs":{},"query":"hi","user":"a3","response_mode":"blocking"}'
is "$STATUS $(jqr .code)" "429 too_many_requests" \
    "... by the other process on the same data directory too"
wait $S1
svc "$KEY" POST /v1/chat-messages -H "$J" \
    -d '{"inputs":{},"query":"hi","user":"a4","response_mode":"blocking"}'
is "$STATUS $(jqr .answer)" "200 $ANSWER" "once one ended, a new run is accepted"
wait $S2
is "$(grep -c message_end "$T_DIR/s1.txt" "$T_DIR/s2.txt" | cut -d: -f2 | tr '\n' ' ')" \
    "1 1 " "the two admitted streams ran to their end"
kill -9 "$PID1"; wait "$PID1" 2>/dev/null
BASE=$BASE2 svc "$KEY" POST /v1/chat-messages -H "$J" \
    -d '{"inputs":{},"query":"hi","user":"a5","response_mode":"blocking"}'
is "$STATUS" 200 "a process killed with -9 leaves no slot taken"
stop_nginx
kill "$NGINX2" "$PID2" 2>/dev/null
wait "$NGINX2" "$PID2" 2>/dev/null

FLOWCGI_SERVER_MAX_RUNS=1 FLOWCGI_LLM_BASE_URL=$LLM/v1 start_flowcgi max
start_nginx "127.0.0.1:$FC_PORT"
stream "$KEY" m1 "$T_DIR/m1.txt"; S1=$!
sse_first "$T_DIR/m1.txt" .workflow_run_id >/dev/null
svc "$KEY" POST /v1/chat-messages -H "$J" \
    -d '{"inputs":{},"query":"hi","user":"m2","response_mode":"blocking"}'
is "$STATUS $(jqr .code)" "503 server_busy" "over server.max_runs: 503 at once"
is "$(grep -i '^retry-after:' <<<"$HDRS" | tr -d ' ' | cut -d: -f2)" 1 "... with Retry-After"
svc "$KEY" GET /v1/info
is "$STATUS" 200 "the service API's other endpoints still answer"
wait $S1
stop_nginx
kill "$FC_PID"; wait "$FC_PID" 2>/dev/null

# ====== Clients that go away ======

FLOWCGI_LLM_BASE_URL=$LLM/v1 start_flowcgi gone
start_nginx "127.0.0.1:$FC_PORT"
curl -s "$LLM/_streams" >"$T_DIR/before.json"
stream "$KEY" g1 "$T_DIR/g1.txt" --max-time 1
G=$!
RUN=$(sse_first "$T_DIR/g1.txt" .workflow_run_id)
wait $G
is "$(wait_status "$CHAT" "$RUN" succeeded)" succeeded \
    "a client that left mid-stream: its run still succeeds"
svc "$KEY" GET "/v1/conversations?user=g1"
CONV=$(jqr '.data[0].id')
svc "$KEY" GET "/v1/messages?conversation_id=$CONV&user=g1"
is "$(jqr '.data[0].answer')" "$ANSWER" "... and its answer is stored whole"
is "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/healthz")" 200 \
    "the server keeps serving"
stop_nginx
kill "$FC_PID"; wait "$FC_PID" 2>/dev/null

FLOWCGI_RUN_STOP_ON_DISCONNECT=true FLOWCGI_LLM_BASE_URL=$LLM/v1 \
    start_flowcgi stopgone
start_nginx "127.0.0.1:$FC_PORT"
c0=$(curl -s "$LLM/_streams" | jq -r .cancelled)
stream "$KEY" g2 "$T_DIR/g2.txt" --max-time 1
G=$!
RUN=$(sse_first "$T_DIR/g2.txt" .workflow_run_id)
wait $G
is "$(wait_status "$CHAT" "$RUN" stopped)" stopped \
    "with run.stop_on_disconnect the run is stopped"
i=0; while [ "$(curl -s "$LLM/_streams" | jq -r .cancelled)" = "$c0" ]; do
	i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.1; done
is "$(curl -s "$LLM/_streams" | jq -r .cancelled)" "$((c0 + 1))" \
    "... and the model sees its request cancelled"
# Blocking: the hang-up itself is noticed (nothing is written until the end).
curl -s -o /dev/null --max-time 1 -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"hi","user":"g3","response_mode":"blocking"}' \
    "$BASE/v1/chat-messages"
RUN=$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE$A/$CHAT/workflow-runs?limit=1" |
    jq -r '.data[0].id')
is "$(wait_status "$CHAT" "$RUN" stopped)" stopped \
    "a blocking run whose client hung up is stopped too"
stop_nginx
kill "$FC_PID"; wait "$FC_PID" 2>/dev/null

# ====== SIGTERM: runs past the grace are stopped, exit 0 ======

FLOWCGI_SERVER_SHUTDOWN_GRACE=1 FLOWCGI_LLM_BASE_URL=$LLM/v1 start_flowcgi term
start_nginx "127.0.0.1:$FC_PORT"
stream "$KEY" t1 "$T_DIR/t1.txt"
T1=$!
RUN=$(sse_first "$T_DIR/t1.txt" .workflow_run_id)
kill -TERM "$FC_PID"
wait "$FC_PID"
is "$?" 0 "SIGTERM: exit 0 after stopping the run past the grace"
wait $T1
is "$(sed -n 's/^data: //p' "$T_DIR/t1.txt" | jq -r 'select(.event=="workflow_finished") | .data.status')" \
    stopped "the client saw the run end as stopped"
stop_nginx
FLOWCGI_LLM_BASE_URL=$LLM/v1 start_flowcgi after
start_nginx "127.0.0.1:$FC_PORT"
is "$(run_status "$CHAT" "$RUN")" stopped "its record says stopped"
