# t_stream.sh — streaming through a real nginx: the first event reaches the
# client while the run is still going (nothing buffers it), a stop from
# another request ends a run between nodes, and a client that goes away
# does not stop the run.
. "$(dirname "$0")/lib.sh"

start_front || exit 1
import_app "$TOP/tests/e2e/apps/slow.yml"

now_ms() { date +%s%3N; }

# Each event line is stamped with the time it arrived.
t0=$(now_ms)
curl -sS -N -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{"seconds":3},"user":"s","response_mode":"streaming"}' \
    "$BASE/v1/workflows/run" | while IFS= read -r line; do
	[ -n "$line" ] && printf '%s %s\n' "$(now_ms)" "$line"
done >"$T_DIR/stamped"
first=$(grep -m1 'workflow_started' "$T_DIR/stamped" | cut -d' ' -f1)
last=$(grep 'workflow_finished' "$T_DIR/stamped" | cut -d' ' -f1)
ok "$([ -n "$first" ] && [ -n "$last" ] && echo 0 || echo 1)" "both ends of the stream arrived"
gap=$((last - first))
echo "# first event after $((first - t0)) ms, last after $((last - t0)) ms"
ok "$([ "$gap" -ge 2500 ] && echo 0 || echo 1)" \
    "the first event came ${gap} ms before the run ended (not buffered)"
is "$(grep 'workflow_finished' "$T_DIR/stamped" | cut -d' ' -f2- | sed 's/^data: //' | jq -r .data.outputs.done)" \
    yes "the streamed run finished with its outputs"

# Stop: from another request while the slow node runs.
curl -sS -N -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{"seconds":2},"user":"s","response_mode":"streaming"}' \
    "$BASE/v1/workflows/run" >"$T_DIR/stopped.txt" &
CURL=$!
i=0
while ! grep -q workflow_started "$T_DIR/stopped.txt" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.05
done
TASK=$(sed -n 's/^data: //p' "$T_DIR/stopped.txt" | head -1 | jq -r .task_id)
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"user":"s"}' "$BASE/v1/workflows/tasks/$TASK/stop")
is "$code" 200 "stop is accepted"
wait $CURL
is "$(sed -n 's/^data: //p' "$T_DIR/stopped.txt" | jq -r 'select(.event=="workflow_finished") | .data.status')" \
    stopped "the run ends as stopped"
is "$(sed -n 's/^data: //p' "$T_DIR/stopped.txt" | jq -r 'select(.event=="node_started") | .data.node_id' | tr '\n' ' ')" \
    "start wait " "no node starts after the stop"
req GET "/console/api/apps/$APP/workflow-runs/$TASK"
is "$(jqr .status)" stopped "the run record says stopped"

# A client that disconnects does not stop the run.
curl -sS -N -m 1 -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{"seconds":2},"user":"gone","response_mode":"streaming"}' \
    "$BASE/v1/workflows/run" >"$T_DIR/gone.txt" 2>/dev/null
TASK=$(sed -n 's/^data: //p' "$T_DIR/gone.txt" | head -1 | jq -r .task_id)
i=0
while :; do
	req GET "/console/api/apps/$APP/workflow-runs/$TASK"
	[ "$(jqr .status)" != running ] && break
	i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.1
done
is "$(jqr .status) $(jqr .outputs.done)" "succeeded yes" \
    "a run whose client left still finishes"
req GET /healthz
is "$STATUS" 200 "server healthy at the end"
