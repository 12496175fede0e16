# t_webapp_apis.sh — the rest of the web API through nginx, on two flowcgi
# processes sharing one data directory: saved messages and more-like-this
# of a completion app (completion apps only, the end user's own only),
# files/upload and remote-files/upload as the passport's end user, the
# audio routes (a type with parameters too), enable_api refusing the service API as Dify's, and the
# per-end-user / per-address rate limit counted in the store, so one limit
# holds across the processes.
. "$(dirname "$0")/lib.sh"

LIMIT=30
export FLOWCGI_WEBAPP_RATE_LIMIT=$LIMIT FLOWCGI_LOG_REQUESTS=true
# remote-files/upload fetches from nginx on loopback here
export FLOWCGI_HTTP_ALLOW_PRIVATE=true
export FLOWCGI_AUDIO_SPEECH_TO_TEXT_MODEL='fakeaudio#whisper-1'
export FLOWCGI_AUDIO_TEXT_TO_SPEECH_MODEL='fakeaudio#tts-1'
start_fake llm LLM || exit 1
export FLOWCGI_LLM_BASE_URL=$LLM/v1
start_flowcgi fc1 || exit 1
P1=$FC_PORT
start_flowcgi fc2 || exit 1
start_nginx "127.0.0.1:$P1" "127.0.0.1:$FC_PORT" || exit 1
TOKEN=$(admin_token)
J='Content-Type: application/json'
A=/console/api/apps

web() {	# web <passport> <method> <path> [curl args]: STATUS, BODY
	local p=$1 m=$2 u=$3
	shift 3
	BODY=$(curl -sS -X "$m" -w '\n%{http_code}' -H "X-App-Code: $CODE" \
	    -H "X-App-Passport: $p" "$@" "$BASE$u")
	STATUS=${BODY##*
}
	BODY=${BODY%
*}
}
passport() {	# passport [query]: a passport of $CODE into PP
	BODY=$(curl -sS -H "X-App-Code: $CODE" "$BASE/api/passport${1:-}")
	PP=$(jqr .access_token)
}
site_of() {	# site_of <app id>: its code into CODE
	req GET "$A/$1"
	CODE=$(jqr .site.code)
}

cat >"$T_DIR/co.yml" <<'YML'
app: {mode: completion, name: Writer}
kind: app
version: 0.6.0
model_config:
  model: {provider: openai, name: gpt-4o-mini, mode: chat, completion_params: {temperature: 0.2, max_tokens: 99}}
  pre_prompt: Write about {{topic}}.
  more_like_this: {enabled: true}
  speech_to_text: {enabled: true}
  text_to_speech: {enabled: true, voice: nova}
  user_input_form:
  - text-input: {variable: topic, label: Topic, required: true}
YML
import_file "$T_DIR/co.yml"
CO=$(jqr .app_id)
site_of "$CO"
passport '?user_id=ann'
PA=$PP
passport '?user_id=bob'
PB=$PP

llm_script '{"responses": [{"text": "First take"}]}'
web "$PA" POST /api/completion-messages -H "$J" \
    -d '{"inputs":{"topic":"tea"},"query":"","response_mode":"blocking"}'
is "$STATUS $(jqr .answer)" "200 First take" "a completion message"
MSG=$(jqr .message_id)
is "$(curl -s "$LLM/_requests" | jq -c '.[-1].body | [.temperature, .max_tokens]')" "[0.2,99]" \
    "at the app's temperature"

# ====== saved messages (web/saved_message.py) ======
web "$PA" GET /api/saved-messages
is "$STATUS $(jqr '[.limit, .has_more, (.data | length)] | tojson')" "200 [20,false,0]" \
    "no saved message yet: Dify's empty page"
web "$PB" POST /api/saved-messages -H "$J" -d "{\"message_id\":\"$MSG\"}"
is "$STATUS $(jqr .message)" "404 Message Not Exists." "another end user cannot save the message"
web "$PA" POST /api/saved-messages -H "$J" -d '{}'
is "$STATUS $(jqr .code)" "400 invalid_param" "message_id is required"
web "$PA" POST /api/saved-messages -H "$J" -d "{\"message_id\":\"$MSG\"}"
is "$STATUS $(jqr .result)" "200 success" "the owner saves it"
web "$PA" POST /api/saved-messages -H "$J" -d "{\"message_id\":\"$MSG\"}"
web "$PA" GET /api/saved-messages
is "$(jqr '[.data[] | [.id, .inputs.topic, .answer, (.message_files | length)]] | tojson')" \
    "[[\"$MSG\",\"tea\",\"First take\",0]]" "the saved list, once though saved twice"
web "$PB" GET /api/saved-messages
is "$(jqr '.data | length')" 0 "another end user sees none of it"

# ====== more like this (web/message.py MessageMoreLikeThisApi) ======
web "$PB" GET "/api/messages/$MSG/more-like-this?response_mode=blocking"
is "$STATUS" 404 "another end user's message is no message"
web "$PA" GET "/api/messages/$MSG/more-like-this"
is "$STATUS $(jqr .code)" "400 invalid_param" "response_mode is required"
llm_script '{"responses": [{"chunks": ["Second ", "take"]}]}'
web "$PA" GET "/api/messages/$MSG/more-like-this?response_mode=streaming"
is "$(printf '%s\n' "$BODY" | sed -n 's/^data: //p' | jq -r 'select(.event=="message") | .answer' | tr -d '\n')" \
    "Second take" "more-like-this streams a new answer"
NEW=$(printf '%s\n' "$BODY" | sed -n 's/^data: //p' | jq -r 'select(.event=="message_end") | .message_id')
ok "$([ -n "$NEW" ] && [ "$NEW" != "$MSG" ]; echo $?)" "as a new message"
ok "$(curl -s "$LLM/_requests" | jq -e '.[-1].body.messages | tostring | test("Write about tea")' >/dev/null; echo $?)" \
    "asked with the message's inputs"
is "$(curl -s "$LLM/_requests" | jq -c '.[-1].body | [.temperature, .max_tokens]')" "[0.9,99]" \
    "more-like-this runs at temperature 0.9 as Dify's, the other parameters kept"
llm_script '{"responses": [{"text": "Third take"}]}'
web "$PA" POST /api/completion-messages -H "$J" \
    -d '{"inputs":{"topic":"tea"},"query":"","response_mode":"blocking"}'
is "$(curl -s "$LLM/_requests" | jq -c '.[-1].body | [.temperature, .max_tokens]')" "[0.2,99]" \
    "and the app's own temperature is untouched after it"

web "$PA" DELETE "/api/saved-messages/$MSG"
is "$STATUS" 204 "DELETE /api/saved-messages/{id}: 204"
web "$PA" GET /api/saved-messages
is "$(jqr '.data | length')" 0 "and it is no longer saved"

# a chat app has neither
printf 'app: {mode: chat, name: Talk}\nkind: app\nversion: 0.6.0\nmodel_config:\n  model: {provider: openai, name: gpt-4o-mini, mode: chat}\n  pre_prompt: Hi\n' >"$T_DIR/chat.yml"
import_file "$T_DIR/chat.yml"
CH=$(jqr .app_id)
site_of "$CH"
passport
PC=$PP
web "$PC" GET /api/saved-messages
is "$STATUS $(jqr .code)" "400 not_completion_app" "saved messages on a chat app: Dify's not_completion_app"
web "$PC" GET "/api/messages/$MSG/more-like-this?response_mode=blocking"
is "$STATUS $(jqr .code)" "400 not_completion_app" "and more-like-this"

# more-like-this turned off
sed 's/more_like_this: {enabled: true}/more_like_this: {enabled: false}/; s/name: Writer/name: Plain/' \
    "$T_DIR/co.yml" >"$T_DIR/co2.yml"
import_file "$T_DIR/co2.yml"
site_of "$(jqr .app_id)"
passport
llm_script '{"responses": [{"text": "x"}]}'
web "$PP" POST /api/completion-messages -H "$J" \
    -d '{"inputs":{"topic":"a"},"response_mode":"blocking"}'
web "$PP" GET "/api/messages/$(jqr .message_id)/more-like-this?response_mode=blocking"
is "$STATUS $(jqr .code)" "403 app_more_like_this_disabled" "more-like-this disabled: Dify's 403"

# ====== files ======
site_of "$CO"
printf 'hello file' >"$T_DIR/note.txt"
web "$PA" POST /api/files/upload -F "file=@$T_DIR/note.txt;type=text/plain" -F user=mallory
is "$STATUS $(jqr '[.name, .size, .extension, .mime_type, .created_by] | tojson')" \
    '201 ["note.txt",10,"txt","text/plain","ann"]' \
    "files/upload: 201, kept as the passport's end user (not the form's user)"
web "" POST /api/files/upload -F "file=@$T_DIR/note.txt"
is "$STATUS" 401 "files/upload without a passport: 401"
web "$PA" POST /api/remote-files/upload -H "$J" -d "{\"url\":\"$BASE/embed.js\"}"
is "$STATUS $(jqr '[.name, .mime_type, .created_by, (.size > 100), .url] | tojson')" \
    "201 [\"embed.js\",\"text/javascript\",\"ann\",true,\"$BASE/embed.js\"]" \
    "remote-files/upload fetches the URL and keeps it as an upload"
RID=$(jqr .id)
key_req() { BODY=$(curl -sS -w '\n%{http_code}' -H "Authorization: Bearer $KEY" "$@"); STATUS=${BODY##*
}; BODY=${BODY%
*}; }
req POST "$A/$CO/api-keys"
KEY=$(jqr .token)
key_req -o "$T_DIR/rf" "$BASE/v1/files/$RID/preview"
ok "$(grep -q difyChatbotConfig "$T_DIR/rf"; echo $?)" "the fetched bytes are the upload's"
web "$PA" POST /api/remote-files/upload -H "$J" -d "{\"url\":\"$BASE/no/such/file\"}"
is "$STATUS $(jqr .code)" "400 remote_file_upload_failed" "a URL that answers 404: remote_file_upload_failed"
web "$PA" POST /api/remote-files/upload -H "$J" -d '{"url":"file:///etc/passwd"}'
is "$STATUS $(jqr .code)" "400 invalid_param" "a URL that is not http(s) is refused"

# ====== the remote file probe (web/remote_files.py RemoteFileInfoApi) ======
start_fake echo ECHO || exit 1
uri() { jq -rn --arg u "$1" '$u | @uri'; }
web "$PA" GET "/api/remote-files/$(uri "$ECHO/files/report.json?v=1")"
is "$STATUS $(jqr '[.file_type, .file_length] | tojson')" \
    "200 [\"application/json\",$(curl -s "$ECHO/files/report.json?v=1" | wc -c)]" \
    "remote-files/{url}: Dify's {file_type, file_length} from the HEAD"
is "$(curl -s "$ECHO/_requests" | jq -c '[.[] | select(.path == "/files/report.json?v=1") | .method] | .[0]')" \
    '"HEAD"' "... asked with a HEAD"
curl -s -X POST "$ECHO/_reset" >/dev/null
web "$PA" GET "/api/remote-files/$(uri "$ECHO/_nohead/a.txt")"
is "$STATUS $(jqr .file_type)" "200 application/json" "a server without HEAD: Dify's fallback to a GET"
is "$(curl -s "$ECHO/_requests" | jq -c '[.[] | .method]')" '["HEAD","GET"]' "... HEAD first, then GET"
web "$PA" GET "/api/remote-files/$(uri "$BASE/no/such/file")"
is "$STATUS $(jqr .code)" "400 remote_file_upload_failed" "a URL that answers 404: remote_file_upload_failed"
# remote-files/upload names the file as the server does (Dify's
# _extract_filename): filename*= (RFC 5987) over filename=, then the URL
web "$PA" POST /api/remote-files/upload -H "$J" -d "{\"url\":\"$ECHO/_named/from-url.txt?$(uri "attachment; filename=\"plain.txt\"; filename*=UTF-8''na%C3%AFve%20r%C3%A9sum%C3%A9.txt")\"}"
is "$STATUS $(jqr '[.name, .extension, .size] | tojson')" '201 ["naïve résumé.txt","txt",11]' \
    "remote-files/upload: the name of Content-Disposition's filename*="
web "$PA" POST /api/remote-files/upload -H "$J" -d "{\"url\":\"$ECHO/_named/from-url.txt?$(uri 'attachment; filename="../../evil.csv"')\"}"
is "$STATUS $(jqr .name)" "201 evil.csv" "... its filename=, the last path segment only"
web "$PA" POST /api/remote-files/upload -H "$J" -d "{\"url\":\"$ECHO/_named/from-url.txt?$(uri 'inline')\"}"
is "$STATUS $(jqr .name)" "201 from-url.txt" "... else the URL's last segment"
web "$PA" GET "/api/remote-files/$(uri "ftp://example.com/x")"
is "$STATUS $(jqr .code)" "400 invalid_param" "a URL that is not http(s) is refused"
web "" GET "/api/remote-files/$(uri "$ECHO/x")"
is "$STATUS" 401 "without a passport: 401"

# ====== audio (web/audio.py) ======
start_fake audio AUD || exit 1
req POST /console/api/workspaces/current/model-providers/fakeaudio -H "$J" \
    -d "{\"base_url\":\"$AUD/v1\",\"api_key\":\"sk-audio\",\"models\":[\"whisper-1\",\"tts-1\"]}"
printf 'ID3fake-mp3-bytes' >"$T_DIR/in.mp3"
web "$PA" POST /api/audio-to-text -F "file=@$T_DIR/in.mp3;type=audio/mpeg"
is "$STATUS $(jqr .text)" "200 hello from the fake" "audio-to-text: the provider's transcript"
web "$PA" POST /api/audio-to-text -F "file=@$T_DIR/in.mp3;type=audio/webm;codecs=opus"
is "$STATUS $(jqr .text)" "200 hello from the fake" "audio-to-text of a browser recorder's audio/webm;codecs=opus"
web "$PA" POST /api/audio-to-text -F "file=@$T_DIR/in.mp3;type=audio/webmx;codecs=opus"
is "$STATUS $(jqr .code)" "415 unsupported_audio_type" "... but not of a type that only begins like one"
code=$(curl -sS -o "$T_DIR/out.mp3" -w '%{http_code}' -H "X-App-Code: $CODE" -H "X-App-Passport: $PA" \
    -H "$J" -d "{\"message_id\":\"$MSG\"}" "$BASE/api/text-to-audio")
is "$code $(head -c 3 "$T_DIR/out.mp3")" "200 ID3" "text-to-audio of the end user's message"
is "$(curl -s "$AUD/_requests" | jq -r '.[-1].body_b64' | base64 -d | jq -r '.input + " " + .voice')" \
    "First take nova" "... speaking its answer in the app's voice"
code=$(curl -sS -o "$T_DIR/tts.json" -w '%{http_code}' -H "X-App-Code: $CODE" -H "X-App-Passport: $PB" \
    -H "$J" -d "{\"message_id\":\"$MSG\"}" "$BASE/api/text-to-audio")
is "$code" 404 "another end user's message cannot be spoken"
site_of "$CH"
web "$PC" POST /api/audio-to-text -F "file=@$T_DIR/in.mp3;type=audio/mpeg"
is "$STATUS $(jqr .message)" "400 Speech to text is not enabled" "an app without the feature: Dify's 400"

# ====== enable_site / enable_api ======
key_req "$BASE/v1/parameters"
is "$STATUS" 200 "the service API answers while enable_api is on"
req POST "$A/$CO/api-enable" -H "$J" -d '{"enable_api":false}'
key_req "$BASE/v1/parameters"
is "$STATUS $(jqr .code) $(jqr .message)" "403 forbidden The app's API service has been disabled." \
    "enable_api false: the service API is refused as Dify's"
site_of "$CO"
web "$PA" GET /api/parameters
is "$STATUS" 200 "the web app is not the API: it still answers"
req POST "$A/$CO/api-enable" -H "$J" -d '{"enable_api":true}'
key_req "$BASE/v1/parameters"
is "$STATUS" 200 "enable_api on again"
req POST "$A/$CO/site-enable" -H "$J" -d '{"enable_site":false}'
web "$PA" POST /api/files/upload -F "file=@$T_DIR/note.txt"
is "$STATUS $(jqr .message)" "400 Site is disabled." "a disabled site refuses an upload"
web "$PA" GET /api/saved-messages
is "$STATUS $(jqr .message)" "400 Site is disabled." "and the saved messages"
is "$(curl -s -o /dev/null -w '%{http_code}' -H "X-App-Code: $CODE" "$BASE/api/passport")" 404 \
    "and gives no passport (Dify's 404)"
key_req "$BASE/v1/parameters"
is "$STATUS" 200 "the service API does not depend on the site"
req POST "$A/$CO/site-enable" -H "$J" -d '{"enable_site":true}'

# ====== one rate limit across the processes ======
# Passports count per address: past LIMIT a minute the next is 429,
# whichever process answers. Counted per process, two processes would let
# about twice as many through. Earlier requests of this minute count too.
m0=$(( $(date +%s) / 60 ))
n=0 S=
while [ $n -le $((2 * LIMIT)) ]; do
	S=$(curl -s -o /dev/null -D "$T_DIR/rl" -w '%{http_code}' -H "X-App-Code: $CODE" "$BASE/api/passport")
	[ "$S" = 429 ] && break
	n=$((n + 1))
done
m1=$(( $(date +%s) / 60 ))
is "$S" 429 "past webapp.rate_limit: 429"
ok "$(grep -qi '^retry-after: [0-9]' "$T_DIR/rl"; echo $?)" "with Retry-After"
ok "$(grep -q 'api/passport' "$T_DIR/fc1.log" && grep -q 'api/passport' "$T_DIR/fc2.log"; echo $?)" \
    "both processes answered passports"
if [ "$m0" = "$m1" ]; then
	ok "$([ "$n" -le "$LIMIT" ]; echo $?)" "at most $LIMIT a minute through both processes together ($n)"
else
	skip "the minute turned during the count: its bound cannot be read"
fi

