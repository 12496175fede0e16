#!/usr/bin/env bash
# concurrency.sh <build dir> — many simultaneous runs and idle sockets on one
# flowcgi process with its default settings, behind a real nginx: BENCH_STREAMS
# (1000) streaming chats against the fake model (each answer paced over 3 s),
# then BENCH_IDLE (1000) FastCGI connections that send nothing. Reports how
# many streams completed, /healthz latency p50 / p99 during each load as a
# ratio to the same probe on the idle server (the baseline, measured first in
# this same run), RSS at its peak against RSS idle, and threads at peak.
# Figures are reported, not asserted (targets: p99 under 50 ms, RSS under
# 200 MB). Exits non-zero only when something fails to run.
set -u
BUILD=$(cd "$1" && pwd)
FLOWCGI_BIN=$BUILD/flowcgi
. "$(dirname "$0")/../e2e/lib.sh"
trap 'for p in $FLOWCGI_PIDS $NGINX_PID $SAMPLER; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T_DIR"' EXIT
STREAMS=${BENCH_STREAMS:-1000}
IDLE=${BENCH_IDLE:-1000}
PROBES=${BENCH_PROBES:-200}
TOOLS=$TOP/tests/tools
SAMPLER=

# Room for every socket: the fake, nginx, flowcgi and the clients.
ulimit -n "$(ulimit -Hn)" 2>/dev/null
start_fake llm LLM >/dev/null || exit 1
ANSWER=$(printf 'w%d ' $(seq 30))
jq -cn --arg a "$ANSWER" '[{chunks: ($a | split(" ") | map(select(. != "")) | map(. + " ")), delay: 0.1, repeat: true}]' |
    curl -s -X POST --data-binary @- "$LLM/_script" >/dev/null
FC_LOG_LEVEL=warn FLOWCGI_LLM_BASE_URL=$LLM/v1 start_flowcgi fc >/dev/null || exit 1
nginx_start 2 8192 "/" "127.0.0.1:$FC_PORT" >/dev/null || exit 1
TOKEN=$(admin_token)
import_app "$TOP/tests/e2e/apps/chat_stream.yml" >/dev/null

# sample: peak VmRSS (kB) and Threads of flowcgi, every 50 ms, into a file.
sample() {
	local rss=0 thr=0 r t
	while kill -0 "$FC_PID" 2>/dev/null; do
		r=$(awk '/^VmRSS:/ {print $2}' "/proc/$FC_PID/status" 2>/dev/null)
		t=$(awk '/^Threads:/ {print $2}' "/proc/$FC_PID/status" 2>/dev/null)
		[ -n "$r" ] && [ "$r" -gt "$rss" ] && rss=$r
		[ -n "$t" ] && [ "$t" -gt "$thr" ] && thr=$t
		echo "$rss $thr" >"$T_DIR/peak.tmp" && mv "$T_DIR/peak.tmp" "$T_DIR/peak"
		sleep 0.05
	done
}
pct() {	# pct <json file> <key> <0-100>: percentile of a list of ms
	jq -r --arg k "$2" --argjson p "$3" '.[$k] | sort |
	    .[((length - 1) * $p / 100 | floor)]' "$1"
}

RSS0=$(awk '/^VmRSS:/ {print $2}' "/proc/$FC_PID/status")
python3 "$TOOLS/stream_load.py" --base "$BASE" --key "$KEY" --n 0 \
    --expect x --probes "$PROBES" >"$T_DIR/base.json" || exit 1
sample & SAMPLER=$!
python3 "$TOOLS/stream_load.py" --base "$BASE" --key "$KEY" --n "$STREAMS" \
    --expect "$ANSWER" --token "$TOKEN" --probes "$PROBES" --timeout 300 \
    >"$T_DIR/load.json" || exit 1
read -r RSS_PEAK THR_PEAK <"$T_DIR/peak"
kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null; SAMPLER=

rm -f "$T_DIR/ready"
THR_BEFORE=$(awk '/^Threads:/ {print $2}' "/proc/$FC_PID/status")
python3 "$TOOLS/idle_conns.py" --port "$FC_PORT" --n "$IDLE" \
    --ready "$T_DIR/ready" --wait-close 10 >"$T_DIR/idle.json" &
IDLER=$!
i=0; while [ ! -e "$T_DIR/ready" ]; do i=$((i + 1)); [ $i -gt 600 ] && break; sleep 0.05; done
THR_IDLE=$(awk '/^Threads:/ {print $2}' "/proc/$FC_PID/status")
RSS_IDLE=$(awk '/^VmRSS:/ {print $2}' "/proc/$FC_PID/status")
python3 "$TOOLS/stream_load.py" --base "$BASE" --key "$KEY" --n 0 \
    --expect x --probes "$PROBES" >"$T_DIR/idleprobe.json" || exit 1
wait "$IDLER"

B50=$(pct "$T_DIR/base.json" healthz_ms 50); B99=$(pct "$T_DIR/base.json" healthz_ms 99)
L50=$(pct "$T_DIR/load.json" healthz_ms 50); L99=$(pct "$T_DIR/load.json" healthz_ms 99)
I50=$(pct "$T_DIR/idleprobe.json" healthz_ms 50); I99=$(pct "$T_DIR/idleprobe.json" healthz_ms 99)
echo
echo "Concurrency: one process, default settings, nginx in front"
printf '  %d streaming chats at once (3 s answers): %s started, %s completed, %s whole, in %s s\n' \
    "$STREAMS" "$(jq -r .started "$T_DIR/load.json")" \
    "$(jq -r .completed "$T_DIR/load.json")" \
    "$(jq -r .answers_ok "$T_DIR/load.json")" "$(jq -r .seconds "$T_DIR/load.json")"
awk -v b50="$B50" -v b99="$B99" -v l50="$L50" -v l99="$L99" 'BEGIN {
    printf "  /healthz idle (baseline): p50 %.2f ms, p99 %.2f ms\n", b50, b99
    printf "  /healthz during the streams: p50 %.2f ms, p99 %.2f ms (%.1fx, %.1fx the baseline; target p99 < 50 ms)\n", l50, l99, (b50 > 0 ? l50 / b50 : 0), (b99 > 0 ? l99 / b99 : 0) }'
printf '  GET /console/api/apps during the streams: p50 %s ms, p99 %s ms\n' \
    "$(pct "$T_DIR/load.json" console_ms 50)" "$(pct "$T_DIR/load.json" console_ms 99)"
awk -v a="$RSS0" -v p="$RSS_PEAK" -v t="$THR_PEAK" 'BEGIN {
    printf "  RSS idle %.1f MB, at peak %.1f MB (%.1fx; target < 200 MB); threads at peak %d\n", a / 1024, p / 1024, (a > 0 ? p / a : 0), t }'
printf '  %d idle FastCGI sockets: threads %s before, %s while held; RSS %.1f MB; ' \
    "$IDLE" "$THR_BEFORE" "$THR_IDLE" \
    "$(awk -v r="$RSS_IDLE" 'BEGIN { print r / 1024 }')"
awk -v b50="$B50" -v b99="$B99" -v l50="$I50" -v l99="$I99" 'BEGIN {
    printf "/healthz p50 %.2f ms, p99 %.2f ms (%.1fx, %.1fx the baseline)\n", l50, l99, (b50 > 0 ? l50 / b50 : 0), (b99 > 0 ? l99 / b99 : 0) }'
