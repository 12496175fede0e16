# t_service_ref.sh — the service API routes that Dify's Node SDK
# (dify-client) does not wrap, route by route against Dify's API
# reference: each answer's fields compared with the shape written here,
# with where in Dify (langgenius/dify api/, and dify-docs
# en/api-reference/openapi_*.json) it comes from. The SDK's own routes are
# t_sdk's; annotations are t_annotations'.
. "$(dirname "$0")/lib.sh"

# the audio routes' models (audio.speech_to_text_model, .text_to_speech_model)
unset OLLAMA_BASE_URL OLLAMA_API_KEY
export FLOWCGI_AUDIO_SPEECH_TO_TEXT_MODEL='fakeaudio#whisper-1'
export FLOWCGI_AUDIO_TEXT_TO_SPEECH_MODEL='fakeaudio#tts-1'
start_llm_front || exit 1
# fields <description> <jq path> <comma-separated keys, sorted> [<status>]:
# the answer's status and the keys at path are exactly these
fields() {
	is "$STATUS $(jqr "$2 | keys_unsorted | sort | join(\",\")")" "${4:-200} $3" "$1"
}
api() { if [ $# -gt 2 ]; then svc "$KEY" "$1" "$2" -H "$J" -d "$3"; else svc "$KEY" "$1" "$2"; fi; }

cat >"$T_DIR/wf.yml" <<'YML'
app: {mode: workflow, name: Ref workflow, description: shapes}
kind: app
version: 0.6.0
workflow:
  features: {}
  graph:
    edges:
    - {id: e1, source: start, sourceHandle: source, target: tpl, targetHandle: target}
    - {id: e2, source: tpl, sourceHandle: source, target: end, targetHandle: target}
    nodes:
    - id: start
      data: {type: start, title: Start, variables: [{variable: q, type: text-input, required: true, label: Q}]}
    - id: tpl
      data: {type: template-transform, title: T, template: 'got {{ q }}', variables: [{variable: q, value_selector: [start, q]}]}
    - id: end
      data: {type: end, title: End, outputs: [{variable: out, value_selector: [tpl, output]}]}
YML
cat >"$T_DIR/chat.yml" <<'YML'
app: {mode: advanced-chat, name: Ref chat}
kind: app
version: 0.6.0
workflow:
  conversation_variables:
  - {id: 5a1e0c3e-0000-4000-8000-000000000001, name: topic, value_type: string, value: none, description: the topic}
  features: {suggested_questions_after_answer: {enabled: true}}
  graph:
    edges:
    - {id: e1, source: start, sourceHandle: source, target: answer, targetHandle: target}
    nodes:
    - id: start
      data: {type: start, title: Start, variables: []}
    - id: answer
      data: {type: answer, title: Answer, answer: 'echo {{#sys.query#}}'}
YML

# ====== The app ======

import_app "$T_DIR/wf.yml"
WAPP=$APP WKEY=$KEY
# service_api/index.py IndexApi: {welcome, api_version, server_version}
api GET /v1/
fields "GET /v1/: Dify's API info" . "api_version,server_version,welcome"
is "$(jqr '[.welcome, .api_version] | join(" ")')" "Dify OpenAPI v1" "... its welcome and version"
# service_api/app/app.py AppInfoApi: {name, description, tags, mode,
# author_name}
api GET /v1/info
fields "GET /v1/info" . "author_name,description,mode,name,tags"
is "$(jqr '[.name, .mode, .description] | join("|")')" "Ref workflow|workflow|shapes" "... the app's own"
# service_api/app/site.py AppSiteApi (fields/app_fields.py site_fields)
api GET /v1/site
fields "GET /v1/site: Dify's site fields" . \
    "chat_color_theme,chat_color_theme_inverted,copyright,custom_disclaimer,default_language,description,icon,icon_background,icon_type,icon_url,privacy_policy,show_workflow_steps,title,use_icon_as_answer_icon"
# service_api/app/app.py AppMetaApi: {tool_icons}
api GET /v1/meta
fields "GET /v1/meta" . "tool_icons"

# ====== Workflows ======

api POST /v1/workflows/run '{"inputs":{"q":"x"},"user":"u","response_mode":"blocking"}'
RUN=$(jqr .workflow_run_id) TASK=$(jqr .task_id)
# (POST /v1/workflows/run is the SDK's, but its blocking answer is the
# shape the by-id route shares: core/app/entities/task_entities.py
# WorkflowAppBlockingResponse, without the stream's created_by,
# exceptions_count, files)
fields "the blocking answer's data (WorkflowAppBlockingResponse.Data)" .data \
    "created_at,elapsed_time,error,finished_at,id,outputs,status,total_steps,total_tokens,workflow_id"
# service_api/app/workflow.py WorkflowRunDetailApi
# (fields/workflow_run_fields.py workflow_run_fields for the service API)
api GET "/v1/workflows/run/$RUN"
fields "GET /v1/workflows/run/{id}: Dify's run fields" . \
    "created_at,elapsed_time,error,finished_at,id,inputs,outputs,status,total_steps,total_tokens,workflow_id"
is "$(jqr '[.status, .outputs.out, .inputs.q] | join(" ")')" "succeeded got x x" "... the run's own"
api GET /v1/workflows/run/00000000-0000-7000-8000-000000000000
is "$STATUS" 404 "... an unknown run: 404"
# WorkflowAppLogApi (fields/workflow_app_log_fields.py)
api GET /v1/workflows/logs
fields "GET /v1/workflows/logs: Dify's page" . "data,has_more,limit,page,total"
fields "... a log's fields" '.data[0]' \
    "created_at,created_by_account,created_by_end_user,created_by_role,created_from,id,workflow_run"
fields "... its workflow_run" '.data[0].workflow_run' \
    "created_at,elapsed_time,error,exceptions_count,finished_at,id,status,total_steps,total_tokens,triggered_from,version"
fields "... its end user (simple_end_user_fields)" '.data[0].created_by_end_user' "id,is_anonymous,session_id,type"
# WorkflowRunByIdApi: POST /v1/workflows/{workflow_id}/run, one version
req GET "$A/$WAPP/workflows"
WID=$(jqr '.items[0].id // .data[0].id')
if [ -n "$WID" ] && [ "$WID" != null ]; then
	api POST "/v1/workflows/$WID/run" '{"inputs":{"q":"v"},"user":"u","response_mode":"blocking"}'
	fields "POST /v1/workflows/{workflow_id}/run: the blocking answer" . "data,task_id,workflow_run_id"
	fields "... its data (WorkflowAppBlockingResponse)" .data \
	    "created_at,elapsed_time,error,finished_at,id,outputs,status,total_steps,total_tokens,workflow_id"
	is "$(jqr .data.workflow_id)" "$WID" "... of the version asked"
else
	skip "the app has no published version to run by id (GET workflows gave none)"
fi
# stop: Dify answers 200 {result: success} even for a task that ended
# or never was (service_api/app/workflow.py WorkflowTaskStopApi)
api POST "/v1/workflows/tasks/$TASK/stop" '{"user":"u"}'
is "$STATUS $(jq -c . <<<"$BODY")" '200 {"result":"success"}' "stop of an ended workflow task: Dify's answer"
api POST /v1/workflows/tasks/00000000-0000-7000-8000-000000000000/stop '{"user":"u"}'
is "$STATUS $(jq -c . <<<"$BODY")" '200 {"result":"success"}' "... of an unknown one too"

# ====== Chat ======

import_app "$T_DIR/chat.yml"
CKEY=$KEY
api POST /v1/chat-messages '{"inputs":{},"query":"hello","user":"u","response_mode":"blocking"}'
CONV=$(jqr .conversation_id) MSG=$(jqr .message_id) CTASK=$(jqr .task_id)
# service_api/app/completion.py ChatStopApi
api POST "/v1/chat-messages/$CTASK/stop" '{"user":"u"}'
is "$STATUS $(jq -c . <<<"$BODY")" '200 {"result":"success"}' "POST /v1/chat-messages/{task_id}/stop"
# service_api/app/message.py MessageSuggestedApi: {result, data}
llm_script '{"responses": [{"text": "[\"One?\", \"Two?\"]", "repeat": true}]}'
api GET "/v1/messages/$MSG/suggested?user=u"
fields "GET /v1/messages/{id}/suggested" . "data,result"
# service_api/app/conversation.py ConversationVariablesApi
# (fields/conversation_variable_fields.py paginated_conversation_variable_fields)
api GET "/v1/conversations/$CONV/variables?user=u"
fields "GET /v1/conversations/{id}/variables: Dify's page" . "data,has_more,limit"
fields "... a variable (conversation_variable_fields)" '.data[0]' \
    "created_at,description,id,name,updated_at,value,value_type"
VID=$(jqr .data[0].id)
# ConversationVariableDetailApi.put: {value} -> the variable
api PUT "/v1/conversations/$CONV/variables/$VID" '{"value":"cats","user":"u"}'
fields "PUT /v1/conversations/{id}/variables/{variable_id}" . \
    "created_at,description,id,name,updated_at,value,value_type"
is "$(jqr '[.name, .value] | join("=")')" "topic=cats" "... the value written"
api PUT "/v1/conversations/$CONV/variables/$VID" '{"value":3,"user":"u"}'
is "$STATUS" 400 "... a value of another type: 400"
api PUT "/v1/conversations/$CONV/variables/00000000-0000-7000-8000-000000000000" '{"value":"x","user":"u"}'
is "$STATUS" 404 "... an unknown variable: 404"
api GET "/v1/conversations/$CONV/variables?user=someone-else"
is "$STATUS" 404 "another end user's conversation variables: 404"
# service_api/app/message.py AppGetFeedbacksApi (fields/message_fields.py
# feedback_fields)
api POST "/v1/messages/$MSG/feedbacks" '{"rating":"like","user":"u","content":"good"}'
api GET /v1/app/feedbacks
fields "GET /v1/app/feedbacks" . "data"
fields "... a feedback's fields" '.data[0]' \
    "app_id,content,conversation_id,created_at,from_account_id,from_end_user_id,from_source,id,message_id,rating,updated_at"

# ====== Completion ======

printf 'app: {mode: completion, name: Ref completion}\nkind: app\nversion: 0.6.0\nmodel_config:\n  model: {provider: openai, name: gpt-4o-mini, mode: chat}\n  pre_prompt: Say {{x}}.\n  user_input_form:\n  - text-input: {variable: x, label: X, required: false}\n' >"$T_DIR/comp.yml"
import_app "$T_DIR/comp.yml"
# service_api/app/completion.py CompletionStopApi: 200 {result: success},
# whatever the task
api POST /v1/completion-messages/00000000-0000-7000-8000-000000000000/stop '{"user":"u"}'
is "$STATUS $(jq -c . <<<"$BODY")" '200 {"result":"success"}' "POST /v1/completion-messages/{task_id}/stop"
# CompletionApi with a chat app's key: Dify's AppUnavailableError
KEY=$CKEY
api POST /v1/completion-messages '{"inputs":{},"user":"u","response_mode":"blocking"}'
is "$STATUS $(jqr .code)" "400 app_unavailable" "completion-messages with a chatflow's key: Dify's app_unavailable"

# ====== Audio and files ======

start_fake audio AUD
req POST /console/api/workspaces/current/model-providers/fakeaudio -H "$J" \
    -d "{\"base_url\":\"$AUD/v1\",\"api_key\":\"sk-audio\",\"models\":[\"whisper-1\",\"tts-1\"]}"
cat >"$T_DIR/audio.yml" <<'YML'
app: {mode: advanced-chat, name: Ref audio}
kind: app
version: 0.6.0
workflow:
  features: {speech_to_text: {enabled: true}, text_to_speech: {enabled: true, voice: nova, language: en-US}}
  graph:
    edges:
    - {id: e1, source: start, target: answer}
    nodes:
    - id: start
      data: {type: start, title: Start, variables: []}
    - id: answer
      data: {type: answer, title: Answer, answer: 'Spoken answer'}
YML
import_app "$T_DIR/audio.yml"
printf 'ID3fake-mp3-bytes' >"$T_DIR/in.mp3"
# form <path> [curl -F args...]: a multipart POST with $KEY; STATUS, BODY
form() {
	local p=$1
	shift
	BODY=$(curl -sS -w '\n%{http_code}' -H "Authorization: Bearer $KEY" "$@" "$BASE$p")
	STATUS=${BODY##*
}
	BODY=${BODY%
*}
}
# service_api/app/audio.py AudioApi.post -> AudioService.transcript_asr:
# {text} (dify-docs openapi_chat.json /audio-to-text: 200 {text})
form /v1/audio-to-text -F "file=@$T_DIR/in.mp3;type=audio/mpeg" -F user=u
fields "POST /v1/audio-to-text: Dify's {text}" . "text"
is "$(jqr .text)" "hello from the fake" "... the provider's transcription"
# AudioApi's errors (controllers/service_api/app/error.py
# NoAudioUploadedError 400, UnsupportedAudioTypeError 415), in the error
# body of libs/external_api.py {code, message, status}
form /v1/audio-to-text -F user=u
fields "audio-to-text without a file: Dify's error body" . "code,message,status" 400
is "$(jqr .code) $(jqr .status)" "no_audio_uploaded 400" "... no_audio_uploaded"
form /v1/audio-to-text -F "file=@$T_DIR/in.mp3;type=text/plain" -F user=u
fields "audio-to-text of a file that is no audio: Dify's error body" . "code,message,status" 415
is "$(jqr .code)" unsupported_audio_type "... unsupported_audio_type"
# TextApi.post -> AudioService.transcript_tts: the audio itself,
# audio/mpeg (dify-docs openapi_chat.json /text-to-audio: 200 audio)
code=$(curl -sS -o "$T_DIR/out.mp3" -D "$T_DIR/tts.h" -w '%{http_code}' -H "Authorization: Bearer $KEY" \
    -H "$J" -d '{"text":"Say this","user":"u"}' "$BASE/v1/text-to-audio")
is "$code $(tr -d '\r' <"$T_DIR/tts.h" | sed -n 's/^[Cc]ontent-[Tt]ype: //p')" "200 audio/mpeg" \
    "POST /v1/text-to-audio: 200 audio/mpeg"
is "$(head -c 3 "$T_DIR/out.mp3")" ID3 "... the provider's audio, as it came"
# service_api/app/file.py FileApi.post (fields/file_fields.py
# file_fields), then service_api/app/file_preview.py FilePreviewApi.get
# (_build_file_response): the bytes with the upload's mimetype and
# Content-Length, Accept-Ranges: bytes for audio and video, Cache-Control
# max-age=3600; as_attachment: Content-Disposition attachment;
# filename*=UTF-8'' and application/octet-stream. Dify's Cache-Control is
# public: flowcgi's is private on purpose, since a file read with an app's
# key kept by a shared cache would go to whoever asks it next.
form /v1/files/upload -F "file=@$T_DIR/in.mp3;type=audio/mpeg" -F user=u
fields "POST /v1/files/upload: Dify's file fields" . \
    "created_at,created_by,extension,id,mime_type,name,preview_url,size" 201
FID=$(jqr .id)
# head_of <name>: a header of the last preview, its value
head_of() { tr -d '\r' <"$T_DIR/pv.h" | sed -n "s/^$1: //Ip" | tail -1; }
code=$(curl -sS -o "$T_DIR/pv.bin" -D "$T_DIR/pv.h" -w '%{http_code}' -H "Authorization: Bearer $KEY" \
    "$BASE/v1/files/$FID/preview?user=u")
is "$code|$(head_of content-type)|$(head_of content-length)|$(head_of accept-ranges)|$(head_of cache-control)" \
    "200|audio/mpeg|17|bytes|private, max-age=3600" "GET /v1/files/{id}/preview: Dify's headers"
cmp -s "$T_DIR/pv.bin" "$T_DIR/in.mp3"
ok $? "... and the upload's bytes"
code=$(curl -sS -o /dev/null -D "$T_DIR/pv.h" -w '%{http_code}' -H "Authorization: Bearer $KEY" \
    "$BASE/v1/files/$FID/preview?user=u&as_attachment=true")
is "$code|$(head_of content-type)|$(head_of content-disposition)" \
    "200|application/octet-stream|attachment; filename*=UTF-8''in.mp3" \
    "... as_attachment=true: Dify's download headers"
