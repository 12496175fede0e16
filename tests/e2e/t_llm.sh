# t_llm.sh — the LLM node through nginx against the fake OpenAI-compatible
# server (tests/fakes/fake_llm.py): tokens stream into the answer as they
# arrive, memory carries the conversation, reasoning is split off, the
# request flowcgi sent is what the DSL says, provider errors reach the run
# as clear failures, a burst of tokens arrives whole and in order, and
# paced tokens are not held back.
. "$(dirname "$0")/lib.sh"

start_llm_front || exit 1
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
is "$(jq -r '"\(.status) \(.code)"' "$T_DIR/b3")" "400 invalid_param" "a provider error fails the run"
jq -r .message "$T_DIR/b3" | grep -q "401" && jq -r .message "$T_DIR/b3" | grep -q "Incorrect API key"
ok $? "the error carries the provider's status and message"
# A burst: an answer of many tokens sent as fast as the fake can (they
# share flushes, server.stream_flush_ms) arrives whole, in order, one
# message event per token, and the final events follow it.
python3 -c "import json; print(json.dumps({'responses': [
  {'match': 'Q: burst', 'chunks': ['b%d ' % i for i in range(3000)]},
  {'match': 'Q: paced', 'chunks': ['p%d ' % i for i in range(5)], 'delay': 0.2}]}))" \
    >"$T_DIR/script.json"
llm_script @"$T_DIR/script.json"
key_stream /v1/chat-messages '{"inputs":{},"query":"burst","user":"u","response_mode":"streaming"}' \
    "$T_DIR/burst"
sed -n 's/^data: //p' "$T_DIR/burst" | jq -r .event >"$T_DIR/burst.ev"
want=$(python3 -c "print(''.join('b%d ' % i for i in range(3000)))")
is "$(sed -n 's/^data: //p' "$T_DIR/burst" | jq -j 'select(.event=="message") | .answer' | sed 's/ \[[0-9]* tokens\]$//')" \
    "$want" "a burst of 3000 tokens arrives whole and in order"
is "$(grep -c '^message$' "$T_DIR/burst.ev")" 3001 \
    "one message event per token, and the template's rest"
is "$(tail -2 "$T_DIR/burst.ev" | tr '\n' ' ')" "workflow_finished message_end " \
    "the final events follow the burst"
is "$(grep -c '^text_chunk$' "$T_DIR/burst.ev")" 0 \
    "a chatflow streams message events only, as Dify does (no text_chunk)"

# Paced tokens (200 ms apart) are not held back: each reaches the client
# before the fake sends the next one (the fake notes when it sent each).
python3 - "$BASE/v1/chat-messages" "$KEY" >"$T_DIR/paced" <<'PY'
import json, sys, time, urllib.request
req = urllib.request.Request(sys.argv[1], method="POST", data=json.dumps(
    {"inputs": {}, "query": "paced", "user": "u",
     "response_mode": "streaming"}).encode())
req.add_header("Content-Type", "application/json")
req.add_header("Authorization", "Bearer " + sys.argv[2])
with urllib.request.urlopen(req) as r:
    for raw in r:
        line = raw.decode().strip()
        if line.startswith("data: "):
            ev = json.loads(line[6:])
            if ev.get("event") == "message":
                print("%.6f %s" % (time.time(), json.dumps(ev["answer"])))
PY
curl -s "$LLM/_sent" >"$T_DIR/sent"
is "$(jq -r '[.[].text] | join("")' "$T_DIR/sent")" "p0 p1 p2 p3 p4 " \
    "the fake sent the paced tokens"
late=$(jq -r '.[].time' "$T_DIR/sent" | tail -n +2 | paste - <(head -4 "$T_DIR/paced") |
    awk '$2 >= $1 { n++ } END { print n + 0 }')
is "$(head -5 "$T_DIR/paced" | cut -d' ' -f2- | jq -j .)" "p0 p1 p2 p3 p4 " \
    "paced tokens arrive as their own message events"
is "$late" 0 "each paced token reached the client before the next was sent"

req GET /healthz
is "$STATUS" 200 "server healthy at the end"
