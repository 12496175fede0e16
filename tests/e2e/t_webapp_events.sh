# t_webapp_events.sh — Dify's GET /api/workflow/{task_id}/events through
# nginx: a workflow held mid-answer by the fake LLM is followed again by a
# second request (a page that reloaded), which gets every event of the
# run once, in order, the same as the first stream, then the end; a run
# that is over answers its workflow_finished from its record; another end
# user's task id, an unknown one and one that is no UUID are 404; a chat
# app's run is 400; a run followed from another process on the same data
# (flowcgi as a one-shot CGI) gets its start, then its end from its record.
. "$(dirname "$0")/lib.sh"

# stored as running at once, so that another process finds it
export FLOWCGI_RUN_PUBLISH_AFTER=0
start_llm_front || exit 1
import_file "$TOP/tests/e2e/apps/observe.yml"
APP=$(jqr .app_id)
req GET "/console/api/apps/$APP"
CODE=$(jqr .site.code)
pp() {	# pp <user_id>: a passport of $CODE for that end user
	curl -sS -H "X-App-Code: $CODE" "$BASE/api/passport?user_id=$1" |
	    jq -r .access_token
}
P1=$(pp ada)
P2=$(pp bob)
web() {	# web <passport> <method> <path> [curl args]: STATUS and BODY
	local p=$1 m=$2 u=$3
	shift 3
	BODY=$(curl -sS -X "$m" -w '\n%{http_code}' -H "X-App-Code: $CODE" \
	    -H "X-App-Passport: $p" "$@" "$BASE$u")
	STATUS=${BODY##*
}
	BODY=${BODY%
*}
}
events() { sed -n 's/^data: //p' "$1"; }
has_chunk() {	# has_chunk <file> <text>: 0 once a text_chunk of <text> is in
	events "$1" | jq -r 'select(.event=="text_chunk") | .data.text' 2>/dev/null |
	    grep -qx -- "$2"
}

llm_script '{"responses": [{"chunks": ["al", "pha", " be", "ta"], "hold_after": 2}]}'
curl -sS -N -H "X-App-Code: $CODE" -H "X-App-Passport: $P1" -H "$J" \
    -d '{"inputs":{"q":"hi"},"response_mode":"streaming"}' \
    "$BASE/api/workflows/run" >"$T_DIR/s1" &
RUN1=$!
wait_until 10 has_chunk "$T_DIR/s1" pha
ok $? "the run streams its first chunks, then is held"
TASK=$(events "$T_DIR/s1" | head -1 | jq -r .task_id)

web "$P2" GET "/api/workflow/$TASK/events"
is "$STATUS $(jqr .code)" "404 not_found" "another end user's task id is 404"
web "$P1" GET "/api/workflow/0190a000-0000-7000-8000-000000000000/events"
is "$STATUS" 404 "an unknown task id is 404"
web "$P1" GET "/api/workflow/nope/events"
is "$STATUS" 404 "a task id that is no UUID is 404"
web "" GET "/api/workflow/$TASK/events"
is "$STATUS" 401 "without a passport: 401"

# the page reloads: it follows the run again while it is held
curl -sS -N -D "$T_DIR/s2.h" -H "X-App-Code: $CODE" -H "X-App-Passport: $P1" \
    "$BASE/api/workflow/$TASK/events" >"$T_DIR/s2" &
RUN2=$!
wait_until 10 has_chunk "$T_DIR/s2" pha
ok $? "the second request replays what was sent before it came"
ok "$(! has_chunk "$T_DIR/s2" ta; echo $?)" "and nothing past the hold yet"
curl -sS -X POST "$LLM/_release" >/dev/null
wait "$RUN1" "$RUN2"
ok "$(grep -qi '^content-type: text/event-stream' "$T_DIR/s2.h"; echo $?)" \
    "the events come as server-sent events"
is "$(events "$T_DIR/s2" | jq -r .event | head -1)" workflow_started "the replay begins with workflow_started"
is "$(events "$T_DIR/s2" | jq -r .event | tail -1)" workflow_finished "and ends with workflow_finished"
is "$(events "$T_DIR/s2" | jq -r 'select(.event=="text_chunk") | .data.text' | tr -d '\n')" \
    "alpha beta" "every chunk once, in order"
is "$(events "$T_DIR/s2" | md5sum)" "$(events "$T_DIR/s1" | md5sum)" \
    "the followed stream is the run's own, event for event"
is "$(events "$T_DIR/s2" | wc -l)" "$(events "$T_DIR/s1" | wc -l)" "as many events as the first stream"
is "$(events "$T_DIR/s2" | jq -r 'select(.event=="workflow_finished") | .data.status + " " + .data.outputs.answer')" \
    "succeeded alpha beta" "the end with the outputs"

# over: the stored record answers, as Dify's
web "$P1" GET "/api/workflow/$TASK/events"
is "$STATUS" 200 "a finished run's events"
is "$(printf '%s\n' "$BODY" | sed -n 's/^data: //p' | jq -r '.event + " " + .task_id + " " + .data.status + " " + .data.outputs.answer')" \
    "workflow_finished $TASK succeeded alpha beta" "a finished run: its workflow_finished from the record"
is "$(printf '%s\n' "$BODY" | grep -c '^data: ')" 1 "and only that"
web "$P2" GET "/api/workflow/$TASK/events"
is "$STATUS" 404 "another end user's finished run is 404 too"

# another process (a CGI one-shot on the same data) follows a run of fc:
# no log reaches it, the record does
llm_script '{"responses": [{"chunks": ["one", " two"], "hold_after": 1}]}'
curl -sS -N -H "X-App-Code: $CODE" -H "X-App-Passport: $P1" -H "$J" \
    -d '{"inputs":{"q":"hi"},"response_mode":"streaming"}' \
    "$BASE/api/workflows/run" >"$T_DIR/s3" &
RUN3=$!
wait_until 10 has_chunk "$T_DIR/s3" one
TASK3=$(events "$T_DIR/s3" | head -1 | jq -r .task_id)
GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET \
    REQUEST_URI="/api/workflow/$TASK3/events" HTTP_X_APP_CODE="$CODE" \
    HTTP_X_APP_PASSPORT="$P1" FLOWCGI_SERVER_DATA_DIR=$T_DIR/data \
    "$FLOWCGI_BIN" serve >"$T_DIR/s4" 2>"$T_DIR/s4.err" &
RUN4=$!
wait_until 10 grep -q workflow_started "$T_DIR/s4"
ok $? "another process: the run's workflow_started from its record"
curl -sS -X POST "$LLM/_release" >/dev/null
wait "$RUN3" "$RUN4"
is "$(events "$T_DIR/s4" | jq -r .event | tr '\n' ' ')" "workflow_started workflow_finished " \
    "another process: the start, then the end once the record says so"
is "$(events "$T_DIR/s4" | jq -r 'select(.event=="workflow_finished") | .task_id + " " + .data.outputs.answer')" \
    "$TASK3 one two" "... with the outputs"

# a chat app's run: not a workflow's
printf 'app: {mode: chat, name: Talk}\nkind: app\nversion: 0.6.0\nmodel_config:\n  model: {provider: openai, name: gpt-4o-mini, mode: chat, completion_params: {}}\n  pre_prompt: Hi\n' >"$T_DIR/chat.yml"
import_file "$T_DIR/chat.yml"
req GET "/console/api/apps/$(jqr .app_id)"
CODE=$(jqr .site.code)
P3=$(pp ada)
llm_script '{"responses": [{"text": "hello"}]}'
web "$P3" POST /api/chat-messages -H "$J" -d '{"inputs":{},"query":"x","response_mode":"blocking"}'
CTASK=$(jqr .task_id)
web "$P3" GET "/api/workflow/$CTASK/events"
is "$STATUS $(jqr .code)" "400 invalid_param" "a chat app's run cannot be followed (Dify's InvalidArgumentError)"
