# t_annotations.sh — Dify's annotation reply through nginx: the service
# API's and the console's routes, the reply setting, and a chat answered
# by an annotation at run time with its score threshold. Embeddings come
# from the fake OpenAI-compatible /embeddings (a hashed bag of words, so
# a score is the cosine of word counts). Each expected shape names where
# in Dify's source (langgenius/dify, api/) it comes from.
. "$(dirname "$0")/lib.sh"

start_fake embed EMB || exit 1
FLOWCGI_ANNOTATIONS_MAX_PER_APP=3 start_llm_front || exit 1
req POST /console/api/workspaces/current/model-providers/fakeemb -H "$J" \
    -d "{\"base_url\":\"$EMB/v1\",\"api_key\":\"\"}"
ask() { svc "$KEY" POST /v1/chat-messages -H "$J" -d "{\"inputs\":{},\"query\":\"$1\",\"user\":\"u\"}"; }
llm_calls() { curl -s "$LLM/_requests" | jq '[.[] | select(.path | endswith("/chat/completions"))] | length'; }
enable() {	# enable <threshold> [<provider>]: the reply on, by the app's key
	svc "$KEY" POST /v1/apps/annotation-reply/enable -H "$J" -d "{\"score_threshold\":$1,
	    \"embedding_provider_name\":\"${2:-fakeemb}\",\"embedding_model_name\":\"bow\"}"
}

import_app "$TOP/tests/e2e/apps/chat_stream.yml"
APP1=$APP KEY1=$KEY

# ====== The service API's routes ======

# service_api/app/annotation.py AnnotationListApi.get
svc "$KEY" GET /v1/apps/annotations
is "$STATUS $(jq -c . <<<"$BODY")" '200 {"data":[],"has_more":false,"limit":20,"total":0,"page":1}' \
    "no annotations: Dify's empty page"
# AnnotationListApi.post, marshalled with fields/annotation_fields.py
svc "$KEY" POST /v1/apps/annotations -H "$J" -d '{"question":"What is the refund policy","answer":"Thirty days, no questions."}'
is "$STATUS $(jqr 'keys | join(",")')" "200 answer,created_at,hit_count,id,question" \
    "create an annotation: Dify's fields"
AN=$(jqr .id)
is "$(jqr '[.question, .answer, .hit_count] | join("|")')" \
    "What is the refund policy|Thirty days, no questions.|0" "... with what was given"
svc "$KEY" POST /v1/apps/annotations -H "$J" -d '{"question":"Opening hours","answer":"Nine to five."}'
AN2=$(jqr .id)
svc "$KEY" GET "/v1/apps/annotations?limit=1"
is "$(jqr '[.total, (.data | length), .has_more, .data[0].id == "'"$AN2"'"] | join(" ")')" "2 1 true true" \
    "list: newest first, a full page has_more"
svc "$KEY" GET "/v1/apps/annotations?keyword=REFUND"
is "$(jqr '[.total, .data[0].id] | join(" ")')" "1 $AN" "keyword: the question or answer holds it, in any case"
# AnnotationUpdateDeleteApi.put
svc "$KEY" PUT "/v1/apps/annotations/$AN" -H "$J" -d '{"question":"What is the refund policy","answer":"Thirty days."}'
is "$STATUS $(jqr .answer)" "200 Thirty days." "update an annotation"
svc "$KEY" PUT /v1/apps/annotations/00000000-0000-7000-8000-000000000000 -H "$J" -d '{"question":"q","answer":"a"}'
is "$STATUS $(jqr .message)" "404 Annotation not found" "update of an unknown annotation: 404"
svc "$KEY" POST /v1/apps/annotations -H "$J" -d '{"answer":"a"}'
is "$STATUS $(jqr .code)" "400 invalid_param" "no question: 400"
svc "$KEY" POST /v1/apps/annotations -H "$J" -d '{"question":"Third","answer":"3"}'
svc "$KEY" POST /v1/apps/annotations -H "$J" -d '{"question":"Fourth","answer":"4"}'
is "$STATUS $(jqr .message)" "413 the app has as many annotations as annotations.max_per_app (3)" \
    "past annotations.max_per_app: 413 naming the setting"
svc "$KEY" DELETE "/v1/apps/annotations/$(jqr .id)"
svc "$KEY" GET /v1/apps/annotations?keyword=Third
svc "$KEY" DELETE "/v1/apps/annotations/$(jqr .data[0].id)"
is "$STATUS" 204 "delete an annotation: Dify's 204"

# ====== The reply setting ======

# AnnotationReplyActionApi.post: score_threshold, embedding_provider_name,
# embedding_model_name are required
svc "$KEY" POST /v1/apps/annotation-reply/enable -H "$J" -d '{"embedding_provider_name":"fakeemb","embedding_model_name":"bow"}'
is "$STATUS $(jqr .code)" "400 invalid_param" "enable without score_threshold: 400"
svc "$KEY" POST /v1/apps/annotation-reply/bogus -H "$J" -d '{"score_threshold":0.9,"embedding_provider_name":"fakeemb","embedding_model_name":"bow"}'
is "$STATUS $(jqr .message)" "400 Unsupported annotation reply action" "another action: 400"
enable 0.9
# annotation_service.py enable_app_annotation: {job_id, job_status
# "waiting"} (the task runs after the answer; here it ended before)
is "$STATUS $(jqr 'keys | join(",")') $(jqr .job_status)" "200 job_id,job_status waiting" \
    "enable: Dify's job"
JOB=$(jqr .job_id)
is "$(curl -s "$EMB/_requests" | jq -c '[.[] | select(.path=="/v1/embeddings") | .body.input] | last')" \
    '["What is the refund policy","Opening hours"]' "... every question embedded by the model named"
# AnnotationReplyActionStatusApi.get
svc "$KEY" GET "/v1/apps/annotation-reply/enable/status/$JOB"
is "$STATUS $(jq -c . <<<"$BODY")" "200 {\"job_id\":\"$JOB\",\"job_status\":\"completed\",\"error_msg\":\"\"}" \
    "the job's status: Dify's fields"
svc "$KEY" GET "/v1/apps/annotation-reply/disable/status/$JOB"
is "$STATUS $(jqr .message)" "404 The job does not exist." "the same job under another action: 404"
# console AppAnnotationSettingDetailApi.get
req GET "$A/$APP/annotation-setting"
is "$(jqr '[.enabled, .score_threshold, .embedding_model.embedding_provider_name, .embedding_model.embedding_model_name] | join(" ")')" \
    "true 0.9 fakeemb bow" "console: the setting, enabled, its threshold and model"
SID=$(jqr .id)

# ====== At run time ======

n0=$(llm_calls)
ask "What is the refund policy"
# easy_ui_based_generate_task_pipeline _handle_annotation_reply: the
# annotation's answer, metadata.annotation_reply {id, account}
is "$STATUS $(jqr .answer) $(jqr .metadata.annotation_reply.id)" "200 Thirty days. $AN" \
    "a query that is an annotation's question: its answer, with annotation_reply"
is "$(jqr '.metadata.annotation_reply.account | keys | join(",")')" "id,name" "... naming an account"
is "$(llm_calls)" "$n0" "... and the model is not asked"
svc "$KEY" GET /v1/apps/annotations?keyword=refund
is "$(jqr .data[0].hit_count)" 1 "the annotation's hit_count counts it"
llm_script '{"responses": [{"text": "from the model"}]}'
ask "refund policy please"
is "$(jqr .answer) $(jqr '.metadata.annotation_reply')" "from the model null" \
    "a query under the threshold (0.9): the app runs"
# console AppAnnotationSettingUpdateApi.post
req POST "$A/$APP/annotation-settings/$SID" -H "$J" -d '{"score_threshold":0.5}'
is "$STATUS $(jqr .score_threshold)" "200 0.5" "console: the threshold changed"
req POST "$A/$APP/annotation-settings/00000000-0000-7000-8000-000000000000" -H "$J" -d '{"score_threshold":0.5}'
is "$STATUS $(jqr .message)" "404 App annotation not found" "... another setting id: 404"
svc "$KEY" POST /v1/chat-messages -H "$J" -d '{"inputs":{},"query":"refund policy please","user":"u","response_mode":"streaming"}'
printf '%s' "$BODY" | sed -n 's/^data: //p' >"$T_DIR/ann.ev"
is "$(jq -r .event "$T_DIR/ann.ev" | tr '\n' ' ')" "message message_end " \
    "streamed at 0.5: the answer as a message, then message_end (nothing runs)"
is "$(jq -c 'select(.event=="message") | [.answer, .from_variable_selector]' "$T_DIR/ann.ev")" '["Thirty days.",null]' \
    "... the annotation's answer"
is "$(jq -r 'select(.event=="message_end") | .metadata.annotation_reply.id' "$T_DIR/ann.ev")" "$AN" \
    "... message_end names the annotation"
# a question created while the reply is on is embedded then
svc "$KEY" POST /v1/apps/annotations -H "$J" -d '{"question":"Where is the shop","answer":"On the corner."}'
ask "Where is the shop"
is "$(jqr .answer)" "On the corner." "an annotation made while the reply is on answers at once"

# a chat app (model_config) is answered the same way
printf 'app: {mode: chat, name: plain}\nkind: app\nversion: 0.6.0\nmodel_config:\n  model: {provider: openai, name: gpt-4o-mini, mode: chat}\n  pre_prompt: Be brief.\n' >"$T_DIR/chat.yml"
import_app "$T_DIR/chat.yml"
APP2=$APP
svc "$KEY" POST /v1/apps/annotations -H "$J" -d '{"question":"ping","answer":"pong"}'
AN3=$(jqr .id)
enable 1
ask ping
is "$(jqr .answer) $(jqr .metadata.annotation_reply.id)" "pong $AN3" "a chat app: answered by its annotation"

# ====== Apps do not see each other's ======

svc "$KEY" GET /v1/apps/annotations
is "$(jqr '[.data[].id] | join(",")')" "$AN3" "an app lists its own annotations only"
svc "$KEY" PUT "/v1/apps/annotations/$AN" -H "$J" -d '{"question":"x","answer":"y"}'
is "$STATUS" 404 "another app's annotation through this key: 404"
req DELETE "$A/$APP2/annotations/$AN"
is "$STATUS" 404 "... and through the console under this app: 404"
svc "$KEY" GET "/v1/apps/annotation-reply/enable/status/$JOB"
is "$STATUS" 404 "another app's job: 404"

# ====== The console's routes ======

req GET "$A/$APP1/annotations?keyword=shop"
is "$STATUS $(jqr '.data[0].answer')" "200 On the corner." "console: the app's annotations"
req POST "$A/$APP1/annotations/$AN" -H "$J" -d '{"question":"What is the refund policy","answer":"A month."}'
is "$STATUS $(jqr .answer)" "200 A month." "console: update (POST, as Dify's console)"

# ====== Off, and a model that fails ======

KEY=$KEY1
svc "$KEY" POST /v1/apps/annotation-reply/disable -H "$J" -d '{"score_threshold":0.9,"embedding_provider_name":"fakeemb","embedding_model_name":"bow"}'
is "$STATUS $(jqr .job_status)" "200 waiting" "disable"
req GET "$A/$APP1/annotation-setting"
is "$(jq -c . <<<"$BODY")" '{"enabled":false}' "... the setting says so"
llm_script '{"responses": [{"text": "the model again"}]}'
ask "What is the refund policy"
is "$(jqr .answer)" "the model again" "... and the app runs again"
enable 0.9 nosuchprovider
is "$STATUS $(jqr .job_status)" "200 waiting" "enable with a model that cannot embed: a job"
svc "$KEY" GET "/v1/apps/annotation-reply/enable/status/$(jqr .job_id)"
ok "$([ "$(jqr .job_status)" = error ] && [ -n "$(jqr .error_msg)" ] && echo 0 || echo 1)" \
    "... its status says error and why ($(jqr .error_msg))"
req GET "$A/$APP1/annotation-setting"
is "$(jqr .enabled)" false "... and the reply stays off"

# the app's annotations go with it
req DELETE "$A/$APP2"
req GET "$A/$APP2/annotations"
is "$STATUS" 404 "a deleted app's annotations: 404"
