# t_llm.sh — the LLM node through nginx against the fake OpenAI-compatible
# server (tests/fakes/fake_llm.py): tokens stream into the answer as they
# arrive, memory carries the conversation, reasoning is split off, the
# request flowcgi sent is what the DSL says, and provider errors reach the
# run as clear failures.
. "$(dirname "$0")/lib.sh"

start_fake llm LLM
FLOWCGI_LLM_BASE_URL=$LLM/v1 start_flowcgi fc
start_nginx "127.0.0.1:$FC_PORT"
TOKEN=$(admin_token)
J='Content-Type: application/json'
import_app "$TOP/tests/e2e/apps/chat_llm.yml"

llm_script '{"responses": [
  {"match": "Q: first", "chunks": ["<think>hm", "m</think>Hel", "lo ", "there"], "delay": 0.3,
   "usage": {"prompt_tokens": 11, "completion_tokens": 4}},
  {"match": "Q: second", "text": "Again", "usage": {"prompt_tokens": 20, "completion_tokens": 1}},
  {"match": "Q: broken", "status": 401, "error": "Incorrect API key provided", "error_type": "invalid_request_error"}
]}'

now_ms() { date +%s%3N; }
curl -sS -N -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"first","user":"u","response_mode":"streaming"}' \
    "$BASE/v1/chat-messages" | while IFS= read -r line; do
	[ -n "$line" ] && printf '%s %s\n' "$(now_ms)" "$line"
done >"$T_DIR/s1"
msgs=$(sed -n 's/^[0-9]* data: //p' "$T_DIR/s1" | jq -r 'select(.event=="message") | .answer')
is "$(printf '%s' "$msgs" | tr -d '\n')" "<think>hmm</think>Hello there [15 tokens]" \
    "the answer streams the model's tokens, then the rest of the template"
n=$(sed -n 's/^[0-9]* data: //p' "$T_DIR/s1" | jq -r 'select(.event=="message") | .answer' | wc -l)
ok "$([ "$n" -ge 4 ] && echo 0 || echo 1)" "tokens arrive as separate message events ($n)"
t_first=$(grep '"event":"message"' "$T_DIR/s1" | head -1 | cut -d' ' -f1)
t_last=$(grep '"event":"message"' "$T_DIR/s1" | tail -1 | cut -d' ' -f1)
ok "$([ $((t_last - t_first)) -ge 600 ] && echo 0 || echo 1)" \
    "the first token reached the client $((t_last - t_first)) ms before the last"
CONV=$(sed -n 's/^[0-9]* data: //p' "$T_DIR/s1" | jq -r 'select(.event=="message_end") | .conversation_id')
sent=$(curl -s "$LLM/_requests" | jq '.[-1].body')
is "$(printf '%s' "$sent" | jq -r '.model') $(printf '%s' "$sent" | jq -r '.temperature') $(printf '%s' "$sent" | jq -r '.stream')" \
    "gpt-4o-mini 0.3 true" "model, completion params and streaming as the DSL says"
is "$(printf '%s' "$sent" | jq -r '[.messages[].role] | join(",")')" "system,user" \
    "system prompt, then the query"
is "$(printf '%s' "$sent" | jq -r '.messages[1].content')" "Q: first" \
    "the query goes through query_prompt_template"

# The node's record: reasoning separated, usage counted.
RUN=$(sed -n 's/^[0-9]* data: //p' "$T_DIR/s1" | jq -r 'select(.event=="workflow_finished") | .workflow_run_id')
req GET "/console/api/apps/$APP/workflow-runs/$RUN/node-executions"
is "$(jqr '.data[1].outputs.text')" "Hello there" "text without the <think> block"
is "$(jqr '.data[1].outputs.reasoning_content')" "hmm" "reasoning_content separated"
is "$(jqr '.data[1].outputs.usage.total_tokens') $(jqr '.data[1].outputs.finish_reason')" \
    "15 stop" "usage and finish_reason"
req GET "/console/api/apps/$APP/workflow-runs/$RUN"
is "$(jqr .total_tokens)" 15 "the run counts the tokens"

# Memory: the second message carries the first exchange.
curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d "{\"inputs\":{},\"query\":\"second\",\"user\":\"u\",\"conversation_id\":\"$CONV\"}" \
    "$BASE/v1/chat-messages" >"$T_DIR/b2"
is "$(jq -r .answer "$T_DIR/b2")" "Again [21 tokens]" "blocking chat answer"
sent=$(curl -s "$LLM/_requests" | jq '.[-1].body')
is "$(printf '%s' "$sent" | jq -r '[.messages[] | .role + ":" + (.content|tostring)] | join("|")')" \
    "system:You are terse. Today is $APP.|user:first|assistant:<think>hmm</think>Hello there [15 tokens]|user:Q: second" \
    "history: the earlier query and answer, then the new query"

# A provider error is a clear failure, without the key.
curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"broken","user":"u"}' "$BASE/v1/chat-messages" >"$T_DIR/b3"
is "$(jq -r .status "$T_DIR/b3")" failed "a provider error fails the run"
jq -r .error "$T_DIR/b3" | grep -q "401" && jq -r .error "$T_DIR/b3" | grep -q "Incorrect API key"
ok $? "the error carries the provider's status and message"
req GET /healthz
is "$STATUS" 200 "server healthy at the end"
