#!/bin/bash
# t_sandboxed_output.sh — what a sandboxed run makes of command output that
# is not plain ASCII, through nginx with the local provider and the fake
# LLM: bytes that are not UTF-8 read as U+FFFD (as Python decodes them with
# errors="replace") in the command node's stdout and stderr and in what the
# Agent's model sees, and the Agent's cut to agent.output_max (8,000)
# characters counts characters, not bytes, keeping agent.output_keep
# (2,500) of the head and of the tail.
. "$(dirname "$0")/lib.sh"
need bwrap	# the local sandbox provider

start_llm_front || exit 1
import_app "$TOP/tests/e2e/apps/sandboxed_output.yml"

# 1: "x", 9,000 "é" (18,000 bytes), a stray byte: 9,002 characters, cut.
# 2: 5,000 "é": 10,000 bytes but 5,000 characters, kept whole.
jq -n '{responses: [
  {tool_calls: [{id: "a", name: "bash", arguments: {bash:
    "printf x; printf \"\\303\\251%.0s\" $(seq 9000); printf \"\\377\""}}]},
  {tool_calls: [{id: "b", name: "bash", arguments: {bash:
    "printf \"\\303\\251%.0s\" $(seq 5000)"}}]},
  {text: "Seen."}]}' >"$T_DIR/script.json"
llm_script @"$T_DIR/script.json"
curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"user":"u","response_mode":"blocking"}' \
    "$BASE/v1/workflows/run" >"$T_DIR/run.json"
is "$(jq -r .data.status "$T_DIR/run.json")" succeeded "the run succeeds"
is "$(jq -r .data.outputs.stdout "$T_DIR/run.json")" "ok$(printf '\357\277\275')é" \
    "command stdout: a stray byte reads as U+FFFD, é stays"
is "$(jq -r .data.outputs.stderr "$T_DIR/run.json")" "warn$(printf '\357\277\275')" \
    "command stderr: the same"
is "$(jq -r .data.outputs.text "$T_DIR/run.json")" "Seen." "the Agent answers"

curl -s "$LLM/_requests" >"$T_DIR/req.json"
first=$(jq -r '.[1].body.messages[-1].content' "$T_DIR/req.json")
is "$(jq '.[1].body.messages[-1].content | length' "$T_DIR/req.json")" \
    "$(( 2500 + 2500 + $(printf '\n... [4002 characters cut] ...\n' | wc -m) ))" \
    "the model sees 2,500 characters of head and of tail and the cut"
case "$first" in
"xé"*"é"$'\n... [4002 characters cut] ...\n'"é"*"é$(printf '\357\277\275')") ok 0 \
    "whole characters on both sides of the cut; the stray byte is U+FFFD";;
*) ok 1 "whole characters on both sides of the cut; the stray byte is U+FFFD"
   printf '%s' "$first" | head -c 80 | od -c | head -3;;
esac
is "$(jq '.[2].body.messages[-1].content | length' "$T_DIR/req.json")" 5000 \
    "5,000 two-byte characters are under the limit: kept whole"
RUN=$(jq -r .workflow_run_id "$T_DIR/run.json")
req GET "$A/$APP/workflow-runs/$RUN/node-executions"
is "$(jqr '.data[] | select(.node_id=="agent") | .outputs.generation.tool_calls | map(.output | length) | join(" ")')" \
    "$(( 5000 + $(printf '\n... [4002 characters cut] ...\n' | wc -m) )) 5000" \
    "both commands are in generation.tool_calls with their output"
