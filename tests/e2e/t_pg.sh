#!/bin/bash
# t_pg.sh — two flowcgi hosts (separate data directories) on one PostgreSQL
# database (storage.backend: postgres), each behind its own nginx and both
# behind one nginx upstream: an app made on A is read on B; a run on A is
# read on B; a conversation alternating hosts keeps its history; If-Match
# holds across hosts, one at a time and with clients racing through the
# shared upstream (no update lost); PostgreSQL restarted mid-test: clean
# JSON 503s while it is away, then service resumes with nothing lost.
# The server is a private one (tests/e2e/postgres.sh); without PostgreSQL
# the test is one counted skip.
. "$(dirname "$0")/lib.sh"

PGD=$T_DIR/pg
PGSH=$TOP/tests/e2e/postgres.sh
sh "$PGSH" start "$PGD" >"$T_DIR/pg.out" 2>&1
rc=$?
if [ "$rc" = 77 ]; then
	skip "no PostgreSQL: $(head -1 "$T_DIR/pg.out")"
	exit 0
fi
[ "$rc" = 0 ] || { ok 1 "the test's PostgreSQL started"
	sed 's/^/# /' "$T_DIR/pg.out"; exit 1; }
# lib.sh's finish, and the server stopped and removed
trap 'rc=$?; sh "$PGSH" stop "$PGD"; finish; f=$?; [ "$rc" -ne 0 ] &&
    exit "$rc"; exit "$f"' EXIT

export FLOWCGI_STORAGE_BACKEND=postgres
export FLOWCGI_STORAGE_POSTGRES_URL="$(cat "$PGD/url")"
export FLOWCGI_STORAGE_POSTGRES_WAIT=3
J='Content-Type: application/json'
A=/console/api/apps

FC_DATA=$T_DIR/a start_flowcgi fcA || exit 1
PA=$FC_PORT
# What stays per host: its data directory. The hosts share the admin
# token (and would share secret.key) by copying it, as docs/scale-out.md
# says.
mkdir -p "$T_DIR/b"
cp "$T_DIR/a/admin_token" "$T_DIR/b/"
FC_DATA=$T_DIR/b start_flowcgi fcB || exit 1
PB=$FC_PORT
TOKEN=$(FC_DATA=$T_DIR/a admin_token)

# one nginx per host (to say where a request goes), one in front of both
start_nginx_at / "127.0.0.1:$PA" || exit 1
BASE_A=$BASE; FLOWCGI_PIDS="$FLOWCGI_PIDS $NGINX_PID"
start_nginx_at / "127.0.0.1:$PB" || exit 1
BASE_B=$BASE; FLOWCGI_PIDS="$FLOWCGI_PIDS $NGINX_PID"
start_nginx "127.0.0.1:$PA" "127.0.0.1:$PB" || exit 1
BASE_AB=$BASE

on() {	# on <A|B|AB> <req args...>: req through that nginx
	local h=$1
	shift
	case $h in A) BASE=$BASE_A ;; B) BASE=$BASE_B ;; AB) BASE=$BASE_AB ;; esac
	req "$@"
}

etag() { printf '%s\n' "$HDRS" | sed -n 's/^[Ee][Tt][Aa][Gg]: //p'; }

# ---- an app made on A is B's too ----
on A POST $A -H "$J" --data-binary '{"name":"Made on A","mode":"workflow"}'
is "$STATUS" 201 "create on A"
ID=$(jqr .id)
on B GET "$A/$ID"
is "$STATUS $(jqr .name)" "200 Made on A" "read on B"
on B GET "$A?page=1&limit=100"
is "$(jqr '[.data[].id] | index("'"$ID"'") != null')" true "listed on B"

# ---- a run on A is readable on B ----
FC_DATA=$T_DIR/a
BASE=$BASE_A
import_file "$TOP/tests/e2e/apps/dify/difytest__conditional_hello_branching_workflow.yml"
WF=$(jqr .app_id)
on B POST "$A/$WF/api-keys"
is "$STATUS" 201 "an API key made on B"
KEY=$(jqr .token)
BASE=$BASE_A
svc "$KEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"query":"hello"},"user":"u1","response_mode":"blocking"}'
is "$STATUS $(jqr .data.status)" "200 succeeded" "run on A with B's key"
RUN=$(jqr .workflow_run_id)
BASE=$BASE_B
svc "$KEY" GET "/v1/workflows/run/$RUN"
is "$STATUS $(jqr .status) $(jqr .inputs.query)" "200 succeeded hello" \
    "the run's record read on B"

# ---- a conversation alternating hosts keeps its history ----
BASE=$BASE_B
import_app "$TOP/tests/e2e/apps/echo_chat.yml"
KC=$KEY
chat() {	# chat <host> <query> [conversation]
	local h=$1 q=$2 c=${3:-}
	case $h in A) BASE=$BASE_A ;; B) BASE=$BASE_B ;; esac
	svc "$KC" POST /v1/chat-messages -H "$J" -d "{\"inputs\":{},\"query\":\"$q\",\"user\":\"u\",\"conversation_id\":\"$c\",\"response_mode\":\"blocking\"}"
}
chat A one
is "$STATUS $(jqr .answer)" "200 echo one" "message 1 on A"
CONV=$(jqr .conversation_id)
chat B two "$CONV"
is "$STATUS $(jqr .conversation_id)" "200 $CONV" "message 2 on B, same conversation"
chat A three "$CONV"
is "$STATUS $(jqr .conversation_id)" "200 $CONV" "message 3 on A"
BASE=$BASE_B
svc "$KC" GET "/v1/messages?conversation_id=$CONV&user=u"
is "$STATUS $(jqr '[.data[].query] | join(",")')" "200 one,two,three" \
    "B lists the three messages in order"

# ---- If-Match across hosts ----
on A GET "$A/$ID"
E=$(etag)
on B PUT "$A/$ID" -H "$J" -H "If-Match: $E" --data-binary '{"name":"B was first"}'
is "$STATUS" 200 "PUT on B with the current ETag"
on A PUT "$A/$ID" -H "$J" -H "If-Match: $E" --data-binary '{"name":"A lost"}'
is "$STATUS $(jqr .code)" "412 precondition_failed" \
    "PUT on A with the same, now stale, ETag: 412"
on A GET "$A/$ID"
is "$(jqr .name)" "B was first" "A's stale write changed nothing"

# Clients racing through the shared upstream: read-modify-write of one
# counter with If-Match, retried on 412; none may be lost.
on AB POST $A -H "$J" --data-binary '{"name":"counter","mode":"chat","description":"0"}'
CTR=$(jqr .id)
client() {	# client <n>: K increments; prints one line per problem
	local c=$1 i n e s tries
	for i in $(seq 1 "$K"); do
		tries=0
		while :; do
			tries=$((tries + 1))
			[ $tries -gt 100 ] && { echo "gave up"; break; }
			s=$(curl -sS -o "$T_DIR/r$c.body" -D "$T_DIR/r$c.h" \
			    -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
			    "$BASE_AB$A/$CTR")
			[ "$s" = 200 ] || { echo "get: $s"; continue; }
			n=$(jq -r .description "$T_DIR/r$c.body")
			e=$(tr -d '\r' <"$T_DIR/r$c.h" |
			    sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
			s=$(curl -sS -o /dev/null -w '%{http_code}' -X PUT \
			    -H "Authorization: Bearer $TOKEN" -H "$J" \
			    -H "If-Match: $e" --data-binary \
			    "{\"name\":\"counter\",\"description\":\"$((n + 1))\"}" \
			    "$BASE_AB$A/$CTR")
			[ "$s" = 200 ] && break
			[ "$s" = 412 ] && continue
			echo "put: $s"; break
		done
	done
}
K=15
cpids=""
for c in 1 2 3; do
	client $c >"$T_DIR/client$c.out" 2>&1 &
	cpids="$cpids $!"
done
for p in $cpids; do wait "$p"; done
is "$(cat "$T_DIR"/client*.out)" "" "three racing clients: no errors"
on AB GET "$A/$CTR"
is "$(jqr .description)" 45 "no update lost: 3 x 15 increments"

# ---- PostgreSQL restarted ----
sh "$PGSH" down "$PGD"
ok $? "PostgreSQL stopped"
on A GET "$A/$ID"
is "$STATUS $(jqr .code) $(jqr .status)" "503 storage_unavailable 503" \
    "a read while it is away: JSON 503"
printf '%s\n' "$HDRS" | grep -qi '^retry-after: 1'
ok $? "with Retry-After"
on B POST $A -H "$J" --data-binary '{"name":"while away","mode":"workflow"}'
is "$STATUS $(jqr .code)" "503 storage_unavailable" "a write while it is away: 503"
on B GET /healthz
is "$STATUS" 503 "healthz says so"
sh "$PGSH" up "$PGD"
ok $? "PostgreSQL started again"
on A GET "$A/$ID"
is "$STATUS $(jqr .name)" "200 B was first" "A serves again, data kept"
on B POST $A -H "$J" --data-binary '{"name":"after","mode":"workflow"}'
is "$STATUS" 201 "B writes again"
NEW=$(jqr .id)
on A GET "$A/$NEW"
is "$STATUS $(jqr .name)" "200 after" "and A reads it"
on A GET "$A?page=1&limit=100"
is "$(jqr '[.data[].name] | map(select(. == "while away")) | length')" 0 \
    "the write answered 503 left nothing"
on AB GET /healthz
is "$STATUS" 200 "healthy again"
