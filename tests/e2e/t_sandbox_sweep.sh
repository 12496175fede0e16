#!/bin/bash
# t_sandbox_sweep.sh — a flowcgi killed with SIGKILL in the middle of a
# code node leaves its local sandboxes (folders, owner files and, as root,
# tmpfs mounts) under sandbox.dir; the next flowcgi started on that
# sandbox.dir sweeps them away at start, saying so in its log, and leaves
# what is not a sandbox alone.
. "$(dirname "$0")/lib.sh"
need bwrap	# the local sandbox provider

J='Content-Type: application/json'
SB=$T_DIR/data/sandboxes

start_flowcgi fc1 || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
TOKEN=$(admin_token)
import_app "$TOP/tests/e2e/apps/slow.yml"
svc "$KEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"seconds":0},"user":"s","response_mode":"blocking"}'
is "$STATUS $(jqr .data.status)" "200 succeeded" "a code node runs"
# A run in a code node (and warm runners waiting) when the server dies:
# the python3 fork server running it and one more the pool keeps ready
# (code.pool_size 2), each a sandbox.
svc "$KEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"seconds":30},"user":"s","response_mode":"streaming"}' &
CURL=$!
wait_until 10 sh -c '[ "$(ls "$1" | wc -l)" -ge 2 ]' _ "$SB"
ok $? "a code node runs, a warm runner waits: two sandboxes"
mkdir "$SB/not-a-sandbox"
kill -9 "$FC_PID"
wait "$FC_PID" 2>/dev/null
kill "$CURL" 2>/dev/null
wait "$CURL" 2>/dev/null
stop_nginx
LEFT=$(ls "$SB" | grep -v '^not-a-sandbox$')
N=$(echo "$LEFT" | grep -c .)
ok $([ "$N" -ge 2 ]; echo $?) "SIGKILL left $N sandbox folders behind"
is "$(ls -A "$SB" | grep -c '^\..*\.lock$')" "$N" "... each with its owner file"
if [ "$(id -u)" = 0 ]; then
	is "$(grep -c " $SB/" /proc/self/mountinfo)" "$N" \
	    "... and its tmpfs mounted"
else
	skip "tmpfs mounts need root"
fi

start_flowcgi fc2 || exit 1
wait_until 20 grep -q "removed $N local sandbox(es) left by flowcgi" \
    "$T_DIR/fc2.log"
ok $? "the next server removes the $N sandboxes at start, and says so"
is "$(grep -c 'sandbox: swept .* which is gone' "$T_DIR/fc2.log")" "$N" \
    "... one line each"
gone=0
for d in $LEFT; do
	[ -e "$SB/$d" ] || [ -e "$SB/.$d.lock" ] || gone=$((gone + 1))
done
is "$gone" "$N" "... folders and owner files"
# (the new server's own warm runners mount sandboxes of their own there)
mounted=0
for d in $LEFT; do
	grep -q " $SB/$d " /proc/self/mountinfo && mounted=$((mounted + 1))
done
is "$mounted" 0 "... and mounts"
ok $([ -d "$SB/not-a-sandbox" ]; echo $?) "a folder that is no sandbox stays"
