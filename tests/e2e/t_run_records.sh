#!/bin/bash
# t_run_records.sh — what a run stores, through two flowcgi processes on one
# data directory, each behind its own nginx: the node executions the
# console answers are, key for key and in order, the node_finished events
# the stream carried (plus node_execution_id); the run record matches
# workflow_finished; a short run costs one write transaction (LMDB's
# transaction id, read with mdb_stat); a long run is visible and
# stoppable from the other process once run.publish_after has passed, and
# from its own process at once.
. "$(dirname "$0")/lib.sh"

command -v mdb_stat >/dev/null || { echo "# mdb_stat (lmdb-utils) is missing"; exit 1; }
J='Content-Type: application/json'
ROOT=$T_DIR
export FC_DATA=$ROOT/data
start_flowcgi fcA || exit 1
A_PORT=$FC_PORT
T_DIR=$ROOT/a; mkdir -p "$T_DIR"; start_nginx "127.0.0.1:$A_PORT" || exit 1
A_BASE=$BASE
FLOWCGI_PIDS="$FLOWCGI_PIDS $NGINX_PID"	# finish stops the last nginx only
start_flowcgi fcB || exit 1
B_PORT=$FC_PORT
T_DIR=$ROOT/b; mkdir -p "$T_DIR"; start_nginx "127.0.0.1:$B_PORT" || exit 1
B_BASE=$BASE
T_DIR=$ROOT
BASE=$A_BASE
TOKEN=$(admin_token)

import_app "$TOP/tests/bench/ten_nodes.yml"
TEN=$APP TEN_KEY=$KEY
A=/console/api/apps

# ====== The trace is what the stream said ======

curl -sS -N -H "Authorization: Bearer $TEN_KEY" -H "$J" \
    -d '{"inputs":{"q":"hi"},"user":"u1","response_mode":"streaming"}' \
    "$A_BASE/v1/workflows/run" | sed -n 's/^data: //p' >"$T_DIR/ten.sse"
RUN=$(jq -r 'select(.event == "workflow_finished") | .workflow_run_id' "$T_DIR/ten.sse")
ok "$([ -n "$RUN" ] && echo 0 || echo 1)" "the streamed run finished"
jq -c 'select(.event == "node_finished") | .data' "$T_DIR/ten.sse" >"$T_DIR/events"
req GET "$A/$TEN/workflow-runs/$RUN/node-executions"
is "$STATUS" 200 "node executions answered"
printf '%s' "$BODY" | jq -c '.data[] | del(.node_execution_id)' >"$T_DIR/stored"
is "$(wc -l <"$T_DIR/stored")" 10 "ten node executions stored"
if cmp -s "$T_DIR/events" "$T_DIR/stored"; then ok 0 "each stored execution is its node_finished event, key for key, in order"
else ok 1 "each stored execution is its node_finished event, key for key, in order"
	diff "$T_DIR/events" "$T_DIR/stored" | head -6 | sed 's/^/#   /'; fi
is "$(jqr '[.data[] | select(.node_execution_id == .id)] | length')" 10 \
    "node_execution_id is each execution's id"
is "$(jqr '[.data[].index] | . == ([range(1; 11)])')" true "indexes run 1 to 10"
req GET "$A/$TEN/workflow-runs/$RUN"
is "$STATUS" 200 "the run record answered"
printf '%s' "$BODY" | jq -cS '{id, status, outputs, total_steps, created_at, finished_at, elapsed_time, error}' >"$T_DIR/rec"
jq -cS 'select(.event == "workflow_finished") | .data | {id, status, outputs, total_steps, created_at, finished_at, elapsed_time, error}' "$T_DIR/ten.sse" >"$T_DIR/fin"
if cmp -s "$T_DIR/rec" "$T_DIR/fin"; then ok 0 "the run record says what workflow_finished said"
else ok 1 "the run record says what workflow_finished said"; sed 's/^/#   /' "$T_DIR/rec" "$T_DIR/fin"; fi
is "$(jqr .inputs.q)" "hi" "the record keeps its inputs"
# the other process reads the same
BASE=$B_BASE
req GET "$A/$TEN/workflow-runs/$RUN/node-executions"
is "$(printf '%s' "$BODY" | jq -c '.data[] | del(.node_execution_id)' | cmp -s - "$T_DIR/stored" && echo same)" \
    same "the other process answers the same executions"
BASE=$A_BASE

# ====== A parsed app is reused only while it is unchanged ======

# B runs the app (and keeps it parsed); A overwrites its DSL; B's next run
# follows the new DSL.
BASE=$B_BASE
svc "$TEN_KEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"q":"one"},"user":"u1","response_mode":"blocking"}'
is "$(jqr .data.outputs.out)" one "the other process runs the app"
BASE=$A_BASE
sed 's/value_selector: \[n7, output\]/value_selector: [s, q]}, {variable: again, value_selector: [n7, output]/' \
    "$TOP/tests/bench/ten_nodes.yml" >"$T_DIR/ten2.yml"
jq -n --rawfile y "$T_DIR/ten2.yml" --arg id "$TEN" \
    '{mode: "yaml-content", yaml_content: $y, app_id: $id}' >"$T_DIR/imp.json"
req POST "$A/imports" -H "$J" --data-binary @"$T_DIR/imp.json"
is "$STATUS $(jqr .app_id)" "200 $TEN" "the app's DSL is replaced through this process"
BASE=$B_BASE
svc "$TEN_KEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"q":"two"},"user":"u1","response_mode":"blocking"}'
is "$(jqr '.data.outputs | keys | join(",")')" "again,out" "the other process runs the new DSL at once"
BASE=$A_BASE

# ====== One transaction per short run ======

if [ "${FLOWCGI_STORAGE_BACKEND:-lmdb}" = postgres ]; then
	skip "LMDB's transaction ids (mdb_stat): the store is PostgreSQL"
else
	txn() { mdb_stat -e "$ROOT/data" | awk -F': ' '/Last transaction ID/ { print $2 }'; }
	before=$(txn)
	for i in 1 2 3 4 5; do
		svc "$TEN_KEY" POST /v1/workflows/run -H "$J" \
		    -d '{"inputs":{"q":"x"},"user":"u1","response_mode":"blocking"}'
		[ "$STATUS" = 200 ] || echo "# run $i: $STATUS $BODY"
	done
	after=$(txn)
	is "$((after - before))" 5 "five blocking runs cost five write transactions"
fi

# ====== A long run: seen and stopped from its own process and the other ======

import_app "$TOP/tests/e2e/apps/slow.yml"
SLOW=$APP SLOW_KEY=$KEY
curl -sS -N -H "Authorization: Bearer $SLOW_KEY" -H "$J" \
    -d '{"inputs":{"seconds":2},"user":"u2","response_mode":"streaming"}' \
    "$A_BASE/v1/workflows/run" >"$T_DIR/slow.sse" &
CURL=$!
TASK=$(sse_first "$T_DIR/slow.sse" .task_id)
RUN=$(sse_first "$T_DIR/slow.sse" .workflow_run_id)
req GET "$A/$SLOW/workflow-runs/$RUN"
is "$STATUS $(jqr .status)" "200 running" "its own process shows it running at once"
BASE=$B_BASE
i=0
while :; do
	req GET "$A/$SLOW/workflow-runs/$RUN"
	[ "$STATUS" = 200 ] && break
	i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.05
done
is "$STATUS $(jqr .status)" "200 running" "the other process sees it running after run.publish_after"
svc "$SLOW_KEY" POST "/v1/workflows/tasks/$TASK/stop" -H "$J" -d '{"user":"u3"}'
is "$STATUS" 200 "another end user cannot stop it (Dify's 200 all the same)"
svc "$SLOW_KEY" POST "/v1/workflows/tasks/$TASK/stop" -H "$J" -d '{"user":"u2"}'
is "$STATUS" 200 "its end user stops it through the other process"
wait "$CURL"
is "$(sed -n 's/^data: //p' "$T_DIR/slow.sse" | jq -r 'select(.event == "workflow_finished") | .data.status')" \
    stopped "the run ended stopped"
is "$(sed -n 's/^data: //p' "$T_DIR/slow.sse" | jq -r 'select(.event == "node_started") | .data.node_id' | tr '\n' ' ')" \
    "start wait " "no node started after the stop"
req GET "$A/$SLOW/workflow-runs/$RUN"
is "$(jqr .status) $(jqr .stop_requested)" "stopped true" "the stored record says stopped"
BASE=$A_BASE

# Stopped at once within its own process, before it is published.
curl -sS -N -H "Authorization: Bearer $SLOW_KEY" -H "$J" \
    -d '{"inputs":{"seconds":1},"user":"u2","response_mode":"streaming"}' \
    "$A_BASE/v1/workflows/run" >"$T_DIR/slow2.sse" &
CURL=$!
TASK=$(sse_first "$T_DIR/slow2.sse" .task_id)
svc "$SLOW_KEY" POST "/v1/workflows/tasks/$TASK/stop" -H "$J" -d '{"user":"u2"}'
is "$STATUS" 200 "its own process stops it at once"
wait "$CURL"
is "$(sed -n 's/^data: //p' "$T_DIR/slow2.sse" | jq -r 'select(.event == "workflow_finished") | .data.status')" \
    stopped "that run ended stopped too"
