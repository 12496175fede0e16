# t_security_graphs.sh — graphs that cannot run and import answers, through
# nginx: a cycle, a self-loop, an edge to a missing node and duplicate node
# ids import as drafts with warnings naming the problem, and every run of
# them (service API blocking and streaming, the CLI) fails at once with
# that reason instead of "succeeding" with nothing done; a console draft
# run of such a draft is refused with a 400 naming it, as publish is;
# a garbage or cut-short zip and a broken yml fail with Dify's import
# object plus code and message; a zip entry's setuid bits do not survive.
. "$(dirname "$0")/lib.sh"

start_front || exit 1

svc() {	# svc <method> <path> [curl args]: with the app key
	local t=$TOKEN
	TOKEN=$KEY
	req "$@"
	TOKEN=$t
}

sse_data() {	# sse_data <file> <jq filter>: over the stream's data lines
	sed -n 's/^data: //p' "$1" | jq -r "$2" 2>/dev/null
}

has() {	# has <text> <part> <description>
	case "$1" in *"$2"*) ok 0 "$3" ;;
	*) ok 1 "$3"; echo "#   got:  '$1'"; echo "#   want: ...'$2'..." ;;
	esac
}

app_key() {	# app_key: APP from the last import answer, and a KEY for it
	APP=$(jqr .app_id)
	req POST "$A/$APP/api-keys"
	KEY=$(jqr .token)
}

# graph_yml <file> <mode> <nodes> <edges>: a workflow (or chatflow) app.
graph_yml() {
	local last
	if [ "$2" = advanced-chat ]; then
		last="    - id: e
      data: {type: answer, title: E, answer: done}"
	else
		last="    - id: e
      data: {type: end, title: E, outputs: [{variable: o, value_selector: [A, output]}]}"
	fi
	cat >"$1" <<YML
version: 0.6.0
kind: app
app: {name: $(basename "$1" .yml), mode: $2}
workflow:
  features: {}
  graph:
    nodes:
    - id: s
      data: {type: start, title: S, variables: []}
$3
$last
    edges:
$4
YML
}

TT_A="    - id: A
      data: {type: template-transform, title: A, template: a, variables: []}"
TT_B="    - id: B
      data: {type: template-transform, title: B, template: b, variables: []}"

graph_yml "$T_DIR/cycle.yml" workflow "$TT_A
$TT_B" "    - {id: x1, source: s, target: A}
    - {id: x2, source: A, target: B}
    - {id: back, source: B, target: A}
    - {id: x3, source: B, target: e}"
graph_yml "$T_DIR/selfloop.yml" workflow "$TT_A" \
"    - {id: x1, source: s, target: A}
    - {id: again, source: A, target: A}
    - {id: x2, source: A, target: e}"
graph_yml "$T_DIR/missing.yml" workflow "$TT_A" \
"    - {id: x1, source: s, target: A}
    - {id: dangling, source: A, target: ghost}
    - {id: x2, source: A, target: e}"
graph_yml "$T_DIR/dupids.yml" workflow "$TT_A
    - id: A
      data: {type: template-transform, title: A2, template: z, variables: []}" \
"    - {id: x1, source: s, target: A}
    - {id: x2, source: A, target: e}"
graph_yml "$T_DIR/chatcycle.yml" advanced-chat "$TT_A
$TT_B" "    - {id: x1, source: s, target: A}
    - {id: x2, source: A, target: B}
    - {id: back, source: B, target: A}
    - {id: x3, source: B, target: e}"

# check_graph <name> <what the warning and the error must say>
check_graph() {
	local f="$T_DIR/$1.yml" want=$2 run
	import_file "$f"
	is "$STATUS $(jqr .status) $(jqr '.app_id | length')" \
	    "200 completed 36" "$1: imports as a draft"
	has "$(jqr '[.warnings[].message] | join("; ")')" "$want" \
	    "$1: the import answer warns: $want"
	app_key

	# service API, blocking: a failed run at once, nothing ran
	svc POST /v1/workflows/run -H "$J" \
	    -d '{"inputs":{},"user":"u","response_mode":"blocking"}'
	is "$STATUS $(jqr .data.status) $(jqr .data.total_steps) $(jqr '.data.outputs | length')" \
	    "200 failed 0 0" "$1: a blocking run fails at once"
	has "$(jqr .data.error)" "cannot run" "$1: the error says it cannot run"
	has "$(jqr .data.error)" "$want" "$1: the error names the problem"
	run=$(jqr .workflow_run_id)
	svc GET "/v1/workflows/run/$run"
	is "$STATUS $(jqr .status)" "200 failed" "$1: the run is recorded failed"
	has "$(jqr .error)" "$want" "$1: the recorded run keeps the reason"

	# service API, streaming
	key_stream /v1/workflows/run '{"inputs":{},"user":"u","response_mode":"streaming"}' \
	    "$T_DIR/sse.txt"
	is "$(sse_data "$T_DIR/sse.txt" .event | tr '\n' ' ')" \
	    "workflow_started workflow_finished " \
	    "$1: streaming: no node starts"
	is "$(sse_data "$T_DIR/sse.txt" 'select(.event=="workflow_finished") | .data.status')" \
	    failed "$1: streaming: workflow_finished says failed"
	has "$(sse_data "$T_DIR/sse.txt" 'select(.event=="workflow_finished") | .data.error')" \
	    "$want" "$1: streaming: with the reason"

	# console draft run: refused before it begins, as publish refuses
	# the draft
	curl -sS -N -H "Authorization: Bearer $TOKEN" -H "$J" -d '{"inputs":{}}' \
	    -w '\n%{http_code}' \
	    "$BASE/console/api/apps/$APP/workflows/draft/run" >"$T_DIR/sse.txt"
	is "$(tail -n 1 "$T_DIR/sse.txt")" 400 "$1: draft run refused: 400"
	has "$(head -n 1 "$T_DIR/sse.txt" | jq -r .message)" \
	    "$want" "$1: draft run names the problem"
	is "$(sse_data "$T_DIR/sse.txt" 'select(.event=="node_started") | .event' | wc -l)" \
	    0 "$1: draft run starts no node"

	# the CLI
	FLOWCGI_SERVER_DATA_DIR=$T_DIR/cli "$FLOWCGI_BIN" run "$f" \
	    >"$T_DIR/cli.out" 2>"$T_DIR/cli.err"
	is "$?" 1 "$1: flowcgi run exits 1"
	has "$(cat "$T_DIR/cli.err")" "$want" "$1: flowcgi run names the problem"
	FLOWCGI_SERVER_DATA_DIR=$T_DIR/cli "$FLOWCGI_BIN" import "$f" \
	    >/dev/null 2>"$T_DIR/cli.err"
	has "$(cat "$T_DIR/cli.err")" "warning: " "$1: flowcgi import warns"
}

check_graph cycle "edges form a cycle: 'A' -> 'B' -> 'A'"
check_graph selfloop "edge 'again' leads node 'A' back to itself"
check_graph missing "edge 'dangling' ends at missing node 'ghost'"
check_graph dupids "node id 'A' is used"

# A chatflow: the stream ends with an error event carrying the reason.
import_file "$T_DIR/chatcycle.yml"
has "$(jqr '[.warnings[].message] | join("; ")')" "'A' -> 'B' -> 'A'" \
    "chatflow: the import warns of the cycle"
app_key
key_stream /v1/chat-messages '{"inputs":{},"query":"hi","user":"u","response_mode":"streaming"}' \
    "$T_DIR/sse.txt"
is "$(sse_data "$T_DIR/sse.txt" 'select(.event=="workflow_finished") | .data.status')" \
    failed "chatflow: streaming: workflow_finished says failed"
has "$(sse_data "$T_DIR/sse.txt" 'select(.event=="error") | .message')" \
    "'A' -> 'B' -> 'A'" "chatflow: the error event names the cycle"
is "$(sse_data "$T_DIR/sse.txt" 'select(.event=="node_started") | .event' | wc -l)" \
    0 "chatflow: no node starts"
svc POST /v1/chat-messages -H "$J" \
    -d '{"inputs":{},"query":"hi","user":"u","response_mode":"blocking"}'
is "$STATUS $(jqr .code)" "400 invalid_param" "chatflow: a blocking run fails"
has "$(jqr .message)" "'A' -> 'B' -> 'A'" "chatflow: blocking names the cycle"

# A sound graph still imports without warnings and runs.
graph_yml "$T_DIR/sound.yml" workflow "$TT_A" \
"    - {id: x1, source: s, target: A}
    - {id: x2, source: A, target: e}"
import_file "$T_DIR/sound.yml"
is "$(jqr '.warnings | length')" 0 "a sound graph has no warnings"
app_key
svc POST /v1/workflows/run -H "$J" -d '{"inputs":{},"user":"u"}'
is "$(jqr .data.status) $(jqr .data.outputs.o)" "succeeded a" \
    "a sound graph runs"

# ---- Failed imports: Dify's object, plus code and message ----

printf 'kind: app\napp: [1, 2\n' >"$T_DIR/broken.yml"
import_file "$T_DIR/broken.yml"
is "$STATUS $(jqr .status) $(jqr .code)" "400 failed import_failed" \
    "a broken yml: 400, status failed, code"
is "$(jqr '.message == .error and (.message | length) > 0')" true \
    "a broken yml: message is the error"
is "$(jqr '[has("id"), has("current_dsl_version"), has("imported_dsl_version"), has("app_id")] | all')" \
    true "a broken yml: Dify's import fields are kept"

printf 'this is not a zip file at all\n' >"$T_DIR/garbage.zip"
req POST "$A/imports-bundle" -H 'Content-Type: application/zip' \
    --data-binary @"$T_DIR/garbage.zip"
is "$STATUS $(jqr .status) $(jqr .code)" "400 failed import_failed" \
    "a garbage zip: 400, status failed, code"
has "$(jqr .message)" "not a zip bundle" "a garbage zip: a clear message"

# A file name that is not UTF-8 (found by fuzz_bundle; its seed): refused
# in words, in well-formed JSON, not stored as a name JSON cannot hold.
req POST "$A/imports-bundle" -H 'Content-Type: application/zip' \
    --data-binary @"$TOP/tests/fuzz/seeds/fuzz_bundle/name_not_utf8.zip"
is "$STATUS $(jqr .code)" "400 import_failed" "a name that is not UTF-8: 400"
has "$(jqr .message)" "a name that is not UTF-8" "... saying so"

# Every cut of a real bundle is refused in words (libarchive gives no
# message for some: that was "damaged zip: (null)").
python3 - "$T_DIR" <<'PY'
import sys, zipfile
d = sys.argv[1]
with zipfile.ZipFile(d + "/whole.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("app.yml", "app: {}\n")
    z.writestr("app/a.txt", "hello\n")
data = open(d + "/whole.zip", "rb").read()
for cut in range(30, 64):	# libarchive has no message for some cuts
    open("%s/cut%d.zip" % (d, cut), "wb").write(data[:cut])
PY
nulls=0; damaged=0; nocode=0
for cut in $(seq 30 63); do
	req POST "$A/imports-bundle" -H 'Content-Type: application/zip' \
	    --data-binary @"$T_DIR/cut$cut.zip"
	case "$(jqr .error) $(jqr .message)" in
	*"(null)"*|" "*|*" ") nulls=$((nulls + 1)); echo "# cut $cut: $BODY" ;;
	*"damaged zip"*) damaged=$((damaged + 1)) ;;
	esac
	[ "$STATUS $(jqr .code)" = "400 import_failed" ] || nocode=$((nocode + 1))
done
is "$nulls" 0 "no cut-short zip answers '(null)' or nothing"
is "$nocode" 0 "every cut-short zip answers 400 with code import_failed"
ok "$([ "$damaged" -gt 0 ] && echo 0 || echo 1)" \
    "cut-short zips are called damaged ($damaged of 34)"

# ---- A zip entry's setuid / setgid / sticky bits are dropped ----

python3 - "$T_DIR" <<'PY'
import sys, zipfile
d = sys.argv[1]
yml = """version: 0.6.0
kind: app
app: {name: modes, mode: workflow}
workflow:
  features: {sandbox: {enabled: true}}
  graph:
    nodes:
    - id: s
      data: {type: start, title: S, variables: []}
    - id: cmd
      data: {type: command, title: C, working_directory: '.', command: 'stat -c %a skills/tool.sh skills/bin/run'}
    - id: e
      data: {type: end, title: E, outputs: [{variable: o, value_selector: [cmd, stdout]}]}
    edges:
    - {id: x1, source: s, target: cmd}
    - {id: x2, source: cmd, target: e}
"""
with zipfile.ZipFile(d + "/modes.zip", "w") as z:
    z.writestr("modes.yml", yml)
    for name, mode in (("modes/tool.sh", 0o104755), ("modes/bin/", 0o43777),
                       ("modes/bin/run", 0o102755)):
        i = zipfile.ZipInfo(name)
        i.create_system = 3
        i.external_attr = mode << 16 | (0x10 if name.endswith("/") else 0)
        z.writestr(i, "" if name.endswith("/") else "#!/bin/sh\necho hi\n")
PY
req POST "$A/imports-bundle" -H 'Content-Type: application/zip' \
    --data-binary @"$T_DIR/modes.zip"
is "$STATUS $(jqr .status)" "200 completed" "a zip with setuid entries imports"
app_key
curl -sS -H "Authorization: Bearer $TOKEN" -o "$T_DIR/back.zip" \
    "$BASE$A/$APP/bundle"
is "$(python3 - "$T_DIR/back.zip" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
print(sum(1 for i in z.infolist() if (i.external_attr >> 16) & 0o7000))
PY
)" 0 "its export carries no setuid, setgid or sticky bit"
svc POST /v1/workflows/run -H "$J" -d '{"inputs":{},"user":"u"}'
is "$(jqr .data.status) $(jqr .data.outputs.o | xargs)" \
    "succeeded 644 644" "laid into the sandbox, the files are plain 0644"

# A conversation's saved workspace comes back without them too, even where
# the sandbox runs as root (the fake E2B runs commands as this user).
start_fake e2b E2B
jq -n --arg u "$E2B" '{config: {api_key: "e2b_0000000000000000000000000000000000000000",
    e2b_api_url: $u, e2b_envd_url: $u}}' >"$T_DIR/e2b.json"
req POST /console/api/workspaces/current/sandbox-provider/e2b/config -H "$J" \
    --data-binary @"$T_DIR/e2b.json"
req POST /console/api/workspaces/current/sandbox-provider/e2b/activate
is "$STATUS" 200 "e2b provider active"
cat >"$T_DIR/suidchat.yml" <<'YML'
version: 0.6.0
kind: app
app: {name: suidchat, mode: advanced-chat}
workflow:
  features: {sandbox: {enabled: true}}
  graph:
    nodes:
    - id: s
      data: {type: start, title: S, variables: []}
    - id: cmd
      data: {type: command, title: C, working_directory: '.', command: '[ -f keep ] || { echo x >keep; chmod 4755 keep; mkdir sticky; chmod 1777 sticky; }; stat -c %a keep sticky'}
    - id: e
      data: {type: answer, title: E, answer: '{{#cmd.stdout#}}'}
    edges:
    - {id: x1, source: s, target: cmd}
    - {id: x2, source: cmd, target: e}
YML
import_file "$T_DIR/suidchat.yml"
app_key
svc POST /v1/chat-messages -H "$J" \
    -d '{"inputs":{},"query":"one","user":"u","response_mode":"blocking"}'
is "$(jqr .answer | xargs)" "4755 1777" "turn 1 makes a setuid file and a sticky folder"
CONV=$(jqr .conversation_id)
svc POST /v1/chat-messages -H "$J" \
    -d "{\"inputs\":{},\"query\":\"two\",\"user\":\"u\",\"response_mode\":\"blocking\",\"conversation_id\":\"$CONV\"}"
is "$(jqr .answer | xargs)" "755 755" "turn 2: the restored workspace has no setuid or sticky bit"
