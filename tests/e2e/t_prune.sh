# t_prune.sh — run history that does not grow forever, through a real
# nginx: `flowcgi prune` with run.history_max_count on a stopped server
# keeps the newest runs of each app (with their node executions) and
# nothing else of theirs, leaves other apps alone, removes the messages of
# a conversation that is gone and a blob nothing refers to while an app
# file's blob stays; run.history_max_age beside a running server, where a
# run still running stays until it ends; the background pruner of
# `flowcgi serve` (run.prune_interval) while runs keep being answered, and
# a clean stop. No timing is asserted.
. "$(dirname "$0")/lib.sh"

J='Content-Type: application/json'
A=/console/api/apps
DATA=$T_DIR/data
POKE=${FLOWCGI_BUILD:-$(dirname "$FLOWCGI_BIN")}/tools/store_poke
[ -x "$POKE" ]
ok $? "tests/tools/store_poke is built" || exit 1

cat >"$T_DIR/fast.yml" <<'YML'
app: {mode: workflow, name: Fast}
kind: app
version: 0.6.0
workflow:
  features: {}
  graph:
    edges:
    - {id: e1, source: start, sourceHandle: source, target: end, targetHandle: target}
    nodes:
    - id: start
      data:
        type: start
        title: Start
        variables:
        - {variable: x, type: text-input, required: true, label: X}
    - id: end
      data:
        type: end
        title: End
        outputs:
        - {variable: x, value_selector: [start, x]}
YML
cat >"$T_DIR/slow.yml" <<'YML'
app: {mode: workflow, name: Slow model}
kind: app
version: 0.6.0
workflow:
  features: {}
  graph:
    edges:
    - {id: e1, source: start, sourceHandle: source, target: llm, targetHandle: target}
    - {id: e2, source: llm, sourceHandle: source, target: end, targetHandle: target}
    nodes:
    - id: start
      data:
        type: start
        title: Start
        variables:
        - {variable: q, type: text-input, required: true, label: Q}
    - id: llm
      data:
        type: llm
        title: LLM
        model: {provider: langgenius/openai/openai, name: gpt-4o-mini, mode: chat, completion_params: {}}
        prompt_template:
        - {role: user, text: '{{#start.q#}}'}
        context: {enabled: false, variable_selector: []}
    - id: end
      data:
        type: end
        title: End
        outputs:
        - {variable: a, value_selector: [llm, text]}
YML

start_fake llm LLM || exit 1
# "slow" answers after 6 s; anything else at once ("echo: ...").
llm_script '[{"match": "slow", "first_delay": 6, "text": "late"}]'

# run <key> <x>: a blocking run of a Fast app; prints its run id.
run() {
	svc "$1" POST /v1/workflows/run -H "$J" \
	    -d "{\"inputs\":{\"x\":\"$2\"},\"user\":\"u\",\"response_mode\":\"blocking\"}"
	[ "$STATUS" = 200 ] && [ "$(jqr .data.status)" = succeeded ] &&
	    jqr .workflow_run_id
}

# chat <conversation id or ""> <query>: a turn of the Echo chat app;
# prints the conversation id.
chat() {
	svc "$KC" POST /v1/chat-messages -H "$J" -d "{\"inputs\":{},\"query\":\"$2\",\"user\":\"u\",\"conversation_id\":\"$1\",\"response_mode\":\"blocking\"}"
	jqr .conversation_id
}

stop_server() {
	kill "$FC_PID" 2>/dev/null
	wait "$FC_PID" 2>/dev/null
}

# prune [env assignments...]: flowcgi prune on the data; sets OUT (its
# standard output) and ERR.
prune() {
	env FLOWCGI_SERVER_DATA_DIR="$DATA" "$@" "$FLOWCGI_BIN" prune \
	    >"$T_DIR/prune.out" 2>"$T_DIR/prune.err"
	PRUNE_RC=$?
	OUT=$(tr '\n' ' ' <"$T_DIR/prune.out")
	ERR=$(cat "$T_DIR/prune.err")
}

# total <app>: the console's count of its runs.
total() {
	req GET "$A/$1/workflow-runs?limit=100"
	jqr .total
}

# ====== run.history_max_count: flowcgi prune on a stopped server ======

FLOWCGI_RUN_PRUNE_INTERVAL=0 FLOWCGI_LLM_BASE_URL="$LLM/v1" \
    start_front || exit 1
import_app "$T_DIR/fast.yml"; F1=$APP; K1=$KEY
import_app "$T_DIR/fast.yml"; F2=$APP; K2=$KEY
import_app "$TOP/tests/e2e/apps/echo_chat.yml"; CH=$APP; KC=$KEY
IDS1=
for i in $(seq 10); do IDS1="$IDS1 $(run "$K1" "r$i")"; done
IDS2="$(run "$K2" a) $(run "$K2" b)"
is "$(echo $IDS1 | wc -w) $(echo $IDS2 | wc -w)" "10 2" \
    "ten runs of one app, two of another"
KEEP1=$(echo $IDS1 | tr ' ' '\n' | tail -3 | tr '\n' ' ')
GONE1=$(echo $IDS1 | tr ' ' '\n' | head -7 | tr '\n' ' ')
# a conversation of two turns, and one whose record goes without its
# messages (as a deletion before pruning existed could leave it)
C1=$(chat "" one)
chat "$C1" two >/dev/null
C2=$(chat "" lost)
# a file of the app (its blob is referenced) and a blob nobody refers to
printf 'kept bytes\n' >"$T_DIR/kept.txt"
req POST "$A/$F1/assets/files" -F "file=@$T_DIR/kept.txt"
FILE=$(jqr .id)
KEPT_BLOB=$(sha256sum "$T_DIR/kept.txt" | cut -d' ' -f1)
stop_server
stop_nginx
"$POKE" "$DATA" del conversations "$C2"
FREE_BLOB=$("$POKE" "$DATA" blob "bytes nothing refers to")
is "$("$POKE" "$DATA" count messages "$C2/")" 1 \
    "the lost conversation's message is there before pruning"

prune FLOWCGI_RUN_HISTORY_MAX_COUNT=3
is "$PRUNE_RC" 0 "flowcgi prune exits 0"
is "$OUT" "runs 7 node_traces 7 messages 1 imports 0 blobs 1 " \
    "it prints what it removed: 7 runs with their node traces, a message, a blob"
bad=0
for id in $GONE1; do
	"$POKE" "$DATA" has runs "$id" && bad=$((bad + 1))
	[ "$("$POKE" "$DATA" count node_runs "$id")" = 0 ] || bad=$((bad + 1))
done
is "$bad" 0 "the 7 oldest runs are gone from storage with their node executions"
is "$("$POKE" "$DATA" count runs_by_app "$F1/")" 3 \
    "the app's run index holds 3"
is "$("$POKE" "$DATA" count messages "$C2/") $("$POKE" "$DATA" count messages "$C1/")" \
    "0 2" "the lost conversation's message went, the live one's two stayed"
"$POKE" "$DATA" has blobs "$FREE_BLOB"
is $? 1 "the blob nothing refers to is gone"
"$POKE" "$DATA" has blobs "$KEPT_BLOB"
is $? 0 "the app file's blob stays"
prune FLOWCGI_RUN_HISTORY_MAX_COUNT=3
is "$OUT" "runs 0 node_traces 0 messages 0 imports 0 blobs 0 " \
    "a second pass finds nothing more"

FLOWCGI_RUN_PRUNE_INTERVAL=0 FLOWCGI_LLM_BASE_URL="$LLM/v1" \
    start_flowcgi fc || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
req GET "$A/$F1/workflow-runs?limit=100"
is "$(jqr .total) $(jqr '[.data[].id] | join(" ")')" \
    "3 $(echo $KEEP1 | tr ' ' '\n' | tac | tr '\n' ' ' | sed 's/ $//')" \
    "the console lists the newest 3 runs, newest first"
bad=0
for id in $GONE1; do
	req GET "$A/$F1/workflow-runs/$id"
	[ "$STATUS" = 404 ] || { bad=$((bad + 1)); echo "# $id: $STATUS"; }
done
is "$bad" 0 "each pruned run answers 404"
bad=0
for id in $KEEP1; do
	req GET "$A/$F1/workflow-runs/$id"
	[ "$STATUS" = 200 ] && [ "$(jqr .status)" = succeeded ] ||
	    bad=$((bad + 1))
	req GET "$A/$F1/workflow-runs/$id/node-executions"
	[ "$(jqr '[.data[].node_id] | sort | join(" ")')" = "end start" ] ||
	    { bad=$((bad + 1)); echo "# $id: $BODY"; }
done
is "$bad" 0 "each kept run answers, with its node executions"
bad=0
for id in $IDS2; do
	req GET "$A/$F2/workflow-runs/$id"
	[ "$STATUS" = 200 ] || bad=$((bad + 1))
done
is "$(total "$F2") $bad" "2 0" "the other app's runs are untouched"
svc "$KC" GET "/v1/messages?conversation_id=$C1&user=u"
is "$(jqr '[.data[].query] | join(" ")')" "one two" \
    "the live conversation's messages are listed"
curl -sf -H "Authorization: Bearer $TOKEN" -o "$T_DIR/back.txt" \
    "$BASE$A/$F1/assets/files/$FILE/download" &&
    cmp -s "$T_DIR/kept.txt" "$T_DIR/back.txt"
ok $? "the app file downloads unchanged"

# ====== run.history_max_age, and a run still running ======

import_app "$T_DIR/slow.yml"; S=$APP; KS=$KEY
OLD=$(run "$K2" old)
curl -sS -N -H "Authorization: Bearer $KS" -H "$J" \
    -d '{"inputs":{"q":"slow"},"user":"u","response_mode":"streaming"}' \
    "$BASE/v1/workflows/run" >"$T_DIR/slow.sse" 2>/dev/null &
SLOW_CURL=$!
SLOW=$(sse_first "$T_DIR/slow.sse" .workflow_run_id)
req GET "$A/$S/workflow-runs/$SLOW"
is "$(jqr .status)" running "the slow run is running"
sleep 3		# every run so far is now over 2 s old
NEW=$(run "$K2" new)
svc "$KS" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"q":"quick"},"user":"u","response_mode":"blocking"}'
QUICK=$(jqr .workflow_run_id)
# beside the running server; the slow run is past both limits
prune FLOWCGI_RUN_HISTORY_MAX_AGE=2s FLOWCGI_RUN_HISTORY_MAX_COUNT=1
is "$PRUNE_RC $(echo "$OUT" | cut -d' ' -f1-2)" "0 runs 9" \
    "the runs older than 2 s go (3 + 3 + 3 chat turns)"
case $ERR in *"kept 1 runs that are still running"*) r=0 ;; *) r=1 ;; esac
ok $r "flowcgi prune says it kept the running run"
req GET "$A/$F2/workflow-runs/$OLD"
is "$STATUS" 404 "an old run is gone"
req GET "$A/$F2/workflow-runs/$NEW"
is "$STATUS $(jqr .status)" "200 succeeded" "a newer one stays"
req GET "$A/$S/workflow-runs/$SLOW"
is "$STATUS $(jqr .status)" "200 running" \
    "the running run stays although it is past both limits"
svc "$KC" GET "/v1/messages?conversation_id=$C1&user=u"
is "$(jqr '.data | length')" 2 \
    "the conversation's messages outlive its runs"
wait "$SLOW_CURL"
req GET "$A/$S/workflow-runs/$SLOW"
is "$(jqr .status) $(jqr .outputs.a)" "succeeded late" \
    "the slow run finished and was stored whole"
prune FLOWCGI_RUN_HISTORY_MAX_COUNT=1
is "$(echo "$OUT" | cut -d' ' -f1-2)" "runs 1" \
    "once finished it goes (past the newest 1 of its app)"
req GET "$A/$S/workflow-runs/$SLOW"
is "$STATUS" 404 "the slow run is gone"
req GET "$A/$S/workflow-runs/$QUICK"
is "$STATUS" 200 "the app's newest run stays"
stop_server
stop_nginx

# ====== The background pruner of flowcgi serve ======

FLOWCGI_RUN_HISTORY_MAX_COUNT=3 FLOWCGI_RUN_PRUNE_INTERVAL=1 \
    FLOWCGI_LLM_BASE_URL="$LLM/v1" start_flowcgi bg || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
# runs and /healthz keep being answered while it prunes every second
IDS=
bad=0
for i in $(seq 30); do
	id=$(run "$K1" "b$i") || bad=$((bad + 1))
	IDS="$IDS $id"
	code=$(curl -s -o /dev/null -w '%{http_code}' "$BASE/healthz")
	[ "$code" = 200 ] || bad=$((bad + 1))
done
is "$bad" 0 "30 runs and 30 health checks answered while the pruner ran"
i=0
while [ "$(total "$F1")" != 3 ] && [ $i -lt 100 ]; do
	i=$((i + 1)); sleep 0.1
done
req GET "$A/$F1/workflow-runs?limit=100"
is "$(jqr .total) $(jqr '[.data[].id] | join(" ")')" \
    "3 $(echo $IDS | tr ' ' '\n' | tail -3 | tac | tr '\n' ' ' | sed 's/ $//')" \
    "the background pruner kept the newest 3 runs"
grep -q 'prune: removed [0-9]* runs' "$T_DIR/bg.log"
ok $? "it logged what it removed"
req GET "$A/$F2/workflow-runs/$NEW"
is "$STATUS" 200 "another app's newest run stays"
kill "$FC_PID"
wait "$FC_PID"
is "$?" 0 "SIGTERM stops the server (and its pruner) with status 0"
grep -q 'stopped$' "$T_DIR/bg.log"
ok $? "it logged that it stopped"
