# t_tools.sh — built-in tool providers declared as data, end to end
# through nginx against tests/fakes/fake_tools.py: Settings > Tools
# (Dify's tool-providers and builtin/{provider}/credentials routes;
# secrets masked in answers, sealed at rest, never in the log; the Test
# button's call), an import that says which tools will not run
# (leaked_dependencies, warnings per node), a workflow whose tool nodes
# call tavily and jina, a provider flowcgi lacks failing at once with no
# retry, and an agent app calling tavily through function calling with the
# schema of the manifest.
. "$(dirname "$0")/lib.sh"

start_fake tools TOOLS || exit 1
start_llm_front || exit 1
TP=/console/api/workspaces/current/tool-provider/builtin
SECRET=tvly-good-e2e-5b1c9a

# ====== Settings > Tools ======

req GET /console/api/workspaces/current/tool-providers
is "$STATUS" 200 "GET tool-providers"
is "$(jqr '[.[] | select(.name=="tavily")][0] | [.type, (.is_team_authorization | tostring), (.tools | length > 1 | tostring), .credentials_schema[0].name] | join(" ")')" \
    "builtin false true tavily_api_key" "... tavily as Dify's provider entity, not authorised yet"
is "$(jqr '[.[] | select(.name=="yahoo")][0].unsupported | length > 0')" true \
    "... an unsupported provider says why"
req GET /console/api/workspaces/current/tools/builtin
is "$(jqr '[.[].name] | index("jina") != null and index("searxng") != null')" true \
    "GET tools/builtin lists the providers declared as data"
req GET "$TP/langgenius/tavily/tavily/tools"
is "$STATUS $(jqr '[.[].name] | join(",")')" "200 tavily_search,tavily_extract" \
    "GET builtin/langgenius/tavily/tavily/tools (a plugin id, as Dify 1.x sends it)"
is "$(jqr '.[0].parameters[0] | [.name, .type, .form] | join(",")')" "query,string,llm" \
    "... each parameter in Dify's shape"
req GET "$TP/nowhere/tools"
is "$STATUS $(jqr .code)" "404 not_found" "an unknown provider is 404"

# ====== An import says what will not run ======

import_file "$TOP/tests/e2e/apps/tools_workflow.yml"
APP=$(jqr .app_id)
is "$(jqr .status)" "completed-with-warnings" "the import completes with warnings"
is "$(jqr '.leaked_dependencies | map(.provider + ":" + .reason) | join(",")')" \
    "langgenius/tavily/tavily:needs_credentials" "... leaked_dependencies: tavily needs its key"
is "$(jqr '.leaked_dependencies[0].type + " " + .leaked_dependencies[0].value.marketplace_plugin_unique_identifier')" \
    "marketplace langgenius/tavily:0.0.5@0123456789abcdef" "... as the DSL's dependency names it"
is "$(jqr '[.warnings[] | select(.node_id=="search")] | length')" 1 "... and a warning on its node"
req GET "/console/api/apps/imports/$APP/check-dependencies"
is "$STATUS $(jqr '.leaked_dependencies | length')" "200 1" "GET check-dependencies says the same"

# ====== Credentials ======

jq -n --arg b "$TOOLS/tavily" --arg k "$SECRET" \
    '{credentials: {tavily_api_key: $k, base_url: $b}}' >"$T_DIR/cred.json"
req POST "$TP/tavily/update" -H "$J" --data-binary @"$T_DIR/cred.json"
is "$STATUS $(jqr .result)" "200 success" "POST builtin/tavily/update sets the key"
req GET "$TP/tavily/credentials"
is "$STATUS $(jqr .tavily_api_key)" "200 [__HIDDEN__]" "GET credentials masks the key"
printf '%s' "$BODY" | grep -qF "$SECRET"
ok $((! $?)) "... and never answers it"
req POST "$TP/tavily/update" -H "$J" -d '{"credentials": {"tavily_api_key": "[__HIDDEN__]", "base_url": "'"$TOOLS/tavily"'"}}'
is "$STATUS" 200 "sending the mask back keeps the key"
req POST "$TP/tavily/credentials/test" -H "$J" -d '{}'
is "$STATUS $(jqr .result)" "200 success" "the Test button's call succeeds with the stored key"
req POST "$TP/tavily/credentials/test" -H "$J" -d '{"credentials": {"tavily_api_key": "tvly-bad"}}'
is "$STATUS $(jqr .code)" "400 credentials_invalid" "... and a wrong key is refused"
printf '%s' "$BODY" | grep -q "answered 401"
ok $? "... saying what the provider answered"
req POST "$TP/tavily/update" -H "$J" -d '{"credentials": {"base_url": "x"}}'
is "$STATUS $(jqr .code)" "400 invalid_param" "credentials without the required key are refused"
req PUT "$TP/tavily/credentials" -H "$J" -d '[1]'
is "$STATUS" 400 "a body that is not an object is 400"
grep -aqF "$SECRET" "$T_DIR"/data/*.mdb 2>/dev/null
ok $((! $?)) "the key is sealed in the database"
req GET "/console/api/apps/imports/$APP/check-dependencies"
is "$(jqr '.leaked_dependencies | length')" 0 "with the key set nothing is missing"
req PUT "$TP/jina/credentials" -H "$J" -d '{"base_url": "'"$TOOLS/jina"'"}'
is "$STATUS" 200 "PUT builtin/jina/credentials points jina at its fake"

# ====== A workflow's tool nodes ======

req POST "$A/$APP/api-keys"
KEY=$(jqr .token)
curl -s -X DELETE "$TOOLS/requests" >/dev/null
svc "$KEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs": {"query": "dify plugins"}, "user": "u", "response_mode": "blocking"}'
is "$STATUS $(jqr .data.status)" "200 succeeded" "the workflow of two tool nodes runs"
is "$(jqr '.data.outputs.found' | head -1)" "# Result 1: [Result 1 for dify plugins](https://example.org/1)" \
    "... tavily's text as Dify's plugin writes it"
is "$(jqr '.data.outputs.results[0].results | length')" 2 "... and its json"
is "$(jqr '.data.outputs.page | fromjson | .data.title')" "Example Domain" "... jina's reader page"
seen=$(curl -s "$TOOLS/requests")
is "$(printf '%s' "$seen" | jq -r '.[] | select(.path=="/tavily/search") | .body | [.query, (.max_results|tostring), .search_depth] | join(",")')" \
    "dify plugins,2,advanced" "the node's configuration reached the API, typed"
is "$(printf '%s' "$seen" | jq -r '.[] | select(.path=="/tavily/search") | .headers.authorization')" \
    "Bearer $SECRET" "... with the stored key"
grep -qF "$SECRET" "$T_DIR"/*.log
ok $((! $?)) "the key is in no log"

# ====== A provider flowcgi lacks ======

import_file "$TOP/tests/e2e/apps/tools_missing.yml"
is "$(jqr '.leaked_dependencies[0] | .reason + " " + .type + " " + (.nodes | join(","))')" \
    "not_served marketplace t" "its import says the provider is not served, on node t"
APP=$(jqr .app_id)
req POST "$A/$APP/api-keys"
KEY=$(jqr .token)
key_stream /v1/workflows/run '{"inputs": {}, "user": "u", "response_mode": "streaming"}' "$T_DIR/m.txt"
ev() { sed -n 's/^data: //p' "$1"; }
is "$(ev "$T_DIR/m.txt" | jq -r 'select(.event=="workflow_finished") | .data.status')" failed \
    "its run fails"
is "$(ev "$T_DIR/m.txt" | jq -r 'select(.event=="node_finished" and .data.node_id=="t") | .data.error')" \
    "tool 'someone/nowhere/nowhere/go' is not available in flowcgi" "... naming the provider"
is "$(ev "$T_DIR/m.txt" | grep -c '"event": *"node_retry"')" 0 \
    "... at once: retry_config does not retry a missing provider"

# ====== An agent with a manifest tool ======

import_app "$TOP/tests/e2e/apps/tools_agent_chat.yml"
curl -s -X DELETE "$TOOLS/requests" >/dev/null
llm_script '{"responses": [
  {"tool_calls": [{"id": "c1", "name": "tavily_search", "arguments": {"query": "flowcgi", "topic": "news"}}]},
  {"text": "Found it."}]}'
key_stream /v1/chat-messages '{"inputs":{},"query":"search flowcgi","user":"u","response_mode":"streaming"}' \
    "$T_DIR/a.txt"
is "$(ev "$T_DIR/a.txt" | jq -r 'select(.event=="agent_message") | .answer' | tr -d '\n')" \
    "Found it." "the agent app answers"
reqs=$(curl -s "$LLM/_requests")
is "$(printf '%s' "$reqs" | jq -r '.[0].body.tools[0].function | [.name, (.parameters.properties | keys | join("+")), (.parameters.required | join("+"))] | join(" ")')" \
    "tavily_search query+search_depth+topic query" \
    "the model is offered the manifest's llm parameters as the function schema"
is "$(printf '%s' "$reqs" | jq -r '.[1].body.messages[] | select(.role=="tool") | .content' | head -1)" \
    "# Result 1: [Result 1 for flowcgi](https://example.org/1)" "... and gets the tool's text"
is "$(curl -s "$TOOLS/requests" | jq -r '.[] | select(.path=="/tavily/search") | .body | .query + "," + .topic + "," + (.max_results|tostring)')" \
    "flowcgi,news,1" "... the model's arguments and the app's fixed parameter reached tavily"
