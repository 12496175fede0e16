#!/bin/bash
# t_hostile.sh — hostile requests through nginx, each answered as it must
# be: a NUL (%00) in a query value, a multipart field or a JSON string is
# refused with 400 JSON, never read cut short (user=admin%00x is no
# "admin"); a JSON body of another type than an object is 400, never 500;
# an upload link works once (a second PUT is 403, and of PUTs racing on
# one link exactly one wins); every status line carries its reason phrase
# (206 Partial Content, 416 Range Not Satisfiable, ...); a stored DSL's
# value of the wrong type, or an unknown app, is no 500 "out of memory".
. "$(dirname "$0")/lib.sh"

start_front || exit 1

# json4xx <want status> <description>: BODY is {code, message, status}
# with that status
json4xx() {
	printf '%s' "$BODY" | jq -e --argjson s "$1" \
	    '(.code|type)=="string" and (.message|type)=="string" and .status==$s' \
	    >/dev/null 2>&1 && [ "$STATUS" = "$1" ]
	ok $? "$2"
	[ "$STATUS" = "$1" ] || echo "#   got $STATUS: ${BODY:0:300}"
}

cat >"$T_DIR/wf.yml" <<'YML'
app: {mode: workflow, name: Hostile workflow}
kind: app
version: 0.6.0
workflow:
  features: {}
  graph:
    edges:
    - {id: e1, source: start, sourceHandle: source, target: end, targetHandle: target}
    nodes:
    - id: start
      data: {type: start, title: Start, variables: []}
    - id: end
      data: {type: end, title: End, outputs: []}
YML
import_app "$T_DIR/wf.yml"
WF=$APP
WKEY=$KEY
import_app "$TOP/tests/e2e/apps/echo_chat.yml"
CHAT=$APP
CKEY=$KEY
ok "$([ -n "$WF" ] && [ "$WF" != null ] && [ -n "$CHAT" ] && echo 0 || echo 1)" \
    "two apps imported"

# ---- 1. a NUL never cuts a value short ----
for q in 'user=admin%00x' 'path=%00' 'user=admin&path=a%00b' \
    'conversation_id=%00' 'us%00er=admin' 'recursive=true%00'; do
	req GET "$A/$WF/sandbox/files?$q"
	json4xx 400 "sandbox/files?$q: 400 JSON"
done
req GET "$A/$WF/sandbox/files?user=admin%00x"
printf '%s' "$(jqr .message)" | grep -q 'NUL'
ok $? "... saying the value holds a NUL"
req GET "$A/$WF/sandbox/files/download?path=%00"
json4xx 400 "sandbox/files/download?path=%00: 400 JSON"
req GET "$A?name=a%00b"
json4xx 400 "apps?name=a%00b: 400 JSON"
req GET "$A?page=1%00"
json4xx 400 "apps?page=1%00: 400 JSON"
svc "$CKEY" GET "/v1/conversations?user=admin%00x"
json4xx 400 "/v1/conversations?user=admin%00x: 400 JSON"
svc "$CKEY" GET "/v1/messages?user=u&conversation_id=%00"
json4xx 400 "/v1/messages?conversation_id=%00: 400 JSON"
# an encoded "%00" is three characters, not a NUL
req GET "$A?name=a%2500b"
is "$STATUS" 200 "apps?name=a%2500b is a name with a percent sign: 200"

# JSON strings: the parser refuses \u0000 anywhere
req POST "$A/$WF/sandbox/reset" -H "$J" -d '{"user":"admin\u0000x"}'
json4xx 400 "sandbox/reset {user: \"admin\\u0000x\"}: 400 JSON"
req POST "$A/$WF/sandbox/files/download" -H "$J" -d '{"path":"\u0000"}'
json4xx 400 "sandbox/files/download {path: \"\\u0000\"}: 400 JSON"
svc "$WKEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{},"user":"u\u0000v","response_mode":"blocking"}'
json4xx 400 "/v1/workflows/run {user: \"u\\u0000v\"}: 400 JSON"

# multipart: a text field, a field name or a file name with a NUL
printf 'hello' >"$T_DIR/f.txt"
printf 'u\0v' >"$T_DIR/user.bin"
svc "$CKEY" POST /v1/files/upload -F "file=@$T_DIR/f.txt;type=text/plain" \
    -F "user=<$T_DIR/user.bin"
json4xx 400 "/v1/files/upload with user=u<NUL>v: 400 JSON"
B=hostileboundary
printf -- '--%s\r\nContent-Disposition: form-data; name="file"; filename="a\0.txt"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--%s--\r\n' \
    $B $B >"$T_DIR/mp.bin"
svc "$CKEY" POST /v1/files/upload \
    -H "Content-Type: multipart/form-data; boundary=$B" \
    --data-binary @"$T_DIR/mp.bin"
json4xx 400 "/v1/files/upload with a NUL in the file name: 400 JSON"
req POST "$A/$WF/assets/files" -F "file=@$T_DIR/f.txt" \
    -F "name=<$T_DIR/user.bin"
json4xx 400 "assets/files with name=u<NUL>v: 400 JSON"

# ---- 2. a body of another JSON type than an object ----
for b in '[]' '[1]' '"s"' '1' 'true' 'null' '[{"inputs":{}}]'; do
	req POST "$A/$WF/workflows/draft/run" -H "$J" --data-binary "$b"
	json4xx 400 "draft/run with body $b: 400 JSON"
done
for p in "$A" "$A/$WF/copy" "$A/$WF/workflows/draft" \
    "$A/$WF/workflows/publish" "$A/imports" "$A/$WF/model-config" \
    /console/api/workspaces/current/sandbox-provider/local/config; do
	req POST "$p" -H "$J" --data-binary '[]'
	json4xx 400 "POST ${p#$A} with body []: 400 JSON"
done
svc "$WKEY" POST /v1/workflows/run -H "$J" --data-binary '[1]'
json4xx 400 "/v1/workflows/run with body [1]: 400 JSON"
svc "$CKEY" POST /v1/chat-messages -H "$J" --data-binary '"s"'
json4xx 400 "/v1/chat-messages with body \"s\": 400 JSON"

# a failed lookup or a value of the wrong type in a stored DSL is no
# "out of memory"
cat >"$T_DIR/odd.yml" <<'YML'
app: {mode: advanced-chat, name: Odd}
kind: app
version: 0.6.0
workflow:
  features: {}
  graph:
    edges: []
    nodes:
    - id: start
      data: {type: start, title: Start, variables: [1, x, null, {variable: a, type: text-input}]}
    - id: ans
      data: {type: answer, title: Answer, answer: hi}
YML
import_app "$T_DIR/odd.yml"
svc "$KEY" GET /v1/parameters
is "$STATUS $(jqr '.user_input_form | length')" "200 1" \
    "/v1/parameters of start variables that are no objects: 200, the one input"
req POST "$A/00000000-0000-7000-8000-000000000000/api-keys"
is "$STATUS $(jqr .message)" "404 app not found" \
    "api-keys of an unknown app: 404 app not found (not the key limit)"

# ---- 3. an upload link works once ----
req POST "$A/$WF/assets/files/upload" -H "$J" -d '{"name":"once.txt","size":4}'
is "$STATUS" 201 "files/upload gives a link"
UP=$(jqr .upload_url)
NODE=$(jqr .node.id)
put() {	# put <link> <bytes>: STATUS, BODY
	BODY=$(curl -sS -X PUT -H 'Content-Type: application/octet-stream' \
	    --data-binary "$2" -o - -w '\n%{http_code}' "$BASE$1")
	STATUS=${BODY##*
}
	BODY=${BODY%
*}
}
put "$UP" first
is "$STATUS" 204 "the first PUT to the link: 204"
put "$UP" again
json4xx 403 "a second PUT to the same link: 403 JSON"
printf '%s' "$(jqr .message)" | grep -q 'used already'
ok $? "... saying the link was used"
req GET "$A/$WF/assets/files/$NODE"
is "$(jqr .content)" first "the file holds the first PUT's bytes"
# racing PUTs on one fresh link: exactly one 204, the others 403
req POST "$A/$WF/assets/files/upload" -H "$J" -d '{"name":"race.txt","size":1}'
UP=$(jqr .upload_url)
RACERS=
for i in 1 2 3 4 5 6 7 8; do
	curl -sS -X PUT -H 'Content-Type: application/octet-stream' \
	    --data-binary "r$i" -o /dev/null -w '%{http_code}\n' "$BASE$UP" \
	    >"$T_DIR/race.$i" &
	RACERS="$RACERS $!"
done
wait $RACERS	# the curls only: the servers are children too
is "$(cat "$T_DIR"/race.* | sort | uniq -c | awk '{print $1 "x" $2}' | xargs)" \
    "1x204 7x403" "8 PUTs racing on one link: one 204, seven 403"
# a bundle import's upload link too
req POST "$A/imports-bundle/prepare"
UP=$(jqr .upload_url)
put "$UP" "not a zip"
FIRST=$STATUS
put "$UP" "not a zip"
json4xx 403 "a bundle import's upload link used twice: 403 JSON (first: $FIRST)"

# ---- 4. every status line has its reason phrase ----
printf '0123456789' >"$T_DIR/ten.txt"
FILE=$(curl -sS -H "Authorization: Bearer $CKEY" \
    -F "file=@$T_DIR/ten.txt;type=text/plain" -F user=u \
    "$BASE/v1/files/upload" | jq -r .id)
line() {	# line <curl args...>: the status line of the answer
	curl -sS -o /dev/null -D - "$@" | head -1 | tr -d '\r'
}
is "$(line -H "Authorization: Bearer $CKEY" -H 'Range: bytes=2-5' \
    "$BASE/v1/files/$FILE/preview")" "HTTP/1.1 206 Partial Content" \
    "a preview's range: 206 Partial Content"
is "$(line -H "Authorization: Bearer $CKEY" -H 'Range: bytes=50-' \
    "$BASE/v1/files/$FILE/preview")" "HTTP/1.1 416 Range Not Satisfiable" \
    "a range past the end: 416 Range Not Satisfiable"
is "$(line -X PUT -H 'Content-Type: text/plain' --data-binary x "$BASE$UP")" \
    "HTTP/1.1 403 Forbidden" "a spent link: 403 Forbidden"
is "$(line -H "Authorization: Bearer $TOKEN" -H "$J" -X POST \
    --data-binary '[]' "$BASE$A")" "HTTP/1.1 400 Bad Request" \
    "a body of the wrong type: 400 Bad Request"

req GET /healthz
is "$STATUS" 200 "the server is healthy at the end"
