#!/usr/bin/env bash
# observe.sh <build dir> — `make bench`: what metrics and tracing cost a run.
#
# Two flowcgi processes with the same settings but these, each on its own
# data directory behind its own nginx: "off" (metrics.enabled false, no
# tracing.otlp_endpoint: the baseline) and "on" (metrics on, every run
# traced to an OTLP endpoint: an nginx location that answers 200, standing
# in for a collector on another machine, so that only flowcgi's own cost
# is measured; log.format json). The ten-node workflow of run.sh
# (ten_nodes.yml, no code, no model: the engine's overhead is the largest
# share of a run there), POST /v1/workflows/run blocking, wrk with the same
# -t/-c/-d on both, after a warm-up each, in alternating rounds (off on /
# on off / ...). Prints runs/s of each (median over the rounds) and on /
# off; also how many spans were exported, to show tracing was at work.
# Reported, not asserted (target: on / off >= 0.95). Exits non-zero only
# when something fails to run or a run answers anything but 2xx.
#
# Settings: BENCH_CONNECTIONS (16), BENCH_DURATION (10s), BENCH_WARMUP
# (3s), BENCH_ROUNDS (3), BENCH_WRK_THREADS (2). KEEP=1 keeps the logs.
set -u
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 <build dir>" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
FLOWCGI_BIN=$BUILD/flowcgi
CONNS=${BENCH_CONNECTIONS:-16}
DURATION=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-3s}
ROUNDS=${BENCH_ROUNDS:-3}
WRK_THREADS=${BENCH_WRK_THREADS:-2}

# shellcheck source=../e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"
# shellcheck source=bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
ROOT_DIR=$T_DIR
NG_PIDS=
trap 'rc=$?; bench_cleanup; exit $rc' EXIT
trap 'exit 1' INT TERM
for t in wrk nginx curl jq; do
	command -v "$t" >/dev/null 2>&1 || die "'$t' is not installed"
done

# ====== The collector stand-in ======

S_PORT=$(free_port)
mkdir -p "$ROOT_DIR/sink/tmp"
cat >"$ROOT_DIR/sink/nginx.conf" <<NGX
worker_processes 1;
daemon off;
pid $ROOT_DIR/sink/nginx.pid;
error_log $ROOT_DIR/sink/error.log warn;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path $ROOT_DIR/sink/tmp;
	client_max_body_size 64m;
	server {
		listen 127.0.0.1:$S_PORT;
		location = /v1/traces { return 200 '{}'; }
	}
}
NGX
nginx -p "$ROOT_DIR/sink" -c "$ROOT_DIR/sink/nginx.conf" >/dev/null 2>&1 &
NG_PIDS="$NG_PIDS $!"
wait_port "$S_PORT" || die "the collector stand-in did not start"

# ====== Two servers ======

export FLOWCGI_SERVER_WORKERS=16
FC_LOG_LEVEL=warn
FC_DATA=$ROOT_DIR/off-data start_flowcgi off || die "flowcgi (off) did not start"
OFF_PID=$FC_PID
nginx_side off "127.0.0.1:$FC_PORT"
OFF_BASE=$BASE
FLOWCGI_METRICS_ENABLED=true FLOWCGI_LOG_FORMAT=json \
FLOWCGI_TRACING_OTLP_ENDPOINT="http://127.0.0.1:$S_PORT/v1/traces" \
FC_DATA=$ROOT_DIR/on-data start_flowcgi on || die "flowcgi (on) did not start"
ON_PID=$FC_PID
nginx_side on "127.0.0.1:$FC_PORT"
ON_BASE=$BASE

jq -n --rawfile y "$(dirname "$0")/ten_nodes.yml" \
    '{mode: "yaml-content", yaml_content: $y}' >"$ROOT_DIR/imp.json"
# app_key <side> <base>: imports the workflow there; prints its API key.
app_key() {
	local id
	BASE=$2
	TOKEN=$(FLOWCGI_SERVER_DATA_DIR=$ROOT_DIR/$1-data "$FLOWCGI_BIN" token)
	req POST /console/api/apps/imports -H 'Content-Type: application/json' \
	    --data-binary @"$ROOT_DIR/imp.json"
	id=$(jqr .app_id)
	[ -n "$id" ] && [ "$id" != null ] || die "import ($1): $BODY"
	req POST "/console/api/apps/$id/api-keys"
	jqr .token
}
OFF_KEY=$(app_key off "$OFF_BASE")
ON_KEY=$(app_key on "$ON_BASE")
ON_TOKEN=$(FLOWCGI_SERVER_DATA_DIR=$ROOT_DIR/on-data "$FLOWCGI_BIN" token)

cat >"$ROOT_DIR/run.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"inputs":{"q":"hello"},"user":"bench","response_mode":"blocking"}'
wrk.headers["Content-Type"] = "application/json"
LUA
# load <side> <label> <duration>
load() {
	local f=$ROOT_DIR/$2-$1.txt url key
	case $1 in
	off) url=$OFF_BASE; key=$OFF_KEY ;;
	on) url=$ON_BASE; key=$ON_KEY ;;
	esac
	wrk -t"$WRK_THREADS" -c"$CONNS" -d"$3" --latency -s "$ROOT_DIR/run.lua" \
	    -H "Authorization: Bearer $key" "$url/v1/workflows/run" >"$f" 2>&1 ||
	    die "wrk failed ($1): $(cat "$f")"
	grep -q 'Non-2xx or 3xx responses' "$f" &&
	    die "$1 answered errors under load: $(grep 'Non-2xx' "$f")"
	grep -q '^Requests/sec:' "$f" || die "no result from wrk: $(cat "$f")"
}

BUSY=$(cpu_busy)
load off warm "$WARMUP"
load on warm "$WARMUP"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	if [ $((r % 2)) = 1 ]; then order="off on"; else order="on off"; fi
	for side in $order; do load "$side" "round$r" "$DURATION"; done
	r=$((r + 1))
done
kill -0 "$OFF_PID" && kill -0 "$ON_PID" || die "a flowcgi died under load"
med() { for f in "$ROOT_DIR"/round*-"$1".txt; do wrk_rps "$f"; done | median; }
OFF_RPS=$(med off)
ON_RPS=$(med on)
SPANS=$(curl -s -H "Authorization: Bearer $ON_TOKEN" "$ON_BASE/metrics" |
    awk '/^flowcgi_trace_spans_total\{outcome="exported"/ { s += $NF }
    END { print s + 0 }')
RUNS=$(curl -s -H "Authorization: Bearer $ON_TOKEN" "$ON_BASE/metrics" |
    awk '/^flowcgi_runs_finished_total\{/ { s += $NF } END { print s + 0 }')

echo
echo "Metrics and tracing: 10-node workflow, POST /v1/workflows/run" \
    "blocking, median of $ROUNDS rounds of wrk -c$CONNS -d$DURATION"
printf '  %-34s %10.1f runs/s\n' "off (baseline)" "$OFF_RPS"
printf '  %-34s %10.1f runs/s\n' "metrics + tracing + JSON logs on" "$ON_RPS"
awk -v a="$ON_RPS" -v b="$OFF_RPS" 'BEGIN {
	printf "  %-34s %10.3f  (target >= 0.95)\n", "on / off", (b > 0 ? a / b : 0) }'
echo "  the traced server counted $RUNS runs and exported $SPANS spans"
awk -v b="$BUSY" -v n="$(getconf _NPROCESSORS_ONLN)" 'BEGIN { if (b + 0 >= 0.10)
    printf "  note: %.0f%% of the %d CPUs were busy before the bench " \
    "started; other load makes the figures noisy\n", b * 100, n }'
exit 0
