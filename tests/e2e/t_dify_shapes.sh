# t_dify_shapes.sh — answers compared field by field with Dify's, through
# nginx and the fake LLM, and one check per defect found in real exports
# and first use. Each expected shape names where in Dify's source (the
# langgenius/dify repository, api/) or API reference it comes from.
. "$(dirname "$0")/lib.sh"

unset OLLAMA_BASE_URL OLLAMA_API_KEY
export FLOWCGI_AUDIO_SPEECH_TO_TEXT_MODEL='fakeaudio#whisper-1'
export FLOWCGI_AUDIO_TEXT_TO_SPEECH_MODEL='fakeaudio#tts-1'
start_llm_front || exit 1
ev() { sed -n 's/^data: //p' "$1"; }
keys() { jq -c 'keys' 2>/dev/null; }	# an event's sorted field names
chat() { curl -sS -N -H "Authorization: Bearer $KEY" -H "$J" -d "$1" "$BASE/v1/chat-messages"; }
wf() { curl -sS -N -H "Authorization: Bearer $KEY" -H "$J" -d "$1" "$BASE/v1/workflows/run"; }
# llm_wf_app <name> <provider> <model>: imports start -> llm (prompt
# "hello") -> end (text = the LLM's text)
llm_wf_app() {
	cat >"$T_DIR/llm-$1.yml" <<YML
app: {mode: workflow, name: $1}
kind: app
version: 0.6.0
workflow:
  graph:
    edges:
    - {id: e1, source: start, target: llm}
    - {id: e2, source: llm, target: end}
    nodes:
    - id: start
      data: {type: start, title: Start, variables: []}
    - id: llm
      data:
        type: llm
        title: LLM
        model: {provider: $2, name: '$3', mode: chat}
        prompt_template: [{role: user, text: hello}]
        context: {enabled: false}
    - id: end
      data: {type: end, title: End, outputs: [{variable: text, value_selector: [llm, text]}]}
YML
	import_app "$T_DIR/llm-$1.yml"
}
# answer_app <name> <DSL version> <answer> [<workflow features, YAML
# flow>] [<conversation variables, YAML flow>]: imports a chatflow
# start -> answer
answer_app() {
	feat=${4:-'{}'} cvars=${5:-'[]'}
	cat >"$T_DIR/ans-$1.yml" <<YML
app: {mode: advanced-chat, name: $1}
kind: app
version: $2
workflow:
  features: $feat
  conversation_variables: $cvars
  graph:
    edges:
    - {id: e1, source: start, target: answer}
    nodes:
    - id: start
      data: {type: start, title: Start, variables: []}
    - id: answer
      data: {type: answer, title: Answer, answer: '$3'}
YML
	import_app "$T_DIR/ans-$1.yml"
}
# bad_key_check <why> <what> <env assignment...>: flowcgi serve with the
# assignments stops (neither starts nor hangs) and its output says why
bad_key_check() {
	why=$1 what=$2
	shift 2
	env "$@" timeout 20 "$FLOWCGI_BIN" serve --listen "127.0.0.1:$(free_port)" \
	    >"$T_DIR/bad-key.log" 2>&1
	rc=$?
	ok "$([ $rc -ne 0 ] && [ $rc -ne 124 ] && echo 0 || echo 1)" \
	    "flowcgi does not start with $what (rc $rc)"
	grep -q "$why" "$T_DIR/bad-key.log"
	ok $? "... and says which file and why"
}

# ====== Defects found in real exports ======

# max_length is checked for text-input and paragraph only
# (api/core/app/apps/base_app_generator.py _validate_inputs).
cat >"$T_DIR/sel.yml" <<'YML'
app: {mode: workflow, name: Select}
kind: app
version: 0.3.0
workflow:
  graph:
    edges:
    - {id: e1, source: start, target: end}
    nodes:
    - id: start
      data: {type: start, title: Start, variables: [{variable: pick, label: Pick, type: select, required: true, max_length: 5, options: [a much longer option]}]}
    - id: end
      data: {type: end, title: End, outputs: [{variable: out, value_selector: [start, pick]}]}
YML
import_app "$T_DIR/sel.yml"
out=$(wf '{"inputs":{"pick":"a much longer option"},"user":"u"}')
is "$(printf '%s' "$out" | jq -r '.data.status + " " + .data.outputs.out')" \
    "succeeded a much longer option" "a select's option longer than max_length runs"

# sys.dialogue_count counts the turn from DSL 0.2.0 on (Dify 1.x:
# advanced_chat/app_generator.py, get_thread_messages_length() + 1); older
# exports keep the older count (0 on the first turn).
answer_app Count 0.3.0 'n={{#sys.dialogue_count#}}'
a1=$(chat '{"inputs":{},"query":"hi","user":"u"}')
c=$(printf '%s' "$a1" | jq -r .conversation_id)
a2=$(chat "{\"inputs\":{},\"query\":\"again\",\"user\":\"u\",\"conversation_id\":\"$c\"}")
is "$(printf '%s' "$a1" | jq -r .answer) $(printf '%s' "$a2" | jq -r .answer)" "n=1 n=2" \
    "DSL 0.3.0: sys.dialogue_count is 1 on the first turn, 2 on the second"
answer_app Count 0.1.5 'n={{#sys.dialogue_count#}}'
is "$(chat '{"inputs":{},"query":"hi","user":"u"}' | jq -r .answer)" "n=0" \
    "DSL 0.1.5: the older count, 0 on the first turn"

# llm.base_url serves provider "ollama" when no OLLAMA_BASE_URL is set
# (26 real exports name it; the built-in local address is only a default).
llm_wf_app Ollama langgenius/ollama/ollama qwen2:7b
llm_script '{"responses": [{"chunks": ["from ", "llm.base_url"]}]}'
out=$(wf '{"inputs":{},"user":"u"}')
is "$(printf '%s' "$out" | jq -r '.data.status + " " + .data.outputs.text')" \
    "succeeded from llm.base_url" "provider ollama reaches llm.base_url"

# knowledge-retrieval-v2 runs as knowledge-retrieval (control_space_ids
# are the knowledge bases, top_n the count).
start_fake knowledge KB
req POST /console/api/workspaces/current/knowledge-bases/ds-a -H "$J" \
    -d "{\"endpoint\":\"$KB\",\"api_key\":\"kb-secret\",\"knowledge_id\":\"kb-a\"}"
cat >"$T_DIR/kr2.yml" <<'YML'
app: {mode: workflow, name: KR2}
kind: app
version: 0.6.0
workflow:
  graph:
    edges:
    - {id: e1, source: start, target: kr}
    - {id: e2, source: kr, target: end}
    nodes:
    - id: start
      data: {type: start, title: Start, variables: [{variable: q, label: Q, type: text-input, required: true}]}
    - id: kr
      data: {type: knowledge-retrieval-v2, title: Retrieve v2, query_variable_selector: [start, q], control_space_ids: [ds-a], mode: research, top_n: 1}
    - id: end
      data: {type: end, title: End, outputs: [{variable: n, value_selector: [kr, result]}]}
YML
import_file "$T_DIR/kr2.yml"
is "$STATUS $(jqr .status)" "200 completed" "an export with a knowledge-retrieval-v2 node imports"
import_app "$T_DIR/kr2.yml"
out=$(wf '{"inputs":{"q":"refunds"},"user":"u"}')
is "$(printf '%s' "$out" | jq -r '.data.status + " " + (.data.outputs.n | length | tostring)')" \
    "succeeded 1" "... and runs, top_n records from its control spaces"

# custom-note: the admin graph draws a note's text, not Lexical's JSON
if command -v node >/dev/null 2>&1; then
	got=$(node --input-type=module -e '
	const { noteText } = await import(process.argv[1]);
	const t = JSON.stringify({root: {type: "root", children: [
	    {type: "paragraph", children: [{type: "text", text: "Read"},
	    {type: "text", text: " me"}]},
	    {type: "paragraph", children: [{type: "text", text: "first"}]}]}});
	console.log(noteText(t));' "$TOP/fcgi/ui/graph.js")
	is "$got" "Read me first" "a note's Lexical text is drawn as its words"
else
	skip "node is not installed"
fi

# ====== Defects found in first use ======

# lint: the README's layout check skips what git ignores (var/ after
# `make run`), and still names a folder that is not ignored.
L=$T_DIR/lint
mkdir -p "$L"
(cd "$TOP" && for d in */ engine/*/; do
	case $d in build/|node_modules/|var/) continue ;; esac
	git check-ignore -q "$d" 2>/dev/null || mkdir -p "$L/$d"
done)
cp "$TOP/README.md" "$TOP/.gitignore" "$L/"
mkdir -p "$L/var/data"
git -C "$L" init -q .
lint_names() {	# lint_names <folder>: lint's exit code, its complaints of it
	(cd "$L" && sh "$TOP/tests/lint.sh" >"$T_DIR/lint.out" 2>&1)
	echo "$? $(grep -c "does not name $1/" "$T_DIR/lint.out")"
}
is "$(lint_names var)" "0 0" "lint passes with a git-ignored var/"
mkdir -p "$L/surprise"
is "$(lint_names surprise)" "1 1" "... and still fails on a folder the README does not name"

# A secrets key file that is not base64 stops start-up, naming the file.
head -c 32 /dev/urandom >"$T_DIR/raw.key"
bad_key_check "raw.key (secrets.key_file) is not a base64 32-byte key" \
    "a key file that is not base64" FLOWCGI_SECRETS_KEY_FILE="$T_DIR/raw.key" \
    FLOWCGI_SERVER_DATA_DIR="$T_DIR/data-raw"
mkdir -p "$T_DIR/data-raw" "$T_DIR/data-raw2"
head -c 32 /dev/urandom >"$T_DIR/data-raw2/secret.key"
bad_key_check "secret.key.* not a base64 32-byte key" \
    "a data directory's secret.key that is not" FLOWCGI_SERVER_DATA_DIR="$T_DIR/data-raw2"

# ====== Chatflow: answer events ======

import_app "$TOP/tests/e2e/apps/chat_stream.yml"
llm_script '{"responses": [{"chunks": ["Hel", "lo"]}]}'
chat '{"inputs":{},"query":"hi","user":"u","response_mode":"streaming"}' >"$T_DIR/cf"
# advanced_chat/generate_response_converter.py: every event gets event,
# conversation_id, message_id, created_at over the stream response's
# fields; MessageStreamResponse (core/app/entities/task_entities.py) is
# task_id, id, answer, from_variable_selector.
is "$(ev "$T_DIR/cf" | jq -c 'select(.event=="message")' | head -1 | keys)" \
    '["answer","conversation_id","created_at","event","from_variable_selector","id","message_id","task_id"]' \
    "chatflow message: Dify's fields, no workflow_run_id"
is "$(ev "$T_DIR/cf" | jq -c 'select(.event=="message") | .from_variable_selector' | sort -u)" \
    '["llm","text"]' "... from the LLM node's output text"
# graph engine's _update_response_outputs: the answer nodes' text is the
# run's outputs.answer
is "$(ev "$T_DIR/cf" | jq -r 'select(.event=="workflow_finished") | .data.outputs.answer')" \
    "Hello" "workflow_finished.data.outputs.answer is the answer"
# MessageEndStreamResponse: task_id, id, metadata, files
is "$(ev "$T_DIR/cf" | jq -c 'select(.event=="message_end") | del(.files)' | keys)" \
    '["conversation_id","created_at","event","id","message_id","metadata","task_id"]' \
    "message_end: Dify's fields"

# ChatbotAppBlockingResponse.Data as convert_blocking_full_response gives
# it (core/app/apps/advanced_chat/generate_response_converter.py): no
# workflow_run_id, status or error; metadata is TaskStateMetadata
llm_script '{"responses": [{"text": "Hello"}]}'
out=$(chat '{"inputs":{},"query":"hi","user":"u","response_mode":"blocking"}')
is "$(printf '%s' "$out" | keys)" \
    '["answer","conversation_id","created_at","event","id","message_id","metadata","mode","task_id"]' \
    "a chat's blocking answer: Dify's fields"
is "$(printf '%s' "$out" | jq -c '.metadata | keys')" '["annotation_reply","retriever_resources","usage"]' \
    "... its metadata TaskStateMetadata's"

# ====== Chatflow: citations ======

# retriever_resources: the LLM node's knowledge context, as Dify's
# _convert_to_original_retriever_resource (core/workflow/nodes/llm/node.py)
# fills RetrievalSourceMetadata, when features.retriever_resource is on
# (MessageCycleManager.handle_retriever_resources)
cite_app() {	# cite_app <retriever_resource enabled: true|false>
	cat >"$T_DIR/cite.yml" <<YML
app: {mode: advanced-chat, name: Cite}
kind: app
version: 0.6.0
workflow:
  features: {retriever_resource: {enabled: $1}}
  graph:
    edges:
    - {id: e1, source: start, target: kr}
    - {id: e2, source: kr, target: llm}
    - {id: e3, source: llm, target: answer}
    nodes:
    - id: start
      data: {type: start, title: Start, variables: []}
    - id: kr
      data: {type: knowledge-retrieval, title: KR, query_variable_selector: [sys, query], dataset_ids: [ds-a], retrieval_mode: multiple, multiple_retrieval_config: {top_k: 2}}
    - id: llm
      data:
        type: llm
        title: LLM
        model: {provider: openai, name: gpt-4o-mini, mode: chat}
        prompt_template: [{role: system, text: 'Use {{#context#}}'}, {role: user, text: '{{#sys.query#}}'}]
        context: {enabled: true, variable_selector: [kr, result]}
    - id: answer
      data: {type: answer, title: Answer, answer: '{{#llm.text#}}'}
YML
	import_app "$T_DIR/cite.yml"
}
cite_app true
llm_script '{"responses": [{"text": "Cited.", "repeat": true}]}'
out=$(chat '{"inputs":{},"query":"refunds","user":"u"}')
is "$(printf '%s' "$out" | jq -r '.metadata.retriever_resources | length')" 2     "blocking answer: metadata.retriever_resources lists the context's records"
is "$(printf '%s' "$out" | jq -r '.metadata.retriever_resources[0] | keys | join(",")')"     "content,data_source_type,dataset_id,dataset_name,doc_metadata,document_id,document_name,files,hit_count,index_node_hash,page,position,retriever_from,score,segment_id,segment_position,title,word_count"     "... with RetrievalSourceMetadata's fields"
is "$(printf '%s' "$out" | jq -r '.metadata.retriever_resources[0] | [.position, .dataset_id, .content] | join("|")')"     "1|ds-a|kb-a says refunds (best)" "... best first, its dataset and content"
chat '{"inputs":{},"query":"refunds","user":"u","response_mode":"streaming"}' >"$T_DIR/cite.ev"
is "$(ev "$T_DIR/cite.ev" | jq -r 'select(.event=="message_end") | .metadata.retriever_resources | map(.content) | join(",")')"     "kb-a says refunds (best),kb-a says refunds (weak)" "message_end: the same retriever_resources"
c=$(ev "$T_DIR/cite.ev" | jq -r 'select(.event=="message_end") | .conversation_id')
svc "$KEY" GET "/v1/messages?conversation_id=$c&user=u"
is "$(jqr '.data[0].retriever_resources | length')" 2 "GET /v1/messages: the message keeps them"
cite_app false
is "$(chat '{"inputs":{},"query":"refunds","user":"u"}' | jq -c .metadata.retriever_resources)" "[]"     "with the feature off: []"

# ====== Workflow: text chunks ======

llm_wf_app Chunks openai gpt-4o-mini
llm_script '{"responses": [{"chunks": ["a", "b"]}]}'
wf '{"inputs":{},"user":"u","response_mode":"streaming"}' >"$T_DIR/wf"
# TextChunkStreamResponse.Data: text, from_variable_selector (the
# selector of the streamed variable: the LLM node's "text")
is "$(ev "$T_DIR/wf" | jq -c 'select(.event=="text_chunk") | .data.from_variable_selector' | sort -u)" \
    '["llm","text"]' "text_chunk.from_variable_selector is [llm, text]"
is "$(ev "$T_DIR/wf" | jq -c 'select(.event=="text_chunk")' | head -1 | keys)" \
    '["data","event","task_id","workflow_run_id"]' "text_chunk: Dify's fields"

# ====== Agent chat: thoughts ======

printf 'app: {mode: agent-chat, name: agent}\nkind: app\nversion: 0.6.0\nmodel_config:\n%s\n' \
'  model: {provider: openai, name: gpt-4o-mini, mode: chat}
  pre_prompt: Use tools.
  agent_mode:
    enabled: true
    strategy: function_call
    tools:
    - {enabled: true, provider_type: builtin, provider_id: time, tool_name: weekday, tool_parameters: {}}' \
    >"$T_DIR/agent.yml"
import_app "$T_DIR/agent.yml"
llm_script '{"responses": [
  {"tool_calls": [{"id": "w", "name": "weekday", "arguments": {"year": 2024, "month": 1, "day": 1}}]},
  {"text": "Monday."}]}'
chat '{"inputs":{},"query":"day?","user":"u","response_mode":"streaming"}' >"$T_DIR/ag"
# AgentThoughtStreamResponse: id, position, thought, observation, tool,
# tool_labels, tool_input, message_files (plus the converter's fields)
is "$(ev "$T_DIR/ag" | jq -c 'select(.event=="agent_thought")' | head -1 | keys)" \
    '["conversation_id","created_at","event","id","message_files","message_id","observation","position","task_id","thought","tool","tool_input","tool_labels"]' \
    "agent_thought: Dify's fields"
# fc_agent_runner.py: tool_input = json.dumps({tool name: arguments})
is "$(ev "$T_DIR/ag" | jq -r 'select(.event=="agent_thought" and .tool_input != "") | .tool_input' | sort -u)" \
    '{"weekday": {"year": 2024, "month": 1, "day": 1}}' \
    "agent_thought.tool_input is the call's arguments by tool name"
ok "$(ev "$T_DIR/ag" | jq -e 'select(has("workflow_run_id"))' >/dev/null 2>&1 && echo 1 || echo 0)" \
    "no agent-chat event carries a workflow_run_id"
c=$(ev "$T_DIR/ag" | jq -r 'select(.event=="message_end") | .conversation_id')
svc "$KEY" GET "/v1/messages?conversation_id=$c&user=u"
# fields/message_fields.py agent_thought_fields
is "$(jqr '.data[0].agent_thoughts[0] | keys | join(",")')" \
    "chain_id,created_at,files,id,message_id,observation,position,thought,tool,tool_input,tool_labels" \
    "GET /v1/messages: agent_thoughts with Dify's fields"
is "$(jqr '.data[0].agent_thoughts[0] | .tool + " | " + .observation + " | " + .tool_input')" \
    'weekday | {"weekday": "January 1, 2024 is Monday."} | {"weekday": {"year": 2024, "month": 1, "day": 1}}' \
    "... the call, its input and its result"
is "$(jqr '.data[0].message_files | type')" array "... and message_files a list"

# ====== Codes ======

# service_api/app/completion.py CompletionApi: AppUnavailableError
svc "$KEY" POST /v1/completion-messages -H "$J" -d '{"inputs":{},"user":"u"}'
is "$STATUS $(jqr .code)" "400 app_unavailable" "completion-messages with a chat key: app_unavailable"
# ChatStopApi: set_stop_flag, then {"result": "success"} whatever the task
svc "$KEY" POST /v1/chat-messages/00000000-0000-7000-8000-000000000000/stop -H "$J" -d '{"user":"u"}'
is "$STATUS $BODY" '200 {"result":"success"}' "stop of an unknown task: 200 success"
svc "$KEY" POST /v1/workflows/tasks/00000000-0000-7000-8000-000000000000/stop -H "$J" -d '{"user":"u"}'
is "$STATUS $(jqr .code)" "400 not_workflow_app" "the workflow stop route with a chat key: not_workflow_app"
svc "$KEY" POST /v1/completion-messages/00000000-0000-7000-8000-000000000000/stop -H "$J" -d '{"user":"u"}'
is "$STATUS $(jqr .code)" "400 app_unavailable" "the completion stop route with a chat key: app_unavailable"

# service_api/index.py IndexApi: no key needed
req GET /v1/
is "$STATUS $(jqr '[.welcome, .api_version, (.server_version | type)] | join(" ")')" \
    "200 Dify OpenAPI v1 string" "GET /v1/: the API's info"

# ====== Routes: conversation variables ======

answer_app Vars 0.6.0 'count={{#conversation.count#}}' '' \
    '[{id: v-count, name: count, value_type: number, value: 0, description: turns}]'
c=$(chat '{"inputs":{},"query":"hi","user":"u"}' | jq -r .conversation_id)
# ConversationVariableDetailApi.put (service_api/app/conversation.py),
# marshalled with conversation_variable_fields
svc "$KEY" PUT "/v1/conversations/$c/variables/v-count" -H "$J" -d '{"user":"u","value":5}'
is "$STATUS $(jqr 'keys | join(",")')" \
    "200 created_at,description,id,name,updated_at,value,value_type" \
    "PUT a conversation variable: Dify's fields"
is "$(jqr '[.id, .name, .value_type, .value, .description] | join(" ")')" \
    "v-count count number 5 turns" "... with its new value"
is "$(chat "{\"inputs\":{},\"query\":\"again\",\"user\":\"u\",\"conversation_id\":\"$c\"}" | jq -r .answer)" \
    "count=5" "the next turn reads the new value"
svc "$KEY" PUT "/v1/conversations/$c/variables/v-count" -H "$J" -d '{"user":"u","value":"five"}'
is "$STATUS $(jqr .code) $(jqr .message)" \
    "400 bad_request Type mismatch: variable 'count' expects number, but got string type" \
    "a value of another type: Dify's Type mismatch"
svc "$KEY" PUT "/v1/conversations/$c/variables/nope" -H "$J" -d '{"user":"u","value":1}'
is "$STATUS $(jqr .message)" "404 Conversation Variable Not Exists." "an unknown variable: 404"
svc "$KEY" PUT "/v1/conversations/$c/variables/v-count" -H "$J" -d '{"user":"other","value":1}'
is "$STATUS $(jqr .message)" "404 Conversation Not Exists." "another end user's conversation: 404"

# ====== Routes: run one published version ======

import_app "$TOP/tests/e2e/apps/publish.yml"
req GET "$A/$APP/workflows/publish"
V1=$(jqr .id)
req GET "$A/$APP/workflows/draft"
jq '{graph: (.graph | .nodes |= map(if .id == "t" then .data.template = "two {{ q }}" else . end)),
    features, environment_variables, conversation_variables, hash}' <<<"$BODY" >"$T_DIR/save.json"
req POST "$A/$APP/workflows/draft" -H "$J" --data-binary @"$T_DIR/save.json"
req POST "$A/$APP/workflows/publish" -H "$J" -d '{}'
run_v() { svc "$KEY" POST "$1" -H "$J" -d '{"inputs":{"q":"hi"},"user":"u","response_mode":"blocking"}'; }
run_v /v1/workflows/run
is "$(jqr .data.outputs.out)" "two hi" "/v1/workflows/run runs the latest version"
# WorkflowRunByIdApi (service_api/app/workflow.py): the version asked for
run_v "/v1/workflows/$V1/run"
is "$STATUS $(jqr .data.outputs.out) $(jqr '.data.workflow_id == "'"$V1"'"')" "200 one hi true" \
    "/v1/workflows/{workflow_id}/run runs that version"
run_v /v1/workflows/run
is "$(jqr .data.outputs.out)" "two hi" "... and the next /v1/workflows/run the latest again (no cache keeps the older)"
run_v /v1/workflows/00000000-0000-7000-8000-000000000000/run
is "$STATUS $(jqr .message)" "404 Workflow not found with id: 00000000-0000-7000-8000-000000000000" \
    "a version the app did not publish: 404"
run_v /v1/workflows/not-a-uuid/run
is "$STATUS $(jqr .code)" "400 bad_request" "an id that is no UUID: 400"

# ====== Routes: audio ======

start_fake audio AUD
req POST /console/api/workspaces/current/model-providers/fakeaudio -H "$J" \
    -d "{\"base_url\":\"$AUD/v1\",\"api_key\":\"sk-audio\",\"models\":[\"whisper-1\",\"tts-1\"]}"
printf 'ID3fake-mp3-bytes' >"$T_DIR/in.mp3"
stt() { curl -sS -o "$T_DIR/stt.json" -w '%{http_code}' -H "Authorization: Bearer $KEY" \
    -F "file=@$T_DIR/in.mp3;type=$1" -F user=u "$BASE/v1/audio-to-text"; }
# AudioService.transcript_asr: the app's speech_to_text feature first
is "$(stt audio/mpeg) $(jq -r .message "$T_DIR/stt.json")" "400 Speech to text is not enabled" \
    "audio-to-text on an app without the feature: Dify's 400"
answer_app Audio 0.6.0 'Spoken answer' \
    '{speech_to_text: {enabled: true}, text_to_speech: {enabled: true, voice: nova, language: en-US}}'
# service_api/app/audio.py AudioApi: {"text": ...}
is "$(stt audio/mpeg) $(jq -c . "$T_DIR/stt.json")" '200 {"text":"hello from the fake"}' \
    "audio-to-text: Dify's {text} from the provider's /audio/transcriptions"
is "$(curl -s "$AUD/_requests" | jq -r '.[-1] | .path + " " + .headers.authorization')" \
    "/v1/audio/transcriptions Bearer sk-audio" "... with the provider's key"
is "$(stt text/plain) $(jq -r .code "$T_DIR/stt.json")" "415 unsupported_audio_type" \
    "a file that is no audio: 415 unsupported_audio_type"
is "$(curl -sS -o "$T_DIR/stt.json" -w '%{http_code}' -H "Authorization: Bearer $KEY" -F user=u \
    "$BASE/v1/audio-to-text") $(jq -r .code "$T_DIR/stt.json")" "400 no_audio_uploaded" \
    "no file: 400 no_audio_uploaded"
# TextApi: the audio itself, the app's voice when none is asked
code=$(curl -sS -o "$T_DIR/out.mp3" -D "$T_DIR/tts.h" -w '%{http_code}' -H "Authorization: Bearer $KEY" \
    -H "$J" -d '{"text":"Say this","user":"u"}' "$BASE/v1/text-to-audio")
is "$code $(grep -i '^content-type' "$T_DIR/tts.h" | tr -d '\r' | cut -d' ' -f2) $(head -c 3 "$T_DIR/out.mp3")" \
    "200 audio/mpeg ID3" "text-to-audio: the provider's audio"
is "$(curl -s "$AUD/_requests" | jq -r '.[-1].body_b64' | base64 -d | jq -c .)" \
    '{"model":"tts-1","input":"Say this","voice":"nova","response_format":"mp3"}' \
    "... asked of /audio/speech with the app's voice"
m=$(chat '{"inputs":{},"query":"hi","user":"u"}' | jq -r .message_id)
curl -sS -o /dev/null -H "Authorization: Bearer $KEY" -H "$J" \
    -d "{\"message_id\":\"$m\",\"voice\":\"echo\",\"user\":\"u\"}" "$BASE/v1/text-to-audio"
is "$(curl -s "$AUD/_requests" | jq -r '.[-1].body_b64' | base64 -d | jq -r '.input + " " + .voice')" \
    "Spoken answer echo" "text-to-audio of a message speaks its answer"
