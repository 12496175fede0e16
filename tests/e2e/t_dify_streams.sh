# t_dify_streams.sh — streams compared event by event with recorded Dify
# streams of the same app kinds (tests/e2e/streams/*.events: the events,
# their order, the set of fields of each, the types of their values and
# the fixed values, each file naming the Dify source and docs it was
# written from), through nginx with the fake LLM: a chatflow with an
# answer, a workflow with the LLM's text chunks, an agent-chat app with a
# tool call, a knowledge chatflow with citations. Ids and timestamps are
# compared by shape. What flowcgi sends that Dify does not, or misses,
# fails (tests/e2e/streams/compare.py says which event and field).
. "$(dirname "$0")/lib.sh"

start_llm_front || exit 1
S=$TOP/tests/e2e/streams
# same <kind> <stream file>: the stream matches the recording of <kind>
same() {
	python3 "$S/compare.py" "$S/$1.events" "$2" >"$T_DIR/$1.diff" 2>&1
	ok $? "$1: the stream is Dify's, event by event"
	grep -v '^compared' "$T_DIR/$1.diff" | head -20 | sed 's/^/# /'
}
sse() {	# sse <path> <json> <file>: a streamed request with $KEY
	curl -sS -N -H "Authorization: Bearer $KEY" -H "$J" -d "$2" \
	    "$BASE$1" >"$3"
}

# ====== Chatflow with an answer ======

import_app "$TOP/tests/e2e/apps/chat_stream.yml"
llm_script '{"responses": [{"chunks": ["Hel", "lo"]}]}'
sse /v1/chat-messages '{"inputs":{},"query":"hi","user":"u","response_mode":"streaming"}' "$T_DIR/chatflow.sse"
same chatflow "$T_DIR/chatflow.sse"

# ====== Workflow with the LLM's text chunks ======

cat >"$T_DIR/wf.yml" <<'YML'
app: {mode: workflow, name: Chunks}
kind: app
version: 0.6.0
workflow:
  graph:
    edges:
    - {id: e1, source: start, target: llm}
    - {id: e2, source: llm, target: end}
    nodes:
    - id: start
      data: {type: start, title: Start, variables: []}
    - id: llm
      data:
        type: llm
        title: LLM
        model: {provider: openai, name: gpt-4o-mini, mode: chat}
        prompt_template: [{role: user, text: hello}]
        context: {enabled: false}
    - id: end
      data: {type: end, title: End, outputs: [{variable: text, value_selector: [llm, text]}]}
YML
import_app "$T_DIR/wf.yml"
llm_script '{"responses": [{"chunks": ["a", "b"]}]}'
sse /v1/workflows/run '{"inputs":{},"user":"u","response_mode":"streaming"}' "$T_DIR/workflow.sse"
same workflow "$T_DIR/workflow.sse"

# ====== Agent chat with a tool call ======

printf 'app: {mode: agent-chat, name: agent}\nkind: app\nversion: 0.6.0\nmodel_config:\n%s\n' \
'  model: {provider: openai, name: gpt-4o-mini, mode: chat}
  pre_prompt: Use tools.
  agent_mode:
    enabled: true
    strategy: function_call
    tools:
    - {enabled: true, provider_type: builtin, provider_id: time, tool_name: weekday, tool_parameters: {}}' \
    >"$T_DIR/agent.yml"
import_app "$T_DIR/agent.yml"
llm_script '{"responses": [
  {"tool_calls": [{"id": "w", "name": "weekday", "arguments": {"year": 2024, "month": 1, "day": 1}}]},
  {"chunks": ["Mon", "day."]}]}'
sse /v1/chat-messages '{"inputs":{},"query":"day?","user":"u","response_mode":"streaming"}' "$T_DIR/agent_chat.sse"
same agent_chat "$T_DIR/agent_chat.sse"

# ====== Knowledge chatflow with citations ======

start_fake knowledge KB
req POST /console/api/workspaces/current/knowledge-bases/ds-a -H "$J" \
    -d "{\"endpoint\":\"$KB\",\"api_key\":\"kb-secret\",\"knowledge_id\":\"kb-a\"}"
cat >"$T_DIR/cite.yml" <<'YML'
app: {mode: advanced-chat, name: Cite}
kind: app
version: 0.6.0
workflow:
  features: {retriever_resource: {enabled: true}}
  graph:
    edges:
    - {id: e1, source: start, target: kr}
    - {id: e2, source: kr, target: llm}
    - {id: e3, source: llm, target: answer}
    nodes:
    - id: start
      data: {type: start, title: Start, variables: []}
    - id: kr
      data: {type: knowledge-retrieval, title: KR, query_variable_selector: [sys, query], dataset_ids: [ds-a], retrieval_mode: multiple, multiple_retrieval_config: {top_k: 2}}
    - id: llm
      data:
        type: llm
        title: LLM
        model: {provider: openai, name: gpt-4o-mini, mode: chat}
        prompt_template: [{role: system, text: 'Use {{#context#}}'}, {role: user, text: '{{#sys.query#}}'}]
        context: {enabled: true, variable_selector: [kr, result]}
    - id: answer
      data: {type: answer, title: Answer, answer: '{{#llm.text#}}'}
YML
import_app "$T_DIR/cite.yml"
llm_script '{"responses": [{"chunks": ["Cit", "ed."]}]}'
sse /v1/chat-messages '{"inputs":{},"query":"refunds","user":"u","response_mode":"streaming"}' "$T_DIR/knowledge_chatflow.sse"
same knowledge_chatflow "$T_DIR/knowledge_chatflow.sse"

# The comparison itself fails on a stream that is not Dify's: a field
# Dify does not send, one it sends and is missing, a wrong fixed value.
sed 's/"event":"message_end",/"event":"message_end","workflow_run_id":"x",/' \
    "$T_DIR/chatflow.sse" >"$T_DIR/extra.sse"
python3 "$S/compare.py" "$S/chatflow.events" "$T_DIR/extra.sse" >"$T_DIR/extra.diff"
is "$? $(grep -c 'workflow_run_id: sent, and Dify does not' "$T_DIR/extra.diff")" "1 1" \
    "a field Dify does not send fails the comparison"
sed 's/"from_variable_selector":\["llm","text"\]/"from_variable_selector":["answer","answer"]/' \
    "$T_DIR/chatflow.sse" >"$T_DIR/sel.sse"
python3 "$S/compare.py" "$S/chatflow.events" "$T_DIR/sel.sse" >"$T_DIR/sel.diff"
is "$?" 1 "... and so does another fixed value"
