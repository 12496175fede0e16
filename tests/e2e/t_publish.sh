#!/bin/bash
# t_publish.sh — an app's draft and published versions through nginx, in
# Dify's console paths: a draft save with the current hash is taken and one
# with a stale hash refused (409 draft_workflow_not_sync); the service API
# runs the published version while the draft changes, and the new one once
# it is published; versions list newest first, paged; a version restored
# into the draft; export of the draft and of a version; a run record names
# the version that ran; a secret sent back masked keeps its value; an
# import (YAML or bundle) that asks not to publish; a chat app's model config.
. "$(dirname "$0")/lib.sh"

J='Content-Type: application/json'
A=/console/api/apps
SECRET=PUBSEC-4b1d9e77

start_front || exit 1

# run_out <key>: a blocking service run with q=hi; sets OUT (outputs.out),
# TOK (outputs.tok) and RUN (the run id).
run_out() {
	svc "$1" POST /v1/workflows/run -H "$J" \
	    -d '{"inputs":{"q":"hi"},"user":"u","response_mode":"blocking"}'
	OUT=$(jqr .data.outputs.out)
	TOK=$(jqr .data.outputs.tok)
	RUN=$(jqr .workflow_run_id)
}

# save <hash> <template>: saves the draft as GET gave it (in $T_DIR/draft)
# with the template node's text changed.
save() {
	jq --arg h "$1" --arg t "$2" '{graph: (.graph | .nodes |= map(
	    if .id == "t" then .data.template = $t else . end)), features,
	    environment_variables, conversation_variables, hash: $h}' \
	    "$T_DIR/draft" >"$T_DIR/save.json"
	req POST "$A/$APP/workflows/draft" -H "$J" \
	    --data-binary @"$T_DIR/save.json"
}

import_file "$TOP/tests/e2e/apps/publish.yml"
is "$(jqr .status)" completed "the app imported"
import_app "$TOP/tests/e2e/apps/publish.yml"
run_out "$KEY"
is "$OUT" "one hi" "the service API runs what was imported"
is "$TOK" "$SECRET" "with its secret environment variable"

# ====== Versions made by the import ======

req GET "$A/$APP/workflows/publish"
is "$STATUS" 200 "the published version answered"
V1=$(jqr .id)
V1TEXT=$(jqr .version)
ok "$([[ "$V1TEXT" =~ ^20[0-9]{2}-[0-9]{2}-[0-9]{2}\ [0-9:]{8}\.[0-9]{6}$ ]] && echo 0 || echo 1)" \
    "its version is the time of publishing, as Dify writes it ($V1TEXT)"
is "$(jqr '.graph.nodes | length')" 3 "it carries the graph"
is "$(jqr '.environment_variables[0].value')" "[__HIDDEN__]" \
    "its secret is masked"

# ====== Draft save and its hash ======

req GET "$A/$APP/workflows/draft"
is "$STATUS" 200 "the draft answered"
printf '%s' "$BODY" >"$T_DIR/draft"
H1=$(jqr .hash)
is "$(jqr .version)" draft "the draft's version is \"draft\""
is "${#H1}" 64 "the draft has a hash"
is "$(jqr '.environment_variables[0].value')" "[__HIDDEN__]" \
    "the draft's secret is masked"
req GET "$A/$APP/workflows/draft"
is "$(jqr .hash)" "$H1" "the hash is stable while nothing changes"

save "$H1" 'two {{ q }}'
is "$STATUS" 200 "a save with the current hash is taken"
is "$(jqr .result)" success "it answers result: success"
H2=$(jqr .hash)
ok "$([ -n "$H2" ] && [ "$H2" != "$H1" ] && echo 0 || echo 1)" \
    "it answers the new hash"
is "$(jqr '.updated_at | type')" number "and updated_at"
save "$H1" 'three {{ q }}'
is "$STATUS" 409 "a save with a stale hash is refused"
is "$(jqr .code)" draft_workflow_not_sync "with Dify's code"
save "" 'three {{ q }}'
is "$STATUS" 409 "a save without a hash is refused too"
req GET "$A/$APP/workflows/draft"
is "$(jqr '.graph.nodes[] | select(.id == "t") | .data.template')" \
    'two {{ q }}' "the refused saves changed nothing"
is "$(jqr .hash)" "$H2" "the draft has the hash the save answered"

# checks and warnings as an import's
jq '.graph.edges += [{id: "bad", source: "t", target: "nowhere"}] |
    {graph, features, environment_variables, conversation_variables,
    hash: .hash}' <<<"$BODY" >"$T_DIR/bad.json"
req POST "$A/$APP/workflows/draft" -H "$J" --data-binary @"$T_DIR/bad.json"
is "$STATUS" 200 "a draft with a dangling edge is kept"
is "$(jqr '[.warnings[] | select(.edge_id == "bad")] | length')" 1 \
    "and warned about, as an import warns"
H3=$(jqr .hash)
req POST "$A/$APP/workflows/draft" -H "$J" -d '{"graph": [], "features": {}}'
is "$STATUS" 400 "a graph that is not an object is refused"
req GET "$A/$APP/workflows/draft"
printf '%s' "$BODY" >"$T_DIR/draft"
jq '.graph.edges |= map(select(.id != "bad"))' "$T_DIR/draft" >"$T_DIR/d2"
mv "$T_DIR/d2" "$T_DIR/draft"
save "$H3" 'two {{ q }}'
is "$STATUS" 200 "the dangling edge removed again"

# ====== The service API runs the published version ======

run_out "$KEY"
is "$OUT" "one hi" "the service API still runs the published version"
curl -sS -N -H "Authorization: Bearer $TOKEN" -H "$J" \
    -d '{"inputs":{"q":"hi"}}' "$BASE$A/$APP/workflows/draft/run" |
    sed -n 's/^data: //p' >"$T_DIR/draft.sse"
is "$(jq -r 'select(.event == "workflow_finished") | .data.outputs.out' \
    "$T_DIR/draft.sse")" "two hi" "a console test run runs the draft"

req POST "$A/$APP/workflows/publish" -H "$J" \
    -d '{"marked_name": "second", "marked_comment": "the two"}'
is "$STATUS" 200 "publish answered"
is "$(jqr .result)" success "with result: success"
is "$(jqr '.created_at | type')" number "and created_at"
V2=$(jqr .id)
V2TEXT=$(jqr .version)
run_out "$KEY"
is "$OUT" "two hi" "the service API runs the new version"
is "$TOK" "$SECRET" "the secret sent back masked kept its value"
req GET "$A/$APP/workflow-runs/$RUN"
is "$(jqr .workflow_id)" "$V2" "the run record names the version that ran"
is "$(jqr .version)" "$V2TEXT" "and its version text"
req POST "$A/$APP/workflows/publish" -H "$J" \
    -d '{"marked_name": "a name longer than twenty"}'
is "$STATUS" 400 "a marked_name over 20 characters is refused"

# ====== Versions, paged ======

req GET "$A/$APP/workflows"
is "$STATUS" 200 "the versions answered"
is "$(jqr '[.items[].id] | join(" ")')" "$V2 $V1" "newest first"
is "$(jqr '.items[0].marked_name + "/" + .items[0].marked_comment')" \
    "second/the two" "with their name and comment"
is "$(jqr '.has_more')" false "no more"
req GET "$A/$APP/workflows?limit=1"
is "$(jqr '[(.items | length), .has_more, .page, .limit] | map(tostring) |
    join(" ")')" \
    "1 true 1 1" "a page of one has more"
req GET "$A/$APP/workflows?limit=1&page=2"
is "$(jqr '[.items[0].id, .has_more] | map(tostring) | join(" ")')" "$V1 false" \
    "the second page holds the first version"
req GET "$A/$APP/workflows?named_only=true"
is "$(jqr '[.items[].id] | join(" ")')" "$V2" "named_only: the named one"

# ====== Export ======

req GET "$A/$APP/export"
printf '%s' "$(jqr .data)" >"$T_DIR/draft.yml"
ok "$(grep -q 'two {{ q }}' "$T_DIR/draft.yml" && echo 0 || echo 1)" \
    "export gives the draft"
req GET "$A/$APP/export?workflow_id=$V1"
is "$STATUS" 200 "export of a version answered"
printf '%s' "$(jqr .data)" >"$T_DIR/v1.yml"
ok "$(grep -q 'one {{ q }}' "$T_DIR/v1.yml" && ! grep -q 'two' \
    "$T_DIR/v1.yml" && echo 0 || echo 1)" "export of a version gives it"
req GET "$A/$APP/export?workflow_id=$V1&include_secret=true"
ok "$(jqr .data | grep -q "$SECRET" && echo 0 || echo 1)" \
    "with include_secret, the version's secret in the clear"
req GET "$A/$APP/export?workflow_id=00000000-0000-7000-8000-000000000000"
is "$STATUS" 404 "export of an unknown version: 404"

# ====== Restore ======

req POST "$A/$APP/workflows/$V1/restore"
is "$STATUS" 200 "restore answered"
H4=$(jqr .hash)
req GET "$A/$APP/workflows/draft"
is "$(jqr '.graph.nodes[] | select(.id == "t") | .data.template')" \
    'one {{ q }}' "the draft is the restored version"
is "$(jqr .hash)" "$H4" "with the hash restore answered"
run_out "$KEY"
is "$OUT" "two hi" "the service API still runs the latest published"
req POST "$A/$APP/workflows/publish" -H "$J" -d '{}'
run_out "$KEY"
is "$OUT" "one hi" "published again, it runs the restored one"
is "$TOK" "$SECRET" "its secret came back with it"
req POST "$A/$APP/workflows/00000000-0000-7000-8000-000000000000/restore"
is "$STATUS" 404 "restore of an unknown version: 404"

# ====== Imports that ask not to publish ======

jq -n --rawfile y "$TOP/tests/e2e/apps/publish.yml" '{mode: "yaml-content",
    yaml_content: ($y | sub("one \\{\\{"; "new {{")), publish: false}' \
    >"$T_DIR/imp.json"
req POST "$A/imports" -H "$J" --data-binary @"$T_DIR/imp.json"
APP2=$(jqr .app_id)
req POST "$A/$APP2/api-keys"
KEY2=$(jqr .token)
req GET "$A/$APP2/workflows/publish"
is "$BODY" null "an app imported with publish: false has no version"
run_out "$KEY2"
is "$OUT" "new hi" "and the service API runs its draft"
jq --arg id "$APP" '. + {app_id: $id}' "$T_DIR/imp.json" >"$T_DIR/imp2.json"
req POST "$A/imports" -H "$J" --data-binary @"$T_DIR/imp2.json"
is "$STATUS" 200 "an overwrite with publish: false answered"
run_out "$KEY"
is "$OUT" "one hi" "the published app still runs its version"
jq '.publish = true' "$T_DIR/imp2.json" >"$T_DIR/imp3.json"
req POST "$A/imports" -H "$J" --data-binary @"$T_DIR/imp3.json"
run_out "$KEY"
is "$OUT" "new hi" "an overwrite that publishes runs at once, as before"

for q in "" "?publish=false"; do
	req POST "$A/imports-bundle$q" -H 'Content-Type: application/zip' \
	    --data-binary @"$TOP/tests/e2e/apps/report_bundle.zip"
	B=$(jqr .app_id)
	req GET "$A/$B/workflows/publish"
	if [ -z "$q" ]; then
		is "$(jqr '.id | length')" 36 "a bundle import publishes too"
	else
		is "$BODY" null "a bundle import with publish=false does not"
	fi
done

# ====== Secrets stay sealed at rest ======

ok "$(grep -raqF -- "$SECRET" "$T_DIR/data" && echo 1 || echo 0)" \
    "the secret is in no byte of the data directory"

# ====== A chat app's model config ======

req POST "$A" -H "$J" -d '{"name": "Chatty", "mode": "chat"}'
CHAT=$(jqr .id)
req POST "$A/$CHAT/model-config" -H "$J" -d '{"model": {"provider":
    "openai", "name": "gpt-4o-mini", "mode": "chat", "completion_params":
    {"temperature": 0.2}}, "pre_prompt": "Be brief.", "user_input_form": []}'
is "$STATUS" 200 "model-config answered"
is "$(jqr .result)" success "with result: success"
req GET "$A/$CHAT"
is "$(jqr '.model_config.model.name + "/" + .model_config.pre_prompt')" \
    "gpt-4o-mini/Be brief." "the app has the new model config"
req POST "$A/$CHAT/model-config" -H "$J" -d '{"pre_prompt": "x"}'
is "$STATUS" 400 "a model config without a model is refused"
req POST "$A/$APP/model-config" -H "$J" -d '{"model": {"provider": "openai",
    "name": "gpt-4o"}}'
is "$STATUS" 400 "a workflow app has no model config to set"
req POST "$A/$CHAT/workflows/publish" -H "$J" -d '{}'
is "$STATUS" 400 "a chat app is not published"

# ====== Deleting the app takes its versions ======

req DELETE "$A/$APP"
req GET "$A/$APP/workflows"
is "$STATUS" 404 "a deleted app has no versions to list"
