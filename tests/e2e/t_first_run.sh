#!/bin/bash
# t_first_run.sh — a new user's first run. The repository (the committed
# HEAD of this checkout) is cloned with git into a private directory (0700,
# like /root or a home on Debian 12) with nothing beside it. There:
#   - `make run` (its run-only half: the deps half, contrib/install-deps.sh,
#     may install packages and is left out) serves flowcgi behind nginx;
#   - the README's quick start runs as written against it;
#   - a real Dify export of 100 KB imports through nginx the README's way
#     (a request body past nginx's memory buffer, kept in var/nginx/tmp):
#     a JSON answer, not nginx's HTML 500;
#   - Ctrl-C stops flowcgi and nginx;
#   - the corpus tests, run from the clone without ../shared/dsl-corpus,
#     pass with the corpus counted as skipped.
# The binary under test stands in for the clone's build (make -o); with
# FLOWCGI_FIRST_RUN_BUILD=1 the clone builds its own. A missing git is a
# counted skip.
. "$(dirname "$0")/lib.sh"

BIG=tests/e2e/apps/dify/svcvit__Deep_Researcher_On_Dify.yml
MPID=

# stop_run: the process group of `make run`, as Ctrl-C in its terminal;
# waits up to 10 s for make to end. Returns 0 when it did.
stop_run() {
	local i
	[ -n "$MPID" ] || return 0
	kill -INT -- "-$MPID" 2>/dev/null
	for i in $(seq 200); do
		kill -0 "$MPID" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$MPID" 2>/dev/null; then
		kill -KILL -- "-$MPID" 2>/dev/null
		wait "$MPID" 2>/dev/null
		MPID=
		return 1
	fi
	wait "$MPID" 2>/dev/null
	MPID=
}
trap 'rc=$?; stop_run; finish; f=$?; [ "$rc" -ne 0 ] && exit "$rc"; exit "$f"' EXIT

if ! command -v git >/dev/null 2>&1; then
	skip "git is not installed"
	exit 0
fi
if ! git -C "$TOP" rev-parse --verify -q HEAD >/dev/null; then
	skip "$TOP is not a git checkout with a commit"
	exit 0
fi

# ====== The clone, in a private directory ======

HOME_DIR=$T_DIR/home
mkdir -m 0700 "$HOME_DIR"
git clone -q "$TOP" "$HOME_DIR/flowcgi" 2>"$T_DIR/clone.err"
ok $? "git clone into a private directory" ||
    sed 's/^/# /' "$T_DIR/clone.err"
C=$HOME_DIR/flowcgi
is "$(stat -c %a "$HOME_DIR") $(ls -A "$HOME_DIR")" "700 flowcgi" \
    "the clone is alone in a 0700 directory (no ../shared beside it)"
is "$(git -C "$C" rev-parse HEAD)" "$(git -C "$TOP" rev-parse HEAD)" \
    "the clone is this checkout's HEAD"

B=${FLOWCGI_BUILD:-$(dirname "$FLOWCGI_BIN")}
mkdir -p "$C/build/release"
MAKE_ARGS=
if [ -z "${FLOWCGI_FIRST_RUN_BUILD:-}" ]; then
	install -m 0755 "$FLOWCGI_BIN" "$C/build/release/flowcgi"
	MAKE_ARGS="-o build/release/flowcgi"
fi

# ====== make run ======

PORT=$(free_port)
set -m		# its own process group, SIGINT not ignored: a terminal's job
(cd "$C" && FLOWCGI_RUN_PORT=$PORT exec make --no-print-directory \
    $MAKE_ARGS run-only) >"$T_DIR/run.log" 2>&1 &
MPID=$!
set +m
for i in $(seq 6000); do	# a build in the clone takes minutes
	grep -q 'flowcgi is running at' "$T_DIR/run.log" && break
	kill -0 "$MPID" 2>/dev/null || break
	sleep 0.05
done
grep -q "flowcgi is running at  http://127.0.0.1:$PORT/" "$T_DIR/run.log"
if ! ok $? "make run serves on the port asked for"; then
	sed 's/^/# /' "$T_DIR/run.log" | tail -30
	[ -f "$C/var/nginx/error.log" ] && sed 's/^/# /' "$C/var/nginx/error.log"
	exit 1
fi
is "$(stat -c %a "$C/var")" 700 "var/ is private (0700)"
is "$(stat -c '%F %a' "$C/var/flowcgi.sock" 2>/dev/null)" "socket 660" \
    "nginx reaches flowcgi on a unix socket in var/ (mode 0660)"
grep -q 'server unix:' "$C/var/nginx/nginx.conf"
ok $? "... and on no TCP port"

# ====== The README's quick start, as written ======

block=$(sed -n '/<!-- quickstart -->/,/<!-- \/quickstart -->/p' "$C/README.md" |
    sed '1,2d;$d' | sed '$d')
[ -n "$block" ]
ok $? "the clone's README has a quick start block"
printf '%s\n' "$block" | sed "s|http://127.0.0.1:8080|http://127.0.0.1:$PORT|" \
    >"$T_DIR/quickstart.sh"
(cd "$C" && bash -e "$T_DIR/quickstart.sh") >"$T_DIR/out.txt" 2>"$T_DIR/err.txt"
ok $? "the quick start runs without an error" ||
    sed 's/^/# /' "$T_DIR/err.txt" | head -20
grep -q '"greeting": "Good day, Ada. It is a pleasure to meet you."' "$T_DIR/out.txt"
ok $? "the blocking run answers"
sed -n 's/^data: //p' "$T_DIR/out.txt" | jq -r .event >"$T_DIR/events"
is "$(head -1 "$T_DIR/events") $(tail -1 "$T_DIR/events")" \
    "workflow_started workflow_finished" "the streaming run streams"

# ====== A large real export, imported the README's way ======

TOKEN=$(cd "$C" && FLOWCGI_SERVER_DATA_DIR=var build/release/flowcgi token)
jq -n --rawfile y "$C/$BIG" '{mode: "yaml-content", yaml_content: $y}' \
    >"$T_DIR/big.json"
size=$(wc -c <"$T_DIR/big.json")
[ "$size" -gt 65536 ]
ok $? "the request body is over 64 KB ($size bytes)"
curl -sS -o "$T_DIR/big.out" -D "$T_DIR/big.hdrs" -w '%{http_code}' \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    --data-binary @"$T_DIR/big.json" \
    "http://127.0.0.1:$PORT/console/api/apps/imports" >"$T_DIR/big.code"
grep -qi '^content-type: application/json' "$T_DIR/big.hdrs"
ok $? "the answer is JSON (not nginx's HTML error page)" ||
    head -c 400 "$T_DIR/big.out" | sed 's/^/# /'
is "$(cat "$T_DIR/big.code") $(jq -r '.status + " " + .app_mode' "$T_DIR/big.out")" \
    "200 completed-with-warnings advanced-chat" "the 100 KB export imports"
APP=$(jq -r .app_id "$T_DIR/big.out")
curl -sS -H "Authorization: Bearer $TOKEN" \
    "http://127.0.0.1:$PORT/console/api/apps/$APP/export" >"$T_DIR/export.json"
is "$(jq -r '.data | length > 65536' "$T_DIR/export.json")" true \
    "... and exports back whole"
grep -q 'client request body is buffered to a temporary file' \
    "$C/var/nginx/error.log"
ok $? "nginx kept the body in var/nginx/tmp, inside the private directory"
! grep -q 'Permission denied' "$C/var/nginx/error.log"
ok $? "nginx's log has no permission error" ||
    grep 'Permission denied' "$C/var/nginx/error.log" | sed 's/^/# /'

# ====== Ctrl-C ======

group=$(pgrep -g "$MPID" | wc -l)
[ "$group" -ge 4 ]
ok $? "make, the script, flowcgi and nginx run ($group processes)"
pg=$MPID
stop_run
ok $? "Ctrl-C ends make run"
grep -q '^flowcgi: stopped' "$T_DIR/run.log"
ok $? "... saying flowcgi stopped"
is "$(pgrep -g "$pg" | wc -l)" 0 "... and nothing of it keeps running"

# ====== The corpus tests in the clone, without ../shared ======

ln -s "$B/tests" "$C/build/release/tests"
(cd "$C" && TESTS="t_engine_dsl_corpus t_engine_upgrade t_engine_corpus_run" \
    sh tests/run-all.sh build/release) >"$T_DIR/check.txt" 2>&1
ok $? "the corpus tests pass in the clone" || sed 's/^/# /' "$T_DIR/check.txt"
last=$(tail -1 "$T_DIR/check.txt")
case "$last" in
[1-9]*" passed, 0 failed, 3 skipped") r=0 ;;
*) r=1 ;;
esac
ok $r "... the corpus counted as skipped in the closing line: $last"
