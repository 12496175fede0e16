#!/bin/bash
# t_pg_cache.sh — the caches of API keys and parsed apps across two hosts
# on one PostgreSQL database: B runs an app (its caches warm), A changes
# it, and B's very next request sees the change, with no wait between:
# a published version, a draft (a console test run), a revoked key, a
# deleted app. Each host is behind its own nginx, so where a request goes
# is known. Runs leave the configuration generation alone (else every run
# would empty every cache). Without PostgreSQL the test is one counted
# skip.
. "$(dirname "$0")/lib.sh"

pg_private
export FLOWCGI_STORAGE_BACKEND=postgres
export FLOWCGI_STORAGE_POSTGRES_URL="$PG_URL"
FLOWCGI_SECRET_KEY=$(openssl rand -base64 32)
export FLOWCGI_SECRET_KEY
J='Content-Type: application/json'
A=/console/api/apps

FC_DATA=$T_DIR/a start_flowcgi fcA || exit 1
PA=$FC_PORT
mkdir -p "$T_DIR/b"
cp "$T_DIR/a/admin_token" "$T_DIR/b/"
FC_DATA=$T_DIR/b start_flowcgi fcB || exit 1
PB=$FC_PORT
TOKEN=$(FC_DATA=$T_DIR/a admin_token)
start_nginx_at / "127.0.0.1:$PA" || exit 1
BASE_A=$BASE; FLOWCGI_PIDS="$FLOWCGI_PIDS $NGINX_PID"
start_nginx_at / "127.0.0.1:$PB" || exit 1
BASE_B=$BASE; FLOWCGI_PIDS="$FLOWCGI_PIDS $NGINX_PID"

on() {	# on <A|B> <req args...>: req through that host's nginx
	case $1 in A) BASE=$BASE_A ;; B) BASE=$BASE_B ;; esac
	shift
	req "$@"
}

# run_b: a blocking service run on B with q=hi; sets OUT (outputs.out)
run_b() {
	BASE=$BASE_B
	svc "$KEY" POST /v1/workflows/run -H "$J" \
	    -d '{"inputs":{"q":"hi"},"user":"u","response_mode":"blocking"}'
	OUT=$(jqr .data.outputs.out)
}

# save_a <template>: saves the draft on A with the template node's text
save_a() {
	on A GET "$A/$APP/workflows/draft"
	printf '%s' "$BODY" >"$T_DIR/draft"
	jq --arg t "$1" '{graph: (.graph | .nodes |= map(
	    if .id == "t" then .data.template = $t else . end)), features,
	    environment_variables, conversation_variables, hash}' \
	    "$T_DIR/draft" >"$T_DIR/save.json"
	on A POST "$A/$APP/workflows/draft" -H "$J" \
	    --data-binary @"$T_DIR/save.json"
}

BASE=$BASE_A
import_file "$TOP/tests/e2e/apps/publish.yml"
APP=$(jqr .app_id)
is "$(jqr .status)" completed "the app imported on A"
on A POST "$A/$APP/api-keys"
KEY=$(jqr .token)
KID=$(jqr .id)

run_b
is "$STATUS $OUT" "200 one hi" "B runs the published version"
run_b
is "$OUT" "one hi" "and again, from its caches"

# ---- a new published version, made on A ----
save_a 'two {{ q }}'
is "$STATUS" 200 "A saves the draft"
run_b
is "$OUT" "one hi" "B still runs the published version, not the draft"
on A POST "$A/$APP/workflows/publish" -H "$J" -d '{}'
is "$STATUS" 200 "A publishes it"
run_b
is "$OUT" "two hi" "B's next run runs the new version"

# ---- the draft, changed on A, run on B (the console's test run) ----
draft_run_b() {
	curl -sS -N -H "Authorization: Bearer $TOKEN" -H "$J" \
	    -d '{"inputs":{"q":"hi"}}' "$BASE_B$A/$APP/workflows/draft/run" |
	    sed -n 's/^data: //p' >"$T_DIR/draft.sse"
	jq -r 'select(.event == "workflow_finished") | .data.outputs.out' \
	    "$T_DIR/draft.sse"
}
is "$(draft_run_b)" "two hi" "B's test run runs the draft"
save_a 'three {{ q }}'
is "$(draft_run_b)" "three hi" "B's next test run runs A's new draft"
run_b
is "$OUT" "two hi" "while B's service runs keep the published version"

# ---- runs write no configuration: the generation stays ----
PSQL="$(cat "$PGD/bin")/psql"
before=$("$PSQL" -qAt "$PG_URL" -c "SELECT n FROM flowcgi_generation")
run_b; run_b; run_b
after=$("$PSQL" -qAt "$PG_URL" -c "SELECT n FROM flowcgi_generation")
is "$after" "$before" "runs leave the generation alone"

# ---- a key revoked on A is refused by B at once ----
on A DELETE "$A/$APP/api-keys/$KID"
ok "$([ "$STATUS" = 204 ] || [ "$STATUS" = 200 ] && echo 0 || echo 1)" \
    "A revokes the key ($STATUS)"
run_b
is "$STATUS" 401 "B refuses it on its next request"

# ---- an app deleted on A is gone on B ----
on A POST "$A/$APP/api-keys"
KEY=$(jqr .token)
run_b
is "$OUT" "two hi" "a new key runs on B"
on A DELETE "$A/$APP"
ok "$([ "$STATUS" = 204 ] || [ "$STATUS" = 200 ] && echo 0 || echo 1)" \
    "A deletes the app ($STATUS)"
run_b
ok "$([ "$STATUS" = 401 ] || [ "$STATUS" = 404 ] && echo 0 || echo 1)" \
    "B runs it no more ($STATUS)"
on B GET "$A/$APP"
is "$STATUS" 404 "and B's console has it no more"

finish
