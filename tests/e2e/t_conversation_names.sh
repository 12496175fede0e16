# t_conversation_names.sh — a new conversation named by the app's model
# after its first turn, as Dify's MessageCycleManager.
# generate_conversation_name and LLMGenerator.generate_conversation_name
# (api/core/llm_generator/llm_generator.py) do, through nginx and the
# fake LLM; and the request's auto_generate_name.
. "$(dirname "$0")/lib.sh"

export FLOWCGI_CONVERSATION_AUTO_NAME=true
start_llm_front || exit 1
chat() { svc "$KEY" POST /v1/chat-messages -H "$J" -d "$1"; }
prompts() { curl -s "$LLM/_requests" | jq -r '[.[] | select(.path | endswith("/chat/completions")) | .body.messages[-1].content]'; }
name_of() { svc "$KEY" GET "/v1/conversations?user=u&limit=100"; jqr ".data[] | select(.id==\"$1\") | .name"; }

import_app "$TOP/tests/e2e/apps/chat_stream.yml"

# Dify's prompt asks for JSON; its "Your Output" is the name
llm_script '{"responses": [{"match": "Q: ", "text": "Lyon is lovely."},
  {"match": "User Input:", "text": "{\"Language Type\": \"English\", \"Your Reasoning\": \"travel\", \"Your Output\": \"Weekend in Lyon\"}"}]}'
chat '{"inputs":{},"query":"Plan a weekend\nin Lyon","user":"u"}'
C=$(jqr .conversation_id)
is "$STATUS $(jqr .answer)" "200 Lyon is lovely." "the first turn answers"
is "$(name_of "$C")" "Weekend in Lyon" "... and the conversation is named by the model when the answer ends"
is "$(prompts | jq -r '.[1]' | grep -c 'User Input: Plan a weekend in Lyon$')" 1 \
    "... asked with the query, its newlines as spaces"
llm_script '{"responses": [{"text": "Second answer."}]}'
chat "{\"inputs\":{},\"query\":\"And food?\",\"user\":\"u\",\"conversation_id\":\"$C\"}"
is "$(prompts | jq length) $(name_of "$C")" "1 Weekend in Lyon" "a later turn does not name it again"

# an answer that is not Dify's JSON: its first line
llm_script '{"responses": [{"match": "Q: ", "text": "ok"}, {"match": "User Input:", "text": "\"Plain title\"\nmore"}]}'
chat '{"inputs":{},"query":"hello","user":"u"}'
is "$(name_of "$(jqr .conversation_id)")" "Plain title" "an answer that is no JSON: its first line"

# auto_generate_name false (ChatRequestPayload): Dify's "New conversation"
llm_script '{"responses": [{"text": "ok"}]}'
chat '{"inputs":{},"query":"no name please","user":"u","auto_generate_name":false}'
is "$(prompts | jq length) $(name_of "$(jqr .conversation_id)")" "1 New conversation" \
    "auto_generate_name false: no model call, Dify's \"New conversation\""

# streamed: named before the stream ends
llm_script '{"responses": [{"match": "Q: ", "chunks": ["a", "b"]}, {"match": "User Input:", "text": "{\"Your Output\": \"Streamed one\"}"}]}'
svc "$KEY" POST /v1/chat-messages -H "$J" -d '{"inputs":{},"query":"stream it","user":"u","response_mode":"streaming"}'
C2=$(printf '%s' "$BODY" | sed -n 's/^data: //p' | jq -r 'select(.event=="message_end") | .conversation_id')
is "$(name_of "$C2")" "Streamed one" "a streamed first turn: named once the stream has ended"

# a long query: Dify's first 300 and last 300 characters
long=$(printf 'a%.0s' $(seq 1 1500))$(printf 'b%.0s' $(seq 1 1500))
llm_script '{"responses": [{"match": "Q: ", "text": "ok"}, {"match": "User Input:", "text": "{\"Your Output\": \"Long\"}"}]}'
chat "{\"inputs\":{},\"query\":\"$long\",\"user\":\"u\"}"
is "$(prompts | jq -r '.[1]' | grep -o 'a*\.\.\.\[TRUNCATED\]\.\.\.b*' | awk '{print length($0)}')" 617 \
    "a query over 2000 characters: 300 + ...[TRUNCATED]... + 300"

# a model that fails: the query stays the name
llm_script '{"responses": [{"match": "Q: ", "text": "ok"}, {"match": "User Input:", "status": 500, "error": "down", "repeat": true}]}'
chat '{"inputs":{},"query":"keep me","user":"u"}'
is "$(name_of "$(jqr .conversation_id)")" "keep me" "a naming model that fails: the query stays the name"

# the rename route's auto_generate reads the same answer
llm_script '{"responses": [{"text": "{\"Your Output\": \"Renamed by model\"}"}]}'
svc "$KEY" POST "/v1/conversations/$C/name" -H "$J" -d '{"user":"u","auto_generate":true}'
is "$STATUS $(jqr .name)" "200 Renamed by model" "POST /conversations/{id}/name auto_generate: the model's name"

# a completion app's conversation is not named (Dify skips completion)
printf 'app: {mode: completion, name: done}\nkind: app\nversion: 0.6.0\nmodel_config:\n  model: {provider: openai, name: gpt-4o-mini, mode: chat}\n  pre_prompt: Say {{x}}\n  user_input_form: [{text-input: {variable: x, label: x, required: false}}]\n' >"$T_DIR/cp.yml"
import_app "$T_DIR/cp.yml"
llm_script '{"responses": [{"text": "said"}]}'
svc "$KEY" POST /v1/completion-messages -H "$J" -d '{"inputs":{"x":"hi"},"user":"u"}'
is "$STATUS $(jqr .answer) $(prompts | jq length)" "200 said 1" "a completion app: one model call, no name"
