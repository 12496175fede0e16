# t_tools_workflow.sh — a workflow app calling another published workflow
# app as a tool (provider_type workflow), end to end through nginx: the
# import finds the callee (and reports a missing one as not_served), the
# console's tool-providers lists the published workflow apps as workflow
# providers, the service API's run answers with Dify's tool text, the
# nested run has its own record in the callee's run history (its parent
# the caller's run, the caller's end user), and an app calling itself is
# refused without a nested run.
. "$(dirname "$0")/lib.sh"

start_front || exit 1

# import_caller <callee id> [app id to import over]: the caller app
import_caller() {
	sed "s/__CALLEE__/$1/" "$TOP/tests/e2e/apps/wf_tool_caller.yml" \
	    >"$T_DIR/caller.yml"
	jq -n --rawfile y "$T_DIR/caller.yml" --arg id "${2:-}" \
	    '{mode: "yaml-content", yaml_content: $y} +
	    (if $id == "" then {} else {app_id: $id} end)' >"$T_DIR/imp.json"
	req POST /console/api/apps/imports -H "$J" --data-binary @"$T_DIR/imp.json"
}

# ====== The callee, as a tool ======

import_file "$TOP/tests/e2e/apps/wf_tool_echo.yml"
is "$(jqr .status)" completed "the callee imports (and is published)"
ECHO=$(jqr .app_id)
req GET "/console/api/workspaces/current/tool-providers?type=workflow"
is "$STATUS $(jqr "[.[] | select(.id==\"$ECHO\")][0] | [.type, .name, .tools[0].name] | join(\" \")")" \
    "200 workflow Echo tool Echo_tool" "tool-providers lists the published workflow app as a workflow provider"
is "$(jqr "[.[] | select(.id==\"$ECHO\")][0].tools[0].parameters | map(.name + \":\" + .type + \":\" + .form) | join(\",\")")" \
    "q:string:llm,n:number:llm" "... its start variables as the tool's parameters"
req GET /console/api/workspaces/current/tool-providers
is "$(jqr '[.[] | select(.type=="workflow")] | length')" 1 "... and in the whole list"

# ====== A caller ======

import_caller "$ECHO"
is "$(jqr '.status + " " + (.leaked_dependencies | length | tostring)')" "completed 0" \
    "the caller imports with nothing missing"
CALLER=$(jqr .app_id)
req POST "$A/$CALLER/api-keys"
KEY=$(jqr .token)
svc "$KEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs": {"q": "héllo"}, "user": "e2e-user", "response_mode": "blocking"}'
is "$STATUS $(jqr .data.status)" "200 succeeded" "the caller's run succeeds"
is "$(jqr .data.outputs.text)" '{"echo": "héllo"}' "... the tool's text is json.dumps of the callee's outputs"
is "$(jqr .data.outputs.echo)" "héllo" "... and each output is a variable of the tool node"
RUN=$(jqr .workflow_run_id)

req GET "$A/$ECHO/workflow-runs"
is "$STATUS $(jqr '.data | length')" "200 1" "the nested run is in the callee's run history"
NESTED=$(jqr '.data[0].id')
req GET "$A/$ECHO/workflow-runs/$NESTED"
is "$STATUS $(jqr .status)" "200 succeeded" "... a record of its own"
is "$(jqr .parent_run_id)" "$RUN" "... whose parent is the caller's run"
is "$(jqr .created_by_end_user) $(jqr .inputs.q)" "e2e-user héllo" "... with the caller's end user and the tool's parameters"
req GET "$A/$CALLER/workflow-runs/$RUN"
is "$(jqr '.parent_run_id // "none"')" none "the caller's run has no parent"
key_stream /v1/workflows/run '{"inputs": {"q": "streamed"}, "user": "e2e-user", "response_mode": "streaming"}' "$T_DIR/s.txt"
is "$(sed -n 's/^data: //p' "$T_DIR/s.txt" | jq -r 'select(.event=="workflow_finished") | .data.status + " " + .data.outputs.echo')" \
    "succeeded streamed" "a streaming run of the caller runs the nested one too"
req GET "$A/$ECHO/workflow-runs"
is "$(jqr '.data | length')" 2 "... which the callee's history keeps as well"

# ====== Refused ======

import_caller "$ECHO"
SELF=$(jqr .app_id)
import_caller "$SELF" "$SELF"
is "$(jqr .status)" completed "an app calling itself imports"
req POST "$A/$SELF/api-keys"
KEY=$(jqr .token)
svc "$KEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs": {"q": "x"}, "user": "e2e-user", "response_mode": "blocking"}'
is "$STATUS $(jqr .data.status)" "200 failed" "... but its run is refused"
jqr .data.error | grep -q "would call itself"
ok $? "... saying it would call itself"
req GET "$A/$SELF/workflow-runs"
is "$(jqr '.data | length')" 1 "... and no nested run was made"

import_caller 4f0c7c1e-0000-4000-8000-00000000beef
is "$(jqr '.leaked_dependencies | map(.provider + ":" + .reason) | join(",")')" \
    "4f0c7c1e-0000-4000-8000-00000000beef:not_served" \
    "an import naming a workflow app that is not here reports it not_served"
