#!/bin/bash
# t_metrics.sh — GET /metrics through nginx, scraped by a real Prometheus.
#
# Two flowcgi processes share one data directory behind one nginx upstream
# (round robin), with metrics on, a metrics token and metrics shared every
# second. Runs of a workflow (start, template, LLM against the fake model,
# end) go through nginx; /metrics answers 401 without a token, 200 with the
# metrics token or the admin token, in a format promtool accepts, with the
# series of both processes whichever one answers. Then Prometheus (Debian's
# prometheus package) scrapes flowcgi through nginx with the token, and its
# HTTP API must give the run counter and the LLM node's duration histogram
# with the counts of the runs made. Request ids: X-Request-Id comes back,
# lands in the run's record, and in the JSON log lines (log.format json).
. "$(dirname "$0")/lib.sh"

N=5
MTOKEN=metrics-secret-$$
start_fake llm LLM || exit 1
export FLOWCGI_LLM_BASE_URL=$LLM/v1
export FLOWCGI_METRICS_ENABLED=true FLOWCGI_METRICS_TOKEN=$MTOKEN
export FLOWCGI_METRICS_SHARE_INTERVAL=1
export FLOWCGI_LOG_FORMAT=json FLOWCGI_LOG_REQUESTS=true
start_flowcgi fc1 || exit 1
P1=$FC_PORT
start_flowcgi fc2 || exit 1
P2=$FC_PORT
start_nginx "127.0.0.1:$P1" "127.0.0.1:$P2" || exit 1
TOKEN=$(admin_token)

import_app "$TOP/tests/e2e/apps/observe.yml"
[ -n "$KEY" ] && [ "$KEY" != null ] || { ok 1 "app imported"; exit 1; }

# ====== Runs, request ids ======

good=0
for i in $(seq 1 $N); do
	svc "$KEY" POST /v1/workflows/run -H 'Content-Type: application/json' \
	    -H "X-Request-Id: req-$i-$$" -d "{\"inputs\":{\"q\":\"n$i\"},
	    \"user\":\"u1\",\"response_mode\":\"blocking\"}"
	[ "$STATUS" = 200 ] && [ "$(jqr .data.status)" = succeeded ] &&
	    good=$((good + 1))
	[ "$i" = 1 ] && { RUN1=$(jqr .workflow_run_id); H1=$HDRS; }
done
is "$good" "$N" "$N runs through nginx succeed"
ok "$(grep -qi "^x-request-id: req-1-$$\$" <<<"$H1"; echo $?)" \
    "the client's X-Request-Id comes back"
req GET /healthz
ok "$(grep -qiE '^x-request-id: [0-9a-f-]{36}$' <<<"$HDRS"; echo $?)" \
    "a request without one gets a new X-Request-Id"
req GET "/console/api/apps/$APP/workflow-runs/$RUN1"
is "$(jqr .request_id)" "req-1-$$" "the run's record keeps its request id"
line=$(cat "$T_DIR"/fc1.log "$T_DIR"/fc2.log |
    grep -F "\"request_id\":\"req-1-$$\"" | grep -F '"status":200' | head -1)
is "$(jq -r '[.level, .route, .run_id, .app, .method,
    (.duration_ms | type)] | join(" ")' <<<"$line" 2>/dev/null)" \
    "info /v1/workflows/run $RUN1 $APP POST number" \
    "a JSON log line per request: level, route, run id, app, duration"
bad=$(cat "$T_DIR"/fc1.log "$T_DIR"/fc2.log | grep -v '^#' |
    while IFS= read -r l; do jq -e .time >/dev/null 2>&1 <<<"$l" ||
    echo "$l"; done | head -3)
is "$bad" "" "every log line is a JSON object with a time"

# ====== /metrics ======

TOKEN= req GET /metrics
is "$STATUS" 401 "/metrics without a token is 401"
TOKEN=wrong req GET /metrics
is "$STATUS" 401 "/metrics with a wrong token is 401"
# samples <metric filter>: the sum over every instance of matching samples
samples() { awk -v f="$1" 'index($0, f) == 1 { s += $NF } END { print s + 0 }' \
    "$T_DIR/metrics.txt"; }
FIN="flowcgi_runs_finished_total{app=\"$APP\",mode=\"workflow\",status=\"succeeded\""
# The other process's series are as fresh as its last write (every
# metrics.share_interval, 1 s here): wait for both to have counted.
i=0
while :; do
	TOKEN=$MTOKEN req GET /metrics
	printf '%s\n' "$BODY" >"$T_DIR/metrics.txt"
	[ "$(samples "$FIN")" = "$N" ] || [ $i -ge 50 ] && break
	i=$((i + 1)); sleep 0.1
done
is "$STATUS" 200 "/metrics with metrics.token"
ok "$(grep -qi '^content-type: text/plain; version=0.0.4' <<<"$HDRS"; \
    echo $?)" "in the text exposition format 0.0.4"
req GET /metrics
is "$STATUS" 200 "/metrics with the admin token"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$T_DIR/metrics.txt" >"$T_DIR/promtool.out" 2>&1
	# promtool lints names too; only a parse error is a failure
	ok "$(! grep -qi 'error' "$T_DIR/promtool.out"; echo $?)" \
	    "promtool parses it: $(head -c 200 "$T_DIR/promtool.out")"
else
	skip "promtool not installed (Debian package prometheus)"
fi
is "$(samples "$FIN")" "$N" "runs finished, summed over both processes"
is "$(samples 'flowcgi_node_duration_seconds_count{node_type="llm",status="succeeded"')" \
    "$N" "LLM node executions in the node duration histogram"
is "$(grep -c '^flowcgi_runs_in_progress{' "$T_DIR/metrics.txt")" 2 \
    "one series per process (instance label)"
is "$(grep -c '^# TYPE flowcgi_runs_finished_total counter' \
    "$T_DIR/metrics.txt")" 1 "one TYPE line per metric"
ok "$(awk '/^flowcgi_llm_tokens_total\{provider="openai",model="gpt-4o-mini",type="prompt"/ { s += $NF } END { exit !(s > 0) }' \
    "$T_DIR/metrics.txt"; echo $?)" "prompt tokens counted by provider and model"

# ====== Prometheus ======

if ! command -v prometheus >/dev/null 2>&1; then
	skip "prometheus not installed (Debian package prometheus)"
	skip "prometheus: node duration histogram"
	skip "prometheus: target up"
	exit 0
fi
PROM_PORT=$(free_port)
mkdir -p "$T_DIR/prom"
cat >"$T_DIR/prom/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
- job_name: flowcgi
  metrics_path: /metrics
  authorization:
    credentials: $MTOKEN
  static_configs:
  - targets: ['127.0.0.1:$NG_PORT']
YML
prometheus --config.file="$T_DIR/prom/prometheus.yml" \
    --storage.tsdb.path="$T_DIR/prom/data" \
    --web.listen-address="127.0.0.1:$PROM_PORT" \
    >"$T_DIR/prom/prometheus.log" 2>&1 &
FLOWCGI_PIDS="$FLOWCGI_PIDS $!"
wait_port "$PROM_PORT" || { ok 1 "prometheus started"; exit 1; }

# pq <promql>: the value of a one-element vector query, or "".
pq() {
	curl -s --data-urlencode "query=$1" \
	    "http://127.0.0.1:$PROM_PORT/api/v1/query" |
	    jq -r '.data.result[0].value[1] // empty' 2>/dev/null
}
# pq_wait <promql> <want>: polls for up to 30 s until the value is <want>.
pq_wait() {
	local i=0 v
	while [ $i -lt 150 ]; do
		v=$(pq "$1")
		[ "$v" = "$2" ] && break
		i=$((i + 1)); sleep 0.2
	done
	echo "$v"
}
is "$(pq_wait 'up{job="flowcgi"}' 1)" 1 "prometheus scrapes flowcgi through nginx"
is "$(pq_wait "sum(flowcgi_runs_finished_total{app=\"$APP\",status=\"succeeded\"})" "$N")" \
    "$N" "prometheus has the run counter"
is "$(pq_wait 'sum(flowcgi_node_duration_seconds_bucket{node_type="llm",le="+Inf"})' "$N")" \
    "$N" "prometheus has the LLM node's duration histogram (+Inf bucket)"
is "$(pq_wait 'sum(flowcgi_node_duration_seconds_count{node_type="template-transform"})' "$N")" \
    "$N" "and the template node's"
v=$(pq 'sum(flowcgi_node_duration_seconds_bucket{node_type="llm",le="120"}) - sum(flowcgi_node_duration_seconds_bucket{node_type="llm",le="0.0005"})')
ok "$([ -n "$v" ] && awk -v v="$v" 'BEGIN { exit !(v >= 0) }'; echo $?)" \
    "histogram buckets are cumulative"
