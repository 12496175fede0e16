#!/bin/bash
# t_sandboxed_draft.sh — draft test runs keep a sandbox workspace per
# console user until it is reset, as Dify's draft sandboxes do, through
# nginx with the local (bubblewrap) provider and the fake LLM: a second
# draft run by the same user finds the file the first one wrote, another
# user's does not, reset empties it; Dify's workspace routes
# (GET .../sandbox/files, POST/GET .../sandbox/files/download) list and
# return the file, and another app's or user's workspace is 404.
. "$(dirname "$0")/lib.sh"
need bwrap	# the local sandbox provider

start_llm_front || exit 1
import_app "$TOP/tests/e2e/apps/sandboxed_draft.yml"
OTHER_APP=$APP
import_app "$TOP/tests/e2e/apps/sandboxed_draft.yml"

# draft_run <body> <out file>: a draft test run, streamed; prints its status
draft_run() {
	curl -sS -N -H "Authorization: Bearer $TOKEN" -H "$J" -d "$1" \
	    "$BASE$A/$APP/workflows/draft/run" >"$2"
	sed -n 's/^data: //p' "$2" |
	    jq -r 'select(.event=="workflow_finished") | .data.status'
}
# seen: what the model was told the last command printed
seen() { curl -s "$LLM/_requests" | jq -r '.[-1].body.messages[-1].content'; }
bash_call() {	# bash_call <command>: one command, then an answer
	jq -n --arg c "$1" '{responses: [{tool_calls: [{id: "a", name: "bash",
	    arguments: {bash: $c}}]}, {text: "Done."}]}' >"$T_DIR/script.json"
	llm_script @"$T_DIR/script.json"
}

bash_call 'mkdir -p out && printf hello > out/note.txt && printf "\211PNG\r\n\032\n" > out/pic.png && echo written'
is "$(draft_run '{"inputs":{}}' "$T_DIR/r1.txt")" succeeded "first draft run"
is "$(seen)" written "the first run wrote out/note.txt"
is "$(sed -n 's/^data: //p' "$T_DIR/r1.txt" | jq -r 'select(.event=="agent_log" and .data.status=="start") | .data.data.tool_input' | head -1 | cut -c1-9)" \
    "mkdir -p " "the command is in agent_log"

bash_call 'cat out/note.txt'
is "$(draft_run '{"inputs":{}}' "$T_DIR/r2.txt")" succeeded "second draft run"
is "$(seen)" hello "the same user's next draft run finds the file"

bash_call 'cat out/note.txt 2>&1 || echo missing'
is "$(draft_run '{"inputs":{},"user":"bob"}' "$T_DIR/r3.txt")" succeeded \
    "a draft run by another user"
case "$(seen)" in
*missing) ok 0 "another user's draft run does not see it";;
*) ok 1 "another user's draft run does not see it"; echo "# $(seen)";;
esac

# The workspace routes, as Dify shapes them.
req GET "$A/$APP/sandbox/files"
is "$STATUS" 200 "files: 200"
is "$(jqr '[.[] | .path] | join(" ")')" out "one level: the out folder"
is "$(jqr '.[0].is_dir')" true "a folder is is_dir"
req GET "$A/$APP/sandbox/files?recursive=true"
is "$(jqr '[.[] | .path] | join(" ")')" "out out/note.txt out/pic.png" \
    "recursive: every entry, sorted by path"
is "$(jqr '.[] | select(.path=="out/note.txt") | [.size, .extension, .is_dir] | map(tostring) | join(" ")')" \
    "5 .txt false" "a file's size and extension"
is "$(jqr '.[] | select(.path=="out/note.txt") | .mtime | type')" number "and its mtime"
req GET "$A/$APP/sandbox/files?path=out"
is "$(jqr '[.[] | .path] | join(" ")')" "out/note.txt out/pic.png" "a folder's entries"
req GET "$A/$APP/sandbox/files/download?path=out/note.txt"
is "$STATUS $BODY" "200 hello" "download: the file's bytes"
printf '%s' "$HDRS" | grep -qi '^content-disposition: attachment'
ok $? "as an attachment"
req GET "$A/$APP/sandbox/files/download?path=./out//pic.png"
printf '%s' "$HDRS" | grep -qi '^content-type: image/png'
ok $? "an image is served as one (the path cleaned)"
req POST "$A/$APP/sandbox/files/download" -H "$J" -d '{"path":"out/note.txt"}'
is "$STATUS" 200 "download ticket: 200"
is "$(jqr '[.expires_in > 0, (.export_id | length > 0)] | map(tostring) | join(" ")')" \
    "true true" "with expires_in and export_id"
# relative (server.public_url is not set), as flowcgi's links are
URL=$BASE$(jqr .download_url)
is "$(curl -sS -H "Authorization: Bearer $TOKEN" "$URL")" hello \
    "its download_url gives the file"
is "$(curl -s -o /dev/null -w '%{http_code}' "$URL")" 401 \
    "and needs the admin token"

# Paths stay in the workspace.
req GET "$A/$APP/sandbox/files?path=../etc"
is "$STATUS $(jqr .code)" "400 invalid_path" "a path with .. is 400"
req GET "$A/$APP/sandbox/files/download?path=/etc/passwd"
is "$STATUS $(jqr .code)" "400 invalid_path" "an absolute path is 400"
req GET "$A/$APP/sandbox/files/download?path=out/a/../../../x"
is "$STATUS $(jqr .code)" "400 invalid_path" ".. deeper in is 400 too"

# A folder downloads as a .tar.gz of it, as Dify's export does.
curl -sS -D "$T_DIR/dh" -H "Authorization: Bearer $TOKEN" \
    "$BASE$A/$APP/sandbox/files/download?path=out/" >"$T_DIR/out.tgz"
is "$(tar -tzf "$T_DIR/out.tgz" | sort | tr '\n' ' ')" \
    "out/ out/note.txt out/pic.png " "a folder downloads as a .tar.gz of it"
grep -qi "^content-disposition: attachment; filename\*=UTF-8''out.tar.gz" "$T_DIR/dh"
ok $? "named out.tar.gz"
is "$(tar -xzOf "$T_DIR/out.tgz" out/note.txt)" hello "with the files' bytes"
req POST "$A/$APP/sandbox/files/download" -H "$J" -d '{"path":"."}'
curl -sS -H "Authorization: Bearer $TOKEN" "$BASE$(jqr .download_url)" \
    >"$T_DIR/all.tgz"
is "$(tar -tzf "$T_DIR/all.tgz" | sort | tr '\n' ' ')" \
    "./ ./out/ ./out/note.txt ./out/pic.png " "the root: the whole workspace"
req GET "$A/$APP/sandbox/files/download?path=out/none.txt"
is "$STATUS $(jqr .code)" "404 sandbox_file_not_found" "a missing file is 404"
req GET "$A/$APP/sandbox/files?recursive=maybe"
is "$STATUS" 400 "recursive must be a boolean"

# Isolation: another user's, another app's, an unknown app's workspace.
req GET "$A/$APP/sandbox/files?recursive=1&user=bob"
is "$(jqr '[.[] | .path] | join(" ")')" "" "bob's workspace is his own (empty)"
req GET "$A/$APP/sandbox/files/download?path=out/note.txt&user=bob"
is "$STATUS" 404 "bob cannot download the admin's file"
req GET "$A/$APP/sandbox/files?user=carol"
is "$STATUS" 404 "a user without a draft workspace: 404"
req GET "$A/$OTHER_APP/sandbox/files"
is "$STATUS" 404 "another app's workspace: 404"
req GET "$A/$OTHER_APP/sandbox/files/download?path=out/note.txt"
is "$STATUS" 404 "another app id cannot reach the file"
req GET "$A/00000000-0000-4000-8000-000000000000/sandbox/files"
is "$STATUS" 404 "an unknown app: 404"

# Reset: the next draft run starts empty.
req POST "$A/$APP/sandbox/reset" -H "$J" -d '{}'
is "$STATUS $(jqr .result) $(jqr .had_workspace)" "200 success true" "reset"
req GET "$A/$APP/sandbox/files"
is "$STATUS" 404 "after reset there is no workspace"
req GET "$A/$APP/sandbox/files?user=bob"
is "$STATUS" 200 "bob's is untouched"
# It also leaves a file of its own: blobs are content-addressed, and two
# empty workspaces saved in the same second are the same bytes (one blob),
# which the count at the end would take for a blob not freed.
bash_call 'cat out/note.txt 2>&1 || echo missing; printf mine > mine.txt'
is "$(draft_run '{"inputs":{}}' "$T_DIR/r4.txt")" succeeded "a draft run after reset"
case "$(seen)" in
*missing) ok 0 "reset emptied the workspace";;
*) ok 1 "reset emptied the workspace"; echo "# $(seen)";;
esac

# A service-API run keeps no draft workspace (it has no conversation).
bash_call 'echo x > svc.txt'
curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"user":"u","response_mode":"blocking"}' \
    "$BASE/v1/workflows/run" >"$T_DIR/svc.json"
is "$(jq -r .data.status "$T_DIR/svc.json")" succeeded "a service-API run"
req GET "$A/$APP/sandbox/files?user=u"
is "$STATUS" 404 "does not make a draft workspace for its end user"

# Deleting the app frees its draft workspaces' blobs.
before=$(db_count blobs)
req DELETE "$A/$APP"
is "$(db_count blobs)" "$((before - 2))" "deleting the app frees both draft workspaces"
