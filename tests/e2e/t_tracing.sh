#!/bin/bash
# t_tracing.sh — an OpenTelemetry trace per run over OTLP/HTTP JSON, to a
# fake collector (tests/fakes/fake_otlp.py, which checks the encoding).
#
# Runs of a workflow (start, template, LLM against the fake model, end),
# blocking and streamed, through nginx: one trace each, the run's span the
# root, a span per node under it, the model request's span (GenAI semantic
# conventions) under the LLM node's; the configured headers reach the
# collector; no content unless tracing.include_content. With the collector
# down (a closed port) and stuck (it never answers), runs still succeed and
# spans past tracing.queue_max are dropped and counted.
. "$(dirname "$0")/lib.sh"

N=3
start_fake llm LLM || exit 1
start_fake otlp OTLP || exit 1
export FLOWCGI_LLM_BASE_URL=$LLM/v1 FLOWCGI_METRICS_ENABLED=true
export FLOWCGI_TRACING_HEADERS='Authorization=Basic%20dGVzdDpzZWNyZXQ=,X-Scope-OrgID=team%2Fa'

# serve <name> [VAR=value...]: (re)starts flowcgi on the data directory
# with the tracing settings given (the others back to their defaults),
# behind a new nginx.
serve() {
	local name=$1 v
	shift
	[ -n "${CUR:-}" ] && { kill "$CUR"; wait "$CUR" 2>/dev/null; }
	stop_nginx
	unset FLOWCGI_TRACING_OTLP_ENDPOINT FLOWCGI_TRACING_INCLUDE_CONTENT \
	    FLOWCGI_TRACING_QUEUE_MAX FLOWCGI_TRACING_BATCH_MAX \
	    FLOWCGI_TRACING_TIMEOUT
	for v in "$@"; do export "${v?}"; done
	start_flowcgi "$name" || return 1
	CUR=$FC_PID
	start_nginx "127.0.0.1:$FC_PORT"
}
# run <q>: one blocking run; sets RC (its status) and RUN (its id).
run() {
	svc "$KEY" POST /v1/workflows/run -H 'Content-Type: application/json' \
	    -H "X-Request-Id: trace-$1" -d "{\"inputs\":{\"q\":\"$1\"},
	    \"user\":\"u1\",\"response_mode\":\"blocking\"}"
	RC=$(jqr .data.status)
	RUN=$(jqr .workflow_run_id)
}
# spans_wait <n>: waits up to 10 s for the collector to hold n spans.
spans_wait() {
	local i=0
	while [ "$(curl -s -m 5 "$OTLP/_stats" | jq .spans)" -lt "$1" ] &&
	    [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
	curl -s -m 5 "$OTLP/_spans" >"$T_DIR/spans.json"
}
# metric <filter>: a sample of /metrics (the admin token).
metric() {
	req GET /metrics
	printf '%s\n' "$BODY" | awk -v f="$1" 'index($0, f) == 1 { s += $NF }
	    END { print s + 0 }'
}
# q <jq filter>: over the spans received.
q() { jq -r "$1" "$T_DIR/spans.json"; }

serve fc1 FLOWCGI_TRACING_OTLP_ENDPOINT="$OTLP/v1/traces" \
    FLOWCGI_TRACING_FLUSH_MS=100 || exit 1
TOKEN=$(admin_token)
import_app "$TOP/tests/e2e/apps/observe.yml"
[ -n "$KEY" ] && [ "$KEY" != null ] || { ok 1 "app imported"; exit 1; }

# ====== One trace per run ======

runs=""
for i in $(seq 1 $N); do
	run "q$i"
	is "$RC" succeeded "run $i succeeds"
	runs="$runs $RUN"
done
curl -sN -X POST -H "Authorization: Bearer $KEY" \
    -H 'Content-Type: application/json' -H 'X-Request-Id: trace-stream' \
    -d '{"inputs":{"q":"s"},"user":"u1","response_mode":"streaming"}' \
    "$BASE/v1/workflows/run" >"$T_DIR/stream.txt"
SRUN=$(sse_first "$T_DIR/stream.txt" .workflow_run_id)
ok "$(grep -q '"event": *"workflow_finished"' "$T_DIR/stream.txt"; echo $?)" \
    "a streamed run finishes"
runs="$runs $SRUN"
R=$((N + 1))
# a run: its span, 4 nodes, the model request
spans_wait $((R * 6))
is "$(q 'length')" "$((R * 6))" "6 spans per run: run, 4 nodes, model request"
is "$(q '[.[].traceId] | unique | length')" "$R" "one trace per run"
is "$(q '[.[] | select(.parentSpanId == null)] | length')" "$R" \
    "one root span per trace"
want=$(tr ' ' '\n' <<<"$runs" | sed '/^$/d' | sort | tr '\n' ' ')
got=$(q '[.[] | select(.parentSpanId == null) |
    .attributes["dify.workflow_run.id"]] | sort | join(" ")')
is "$got " "$want" "the root spans are the runs (dify.workflow_run.id)"
is "$(jq -r --arg a "$APP" '[.[] | select(.parentSpanId == null) |
    select(.attributes["dify.app.id"] == $a and
    .attributes["dify.status"] == "succeeded" and
    .attributes["dify.app.mode"] == "workflow" and .name == "Observed" and
    (.attributes["dify.total_tokens"] > 0))] | length' "$T_DIR/spans.json")" \
    "$R" "run spans: app id and name, mode, status, tokens"
is "$(jq -r '[.[] | select(.parentSpanId == null) |
    .attributes["dify.request_id"]] | sort | join(" ")' "$T_DIR/spans.json")" \
    "trace-q1 trace-q2 trace-q3 trace-stream" "run spans carry the request id"
# every node span's parent is its trace's root
is "$(jq -r '(map(select(.parentSpanId == null) | {(.traceId): .spanId}) |
    add) as $root | [.[] | select(.attributes["dify.node.type"] != null) |
    select(.parentSpanId == $root[.traceId])] | length' "$T_DIR/spans.json")" \
    "$((R * 4))" "a span per node, each a child of its run's span"
is "$(jq -r '[.[] | select(.attributes["dify.node.type"] == "llm" and
    .name == "Ask" and .attributes["dify.node.title"] == "Ask" and
    .attributes["dify.status"] == "succeeded" and
    .attributes["dify.node.id"] == "llm")] | length' "$T_DIR/spans.json")" \
    "$R" "node spans: title, type, id, status"
is "$(jq -r '(map(select(.attributes["dify.node.type"] == "llm") |
    {(.spanId): 1}) | add) as $llm | [.[] |
    select(.attributes["gen_ai.operation.name"] == "chat") |
    select($llm[.parentSpanId] == 1) | select(.kind == 3 and
    .name == "chat gpt-4o-mini" and .attributes["gen_ai.system"] == "openai"
    and .attributes["gen_ai.request.model"] == "gpt-4o-mini" and
    .attributes["gen_ai.response.model"] != null and
    .attributes["gen_ai.usage.input_tokens"] > 0 and
    .attributes["gen_ai.usage.output_tokens"] > 0 and
    .attributes["gen_ai.response.finish_reasons"] == ["stop"] and
    .attributes["gen_ai.request.temperature"] == 0.2)] | length' \
    "$T_DIR/spans.json")" "$R" \
    "model request spans under the LLM node, GenAI semantic conventions"
is "$(q '[.[] | .attributes | keys[] | select(test("input.value|output.value|gen_ai.completion|process_data"))] | length')" \
    0 "no prompts or outputs without tracing.include_content"
is "$(q '[.[].resource["service.name"]] | unique | join(",")')" flowcgi \
    "resource: service.name"
is "$(q '[.[].headers.authorization] | unique | join(",")')" \
    "Basic dGVzdDpzZWNyZXQ=" "tracing.headers: Authorization sent"
is "$(q '[.[].headers["x-scope-orgid"]] | unique | join(",")')" "team/a" \
    "tracing.headers: values percent-decoded"
is "$(curl -s -m 5 "$OTLP/_stats" | jq .rejected)" 0 \
    "the collector accepted every export (OTLP JSON checks)"
is "$(metric 'flowcgi_trace_spans_total{outcome="exported"')" "$((R * 6))" \
    "exported spans counted in /metrics"

# ====== Content ======

curl -s -m 5 -X POST -d '' "$OTLP/_reset" >/dev/null
serve fc2 FLOWCGI_TRACING_OTLP_ENDPOINT="$OTLP/v1/traces" \
    FLOWCGI_TRACING_FLUSH_MS=100 FLOWCGI_TRACING_INCLUDE_CONTENT=true ||
    exit 1
run contentq
is "$RC" succeeded "a run with tracing.include_content"
spans_wait 6
is "$(q '[.[] | select(.attributes["dify.node.type"] == "llm") |
    select((.attributes["dify.process_data"] | contains("Question: contentq"))
    and (.attributes["output.value"] | contains("echo")))] | length')" 1 \
    "the LLM node's span holds its prompt and output"
is "$(q '[.[] | select(.parentSpanId == null) |
    select(.attributes["dify.inputs"] | contains("contentq"))] | length')" 1 \
    "the run's span holds its inputs"
is "$(q '[.[] | select(.attributes["gen_ai.completion"] != null)] | length')" \
    1 "the model request's span holds the completion"

# ====== An agent: iterations, tool calls ======

AKEY_APP=$APP AKEY=$KEY
import_app "$TOP/tests/e2e/apps/agent.yml"
llm_script '{"responses": [
  {"match": "which day", "tool_calls": [
     {"id": "c1", "name": "current_time", "arguments": {"timezone": "UTC"}},
     {"id": "c2", "name": "weekday", "arguments": {"year": 2024, "month": 1, "day": 1}}]},
  {"text": "A Monday."}
]}'
curl -s -m 5 -X POST -d '' "$OTLP/_reset" >/dev/null
svc "$KEY" POST /v1/chat-messages -H 'Content-Type: application/json' \
    -d '{"inputs":{},"query":"which day is it","user":"u",
    "response_mode":"blocking"}'
is "$(jqr .answer)" "A Monday." "an agent chat runs traced"
# run, start, agent, answer; 2 iterations, 2 model requests, 2 tool calls
spans_wait 10
is "$(q '[.[] | select(.name | startswith("agent iteration"))] |
    map(.name) | sort | join(",")')" "agent iteration 1,agent iteration 2" \
    "a span per agent iteration"
is "$(jq -r '(map(select(.attributes["dify.node.type"] == "agent") |
    {(.spanId): 1}) | add) as $agent | [.[] | select(.name |
    startswith("agent iteration")) | select($agent[.parentSpanId] == 1)] |
    length' "$T_DIR/spans.json")" 2 "iterations are children of the agent node"
is "$(jq -r '(map(select(.name | startswith("agent iteration")) |
    {(.spanId): .name}) | add) as $it | [.[] |
    select(.attributes["gen_ai.operation.name"] == "execute_tool") |
    $it[.parentSpanId] + ":" + .attributes["gen_ai.tool.name"]] | sort |
    join(",")' "$T_DIR/spans.json")" \
    "agent iteration 1:current_time,agent iteration 1:weekday" \
    "tool calls under the iteration that made them"
is "$(jq -r '(map(select(.name | startswith("agent iteration")) |
    {(.spanId): 1}) | add) as $it | [.[] |
    select(.attributes["gen_ai.operation.name"] == "chat") |
    select($it[.parentSpanId] == 1)] | length' "$T_DIR/spans.json")" 2 \
    "model requests under their iterations"
is "$(q '[.[] | select(.parentSpanId == null)] | .[0].attributes["session.id"] != null')" \
    true "a chat's run span carries its conversation as session.id"
APP=$AKEY_APP KEY=$AKEY

# ====== Collector down ======

DEAD=$(free_port)
serve fc3 FLOWCGI_TRACING_OTLP_ENDPOINT="http://127.0.0.1:$DEAD/v1/traces" \
    FLOWCGI_TRACING_FLUSH_MS=100 || exit 1
good=0
for i in 1 2 3 4 5; do run "down$i"; [ "$RC" = succeeded ] && good=$((good + 1)); done
is "$good" 5 "with the collector down, runs succeed"
i=0
while [ "$(metric 'flowcgi_trace_spans_total{outcome="failed"')" -lt 30 ] &&
    [ $i -lt 50 ]; do i=$((i + 1)); sleep 0.1; done
is "$(metric 'flowcgi_trace_spans_total{outcome="failed"')" 30 \
    "and their spans are counted as failed"
ok "$(grep -q 'tracing: .* spans not sent' "$T_DIR/fc3.log"; echo $?)" \
    "a warning names the endpoint"

# ====== Collector stuck: the queue stays bounded ======

python3 "$TOP/tests/fakes/fake_otlp.py" --hang >"$T_DIR/hang.port" \
    2>"$T_DIR/hang.log" &
FLOWCGI_PIDS="$FLOWCGI_PIDS $!"
i=0
while [ ! -s "$T_DIR/hang.port" ] && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.05; done
HANG=$(head -1 "$T_DIR/hang.port")
QMAX=16 BMAX=8 RUNS=10
serve fc4 FLOWCGI_TRACING_OTLP_ENDPOINT="http://127.0.0.1:$HANG/v1/traces" \
    FLOWCGI_TRACING_QUEUE_MAX=$QMAX FLOWCGI_TRACING_BATCH_MAX=$BMAX \
    FLOWCGI_TRACING_TIMEOUT=60 FLOWCGI_TRACING_FLUSH_MS=10 || exit 1
good=0
for i in $(seq 1 $RUNS); do
	run "stuck$i"
	[ "$RC" = succeeded ] && good=$((good + 1))
done
is "$good" "$RUNS" "with the collector stuck, runs succeed"
dropped=$(metric 'flowcgi_trace_spans_total{outcome="dropped"')
# the first batch hangs (for longer than the runs take): at most
# queue_max spans wait behind it, the rest is dropped
ok "$([ "$dropped" -ge $((RUNS * 6 - QMAX - BMAX)) ]; echo $?)" \
    "spans past tracing.queue_max are dropped ($dropped of $((RUNS * 6)))"
