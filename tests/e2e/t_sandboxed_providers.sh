#!/bin/bash
# t_sandboxed_providers.sh — the same sandboxed chatflow through nginx in
# each sandbox provider, switched with the settings API between runs: ssh
# (a real sshd on loopback), e2b (the fake E2B on loopback) and local
# (bubblewrap). In each, the scripted fake LLM reads a skill file, runs a
# command and writes output/report.txt, which comes back as the node's
# file; nothing of the sandbox is left behind. Then a changed ssh host key
# and a dead E2B API each fail the next run with a clear error.
# Needs root, /usr/sbin/sshd and unshare, otherwise it fails; without
# bwrap it is one counted skip (need).
. "$(dirname "$0")/lib.sh"
need bwrap	# the local sandbox provider

if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/sbin/sshd ]; then
	ok 1 "needs root and /usr/sbin/sshd (openssh-server)"; exit 1
fi
SPASS='prov pass-456'
start_sshd sbprov 61236 "$SPASS" || { ok 1 "sshd started"; exit 1; }

start_fake e2b E2B
E2B_KEY=e2b_0000000000000000000000000000000000000000

start_llm_front || exit 1
P=/console/api/workspaces/current

report_app

# Both remote providers, configured through the settings API.
jq -n --arg p "$SSH_PORT" --arg pw "$SPASS" --arg b "$SSHD_DIR/home/work" \
    '{config: {ssh_host: "127.0.0.1", ssh_port: $p, ssh_username: "sbprov",
    ssh_password: $pw, base_working_path: $b}}' >"$T_DIR/ssh.json"
req POST $P/sandbox-provider/ssh/config -H "$J" --data-binary @"$T_DIR/ssh.json"
is "$STATUS" 200 "ssh configured"
jq -n --arg u "$E2B" --arg k "$E2B_KEY" \
    '{config: {api_key: $k, e2b_api_url: $u, e2b_envd_url: $u}}' >"$T_DIR/e2b.json"
req POST $P/sandbox-provider/e2b/config -H "$J" --data-binary @"$T_DIR/e2b.json"
is "$STATUS" 200 "e2b configured"
[ "$STATUS" = 200 ] || echo "# $BODY"

# run <provider>: activates it and runs the chatflow once (streaming) into
# $T_DIR/<provider>.txt; the fake LLM's requests go to $T_DIR/<provider>.req.
run() {
	req POST $P/sandbox-provider/$1/activate
	is "$STATUS" 200 "$1: activated"
	report_script "$1"
	report_ask "$T_DIR/$1.txt"
	curl -s "$LLM/_requests" >"$T_DIR/$1.req"
}

# check <provider> <uid the commands ran as> <workspace pattern>
check() {
	local ev="$T_DIR/$1.txt" rq="$T_DIR/$1.req" out run
	is "$(jq -r 'select(.event=="message") | .answer' "$ev" | tr -d '\n')" \
	    "Report written." "$1: the Agent's answer"
	jq -r '.[1].body.messages[-1].content' "$rq" | grep -qx 'Write one line: done.'
	ok $? "$1: the skill file was read inside the sandbox"
	out=$(jq -r '.[2].body.messages[-1].content' "$rq")
	printf '%s\n' "$out" | grep -qx 'numbers 1 2 3'
	ok $? "$1: the uploaded file is in the workspace"
	is "$(printf '%s\n' "$out" | sed -n 2p)" "$2" "$1: commands ran as uid $2"
	case "$(printf '%s\n' "$out" | sed -n 3p)" in
	$3) ok 0 "$1: in the provider's workspace";;
	*) ok 1 "$1: in the provider's workspace"; echo "# $out";;
	esac
	jq -r '.[0].body.messages[1].content' "$rq" | grep -q '^Write the report. The data has 14$'
	ok $? "$1: the command node ran in the sandbox"
	run=$(jq -r 'select(.event=="workflow_finished") | .workflow_run_id' "$ev")
	req GET "$A/$APP/workflow-runs/$run/node-executions"
	is "$(jqr '.data[] | select(.node_id=="agent") | .outputs.files[0].url' \
	    | sed 's/.*base64,//' | base64 -d)" "done-$1" \
	    "$1: output/report.txt comes back as the node's file"
}

run ssh
check ssh 61236 "$SSHD_DIR/home/work/*"
is "$(find "$SSHD_DIR/home/work" -mindepth 1 -maxdepth 1 | wc -l)" 0 \
    "ssh: the remote workspace was removed"

run e2b
check e2b "$(id -u)" "*/home/user"   # the fake maps / to a folder
is "$(curl -s -H "X-API-Key: $E2B_KEY" "$E2B/sandboxes" | jq length)" 0 \
    "e2b: the sandbox was killed"
run local
check local 65534 "/*"   # bubblewrap runs commands as nobody
is "$(find "$T_DIR/data/sandboxes" -mindepth 1 -maxdepth 1 ! -name .ssh | wc -l)" 0 \
    "local: the sandbox was destroyed"

# A dead E2B API: the run fails, saying so.
kill "$(cat "$T_DIR/e2b.pid")"; sleep 0.2
run e2b
is "$(jq -r 'select(.event=="workflow_finished") | .data.status' "$T_DIR/e2b.txt")" \
    failed "dead E2B API: the run fails"
case "$(jq -r 'select(.event=="workflow_finished") | .data.error' "$T_DIR/e2b.txt")" in
*e2b*) ok 0 "dead E2B API: a clear error";;
*) ok 1 "dead E2B API: a clear error"; cat "$T_DIR/e2b.txt";;
esac

# The ssh server's host key changes after it was pinned: refused.
rm -f "$SSHD_DIR/hostkey" "$SSHD_DIR/hostkey.pub"
ssh-keygen -q -t ed25519 -N '' -f "$SSHD_DIR/hostkey"
stop_control_masters
run ssh
is "$(jq -r 'select(.event=="workflow_finished") | .data.status' "$T_DIR/ssh.txt")" \
    failed "changed host key: the run fails"
case "$(jq -r 'select(.event=="workflow_finished") | .data.error' "$T_DIR/ssh.txt")" in
*"host key"*) ok 0 "changed host key: a clear error";;
*) ok 1 "changed host key: a clear error"; cat "$T_DIR/ssh.txt";;
esac
stop_control_masters
