#!/bin/bash
# t_publish_checks.sh — a draft that cannot run, through nginx: each broken
# draft (an unknown node type, a cycle, nodes that are not mappings, no
# start node, two start nodes, a dangling edge, a node without a required
# field, a start node beside a trigger) is kept by a draft save, which
# names its problems in warnings; publish refuses it with 400
# invalid_draft and the problems in errors, and the version published
# before still runs. A variable that can never be valid (a value type
# outside Dify's list, a name that is not an identifier, a value too
# large) is refused by the save itself (400 invalid_param) and changes
# nothing. The console's draft run refuses a draft that cannot run at
# once, with a 400 naming the problem; the service API refuses a version
# published before the checks with a node type flowcgi does not run the
# same way (t_security_graphs: its other problems make a failed run that
# names them). Every app under tests/e2e/apps publishes.
. "$(dirname "$0")/lib.sh"

start_front || exit 1

# run_out: a blocking service run with q=hi; sets OUT (outputs.out).
run_out() {
	svc "$KEY" POST /v1/workflows/run -H "$J" \
	    -d '{"inputs":{"q":"hi"},"user":"u","response_mode":"blocking"}'
	OUT=$(jqr .data.outputs.out)
}

# draft: the draft as GET gives it, into $T_DIR/draft; sets HASH.
draft() {
	req GET "$A/$APP/workflows/draft"
	printf '%s' "$BODY" >"$T_DIR/draft"
	HASH=$(jqr .hash)
}

# save_jq <jq filter>: saves the draft changed by the filter (on the
# draft's Workflow object) with the current hash.
save_jq() {
	draft
	jq "$1"' | {graph, features, environment_variables,
	    conversation_variables, hash}' "$T_DIR/draft" >"$T_DIR/save.json"
	req POST "$A/$APP/workflows/draft" -H "$J" \
	    --data-binary @"$T_DIR/save.json"
}

import_app "$TOP/tests/e2e/apps/publish.yml"
draft
GOOD=$(jq -c '.graph' "$T_DIR/draft")
run_out
is "$OUT" "one hi" "the imported app runs"

# broken <name> <jq filter> <jq test on the warnings>: the draft saves
# with warnings, publish refuses it, the published version still runs,
# and the draft is put back.
broken() {
	save_jq "$2"
	is "$STATUS" 200 "$1: the draft is kept"
	ok "$(jqr "(.warnings | length) > 0 and (.warnings | $3)" | grep -qx true &&
	    echo 0 || echo 1)" "$1: its warnings name the problem"
	[ "$(jqr '.warnings | length')" != 0 ] ||
	    echo "#   answer: $(printf '%.300s' "$BODY")"
	req POST "$A/$APP/workflows/publish" -H "$J" -d '{}'
	is "$STATUS" 400 "$1: publish refuses it"
	is "$(jqr .code)" invalid_draft "$1: with code invalid_draft"
	ok "$(jqr "(.errors | length) > 0 and (.errors | $3) and
	    (.message == .errors[0].message)" | grep -qx true && echo 0 ||
	    echo 1)" "$1: errors lists the problems, message the first"
	run_out
	is "$OUT" "one hi" "$1: the published version still runs"
	save_jq ".graph = $GOOD"
	is "$STATUS" 200 "$1: the good graph saved back"
}

broken "unknown node type" \
    '.graph.nodes |= map(if .id == "t" then .data.type = "no-such-node"
    else . end)' 'any(.node_id == "t" and .field == "data.type")'
broken "cycle" \
    '.graph.edges += [{id: "back", source: "end", target: "t",
    sourceHandle: "source", targetHandle: "target"}]' \
    'any(.message | test("cycle"))'
broken "nodes that are not mappings" \
    '.graph = {nodes: [1, "a", null, {}], edges: []}' \
    'any(.field == "graph.nodes[0]") and any(.field == "graph.nodes[2]")
    and any(.message | test("no start node"))'
broken "no start node" \
    '.graph.nodes |= map(select(.id != "s")) |
    .graph.edges |= map(select(.source != "s"))' \
    'any(.message | test("no start node"))'
broken "two start nodes" \
    '.graph.nodes += [{id: "s2", data: {type: "start", title: "S2",
    variables: []}}]' 'any(.node_id == "s2")'
broken "dangling edge" \
    '.graph.edges += [{id: "dangle", source: "t", target: "nowhere",
    sourceHandle: "source", targetHandle: "target"}]' \
    'any(.edge_id == "dangle")'
broken "a node without a required field" \
    '.graph.nodes |= map(if .id == "t" then .data |= del(.template)
    else . end)' 'any(.node_id == "t" and .field == "data.template")'
broken "a start node beside a trigger" \
    '.graph.nodes += [{id: "hook", data: {type: "trigger-webhook",
    title: "Hook"}}]' 'any(.node_id == "hook")'

# ====== Variables that can never be valid: the save refuses them ======

draft
H0=$HASH
badvar() {	# badvar <name> <jq filter>
	save_jq "$2"
	is "$STATUS" 400 "$1: the save is refused"
	is "$(jqr .code)" invalid_param "$1: with Dify's code invalid_param"
	ok "$([ -n "$(jqr .message)" ] && echo 0 || echo 1)" \
	    "$1: the message says why ($(jqr .message | cut -c1-80))"
}
badvar "an environment variable of value_type blob" \
    '.environment_variables += [{id: "b", name: "blob", value_type:
    "blob", value: "x"}]'
badvar "an environment variable named ../../x" \
    '.environment_variables += [{id: "p", name: "../../x", value_type:
    "string", value: "x"}]'
badvar "an environment variable too large" \
    '.environment_variables += [{id: "big", name: "big", value_type:
    "string", value: ("x" * 300000)}]'
badvar "a conversation variable of value_type blob" \
    '.conversation_variables += [{id: "c", name: "c", value_type: "blob",
    value: "x"}]'
badvar "a conversation variable named ../../x" \
    '.conversation_variables += [{id: "c", name: "../../x", value_type:
    "string", value: "x"}]'
draft
is "$HASH" "$H0" "the refused saves changed nothing"
save_jq '.conversation_variables += [{id: "c", name: "count", value_type:
    "number", value: 1}, {id: "d", name: "names", value_type:
    "array[string]", value: []}]'
is "$STATUS" 200 "valid conversation variables are taken"
is "$(jqr '.warnings | length')" 0 "without warnings"

# ====== Runs refuse a graph that cannot run, at once ======

save_jq '.graph.edges += [{id: "dangle", source: "t", target: "nowhere",
    sourceHandle: "source", targetHandle: "target"}]'
req POST "$A/$APP/workflows/draft/run" -H "$J" -d '{"inputs":{"q":"hi"}}'
is "$STATUS" 400 "a console draft run of a broken draft: 400 at once"
ok "$(jqr .message | grep -q "nowhere" && echo 0 || echo 1)" \
    "naming the problem ($(jqr .message | cut -c1-80))"
save_jq ".graph = $GOOD"
req POST "$A/$APP/workflows/draft/run" -H "$J" -d '{"inputs":{"q":"hi"}}'
is "$STATUS" 200 "the good draft runs again"

# a chatflow's console draft run too
jq -n --rawfile y "$TOP/tests/e2e/apps/echo_chat.yml" '{mode:
    "yaml-content", yaml_content: $y, publish: false}' >"$T_DIR/imp.json"
req POST "$A/imports" -H "$J" --data-binary @"$T_DIR/imp.json"
C=$(jqr .app_id)
req GET "$A/$C/workflows/draft"
jq '{graph: (.graph | .edges += [{id: "back", source: "answer", target:
    "start", sourceHandle: "source"}]), features, environment_variables,
    conversation_variables, hash}' <<<"$BODY" >"$T_DIR/save.json"
req POST "$A/$C/workflows/draft" -H "$J" --data-binary @"$T_DIR/save.json"
is "$STATUS $(jqr '[.warnings[] | select(.edge_id == "back")] | length')" \
    "200 1" "a chatflow draft with a cycle is kept, and warned about"
req POST "$A/$C/advanced-chat/workflows/draft/run" -H "$J" \
    -d '{"inputs":{},"query":"hi"}'
is "$STATUS" 400 "its console draft run: 400 at once"
ok "$(jqr .message | grep -q "cycle" && echo 0 || echo 1)" \
    "naming the cycle ($(jqr .message | cut -c1-80))"

# A version published before the checks existed: an import still
# publishes what it is given, with its warnings.
jq -n --rawfile y "$TOP/tests/e2e/apps/publish.yml" '{mode: "yaml-content",
    yaml_content: ($y | sub("type: template-transform";
    "type: no-such-node"))}' >"$T_DIR/imp.json"
req POST "$A/imports" -H "$J" --data-binary @"$T_DIR/imp.json"
B=$(jqr .app_id)
req POST "$A/$B/api-keys"
BKEY=$(jqr .token)
svc "$BKEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"q":"hi"},"user":"u","response_mode":"blocking"}'
is "$STATUS" 400 "a broken published version: the service run is a 400"
ok "$(jqr .message | grep -q "no-such-node" && echo 0 || echo 1)" \
    "naming the problem ($(jqr .message | cut -c1-80))"
svc "$BKEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"q":"hi"},"user":"u","response_mode":"streaming"}'
is "$STATUS" 400 "streaming too: a 400 before any event"

# ====== Every app the tests ship passes publish ======

for f in "$TOP"/tests/e2e/apps/*.yml; do
	n=$(basename "$f")
	jq -n --rawfile y "$f" '{mode: "yaml-content", yaml_content: $y,
	    publish: false}' >"$T_DIR/imp.json"
	req POST "$A/imports" -H "$J" --data-binary @"$T_DIR/imp.json"
	id=$(jqr .app_id)
	st=$(jqr .status)
	if [ "$st" = pending ]; then
		skip "$n: a newer DSL version, imported only when confirmed"
		continue
	fi
	mode=$(jqr .app_mode)
	case "$mode" in workflow|advanced-chat) ;; *)
		skip "$n: a $mode app is not published"; continue ;;
	esac
	req POST "$A/$id/workflows/publish" -H "$J" -d '{}'
	is "$STATUS" 200 "$n publishes" || echo "#   $(printf '%.300s' "$BODY")"
done
