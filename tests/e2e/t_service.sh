# t_service.sh — Dify's service API through nginx: API keys, workflow runs
# blocking and streamed (SSE through nginx unbuffered), chatflow messages
# with conversations, stop, run detail, parameters, info, run history.
. "$(dirname "$0")/lib.sh"

# two real Dify exports, kept with the tests
CORPUS=$TOP/tests/e2e/apps/dify
start_front || exit 1

# A workflow with a branch: if-else on the query.
import_file "$CORPUS/difytest__conditional_hello_branching_workflow.yml"
WF=$(jqr .app_id)
req POST $A/$WF/api-keys
is "$STATUS $(jqr .type) $(jqr '.token | startswith("app-")')" "201 app true" \
    "an API key is made"
KEY=$(jqr .token)
KID=$(jqr .id)
KEY1=$KEY
req GET $A/$WF/api-keys
is "$(jqr '.data | length') $(jqr '.data[0].token | contains("...")')" \
    "1 true" "keys are listed masked, never in full"
is "$(jqr ".data[0].token" | grep -c "$KEY")" 0 "the full key is not listed"

svc() {	# svc <method> <path> [curl args]: with the app key
	m=$1; p=$2; shift 2
	BODY=$(curl -sS -X "$m" -o - -w '\n%{http_code}' \
	    -H "Authorization: Bearer $KEY" "$@" "$BASE$p")
	STATUS=${BODY##*
}
	BODY=${BODY%
*}
}

svc POST /v1/workflows/run -H "$J" -d '{"inputs":{"query":"hello"},"user":"u1","response_mode":"blocking"}'
is "$STATUS $(jqr .data.status) $(jqr '.data.outputs | keys | join(",")')" \
    "200 succeeded true" "blocking run takes the true branch"
RUN=$(jqr .workflow_run_id)
is "$(jqr .task_id)" "$RUN" "task_id is returned"
is "$(jqr '.data.total_steps > 0')" true "steps are counted"
svc POST /v1/workflows/run -H "$J" -d '{"inputs":{"query":"bye"},"user":"u1"}'
is "$STATUS $(jqr '.data.outputs | keys | join(",")')" "200 false" \
    "omitted response_mode is blocking; the other branch"
svc GET "/v1/workflows/run/$RUN"
is "$STATUS $(jqr .status) $(jqr .inputs.query)" "200 succeeded hello" \
    "run detail"

# Streaming: SSE through nginx, each event a data: line.
curl -sS -N -D "$T_DIR/sse.h" -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{"query":"hello"},"user":"u1","response_mode":"streaming"}' \
    "$BASE/v1/workflows/run" >"$T_DIR/sse.txt"
grep -qi '^content-type: text/event-stream' "$T_DIR/sse.h"
ok $? "streaming answers text/event-stream"
events=$(sed -n 's/^data: //p' "$T_DIR/sse.txt" | jq -r .event | tr '\n' ' ')
is "$events" "workflow_started node_started node_finished node_started node_finished node_started node_finished workflow_finished " \
    "events in Dify's order"
is "$(sed -n 's/^data: //p' "$T_DIR/sse.txt" | jq -r 'select(.event=="workflow_finished") | .data.status')" \
    succeeded "workflow_finished says succeeded"
is "$(sed -n 's/^data: //p' "$T_DIR/sse.txt" | jq -r 'select(.event=="node_finished") | .data.node_type' | tr '\n' ' ')" \
    "start if-else end " "node events name their types"
is "$(awk 'NF' "$T_DIR/sse.txt" | grep -vc '^data: ')" 0 "every line is a data: line"

# Bad requests.
svc POST /v1/workflows/run -H "$J" -d '{"user":"u1"}'
is "$STATUS $(jqr .code)" "400 invalid_param" "inputs are required"
svc POST /v1/workflows/run -H "$J" -d '{"inputs":{},"user":"u1","response_mode":"fast"}'
is "$STATUS" 400 "unknown response_mode"
svc POST /v1/workflows/run -H "$J" -d '{"inputs":{},"user":"u1"}'
is "$STATUS $(jqr '.message | test("query")')" "400 true" \
    "a missing required input is refused, naming it"
svc POST /v1/chat-messages -H "$J" -d '{"inputs":{},"query":"x","user":"u1"}'
is "$STATUS $(jqr .code)" "400 not_chat_app" "a workflow app is not a chat app"
KEY=app-wrongwrongwrongwrongwrong
svc POST /v1/workflows/run -H "$J" -d '{"inputs":{},"user":"u1"}'
is "$STATUS $(jqr .code)" "401 unauthorized" "a wrong key is 401"
KEY=$TOKEN
svc GET /v1/info
is "$STATUS" 401 "the admin token is not an app key"

# Parameters and info.
req POST $A/$WF/api-keys
KEY=$(jqr .token)
svc GET /v1/parameters
is "$STATUS $(jqr '.user_input_form[0]["text-input"].variable')" "200 query" \
    "parameters list the start inputs"
svc GET /v1/info
is "$STATUS $(jqr .mode)" "200 workflow" "info"

# Stop: a stop of a finished task succeeds and changes nothing.
svc POST "/v1/workflows/tasks/$RUN/stop" -H "$J" -d '{"user":"u1"}'
is "$STATUS $(jqr .result)" "200 success" "stop answers success"
svc GET "/v1/workflows/run/$RUN"
is "$(jqr .status)" succeeded "a finished run stays succeeded"

# Run history in the console.
req GET "$A/$WF/workflow-runs?limit=2"
is "$STATUS $(jqr .total) $(jqr '.data | length') $(jqr .has_more)" "200 3 2 true" \
    "run history pages, newest first"
req GET "$A/$WF/workflow-runs/$RUN/node-executions"
is "$STATUS $(jqr '[.data[].node_type] | join(",")')" "200 start,if-else,end" \
    "a run's node trace"
is "$(jqr '.data[1].outputs.selected_case_id')" true "the trace keeps outputs"

# Keys are revoked.
req DELETE "$A/$WF/api-keys/$KID"
is "$STATUS" 204 "revoke a key"
# every serving thread remembers the last key it resolved: none may
# still take the revoked one
n=0
KEY2=$KEY
KEY=$KEY1
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	svc POST /v1/workflows/run -H "$J" \
	    -d '{"inputs":{"query":"x"},"user":"u1","response_mode":"blocking"}'
	[ "$STATUS" = 401 ] && n=$((n + 1))
done
is "$n" 20 "a revoked key is refused at once, on every thread"
KEY=$KEY2

# Chatflow: answer streamed as message events; conversations continue.
import_file "$CORPUS/difytest__answer_end_with_text.yml"
CH=$(jqr .app_id)
req POST $A/$CH/api-keys
KEY=$(jqr .token)
svc POST /v1/chat-messages -H "$J" -d '{"inputs":{},"query":"hi","user":"u2","response_mode":"blocking"}'
is "$STATUS $(jqr .event) $(jqr .mode)" "200 message advanced-chat" "blocking chat message"
CONV=$(jqr .conversation_id)
ANS=$(jqr .answer)
is "$ANS" "prefixhisuffix" \
    "the answer is rendered: the answer node's prefix{{#sys.query#}}suffix"
key_stream /v1/chat-messages "{\"inputs\":{},\"query\":\"again\",\"user\":\"u2\",\"response_mode\":\"streaming\",\"conversation_id\":\"$CONV\"}" \
    "$T_DIR/chat.txt"
ev=$(sed -n 's/^data: //p' "$T_DIR/chat.txt" | jq -r .event | sort -u | tr '\n' ' ')
is "$ev" "message message_end node_finished node_started workflow_finished workflow_started " \
    "chat streams message and message_end with the workflow events"
is "$(sed -n 's/^data: //p' "$T_DIR/chat.txt" | jq -r 'select(.event=="message_end") | .conversation_id')" \
    "$CONV" "the conversation continues"
is "$(sed -n 's/^data: //p' "$T_DIR/chat.txt" | jq -r 'select(.event=="message") | .answer' | tr -d '\n')" \
    "${ANS/hi/again}" "message events carry the answer"
svc POST /v1/chat-messages -H "$J" -d '{"inputs":{},"query":"x","user":"u2","conversation_id":"00000000-0000-7000-8000-000000000000"}'
is "$STATUS $(jqr .message)" "404 Conversation Not Exists." "an unknown conversation is refused"
svc GET "/v1/conversations?user=u2"
is "$STATUS $(jqr '.data | length') $(jqr '.data[0].id')" "200 1 $CONV" \
    "the user's conversations are listed"
svc GET "/v1/conversations?user=someone-else"
is "$(jqr '.data | length')" 0 "another user's list is empty"
svc GET "/v1/messages?conversation_id=$CONV&user=u2"
is "$STATUS $(jqr '[.data[].query] | join(",")')" "200 hi,again" \
    "messages oldest first, with their queries"
is "$(jqr '.data[1].answer')" "${ANS/hi/again}" "messages keep their answers"
svc GET "/v1/messages"
is "$STATUS" 400 "messages need a conversation_id"
svc GET "/v1/messages?conversation_id=$CONV"
is "$STATUS $(jqr .message)" "400 user is required" "messages need the user"

# Uploads: multipart, then a run that uses the file as an input.
printf 'hello file' >"$T_DIR/note.txt"
svc POST /v1/files/upload -F "file=@$T_DIR/note.txt;type=text/plain" -F user=u2
is "$STATUS $(jqr .name) $(jqr .size) $(jqr .extension)" "201 note.txt 10 txt" \
    "a file is uploaded"
svc POST /v1/files/upload -H "$J" -d '{"user":"u2"}'
is "$STATUS $(jqr .code)" "400 invalid_multipart" "an upload needs a multipart body"
svc POST /v1/files/upload -H 'Content-Type: multipart/form-data; boundary=x' --data-binary $'--x\r\nContent-Disposition: form-data; name="user"\r\n\r\nu\r\n--x--'
is "$STATUS $(jqr .code)" "400 no_file_uploaded" "an upload without a file part"

svc DELETE "/v1/conversations/$CONV" -H "$J" -d '{"user":"u2"}'
is "$STATUS" 204 "a conversation is deleted"
svc GET "/v1/messages?conversation_id=$CONV&user=u2"
is "$STATUS" 404 "its messages go with it"

# Deleting the app takes its runs with it.
req DELETE "$A/$WF"
req GET "$A/$WF/workflow-runs"
is "$STATUS" 404 "the app's runs go with the app"
is "$(db_count runs)" \
    "$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE$A/$CH/workflow-runs" | jq .total)" \
    "only the other app's runs remain in storage"
req GET /healthz
is "$STATUS" 200 "server healthy at the end"
