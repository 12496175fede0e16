# t_sandboxed_tools.sh — the sandboxed runtime's Agent with the tools and
# skills Dify users bring, through nginx with the local (bubblewrap)
# provider and the fake LLM:
#  - a classic Agent with two builtin tools, upgraded: the model is offered
#    both as function tools beside bash, calls both, their results reach
#    the answer, agent_log and generation.tool_calls show them, and no
#    request to the model holds a raw §[ token;
#  - the answer streams from the Agent in several pieces, and
#    generation.sequence lists the calls and the content as Dify does;
#  - a skill whose SKILL.md references a file and a tool is compiled as it
#    is laid: the model reads the file's relative path and the tool's
#    name, is offered that tool, and cannot write under skills/.
. "$(dirname "$0")/lib.sh"
need bwrap	# the local sandbox provider

start_llm_front || exit 1

# ====== A classic Agent with two tools, upgraded ======

import_app "$TOP/tests/e2e/apps/agent.yml"
req POST "$A/$APP/upgrade-runtime"
is "$(jqr .result)" success "the classic Agent app upgrades"
is "$(jqr .skipped_nodes | jq length)" 0 "no node skipped"
UP_APP=$(jqr .new_app_id)
req POST "$A/$UP_APP/api-keys"
KEY=$(jqr .token)
req GET "$A/$UP_APP/workflows/draft/skills"
is "$(jqr '.nodes | map(.node_id + ":" + (.tool_dependencies | map(.provider + "/" + .tool_name + "/" + .type) | join(","))) | join(" ")')" \
    "agent:time/current_time/builtin,time/weekday/builtin" \
    "draft/skills: the Agent's skill prompt depends on both tools"
req GET "$A/$UP_APP/workflows/draft/nodes/agent/skills"
is "$(jqr '.tool_dependencies | length')" 2 "draft/nodes/agent/skills: the same, for one node"
req GET "$A/$UP_APP/workflows/draft/nodes/nope/skills"
is "$(printf '%s' "$BODY" | jq -c .)" '{"node_id":"nope","tool_dependencies":[]}' "an unknown node has none"

llm_script '{"responses": [
  {"match": "which day", "tool_calls": [
     {"id": "c1", "name": "current_time", "arguments": {"timezone": "UTC"}},
     {"id": "c2", "name": "weekday", "arguments": {"year": 2024, "month": 1, "day": 1}}]},
  {"chunks": ["It is ", "the year ", "and a Monday."]}
]}'
key_stream /v1/chat-messages '{"inputs":{},"query":"which day is it","user":"u","response_mode":"streaming"}' \
    "$T_DIR/s.txt"
ev() { sed -n 's/^data: //p' "$T_DIR/s.txt"; }
is "$(ev | jq -r 'select(.event=="message") | .answer' | tr -d '\n')" \
    "It is the year and a Monday." "the Agent's answer is the chat answer"
n=$(ev | jq -r 'select(.event=="message") | .answer' | grep -c .)
[ "$n" -ge 3 ]
ok $? "the answer streams in pieces as the model sends them ($n message events)"
reqs=$(curl -s "$LLM/_requests")
is "$(printf '%s' "$reqs" | jq -r '.[0].body.tools | map(.function.name) | join(",")')" \
    "bash,current_time,weekday" "the model is offered bash and both tools"
is "$(printf '%s' "$reqs" | jq -r '[.[0].body.tools[1].function.parameters.properties | keys[]] | join(",")')" \
    "timezone" "settings the node fixes are not offered (format)"
printf '%s' "$reqs" | jq -r '.[].raw' | grep -q '§\[' && r=1 || r=0
ok $r "no request to the model holds a raw §[ token"
printf '%s' "$reqs" | jq -r '.[0].body.tools[0].function.description' |
    grep -q 'The sandbox has no network access'
ok $? "the bash tool says what the sandbox can reach (sandbox_tool_note)"
printf '%s' "$reqs" | jq -r '.[0].body.messages[0].content' |
    grep -q '^\[\[Tool: current_time\], \[Tool: weekday\]\]$'
ok $? "the system prompt names the tools as the model calls them"
second=$(printf '%s' "$reqs" | jq '.[1].body.messages')
is "$(printf '%s' "$second" | jq -r '[.[] | .role] | join(",")')" "system,user,assistant,tool,tool" \
    "the second call carries both calls and both results"
is "$(printf '%s' "$second" | jq -r '.[3].content')" "$(date -u +%Y)" \
    "current_time ran with the node's fixed format"
is "$(printf '%s' "$second" | jq -r '.[4].content')" "January 1, 2024 is Monday." \
    "weekday ran with the model's arguments"
is "$(ev | jq -c 'select(.event=="agent_log" and .data.label=="weekday" and .data.status=="start") | .data.data')" \
    '{"tool_name":"weekday","tool_input":{"year":2024,"month":1,"day":1}}' \
    "agent_log: a tool call starts with its arguments"
is "$(ev | jq -r 'select(.event=="agent_log" and .data.label=="weekday" and .data.status=="success") | .data.data.output')" \
    "January 1, 2024 is Monday." "agent_log: ... and ends with what the model saw"
RUN=$(ev | jq -r 'select(.event=="workflow_finished") | .workflow_run_id')
req GET "$A/$UP_APP/workflow-runs/$RUN/node-executions"
is "$(jqr '.data[] | select(.node_id=="agent") | .outputs.generation.tool_calls | map(.name + "=" + .status) | join(",")')" \
    "current_time=success,weekday=success" "generation.tool_calls lists both calls"
is "$(jqr '.data[] | select(.node_id=="agent") | .outputs.generation.sequence' | jq -c .)" \
    '[{"type":"tool_call","index":0},{"type":"tool_call","index":1},{"type":"content","start":0,"end":28}]' \
    "generation.sequence: the calls, then the content"
is "$(jqr '.data[] | select(.node_id=="agent") | .outputs.generation.content')" \
    "It is the year and a Monday." "generation.content"

# ====== A skill referencing a file and a tool ======

import_app "$TOP/tests/e2e/apps/sandboxed.yml"
req POST "$A/$APP/assets/folders" -H "$J" -d '{"name":"report"}'
SK=$(jqr .id)
printf 'a,b\n1,2\n' >"$T_DIR/table.csv"
req POST "$A/$APP/assets/files" -F "file=@$T_DIR/table.csv" -F "parent_id=$SK"
TABLE=$(jqr .id)
printf -- '---\nname: report\ndescription: How to write the weekly report\n---\nRead §[file].[app].[%s]§, then date it with §[tool].[time].[weekday].[u-1]§.\n' \
    "$TABLE" >"$T_DIR/SKILL.md"
req POST "$A/$APP/assets/files" -F "file=@$T_DIR/SKILL.md" -F "parent_id=$SK"
is "$STATUS" 201 "SKILL.md uploaded"
printf 'numbers 1 2 3\n' >"$T_DIR/data.txt"
UP=$(curl -s -H "Authorization: Bearer $KEY" -F "file=@$T_DIR/data.txt" -F user=u \
    "$BASE/v1/files/upload" | jq -r .id)

llm_script '{"responses": [
  {"match": "Write the report", "tool_calls": [{"id": "a", "name": "bash", "arguments": {"bash": "cat skills/report/SKILL.md"}}]},
  {"tool_calls": [{"id": "b", "name": "bash", "arguments": {"bash": "echo x > skills/report/new.txt; rm -f skills/report/table.csv; ls skills/report; touch skills/report/z"}}]},
  {"text": "Done."}
]}'
curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d "{\"inputs\":{\"data\":{\"type\":\"document\",\"transfer_method\":\"local_file\",\"upload_file_id\":\"$UP\"}},\"query\":\"go\",\"user\":\"u\",\"response_mode\":\"streaming\"}" \
    "$BASE/v1/chat-messages" >"$T_DIR/s.txt"
is "$(ev | jq -r 'select(.event=="message") | .answer' | tr -d '\n')" "Done." "the skill run answers"
# what the admin Run page reads: each command with its output and exit code
is "$(ev | jq -c 'select(.event=="agent_log" and .data.label=="bash") | [.data.status, .data.data.tool_name, .data.data.tool_input, .data.data.exit_code]' | head -2 | tr '\n' ' ')" \
    '["start","bash","cat skills/report/SKILL.md",null] ["success","bash","cat skills/report/SKILL.md",0] ' \
    "agent_log: a bash command starts, then succeeds with exit code 0"
is "$(ev | jq -c 'select(.event=="agent_log" and .data.label=="bash" and .data.status!="start") | [.data.status, .data.data.exit_code]' | tail -1)" \
    '["error",1]' "... a failing command ends as an error with its exit code"
ev | jq -r 'select(.event=="agent_log" and .data.status=="success") | .data.data.output' | grep -q '^Read ./table.csv'
ok $? "... and with the output the model saw"
reqs=$(curl -s "$LLM/_requests")
is "$(printf '%s' "$reqs" | jq -r '.[1].body.messages[-1].content' | grep '^Read')" \
    "Read ./table.csv, then date it with [Tool: weekday]." \
    "SKILL.md reaches the model compiled: the file's relative path, the tool's name"
is "$(printf '%s' "$reqs" | jq -r '.[0].body.tools | map(.function.name) | join(",")')" \
    "bash,weekday" "the tool the skill references is offered"
out=$(printf '%s' "$reqs" | jq -r '.[2].body.messages[-1].content')
printf '%s' "$out" | grep -q 'Read-only file system'
ok $? "the Agent cannot write under skills/"
printf '%s' "$out" | grep -qx 'table.csv'
ok $? "... nor remove a file there"
printf '%s' "$reqs" | jq -r '.[].raw' | grep -q '§\[' && r=1 || r=0
ok $r "no request of the skill run holds a raw §[ token"

finish
