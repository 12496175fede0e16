#!/bin/bash
# t_sandboxed_docker.sh — the sandboxed chatflow of t_sandboxed_providers.sh
# in the docker provider, configured, tested and activated through the
# settings API against a private dockerd (tests/e2e/dockerd.sh: a python3
# image made by `docker import`, never pulled): the scripted fake LLM reads
# a skill file, runs a command and python3 and writes output/report.txt,
# which comes back as the node's file; the command node runs there too.
# Also: a missing image is refused by name when saving, a restart removes
# the containers a dead flowcgi left, nothing is left running after the
# runs, and a dead engine fails the next run naming it.
# Without root, dockerd or busybox-static every check is a counted skip.
. "$(dirname "$0")/lib.sh"

DK=$T_DIR/dk
trap 'rc=$?; sh "$TOP/tests/e2e/dockerd.sh" stop "$DK"; finish; f=$?;
    [ "$rc" -ne 0 ] && exit "$rc"; exit "$f"' EXIT
sh "$TOP/tests/e2e/dockerd.sh" start "$DK" python >"$T_DIR/dockerd.out" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
	skip "docker: $(cat "$T_DIR/dockerd.out")"; exit 0
fi
[ $rc -eq 0 ] || { ok 1 "a private dockerd started"; cat "$T_DIR/dockerd.out"
	exit 1; }
dk() { docker -H "unix://$DK/docker.sock" "$@"; }
labelled() { dk ps -aq --filter "label=${1:-flowcgi.sandbox}" | wc -l; }

start_llm_front || exit 1
P=/console/api/workspaces/current

report_app

# ---- Settings: the docker card's fields, checks by name, masking ----

req GET $P/sandbox-providers
is "$(jqr '[.[] | select(.provider_type=="docker") | .config_schema[].name] | join(" ")')" \
    "docker_sock docker_image docker_network docker_user docker_memory docker_cpus docker_pids docker_cert_path" \
    "the docker provider is offered with its fields"
cfg() {	# cfg <image> [extra jq object]: the config body
	jq -n --arg s "unix://$DK/docker.sock" --arg i "$1" \
	    "{config: ({docker_sock: \$s, docker_image: \$i} + ${2:-{\}})}"
}
req POST $P/sandbox-provider/docker/config -H "$J" \
    -d "$(cfg flowcgi-test/missing:1)"
is "$STATUS" 400 "a missing image is refused"
case "$(jqr .message)" in
*"image 'flowcgi-test/missing:1' is not on the engine"*) ok 0 "... naming the image";;
*) ok 1 "... naming the image"; echo "# $BODY";;
esac
req POST $P/sandbox-provider/docker/config -H "$J" \
    -d "$(cfg flowcgi-test/python:1 '{docker_memory: "lots"}')"
is "$STATUS $(jqr .message | grep -c docker_memory)" "400 1" \
    "a bad limit is refused naming it"
req POST $P/sandbox-provider/docker/test -H "$J" -d "$(cfg flowcgi-test/python:1)"
is "$STATUS" 200 "Test connection works"
case "$(jqr .message)" in
"Docker Engine "*"image flowcgi-test/python:1 is present") ok 0 "... and says the engine's version and that the image is there";;
*) ok 1 "... and says the engine's version and that the image is there"; echo "# $BODY";;
esac
req POST $P/sandbox-provider/docker/config -H "$J" \
    -d "$(cfg flowcgi-test/python:1 '{docker_memory: "256m", docker_pids: "100"}')"
is "$STATUS" 200 "docker configured"
req GET $P/sandbox-providers
is "$(jqr '.[] | select(.provider_type=="docker") | "\(.is_tenant_configured) \(.config.docker_image) \(.config.docker_memory)"')" \
    "true flowcgi-test/python:1 256m" "the saved config is listed"
is "$(labelled)" 0 "checking the config left no container"
req POST $P/sandbox-provider/docker/activate
is "$STATUS" 200 "docker activated"

# ---- A restart removes what a dead flowcgi left (pid 2^22+1: never alive) ----

dk create --label flowcgi.sandbox=left --label "flowcgi.host=$(hostname)" \
    --label flowcgi.pid=4194305 --network none flowcgi-test/python:1 true \
    >/dev/null
is "$(labelled flowcgi.sandbox=left)" 1 "a container left behind"
stop_nginx
kill "$FC_PID"; wait "$FC_PID" 2>/dev/null
FLOWCGI_LLM_BASE_URL=$LLM/v1 start_flowcgi fc2 || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
i=0
while [ "$(labelled flowcgi.sandbox=left)" != 0 ] && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1)); done
is "$(labelled flowcgi.sandbox=left)" 0 "the restart removed it"

# ---- The chatflow in docker ----

report_script docker 'python3 -c \"print(6 * 7)\"'
report_ask "$T_DIR/docker.txt"
curl -s "$LLM/_requests" >"$T_DIR/docker.req"
ev=$T_DIR/docker.txt rq=$T_DIR/docker.req
is "$(jq -r 'select(.event=="message") | .answer' "$ev" | tr -d '\n')" \
    "Report written." "the Agent's answer"
jq -r '.[1].body.messages[-1].content' "$rq" | grep -qx 'Write one line: done.'
ok $? "the skill file was read inside the container"
out=$(jq -r '.[2].body.messages[-1].content' "$rq")
is "$(printf '%s\n' "$out" | tr '\n' ' ')" "numbers 1 2 3 0 /workspace 42 " \
    "the uploaded file is in /workspace, python3 runs (as the image's user)"
jq -r '.[0].body.messages[1].content' "$rq" | grep -q '^Write the report. The data has 14$'
ok $? "the command node ran in the container"
run=$(jq -r 'select(.event=="workflow_finished") | .workflow_run_id' "$ev")
req GET "$A/$APP/workflow-runs/$run/node-executions"
is "$(jqr '.data[] | select(.node_id=="agent") | .outputs.files[0].url' \
    | sed 's/.*base64,//' | base64 -d)" "done-docker" \
    "output/report.txt comes back as the node's file"
is "$(labelled)" 0 "nothing is left running: no labelled container"

# ---- A dead engine fails the run, naming it ----

sh "$TOP/tests/e2e/dockerd.sh" stop "$DK"
llm_script '{"responses": [{"text": "unused"}]}'
report_ask "$T_DIR/dead.txt"
is "$(jq -r 'select(.event=="workflow_finished") | .data.status' "$T_DIR/dead.txt")" \
    failed "dead engine: the run fails"
case "$(jq -r 'select(.event=="workflow_finished") | .data.error' "$T_DIR/dead.txt")" in
*"docker: cannot reach the engine at unix://$DK/docker.sock"*) ok 0 "dead engine: a clear error naming it";;
*) ok 1 "dead engine: a clear error naming it"; cat "$T_DIR/dead.txt";;
esac
