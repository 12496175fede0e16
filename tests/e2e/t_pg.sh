#!/bin/bash
# t_pg.sh — two flowcgi hosts (separate data directories) on one PostgreSQL
# database (storage.backend: postgres), each behind its own nginx and both
# behind one nginx upstream: an app made on A is read on B; a run on A is
# read on B; a conversation alternating hosts keeps its history; If-Match
# holds across hosts, one at a time and with clients racing through the
# shared upstream (no update lost); app.max_active_requests=2 holds across
# both hosts; a streaming run on A stopped through B ends "stopped", also
# when the stop comes before A stored the run (run.publish_after); an
# unknown task is still 404;
# PostgreSQL restarted mid-test: clean JSON 503s while it is away, then
# service resumes with nothing lost; A killed with -9 mid-run: B fails its
# run ("host lost") once A's lease ran out, and its app slot is free.
# The server is a private one (tests/e2e/postgres.sh); without PostgreSQL
# the test is one counted skip.
. "$(dirname "$0")/lib.sh"

pg_private
export FLOWCGI_STORAGE_BACKEND=postgres
export FLOWCGI_STORAGE_POSTGRES_URL="$PG_URL"
export FLOWCGI_STORAGE_POSTGRES_WAIT=3
export FLOWCGI_APP_MAX_ACTIVE_REQUESTS=2 FLOWCGI_RUN_HOST_LEASE=2
# A run is stored a second after its start, not 200 ms: long enough for a
# stop to reach the other host before it surely.
export FLOWCGI_RUN_PUBLISH_AFTER=1000
FLOWCGI_SECRET_KEY=$(openssl rand -base64 32)
export FLOWCGI_SECRET_KEY
J='Content-Type: application/json'
A=/console/api/apps

FC_DATA=$T_DIR/a start_flowcgi fcA || exit 1
PA=$FC_PORT PIDA=$FC_PID
# What stays per host: its data directory. The hosts share the admin
# token by copying it and the secrets key by configuration, as
# docs/scale-out.md says.
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

# ---- one secrets key: sealed on A, opened on B; another key refused ----
P=/console/api/workspaces/current/model-providers
on A POST $P/pgfake -H "$J" --data-binary \
    '{"base_url":"http://127.0.0.1:9/v1","api_key":"sk-pg-0123456789","models":["m"]}'
is "$STATUS $(jqr .api_key)" "200 [__HIDDEN__]" "a model key sealed on A"
on B POST $P/pgfake2 -H "$J" --data-binary \
    '{"base_url":"http://127.0.0.1:9/v1","api_key":"sk-pg-9876543210","models":["m"]}'
is "$STATUS" 200 "B seals one too: its key opens A's check"
mkdir -p "$T_DIR/c"
FLOWCGI_SERVER_DATA_DIR=$T_DIR/c FLOWCGI_SECRET_KEY=$(openssl rand -base64 32) \
    "$FLOWCGI_BIN" serve --listen "127.0.0.1:$(free_port)" >"$T_DIR/c.log" 2>&1 &
CP=$!
wait_until 10 sh -c "! kill -0 $CP 2>/dev/null"
ok $? "a host with another secrets key exits"
wait "$CP"
is "$?" 1 "... with status 1"
grep -q "is not the key the secrets in this database were sealed with" "$T_DIR/c.log"
ok $? "... saying its key is not the database's"
FLOWCGI_SERVER_DATA_DIR=$T_DIR/c FLOWCGI_SECRET_KEY= \
    "$FLOWCGI_BIN" serve --listen "127.0.0.1:$(free_port)" >"$T_DIR/c.log" 2>&1
is "$?" 1 "a host with no key at all (a fresh data directory) exits too"
grep -q "secret.key" "$T_DIR/c.log"
ok $? "... naming the key it lacks"

# ---- a run on A is readable on B ----
FC_DATA=$T_DIR/a
BASE=$BASE_A
import_file "$TOP/tests/e2e/apps/dify/difytest__conditional_hello_branching_workflow.yml"
WF=$(jqr .app_id)
on B POST "$A/$WF/api-keys"
is "$STATUS" 201 "an API key made on B"
KEY=$(jqr .token)
KW=$KEY
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

# ---- runs at once across hosts, stop across hosts ----
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
BASE=$BASE_A
import_app "$TOP/tests/e2e/apps/slow.yml"
KS=$KEY
base_of() { [ "$1" = B ] && echo "$BASE_B" || echo "$BASE_A"; }
slow() {	# slow <host> <user> <file> [s]: a 30 s streaming run, in the background
	local b
	b=$(base_of "$1")
	curl -sS -N -H "Authorization: Bearer $KS" -H "$J" \
	    -d "{\"inputs\":{\"seconds\":${4:-30}},\"user\":\"$2\",\"response_mode\":\"streaming\"}" \
	    "$b/v1/workflows/run" >"$3" &
}
stored_as() {	# stored_as <host> <run> <status>: the host reads that status
	local b
	b=$(base_of "$1")
	[ "$(curl -sS -H "Authorization: Bearer $KS" "$b/v1/workflows/run/$2" |
	    jq -r .status 2>/dev/null)" = "$3" ]
}
slow A s1 "$T_DIR/s1.txt"; C1=$!
slow B s2 "$T_DIR/s2.txt"; C2=$!
R1=$(sse_first "$T_DIR/s1.txt" .workflow_run_id)
R2=$(sse_first "$T_DIR/s2.txt" .workflow_run_id)
ok "$([ -n "$R1" ] && [ "$R1" != null ] && [ -n "$R2" ] && [ "$R2" != null ] && echo 0 || echo 1)" \
    "one slow run on A and one on B started"
for h in A B; do
	BASE=$(base_of $h)
	svc "$KS" POST /v1/workflows/run -H "$J" \
	    -d '{"inputs":{"seconds":1},"user":"s3","response_mode":"blocking"}'
	is "$STATUS $(jqr .code)" "429 too_many_requests" \
	    "a third run at once on $h: 429 (app.max_active_requests=2 across hosts)"
done
wait_until 10 stored_as B "$R1" running
ok $? "A's run is seen running on B"
T0=$(now_ms)
BASE=$BASE_B
svc "$KS" POST "/v1/workflows/tasks/$R1/stop" -H "$J" -d '{"user":"s1"}'
is "$STATUS $(jqr .result)" "200 success" "A's run stopped through B"
wait $C1
T1=$(now_ms)
is "$(sed -n 's/^data: //p' "$T_DIR/s1.txt" | jq -r 'select(.event=="workflow_finished") | .data.status')" \
    stopped "A's stream ends: stopped"
echo "# A's run ended $((T1 - T0)) ms after the stop was answered on B"
ok "$([ $((T1 - T0)) -lt 20000 ] && echo 0 || echo 1)" \
    "... before its 30 s node would have ended"
wait_until 10 stored_as B "$R1" stopped
ok $? "B reads it stopped"
BASE=$BASE_B
svc "$KS" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"seconds":0},"user":"s4","response_mode":"blocking"}'
is "$STATUS $(jqr .data.status)" "200 succeeded" "its slot is free again: a run on B is admitted"
BASE=$BASE_A
svc "$KS" POST "/v1/workflows/tasks/$R2/stop" -H "$J" -d '{"user":"s2"}'
is "$STATUS" 200 "B's run stopped through A"
wait $C2
is "$(sed -n 's/^data: //p' "$T_DIR/s2.txt" | jq -r 'select(.event=="workflow_finished") | .data.status')" \
    stopped "B's stream ends: stopped"

# A stop that reaches B before A stored its run (within publish_after):
# B looks again until the record is there, then stops it.
slow A s5 "$T_DIR/s5.txt"; C5=$!
R5=$(sse_first "$T_DIR/s5.txt" .workflow_run_id)
stored_as B "$R5" running && early=no || early=yes
echo "# the stop went to B before A stored the run: $early"
T0=$(now_ms)
BASE=$BASE_B
svc "$KS" POST "/v1/workflows/tasks/$R5/stop" -H "$J" -d '{"user":"s5"}'
T1=$(now_ms)
is "$STATUS $(jqr .result)" "200 success" "a stop on B in the first moments of A's run"
echo "# B answered the early stop in $((T1 - T0)) ms"
wait $C5
is "$(sed -n 's/^data: //p' "$T_DIR/s5.txt" | jq -r 'select(.event=="workflow_finished") | .data.status')" \
    stopped "... and A's stream ends: stopped"
svc "$KS" POST "/v1/workflows/tasks/0190f000-0000-7000-8000-000000000999/stop" \
    -H "$J" -d '{"user":"s5"}'
is "$STATUS $(jqr .result)" "200 success" "a task no host runs: Dify's 200 success, nothing stopped (after publish_after)"

# ---- PostgreSQL restarted ----
# webget <path> [curl args]: a web API request through A (no admin token:
# an Authorization header would be read as a passport); STATUS BODY HDRS
webget() {
	local u=$1
	shift
	BODY=$(curl -sS -D "$T_DIR/wh" -w '\n%{http_code}' "$@" "$BASE_A$u")
	STATUS=${BODY##*
}
	BODY=${BODY%
*}
	HDRS=$(tr -d '\r' <"$T_DIR/wh")
}
on A GET "$A/$ID"
CODE=$(jqr .site.code)
webget /api/passport -H "X-App-Code: $CODE"
PP=$(jqr .access_token)
ok "$([ -n "$PP" ] && [ "$PP" != null ]; echo $?)" "a passport of the app's site before the outage"
sh "$PGSH" down "$PGD"
ok $? "PostgreSQL stopped"
# the web API's own reads and writes of the store (the site by its code,
# the rate limit's count) answer an outage as the engine's errors do
webget /api/passport -H "X-App-Code: $CODE"
is "$STATUS $(jqr .code)" "503 storage_unavailable" \
    "a passport while it is away: JSON 503 storage_unavailable"
printf '%s\n' "$HDRS" | grep -qi '^retry-after: [0-9]'
ok $? "with Retry-After"
webget /api/site -H "X-App-Code: $CODE" -H "X-App-Passport: $PP"
is "$STATUS $(jqr .code)" "503 storage_unavailable" \
    "the site with a good passport while it is away: JSON 503 storage_unavailable"
on A GET "$A/$ID"
is "$STATUS $(jqr .code) $(jqr .status)" "503 storage_unavailable 503" \
    "a read while it is away: JSON 503"
printf '%s\n' "$HDRS" | grep -qi '^retry-after: 1'
ok $? "with Retry-After"
on B POST $A -H "$J" --data-binary '{"name":"while away","mode":"workflow"}'
is "$STATUS $(jqr .code)" "503 storage_unavailable" "a write while it is away: 503"
BASE=$BASE_A
svc "$KW" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"query":"hello"},"user":"u1","response_mode":"blocking"}'
is "$STATUS $(jqr .code)" "503 storage_unavailable" \
    "a service call with a good key while it is away: 503, not 401"
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

# ---- PostgreSQL restarted under load ----
# Three clients create apps and one runs a workflow through the shared
# upstream, without pause, while the server goes away for longer than
# storage.postgres_wait (3 s) and comes back. Every answer must be a
# success or a clean JSON 503 (or 429 for a run past the app's limit);
# everything answered as stored must be there afterwards, as answered.
load() {	# load <n> app|run: a line per answer until load.stop exists
	local c=$1 s
	while [ ! -e "$T_DIR/load.stop" ]; do
		if [ "$2" = app ]; then
			s=$(curl -sS -o "$T_DIR/l$c.body" -w '%{http_code}' \
			    -H "Authorization: Bearer $TOKEN" -H "$J" \
			    --data-binary "{\"name\":\"load $c\",\"mode\":\"workflow\"}" \
			    "$BASE_AB$A")
		else
			s=$(curl -sS -o "$T_DIR/l$c.body" -w '%{http_code}' \
			    -H "Authorization: Bearer $KW" -H "$J" \
			    -d '{"inputs":{"query":"hello"},"user":"load","response_mode":"blocking"}' \
			    "$BASE_AB/v1/workflows/run")
		fi
		case $s in
		200|201) echo "$s $(jq -r '(.id // .workflow_run_id) + " " + (.data.status // "-")' "$T_DIR/l$c.body" 2>/dev/null || echo not-json)" ;;
		*) echo "$s $(jq -r '.code // "no-code"' "$T_DIR/l$c.body" 2>/dev/null || echo not-json)" ;;
		esac
		sleep 0.05
	done
}
rm -f "$T_DIR/load.stop"
LP=""
for c in 1 2 3; do load $c app >"$T_DIR/load$c.out" & LP="$LP $!"; done
load 4 run >"$T_DIR/load4.out" & LP="$LP $!"
# came_back: a create answered 201 after one of the same client answered
# 503 (answers from before the outage do not count).
came_back() {
	awk 'FNR == 1 { down = 0 } /^503 / { down = 1 }
	    down && /^201 / { back = 1 } END { exit !back }' \
	    "$T_DIR"/load[123].out
}
# The states themselves, not times: every client has answered while the
# server is up, then a create answered 503 while it is down, then one came
# back after it.
wait_until 30 sh -c 'for c in 1 2 3 4; do [ -s "$1/load$c.out" ] || exit 1; done' \
    _ "$T_DIR"
ok $? "every client was answered before the outage"
sh "$PGSH" down "$PGD"
wait_until 30 grep -q '^503 ' "$T_DIR"/load1.out "$T_DIR"/load2.out \
    "$T_DIR"/load3.out
ok $? "a create answered 503 while PostgreSQL was down"
sh "$PGSH" up "$PGD"
ok $? "PostgreSQL stopped and started again under load"
wait_until 30 came_back
touch "$T_DIR/load.stop"
for p in $LP; do wait "$p"; done
cat "$T_DIR"/load[123].out >"$T_DIR/load_apps.out"
echo "# under load: $(grep -c '^201 ' "$T_DIR/load_apps.out") apps made, $(grep -c '^503 ' "$T_DIR/load_apps.out") answered 503; $(grep -c '^200 ' "$T_DIR/load4.out") runs, $(grep -c '^503 ' "$T_DIR/load4.out") answered 503"
is "$(grep -v -E '^(201 [0-9a-f-]{36} -|503 storage_unavailable)$' "$T_DIR/load_apps.out" | head -3)" "" \
    "every answer to a create: 201 with its id, or JSON 503 storage_unavailable"
is "$(grep -v -E '^(200 [0-9a-f-]{36} [a-z]+|503 storage_unavailable|429 too_many_requests)$' "$T_DIR/load4.out" | head -3)" "" \
    "every answer to a run: 200 with its id, JSON 503 or JSON 429"
came_back
ok $? "the creates saw the server go away (503s) and come back (201s after a 503)"
lost=0
for id in $(awk '$1 == 201 {print $2}' "$T_DIR/load_apps.out"); do
	s=$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$BASE_A$A/$id")
	[ "$s" = 200 ] || lost=$((lost + 1))
done
is "$lost" 0 "every app answered 201 is there afterwards (read on A)"
lost=0
while read -r s id st; do
	[ "$s" = 200 ] || continue
	[ "$(curl -sS -H "Authorization: Bearer $KW" "$BASE_B/v1/workflows/run/$id" | jq -r .status)" = "$st" ] ||
	    lost=$((lost + 1))
done <"$T_DIR/load4.out"
is "$lost" 0 "every run answered 200 is stored as answered (read on B)"

# ---- A killed mid-run: B fails its run once A's lease ran out ----
slow A k1 "$T_DIR/k1.txt" 8; C3=$!
slow A k2 "$T_DIR/k2.txt" 8; C4=$!
K1=$(sse_first "$T_DIR/k1.txt" .workflow_run_id)
K2=$(sse_first "$T_DIR/k2.txt" .workflow_run_id)
wait_until 10 stored_as B "$K1" running && wait_until 10 stored_as B "$K2" running
ok $? "two runs on A, seen running on B"
BASE=$BASE_B
svc "$KS" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"seconds":0},"user":"k3","response_mode":"blocking"}'
is "$STATUS" 429 "both app slots are A's"
kill -9 "$PIDA"
wait "$PIDA" 2>/dev/null
T0=$(now_ms)
wait_until 20 stored_as B "$K1" failed && wait_until 5 stored_as B "$K2" failed
ok $? "B marks A's two runs failed (run.host_lease 2 s)"
echo "# failed $(( $(now_ms) - T0 )) ms after the kill"
BASE=$BASE_B
svc "$KS" GET "/v1/workflows/run/$K1"
printf '%s' "$BODY" | jq -e '.error | startswith("host lost")' >/dev/null
ok $? "its error says the host was lost"
svc "$KS" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"seconds":0},"user":"k4","response_mode":"blocking"}'
is "$STATUS $(jqr .data.status)" "200 succeeded" \
    "the dead host's app slots are free: B admits a run"
kill "$C3" "$C4" 2>/dev/null
# A's code sandboxes were tmpfs mounts (as root) that nothing has swept
# since A died; unmounted here so that the test's directory can go.
wait_until 15 sh -c '! pgrep -f "bwrap.*$1" >/dev/null' _ "$T_DIR/a/sandboxes"
for d in "$T_DIR"/a/sandboxes/*/; do
	[ -d "$d" ] && umount -l "$d" 2>/dev/null
done
true
