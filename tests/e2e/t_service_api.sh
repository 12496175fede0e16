# t_service_api.sh — Dify's service API as its clients use it, through
# nginx with the fake LLM: paging messages (first_id) and conversations
# (last_id, sort_by) to the end, ratings, renaming (given and made by the
# model), suggested questions, conversation variables, parameters from a
# chat app's model_config, meta, site, workflow logs, usage tokens, a stop
# that ends every mode as stopped (a running code node at once), and
# every conversation or message of another end user or app a 404.
. "$(dirname "$0")/lib.sh"

start_llm_front || exit 1
APPS=$TOP/tests/e2e/apps

# api <method> <path> [json body]: the service API with $KEY; sets STATUS
# and BODY.
api() {
	if [ $# -gt 2 ]; then
		svc "$KEY" "$1" "$2" -H "$J" -d "$3"
	else
		svc "$KEY" "$1" "$2"
	fi
}
# stream <path> <json> <file>: a streamed request in the background; its
# pid in SPID.
stream() {
	curl -sS -N -H "Authorization: Bearer $KEY" -H "$J" -d "$2" \
	    "$BASE$1" >"$3" 2>/dev/null &
	SPID=$!
}
# wait_event <file> <event>: until the stream in <file> has sent one.
wait_event() {
	local i=0
	while ! grep -q "\"event\":\"$2\"" "$1" 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 400 ] && break; sleep 0.05
	done
}
events() { sed -n 's/^data: //p' "$1" | jq -r "$2"; }

# ---- A chatflow: usage, paging, ratings, names, variables ----

import_app "$APPS/service_chat.yml"
CF=$APP
CFKEY=$KEY
llm_script '{"responses": [{"text": "Lyon is lovely.", "usage": {"prompt_tokens": 7, "completion_tokens": 3}}]}'
api POST /v1/chat-messages '{"inputs":{"city":"Lyon"},"query":"q1","user":"ann","response_mode":"blocking"}'
is "$STATUS $(jqr .answer)" "200 Lyon is lovely." "a chatflow answers"
is "$(jqr '[.metadata.usage.prompt_tokens, .metadata.usage.completion_tokens, .metadata.usage.total_tokens] | join(",")')" \
    "7,3,10" "usage has the model's prompt and completion tokens"
is "$(jqr '.metadata.usage | [.total_price, .currency, (.latency | type)] | join(",")')" \
    "0,USD,number" "usage has Dify's price fields (0 when unknown) and latency"
CONV=$(jqr .conversation_id)
M1=$(jqr .message_id)
llm_script '{"responses": [{"match": "q2", "text": "Again.", "usage": {"prompt_tokens": 11, "completion_tokens": 2}, "repeat": true}]}'
stream /v1/chat-messages "{\"inputs\":{},\"query\":\"q2\",\"user\":\"ann\",\"response_mode\":\"streaming\",\"conversation_id\":\"$CONV\"}" "$T_DIR/s2"
wait $SPID
is "$(events "$T_DIR/s2" 'select(.event=="message_end") | .metadata.usage | "\(.prompt_tokens),\(.completion_tokens),\(.total_tokens)"')" \
    "11,2,13" "message_end carries the usage too"
is "$(events "$T_DIR/s2" 'select(.event=="workflow_finished") | .data.total_tokens')" 13 \
    "workflow_finished counts the same tokens"
for i in 3 4 5; do
	api POST /v1/chat-messages "{\"inputs\":{},\"query\":\"q$i\",\"user\":\"ann\",\"conversation_id\":\"$CONV\"}"
done
is "$(jqr .conversation_id)" "$CONV" "the conversation goes on"

# Messages page backwards from the newest, each page oldest first.
api GET "/v1/messages?conversation_id=$CONV&user=ann&limit=2"
is "$STATUS $(jqr '[.data[].query] | join(",")') $(jqr .has_more)" "200 q4,q5 true" \
    "the first page holds the newest messages"
api GET "/v1/messages?conversation_id=$CONV&user=ann&limit=2&first_id=$(jqr '.data[0].id')"
is "$(jqr '[.data[].query] | join(",")') $(jqr .has_more)" "q2,q3 true" \
    "first_id gives the page before it"
api GET "/v1/messages?conversation_id=$CONV&user=ann&limit=2&first_id=$(jqr '.data[0].id')"
is "$(jqr '[.data[].query] | join(",")') $(jqr .has_more)" "q1 false" \
    "the last page says there is no more"
seen= first=
while :; do
	api GET "/v1/messages?conversation_id=$CONV&user=ann&limit=1${first:+&first_id=$first}"
	seen="$(jqr '.data[0].query') $seen"
	[ "$(jqr .has_more)" = true ] || break
	first=$(jqr '.data[0].id')
	[ ${#seen} -gt 100 ] && break
done
is "$seen" "q1 q2 q3 q4 q5 " "paging one by one while has_more reaches the first message"
api GET "/v1/messages?conversation_id=$CONV&user=ann&first_id=00000000-0000-7000-8000-000000000000"
is "$STATUS $(jqr .message)" "404 First Message Not Exists." "an unknown first_id"
is "$(curl -s -H "Authorization: Bearer $KEY" "$BASE/v1/messages?conversation_id=$CONV&user=ann&limit=5" | jq -r '.data[0].feedback')" \
    null "a message without a rating"

# Ratings.
api POST "/v1/messages/$M1/feedbacks" '{"user":"ann","rating":"like","content":"helpful"}'
is "$STATUS $(jqr .result)" "200 success" "a message is rated"
api GET /v1/app/feedbacks
is "$(jqr '.data | length') $(jqr '.data[0] | [.message_id, .conversation_id, .rating, .content, .from_source, .from_end_user_id] | join(",")')" \
    "1 $M1,$CONV,like,helpful,user,ann" "the app's ratings list it"
is "$(jqr '.data[0].created_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")')" true \
    "with ISO times, as Dify's"
api POST "/v1/messages/$M1/feedbacks" '{"user":"ann","rating":"dislike"}'
api GET "/v1/messages?conversation_id=$CONV&user=ann&limit=5"
is "$(jqr ".data[] | select(.id==\"$M1\") | .feedback.rating")" dislike \
    "a second rating replaces the first and shows in the messages"
api POST "/v1/messages/$M1/feedbacks" '{"user":"ann","rating":null}'
api GET /v1/app/feedbacks
is "$(jqr '.data | length')" 0 "a null rating takes it back"
api POST "/v1/messages/$M1/feedbacks" '{"user":"ann","rating":null}'
is "$STATUS $(jqr .code)" "400 invalid_param" "taking back a rating that is not there"
api POST "/v1/messages/$M1/feedbacks" '{"user":"ann","rating":"great"}'
is "$STATUS $(jqr .code)" "400 invalid_param" "a rating is like, dislike or null"
api POST "/v1/messages/$M1/feedbacks" '{"rating":"like"}'
is "$STATUS $(jqr .message)" "400 user is required" "a rating needs the user"

# Names.
api POST "/v1/conversations/$CONV/name" '{"user":"ann","name":"Lyon trip"}'
is "$STATUS $(jqr .name) $(jqr .id)" "200 Lyon trip $CONV" "a conversation is renamed"
llm_script '{"responses": [{"text": "\"City break in Lyon\"\n"}]}'
api POST "/v1/conversations/$CONV/name" '{"user":"ann","auto_generate":true}'
is "$STATUS $(jqr .name)" "200 City break in Lyon" "auto_generate names it through the app's model"
is "$(curl -s "$LLM/_requests" | jq -r '.[0].body.messages[-1].content' | grep -c 'q1')" 1 \
    "from its first message"
api POST "/v1/conversations/$CONV/name" '{"user":"ann"}'
is "$STATUS $(jqr .code)" "400 invalid_param" "a name is needed unless auto_generate"
api GET "/v1/conversations?user=ann"
is "$(jqr '.data[0].name')" "City break in Lyon" "the list shows the new name"

# Suggested questions after an answer (the feature is on in this app).
llm_script '{"responses": [{"text": "Sure: [\"Food?\", \"Museums?\", \"Weather?\"]"}]}'
api GET "/v1/messages/$M1/suggested?user=ann"
is "$STATUS $(jqr .result) $(jqr '.data | join("|")')" "200 success Food?|Museums?|Weather?" \
    "suggested questions come from the app's model"
is "$(curl -s "$LLM/_requests" | jq -r '.[0].body.messages[-1].content' | grep -c 'Assistant: ')" 3 \
    "made from the conversation's last three messages"

# Conversation variables, as the last message left them.
api GET "/v1/conversations/$CONV/variables?user=ann"
is "$STATUS $(jqr '[.data[] | .name + "=" + .value + ":" + .value_type] | join(" ")')" \
    "200 last_query=q5:string turns=5:number" "the conversation's variables"
is "$(jqr '.data[0] | [.id, .description] | join(",")')" \
    "0b7a3c52-0d4e-4c52-9a53-2a7d1f4e6a01,the last question" "with the app's ids and descriptions"
api GET "/v1/conversations/$CONV/variables?user=ann&limit=1"
is "$(jqr '[.data[].name] | join(",")') $(jqr .has_more)" "last_query true" "variables page"
api GET "/v1/conversations/$CONV/variables?user=ann&limit=1&last_id=$(jqr '.data[0].id')"
is "$(jqr '[.data[].name] | join(",")') $(jqr .has_more)" "turns false" "after last_id"
api GET "/v1/conversations/$CONV/variables?user=ann&variable_name=QUERY"
is "$(jqr '[.data[].name] | join(",")')" last_query "variable_name filters, case folded"
api GET "/v1/conversations/$CONV/variables?user=ann&variable_name=a%27b"
is "$STATUS $(jqr .code)" "400 invalid_param" "a variable_name with other characters"

# A conversation keeps its first inputs; an unknown one is looked for
# first, a malformed id refused.
api POST /v1/chat-messages '{"inputs":{},"query":"x","user":"ann","conversation_id":"00000000-0000-7000-8000-000000000000"}'
is "$STATUS $(jqr .message)" "404 Conversation Not Exists." \
    "an unknown conversation is 404 even with the inputs missing"
api POST /v1/chat-messages '{"inputs":{"city":"Oslo"},"query":"x","user":"ann","conversation_id":"nope"}'
is "$STATUS $(jqr .code)" "400 invalid_param" "a conversation_id that is no UUID is 400"

# ---- Conversations page after last_id ----

llm_script '{"responses": [{"text": "ok", "repeat": true}]}'
for q in c1 c2 c3; do
	api POST /v1/chat-messages "{\"inputs\":{\"city\":\"Rome\"},\"query\":\"$q\",\"user\":\"bob\"}"
done
api GET "/v1/conversations?user=bob&limit=2"
is "$STATUS $(jqr '[.data[].name] | join(",")') $(jqr .has_more)" "200 c3,c2 true" \
    "conversations newest first"
api GET "/v1/conversations?user=bob&limit=2&last_id=$(jqr '.data[1].id')"
is "$(jqr '[.data[].name] | join(",")') $(jqr .has_more)" "c1 false" "last_id gives the next page"
seen= last=
while :; do
	api GET "/v1/conversations?user=bob&limit=1${last:+&last_id=$last}"
	seen="$seen$(jqr '.data[0].name') "
	[ "$(jqr .has_more)" = true ] || break
	last=$(jqr '.data[0].id')
	[ ${#seen} -gt 100 ] && break
done
is "$seen" "c3 c2 c1 " "paging while has_more ends"
api GET "/v1/conversations?user=bob&sort_by=created_at"
is "$(jqr '[.data[].name] | join(",")')" "c1,c2,c3" "sort_by=created_at: oldest first"
api GET "/v1/conversations?user=bob&limit=1&first_id=$(jqr '.data[1].id')"
is "$(jqr '[.data[].name] | join(",")')" "c1" \
    "first_id (dify-client 2.3.2's cursor) pages as last_id does"
api GET "/v1/conversations?user=bob&sort_by=name"
is "$STATUS $(jqr .code)" "400 invalid_param" "an unknown sort_by"
api GET "/v1/conversations?user=bob&last_id=00000000-0000-7000-8000-000000000000"
is "$STATUS $(jqr .message)" "404 Last Conversation Not Exists." "an unknown last_id"

# ---- Another end user, another app: 404 ----

BOBCONV=$(curl -s -H "Authorization: Bearer $KEY" "$BASE/v1/conversations?user=bob&limit=1" | jq -r '.data[0].id')
for who in "eve" ; do
	api POST "/v1/messages/$M1/feedbacks" "{\"user\":\"$who\",\"rating\":\"like\"}"
	is "$STATUS $(jqr .message)" "404 Message Not Exists." "$who cannot rate ann's message"
	api GET "/v1/messages/$M1/suggested?user=$who"
	is "$STATUS" 404 "nor ask for its suggested questions"
	api POST "/v1/conversations/$CONV/name" "{\"user\":\"$who\",\"name\":\"mine\"}"
	is "$STATUS $(jqr .message)" "404 Conversation Not Exists." "nor rename ann's conversation"
	api POST "/v1/conversations/$CONV/name" "{\"user\":\"$who\",\"auto_generate\":true}"
	is "$STATUS" 404 "nor have it named"
	api GET "/v1/conversations/$CONV/variables?user=$who"
	is "$STATUS" 404 "nor read its variables"
	api GET "/v1/messages?conversation_id=$CONV&user=$who"
	is "$STATUS" 404 "nor its messages"
	api DELETE "/v1/conversations/$CONV" "{\"user\":\"$who\"}"
	is "$STATUS" 404 "nor delete it"
done
api POST "/v1/messages/$M1/feedbacks" '{"user":"bob","rating":"like"}'
is "$STATUS" 404 "bob cannot rate ann's message either"
api GET "/v1/conversations/$BOBCONV/variables?user=ann"
is "$STATUS" 404 "nor ann bob's variables"

import_app "$APPS/service_chat.yml"
OTHER=$KEY
KEY=$OTHER
api POST "/v1/messages/$M1/feedbacks" '{"user":"ann","rating":"like"}'
is "$STATUS" 404 "the same end user through another app's key: rating is 404"
api POST "/v1/conversations/$CONV/name" '{"user":"ann","name":"x"}'
is "$STATUS" 404 "renaming is 404"
api GET "/v1/conversations/$CONV/variables?user=ann"
is "$STATUS" 404 "variables are 404"
api GET "/v1/messages/$M1/suggested?user=ann"
is "$STATUS" 404 "suggested questions are 404"
api GET "/v1/messages?conversation_id=$CONV&user=ann"
is "$STATUS" 404 "messages are 404"
api GET "/v1/conversations?user=ann"
is "$(jqr '.data | length')" 0 "and the other app lists none of ann's conversations"
api GET /v1/app/feedbacks
is "$(jqr '.data | length')" 0 "nor its ratings"
KEY=$CFKEY
api GET "/v1/conversations/$CONV/variables?user=ann"
is "$STATUS" 200 "ann still reads them through the right key"

# ---- A chat app: parameters from model_config, suggested questions off ----

printf '%s\n' 'app: {mode: chat, name: Chatty}' 'kind: app' 'version: 0.6.0' \
    'model_config:' \
    '  model: {provider: openai, name: gpt-4o-mini, mode: chat, completion_params: {}}' \
    '  pre_prompt: You help {{name}}.' '  opening_statement: Hello!' \
    '  suggested_questions_after_answer: {enabled: false}' \
    '  speech_to_text: {enabled: true}' \
    '  user_input_form:' \
    '  - text-input: {variable: name, label: Name, required: true, max_length: 20, default: ""}' \
    '  - select: {variable: tone, label: Tone, required: false, options: [dry, warm], default: ""}' \
    >"$T_DIR/chat.yml"
import_app "$T_DIR/chat.yml"
api GET /v1/parameters
is "$STATUS $(jqr '[.user_input_form[] | keys[0] + ":" + (.[keys[0]].variable)] | join(",")')" \
    "200 text-input:name,select:tone" "a chat app's user_input_form comes from its model_config"
is "$(jqr '.user_input_form[1].select.options | join(",")')" "dry,warm" "with the select's options"
is "$(jqr '[.opening_statement, .suggested_questions_after_answer.enabled, .speech_to_text.enabled, .more_like_this.enabled] | map(tostring) | join(",")')" \
    "Hello!,false,true,false" "its features too, Dify's defaults for the others"
llm_script '{"responses": [{"text": "Hi Ada", "usage": {"prompt_tokens": 5, "completion_tokens": 2}}]}'
api POST /v1/chat-messages '{"inputs":{"name":"Ada"},"query":"hello","user":"ann","response_mode":"blocking"}'
is "$(jqr '[.metadata.usage.prompt_tokens, .metadata.usage.completion_tokens] | join(",")')" "5,2" \
    "a chat app reports the model's usage"
CM=$(jqr .message_id)
CC=$(jqr .conversation_id)
api GET "/v1/messages/$CM/suggested?user=ann"
is "$STATUS $(jqr .code)" "403 app_suggested_questions_after_answer_disabled" \
    "suggested questions of an app with the feature off: Dify's 403"
api POST /v1/chat-messages "{\"inputs\":{},\"query\":\"more\",\"user\":\"ann\",\"conversation_id\":\"$CC\"}"
is "$STATUS" 200 "a later message of a chat needs no inputs: the conversation has them"
api GET "/v1/conversations/$CC/variables?user=ann"
is "$STATUS $(jqr '.data | length')" "200 0" "a chat app's conversation has no variables"
api GET /v1/meta
is "$STATUS $(jqr '.tool_icons | length')" "200 0" "meta of an app without tools"
api GET /v1/site
is "$STATUS $(jqr .title) $(jqr .default_language) $(jqr .chat_color_theme_inverted)" \
    "200 Chatty en-US false" "site: the app's name and Dify's defaults"

# ---- Stop: every mode ends as stopped ----

# chat: the answer so far, then message_end; the message is kept.
llm_script '{"responses": [{"chunks": ["one ", "two ", "three ", "four ", "five ", "six "], "delay": 0.4}]}'
stream /v1/chat-messages '{"inputs":{"name":"Ada"},"query":"count","user":"ann","response_mode":"streaming"}' "$T_DIR/stop_chat"
wait_event "$T_DIR/stop_chat" message
TASK=$(events "$T_DIR/stop_chat" '.task_id' | head -1)
api POST "/v1/chat-messages/$TASK/stop" '{"user":"ann"}'
is "$STATUS $(jqr .result)" "200 success" "stop a chat"
wait $SPID
is "$(events "$T_DIR/stop_chat" '.event' | sort -u | tr '\n' ' ')" "message message_end " \
    "a stopped chat ends with message_end, no error"
SC=$(events "$T_DIR/stop_chat" 'select(.event=="message_end") | .conversation_id')
api GET "/v1/messages?conversation_id=$SC&user=ann"
is "$(jqr '.data[0].status') $(jqr '.data[0].answer | startswith("one")')" "normal true" \
    "its message keeps the answer so far"

# completion
printf '%s\n' 'app: {mode: completion, name: Writer}' 'kind: app' 'version: 0.6.0' \
    'model_config:' '  model: {provider: openai, name: gpt-4o-mini, mode: chat}' \
    '  pre_prompt: Write about {{topic}}.' '  user_input_form:' \
    '  - paragraph: {variable: topic, label: Topic, required: true}' >"$T_DIR/comp.yml"
import_app "$T_DIR/comp.yml"
api GET /v1/parameters
is "$(jqr '.user_input_form[0].paragraph.variable')" topic "a completion app's user_input_form"
llm_script '{"responses": [{"chunks": ["a ", "b ", "c ", "d ", "e ", "f "], "delay": 0.4}]}'
stream /v1/completion-messages '{"inputs":{"topic":"sea"},"user":"ann","response_mode":"streaming"}' "$T_DIR/stop_comp"
wait_event "$T_DIR/stop_comp" message
TASK=$(events "$T_DIR/stop_comp" '.task_id' | head -1)
api POST "/v1/completion-messages/$TASK/stop" '{"user":"ann"}'
wait $SPID
is "$(events "$T_DIR/stop_comp" '.event' | sort -u | tr '\n' ' ')" "message message_end " \
    "a stopped completion ends with message_end, no error"

# chatflow: workflow_finished says stopped, then message_end.
KEY=$CFKEY
llm_script '{"responses": [{"chunks": ["x ", "y ", "z ", "w ", "v ", "u "], "delay": 0.4}]}'
stream /v1/chat-messages '{"inputs":{"city":"Nice"},"query":"slow","user":"ann","response_mode":"streaming"}' "$T_DIR/stop_cf"
wait_event "$T_DIR/stop_cf" message
TASK=$(events "$T_DIR/stop_cf" '.task_id' | head -1)
api POST "/v1/chat-messages/$TASK/stop" '{"user":"ann"}'
wait $SPID
is "$(events "$T_DIR/stop_cf" 'select(.event=="workflow_finished") | .data.status')" stopped \
    "a stopped chatflow's run is stopped"
is "$(events "$T_DIR/stop_cf" 'select(.event=="node_finished" and .data.node_id=="llm") | .data.status')" stopped \
    "its LLM node too, not failed"
is "$(events "$T_DIR/stop_cf" '.event' | grep -c '^error$') $(events "$T_DIR/stop_cf" '.event' | tail -1)" \
    "0 message_end" "no error event; message_end last"

# workflow: a stop kills the running code node at once.
import_app "$APPS/slow.yml"
stream /v1/workflows/run '{"inputs":{"seconds":120},"user":"ann","response_mode":"streaming"}' "$T_DIR/stop_wf"
i=0
while [ "$(events "$T_DIR/stop_wf" 'select(.event=="node_started") | .data.node_id' 2>/dev/null | tail -1)" != wait ]; do
	i=$((i + 1)); [ $i -gt 200 ] && break; sleep 0.05
done
# the code itself sleeping: a code runner of this flowcgi in the sleep
wait_until 10 descendant "$FC_PID" 'runner\.py' hrtimer_nanosleep
ok $? "the code node's sleep runs"
TASK=$(events "$T_DIR/stop_wf" '.task_id' | head -1)
api POST "/v1/workflows/tasks/$TASK/stop" '{"user":"ann"}'
is "$STATUS" 200 "stop a workflow while its code node sleeps"
wait $SPID
is "$(events "$T_DIR/stop_wf" 'select(.event=="node_finished" and .data.node_id=="wait") | "\(.data.status) \(.data.elapsed_time < 120)"')" \
    "stopped true" "the code node is killed, not waited for"
is "$(events "$T_DIR/stop_wf" 'select(.event=="workflow_finished") | .data.status')" stopped \
    "the workflow ends as stopped"

# A sandboxed workflow: a stop kills the running command at once.
printf '%s\n' 'app: {mode: workflow, name: Sleeper}' 'kind: app' 'version: 0.6.0' \
    'workflow:' '  features: {sandbox: {enabled: true}}' '  graph:' '    edges:' \
    '    - {id: e1, source: start, sourceHandle: source, target: cmd, targetHandle: target}' \
    '    - {id: e2, source: cmd, sourceHandle: source, target: end, targetHandle: target}' \
    '    nodes:' '    - id: start' '      data: {type: start, title: Start, variables: []}' \
    '    - id: cmd' "      data: {type: command, title: Sleep, working_directory: '.', command: 'sleep 120'}" \
    '    - id: end' '      data: {type: end, title: End, outputs: [{variable: out, value_selector: [cmd, stdout]}]}' \
    >"$T_DIR/sleeper.yml"
SLOWKEY=$KEY
import_app "$T_DIR/sleeper.yml"
stream /v1/workflows/run '{"inputs":{},"user":"ann","response_mode":"streaming"}' "$T_DIR/stop_cmd"
i=0
while [ "$(events "$T_DIR/stop_cmd" 'select(.event=="node_started") | .data.node_id' 2>/dev/null | tail -1)" != cmd ]; do
	i=$((i + 1)); [ $i -gt 200 ] && break; sleep 0.05
done
# the command itself running in its sandbox, under this flowcgi
wait_until 10 descendant "$FC_PID" 'sleep 120' hrtimer_nanosleep
ok $? "the command node's sleep 120 runs"
api POST "/v1/workflows/tasks/$(events "$T_DIR/stop_cmd" '.task_id' | head -1)/stop" '{"user":"ann"}'
wait $SPID
is "$(events "$T_DIR/stop_cmd" 'select(.event=="node_finished" and .data.node_id=="cmd") | "\(.data.status) \(.data.elapsed_time < 120)"') $(events "$T_DIR/stop_cmd" 'select(.event=="workflow_finished") | .data.status')" \
    "stopped true stopped" "a stop kills a running command node too; the run is stopped"
KEY=$SLOWKEY

# Workflow logs: runs of the service API, newest first, filtered.
api POST /v1/workflows/run '{"inputs":{"seconds":0},"user":"carl","response_mode":"blocking"}'
is "$(jqr .data.status)" succeeded "a quick run"
api GET /v1/workflows/logs
is "$STATUS $(jqr .total) $(jqr '[.data[].workflow_run.status] | join(",")')" "200 2 succeeded,stopped" \
    "workflow logs list the app's runs, newest first"
is "$(jqr '.data[0] | [.created_from, .created_by_role, .created_by_end_user.session_id] | join(",")')" \
    "service-api,end_user,carl" "each with its end user"
api GET "/v1/workflows/logs?status=stopped"
is "$(jqr .total) $(jqr '.data[0].workflow_run.id')" "1 $TASK" "filtered by status"
api GET "/v1/workflows/logs?created_by_end_user_session_id=carl&limit=1"
is "$(jqr .total) $(jqr .has_more)" "1 false" "by end user"
api GET "/v1/workflows/logs?created_at__after=2999-01-01T00:00:00Z"
is "$(jqr .total)" 0 "by time"
api GET "/v1/workflows/logs?status=running"
is "$STATUS" 400 "an unknown status"
api GET "/v1/workflows/logs?created_at__before=yesterday"
is "$STATUS" 400 "a time that is not ISO 8601"

req GET /healthz
is "$STATUS" 200 "server healthy at the end"
