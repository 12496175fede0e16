# t_webapp.sh — the Web App's web API through nginx and the fake LLM: every
# app has a site (code, Dify's fields, the app detail's site), the passport
# (X-App-Code, HS256), site / parameters / meta, chat-messages streamed and
# stopped, conversations and messages of the end user only, a passport of
# one app refused on another, a disabled site and a reset code answered as
# Dify's, pinned conversations, the passcode option, the pages and the embed script, 429 with
# Retry-After past webapp.rate_limit.
. "$(dirname "$0")/lib.sh"

LIMIT=40
FLOWCGI_WEBAPP_RATE_LIMIT=$LIMIT start_llm_front || exit 1
chat_app() {	# chat_app <name>: imports a chat app, sets APP
	printf 'app: {mode: chat, name: %s}\nkind: app\nversion: 0.6.0\nmodel_config:\n  model: {provider: openai, name: gpt-4o-mini, mode: chat, completion_params: {}}\n  pre_prompt: You help {{name}}.\n  opening_statement: Hello there\n  user_input_form:\n  - text-input: {variable: name, label: Name, required: true}\n' \
	    "$1" >"$T_DIR/$1.yml"
	import_file "$T_DIR/$1.yml"
	APP=$(jqr .app_id)
}
# web <passport> <method> <path> [curl args]: a web API request as the
# Web App sends it (X-App-Code: $CODE, X-App-Passport); STATUS and BODY.
web() {
	local p=$1 m=$2 u=$3
	shift 3
	BODY=$(curl -sS -X "$m" -D "$T_DIR/whdrs" -w '\n%{http_code}' \
	    -H "X-App-Code: $CODE" -H "X-App-Passport: $p" "$@" "$BASE$u")
	STATUS=${BODY##*
}
	BODY=${BODY%
*}
	HDRS=$(tr -d '\r' <"$T_DIR/whdrs")
}
passport() {	# passport [query]: a passport of $CODE into PP
	BODY=$(curl -sS -H "X-App-Code: $CODE" "$BASE/api/passport${1:-}")
	PP=$(jqr .access_token)
}

chat_app alpha
A1=$APP
req GET "$A/$A1"
CODE=$(jqr .site.code)
ok "$(printf '%s' "$CODE" | grep -Eqx '[A-Za-z0-9]{16}'; echo $?)" \
    "the app detail carries its site's 16-character code"
is "$(jqr '[.site.title, .site.access_token == .site.code, .site.default_language, .site.show_workflow_steps, .enable_site] | join(" ")')" \
    "alpha true en-US true true" "the site has Dify's fields and defaults"
is "$(jqr .site.app_base_url)" "" "app_base_url: relative without server.public_url"
req GET "$A/$A1"
is "$(jqr .site.code)" "$CODE" "the code stays the same on the next read"

BODY=$(curl -sS -w '\n%{http_code}' "$BASE/api/passport")
is "${BODY##*
}" 401 "a passport without X-App-Code is 401"
BODY=$(curl -sS -H 'X-App-Code: AAAAAAAAAAAAAAAA' "$BASE/api/passport")
is "$(jqr .status)" 404 "a passport of an unknown code is 404"
passport
P1=$PP
is "$(printf '%s' "$P1" | tr -cd . | wc -c)" 2 "the passport is a JWT"
is "$(printf '%s' "$P1" | cut -d. -f1 | tr '_-' '/+' | base64 -d 2>/dev/null | jq -r .alg)" \
    HS256 "signed with HS256"
is "$(printf '%s' "$P1" | cut -d. -f2 | tr '_-' '/+' | { cat; printf '=='; } | base64 -d 2>/dev/null | jq -r '.sub + " " + .app_id')" \
    "Web API Passport $A1" "Dify's claims"

web "" GET /api/site
is "$STATUS $(jqr .message)" "401 App token is missing." "no passport: 401 as Dify"
# the signature's first character changed (its last carries 2 bits that
# no signature uses, so a change there may change nothing)
SIG=${P1##*.}
[ "${SIG:0:1}" = A ] && C=B || C=A
web "${P1%.*}.$C${SIG:1}" GET /api/site
is "$STATUS $(jqr .message)" "401 Invalid token signature." "a changed signature is refused"
web "$P1" GET /api/site
is "$STATUS $(jqr '.mode + " " + .site.title')" "200 chat alpha" "GET /api/site"
is "$(jqr '.site | has("access_token")')" false "the site answer carries no console token"
web "$P1" GET /api/parameters
is "$(jqr '.opening_statement + " " + .user_input_form[0]["text-input"].variable')" \
    "Hello there name" "GET /api/parameters: the opening statement and the form"
web "$P1" GET /api/meta
is "$STATUS $(jqr '.tool_icons | type')" "200 object" "GET /api/meta"
curl -sS -H "Authorization: Bearer $P1" "$BASE/api/site" >"$T_DIR/bearer"
is "$(jq -r .site.title "$T_DIR/bearer")" alpha "the older Authorization: Bearer passport works"

llm_script '{"responses": [{"chunks": ["Hi ", "Ada"]}]}'
web "$P1" POST /api/chat-messages -H "$J" \
    -d '{"inputs":{"name":"Ada"},"query":"hello","response_mode":"streaming","user":"mallory"}'
is "$(printf '%s\n' "$BODY" | sed -n 's/^data: //p' | jq -r 'select(.event=="message") | .answer' | tr -d '\n')" \
    "Hi Ada" "chat-messages streams the answer"
CONV=$(printf '%s\n' "$BODY" | sed -n 's/^data: //p' | jq -r 'select(.event=="message_end") | .conversation_id')
MSG=$(printf '%s\n' "$BODY" | sed -n 's/^data: //p' | jq -r 'select(.event=="message_end") | .message_id')
web "$P1" GET "/api/conversations?limit=20"
is "$(jqr '[.data[].id] | join(",")')" "$CONV" "the end user sees their conversation"
web "$P1" GET "/api/messages?conversation_id=$CONV"
is "$(jqr '.data[0].query + " / " + .data[0].answer')" "hello / Hi Ada" "and its messages"
svc "$(curl -s -X POST -H "Authorization: Bearer $(admin_token)" "$BASE$A/$A1/api-keys" | jq -r .token)" \
    GET "/v1/conversations?user=mallory"
is "$(jqr '.data | length')" 0 "a user field in the body does not choose the end user"

passport
P2=$PP
web "$P2" GET /api/conversations
is "$(jqr '.data | length')" 0 "another end user sees no conversation"
web "$P2" GET "/api/messages?conversation_id=$CONV"
is "$STATUS" 404 "nor its messages"
web "$P2" POST "/api/conversations/$CONV/name" -H "$J" -d '{"name":"mine"}'
is "$STATUS" 404 "nor may rename it"
web "$P2" DELETE "/api/conversations/$CONV" -H "$J" -d '{}'
is "$STATUS" 404 "nor delete it"
web "$P1" POST "/api/conversations/$CONV/name" -H "$J" -d '{"name":"Greeting"}'
is "$STATUS $(jqr .name)" "200 Greeting" "the owner renames it"
web "$P1" POST "/api/messages/$MSG/feedbacks" -H "$J" -d '{"rating":"like"}'
is "$STATUS $(jqr .result)" "200 success" "feedback on a message"

web "$P2" PATCH "/api/conversations/$CONV/pin"
is "$STATUS" 404 "another end user cannot pin the conversation"
web "$P1" PATCH "/api/conversations/$CONV/pin"
is "$STATUS $(jqr .result)" "200 success" "the owner pins it"
web "$P1" GET "/api/conversations?pinned=true"
is "$(jqr '[.data[] | .id + " " + (.pinned | tostring)] | join(",")')" "$CONV true" "pinned=true lists it, marked pinned"
web "$P1" GET "/api/conversations?pinned=false"
is "$(jqr '.data | length')" 0 "pinned=false leaves it out"
web "$P1" PATCH "/api/conversations/$CONV/unpin"
web "$P1" GET "/api/conversations?pinned=true"
is "$STATUS $(jqr '.data | length')" "200 0" "unpin"

passport '?user_id=alice'
PA=$PP
llm_script '{"responses": [{"text": "Yes"}]}'
web "$PA" POST /api/chat-messages -H "$J" -d '{"inputs":{"name":"A"},"query":"hi","response_mode":"blocking"}'
is "$(jqr .answer)" Yes "blocking chat-messages"
passport '?user_id=alice'
web "$PP" GET /api/conversations
is "$(jqr '.data | length')" 1 "the embed's user_id is the same end user on a new passport"

# stop: a slow answer. Dify answers a stop of a task that is not the end
# user's as one of a task that does not exist (200 success) and stops
# nothing: the answer is the same, and the answer streams to its end.
long_chat() {
	llm_script '{"responses": [{"chunks": ["a ","b ","c ","d ","e ","f "], "delay": 0.5}]}'
	curl -sS -N -H "X-App-Code: $CODE" -H "X-App-Passport: $P1" -H "$J" \
	    -d '{"inputs":{"name":"A"},"query":"long","response_mode":"streaming"}' \
	    "$BASE/api/chat-messages" >"$T_DIR/long" &
	LONG=$!
	TASK=$(sse_first "$T_DIR/long" .task_id)
}
web "$P2" POST "/api/chat-messages/00000000-0000-4000-8000-000000000000/stop" -H "$J" -d '{}'
UNKNOWN="$STATUS $BODY"
long_chat
web "$P2" POST "/api/chat-messages/$TASK/stop" -H "$J" -d '{}'
is "$STATUS $BODY" "$UNKNOWN" "another end user's stop is answered as an unknown task's"
wait "$LONG"
ok "$(grep -q '"answer": *"f ' "$T_DIR/long"; echo $?)" "and stops nothing: the answer streamed to its end"
long_chat
web "$P1" POST "/api/chat-messages/$TASK/stop" -H "$J" -d '{}'
is "$STATUS $(jqr .result)" "200 success" "the owner stops it"
wait "$LONG"
ok "$(grep -c '"answer": *"f ' "$T_DIR/long" | grep -qx 0; echo $?)" "the stream ended before the last chunk"

# another app: its passport is refused on alpha
chat_app beta
req GET "$A/$APP"
CODE_B=$(jqr .site.code)
BODY=$(curl -sS -H "X-App-Code: $CODE_B" "$BASE/api/passport")
PB=$(jqr .access_token)
web "$PB" GET /api/site
is "$STATUS" 401 "a passport of app B is refused with app A's code"
CODE=$CODE_B web "$PB" GET "/api/messages?conversation_id=$CONV"
is "$STATUS" 404 "and app B's end user finds no conversation of app A"

# settings, disable, reset
req POST "$A/$A1/site" -H "$J" -d '{"title":"Alpha Bot","default_language":"zh-Hans","copyright":"ACME"}'
is "$STATUS $(jqr '.title + " " + .default_language')" "200 Alpha Bot zh-Hans" "POST .../site sets the settings"
req POST "$A/$A1/site" -H "$J" -d '{"default_language":"xx"}'
is "$STATUS" 400 "an unknown language is refused"
web "$P1" GET /api/site
is "$(jqr '.site.title + " " + .site.copyright')" "Alpha Bot ACME" "the web app sees them"
req POST "$A/$A1/site-enable" -H "$J" -d '{"enable_site":false}'
is "$STATUS $(jqr .enable_site)" "200 false" "site-enable false"
web "$P1" GET /api/site
is "$STATUS $(jqr .message)" "400 Site is disabled." "a disabled site: 400 as Dify"
passport
is "$(jqr .status)" 404 "and no passport"
req GET "$A/$A1"
is "$(jqr .enable_site)" false "the app detail shows it disabled"
req POST "$A/$A1/site-enable" -H "$J" -d '{"enable_site":true}'
req POST "$A/$A1/site/access-token-reset"
NEW=$(jqr .code)
ok "$([ "$NEW" != "$CODE" ] && printf '%s' "$NEW" | grep -Eqx '[A-Za-z0-9]{16}'; echo $?)" "the reset gives a new code"
web "$P1" GET /api/site -H "X-App-Code:"
is "$STATUS $(jqr .message)" "400 Site URL is no longer valid." "a passport of the old code is refused"
BODY=$(curl -sS -H "X-App-Code: $CODE" "$BASE/api/passport")
is "$(jqr .status)" 404 "the old code gives no passport"
CODE=$NEW

# passcode
req POST "$A/$A1/site" -H "$J" -d '{"passcode":"open sesame"}'
is "$(jqr .passcode_set)" true "a passcode is set (and not shown)"
BODY=$(curl -sS -H "X-App-Code: $CODE" "$BASE/api/passport")
is "$(jqr .code)" passcode_required "no passport without it"
BODY=$(curl -sS -H "X-App-Code: $CODE" -H "X-App-Passcode: open sesame" "$BASE/api/passport")
ok "$([ -n "$(jqr .access_token)" ] && [ "$(jqr .access_token)" != null ]; echo $?)" "a passport with it"
req POST "$A/$A1/site" -H "$J" -d '{"passcode":""}'

# pages and the embed script
H=$(curl -sS -D - -o "$T_DIR/page" "$BASE/chat/$CODE" | tr -d '\r')
is "$(printf '%s' "$H" | sed -n 's/^HTTP[^ ]* \([0-9]*\).*/\1/p') $(printf '%s' "$H" | grep -ci '^content-type: text/html')" \
    "200 1" "GET /chat/{code} is the page"
ok "$(printf '%s' "$H" | grep -qi "^content-security-policy:.*frame-ancestors \*"; echo $?)" \
    "its CSP lets any site frame it (webapp.frame_ancestors)"
is "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/chatbot/$CODE")" 200 "GET /chatbot/{code}"
is "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/chat/not-a-code")" 404 "a path that is no code is 404"
is "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$BASE/embed.min.js")" \
    "200 text/javascript; charset=utf-8" "GET /embed.min.js"
ok "$(grep -q difyChatbotConfig "$(curl -s -o "$T_DIR/embed" "$BASE/embed.js"; echo "$T_DIR/embed")"; echo $?)" \
    "the embed script reads window.difyChatbotConfig"
is "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/flow/chat/$CODE")" 200 "the page under a mount prefix"

# no console data with a passport
web "$P2" GET "$A/$A1" -H "Authorization: Bearer $P2"
is "$STATUS" 401 "a passport opens no console route"

# a workflow app and a completion app through the web API
cat >"$T_DIR/wf.yml" <<'YML'
app: {mode: workflow, name: Echo}
kind: app
version: 0.6.0
workflow:
  features: {}
  graph:
    edges:
    - {id: e1, source: start, sourceHandle: source, target: end, targetHandle: target}
    nodes:
    - id: start
      data:
        type: start
        title: Start
        variables:
        - {variable: text, type: text-input, required: true, label: Text}
    - id: end
      data:
        type: end
        title: End
        outputs:
        - {variable: echoed, value_selector: [start, text]}
YML
import_file "$T_DIR/wf.yml"
req GET "$A/$(jqr .app_id)"
CODE=$(jqr .site.code)
passport
web "$PP" POST /api/workflows/run -H "$J" -d '{"inputs":{"text":"round trip"},"response_mode":"blocking"}'
is "$(printf '%s\n' "$BODY" | sed -n 's/^data: //p' | jq -r 'select(.event=="workflow_finished") | .data.outputs.echoed')" \
    "round trip" "workflows/run streams (always) and finishes with the outputs"
web "$PP" POST /api/chat-messages -H "$J" -d '{"inputs":{},"query":"x"}'
is "$STATUS $(jqr .code)" "400 not_chat_app" "chat-messages on a workflow app: Dify's not_chat_app"
printf 'app: {mode: completion, name: Tr}\nkind: app\nversion: 0.6.0\nmodel_config:\n  model: {provider: openai, name: gpt-4o-mini, mode: chat}\n  pre_prompt: Translate {{text}}.\n  user_input_form:\n  - paragraph: {variable: text, label: Text, required: true}\n' >"$T_DIR/co.yml"
import_file "$T_DIR/co.yml"
req GET "$A/$(jqr .app_id)"
CODE=$(jqr .site.code)
passport
llm_script '{"responses": [{"chunks": ["Bon", "jour"]}]}'
web "$PP" POST /api/completion-messages -H "$J" -d '{"inputs":{"text":"hello"},"query":"","response_mode":"streaming"}'
is "$(printf '%s\n' "$BODY" | sed -n 's/^data: //p' | jq -r 'select(.event=="message") | .answer' | tr -d '\n')" \
    "Bonjour" "completion-messages streams"
# the remote file probe meets the outbound guard (http.allow_private off)
web "$PP" GET "/api/remote-files/$(jq -rn --arg u "$BASE/embed.js" '$u | @uri')"
is "$STATUS $(jqr .code)" "400 remote_file_upload_failed" \
    "remote-files/{url} of a loopback address: refused by the outbound guard"
ok "$(jqr .message | grep -q 'http.allow_private'; echo $?)" "... saying which setting allows it"
CODE=$NEW

# rate limit: passports count per address, in minute windows. 2 x LIMIT
# + 1 requests put more than LIMIT into one minute even when a minute
# turns during the loop (earlier requests of this minute count too).
i=0
while [ $i -le $((2 * LIMIT)) ]; do
	S=$(curl -s -o /dev/null -D "$T_DIR/rl" -w '%{http_code}' -H "X-App-Code: $CODE" "$BASE/api/passport")
	[ "$S" = 429 ] && break
	i=$((i + 1))
done
is "$S" 429 "past webapp.rate_limit a minute: 429"
ok "$(grep -qi '^retry-after: [0-9]' "$T_DIR/rl"; echo $?)" "with Retry-After"
