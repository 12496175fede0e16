#!/usr/bin/env bash
# llm.sh <build dir> — streaming from a model through flowcgi and nginx,
# against the fake model's own rate in the same run: the time from the
# fake's first token to the first answer event a client sees, and the
# tokens per second relayed for a long answer (target: 80% or more of the
# fake's direct rate). The relay runs twice: with server.stream_flush_ms at
# its default (events that follow closely share a flush) and at 0 (every
# event flushed on its own) as a baseline.
#
# The rate counts from the first token to the last one; the time from the
# last token to the end of the stream (the run's records being written,
# workflow_finished, message_end) is shown apart. The client reads what
# arrives in blocks and splits the lines itself, the same way for both
# paths, as an efficient SSE client does: reading line by line through
# Python's chunked-transfer decoding costs more per event than the relay.
# The three are measured in turns, three rounds, so that the load of a
# shared machine falls on each alike; each relay runs in a fresh flowcgi
# after one short answer.
set -u
BUILD=$(cd "$1" && pwd)
FLOWCGI_BIN=$BUILD/flowcgi
. "$(dirname "$0")/../e2e/lib.sh"
trap 'for p in $FLOWCGI_PIDS $NGINX_PID; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T_DIR"' EXIT
TOKENS=${BENCH_LLM_TOKENS:-20000}		# unpaced
PACED_TOKENS=${BENCH_LLM_PACED_TOKENS:-2000}
DELAY=${BENCH_LLM_FIRST_DELAY:-0.3}
WINDOW=${BENCH_LLM_FLUSH_MS:-}			# "" = the default

python3 "$TOP/tests/fakes/fake_llm.py" >"$T_DIR/fake.port" 2>/dev/null &
FLOWCGI_PIDS="$FLOWCGI_PIDS $!"
i=0; while [ ! -s "$T_DIR/fake.port" ]; do i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.05; done
LLM="http://127.0.0.1:$(head -1 "$T_DIR/fake.port")"
script() {	# script <seconds between tokens> <tokens>; "warm" answers "ok"
	python3 -c "import json; print(json.dumps({'responses': [{'match': 'warm', 'repeat': True, 'text': 'ok'}, {'repeat': True, 'first_delay': $DELAY, 'delay': $1, 'chunks': ['t%d ' % i for i in range($2)]}]}))" |
	    curl -s -X POST --data-binary @- "$LLM/_script" >/dev/null
}
# serve <stream_flush_ms or "">: (re)starts flowcgi on FC_PORT, where nginx
# passes requests, on the same data directory; warm makes its first run.
serve() {
	if [ -n "${FC_PID:-}" ]; then
		kill "$FC_PID"; wait "$FC_PID" 2>/dev/null
	fi
	env ${1:+FLOWCGI_SERVER_STREAM_FLUSH_MS=$1} \
	    FLOWCGI_SERVER_DATA_DIR="$T_DIR/data" FLOWCGI_LOG_LEVEL=warn \
	    FLOWCGI_LLM_BASE_URL="$LLM/v1" \
	    "$FLOWCGI_BIN" serve --listen "127.0.0.1:$FC_PORT" \
	    >>"$T_DIR/fc.log" 2>&1 &
	FC_PID=$!
	FLOWCGI_PIDS="$FLOWCGI_PIDS $FC_PID"
	wait_port "$FC_PORT"
}
FC_PORT=$(free_port)
serve "$WINDOW"
start_nginx "127.0.0.1:$FC_PORT" >/dev/null
TOKEN=$(admin_token)
jq -n --rawfile y "$TOP/tests/e2e/apps/chat_llm.yml" '{mode: "yaml-content", yaml_content: $y}' >"$T_DIR/imp.json"
req POST /console/api/apps/imports -H 'Content-Type: application/json' --data-binary @"$T_DIR/imp.json"
APP=$(jqr .app_id)
req POST "/console/api/apps/$APP/api-keys"
KEY=$(jqr .token)

# measure <url> <body> <header...>: "first_token_s tokens_per_s tokens
# last_token_to_end_s", where a token is a chunk / message event carrying
# text.
measure() {
	python3 - "$@" <<'PY'
import json, sys, time, urllib.request
url, body = sys.argv[1], sys.argv[2].encode()
req = urllib.request.Request(url, data=body, method="POST")
req.add_header("Content-Type", "application/json")
for h in sys.argv[3:]:
    k, v = h.split(": ", 1)
    req.add_header(k, v)
t0 = time.monotonic(); first = last = None; n = 0; rest = b""
with urllib.request.urlopen(req) as r:
    while True:
        block = r.read1(65536)
        if not block:
            break
        lines = (rest + block).split(b"\n")
        rest = lines.pop()
        for raw in lines:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            ev = json.loads(line[6:])
            text = ev.get("answer") if ev.get("event") == "message" else \
                (ev.get("choices") or [{}])[0].get("delta", {}).get("content")
            if text:
                n += 1
                last = time.monotonic()
                if first is None:
                    first = last
t1 = time.monotonic()
print("%.4f %.1f %d %.4f" % (first - t0, (n - 1) / (last - first)
    if last > first else 0, n, t1 - last))
PY
}
best() {	# best <file>: of its runs, the lowest first token, the highest rate
	sort -k2 -n -r "$1" | awk '
	    NR == 1 { f = $1; best = $0; sub(/^[^ ]+/, "", best) }
	    $1 < f { f = $1 }
	    END { print f best }'
}
direct() {
	measure "$LLM/v1/chat/completions" '{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}'
}
relay() {	# relay [query]
	measure "$BASE/v1/chat-messages" '{"inputs":{},"query":"'"${1:-go}"'","user":"b","response_mode":"streaming"}' "Authorization: Bearer $KEY"
}
# report <label> <direct figures> <relay figures> <target>
report() {
	set -- "$1" $2 $3 "$4"
	awk -v what="$1" -v df="$2" -v dr="$3" -v ff="$6" -v fr="$7" \
	    -v n="$8" -v end="$9" -v target="${10}" 'BEGIN {
		printf "  %-34s first token %6.1f ms (+%.1f), %7.0f tokens/s = %.2f of direct%s; %d message events, last token to end %.1f ms\n",
		    what, ff * 1000, (ff - df) * 1000, fr, (dr > 0 ? fr / dr : 0),
		    target != "" ? sprintf(" (target >= %s)", target) : "",
		    n, end * 1000
	}'
}
echo
echo "Streaming an answer from the fake model through nginx and flowcgi (first token after ${DELAY}s), best of 3 rounds"
echo "machine: $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for pace in ${BENCH_LLM_PACE:-0.001 0}; do
	if [ "$pace" = 0 ]; then n=$TOKENS; else n=$PACED_TOKENS; fi
	script "$pace" "$n"
	: >"$T_DIR/d"; : >"$T_DIR/f"; : >"$T_DIR/z"
	# Rounds of the three, so that the load of the machine falls on all.
	for _ in 1 2 3; do
		direct >>"$T_DIR/d"
		serve "$WINDOW"
		relay warm >/dev/null
		relay >>"$T_DIR/f"
		serve 0
		relay warm >/dev/null
		relay >>"$T_DIR/z"
	done
	D=$(best "$T_DIR/d")
	F=$(best "$T_DIR/f")
	Z=$(best "$T_DIR/z")
	if [ "$pace" = 0 ]; then
		echo "unpaced, $n tokens (the relay's own ceiling):"
		target=0.8
	else
		echo "paced at one token every $pace s (faster than any real model), $n tokens:"
		target=0.95
	fi
	set -- $D
	awk -v df="$1" -v dr="$2" 'BEGIN {
		printf "  %-34s first token %6.1f ms,       %7.0f tokens/s\n",
		    "fake model directly:", df * 1000, dr }'
	report "relay, stream_flush_ms ${WINDOW:-default}:" "$D" "$F" $target
	report "relay, stream_flush_ms 0 (baseline):" "$D" "$Z" ""
done
