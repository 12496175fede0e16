#!/bin/bash
# t_pg_trips.sh — what one run costs PostgreSQL, counted by the server
# (pg_stat_statements, loaded in the test's private server), through
# nginx: the statements of a service run of the 10-node workflow
# (tests/bench/ten_nodes.yml) and of a chat message (echo_chat.yml, a new
# conversation, then one continued), and the round trips they make. A
# write's BEGIN, its puts and its store_need checks ride in its COMMIT's
# round trip (libpq's pipeline), a read's "SELECT 1" in its BEGIN's, and
# a read's ROLLBACK is sent without waiting; every other statement waits
# for its answer, one round trip each. The counts must not grow past what
# they are now: a change that adds a statement or a round trip to a run
# fails here and says which statements a run made. Without PostgreSQL or
# without pg_stat_statements (Debian's server package has it) the test is
# one counted skip. Then a run of an app deleted while it runs: answered,
# and nothing of it stored.
. "$(dirname "$0")/lib.sh"

# what a run may cost, at most. A workflow: the configuration generation,
# and the run's write in one round trip. A chat also reads its
# conversation in the write (its workspace); a continued one reads the
# conversation (its owner) and then, in one read transaction, the
# conversation and its messages (the memory).
WF_TRIPS=2
WF_STMTS=7
CHAT_NEW_TRIPS=3
CHAT_NEW_STMTS=10
CHAT_TRIPS=7
CHAT_STMTS=16
N=5

pg_private
PGDATA_DIR=$(cat "$PGD/pgdata")
PSQL="$(cat "$PGD/bin")/psql"
sql() { "$PSQL" -qAt "$PG_URL" -c "$1"; }
echo "shared_preload_libraries = 'pg_stat_statements'" >>"$PGDATA_DIR/postgresql.conf"
sh "$PGSH" down "$PGD" >/dev/null 2>&1 && sh "$PGSH" up "$PGD" >/dev/null 2>&1 ||
    { ok 1 "the test's PostgreSQL restarted with pg_stat_statements"; exit 1; }
if ! sql 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' >/dev/null 2>&1; then
	skip "pg_stat_statements is not installed with this PostgreSQL"
	exit 0
fi
export FLOWCGI_STORAGE_BACKEND=postgres
export FLOWCGI_STORAGE_POSTGRES_URL="$PG_URL"
# no look for lost hosts while the runs are counted (every half lease)
export FLOWCGI_RUN_HOST_LEASE=3600s
J='Content-Type: application/json'

start_flowcgi fc || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
TOKEN=$(admin_token)
import_file "$TOP/tests/bench/ten_nodes.yml"
WF=$(jqr .app_id)
req POST "/console/api/apps/$WF/api-keys"
WF_KEY=$(jqr .token)
import_file "$TOP/tests/e2e/apps/echo_chat.yml"
CHAT=$(jqr .app_id)
req POST "/console/api/apps/$CHAT/api-keys"
CHAT_KEY=$(jqr .token)

run_wf() {
	svc "$WF_KEY" POST /v1/workflows/run -H "$J" \
	    -d '{"inputs":{"q":"hello"},"user":"u","response_mode":"blocking"}'
	[ "$STATUS" = 200 ] && [ "$(jqr .data.status)" = succeeded ]
}
# chat [conversation id]: sets CONV
chat() {
	svc "$CHAT_KEY" POST /v1/chat-messages -H "$J" \
	    -d "{\"inputs\":{},\"query\":\"hi\",\"user\":\"u\",\"response_mode\":\"blocking\",\"conversation_id\":\"${1:-}\"}"
	CONV=$(jqr .conversation_id)
	[ "$STATUS" = 200 ] && [ "$(jqr .answer)" = "echo hi" ]
}

# count <label> <runs> <max trips> <max statements>: the statements since
# the last reset, per run, against the bounds
count() {
	local f=$T_DIR/$1.stmts st rt
	sql "SELECT calls, query FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC" >"$f"
	st=$(awk -F'|' -v n="$2" '{ c += $1 } END { printf "%.1f", c / n }' "$f")
	rt=$(awk -F'|' -v n="$2" '
		$2 ~ /^BEGIN ISOLATION LEVEL SERIALIZABLE/ || $2 == "SELECT $1" ||
		$2 == "ROLLBACK" || $2 ~ /DO UPDATE SET v = EXCLUDED.v/ ||
		$2 ~ /^SELECT [^ ]+ \/ count\(\*\) FROM / { next }
		{ c += $1 } END { printf "%.1f", c / n }' "$f")
	echo "# $1: $st statements, $rt round trips per run; the statements (calls, text):"
	sed 's/^/#   /' "$f"
	ok "$(awk -v a="$rt" -v b="$3" 'BEGIN { print (a <= b) ? 0 : 1 }')" \
	    "$1: at most $3 round trips per run ($rt)"
	ok "$(awk -v a="$st" -v b="$4" 'BEGIN { print (a <= b) ? 0 : 1 }')" \
	    "$1: at most $4 statements per run ($st)"
	# a run is counted at all: the count sees the runs
	ok "$(awk -v a="$st" 'BEGIN { print (a >= 1) ? 0 : 1 }')" \
	    "$1: the runs' statements are counted"
}
reset() { sql 'SELECT pg_stat_statements_reset()' >/dev/null; }

# warm: statements prepared on the pooled connections, caches filled
for i in 1 2 3; do run_wf; done
ok $? "the workflow runs on PostgreSQL"
reset
for i in $(seq 1 $N); do run_wf || break; done
ok $? "$N workflow runs"
count workflow $N $WF_TRIPS $WF_STMTS

chat && chat "$CONV"
ok $? "the chat answers"
reset
for i in $(seq 1 $N); do chat || break; done
ok $? "$N chat messages, each a new conversation"
count chat_new $N $CHAT_NEW_TRIPS $CHAT_NEW_STMTS
chat
reset
for i in $(seq 1 $N); do chat "$CONV" || break; done
ok $? "$N chat messages in one conversation"
count chat_continued $N $CHAT_TRIPS $CHAT_STMTS

# the runs were stored (the count is of runs that wrote)
req GET "/console/api/apps/$WF/workflow-runs?limit=100"
ok "$(jqr '.data | length >= 8' | grep -qx true; echo $?)" "the workflow's runs are stored"

# ---- an app deleted while it runs: the run's write needs its app (a
# check in the write's pipeline, store_need): the run is answered, and
# nothing of it is stored ----
import_file "$TOP/tests/e2e/apps/slow.yml"
SLOW=$(jqr .app_id)
req POST "/console/api/apps/$SLOW/api-keys"
SLOW_KEY=$(jqr .token)
curl -sS -o "$T_DIR/slow.json" -w '%{http_code}' -H "Authorization: Bearer $SLOW_KEY" \
    -H "$J" -d '{"inputs":{"seconds":2},"user":"u","response_mode":"blocking"}' \
    "$BASE/v1/workflows/run" >"$T_DIR/slow.code" &
CURL=$!
# stored as running (past run.publish_after): then the app goes
i=0
until req GET "/console/api/apps/$SLOW/workflow-runs?limit=5" &&
    [ "$(jqr '.data | length')" = 1 ]; do
	i=$((i + 1)); [ $i -gt 200 ] && break; sleep 0.05
done
is "$(jqr '.data[0].status')" running "the slow run is stored as running"
RUN=$(jqr '.data[0].id')
req DELETE "/console/api/apps/$SLOW"
ok "$(case $STATUS in 200|204) echo 0 ;; *) echo 1 ;; esac)" "the app is deleted while it runs ($STATUS)"
wait $CURL
is "$(cat "$T_DIR/slow.code") $(jq -r .data.status "$T_DIR/slow.json")" \
    "200 succeeded" "the run is answered"
is "$(jq -r .workflow_run_id "$T_DIR/slow.json")" "$RUN" "it is the run that was stored"
db_has runs "$RUN"
is $? 1 "nothing of it is stored: no run record (store_poke: not there)"
db_has node_runs "$RUN"
is $? 1 "and no node records"
# the store is fine after the refused write: the workflow runs and stores
run_wf
ok $? "a run after it"
finish
