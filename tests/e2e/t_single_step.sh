#!/bin/bash
# t_single_step.sh — Dify's single-step run of one node of the draft
# (POST .../workflows/draft/nodes/{node}/run) and a node's last execution
# (GET .../last-run) through nginx, with the fake LLM as the model
# provider: an llm, a code and a template node run alone with the inputs
# Dify keys them by, answering the node execution shape; last-run after a
# draft run and after a single step; an iteration alone; a failed step is
# 200 with status failed; a node type Dify runs no single step of, another
# app's node, a missing input and bad JSON are refused.
. "$(dirname "$0")/lib.sh"

if ! command -v bwrap >/dev/null || [ ! -x /usr/bin/python3 ]; then
	skip "bwrap or /usr/bin/python3 is not installed (code nodes)"
	exit 0
fi
start_llm_front || exit 1
D=workflows/draft/nodes
jqc() { printf '%s' "$BODY" | jq -c "$1" 2>/dev/null; }

# step <app> <node> <json body>: the single-step route
step() {
	req POST "$A/$1/$D/$2/run" -H "$J" -d "$3"
}

import_app "$TOP/tests/e2e/apps/single_step.yml"
is "${#APP}" 36 "the app imported"
import_file "$TOP/tests/e2e/apps/publish.yml"
OTHER=$(jqr .app_id)

# ====== Before any run ======

req GET "$A/$APP/$D/code/last-run"
is "$STATUS $(jqr .code)" "404 not_found" "a node that never ran has no last run"

# ====== A draft run, then last-run ======

curl -sS -N -H "Authorization: Bearer $TOKEN" -H "$J" \
    -d '{"inputs":{"q":"hello","n":3}}' \
    "$BASE$A/$APP/workflows/draft/run" >"$T_DIR/run.sse"
is "$(sed -n 's/^data: //p' "$T_DIR/run.sse" | jq -r \
    'select(.event == "workflow_finished") | .data.outputs.out')" \
    "echo: say hello x6" "the draft ran to its end"
req GET "$A/$APP/$D/code/last-run"
is "$STATUS" 200 "last-run of a node of the draft run answers"
is "$(jqr .node_id) $(jqr .node_type) $(jqr .status)" "code code succeeded" \
    "it is that node's execution"
is "$(jqc .inputs)" '{"n":3,"t":"echo: say hello"}' "with its inputs"
is "$(jqc .outputs)" '{"twice":6,"text":"echo: say hello"}' \
    "and its outputs"
is "$(jqr '.elapsed_time | type') $(jqr '.created_at | type')" \
    "number number" "its time and creation, as Dify's fields"

# ====== Single steps ======

step "$APP" llm '{"inputs":{"#s.q#":"world"}}'
is "$STATUS" 200 "the llm node ran alone"
is "$(jqr .node_id) $(jqr .node_type) $(jqr .status)" "llm llm succeeded" \
    "in Dify's node execution shape"
is "$(jqr .outputs.text)" "echo: say world" \
    "its prompt saw the input keyed by its reference (#s.q#)"
for k in id index node_id node_type title inputs process_data outputs \
    status error elapsed_time execution_metadata created_at finished_at \
    created_by_role; do
	ok "$(jqr "has(\"$k\") | if . then 0 else 1 end")" \
	    "the answer has Dify's field $k"
done

step "$APP" code '{"inputs":{"n":21,"t":"hi"}}'
is "$STATUS $(jqr .status)" "200 succeeded" "the code node ran alone"
is "$(jqc .outputs)" '{"twice":42,"text":"hi"}' \
    "with its variables keyed by their names"
step "$APP" code '{"inputs":{"code.n":5,"code.t":"pre"}}'
is "$(jqr .outputs.twice) $(jqr .outputs.text)" "10 pre" \
    "or by the node's id and name"
step "$APP" t '{"inputs":{"t":"hey","k":7}}'
is "$STATUS $(jqr .status)" "200 succeeded" "the template node ran alone"
is "$(jqr .outputs.output)" "hey x7" "and rendered the given inputs"

req GET "$A/$APP/$D/t/last-run"
is "$(jqr .outputs.output) $(jqc .inputs)" 'hey x7 {"t":"hey","k":7}' \
    "last-run gives the single step's execution"
req GET "$A/$APP/$D/code/last-run"
is "$(jqr .outputs.twice)" 10 "a node's last run is its newest execution"

step "$APP" code '{"inputs":{"n":-4,"t":"x"}}'
is "$STATUS $(jqr .status)" "200 failed" "a node that fails answers 200, status failed"
ok "$(jqr '.error | test("negative -4") | if . then 0 else 1 end')" \
    "with its error ($(jqr .error | head -c 80))"
req GET "$A/$APP/$D/code/last-run"
is "$(jqr .status)" failed "last-run gives the failed step"

# an iteration runs the nodes inside it; its own execution is the answer
import_file "$TOP/tests/e2e/apps/single_step_iter.yml"
ITER=$(jqr .app_id)
step "$ITER" it '{"inputs":{"#s.list#":["a","b"]}}'
is "$STATUS $(jqr .node_id) $(jqr .status)" "200 it succeeded" \
    "an iteration runs alone"
is "$(jqc .outputs.output)" '["<a>","<b>"]' "over the list it was given"
step "$ITER" itstart '{"inputs":{}}'
is "$STATUS" 400 "an iteration's start node has no single step"

# ====== Refused ======

step "$APP" end '{"inputs":{}}'
is "$STATUS $(jqr .code)" "400 invalid_param" "an end node has no single step"
is "$(jqr .message)" "Node type end not supported" "with Dify's message"
step "$APP" code '{"inputs":{"n":1}}'
is "$STATUS" 400 "an input missing is refused"
is "$(jqr .message)" "Variable key code.t not found in user inputs." \
    "naming it as Dify does"
step "$APP" code '{}'
is "$STATUS $(jqr .message)" "400 missing inputs" "no inputs at all is refused"
step "$APP" code '{"inputs":[1]}'
is "$STATUS $(jqr .message)" "400 inputs must be an object" \
    "inputs that are not an object are refused"
step "$APP" code '{"inputs":'
is "$STATUS" 400 "bad JSON is refused"
is "$(jqr '.code | type')" string "with a JSON error"
step "$OTHER" code '{"inputs":{"n":1,"t":"a"}}'
is "$STATUS" 404 "a node the app does not have is 404"
req GET "$A/$OTHER/$D/code/last-run"
is "$STATUS" 404 "another app has no last run of this app's node"
step 00000000-0000-4000-8000-000000000000 code '{"inputs":{"n":1,"t":"a"}}'
is "$STATUS" 404 "an app that does not exist is 404"
svc nope GET "$A/$APP/$D/code/last-run"
is "$STATUS" 401 "last-run needs the admin token"
