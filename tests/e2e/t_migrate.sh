#!/bin/bash
# t_migrate.sh — flowcgi migrate, LMDB to PostgreSQL and back, through
# nginx: apps (a workflow with a run, an app with a sealed secret, a
# sandboxed app with a file and a signed link to it) made on LMDB are read
# on PostgreSQL after `flowcgi migrate --to postgres URL`, with the data
# directory's key files copied; a new run works there; `flowcgi migrate
# --to lmdb DIR` brings it all back into a new data directory. The
# refusals: --to missing or unknown, the destination the configured store,
# a destination that is not empty (left as it was). The server is a
# private one (tests/e2e/postgres.sh); without PostgreSQL the test is one
# counted skip.
. "$(dirname "$0")/lib.sh"

# LMDB first, whatever the run was asked for (FLOWCGI_TEST_BACKEND).
unset FLOWCGI_TEST_BACKEND FLOWCGI_STORAGE_BACKEND FLOWCGI_STORAGE_POSTGRES_URL
pg_private
URL=$PG_URL
J='Content-Type: application/json'
A=/console/api/apps

# stop_flowcgi: stops the last server started (and its nginx): migrate
# wants nothing writing either store.
stop_flowcgi() {
	stop_nginx
	kill "$FC_PID" 2>/dev/null && wait "$FC_PID" 2>/dev/null
}

# migrate <out name> <args...>: flowcgi migrate with the environment's
# store; sets MRC, its output in $T_DIR/<name>.out and .err.
migrate() {
	local n=$1
	shift
	"$FLOWCGI_BIN" migrate "$@" >"$T_DIR/$n.out" 2>"$T_DIR/$n.err"
	MRC=$?
}

# keys_to <dir>: the files of the data directory that go with the data
# (secrets are sealed with secret.key, links signed with link.key).
keys_to() {
	mkdir -p "$1"
	cp "$T_DIR/lmdb/secret.key" "$T_DIR/lmdb/link.key" \
	    "$T_DIR/lmdb/admin_token" "$1/"
}

# check_all <where>: what was made on LMDB, read through nginx.
check_all() {
	req GET "$A/$WF"
	is "$STATUS $(jqr .name)" "200 $WF_NAME" "$1: the workflow app"
	svc "$WKEY" GET "/v1/workflows/run/$RUN"
	is "$STATUS $(jqr .status) $(jqr .inputs.query)" "200 succeeded hello" \
	    "$1: its run, read with its API key"
	req GET "$A/$WF/workflow-runs"
	is "$(jqr '[.data[].id] | index("'"$RUN"'") != null')" true \
	    "$1: the run in the app's history"
	req GET "$A/$WF/workflow-runs/$RUN/node-executions"
	is "$STATUS $(jqr '.data | length')" "200 $NODES" \
	    "$1: its node executions"
	curl -sS -H "Authorization: Bearer $TOKEN" -o "$T_DIR/back.bin" \
	    "$BASE$A/$SB/assets/files/$FILE/download"
	cmp -s "$T_DIR/file.bin" "$T_DIR/back.bin"
	ok $? "$1: the sandboxed app's file, the same bytes (its blob)"
	curl -sS -o "$T_DIR/back.bin" "$BASE$LINK"
	cmp -s "$T_DIR/file.bin" "$T_DIR/back.bin"
	ok $? "$1: its signed link, made on LMDB, checks (the copied link.key)"
	"$FLOWCGI_BIN" export "$SEC" --secrets -o - >"$T_DIR/sec.yml" \
	    2>"$T_DIR/sec.err"
	grep -q 'ENVSEC-7f3a9c1e-env' "$T_DIR/sec.yml"
	ok $? "$1: the sealed secret opens with the copied secret.key"
	svc "$WKEY" POST /v1/workflows/run -H "$J" -d '{"inputs":{"query":
	    "hello"},"user":"u2","response_mode":"blocking"}'
	is "$STATUS $(jqr .data.status)" "200 succeeded" "$1: a new run"
}

# ---- made on LMDB ----
export FLOWCGI_SERVER_DATA_DIR=$T_DIR/lmdb
FC_DATA=$T_DIR/lmdb start_flowcgi fcL || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
TOKEN=$(FC_DATA=$T_DIR/lmdb admin_token)
D=$TOP/tests/e2e/apps/dify
import_app "$D/difytest__conditional_hello_branching_workflow.yml"
WF=$APP WKEY=$KEY
req GET "$A/$WF"
WF_NAME=$(jqr .name)
svc "$WKEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"query":"hello"},"user":"u1","response_mode":"blocking"}'
is "$STATUS $(jqr .data.status)" "200 succeeded" "a run on LMDB"
RUN=$(jqr .workflow_run_id)
req GET "$A/$WF/workflow-runs/$RUN/node-executions"
NODES=$(jqr '.data | length')
sed "s#ECHO#http://127.0.0.1:9#" "$TOP/tests/e2e/apps/secrets.yml" \
    >"$T_DIR/secrets.yml"
import_file "$T_DIR/secrets.yml"
SEC=$(jqr .app_id)
import_app "$TOP/tests/e2e/apps/sandboxed.yml"
SB=$APP
head -c 300000 /dev/urandom >"$T_DIR/file.bin"
req POST "$A/$SB/assets/files?name=data.bin" \
    -H 'Content-Type: application/octet-stream' --data-binary @"$T_DIR/file.bin"
is "$STATUS" 201 "a file in the sandboxed app"
FILE=$(jqr .id)
req GET "$A/$SB/assets/files/$FILE/download-url"
LINK=$(jqr .download_url)
is "$(curl -s -o /dev/null -w '%{http_code}' "$BASE$LINK")" 200 \
    "a signed link to it (link.key)"
stop_flowcgi
RUNS_LMDB=$(mdb_stat -s runs "$T_DIR/lmdb" | awk '/Entries:/ {print $2}')

# ---- refusals ----
migrate r1 "$URL"
is "$MRC" 2 "migrate without --to: a usage error"
grep -q -- '--to postgres URL' "$T_DIR/r1.err"
ok $? "which says what it needs"
migrate r2 --to mysql "$URL"
is "$MRC" 2 "migrate --to an unknown backend"
migrate r3 --to lmdb "$T_DIR/lmdb"
is "$MRC" 1 "migrate --to lmdb the configured data directory"
grep -q 'configured data directory' "$T_DIR/r3.err"
ok $? "says that it is the configured one"

# ---- LMDB -> PostgreSQL ----
migrate m1 --to postgres "$URL"
is "$MRC" 0 "migrate --to postgres"
sed 's/^/# /' "$T_DIR/m1.out"
# the lines of the table: database, source, copied, destination, digest
awk '$2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ {print $1, $5}' "$T_DIR/m1.out" \
    >"$T_DIR/m1.dbs"
is "$(grep -c ' ok$' "$T_DIR/m1.dbs") $(grep -cv ' ok$' "$T_DIR/m1.dbs")" \
    "$(wc -l <"$T_DIR/m1.dbs") 0" "every database matches"
is "$(awk '{print $1}' "$T_DIR/m1.dbs" |
    grep -cx 'apps\|runs\|blobs\|blobrefs\|meta')" 5 \
    "the table lists the databases"
is "$(awk '$1 == "runs" {print $2, $3, $4}' "$T_DIR/m1.out")" \
    "$RUNS_LMDB $RUNS_LMDB $RUNS_LMDB" "runs: source, copied, destination"
tail -1 "$T_DIR/m1.out" | grep -q 'every count and digest matches'
ok $? "a closing line that says so"
grep -q 'secret.key' "$T_DIR/m1.err"
ok $? "it says the key files go with the data"

migrate r4 --to postgres "$URL"
is "$MRC" 1 "migrate into the now non-empty database: refused"
grep -q 'not empty' "$T_DIR/r4.err"
ok $? "says that it is not empty"
is "$(FLOWCGI_STORAGE_BACKEND=postgres FLOWCGI_STORAGE_POSTGRES_URL=$URL \
    "$FLOWCGI_BUILD/tools/store_poke" unused count runs)" "$RUNS_LMDB" \
    "the refused destination keeps what it had"

# ---- served from PostgreSQL ----
export FLOWCGI_STORAGE_BACKEND=postgres FLOWCGI_STORAGE_POSTGRES_URL=$URL
export FLOWCGI_SERVER_DATA_DIR=$T_DIR/pgkeys
keys_to "$T_DIR/pgkeys"
FC_DATA=$T_DIR/pgkeys start_flowcgi fcP || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
check_all postgres
# without the key files the copy's secrets stay sealed: a process with
# no key refuses to start on it
mkdir -p "$T_DIR/nokeys"
FLOWCGI_SERVER_DATA_DIR=$T_DIR/nokeys "$FLOWCGI_BIN" export "$SEC" \
    --secrets -o - >"$T_DIR/nosec.yml" 2>"$T_DIR/nosec.err"
is "$?" 1 "a data directory without the key files cannot open them"
! grep -q 'ENVSEC-7f3a9c1e-env' "$T_DIR/nosec.yml"
ok $? "... nothing of the secret comes out"
grep -q 'secret.key' "$T_DIR/nosec.err"
ok $? "... and it says which key it lacks"
stop_flowcgi

migrate r5 --to postgres "$URL"
is "$MRC" 1 "migrate --to postgres the configured database: refused"
migrate r6 --to lmdb "$T_DIR/lmdb"
is "$MRC" 1 "migrate --to lmdb a data directory with records: refused"
grep -q 'not empty' "$T_DIR/r6.err"
ok $? "says that it is not empty"

# ---- PostgreSQL -> a new LMDB directory ----
migrate m2 --to lmdb "$T_DIR/back"
is "$MRC" 0 "migrate --to lmdb"
sed 's/^/# /' "$T_DIR/m2.out"
tail -1 "$T_DIR/m2.out" | grep -q 'every count and digest matches'
ok $? "every count and digest matches"
grep -q "into $T_DIR/back" "$T_DIR/m2.err"
ok $? "it says to copy the key files into the new directory"
unset FLOWCGI_STORAGE_BACKEND FLOWCGI_STORAGE_POSTGRES_URL
export FLOWCGI_SERVER_DATA_DIR=$T_DIR/back
keys_to "$T_DIR/back"
FC_DATA=$T_DIR/back start_flowcgi fcB || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
check_all "back on LMDB"
is "$(mdb_stat -s runs "$T_DIR/back" | awk '/Entries:/ {print $2}')" \
    $((RUNS_LMDB + 2)) "the new LMDB holds the runs of all three"
