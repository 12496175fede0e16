# t_security_secrets.sh — secrets the DSL carries (a secret environment
# variable; http-request API keys of every type) through nginx: never in
# the bytes of the data directory (after import, pending import and runs),
# masked in every answer (app, draft, run detail, node executions), blanked
# on export (YAML, bundle, CLI) unless include_secret, and carried through
# export(include_secret) -> import -> a run that sends the same keys.
. "$(dirname "$0")/lib.sh"

J='Content-Type: application/json'
A=/console/api/apps
ENVSEC=ENVSEC-7f3a9c1e-env
BEARER=HTTPSEC-bearer-31d7b2
CUSTOM=HTTPSEC-custom-8e44a0
BASIC=HTTPSEC-basic-5c19f6
BASIC64=$(printf 'alice:%s' "$BASIC" | base64)
SECRETS="$ENVSEC $BEARER $CUSTOM $BASIC $BASIC64"

start_fake echo ECHO || exit 1
export FLOWCGI_HTTP_ALLOW_PRIVATE=true	# the fake is on loopback
start_front || exit 1
DATA=$T_DIR/data

# leaks <text>: how many of the secrets appear in text.
leaks() {
	local s n=0
	for s in $SECRETS; do
		case "$1" in *"$s"*) n=$((n + 1)) ;; esac
	done
	echo "$n"
}

# STORED: the bytes of the store, where the secrets must never be: the
# data directory's files (data.mdb above all), or on postgres every record
# as the database holds it (store_poke dump) beside them.
STORED=$DATA
PG=0
[ "${FLOWCGI_STORAGE_BACKEND:-lmdb}" = postgres ] && PG=1
stored() {
	[ "$PG" = 1 ] || return 0
	STORED=$T_DIR/stored
	mkdir -p "$STORED"
	"$FLOWCGI_BUILD/tools/store_poke" "$DATA" dump >"$STORED/records"
	cp -r "$DATA" "$STORED/data"
}

# data_leaks: how many of the secrets appear in the stored bytes.
data_leaks() {
	local s n=0
	stored
	for s in $SECRETS; do
		grep -raqF -- "$s" "$STORED" && n=$((n + 1))
	done
	echo "$n"
}

# run_app <key>: a blocking workflow run; sets STATUS, BODY and RUN.
run_app() {
	BODY=$(curl -sS -X POST -w '\n%{http_code}' -H "Authorization: Bearer $1" \
	    -H "$J" -d '{"inputs":{},"user":"u1","response_mode":"blocking"}' \
	    "$BASE/v1/workflows/run")
	STATUS=${BODY##*
}
	BODY=${BODY%
*}
	RUN=$(jqr .workflow_run_id)
}

# sent: what the fake received since the last reset, one line per request:
# "<path> <authorization>|<x-api-key>".
sent() {
	curl -s "$ECHO/_requests" |
	    jq -r '.[] | "\(.path) \(.authorization)|\(.x_api_key)"'
	curl -s -X POST "$ECHO/_reset" >/dev/null
}
WANT="/bearer Bearer $BEARER|
/custom |$CUSTOM
/basic Basic $BASIC64|
/env Bearer $ENVSEC|"

sed "s#ECHO#$ECHO#" "$TOP/tests/e2e/apps/secrets.yml" >"$T_DIR/app.yml"
if [ "$PG" = 1 ]; then
	stored
	[ -s "$STORED/records" ] || { ok 1 "the database has records"; exit 1; }
else
	[ -f "$DATA/data.mdb" ] || { ok 1 "the data directory has data.mdb"; exit 1; }
fi

# ---- Import: sealed at rest.
# imported <yml> <what>: imports it, checks the answer, makes a key (APP, KEY).
imported() {
	import_file "$1"
	is "$STATUS $(jqr .status)" "200 completed" "$2"
	APP=$(jqr .app_id)
	req POST "$A/$APP/api-keys"
	KEY=$(jqr .token)
}

imported "$T_DIR/app.yml" "the app with secrets imports"
is "$(data_leaks)" 0 "after import no secret is in the data directory's bytes"
stored
is "$(cat "$STORED"/data.mdb "$STORED"/records 2>/dev/null |
    grep -caF -- "$ENVSEC")" 0 "grep -c finds the env secret 0 times in the store"

# ---- Answers: masked.
req GET "$A/$APP"
is "$STATUS $(leaks "$BODY")" "200 0" "GET app holds no secret"
req GET "$A/$APP/workflows/draft"
is "$STATUS $(leaks "$BODY")" "200 0" "the draft holds no secret"
is "$(jqr '.environment_variables[] | select(.name=="api_secret") | .value')" \
    "[__HIDDEN__]" "the env secret is masked in the draft"
is "$(jqr '.environment_variables[] | select(.name=="region") | .value')" \
    "eu-west" "a plain env variable is shown"
is "$(jqr '[.graph.nodes[] | select(.data.type=="http-request") | .data.authorization.config.api_key] | join(" ")')" \
    "[__HIDDEN__] [__HIDDEN__] [__HIDDEN__] {{#env.api_secret#}}" \
    "http-request keys are masked; a reference is shown as it is"
req GET "$A?page=1&limit=100"
is "$STATUS $(leaks "$BODY")" "200 0" "the app list holds no secret"

# ---- Export: blanked without include_secret, in the clear with it.
req GET "$A/$APP/export"
jqr .data >"$T_DIR/plain.yml"
is "$STATUS $(leaks "$(cat "$T_DIR/plain.yml")")" "200 0" \
    "export without include_secret holds no secret"
is "$(grep -c "api_key: ''" "$T_DIR/plain.yml") $(grep -c 'api_key: {{#env.api_secret#}}\|api_key: .{{#env.api_secret#}}.' "$T_DIR/plain.yml")" \
    "3 1" "the keys are blanked, the reference kept"
req GET "$A/$APP/export?include_secret=true"
jqr .data >"$T_DIR/full.yml"
is "$STATUS $(leaks "$(cat "$T_DIR/full.yml")")" "200 4" \
    "export with include_secret holds every secret (the basic key as written)"
FLOWCGI_SERVER_DATA_DIR=$DATA "$FLOWCGI_BIN" export "$APP" -o - \
    >"$T_DIR/cli.yml" 2>"$T_DIR/cli.err"
is "$? $(leaks "$(cat "$T_DIR/cli.yml")")" "0 0" "flowcgi export: no secret"
FLOWCGI_SERVER_DATA_DIR=$DATA "$FLOWCGI_BIN" export "$APP" -o - --secrets \
    >"$T_DIR/cli.yml" 2>"$T_DIR/cli.err"
is "$? $(leaks "$(cat "$T_DIR/cli.yml")")" "0 4" \
    "flowcgi export --secrets: every secret"

# ---- A run: the right keys go out, none stays behind.
curl -s -X POST "$ECHO/_reset" >/dev/null
run_app "$KEY"
is "$STATUS $(jqr .data.status) $(jqr '[.data.outputs[]] | join(",")')" \
    "200 succeeded 200,200,200,200" "the run succeeds"
is "$(sent)" "$WANT" "the run sent each stored key, decrypted"
is "$(data_leaks)" 0 "after the run no secret is in the data directory"
req GET "$A/$APP/workflow-runs/$RUN/node-executions"
is "$STATUS $(leaks "$BODY")" "200 0" "node executions hold no secret"
is "$(jqr '[.data[] | select(.node_id=="h1") | .outputs.body | contains("Bearer [__HIDDEN__]")] | .[0]')" \
    true "a secret echoed in a node's output is masked in its trace"
is "$(jqr '[.data[] | select(.node_id=="h2") | .process_data.request | contains("X-Api-Key: ****")] | .[0]')" \
    true "process_data masks the key header"
req GET "$A/$APP/workflow-runs/$RUN"
is "$STATUS $(leaks "$BODY")" "200 0" "the console run detail holds no secret"
BODY=$(curl -s -H "Authorization: Bearer $KEY" "$BASE/v1/workflows/run/$RUN")
is "$(jqr .status) $(leaks "$BODY")" "succeeded 0" \
    "the service run detail holds no secret"
key_stream /v1/workflows/run '{"inputs":{},"user":"u1","response_mode":"streaming"}' \
    "$T_DIR/sse.txt"
is "$(grep -c '"workflow_finished"' "$T_DIR/sse.txt") $(leaks "$(cat "$T_DIR/sse.txt")")" \
    "1 0" "a streamed run's events hold no secret"
is "$(sent)" "$WANT" "the streamed run sent the same keys"
req POST "$A/$APP/workflows/draft/run" -H "$J" -d '{"inputs":{}}'
is "$STATUS $(leaks "$BODY")" "200 0" "a draft run's events hold no secret"
sent >/dev/null

# ---- Round trip: export(include_secret) -> import -> the same keys.
imported "$T_DIR/full.yml" "the full export imports"
run_app "$KEY"
is "$STATUS $(jqr .data.status)" "200 succeeded" "the imported copy runs"
is "$(sent)" "$WANT" "the imported copy sends the same keys"
req POST "$A/$APP/copy" -H "$J" -d '{"name":"Copy"}'
COPY=$(jqr .id)
req GET "$A/$COPY/export?include_secret=true"
is "$(leaks "$(jqr .data)")" 4 "a copy of the app keeps its secrets"
is "$(data_leaks)" 0 "still no secret in the data directory"

# ---- Blank secrets import as blank.
sed -e 's/value: ENVSEC-7f3a9c1e-env/value: '"''"'/' \
    -e "s/api_key: HTTPSEC-bearer-31d7b2/api_key: ''/" "$T_DIR/app.yml" \
    >"$T_DIR/blank.yml"
imported "$T_DIR/blank.yml" "blank secrets import"
req GET "$A/$APP/export?include_secret=true"
jqr .data >"$T_DIR/blank-out.yml"
is "$(grep -c "value: ''" "$T_DIR/blank-out.yml") $(grep -c "api_key: ''" "$T_DIR/blank-out.yml")" \
    "1 1" "they stay blank"
req GET "$A/$APP/workflows/draft"
is "$(jqr '.environment_variables[] | select(.name=="api_secret") | .value')" \
    "" "a blank secret is not shown as masked"
run_app "$KEY"
is "$STATUS $(jqr .data.status)" "200 succeeded" "an app with blank secrets runs"
sent >/dev/null

# ---- Pending imports (a newer DSL version) keep no secret either.
sed 's/^version: 0.6.0/version: 9.1.0/' "$T_DIR/full.yml" >"$T_DIR/newer.yml"
import_file "$T_DIR/newer.yml"
PEND=$(jqr .id)
is "$STATUS $(jqr .status)" "202 pending" "a newer version is held pending"
is "$(data_leaks)" 0 "a pending import keeps no secret in the clear"
req POST "$A/imports/$PEND/confirm"
APP=$(jqr .app_id)
is "$STATUS $(jqr .status)" "200 completed" "the pending import is confirmed"
req POST "$A/$APP/api-keys"
run_app "$(jqr .token)"
is "$STATUS $(jqr .data.status)" "200 succeeded" "the confirmed app runs"
is "$(sent)" "$WANT" "the confirmed app sends the same keys"

# ---- Bundles: a sandboxed copy of the app.
sed 's/^  features: {}/  features: {sandbox: {enabled: true}}/' "$T_DIR/full.yml" \
    >"$T_DIR/sandboxed.yml"
imported "$T_DIR/sandboxed.yml" "the sandboxed app imports"
SB=$APP
req GET "$A/$SB"
is "$STATUS $(jqr .runtime_type)" "200 sandboxed" "it is sandboxed"
curl -s -H "Authorization: Bearer $TOKEN" -o "$T_DIR/plain.zip" \
    "$BASE$A/$SB/bundle"
curl -s -H "Authorization: Bearer $TOKEN" -o "$T_DIR/full.zip" \
    "$BASE$A/$SB/bundle?include_secret=true"
zyml() { python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
print("".join(z.read(n).decode() for n in z.namelist() if n.endswith(".yml")))' "$1"; }
is "$(leaks "$(zyml "$T_DIR/plain.zip")")" 0 \
    "bundle export without include_secret holds no secret"
is "$(leaks "$(zyml "$T_DIR/full.zip")")" 4 \
    "bundle export with include_secret holds every secret"
req POST "$A/imports-bundle?name=Back" -H 'Content-Type: application/zip' \
    --data-binary @"$T_DIR/full.zip"
APP=$(jqr .app_id)
is "$STATUS $(jqr .status)" "200 completed" "the full bundle imports"
req POST "$A/$APP/api-keys"
run_app "$(jqr .token)"
is "$STATUS $(jqr .data.status)" "200 succeeded" "the bundle's app runs"
is "$(sent)" "$WANT" "the bundle's app sends the same keys"
# The same bundle as a newer version: held pending, no secret kept.
python3 - "$T_DIR/full.zip" "$T_DIR/newer.zip" <<'PY'
import sys, zipfile
src, dst = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2], "w")
for n in src.namelist():
    d = src.read(n)
    if n.endswith(".yml"):
        d = d.replace(b"version: 0.6.0", b"version: 9.1.0", 1)
    dst.writestr(n, d)
dst.close()
PY
req POST "$A/imports-bundle" -H 'Content-Type: application/zip' \
    --data-binary @"$T_DIR/newer.zip"
PEND=$(jqr .id)
is "$STATUS $(jqr .status)" "202 pending" "a newer bundle is held pending"
is "$(data_leaks)" 0 "a pending bundle keeps no secret in the clear"
req POST "$A/imports/$PEND/confirm"
APP=$(jqr .app_id)
is "$STATUS $(jqr .status)" "200 completed" "the pending bundle is confirmed"
req POST "$A/$APP/api-keys"
run_app "$(jqr .token)"
is "$STATUS $(jqr .data.status) $(sent | tr '\n' ' ')" \
    "200 succeeded $(echo "$WANT" | tr '\n' ' ')" \
    "the confirmed bundle's app sends the same keys"

# ---- A chatflow whose answer echoes a key: the answer goes to the user,
# the stored message and node traces keep it masked.
cat >"$T_DIR/chat.yml" <<YML
version: 0.6.0
kind: app
app: {name: Chat secrets, mode: advanced-chat}
workflow:
  environment_variables: []
  conversation_variables: []
  features: {}
  graph:
    edges:
    - {id: e-s, source: s, target: h1, sourceHandle: source, targetHandle: target}
    - {id: e-1, source: h1, target: a, sourceHandle: source, targetHandle: target}
    nodes:
    - id: s
      data: {type: start, title: Start, variables: []}
    - id: h1
      data:
        type: http-request
        title: Bearer
        method: get
        url: $ECHO/bearer
        headers: ''
        params: ''
        body: {type: none, data: []}
        authorization:
          type: api-key
          config: {type: bearer, api_key: $BEARER}
    - id: a
      data: {type: answer, title: Answer, answer: '{{#h1.body#}}'}
YML
imported "$T_DIR/chat.yml" "the chatflow with a key imports"
BODY=$(curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"hi","user":"u1","response_mode":"blocking"}' \
    "$BASE/v1/chat-messages")
is "$(jqr '.answer | fromjson | .authorization')" "Bearer $BEARER" \
    "the chatflow sent the key and answers what came back"
CONV=$(jqr .conversation_id)
BODY=$(curl -sS -H "Authorization: Bearer $KEY" \
    "$BASE/v1/messages?conversation_id=$CONV&user=u1")
is "$(jqr '.data | length') $(leaks "$BODY")" "1 0" \
    "the stored message holds no secret"
sent >/dev/null

is "$(data_leaks)" 0 "at the end no secret is in the data directory"
is "$(leaks "$(cat "$T_DIR"/fc.log)")" 0 "nor in the server's log"
