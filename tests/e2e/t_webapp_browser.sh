#!/bin/bash
# t_webapp_browser.sh — the Web App's chat page in a real browser through
# nginx, mounted under /flow/ (tests/browser/webapp.test.js): the share
# link, the start form, the answer streaming in from the fake LLM as
# Markdown, conversations (second, rename, delete), feedback, stop, a
# file attached to a message, the
# history after a reload, a 390 px phone in Chinese, Dify's embed snippet
# (only baseUrl changed) on a page of another origin, a workflow's form
# page, an agent-chat app's tool call folded under its answer, a
# completion page (result, more like this, save, the saved list), the
# chat page's regenerate, read aloud, spoken question (a fake microphone),
# a file by its link and a chatflow's citations, and the admin page's Web
# App card.
#
# FLOWCGI_CHROMIUM overrides /usr/bin/chromium; playwright-core comes from
# tests/browser's package-lock.json. Screenshots are kept in
# <build>/test-logs/screenshots.
. "$(dirname "$0")/lib.sh"

CHROMIUM=${FLOWCGI_CHROMIUM:-/usr/bin/chromium}
BROWSER_DIR=$TOP/tests/browser

if [ ! -x "$CHROMIUM" ] || ! command -v node >/dev/null 2>&1; then
	ok 1 "chromium ($CHROMIUM) and node are installed (contrib/install-deps.sh)"
	exit 1
fi
# installed once for the tests that share the folder (npm-install.sh)
"$TOP/tests/npm-install.sh" "$BROWSER_DIR" node_modules/playwright-core \
    2>"$T_DIR/npm.log"
ok $? "playwright-core is installed (npm ci when missing)" ||
    sed 's/^/# /' "$T_DIR/npm.log"
# a file by its link is fetched from this nginx, on loopback
export FLOWCGI_HTTP_ALLOW_PRIVATE=true
export FLOWCGI_AUDIO_SPEECH_TO_TEXT_MODEL='fakeaudio#whisper-1'
export FLOWCGI_AUDIO_TEXT_TO_SPEECH_MODEL='fakeaudio#tts-1'
start_llm_front || exit 1
start_fake audio AUD || exit 1
req POST /console/api/workspaces/current/model-providers/fakeaudio -H 'Content-Type: application/json' \
    -d "{\"base_url\":\"$AUD/v1\",\"api_key\":\"sk-audio\",\"models\":[\"whisper-1\",\"tts-1\"]}"
is "$STATUS" 200 "the fake audio provider is set up"
start_fake knowledge KB || exit 1
req POST /console/api/workspaces/current/knowledge-bases/ds-a -H 'Content-Type: application/json' \
    -d "{\"endpoint\":\"$KB\",\"api_key\":\"kb-secret\",\"knowledge_id\":\"kb-a\"}"
is "$STATUS" 200 "the fake knowledge base is set up"

printf '%s\n' 'app: {mode: chat, name: Helper}' 'kind: app' 'version: 0.6.0' \
    'model_config:' \
    '  model: {provider: openai, name: gpt-4o-mini, mode: chat, completion_params: {}}' \
    '  pre_prompt: You help {{name}}.' \
    '  opening_statement: Hello! I am your helper.' \
    '  file_upload: {enabled: true, allowed_file_types: [document], allowed_file_upload_methods: [local_file, remote_url], number_limits: 3}' \
    '  text_to_speech: {enabled: true, voice: nova}' '  speech_to_text: {enabled: true}' \
    '  user_input_form:' \
    '  - text-input: {variable: name, label: Name, required: true}' \
    >"$T_DIR/helper.yml"
import_app "$T_DIR/helper.yml"
req GET "/console/api/apps/$APP"
CODE=$(jqr .site.code)
ok "$([ ${#CODE} -eq 16 ]; echo $?)" "the app has a site code"

CHAT_APP=$APP CHAT_KEY=$KEY
printf '%s\n' 'app: {mode: workflow, name: Echo}' 'kind: app' 'version: 0.6.0' \
    'workflow:' '  features: {}' '  graph:' '    edges:' \
    '    - {id: e1, source: start, sourceHandle: source, target: end, targetHandle: target}' \
    '    nodes:' '    - id: start' '      data:' '        type: start' \
    '        title: Start' '        variables:' \
    '        - {variable: text, type: paragraph, required: true, label: Text}' \
    '    - id: end' '      data:' '        type: end' '        title: End' \
    '        outputs:' '        - {variable: echoed, value_selector: [start, text]}' \
    >"$T_DIR/echo.yml"
import_file "$T_DIR/echo.yml"
req GET "/console/api/apps/$(jqr .app_id)"
CODE_W=$(jqr .site.code)

printf '%s\n' 'app: {mode: agent-chat, name: Calendar agent}' 'kind: app' 'version: 0.6.0' \
    'model_config:' '  model: {provider: openai, name: gpt-4o-mini, mode: chat}' \
    '  pre_prompt: Use tools.' '  agent_mode:' '    enabled: true' '    strategy: function_call' \
    '    tools:' '    - {enabled: true, provider_type: builtin, provider_id: time, tool_name: weekday, tool_parameters: {}}' \
    >"$T_DIR/agent.yml"
import_file "$T_DIR/agent.yml"
req GET "/console/api/apps/$(jqr .app_id)"
CODE_A=$(jqr .site.code)
printf '%s\n' 'app: {mode: completion, name: Translator}' 'kind: app' 'version: 0.6.0' \
    'model_config:' '  model: {provider: openai, name: gpt-4o-mini, mode: chat}' \
    '  pre_prompt: Translate {{text}} to French.' '  more_like_this: {enabled: true}' \
    '  user_input_form:' '  - paragraph: {variable: text, label: Text, required: true}' \
    >"$T_DIR/tr.yml"
import_file "$T_DIR/tr.yml"
req GET "/console/api/apps/$(jqr .app_id)"
CODE_C=$(jqr .site.code)
# a chatflow citing its knowledge (features.retriever_resource)
printf '%s\n' 'app: {mode: advanced-chat, name: Cite}' 'kind: app' 'version: 0.6.0' 'workflow:' \
    '  features: {retriever_resource: {enabled: true}}' '  graph:' '    edges:' \
    '    - {id: e1, source: start, target: kr}' '    - {id: e2, source: kr, target: llm}' \
    '    - {id: e3, source: llm, target: answer}' '    nodes:' \
    '    - id: start' '      data: {type: start, title: Start, variables: []}' \
    '    - id: kr' '      data: {type: knowledge-retrieval, title: KR, query_variable_selector: [sys, query], dataset_ids: [ds-a], retrieval_mode: multiple, multiple_retrieval_config: {top_k: 2}}' \
    '    - id: llm' '      data:' '        type: llm' '        title: LLM' \
    '        model: {provider: openai, name: gpt-4o-mini, mode: chat}' \
    "        prompt_template: [{role: system, text: 'Use {{#context#}}'}, {role: user, text: '{{#sys.query#}}'}]" \
    '        context: {enabled: true, variable_selector: [kr, result]}' \
    '    - id: answer' "      data: {type: answer, title: Answer, answer: '{{#llm.text#}}'}" \
    >"$T_DIR/cite.yml"
import_file "$T_DIR/cite.yml"
req GET "/console/api/apps/$(jqr .app_id)"
CODE_K=$(jqr .site.code)

CODE_A="$CODE_A" CODE_C="$CODE_C" CODE_K="$CODE_K" AUD="$AUD" \
WEB_BASE="$BASE/flow" CODE="$CODE" KEY="$CHAT_KEY" APP="$CHAT_APP" ADMIN_TOKEN="$TOKEN" CODE_W="$CODE_W" \
LLM="$LLM" CHROMIUM="$CHROMIUM" OUT_DIR="$T_DIR" \
    timeout 200 node "$BROWSER_DIR/webapp.test.js" >"$T_DIR/browser.tap" 2>&1
rc=$?
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok 0 "${line#ok - }" ;;
	"not ok - "*) ok 1 "${line#not ok - }" ;;
	*) echo "# $line" ;;
	esac
done <"$T_DIR/browser.tap"
is "$rc" 0 "the browser script ran to its end"
if [ -n "${FLOWCGI_BUILD:-}" ]; then
	mkdir -p "$FLOWCGI_BUILD/test-logs/screenshots" &&
	    cp "$T_DIR"/*.png "$FLOWCGI_BUILD/test-logs/screenshots/" 2>/dev/null
	echo "# screenshots in $FLOWCGI_BUILD/test-logs/screenshots"
fi
