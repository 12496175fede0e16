#!/bin/bash
# t_crash.sh — SIGKILL in the middle of 1000 concurrent creates; after a
# restart on the same data directory every create that was answered 201 is
# there, complete, and no record anywhere is partial or damaged. Then the
# same for workflow runs, whose writes share commits (group commit): SIGKILL
# while 24 clients post blocking runs; after a restart every run whose
# answer reached its client is stored as succeeded, whole, and the data
# directory opens cleanly.
. "$(dirname "$0")/lib.sh"

N=1000
start_front || exit 1
mkdir -p "$T_DIR/out"
{
	for i in $(seq -w 1 $N); do
		printf 'url = "%s/console/api/apps"\noutput = "%s/out/%s"\n' \
		    "$BASE" "$T_DIR" "$i"
	done
} >"$T_DIR/curl.cfg"
BODYJ='{"name":"crash test","mode":"workflow","description":"all or nothing","icon":"💥"}'
curl -sS --parallel --parallel-max 64 -K "$T_DIR/curl.cfg" -X POST \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    --data-binary "$BODYJ" -w '%{http_code} %{filename_effective}\n' \
    >"$T_DIR/answers" 2>"$T_DIR/curl-bulk.err" &
CURL_PID=$!
# kill the server once a few hundred creates have been answered (curl
# creates an output file when an answer arrives; its -w lines come late,
# in buffered blocks)
i=0
while [ "$(ls "$T_DIR/out" | wc -l)" -lt 250 ]; do
	i=$((i + 1)); [ $i -gt 3000 ] && break; sleep 0.01
done
kill -9 "$FC_PID"
at_kill=$(ls "$T_DIR/out" | wc -l)
{ wait "$FC_PID"; } 2>/dev/null
wait "$CURL_PID"
answered=$(grep -c '^201 ' "$T_DIR/answers")
echo "# answers when killed: $at_kill; 201s in the end: $answered of $N"
[ "$at_kill" -ge 250 ] && [ "$answered" -lt $N ]
ok $? "the server died in the middle of the creates ($answered of $N answered 201)"
is "$(wc -l <"$T_DIR/answers")" $N "every create got some answer"

# restart on the same data directory, behind a fresh nginx
kill "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null
start_flowcgi fc2 || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
req GET /healthz
is "$STATUS" 200 "healthy after the restart"

# every 201 answer names an app that is there, whole
grep '^201 ' "$T_DIR/answers" | cut -d' ' -f2 | xargs cat |
    jq -r .id | sort >"$T_DIR/acked"
is "$(sort -u "$T_DIR/acked" | wc -l)" "$answered" "every 201 carried its own id"
missing=0
pages=$(( (N + 99) / 100 ))
: >"$T_DIR/listed"
for pg in $(seq 1 $pages); do
	req GET "/console/api/apps?page=$pg&limit=100"
	[ "$STATUS" = 200 ] || { ok 1 "list page $pg: $STATUS $BODY"; break; }
	printf '%s' "$BODY" | jq -c '.data[]' >>"$T_DIR/listed"
done
jq -r .id "$T_DIR/listed" | sort >"$T_DIR/listed.ids"
total=$(wc -l <"$T_DIR/listed.ids")
echo "# records after restart: $total"
missing=$(comm -23 "$T_DIR/acked" "$T_DIR/listed.ids" | wc -l)
is "$missing" 0 "every create answered 201 is listed after the restart"
[ "$total" -ge "$answered" ] && [ "$total" -le $N ]
ok $? "between $answered and $N records exist ($total)"
is "$(sort -u "$T_DIR/listed.ids" | wc -l)" "$total" "no record listed twice"
# complete records only: every field as created, a draft workflow
bad=$(jq -c 'select(.name != "crash test" or .mode != "workflow"
    or .description != "all or nothing" or .icon != "💥"
    or (.id | test("^[0-9a-f-]{36}$") | not)
    or (.workflow.id | type) != "string" or (.created_at | type) != "number")' \
    "$T_DIR/listed" | wc -l)
is "$bad" 0 "no partial record in the list"
# and each acknowledged one reads back in full by id
bad=0
for id in $(head -50 "$T_DIR/acked"); do
	req GET "/console/api/apps/$id"
	[ "$STATUS" = 200 ] && [ "$(jqr .description)" = "all or nothing" ] ||
	    bad=$((bad + 1))
done
is "$bad" 0 "acknowledged apps read back by id"
req POST /console/api/apps -H 'Content-Type: application/json' \
    --data-binary '{"name":"after the crash","mode":"chat"}'
is "$STATUS" 201 "creates work after the restart"
req GET "/console/api/apps?limit=1"
is "$(jqr .total)" $((total + 1)) "the total counts the new app"

# ====== Concurrent runs: an answered run is a stored run ======

R=1500
import_app "$TOP/tests/bench/ten_nodes.yml"
[ -n "$KEY" ] && [ "$KEY" != null ]
ok $? "the ten-node workflow imported, with a key"
mkdir -p "$T_DIR/runs"
for i in $(seq -w 1 $R); do
	printf 'url = "%s/v1/workflows/run"\noutput = "%s/runs/%s"\n' \
	    "$BASE" "$T_DIR" "$i"
done >"$T_DIR/runs.cfg"
RUNJ='{"inputs":{"q":"hello"},"user":"crash","response_mode":"blocking"}'
curl -sS --parallel --parallel-max 24 -K "$T_DIR/runs.cfg" -X POST \
    -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    --data-binary "$RUNJ" -w '%{http_code} %{filename_effective}\n' \
    >"$T_DIR/runs.answers" 2>"$T_DIR/curl-runs.err" &
CURL_PID=$!
i=0
while [ "$(ls "$T_DIR/runs" | wc -l)" -lt 150 ]; do
	i=$((i + 1)); [ $i -gt 3000 ] && break; sleep 0.01
done
kill -9 "$FC_PID"
at_kill=$(ls "$T_DIR/runs" | wc -l)
{ wait "$FC_PID"; } 2>/dev/null
wait "$CURL_PID"
# a run was answered when its client got a whole answer naming it
grep '^200 ' "$T_DIR/runs.answers" | cut -d' ' -f2 |
    xargs jq -r '.workflow_run_id // empty' 2>/dev/null | sort \
    >"$T_DIR/runs.acked"
acked=$(wc -l <"$T_DIR/runs.acked")
echo "# answers when killed: $at_kill; runs answered: $acked of $R"
[ "$at_kill" -ge 150 ] && [ "$acked" -lt $R ] && [ "$acked" -ge 100 ]
ok $? "the server died in the middle of the runs ($acked of $R answered)"
is "$(sort -u "$T_DIR/runs.acked" | wc -l)" "$acked" \
    "every answer named its own run"

kill "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null
start_flowcgi fc3 || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
req GET /healthz
is "$STATUS" 200 "healthy after the second restart"
if [ "${FLOWCGI_STORAGE_BACKEND:-lmdb}" = postgres ]; then
	skip "LMDB's own reader (mdb_stat): the store is PostgreSQL"
elif command -v mdb_stat >/dev/null 2>&1; then
	mdb_stat -a "$T_DIR/data" >"$T_DIR/mdb_stat.out" 2>&1
	ok $? "mdb_stat reads every database of the data directory"
else
	skip "mdb_stat (lmdb-utils) is not installed"
fi

# every answered run reads back: succeeded, with its output and 10 steps
mkdir -p "$T_DIR/after"
while read -r id; do
	printf 'url = "%s/console/api/apps/%s/workflow-runs/%s"\n' \
	    "$BASE" "$APP" "$id"
	printf 'output = "%s/after/%s"\n' "$T_DIR" "$id"
done <"$T_DIR/runs.acked" >"$T_DIR/after.cfg"
curl -sS --parallel --parallel-max 8 -K "$T_DIR/after.cfg" \
    -H "Authorization: Bearer $TOKEN" 2>"$T_DIR/curl-after.err"
bad=0
while read -r id; do
	jq -e --arg id "$id" '.id == $id and .status == "succeeded" and
	    .outputs.out == "hello" and .total_steps == 10' \
	    "$T_DIR/after/$id" >/dev/null 2>&1 || bad=$((bad + 1))
done <"$T_DIR/runs.acked"
is "$bad" 0 "every answered run is stored as succeeded, whole ($acked)"
bad=0
for id in $(head -20 "$T_DIR/runs.acked"); do
	req GET "/console/api/apps/$APP/workflow-runs/$id/node-executions"
	[ "$STATUS" = 200 ] && [ "$(jqr '.data | length')" = 10 ] ||
	    bad=$((bad + 1))
done
is "$bad" 0 "their node executions are stored with them"
svc "$KEY" POST /v1/workflows/run -H 'Content-Type: application/json' \
    --data-binary "$RUNJ"
is "$(jqr .data.status)" succeeded "runs work after the restart"
