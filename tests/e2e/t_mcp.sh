# t_mcp.sh — MCP end to end through nginx against the real MCP reference
# server, @modelcontextprotocol/server-everything (pinned in
# tests/mcp-everything/package-lock.json, installed with `npm ci` when its
# node_modules is missing), run in Streamable HTTP and in HTTP+SSE mode on
# loopback: both registered through the console's tool-provider/mcp
# routes (secrets never answered, sealed at rest), then used by a classic
# agent app (agent-chat, the fake LLM scripting the tool calls), by an
# agent node naming the server in mcp_server as Dify's MCP agent exports
# do, and by tool nodes of a workflow; each run keeps one session and
# closes it at its end (the server's own log shows the DELETE, or the SSE
# client going). A loopback server named in app content but not
# registered is refused. Without node and npm the checks are skipped.
. "$(dirname "$0")/lib.sh"

EV=$TOP/tests/mcp-everything
need node npm	# to run @modelcontextprotocol/server-everything
# installed once for the tests that share the folder (npm-install.sh)
"$TOP/tests/npm-install.sh" "$EV" \
    node_modules/@modelcontextprotocol/server-everything 2>"$T_DIR/npm.log"
ok $? "@modelcontextprotocol/server-everything is installed (npm ci when missing)" ||
    { sed 's/^/# /' "$T_DIR/npm.log" | tail -20; exit 1; }
EV_MAIN=$EV/node_modules/@modelcontextprotocol/server-everything/dist/index.js

# everything <transport> <log>: the reference server on a free loopback
# port; sets EV_PORT.
everything() {
	EV_PORT=$(free_port)
	(cd "$EV" && PORT=$EV_PORT exec node -r ./loopback.cjs "$EV_MAIN" \
	    "$1") >"$2" 2>&1 &
	FLOWCGI_PIDS="$FLOWCGI_PIDS $!"
	wait_port "$EV_PORT" || { echo "# server-everything $1 did not start:"; \
	    sed 's/^/# /' "$2"; return 1; }
}
everything streamableHttp "$T_DIR/ev_http.log" || exit 1
HTTP_PORT=$EV_PORT
HTTP_URL=http://127.0.0.1:$EV_PORT/mcp
everything sse "$T_DIR/ev_sse.log" || exit 1
SSE_URL=http://127.0.0.1:$EV_PORT/sse

# how often the server's log says what (grep -c of a fixed string)
logs() { grep -cF "$2" "$1"; }
# waits up to 5 s for the log to say it n times
wait_log() {
	local i=0
	while [ "$(logs "$1" "$2")" -lt "$3" ]; do
		i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.05
	done
	logs "$1" "$2"
}

start_llm_front || exit 1
MCP=/console/api/workspaces/current/tool-provider/mcp

# ====== Registering ======

jq -n --arg u "$HTTP_URL" '{name: "everything", server_url: $u,
    server_identifier: "everything", icon: "🧰", icon_type: "emoji",
    icon_background: "#FFEAD5", headers: {"X-Api-Key": "tok-9f8e7d"},
    configuration: {timeout: 30, sse_read_timeout: 300}}' >"$T_DIR/reg.json"
req POST "$MCP" -H "$J" --data-binary @"$T_DIR/reg.json"
is "$STATUS" 200 "POST tool-provider/mcp registers the Streamable HTTP server"
ID=$(jqr .id)
is "$(jqr '.type + " " + .server_identifier + " " + (.is_team_authorization | tostring)')" \
    "mcp everything true" "... Dify's provider entity, connected at once"
is "$(jqr '[.tools[].name] | index("get-sum") != null and index("echo") != null')" true \
    "... with the server's tools listed"
is "$(jqr '.tools[] | select(.name=="get-sum") | [.parameters[].name, .parameters[0].type, .parameters[0].form] | join(",")')" \
    "a,b,number,llm" "... each as Dify's ToolApiEntity"
is "$(jqr .server_url)" "http://127.0.0.1:$HTTP_PORT/******" "... the URL's path masked"
is "$(jqr '.masked_headers["X-Api-Key"]')" "[__HIDDEN__]" "... the header's value masked"
is "$(jqr '.icon.content + .icon.background')" "🧰#FFEAD5" "... an emoji icon"
printf '%s' "$BODY" | grep -q 'tok-9f8e7d'
ok $((! $?)) "the secret header is not in the answer"
req POST "$MCP" -H "$J" --data-binary @"$T_DIR/reg.json"
is "$STATUS $(jqr .message)" "400 MCP tool everything already exists" \
    "the same name again is refused, as Dify does"

jq -n --arg u "$SSE_URL" '{name: "everything-sse", server_url: $u,
    server_identifier: "everything-sse", icon: "x", icon_type: "image"}' \
    >"$T_DIR/reg2.json"
req POST "$MCP" -H "$J" --data-binary @"$T_DIR/reg2.json"
SSE_ID=$(jqr .id)
is "$STATUS $(jqr .is_team_authorization) $(jqr '[.tools[].name] | index("echo") != null')" \
    "200 true true" "the HTTP+SSE server registers and lists its tools"

req GET /console/api/workspaces/current/tools/mcp
is "$STATUS $(jqr 'map(.name) | join(",")')" "200 everything,everything-sse" \
    "GET tools/mcp lists both"
printf '%s' "$BODY" | grep -q -e 'tok-9f8e7d' -e '/mcp"' -e '/sse"'
ok $((! $?)) "... without the secret or the URLs' paths"
req GET "$MCP/tools/$ID"
is "$STATUS $(jqr .name)" "200 everything" "GET tool-provider/mcp/tools/{id}"
printf '%s' "$BODY" | grep -q 'tok-9f8e7d'
ok $((! $?)) "... without the secret"
req GET "$MCP/update/$ID"
is "$STATUS $(jqr '[.tools[].name] | index("get-sum") != null')" "200 true" \
    "GET tool-provider/mcp/update/{id} reads the tools again"
req POST "$MCP/auth" -H "$J" -d "{\"provider_id\": \"$ID\"}"
is "$STATUS $(jqr .result)" "200 success" "POST tool-provider/mcp/auth connects"
store_lacks tok-9f8e7d everything-sse
ok $? "the secret header is sealed in the store"
# the exchanges above each closed their session
n=$(logs "$T_DIR/ev_http.log" "Session initialized with ID")
is "$(wait_log "$T_DIR/ev_http.log" "Received session termination request" "$n")" \
    "$n" "every console exchange closed its session ($n DELETEs)"

# ====== A classic agent app ======

import_app "$TOP/tests/e2e/apps/mcp_agent_chat.yml"
before=$(logs "$T_DIR/ev_http.log" "Session initialized with ID")
llm_script '{"responses": [
  {"match": "add", "tool_calls": [{"id": "c1", "name": "get-sum", "arguments": {"a": 2, "b": 40}}]},
  {"tool_calls": [{"id": "c2", "name": "echo", "arguments": {"message": "forty-two"}}]},
  {"text": "It is 42."}]}'
key_stream /v1/chat-messages '{"inputs":{},"query":"add 2 and 40","user":"u","response_mode":"streaming"}' \
    "$T_DIR/a.txt"
ev() { sed -n 's/^data: //p' "$1"; }
is "$(ev "$T_DIR/a.txt" | jq -r 'select(.event=="agent_message") | .answer' | tr -d '\n')" \
    "It is 42." "the agent app answers"
is "$(ev "$T_DIR/a.txt" | jq -r 'select(.event=="agent_thought" and .observation != "") | .tool + ": " + .observation' | tr '\n' '|')" \
    'get-sum: {"get-sum": "The sum of 2 and 40 is 42."}|echo: {"echo": "Echo: forty-two"}|' \
    "agent_thought carries each MCP tool's answer"
reqs=$(curl -s "$LLM/_requests")
is "$(printf '%s' "$reqs" | jq -r '.[0].body.tools | map(.function.name) | join(",")')" \
    "get-sum,echo" "the model is offered the two MCP tools"
is "$(printf '%s' "$reqs" | jq -r '.[0].body.tools[0].function.parameters.required | join(",")')" \
    "a,b" "... with the server's input schema"
is "$(($(logs "$T_DIR/ev_http.log" "Session initialized with ID") - before))" 1 \
    "the run used one MCP session for its listing and both calls"
sid=$(grep -F "Session initialized with ID" "$T_DIR/ev_http.log" | tail -1 | sed 's/.*ID: //')
is "$(wait_log "$T_DIR/ev_http.log" "Received session termination request for session $sid" 1)" 1 \
    "... and closed it with DELETE and its Mcp-Session-Id when the run ended"

# ====== An MCP tool's image as the answer's message file ======

# easy_ui_based_generate_task_pipeline: a tool's file is a message_file
# event (MessageFileStreamResponse: id, type, belongs_to, url), the
# thought's message_files name it, GET /v1/messages lists it
# (fields/message_fields.py message_file_fields)
sed 's/tool_name: echo, tool_label: echo/tool_name: get-tiny-image, tool_label: get-tiny-image/' \
    "$TOP/tests/e2e/apps/mcp_agent_chat.yml" >"$T_DIR/img_agent.yml"
import_app "$T_DIR/img_agent.yml"
llm_script '{"responses": [
  {"tool_calls": [{"id": "i1", "name": "get-tiny-image", "arguments": {}}]},
  {"text": "Here it is."}]}'
key_stream /v1/chat-messages '{"inputs":{},"query":"show the logo","user":"u","response_mode":"streaming"}' \
    "$T_DIR/img.txt"
mf=$(ev "$T_DIR/img.txt" | jq -c 'select(.event=="message_file")')
is "$(printf '%s' "$mf" | jq -r '[.type, .belongs_to, (.url | test("^/v1/files/[0-9a-f-]+/preview$"))] | join(" ")')" \
    "image assistant true" "an MCP tool's image: a message_file event"
is "$(printf '%s' "$mf" | jq -r 'keys | join(",")')" \
    "belongs_to,conversation_id,created_at,event,id,message_id,task_id,type,url" "... with Dify's fields"
FID=$(printf '%s' "$mf" | jq -r .id)
is "$(ev "$T_DIR/img.txt" | jq -r 'select(.event=="agent_thought" and .tool == "get-tiny-image" and .observation != "") | .message_files | join(",")')" \
    "$FID" "... named by the call's agent_thought"
curl -sS -o "$T_DIR/img.png" -H "Authorization: Bearer $KEY" "$BASE$(printf '%s' "$mf" | jq -r .url)"
is "$(head -c 4 "$T_DIR/img.png" | od -An -c | tr -d ' ')" "211PNG" "... and its url gives the PNG"
c=$(ev "$T_DIR/img.txt" | jq -r 'select(.event=="message_end") | .conversation_id')
svc "$KEY" GET "/v1/messages?conversation_id=$c&user=u"
is "$(jqr '.data[0].message_files | map(.id + " " + .type + " " + .belongs_to + " " + .mime_type) | join(",")')" \
    "$FID image assistant image/png" "GET /v1/messages: the message's message_files"
is "$(jqr '.data[0].agent_thoughts[] | select(.tool == "get-tiny-image") | .files | join(",")')" \
    "$FID" "... and the thought's files"

# ====== An agent node naming the server (Dify's MCP agent) ======

sed "s|MCP_SERVER_URL|$SSE_URL|" "$TOP/tests/e2e/apps/mcp_agent.yml" >"$T_DIR/agent.yml"
import_app "$T_DIR/agent.yml"
llm_script '{"responses": [
  {"tool_calls": [{"id": "s1", "name": "echo", "arguments": {"message": "over sse"}},
                  {"id": "s2", "name": "current_time", "arguments": {}}]},
  {"text": "done"}]}'
key_stream /v1/chat-messages '{"inputs":{},"query":"echo","user":"u","response_mode":"streaming"}' \
    "$T_DIR/n.txt"
is "$(ev "$T_DIR/n.txt" | jq -r 'select(.event=="message") | .answer' | tr -d '\n')" \
    "done" "an agent node with mcp_server answers"
reqs=$(curl -s "$LLM/_requests")
is "$(printf '%s' "$reqs" | jq -r '.[0].body.tools | map(.function.name) | (index("current_time") == 0 and index("echo") > 0 and index("get-sum") > 0)')" \
    true "... offering its own tool and every tool of the mcp_server"
is "$(printf '%s' "$reqs" | jq -r '.[1].body.messages[] | select(.role=="tool") | .content' | head -1)" \
    "Echo: over sse" "the MCP tool ran over HTTP+SSE"
is "$(wait_log "$T_DIR/ev_sse.log" "Client Disconnected" "$(logs "$T_DIR/ev_sse.log" "Client Connected")")" \
    "$(logs "$T_DIR/ev_sse.log" "Client Connected")" \
    "every HTTP+SSE session was closed (the event stream ended)"

# The corpus's own MCP apps, as exported, with their server swapped for
# the local one (registered, so trusted).
CORPUS=${FLOWCGI_CORPUS:-$TOP/../shared/dsl-corpus/files}/svcvit__MCP-amap.yml
if [ -f "$CORPUS" ]; then
	sed "s|https://mcp.amap.com/sse?key=|$SSE_URL|" "$CORPUS" >"$T_DIR/amap.yml"
	import_app "$T_DIR/amap.yml"
	llm_script '{"responses": [
	  {"tool_calls": [{"id": "m1", "name": "get-sum", "arguments": {"a": 1, "b": 1}}]},
	  {"text": "two"}]}'
	key_stream /v1/chat-messages '{"inputs":{},"query":"1+1","user":"u","response_mode":"streaming"}' \
	    "$T_DIR/c.txt"
	is "$(ev "$T_DIR/c.txt" | jq -r 'select(.event=="message") | .answer' | tr -d '\n')" \
	    "two" "the corpus's svcvit__MCP-amap.yml runs as exported"
	is "$(curl -s "$LLM/_requests" | jq -r '.[1].body.messages[] | select(.role=="tool") | .content')" \
	    "The sum of 1 and 1 is 2." "... its agent called the MCP tool"
else
	skip "../shared/dsl-corpus is not here: the corpus's MCP app is not run"
	skip "../shared/dsl-corpus is not here"
fi

# ====== Tool nodes of a workflow ======

import_app "$TOP/tests/e2e/apps/mcp_workflow.yml"
WF_KEY=$KEY
before=$(logs "$T_DIR/ev_http.log" "Session initialized with ID")
svc "$KEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"word":"hello"},"user":"u","response_mode":"blocking"}'
is "$(jqr '.data.status')" succeeded "the workflow with two MCP tool nodes succeeds"
is "$(jqr '.data.outputs.sum')" "The sum of 19 and 23 is 42." "a tool node's text from get-sum"
is "$(jqr '.data.outputs.echo')" "Echo: said hello" "a tool node's text from echo, its input rendered"
is "$(($(logs "$T_DIR/ev_http.log" "Session initialized with ID") - before))" 1 \
    "both tool nodes went over one session"
sid=$(grep -F "Session initialized with ID" "$T_DIR/ev_http.log" | tail -1 | sed 's/.*ID: //')
is "$(wait_log "$T_DIR/ev_http.log" "Received session termination request for session $sid" 1)" 1 \
    "... closed with DELETE when the run ended"

# ====== What app content may not do ======

# The same loopback server, named by a URL the admin did not register
# (another path): the SSRF guard refuses it (http.allow_private is off).
sed "s|MCP_SERVER_URL|$HTTP_URL?unregistered=1|" \
    "$TOP/tests/e2e/apps/mcp_agent.yml" >"$T_DIR/bad.yml"
import_app "$T_DIR/bad.yml"
before=$(logs "$T_DIR/ev_http.log" "Received MCP POST request")
key_stream /v1/chat-messages '{"inputs":{},"query":"x","user":"u","response_mode":"streaming"}' \
    "$T_DIR/bad.txt"
ev "$T_DIR/bad.txt" | jq -r 'select(.event=="error" or .event=="workflow_finished") | .message // .data.error' |
    grep -q 'refused to connect to 127.0.0.1.*http.allow_private'
ok $? "an unregistered loopback MCP server named in app content is refused"
is "$(logs "$T_DIR/ev_http.log" "Received MCP POST request")" "$before" \
    "... and nothing reached it"

# ====== Update and delete ======

jq -n --arg id "$ID" '{provider_id: $id, name: "everything", server_url: "[__HIDDEN__]",
    server_identifier: "everything", icon: "🧰", icon_type: "emoji",
    headers: {"X-Api-Key": "[__HIDDEN__]"}}' >"$T_DIR/upd.json"
req PUT "$MCP" -H "$J" --data-binary @"$T_DIR/upd.json"
is "$STATUS $(jqr .result)" "200 success" "PUT tool-provider/mcp with the masks"
svc "$WF_KEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"word":"again"},"user":"u","response_mode":"blocking"}'
is "$(jqr '.data.outputs.echo')" "Echo: said again" "... kept the URL: the tools still run"
req DELETE "$MCP" -H "$J" -d "{\"provider_id\": \"$SSE_ID\"}"
is "$STATUS $(jqr .result)" "200 success" "DELETE tool-provider/mcp"
req GET /console/api/workspaces/current/tools/mcp
is "$(jqr 'map(.name) | join(",")')" everything "... it is gone"
req DELETE "$MCP" -H "$J" -d "{\"provider_id\": \"$SSE_ID\"}"
is "$STATUS" 404 "... deleting it again is 404"
