# t_chat_modes.sh — apps without a graph (chat, agent-chat, completion)
# through nginx and the fake LLM: Dify's chat events only, the pre_prompt
# with the user's inputs, the conversation as memory, agent_thought for
# tool calls, blocking refused for agent apps, completion-messages.
. "$(dirname "$0")/lib.sh"

start_llm_front || exit 1
app() {	# app <mode> <model_config yaml lines>: imports, sets KEY
	printf 'app: {mode: %s, name: %s}\nkind: app\nversion: 0.6.0\nmodel_config:\n%s\n' \
	    "$1" "$1" "$2" >"$T_DIR/$1.yml"
	import_app "$T_DIR/$1.yml"
}
svc() { curl -sS -N -H "Authorization: Bearer $KEY" -H "$J" -d "$2" "$BASE$1"; }

app chat '  model: {provider: openai, name: gpt-4o-mini, mode: chat, completion_params: {}}
  pre_prompt: You help {{name}}.
  user_input_form:
  - text-input: {variable: name, label: Name, required: true}'
llm_script '{"responses": [{"chunks": ["Hi ", "Ada"]}, {"text": "Second"}]}'
svc /v1/chat-messages '{"inputs":{"name":"Ada"},"query":"hello","user":"u","response_mode":"streaming"}' >"$T_DIR/c1"
is "$(sed -n 's/^data: //p' "$T_DIR/c1" | jq -r .event | sort -u | tr '\n' ' ')" "message message_end " \
    "a chat app sends only message and message_end"
is "$(sed -n 's/^data: //p' "$T_DIR/c1" | jq -r 'select(.event=="message") | .answer' | tr -d '\n')" \
    "Hi Ada" "the answer streams"
CONV=$(sed -n 's/^data: //p' "$T_DIR/c1" | jq -r 'select(.event=="message_end") | .conversation_id')
is "$(curl -s "$LLM/_requests" | jq -r '.[0].body.messages[0].content')" "You help Ada." \
    "pre_prompt's {{name}} is the user's input"
svc /v1/chat-messages "{\"inputs\":{\"name\":\"Ada\"},\"query\":\"more\",\"user\":\"u\",\"conversation_id\":\"$CONV\"}" >"$T_DIR/c2"
is "$(jq -r '.mode + " " + .answer' "$T_DIR/c2")" "chat Second" "blocking chat answer, mode chat"
is "$(curl -s "$LLM/_requests" | jq -r '[.[1].body.messages[].role] | join(",")')" \
    "system,user,assistant,user" "the conversation is the chat's memory"

app agent-chat '  model: {provider: openai, name: gpt-4o-mini, mode: chat}
  pre_prompt: Use tools.
  agent_mode:
    enabled: true
    strategy: function_call
    tools:
    - {enabled: true, provider_type: builtin, provider_id: time, tool_name: weekday, tool_parameters: {}}'
llm_script '{"responses": [
  {"tool_calls": [{"id": "w", "name": "weekday", "arguments": {"year": 2024, "month": 1, "day": 1}}]},
  {"text": "Monday."}]}'
svc /v1/chat-messages '{"inputs":{},"query":"day?","user":"u"}' >"$T_DIR/a0"
is "$(jq -r .status "$T_DIR/a0") $(jq -r .code "$T_DIR/a0")" "400 app_unavailable" \
    "agent apps refuse blocking, as Dify does"
svc /v1/chat-messages '{"inputs":{},"query":"day?","user":"u","response_mode":"streaming"}' >"$T_DIR/a1"
is "$(sed -n 's/^data: //p' "$T_DIR/a1" | jq -r .event | sort -u | tr '\n' ' ')" \
    "agent_message agent_thought message_end " "agent_thought and agent_message events"
# fc_agent_runner.py: the observation is json.dumps({tool: result})
is "$(sed -n 's/^data: //p' "$T_DIR/a1" | jq -r 'select(.event=="agent_thought" and .observation != "") | .tool + ": " + .observation')" \
    'weekday: {"weekday": "January 1, 2024 is Monday."}' "the thought carries the tool's result"
is "$(sed -n 's/^data: //p' "$T_DIR/a1" | jq -r 'select(.event=="agent_message") | .answer' | tr -d '\n')" \
    "Monday." "the agent's answer"

app completion '  model: {provider: openai, name: gpt-4o-mini, mode: chat}
  pre_prompt: Translate {{text}} to French.
  user_input_form:
  - paragraph: {variable: text, label: Text, required: true}'
llm_script '{"responses": [{"text": "Bonjour"}]}'
svc /v1/completion-messages '{"inputs":{"text":"hello"},"user":"u","response_mode":"blocking"}' >"$T_DIR/p1"
is "$(jq -r '.event + " " + .mode + " " + .answer' "$T_DIR/p1")" "message completion Bonjour" \
    "completion-messages answers"
is "$(curl -s "$LLM/_requests" | jq -r '.[0].body.messages[0].role + ": " + .[0].body.messages[0].content')" \
    "user: Translate hello to French." "the completion prompt with the input"
svc /v1/chat-messages '{"inputs":{"text":"x"},"query":"q","user":"u"}' >"$T_DIR/p2"
is "$(jq -r .code "$T_DIR/p2")" not_chat_app "a completion app is not a chat app"
