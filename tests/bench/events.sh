#!/usr/bin/env bash
# events.sh <build dir> — what a run's event log (run.event_log, for GET
# /api/workflow/{task_id}/events) costs a streamed workflow run: the same
# run (an LLM node streaming BENCH_EVENTS_CHUNKS chunks, default 2000, from
# the fake model) through /v1/workflows/run on two flowcgi processes of one
# data directory, each behind its own nginx, one keeping the log (1m) and
# one not (0); the two alternate, BENCH_EVENTS_RUNS each (default 20), and
# the medians of the whole run are shown with their ratio (log / none).
# BENCH_EVENTS_LOG sets the first side's run.event_log (0: both without,
# the machine's own noise between two equal sides).
set -u
BUILD=$(cd "$1" && pwd)
FLOWCGI_BIN=$BUILD/flowcgi
. "$(dirname "$0")/../e2e/lib.sh"
trap 'for p in $FLOWCGI_PIDS $NG_PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T_DIR"' EXIT
RUNS=${BENCH_EVENTS_RUNS:-20}
CHUNKS=${BENCH_EVENTS_CHUNKS:-2000}
NG_PIDS=

start_fake llm LLM >/dev/null || exit 1
python3 -c "import json,sys; n=int(sys.argv[1]); print(json.dumps({'responses': [{'repeat': True, 'chunks': ['tok%d ' % i for i in range(n)]}]}))" "$CHUNKS" |
    curl -s -X POST --data-binary @- "$LLM/_script" >/dev/null
side() {	# side <name> <event_log>: flowcgi and its nginx; sets <name>_BASE
	local keep=$T_DIR
	FLOWCGI_RUN_EVENT_LOG=$2 FLOWCGI_LOG_LEVEL=warn FLOWCGI_LLM_BASE_URL=$LLM/v1 \
	    start_flowcgi "$1" >/dev/null || exit 1
	T_DIR=$keep/$1-side
	mkdir -p "$T_DIR"
	start_nginx "127.0.0.1:$FC_PORT" >/dev/null || exit 1
	T_DIR=$keep
	NG_PIDS="$NG_PIDS $NGINX_PID"
	eval "$1_BASE=\$BASE"
}
FC_DATA=$T_DIR/data side logged "${BENCH_EVENTS_LOG:-1m}"
FC_DATA=$T_DIR/data side bare 0
BASE=$logged_BASE
TOKEN=$(admin_token)
import_file "$TOP/tests/e2e/apps/observe.yml"
APP=$(jqr .app_id)
req POST "/console/api/apps/$APP/api-keys"
KEY=$(jqr .token)

python3 - "$logged_BASE" "$bare_BASE" "$KEY" "$RUNS" "$CHUNKS" "${BENCH_EVENTS_LOG:-1m}" <<'PY'
import json, statistics, sys, time, urllib.request
a, b, key, runs, chunks, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
def run(base):
    body = json.dumps({"inputs": {"q": "hi"}, "user": "bench", "response_mode": "streaming"}).encode()
    q = urllib.request.Request(base + "/v1/workflows/run", data=body, headers={
        "Authorization": "Bearer " + key, "Content-Type": "application/json"})
    t0 = time.monotonic()
    n = 0
    with urllib.request.urlopen(q) as r:
        for line in r:
            if line.startswith(b"data: ") and b'"text_chunk"' in line:
                n += 1
    assert n >= chunks, n
    return time.monotonic() - t0
run(a); run(b)	# warm
ta, tb = [], []
for i in range(runs):
    ta.append(run(a)); tb.append(run(b))
ma, mb = statistics.median(ta), statistics.median(tb)
print("events: a streamed workflow run of %d chunks, median of %d runs each" % (chunks, runs))
print("  run.event_log %s: %.1f ms; 0: %.1f ms; ratio %.3f" % (size, ma * 1000, mb * 1000, ma / mb))
PY
