# t_security.sh — authorization through nginx: ids of another app or another
# end user answer exactly as unknown ones (a stop 200 success that stops
# nothing, as Dify's; run detail, traces, keys,
# files, assets, conversations, messages); links in answers never come from
# the Host header; the FastCGI unix socket is not open to every local user.
. "$(dirname "$0")/lib.sh"

start_front || exit 1

# ====== Another app's run, task, trace, key, file, asset ======

import_app "$TOP/tests/e2e/apps/slow.yml"
APP_A=$APP KEY_A=$KEY
import_app "$TOP/tests/e2e/apps/slow.yml"
APP_B=$APP KEY_B=$KEY

# A run of app A by alice, long enough to be stopped.
curl -sS -N -H "Authorization: Bearer $KEY_A" -H "$J" \
    -d '{"inputs":{"seconds":3},"user":"alice","response_mode":"streaming"}' \
    "$BASE/v1/workflows/run" >"$T_DIR/a.txt" &
CURL=$!
TASK=$(sse_first "$T_DIR/a.txt" .task_id)
ok "$([ -n "$TASK" ] && [ "$TASK" != null ] && echo 0 || echo 1)" \
    "app A's run started"
svc "$KEY_B" POST "/v1/workflows/tasks/$TASK/stop" -H "$J" -d '{"user":"alice"}'
is "$STATUS $(jqr .result)" "200 success" "app B's key cannot stop app A's task (Dify's 200 all the same)"
svc "$KEY_B" POST "/v1/chat-messages/$TASK/stop" -H "$J" -d '{"user":"alice"}'
is "$STATUS $(jqr .code)" "400 not_chat_app" "... nor through the chat stop route"
svc "$KEY_B" POST "/v1/completion-messages/$TASK/stop" -H "$J" -d '{"user":"alice"}'
is "$STATUS $(jqr .code)" "400 app_unavailable" "... nor through the completion stop route"
svc "$KEY_A" POST "/v1/workflows/tasks/$TASK/stop" -H "$J" -d '{"user":"mallory"}'
is "$STATUS" 200 "another end user of app A cannot stop alice's task"
svc "$KEY_A" POST "/v1/workflows/tasks/$TASK/stop" -H "$J" -d '{}'
is "$STATUS $(jqr .code)" "400 invalid_param" "stop needs the user, as in Dify"
svc "$KEY_A" POST "/v1/workflows/tasks/00000000-0000-7000-8000-000000000000/stop" \
    -H "$J" -d '{"user":"alice"}'
UNKNOWN="$STATUS $BODY"
svc "$KEY_B" POST "/v1/workflows/tasks/$TASK/stop" -H "$J" -d '{"user":"alice"}'
is "$STATUS $BODY" "${UNKNOWN/00000000-0000-7000-8000-000000000000/$TASK}" \
    "another app's task answers exactly as an unknown one"
wait $CURL
is "$(sed -n 's/^data: //p' "$T_DIR/a.txt" | jq -r 'select(.event=="workflow_finished") | .data.status')" \
    succeeded "app A's run was not stopped by any of them"

svc "$KEY_B" GET "/v1/workflows/run/$TASK"
is "$STATUS" 404 "app B's key cannot read app A's run"
svc "$KEY_A" GET "/v1/workflows/run/$TASK"
is "$STATUS $(jqr .status)" "200 succeeded" "app A's key can"
req GET "$A/$APP_B/workflow-runs/$TASK"
is "$STATUS" 404 "console: app A's run under app B is 404"
req GET "$A/$APP_B/workflow-runs/$TASK/node-executions"
is "$STATUS" 404 "console: its node executions under app B are 404"
req GET "$A/$APP_A/workflow-runs/$TASK/node-executions"
is "$STATUS $(jqr '.data | length')" "200 4" "console: under app A they are listed"

# The stop of the right app and user works, on a new run.
curl -sS -N -H "Authorization: Bearer $KEY_A" -H "$J" \
    -d '{"inputs":{"seconds":3},"user":"alice","response_mode":"streaming"}' \
    "$BASE/v1/workflows/run" >"$T_DIR/a2.txt" &
CURL=$!
TASK2=$(sse_first "$T_DIR/a2.txt" .task_id)
svc "$KEY_A" POST "/v1/workflows/tasks/$TASK2/stop" -H "$J" -d '{"user":"alice"}'
is "$STATUS $(jqr .result)" "200 success" "alice stops her own task"
wait $CURL
is "$(sed -n 's/^data: //p' "$T_DIR/a2.txt" | jq -r 'select(.event=="workflow_finished") | .data.status')" \
    stopped "... and it stops"

# Keys: app A's key id under app B.
req GET "$A/$APP_A/api-keys"
KID_A=$(jqr '.data[0].id')
req DELETE "$A/$APP_B/api-keys/$KID_A"
is "$STATUS" 404 "console: app A's key cannot be deleted under app B"
svc "$KEY_A" GET /v1/info
is "$STATUS" 200 "... and app A's key still works"

# Files: an upload of app A is not an input of app B's runs.
printf 'secret notes' >"$T_DIR/n.txt"
svc "$KEY_A" POST /v1/files/upload -F "file=@$T_DIR/n.txt;type=text/plain" -F user=alice
UP=$(jqr .id)
is "$STATUS" 201 "app A's file is uploaded"
svc "$KEY_B" POST /v1/workflows/run -H "$J" \
    -d "{\"inputs\":{\"seconds\":0},\"files\":[{\"type\":\"document\",\"transfer_method\":\"local_file\",\"upload_file_id\":\"$UP\"}],\"user\":\"alice\",\"response_mode\":\"blocking\"}"
APPB="$STATUS $BODY"
svc "$KEY_B" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"seconds":0},"files":[{"type":"document","transfer_method":"local_file","upload_file_id":"00000000-0000-7000-8000-000000000000"}],"user":"alice","response_mode":"blocking"}'
is "${APPB/$UP/00000000-0000-7000-8000-000000000000}" "$STATUS $BODY" \
    "app B running with app A's upload is refused exactly as with an unknown one"
is "${APPB%% *} $(printf '%s' "${APPB#* }" | jq -r .code)" "400 invalid_param" \
    "... with 400, as Dify refuses an invalid file"
is "$(printf '%s' "$APPB" | grep -c 'secret notes')" 0 "... nor see its bytes"

# Assets: a file of app A under app B.
printf '# skill' >"$T_DIR/SKILL.md"
req POST "$A/$APP_A/assets/files" -F "file=@$T_DIR/SKILL.md"
NODE=$(jqr .id)
is "$STATUS" 201 "an asset of app A"
req GET "$A/$APP_B/assets/files/$NODE"
is "$STATUS" 404 "console: app A's asset read under app B is 404"
req GET "$A/$APP_B/assets/files/$NODE/download"
is "$STATUS" 404 "... its download too"
req PUT "$A/$APP_B/assets/files/$NODE" -H "$J" -d '{"content":"x"}'
is "$STATUS" 404 "... a write too"
req POST "$A/$APP_B/assets/nodes/$NODE/rename" -H "$J" -d '{"name":"y.md"}'
is "$STATUS" 404 "... a rename too"
req DELETE "$A/$APP_B/assets/nodes/$NODE"
is "$STATUS" 404 "... a delete too"
req GET "$A/$APP_A/assets/files/$NODE"
is "$STATUS $(jqr .content)" "200 # skill" "app A's asset is intact"

# ====== Another end user's conversation ======

import_app "$TOP/tests/e2e/apps/echo_chat.yml"
CHAT=$APP KEY_C=$KEY
svc "$KEY_C" POST /v1/chat-messages -H "$J" \
    -d '{"inputs":{},"query":"my diary","user":"alice","response_mode":"blocking"}'
CONV=$(jqr .conversation_id)
is "$STATUS $(jqr .answer)" "200 echo my diary" "alice starts a conversation"

svc "$KEY_C" GET "/v1/messages?conversation_id=$CONV&user=mallory"
is "$STATUS $(jqr .code) $(jqr .message)" "404 not_found Conversation Not Exists." \
    "mallory cannot read alice's messages"
is "$(printf '%s' "$BODY" | grep -c 'my diary')" 0 "... nothing of them leaks"
svc "$KEY_C" GET "/v1/messages?conversation_id=$CONV"
is "$STATUS" 400 "messages need the user"
svc "$KEY_C" POST /v1/chat-messages -H "$J" \
    -d "{\"inputs\":{},\"query\":\"and?\",\"user\":\"mallory\",\"conversation_id\":\"$CONV\",\"response_mode\":\"blocking\"}"
is "$STATUS $(jqr .message)" "404 Conversation Not Exists." \
    "mallory cannot continue alice's conversation"
svc "$KEY_C" POST /v1/chat-messages -H "$J" \
    -d "{\"inputs\":{},\"query\":\"and?\",\"user\":\"mallory\",\"conversation_id\":\"$CONV\",\"response_mode\":\"streaming\"}"
is "$STATUS $(jqr .message)" "404 Conversation Not Exists." \
    "... streaming neither (refused before the stream starts)"
svc "$KEY_C" DELETE "/v1/conversations/$CONV" -H "$J" -d '{"user":"mallory"}'
is "$STATUS $(jqr .message)" "404 Conversation Not Exists." \
    "mallory cannot delete alice's conversation"
svc "$KEY_C" DELETE "/v1/conversations/$CONV" -H "$J" -d '{}'
is "$STATUS" 400 "a delete needs the user"
svc "$KEY_C" GET "/v1/conversations?user=mallory"
is "$STATUS $(jqr '.data | length')" "200 0" "mallory's list does not show it"
svc "$KEY_C" GET "/v1/conversations"
is "$STATUS" 400 "conversations need the user"
svc "$KEY_A" GET "/v1/messages?conversation_id=$CONV&user=alice"
is "$STATUS" 400 "a workflow app's key has no messages (Dify's mode error)"
import_app "$TOP/tests/e2e/apps/echo_chat.yml"
KEY_C2=$KEY
svc "$KEY_C2" GET "/v1/messages?conversation_id=$CONV&user=alice"
is "$STATUS $(jqr .message)" "404 Conversation Not Exists." \
    "another chat app's key cannot read it even with alice's name"

svc "$KEY_C" POST /v1/chat-messages -H "$J" \
    -d "{\"inputs\":{},\"query\":\"more\",\"user\":\"alice\",\"conversation_id\":\"$CONV\",\"response_mode\":\"blocking\"}"
is "$STATUS $(jqr .answer)" "200 echo more" \
    "alice continues her conversation, intact"
svc "$KEY_C" GET "/v1/messages?conversation_id=$CONV&user=alice"
is "$STATUS $(jqr '[.data[].query] | join(",")')" "200 my diary,more" \
    "alice reads both messages"
svc "$KEY_C" DELETE "/v1/conversations/$CONV" -H "$J" -d '{"user":"alice"}'
is "$STATUS" 204 "alice deletes it"

# ====== Links never come from the Host header ======

req GET "$A/$APP_A" -H 'Host: evil.example'
is "$STATUS $(jqr .api_base_url)" "200 /v1" \
    "api_base_url is relative without server.public_url"
req GET "$A/$APP_A/export-bundle" -H 'Host: evil.example'
is "$(printf '%s' "$BODY" | grep -c evil)" 0 "download_url ignores the Host header"
is "$(jqr .download_url | sed 's/?.*//')" \
    "/console/api/files/app-bundles/$APP_A/without-secrets/download" \
    "... and is relative"
req GET "/flow$A/$APP_A" -H 'Host: evil.example'
is "$(jqr .api_base_url)" "/flow/v1" "relative links keep the mount prefix"

stop_nginx
kill "$FC_PID"; wait "$FC_PID" 2>/dev/null
FLOWCGI_SERVER_PUBLIC_URL=https://flow.example.com start_flowcgi pub
start_nginx "127.0.0.1:$FC_PORT"
req GET "/flow$A/$APP_A" -H 'Host: evil.example'
is "$(jqr .api_base_url)" "https://flow.example.com/flow/v1" \
    "with server.public_url links start there, with the mount prefix"
stop_nginx
kill "$FC_PID"; wait "$FC_PID" 2>/dev/null
FLOWCGI_SERVER_PUBLIC_URL=https://example.com/apps/ start_flowcgi pub2
start_nginx "127.0.0.1:$FC_PORT"
req GET "/flow$A/$APP_A/export-bundle" -H 'Host: evil.example'
is "$(jqr .download_url | sed 's/?.*//')" \
    "https://example.com/apps/console/api/files/app-bundles/$APP_A/without-secrets/download" \
    "a public_url with a path names the mount point itself"
stop_nginx
kill "$FC_PID"; wait "$FC_PID" 2>/dev/null

# ====== The unix socket ======

SOCK=$T_DIR/fc.sock
FLOWCGI_SERVER_DATA_DIR=$T_DIR/data "$FLOWCGI_BIN" serve --listen "unix:$SOCK" \
    >>"$T_DIR/unix.log" 2>&1 </dev/null &
UPID=$!
FLOWCGI_PIDS="$FLOWCGI_PIDS $UPID"
i=0; while [ ! -S "$SOCK" ]; do i=$((i + 1)); [ $i -gt 200 ] && break; sleep 0.05; done
is "$(stat -c %a "$SOCK")" 660 "the unix socket is 0660 by default, not 0666"
kill "$UPID"; wait "$UPID" 2>/dev/null
getent group nogroup >/dev/null && GRP=nogroup || GRP=$(id -gn)
FLOWCGI_SERVER_DATA_DIR=$T_DIR/data FLOWCGI_SERVER_SOCKET_MODE=0600 \
FLOWCGI_SERVER_SOCKET_GROUP=$GRP "$FLOWCGI_BIN" serve --listen "unix:$SOCK" \
    >>"$T_DIR/unix.log" 2>&1 </dev/null &
UPID=$!
FLOWCGI_PIDS="$FLOWCGI_PIDS $UPID"
i=0; while [ ! -S "$SOCK" ]; do i=$((i + 1)); [ $i -gt 200 ] && break; sleep 0.05; done
is "$(stat -c '%a %G' "$SOCK")" "600 $GRP" "server.socket_mode and socket_group apply"
kill "$UPID"; wait "$UPID" 2>/dev/null
FLOWCGI_SERVER_SOCKET_MODE=0999 "$FLOWCGI_BIN" serve --listen "unix:$SOCK" \
    >"$T_DIR/bad.log" 2>&1 </dev/null
is "$([ $? -ne 0 ] && echo failed):$(grep -c 'server.socket_mode' "$T_DIR/bad.log")" "failed:1" \
    "a mode that is not octal stops start-up naming the setting"
FLOWCGI_SERVER_DATA_DIR=$T_DIR/data FLOWCGI_SERVER_SOCKET_GROUP=no-such-group-x \
    timeout 10 "$FLOWCGI_BIN" serve --listen "unix:$SOCK" >"$T_DIR/bad2.log" 2>&1 </dev/null
rc=$?
is "$([ $rc -ne 0 ] && [ $rc -ne 124 ] && echo failed):$(grep -c 'no-such-group-x' "$T_DIR/bad2.log")" "failed:1" \
    "an unknown socket group stops start-up naming it"
