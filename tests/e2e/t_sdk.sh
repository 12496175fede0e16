# t_sdk.sh — Dify's official Node SDK, dify-client (pinned in
# tests/sdk/package-lock.json), unchanged against flowcgi behind nginx with
# the fake LLM: every DifyClient, ChatClient and CompletionClient method
# that applies to a self-hosted app, on a chat, agent-chat, completion,
# chatflow and workflow app, paging to the end and checking each answer's
# content (tests/sdk/sdk.test.mjs).
#
# The SDK is installed with `npm ci` when tests/sdk/node_modules is
# missing (needs the npm registry). Without node and npm the test is
# reported skipped; a failed install fails it.
. "$(dirname "$0")/lib.sh"

SDK_DIR=$TOP/tests/sdk
APPS=$TOP/tests/e2e/apps

need node npm	# for Dify's Node SDK
# installed once for the tests that share the folder (npm-install.sh)
"$TOP/tests/npm-install.sh" "$SDK_DIR" node_modules/dify-client 2>"$T_DIR/npm.log"
ok $? "dify-client is installed (npm ci when missing)" || {
	sed 's/^/# /' "$T_DIR/npm.log"; exit 1; }
is "$(node -p "require('$SDK_DIR/node_modules/dify-client/package.json').version")" \
    "$(jq -r '.packages["node_modules/dify-client"].version' "$SDK_DIR/package-lock.json")" \
    "the pinned dify-client is installed"

start_llm_front || exit 1

# app <file> <var>: imports an app, puts a key of it in <var>.
app() {
	import_app "$1"
	is "$STATUS $(printf '%s' "$KEY" | cut -c1-4)" "201 app-" \
	    "$(basename "$1" .yml): imported, with a key"
	printf -v "$2" '%s' "$KEY"
}
printf '%s\n' 'app: {mode: chat, name: SDK chat}' 'kind: app' 'version: 0.6.0' \
    'model_config:' \
    '  model: {provider: openai, name: gpt-4o-mini, mode: chat, completion_params: {}}' \
    '  pre_prompt: You help {{name}}.' '  opening_statement: Hi there' \
    '  suggested_questions_after_answer: {enabled: true}' \
    '  user_input_form:' \
    '  - text-input: {variable: name, label: Name, required: true}' \
    >"$T_DIR/chat.yml"
printf '%s\n' 'app: {mode: agent-chat, name: SDK agent}' 'kind: app' \
    'version: 0.6.0' 'model_config:' \
    '  model: {provider: openai, name: gpt-4o-mini, mode: chat}' \
    '  pre_prompt: Use tools.' '  agent_mode:' '    enabled: true' \
    '    strategy: function_call' '    tools:' \
    '    - {enabled: true, provider_type: builtin, provider_id: time, tool_name: weekday, tool_parameters: {}}' \
    >"$T_DIR/agent.yml"
printf '%s\n' 'app: {mode: completion, name: SDK completion}' 'kind: app' \
    'version: 0.6.0' 'model_config:' \
    '  model: {provider: openai, name: gpt-4o-mini, mode: chat}' \
    '  pre_prompt: Write about {{topic}}.' '  user_input_form:' \
    '  - paragraph: {variable: topic, label: Topic, required: true}' \
    >"$T_DIR/completion.yml"
printf '%s\n' 'app: {mode: workflow, name: SDK workflow}' 'kind: app' \
    'version: 0.6.0' 'workflow:' '  features: {}' '  graph:' '    edges:' \
    '    - {id: e1, source: start, sourceHandle: source, target: llm, targetHandle: target}' \
    '    - {id: e2, source: llm, sourceHandle: source, target: end, targetHandle: target}' \
    '    nodes:' \
    '    - id: start' \
    '      data: {type: start, title: Start, variables: [{variable: topic, type: text-input, label: Topic, required: true}]}' \
    '    - id: llm' \
    '      data:' '        type: llm' '        title: LLM' \
    '        model: {provider: openai, name: gpt-4o-mini, mode: chat, completion_params: {}}' \
    "        prompt_template: [{role: user, text: 'Write about {{#start.topic#}}.'}]" \
    '        context: {enabled: false, variable_selector: []}' \
    '    - id: end' \
    '      data: {type: end, title: End, outputs: [{variable: text, value_selector: [llm, text]}]}' \
    >"$T_DIR/workflow.yml"
app "$T_DIR/chat.yml" KEY_CHAT
app "$T_DIR/agent.yml" KEY_AGENT
app "$T_DIR/completion.yml" KEY_COMPLETION
app "$APPS/service_chat.yml" KEY_CHATFLOW
app "$T_DIR/workflow.yml" KEY_WORKFLOW

# The scenario's TAP lines are counted here, in one plan.
(cd "$SDK_DIR" && DIFY_BASE="$BASE/v1" LLM="$LLM" KEY_CHAT="$KEY_CHAT" \
    KEY_AGENT="$KEY_AGENT" KEY_COMPLETION="$KEY_COMPLETION" \
    KEY_CHATFLOW="$KEY_CHATFLOW" KEY_WORKFLOW="$KEY_WORKFLOW" \
    timeout 120 node sdk.test.mjs) >"$T_DIR/sdk.tap" 2>&1
rc=$?
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok 0 "sdk: ${line#ok - }" ;;
	"not ok - "*) ok 1 "sdk: ${line#not ok - }" ;;
	*" passed, "*" failed") ;;
	*) echo "# $line" ;;
	esac
done <"$T_DIR/sdk.tap"
is "$rc" 0 "the SDK scenario ran to its end"
req GET /healthz
is "$STATUS" 200 "server healthy at the end"
