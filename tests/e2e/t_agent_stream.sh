# t_agent_stream.sh — an agent's model calls stream, through nginx against
# the fake LLM (which streams): an agent-chat app's answer comes as many
# agent_message chunks in order, with the tool call's agent_thought events
# between them, as Dify's fc_agent_runner.py publishes them (the thought at
# the call's first chunk, again with the calls, again with their results);
# a chatflow's agent node streams its text as message chunks from
# [agent, text]; a stop mid-answer ends the run stopped with the answer as
# far as it got.
. "$(dirname "$0")/lib.sh"

start_llm_front || exit 1
ev() { sed -n 's/^data: //p' "$1"; }
# stream <json> <file>: a streamed chat-messages request in the background
stream() {
	curl -sS -N -H "Authorization: Bearer $KEY" -H "$J" -d "$1" \
	    "$BASE/v1/chat-messages" >"$2" 2>/dev/null &
	SPID=$!
}

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

# ====== Agent chat: chunks, with the tool call between ======

llm_script '{"responses": [
  {"chunks": ["Let me ", "look."], "tool_calls": [{"id": "w", "name": "weekday", "arguments": {"year": 2024, "month": 1, "day": 1}}]},
  {"chunks": ["It ", "was ", "a ", "Monday."]}]}'
key_stream /v1/chat-messages '{"inputs":{},"query":"day?","user":"u","response_mode":"streaming"}' \
    "$T_DIR/a.ev"
is "$(ev "$T_DIR/a.ev" | jq -r 'select(.event=="agent_message") | .answer' | jq -Rsc 'split("\n")[:-1]')" \
    '["Let me ","look.","It ","was ","a ","Monday."]' \
    "each chunk of each model call is one agent_message, in order"
# the order of events, a thought as <position>:<tool>:<has observation>
is "$(ev "$T_DIR/a.ev" | jq -r 'if .event == "agent_thought" then "t\(.position):\(.tool):\(.observation != "")"
    elif .event == "agent_message" then "m" else .event end' | uniq | tr '\n' ' ')" \
    "t1::false m t1:weekday:false t1:weekday:true t2::false m t2::false message_end " \
    "the thought opens with the first chunk; the tool call's thoughts come between the calls' chunks"
is "$(ev "$T_DIR/a.ev" | jq -r 'select(.event=="agent_thought" and .position==1) | .thought' | sort -u | tr '\n' '|')" \
    "|Let me look.|" "the first call's thought is its text, once it is whole"
is "$(ev "$T_DIR/a.ev" | jq -r 'select(.event=="agent_thought" and .observation != "") | .observation')" \
    '{"weekday": "January 1, 2024 is Monday."}' "... the observation the tool's result by tool name"
ALL=$(ev "$T_DIR/a.ev" | jq -j 'select(.event=="agent_message") | .answer')
c=$(ev "$T_DIR/a.ev" | jq -r 'select(.event=="message_end") | .conversation_id')
svc "$KEY" GET "/v1/messages?conversation_id=$c&user=u"
is "$(jqr '.data[0].answer')" "$ALL" "the message's answer is the chunks joined"
is "$(jqr '[.data[0].agent_thoughts[] | "\(.position):\(.tool):\(.thought)"] | join("|")')" \
    "1:weekday:Let me look.|2::It was a Monday." "... and its agent_thoughts one per model call"

# ====== Agent chat: a stop mid-answer ======

llm_script '{"responses": [
  {"tool_calls": [{"id": "w", "name": "weekday", "arguments": {"year": 2024, "month": 1, "day": 1}}]},
  {"chunks": ["one ", "two ", "three ", "four ", "five ", "six ", "seven ", "eight "], "delay": 0.4}]}'
stream '{"inputs":{},"query":"count","user":"u","response_mode":"streaming"}' "$T_DIR/s.ev"
wait_until 20 grep -q '"event":"agent_message"' "$T_DIR/s.ev"
ok $? "the answer starts streaming"
TASK=$(ev "$T_DIR/s.ev" | jq -r .task_id | head -1)
svc "$KEY" POST "/v1/chat-messages/$TASK/stop" -H "$J" -d '{"user":"u"}'
is "$STATUS $(jqr .result)" "200 success" "stop the agent mid-answer"
wait $SPID
got=$(ev "$T_DIR/s.ev" | jq -j 'select(.event=="agent_message") | .answer')
case $got in "one "*) r=0 ;; *) r=1 ;; esac
ok $r "the answer went out as far as it got ('$got')"
ok "$([ ${#got} -lt 40 ] && echo 0 || echo 1)" "... and no further: the stop cut it short"
is "$(ev "$T_DIR/s.ev" | jq -r .event | grep -c '^error$') $(ev "$T_DIR/s.ev" | jq -r .event | tail -1)" \
    "0 message_end" "a stopped agent chat ends with message_end, no error"
cut() { [ "$(curl -s "$LLM/_streams" | jq -r .cancelled)" = 1 ]; }
wait_until 5 cut
ok $? "the model's stream was cut off"
c=$(ev "$T_DIR/s.ev" | jq -r 'select(.event=="message_end") | .conversation_id')
svc "$KEY" GET "/v1/messages?conversation_id=$c&user=u"
is "$(jqr '.data[0].answer')" "$got" "the message keeps the answer so far"
req GET "/console/api/apps/$APP/workflow-runs?limit=1"
is "$(jqr '.data[0].status')" stopped "the run is stopped"

# ====== Agent chat, ReAct: the thought streams, not the action ======

# cot_agent_runner.py: the text outside the action's JSON (its "Thought:"
# and "Action:" markers dropped) goes out as agent_message chunks; a tool
# action's thought carries it; the final answer is the last chunk, and
# the message's answer.
sed 's/strategy: function_call/strategy: react/' "$T_DIR/agent.yml" >"$T_DIR/react.yml"
import_app "$T_DIR/react.yml"
llm_script '{"responses": [
  {"chunks": ["Thought: I need ", "the weekday.\nAction:\n```\n{\"action\": \"weekday\", ", "\"action_input\": {\"year\": 2000, \"month\": 1, \"day\": 1}}\n```"]},
  {"chunks": ["Thought: I know.\nAction: {\"action\": \"Final Answer\", ", "\"action_input\": \"A Saturday.\"}"]}]}'
key_stream /v1/chat-messages '{"inputs":{},"query":"what day was 2000-01-01","user":"u","response_mode":"streaming"}' \
    "$T_DIR/r.ev"
is "$(ev "$T_DIR/r.ev" | jq -j 'select(.event=="agent_message") | .answer' | jq -Rsc .)" \
    '" I need the weekday.\n\n I know.\n A Saturday."' \
    "ReAct: the thoughts stream without the actions, then the final answer"
is "$(ev "$T_DIR/r.ev" | jq -r 'select(.event=="agent_thought" and .tool != "") | "\(.position) \(.thought) \(.tool_input) \(.observation)"' | uniq | tr '\n' '|')" \
    '1 I need the weekday. {"weekday": {"year": 2000, "month": 1, "day": 1}} |1 I need the weekday. {"weekday": {"year": 2000, "month": 1, "day": 1}} {"weekday": "January 1, 2000 is Saturday."}|' \
    "... the tool action's thought, then its observation"
c=$(ev "$T_DIR/r.ev" | jq -r 'select(.event=="message_end") | .conversation_id')
svc "$KEY" GET "/v1/messages?conversation_id=$c&user=u"
is "$(jqr '.data[0].answer')" "A Saturday." "... the final answer is the message's answer"

# ====== Chatflow: the agent node's text streams ======

import_app "$TOP/tests/e2e/apps/agent.yml"
llm_script '{"responses": [
  {"match": "which day", "tool_calls": [{"id": "c2", "name": "weekday", "arguments": {"year": 2024, "month": 1, "day": 1}}]},
  {"chunks": ["A ", "Mon", "day."]}]}'
key_stream /v1/chat-messages '{"inputs":{},"query":"which day","user":"u","response_mode":"streaming"}' \
    "$T_DIR/c.ev"
# Dify's agent node: the strategy's text messages stream as the node's
# text (function_calling.py create_text_message per chunk)
is "$(ev "$T_DIR/c.ev" | jq -c 'select(.event=="message") | [.answer, .from_variable_selector]' | tr '\n' ' ')" \
    '["A ",["agent","text"]] ["Mon",["agent","text"]] ["day.",["agent","text"]] ' \
    "a chatflow's agent streams its answer chunk by chunk, from [agent, text]"
is "$(ev "$T_DIR/c.ev" | jq -r 'select(.event=="node_finished" and .data.node_id=="answer") | .data.outputs.answer')" \
    "A Monday." "the answer node's answer is the text, not sent again"
is "$(ev "$T_DIR/c.ev" | jq -s '(map(.event == "message") | index(true)) >
    (map(.event == "agent_log" and .data.label == "weekday" and .data.status == "success") | index(true))')" \
    true "the tool call's agent_log comes before the answer's chunks"
