# t_sandboxed.sh — a sandboxed chatflow through nginx with the local
# (bubblewrap) provider and the fake LLM: a file-upload node puts the input
# file into the workspace, a command node counts its bytes, the Agent (llm
# with computer_use) reads a skill and writes output/report.txt, which
# comes back as a file; the workspace carries over to the conversation's
# next turn, and Dify's workspace routes read it.
. "$(dirname "$0")/lib.sh"
need bwrap	# the local sandbox provider

start_llm_front || exit 1
report_app
req GET "$A/$APP"
is "$(jqr .runtime_type)" sandboxed "the app runs in the sandboxed runtime"

llm_script '{"responses": [
  {"match": "Write the report", "tool_calls": [{"id": "a", "name": "bash", "arguments": {"bash": "cat skills/report/SKILL.md"}}]},
  {"tool_calls": [{"id": "b", "name": "bash", "arguments": {"bash": "mkdir -p output && echo done > output/report.txt && cat data.txt && ls"}}]},
  {"text": "Report written."},
  {"match": "Write the report", "tool_calls": [{"id": "c", "name": "bash", "arguments": {"bash": "cat output/report.txt"}}]},
  {"text": "Still there."}
]}'

report_ask "$T_DIR/s.txt"
ev() { cat "$T_DIR/s.txt"; }
is "$(ev | jq -r 'select(.event=="message") | .answer' | tr -d '\n')" "Report written." \
    "the Agent's answer is the chat answer"
is "$(ev | jq -r 'select(.event=="agent_log" and .data.status=="start") | .data.data.tool_input' | head -1)" \
    "cat skills/report/SKILL.md" "agent_log shows each command"
reqs=$(curl -s "$LLM/_requests")
printf '%s' "$reqs" | jq -r '.[0].body.messages[0].content' | grep -q 'report: How to write the weekly report (skills/report/SKILL.md)'
ok $? "the model is told about the skill from its front matter"
is "$(printf '%s' "$reqs" | jq -r '.[0].body.tools[0].function.name')" bash "one bash tool"
printf '%s' "$reqs" | jq -r '.[1].body.messages[-1].content' | grep -qx 'Write one line: done.'
ok $? "the skill file was read inside the sandbox"
printf '%s' "$reqs" | jq -r '.[2].body.messages[-1].content' | grep -q '^numbers 1 2 3$'
ok $? "the uploaded file is in the workspace"
printf '%s' "$reqs" | jq -r '.[0].body.messages[1].content' | grep -q '^Write the report. The data has 14$'
ok $? "the command node counted the file's bytes in the sandbox"
RUN=$(ev | jq -r 'select(.event=="workflow_finished") | .workflow_run_id')
req GET "$A/$APP/workflow-runs/$RUN/node-executions"
is "$(jqr '.data[] | select(.node_id=="agent") | .outputs.files[0] | [.filename, .mime_type, .type] | join(" ")')" \
    "report.txt text/plain document" \
    "output/report.txt comes back as the node's file, its type from its name"
is "$(jqr '.data[] | select(.node_id=="agent") | .outputs.files[0].url' | sed 's/.*base64,//' | base64 -d)" \
    "done" "with the file's bytes"
is "$(jqr '.data[] | select(.node_id=="agent") | .outputs.generation.tool_calls | length')" 2 \
    "generation.tool_calls lists both commands"
is "$(jqr '.data[] | select(.node_id=="cmd") | .outputs.exit_code')" 0 "command exit code"
CONV=$(ev | jq -r 'select(.event=="message_end") | .conversation_id')
# Nothing of the sandbox is left on the host after the run.
is "$(find "$T_DIR/data/sandboxes" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)" 0 \
    "the sandbox was destroyed at the end"

# The next turn of the conversation finds the workspace as it was.
curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d "{\"inputs\":{\"data\":{\"type\":\"document\",\"transfer_method\":\"local_file\",\"upload_file_id\":\"$UP\"}},\"query\":\"again\",\"user\":\"u\",\"conversation_id\":\"$CONV\"}" \
    "$BASE/v1/chat-messages" >"$T_DIR/b.txt"
is "$(jq -r .answer "$T_DIR/b.txt")" "Still there." "second turn answered"
is "$(curl -s "$LLM/_requests" | jq -r '.[-1].body.messages[-1].content')" "done" \
    "output/report.txt from the first turn is still in the workspace"

# Dify's workspace routes read a conversation's workspace too.
req GET "$A/$APP/sandbox/files?conversation_id=$CONV&recursive=true"
is "$STATUS $(jqr 'map(.path) | index("output/report.txt") != null')" \
    "200 true" "sandbox/files lists the conversation's workspace"
is "$(jqr 'map(.path) | map(select(startswith("skills"))) | length')" 0 \
    "without skills/"
req GET "$A/$APP/sandbox/files/download?conversation_id=$CONV&user=u&path=output/report.txt"
is "$STATUS $(printf %s "$BODY")" "200 done" \
    "and downloads its files for its end user"
req GET "$A/$APP/sandbox/files?conversation_id=$CONV&user=someone-else"
is "$STATUS" 404 "another end user's conversation is 404"
req GET "$A/00000000-0000-4000-8000-000000000000/sandbox/files?conversation_id=$CONV"
is "$STATUS" 404 "so is the conversation under another app id"

# Deleting the conversation frees its stored workspace (a blob of its own).
blobs() { db_count blobs; }
before=$(blobs)
curl -sS -X DELETE -H "Authorization: Bearer $KEY" -H "$J" -d '{"user":"u"}' \
    "$BASE/v1/conversations/$CONV" >/dev/null
is "$(blobs)" "$((before - 1))" "deleting the conversation frees its workspace blob"
