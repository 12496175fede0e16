# t_agent.sh — the classic Agent node through nginx against the fake LLM:
# function calling with two builtin tools called in parallel, then an
# answer; ReAct parsing; agent_log events; the tool results the model saw.
. "$(dirname "$0")/lib.sh"

start_llm_front || exit 1
import_app "$TOP/tests/e2e/apps/agent.yml"

llm_script '{"responses": [
  {"match": "which day", "tool_calls": [
     {"id": "c1", "name": "current_time", "arguments": {"timezone": "UTC"}},
     {"id": "c2", "name": "weekday", "arguments": {"year": 2024, "month": 1, "day": 1}}]},
  {"text": "It is 2024-era and a Monday."}
]}'
key_stream /v1/chat-messages '{"inputs":{},"query":"which day is it","user":"u","response_mode":"streaming"}' \
    "$T_DIR/s.txt"
ev() { sed -n 's/^data: //p' "$T_DIR/s.txt"; }
is "$(ev | jq -r 'select(.event=="message_end") | .event')" message_end "the run ends with message_end"
is "$(ev | jq -r 'select(.event=="message") | .answer' | tr -d '\n')" \
    "It is 2024-era and a Monday." "the agent's answer streams as the answer"
is "$(ev | jq -r 'select(.event=="agent_log" and .data.status=="success" and .data.label!="ROUND") | .data.label' | sort | tr '\n' ' ')" \
    "current_time weekday " "agent_log events for both tool calls"
reqs=$(curl -s "$LLM/_requests")
is "$(printf '%s' "$reqs" | jq 'length')" 2 "two model calls: tools, then the answer"
is "$(printf '%s' "$reqs" | jq -r '.[0].body.tools | map(.function.name) | join(",")')" \
    "current_time,weekday" "the model is offered both tools"
is "$(printf '%s' "$reqs" | jq -r '[.[0].body.tools[0].function.parameters.properties | keys[]] | join(",")')" \
    "timezone" "settings the node fixes are not offered (format)"
second=$(printf '%s' "$reqs" | jq '.[1].body.messages')
is "$(printf '%s' "$second" | jq -r '[.[] | .role] | join(",")')" "system,user,assistant,tool,tool" \
    "the second call carries the calls and both results"
is "$(printf '%s' "$second" | jq -r '.[3].content')" "$(date -u +%Y)" \
    "current_time ran with the node's fixed format"
is "$(printf '%s' "$second" | jq -r '.[4].content')" "January 1, 2024 is Monday." \
    "weekday ran with the model's arguments"

# A model that never stops calling tools hits maximum_iterations.
llm_script '{"responses": [{"repeat": true, "tool_calls": [{"id": "x", "name": "current_time", "arguments": {}}]}]}'
curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"loop","user":"u"}' "$BASE/v1/chat-messages" >"$T_DIR/b.txt"
# a failed run's blocking answer is Dify's error (ValueError "Run failed")
is "$(jq -r '"\(.status) \(.code)"' "$T_DIR/b.txt")" "400 invalid_param" "a run that never answers fails"
jq -r .message "$T_DIR/b.txt" | grep -q "^Run failed: .*maximum_iterations"
ok $? "... naming maximum_iterations"
is "$(curl -s "$LLM/_requests" | jq 'length')" 4 "it stopped after maximum_iterations (4) calls"

# ReAct: the model answers with JSON actions in its text.
sed 's/agent_strategy_name: function_calling/agent_strategy_name: ReAct/' \
    "$TOP/tests/e2e/apps/agent.yml" >"$T_DIR/react.yml"
import_app "$T_DIR/react.yml"
llm_script '{"responses": [
  {"text": "Thought: I need the weekday.\nAction:\n```\n{\"action\": \"weekday\", \"action_input\": {\"year\": 2000, \"month\": 1, \"day\": 1}}\n```"},
  {"text": "Thought: I know.\nAction:\n```\n{\"action\": \"Final Answer\", \"action_input\": \"A Saturday.\"}\n```"}
]}'
curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"what day was 2000-01-01","user":"u"}' "$BASE/v1/chat-messages" >"$T_DIR/r.txt"
is "$(jq -r .answer "$T_DIR/r.txt")" "A Saturday." "ReAct: the Final Answer is the answer"
reqs=$(curl -s "$LLM/_requests")
is "$(printf '%s' "$reqs" | jq -r '.[0].body.tools // "none"')" none "ReAct offers no native tools"
printf '%s' "$reqs" | jq -r '.[0].body.messages[0].content' | grep -q 'Valid "action" values: "Final Answer" or current_time, weekday'
ok $? "ReAct's system prompt lists the tools"
is "$(printf '%s' "$reqs" | jq -r '.[1].body.messages[-1].content')" \
    "Observation: January 1, 2000 is Saturday." "the observation goes back to the model"
