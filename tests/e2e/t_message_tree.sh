# t_message_tree.sh — Dify's message tree through nginx and the fake LLM:
# parent_message_id kept on each message (UUID_NIL when the client sends
# none, null for the first of a thread), returned by GET messages; a
# regenerated answer (the same parent) stands beside the first, and the
# model's memory follows the thread a message names, not the newest
# messages; a parent that is not of the conversation (another
# conversation's, app's or end user's, an unknown id) is 404, one that is
# no UUID 400; the same through the web API with a passport.
. "$(dirname "$0")/lib.sh"

start_llm_front || exit 1
NIL=00000000-0000-0000-0000-000000000000
app() {	# app <name>: imports a chat app, sets APP and KEY
	printf 'app: {mode: chat, name: %s}\nkind: app\nversion: 0.6.0\nmodel_config:\n  model: {provider: openai, name: gpt-4o-mini, mode: chat, completion_params: {}}\n  pre_prompt: Be brief.\n' \
	    "$1" >"$T_DIR/$1.yml"
	import_app "$T_DIR/$1.yml"
}
# chat <body>: a blocking /v1/chat-messages with $KEY; STATUS and BODY
chat() {
	svc "$KEY" POST /v1/chat-messages -H "$J" -d "$1"
}
# sent <n>: the roles and texts of the fake LLM's request n (0-based),
# the system prompt left out, as "role:text|role:text..."
sent() {
	curl -s "$LLM/_requests" | jq -r --argjson n "$1" \
	    '[.[$n].body.messages[] | select(.role != "system") | .role + ":" + (.content | if type == "string" then . else (map(.text // "") | join("")) end)] | join("|")'
}

app tree
K1=$KEY
A1=$APP
llm_script '{"responses": [{"text": "A1"}, {"text": "A2"}, {"text": "A2b"}, {"text": "A3"}, {"text": "A4"}]}'
chat '{"inputs":{},"query":"q1","user":"u1","response_mode":"blocking"}'
is "$STATUS" 200 "the first message"
CONV=$(jqr .conversation_id)
M1=$(jqr .message_id)
chat "{\"inputs\":{},\"query\":\"q2\",\"user\":\"u1\",\"conversation_id\":\"$CONV\",\"parent_message_id\":\"$M1\"}"
is "$STATUS $(jqr .answer)" "200 A2" "a message after its parent"
M2=$(jqr .message_id)
is "$(sent 1)" "user:q1|assistant:A1|user:q2" "its memory is its parent's thread"
# regenerate q2: the same parent as M2
chat "{\"inputs\":{},\"query\":\"q2\",\"user\":\"u1\",\"conversation_id\":\"$CONV\",\"parent_message_id\":\"$M1\"}"
is "$STATUS $(jqr .answer)" "200 A2b" "a regenerated answer"
M2B=$(jqr .message_id)
is "$(sent 2)" "user:q1|assistant:A1|user:q2" \
    "the regenerated answer's memory leaves the answer it stands beside out"
# a message after the first answer, M2, though M2b is newer
chat "{\"inputs\":{},\"query\":\"q3\",\"user\":\"u1\",\"conversation_id\":\"$CONV\",\"parent_message_id\":\"$M2\"}"
M3=$(jqr .message_id)
is "$(sent 3)" "user:q1|assistant:A1|user:q2|assistant:A2|user:q3" \
    "memory follows the thread M2 ends, not the newest messages"
# no parent_message_id: after the newest (M3), as Dify's UUID_NIL
chat "{\"inputs\":{},\"query\":\"q4\",\"user\":\"u1\",\"conversation_id\":\"$CONV\"}"
M4=$(jqr .message_id)
is "$(sent 4)" "user:q1|assistant:A1|user:q2|assistant:A2|user:q3|assistant:A3|user:q4" \
    "without a parent a message follows the newest and its thread"

svc "$K1" GET "/v1/messages?conversation_id=$CONV&user=u1"
is "$(jqr '[.data[] | .query + ">" + (.parent_message_id // "null")] | join(" ")')" \
    "q1>$NIL q2>$M1 q2>$M1 q3>$M2 q4>$NIL" \
    "GET messages: every message with its parent (UUID_NIL when none was sent)"
is "$(jqr '[.data[].id] | join(" ")')" "$M1 $M2 $M2B $M3 $M4" "oldest first, siblings included"

# an explicit null: a thread of its own (Dify's web app's first message)
llm_script '{"responses": [{"text": "R1"}]}'
chat "{\"inputs\":{},\"query\":\"r\",\"user\":\"u1\",\"conversation_id\":\"$CONV\",\"parent_message_id\":null}"
is "$STATUS" 200 "parent_message_id null"
is "$(sent 0)" "user:r" "a null parent: no memory"
svc "$K1" GET "/v1/messages?conversation_id=$CONV&user=u1&limit=1"
is "$(jqr '.data[0].parent_message_id')" null "stored as null"

# parents that are not of this conversation
llm_script '{"responses": [{"text": "x"}]}'
chat '{"inputs":{},"query":"other","user":"u1","response_mode":"blocking"}'
CONV2=$(jqr .conversation_id)
M_OTHER=$(jqr .message_id)
chat "{\"inputs\":{},\"query\":\"q\",\"user\":\"u1\",\"conversation_id\":\"$CONV\",\"parent_message_id\":\"$M_OTHER\"}"
is "$STATUS $(jqr .message)" "404 Message Not Exists." "another conversation's message is 404"
chat "{\"inputs\":{},\"query\":\"q\",\"user\":\"u1\",\"parent_message_id\":\"$M1\"}"
is "$STATUS $(jqr .message)" "404 Message Not Exists." "a parent in a new conversation is 404"
chat "{\"inputs\":{},\"query\":\"q\",\"user\":\"u1\",\"conversation_id\":\"$CONV\",\"parent_message_id\":\"0190a000-0000-7000-8000-000000000000\"}"
is "$STATUS" 404 "an unknown parent is 404"
chat "{\"inputs\":{},\"query\":\"q\",\"user\":\"u1\",\"conversation_id\":\"$CONV\",\"parent_message_id\":\"nope\"}"
is "$STATUS $(jqr .code)" "400 invalid_param" "a parent that is no UUID is 400"
chat "{\"inputs\":{},\"query\":\"q\",\"user\":\"u1\",\"conversation_id\":\"$CONV\",\"parent_message_id\":7}"
is "$STATUS $(jqr .code)" "400 invalid_param" "a parent that is no string is 400"
svc "$K1" POST /v1/chat-messages -H "$J" -N \
    -d "{\"inputs\":{},\"query\":\"q\",\"user\":\"u1\",\"conversation_id\":\"$CONV2\",\"parent_message_id\":\"$M1\",\"response_mode\":\"streaming\"}"
is "$STATUS" 404 "streaming: a foreign parent is 404 before the stream"
# another end user's conversation is theirs alone, parent or not
chat "{\"inputs\":{},\"query\":\"q\",\"user\":\"u2\",\"conversation_id\":\"$CONV\",\"parent_message_id\":\"$M1\"}"
is "$STATUS" 404 "another end user's conversation and message are 404"
# another app's message
app tree2
llm_script '{"responses": [{"text": "b"}]}'
chat '{"inputs":{},"query":"b","user":"u1","response_mode":"blocking"}'
M_B=$(jqr .message_id)
KEY=$K1
chat "{\"inputs\":{},\"query\":\"q\",\"user\":\"u1\",\"conversation_id\":\"$CONV\",\"parent_message_id\":\"$M_B\"}"
is "$STATUS $(jqr .message)" "404 Message Not Exists." "another app's message is 404"

# the web API: the same tree with a passport
req GET "$A/$A1"
CODE=$(jqr .site.code)
PP=$(curl -sS -H "X-App-Code: $CODE" "$BASE/api/passport?user_id=w1" | jq -r .access_token)
web() {	# web <method> <path> [curl args]: STATUS and BODY
	local m=$1 u=$2
	shift 2
	BODY=$(curl -sS -X "$m" -w '\n%{http_code}' -H "X-App-Code: $CODE" \
	    -H "X-App-Passport: $PP" "$@" "$BASE$u")
	STATUS=${BODY##*
}
	BODY=${BODY%
*}
}
stream_ids() {	# stream_ids <file>: "message_id" of message_end
	sed -n 's/^data: //p' "$1" | jq -r 'select(.event=="message_end") | .id'
}
llm_script '{"responses": [{"text": "W1"}, {"text": "W2"}, {"text": "W2b"}]}'
curl -sS -N -H "X-App-Code: $CODE" -H "X-App-Passport: $PP" -H "$J" \
    -d '{"inputs":{},"query":"w1","response_mode":"streaming","conversation_id":"","parent_message_id":null}' \
    "$BASE/api/chat-messages" >"$T_DIR/w1"
W1=$(stream_ids "$T_DIR/w1")
WCONV=$(sed -n 's/^data: //p' "$T_DIR/w1" | jq -r 'select(.event=="message_end") | .conversation_id')
for a in 1 2; do
	curl -sS -N -H "X-App-Code: $CODE" -H "X-App-Passport: $PP" -H "$J" \
	    -d "{\"inputs\":{},\"query\":\"w2\",\"response_mode\":\"streaming\",\"conversation_id\":\"$WCONV\",\"parent_message_id\":\"$W1\"}" \
	    "$BASE/api/chat-messages" >"$T_DIR/w2$a"
done
is "$(sent 2)" "user:w1|assistant:W1|user:w2" "web API: the regenerated answer's memory is its parent's thread"
web GET "/api/messages?conversation_id=$WCONV&limit=20"
is "$(jqr '[.data[] | .answer + ">" + (.parent_message_id // "null")] | join(" ")')" \
    "W1>null W2>$W1 W2b>$W1" "web API: GET messages gives the tree (null for the first)"
web POST /api/chat-messages -H "$J" \
    -d "{\"inputs\":{},\"query\":\"q\",\"response_mode\":\"streaming\",\"conversation_id\":\"$WCONV\",\"parent_message_id\":\"$M1\"}"
is "$STATUS $(jqr .message)" "404 Message Not Exists." "web API: a message of another end user is no parent"

