# lib.sh — shared by the end-to-end tests: free ports, a real nginx in front
# of the real flowcgi binary, TAP output, request helpers.
#
# Sourced by tests/e2e/t_*.sh with FLOWCGI_BIN set to the binary under test.

set -u
T_PASS=0
# A new chat conversation is named by the app's model after its first
# turn (conversation.auto_name): one more model call, which the tests
# that script the fake LLM turn by turn do not expect. The tests of the
# naming turn it on.
export FLOWCGI_CONVERSATION_AUTO_NAME=${FLOWCGI_CONVERSATION_AUTO_NAME:-false}
T_FAIL=0
T_SKIP=0
T_N=0
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/flowcgi-e2e.XXXXXX")
NGINX_PID=
FLOWCGI_PIDS=
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

ok() {	# ok <0|1 condition result> <description>; returns the result
	T_N=$((T_N + 1))
	if [ "$1" = 0 ]; then
		T_PASS=$((T_PASS + 1)); echo "ok $T_N - $2"
	else
		T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - $2"; return 1
	fi
}

skip() {	# skip <why>: a check that cannot run here, counted as skipped
	T_N=$((T_N + 1)); T_SKIP=$((T_SKIP + 1)); echo "ok $T_N # SKIP $1"
}

# need <command>...: a test that cannot run without these tools (bwrap,
# node, npm) ends here, one counted skip "needs <command>: ..." when one is
# missing; tests/run-all.sh says the missing ones once in its closing
# line. The one rule for a missing tool, as tests/unit/tap.h's NEED.
need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 && continue
		skip "needs $c: not installed (contrib/install-deps.sh)"
		exit 0
	done
}

is() {	# is <got> <want> <description>
	if [ "$1" = "$2" ]; then ok 0 "$3"; else
		ok 1 "$3"; echo "#   got:  '$1'"; echo "#   want: '$2'"; return 1; fi
}

free_port() {
	python3 - 2>/dev/null <<'PY' || shuf -i 20000-60000 -n 1
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])
PY
}

wait_port() {	# wait_port <port>: up to 10 s
	i=0
	while ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 200 ] && return 1; sleep 0.05
	done
}

# wait_until <seconds> <command...>: runs the command every 50 ms until it
# succeeds (0) or the seconds are over (1): a wait for a state, not a sleep
# that hopes the state came.
wait_until() {
	local end=$(( $(date +%s%N) / 1000000 + $1 * 1000 ))
	shift
	until "$@"; do
		[ $(( $(date +%s%N) / 1000000 )) -ge "$end" ] && return 1
		sleep 0.05
	done
}

# descendant <pid> <regex> [wchan]: 0 when a process under <pid> (at any
# depth, sandboxes too) runs a command line matching the extended regex
# (and, given a wchan, waits in that kernel function: hrtimer_nanosleep
# for a sleep); to wait for a state of a server's children (wait_until 10
# descendant ...) instead of a time.
descendant() {
	ps -eo pid=,ppid=,wchan:64=,args= | awk -v top="$1" -v re="$2" \
	    -v wc="${3:-}" '
	    { pp[$1] = $2; w[$1] = $3; a = $0
	      sub(/^ *[0-9]+ +[0-9]+ +[^ ]+ /, "", a); args[$1] = a }
	    END {
		for (p in pp) {
			if (args[p] !~ re || (wc != "" && w[p] != wc)) continue
			for (q = pp[p]; q != "" && q != 0 && q != 1; q = pp[q])
				if (q == top) exit 0
		}
		exit 1
	    }'
}

# FLOWCGI_TEST_BACKEND=postgres: every flowcgi the test starts stores in
# one private PostgreSQL database (tests/e2e/postgres.sh), started with the
# first of them and removed by finish. Without PostgreSQL that fails: the
# run asked for it.
pg_backend() {
	[ "${FLOWCGI_TEST_BACKEND:-lmdb}" = postgres ] || return 0
	[ -n "${FLOWCGI_STORAGE_POSTGRES_URL:-}" ] && return 0
	if ! pg_start; then
		echo "# FLOWCGI_TEST_BACKEND=postgres, but it did not start:"
		sed 's/^/# /' "$T_DIR/pg.out"
		return 1
	fi
	export FLOWCGI_STORAGE_BACKEND=postgres
	export FLOWCGI_STORAGE_POSTGRES_URL=$PG_URL
}
PG_TEST_DIR=

# pg_start [tls]: starts the test's private PostgreSQL server in $T_DIR/pg
# (tests/e2e/postgres.sh; its output in $T_DIR/pg.out), removed by finish;
# sets PGD, PGSH and PG_URL. Returns postgres.sh's status (77: there is
# no PostgreSQL here). With tls, loopback takes only TLS and a password.
pg_start() {
	PGD=$T_DIR/pg
	PGSH=$TOP/tests/e2e/postgres.sh
	sh "$PGSH" start "$PGD" ${1:-} >"$T_DIR/pg.out" 2>&1 || return
	PG_TEST_DIR=$PGD
	PG_URL=$(cat "$PGD/url")
}

# db_has <db> <key>: 0 when the test's store ($FC_DATA or $T_DIR/data, or
# the postgres database) has that key in that named database.
db_has() {
	"$FLOWCGI_BUILD/tools/store_poke" "${FC_DATA:-$T_DIR/data}" has "$1" "$2"
}

# pg_private [tls]: pg_start for a test that needs PostgreSQL whatever the
# run's backend; without PostgreSQL the test is one counted skip and ends
# here.
pg_private() {
	pg_start "$@"
	local rc=$?
	if [ "$rc" = 77 ]; then
		skip "no PostgreSQL: $(head -1 "$T_DIR/pg.out")"
		exit 0
	fi
	[ "$rc" = 0 ] || { ok 1 "the test's PostgreSQL started"
		sed 's/^/# /' "$T_DIR/pg.out"; exit 1; }
}

# db_count <db>: records in that named database of the test's store
# ($FC_DATA or $T_DIR/data, or the postgres database), "" when unreadable.
db_count() {
	if [ "${FLOWCGI_STORAGE_BACKEND:-lmdb}" = postgres ]; then
		"$FLOWCGI_BUILD/tools/store_poke" "${FC_DATA:-$T_DIR/data}" \
		    count "$1"
	else
		mdb_stat -s "$1" "${FC_DATA:-$T_DIR/data}" |
		    awk '/Entries:/ {print $2}'
	fi
}

# store_lacks <secret> <stored>: 0 when the bytes the test's store holds
# have <stored> (a plain value the test saved, which shows the read sees
# the store) and not <secret>. The bytes: every file of the data folder
# ($FC_DATA or $T_DIR/data), and on postgres every record as the
# database holds it (store_poke dump), where the data folder has none.
# Says on a "#" line which of the two failed.
store_lacks() {
	local d=${FC_DATA:-$T_DIR/data} f=$T_DIR/store.bytes
	: >"$f"
	if [ "${FLOWCGI_STORAGE_BACKEND:-lmdb}" = postgres ]; then
		"$FLOWCGI_BUILD/tools/store_poke" "$d" dump >"$f" 2>&1 ||
		    { echo "# store_poke dump failed: $(head -c 200 "$f")"
		    return 1; }
	fi
	if ! grep -aqF -- "$2" "$f" && ! grep -raqF -- "$2" "$d"; then
		echo "# the store read has no '$2': not the test's store"
		return 1
	fi
	if grep -aqF -- "$1" "$f" || grep -raqF -- "$1" "$d"; then
		echo "# the secret is in the store in clear"
		return 1
	fi
}

# start_flowcgi <name> [extra args]: starts a server on a free port with its
# data in $T_DIR/<data dir>; sets FC_PORT and FC_PID.
start_flowcgi() {
	name=$1; shift
	pg_backend || return 1
	FC_PORT=$(free_port)
	FLOWCGI_SERVER_DATA_DIR=${FC_DATA:-$T_DIR/data} \
	FLOWCGI_LOG_LEVEL=${FC_LOG_LEVEL:-info} \
	    "$FLOWCGI_BIN" serve --listen "127.0.0.1:$FC_PORT" "$@" \
	    >>"$T_DIR/$name.log" 2>&1 &
	FC_PID=$!
	FLOWCGI_PIDS="$FLOWCGI_PIDS $FC_PID"
	wait_port "$FC_PORT" || { echo "# flowcgi did not start:"; \
	    sed 's/^/# /' "$T_DIR/$name.log"; return 1; }
}

# start_flowcgi_unix <name> <socket path> [extra args]: like start_flowcgi,
# on a unix socket (server.socket_mode and the rest from the environment);
# sets FC_SOCK and FC_PID. Waits until the socket accepts.
start_flowcgi_unix() {
	name=$1; FC_SOCK=$2; shift 2
	pg_backend || return 1
	mkdir -p "$(dirname "$FC_SOCK")"
	FLOWCGI_SERVER_DATA_DIR=${FC_DATA:-$T_DIR/data} \
	FLOWCGI_LOG_LEVEL=${FC_LOG_LEVEL:-info} \
	    "$FLOWCGI_BIN" serve --listen "unix:$FC_SOCK" "$@" \
	    >>"$T_DIR/$name.log" 2>&1 &
	FC_PID=$!
	FLOWCGI_PIDS="$FLOWCGI_PIDS $FC_PID"
	wait_until 10 grep -q "listening on unix:$FC_SOCK" "$T_DIR/$name.log" ||
	    { echo "# flowcgi did not start:"; \
	    sed 's/^/# /' "$T_DIR/$name.log"; return 1; }
}

# nginx_start <workers> <connections> <locations> <upstream...>: nginx
# (prefix $T_DIR/nginx) on a free port (NG_PORT) passing the given
# space-separated locations to the upstreams; sets NGINX_PID and BASE.
# NGINX_HTTP_EXTRA: more directives for its http block.
nginx_start() {
	local workers=$1 conns=$2 locs=$3 u l ups="" blocks="" keep=""
	shift 3
	NG_PORT=$(free_port)
	mkdir -p "$T_DIR/nginx/tmp"
	cp /etc/nginx/fastcgi_params "$T_DIR/nginx/"
	cp "$TOP/contrib/nginx/flowcgi_params" "$T_DIR/nginx/"
	for u in "$@"; do ups="$ups server $u;"; done
	# Kept-alive connections to flowcgi as contrib/nginx sets them up;
	# NGINX_KEEPALIVE=0 for a responder that cannot take them.
	if [ "${NGINX_KEEPALIVE:-1}" != 0 ]; then
		ups="$ups keepalive 32; keepalive_timeout 20s;"
		keep="fastcgi_keep_conn on;"
	fi
	# NGINX_LOCATION_EXTRA: more directives for each location, such as
	# "fastcgi_bind 127.0.0.2;"
	for l in $locs; do
		blocks="$blocks location $l { include flowcgi_params; fastcgi_pass flowcgi; ${keep:-} ${NGINX_LOCATION_EXTRA:-} }"
	done
	cat >"$T_DIR/nginx/nginx.conf" <<NGX
worker_processes $workers;
daemon off;
pid $T_DIR/nginx/nginx.pid;
error_log $T_DIR/nginx/error.log warn;
$( [ "$(id -u)" = 0 ] && echo "user root;" )
events { worker_connections $conns; }
http {
	access_log off;
	client_body_temp_path $T_DIR/nginx/tmp/body;
	fastcgi_temp_path $T_DIR/nginx/tmp/fastcgi;
	proxy_temp_path $T_DIR/nginx/tmp/proxy;
	uwsgi_temp_path $T_DIR/nginx/tmp/uwsgi;
	scgi_temp_path $T_DIR/nginx/tmp/scgi;
	${NGINX_HTTP_EXTRA:-}
	upstream flowcgi { $ups }
	server {
		listen 127.0.0.1:$NG_PORT;
		$blocks
	}
}
NGX
	nginx -p "$T_DIR/nginx" -c "$T_DIR/nginx/nginx.conf" \
	    >>"$T_DIR/nginx/stdout.log" 2>&1 &
	NGINX_PID=$!
	wait_port "$NG_PORT" || { echo "# nginx did not start:"; \
	    sed 's/^/# /' "$T_DIR/nginx/error.log"; return 1; }
	BASE="http://127.0.0.1:$NG_PORT"
}

# start_nginx <upstream> [upstream...]: nginx on a free port (NG_PORT) in
# front of one or more flowcgi addresses; mounted at / and at /flow/.
start_nginx() {
	nginx_start 2 2048 "/ /flow/" "$@"
}

# start_nginx_at <locations> <upstream> [upstream...]: like start_nginx, but
# passes to flowcgi only under the given space-separated nginx locations
# (e.g. "/tools/flowcgi/ /admin-panel/"); anything else is nginx's own 404.
start_nginx_at() {
	local locs=$1
	shift
	nginx_start 1 512 "$locs" "$@"
}

# start_fake <name> <var>: starts tests/fakes/fake_<name>.py (finish()
# stops it; its pid is also in $T_DIR/<name>.pid), waits up to 5 s for the
# port it prints and sets <var> to its URL, http://127.0.0.1:<port>.
start_fake() {
	local i=0
	python3 "$TOP/tests/fakes/fake_$1.py" >"$T_DIR/$1.port" \
	    2>"$T_DIR/$1.log" &
	FLOWCGI_PIDS="$FLOWCGI_PIDS $!"
	echo $! >"$T_DIR/$1.pid"
	while [ ! -s "$T_DIR/$1.port" ]; do
		i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.05
	done
	printf -v "$2" 'http://127.0.0.1:%s' "$(head -1 "$T_DIR/$1.port")"
	[ -s "$T_DIR/$1.port" ] || { echo "# fake_$1 did not start:"; \
	    sed 's/^/# /' "$T_DIR/$1.log"; return 1; }
}

# import_file <yml file>: imports a DSL file through the console API; sets
# STATUS and BODY (see req).
import_file() {
	jq -n --rawfile y "$1" '{mode: "yaml-content", yaml_content: $y}' \
	    >"$T_DIR/imp.json"
	req POST /console/api/apps/imports -H 'Content-Type: application/json' \
	    --data-binary @"$T_DIR/imp.json"
}

# import_app <yml file>: imports a DSL file and makes the app an API key;
# sets APP and KEY.
import_app() {
	import_file "$1"
	APP=$(jqr .app_id)
	req POST "/console/api/apps/$APP/api-keys"
	KEY=$(jqr .token)
}

# llm_script <json|@file>: scripts the fake LLM started with
# "start_fake llm LLM" (its next answers; see tests/fakes/fake_llm.py).
llm_script() {
	curl -s -X POST -H 'Content-Type: application/json' --data-binary "$1" \
	    "$LLM/_script" >/dev/null
}

admin_token() {
	FLOWCGI_SERVER_DATA_DIR=${FC_DATA:-$T_DIR/data} "$FLOWCGI_BIN" token
}

# start_front [flowcgi args]: the start most tests share: a flowcgi "fc",
# nginx in front; sets TOKEN (the admin token), J (the JSON content type)
# and A (the console's apps path). Fails when flowcgi or nginx does not.
start_front() {
	start_flowcgi fc "$@" || return 1
	start_nginx "127.0.0.1:$FC_PORT" || return 1
	TOKEN=$(admin_token)
	J='Content-Type: application/json'
	A=/console/api/apps
}

# start_llm_front [flowcgi args]: start_front with the fake LLM (LLM) as
# flowcgi's model provider.
start_llm_front() {
	start_fake llm LLM
	FLOWCGI_LLM_BASE_URL=$LLM/v1 start_front "$@"
}

# req <method> <path> [curl args...]: sets STATUS and BODY (and HDRS).
req() {
	m=$1; p=$2; shift 2
	BODY=$(curl -sS -X "$m" -o - -D "$T_DIR/hdrs" -w '\n%{http_code}' \
	    -H "Authorization: Bearer $TOKEN" "$@" "$BASE$p" 2>"$T_DIR/curl.err")
	STATUS=${BODY##*
}
	BODY=${BODY%
*}
	HDRS=$(tr -d '\r' <"$T_DIR/hdrs")
}

jqr() { printf '%s' "$BODY" | jq -r "$1" 2>/dev/null; }

# key_stream <path> <json body> <file>: a streaming request with the app
# key $KEY; the raw server-sent events go to <file>.
key_stream() {
	curl -sS -N -H "Authorization: Bearer $KEY" \
	    -H 'Content-Type: application/json' -d "$2" "$BASE$1" >"$3"
}

# svc <key> <method> <path> [curl args...]: req with an app key (or any
# other bearer token) instead of the admin token.
svc() {
	local k=$1
	shift
	TOKEN=$k req "$@"
}

# sse_first <file> <jq filter>: waits up to 10 s for the first server-sent
# event written to <file> and prints the filter of it (.task_id).
sse_first() {
	local i=0
	# a data line can be in the file before its end is (curl writes what
	# it gets): wait for one that parses whole
	local line=
	while :; do
		line=$(sed -n 's/^data: //p' "$1" 2>/dev/null | head -1)
		[ -n "$line" ] && printf '%s' "$line" | jq -e . >/dev/null 2>&1 &&
		    break
		i=$((i + 1)); [ $i -gt 200 ] && break; sleep 0.05
	done
	printf '%s' "$line" | jq -r "$2"
}

finish() {
	[ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null
	for p in $FLOWCGI_PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$PG_TEST_DIR" ] && sh "$TOP/tests/e2e/postgres.sh" stop \
	    "$PG_TEST_DIR"
	if [ "$T_N" -eq 0 ]; then	# it showed nothing
		T_N=1; T_FAIL=1; echo "not ok 1 - the test ran no check"
	fi
	echo "1..$T_N"
	echo "# $T_PASS passed, $T_FAIL failed, $T_SKIP skipped"
	if [ "$T_FAIL" -eq 0 ] && [ -z "${KEEP:-}" ]; then rm -rf "$T_DIR"; \
	else echo "# logs in $T_DIR"; fi
	[ "$T_FAIL" -eq 0 ]
}
# A script that stops early (exit 1) fails even when its checks passed.
trap 'rc=$?; finish; f=$?; [ "$rc" -ne 0 ] && exit "$rc"; exit "$f"' EXIT
trap 'exit 1' INT TERM

# stop_nginx: stops the nginx started last and waits for it.
stop_nginx() {
	[ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null &&
	    wait "$NGINX_PID" 2>/dev/null
	NGINX_PID=
}

# start_sshd <user> <uid> <password>: a real sshd on a free loopback port
# (SSH_PORT) with its own host key; the password user exists only in sshd's
# private mount namespace, its home is $SSHD_DIR/home. Needs root, sshd and
# unshare.
start_sshd() {
	SSHD_DIR="$T_DIR/sshd"; mkdir -p "$SSHD_DIR" /run/sshd
	chmod 755 "$T_DIR" "$SSHD_DIR"
	SSH_PORT=$(free_port)
	ssh-keygen -q -t ed25519 -N '' -f "$SSHD_DIR/hostkey" || return 1
	mkdir "$SSHD_DIR/home"; chown "$2:$2" "$SSHD_DIR/home"
	cp /etc/passwd "$SSHD_DIR/passwd"; cp /etc/shadow "$SSHD_DIR/shadow"
	echo "$1:x:$2:$2::$SSHD_DIR/home:/bin/sh" >>"$SSHD_DIR/passwd"
	echo "$1:$(openssl passwd -6 "$3"):19000:0:99999:7:::" \
	    >>"$SSHD_DIR/shadow"
	printf '%s\n' "Port $SSH_PORT" 'ListenAddress 127.0.0.1' \
	    "HostKey $SSHD_DIR/hostkey" 'PidFile none' 'UsePAM no' \
	    'PasswordAuthentication yes' 'KbdInteractiveAuthentication no' \
	    'PermitRootLogin no' "AllowUsers $1" 'LogLevel VERBOSE' \
	    >"$SSHD_DIR/sshd_config"
	unshare -m --propagation private sh -c "mount --bind \
	    $SSHD_DIR/passwd /etc/passwd && mount --bind $SSHD_DIR/shadow \
	    /etc/shadow && exec /usr/sbin/sshd -D -e \
	    -f $SSHD_DIR/sshd_config" 2>"$SSHD_DIR/sshd.log" &
	FLOWCGI_PIDS="$FLOWCGI_PIDS $!"
	wait_port "$SSH_PORT"
}

# stop_control_masters: closes the ControlMasters flowcgi's ssh provider
# left running (ControlPersist) so that they go with the test.
stop_control_masters() {
	local c
	for c in "$T_DIR"/data/sandboxes/.ssh/cm-*; do
		[ -S "$c" ] && ssh -F none -o ControlPath="$c" -O exit x \
		    >/dev/null 2>&1
	done
	return 0
}

# report_app: imports tests/e2e/apps/sandboxed.yml (a sandboxed chatflow)
# with a "report" skill in its file system, makes it an API key and
# uploads a data file. Sets APP, KEY and UP (the upload's id).
report_app() {
	local sk
	import_app "$TOP/tests/e2e/apps/sandboxed.yml"
	req POST "/console/api/apps/$APP/assets/folders" \
	    -H 'Content-Type: application/json' -d '{"name":"report"}'
	sk=$(jqr .id)
	printf -- '---\nname: report\ndescription: How to write the weekly report\n---\nWrite one line: done.\n' \
	    >"$T_DIR/SKILL.md"
	req POST "/console/api/apps/$APP/assets/files" \
	    -F "file=@$T_DIR/SKILL.md" -F "parent_id=$sk"
	printf 'numbers 1 2 3\n' >"$T_DIR/data.txt"
	UP=$(curl -s -H "Authorization: Bearer $KEY" \
	    -F "file=@$T_DIR/data.txt" -F user=u "$BASE/v1/files/upload" |
	    jq -r .id)
}

# report_script <tag> [command]: scripts the fake LLM for report_ask: read
# the skill, write done-<tag> to output/report.txt, print data.txt, the uid
# and the working folder (then run command, JSON-escaped), and answer
# "Report written."
report_script() {
	llm_script '{"responses": [
	  {"match": "Write the report", "tool_calls": [{"id": "a", "name": "bash", "arguments": {"bash": "cat skills/report/SKILL.md"}}]},
	  {"tool_calls": [{"id": "b", "name": "bash", "arguments": {"bash": "mkdir -p output && echo done-'"$1"' > output/report.txt && cat data.txt && id -u && pwd'"${2:+ && $2}"'"}}]},
	  {"text": "Report written."}]}'
}

# report_ask <file>: asks report_app's chatflow "go" with the upload as its
# data input, streaming; the events' JSON, one a line, go to <file>.
report_ask() {
	key_stream /v1/chat-messages "{\"inputs\":{\"data\":{\"type\":\"document\",\"transfer_method\":\"local_file\",\"upload_file_id\":\"$UP\"}},\"query\":\"go\",\"user\":\"u\",\"response_mode\":\"streaming\"}" \
	    "$1.sse"
	sed -n 's/^data: //p' "$1.sse" >"$1"
}
