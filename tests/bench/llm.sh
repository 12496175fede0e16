#!/usr/bin/env bash
# llm.sh <build dir> — streaming from a model through flowcgi and nginx,
# against the fake model's own rate in the same run: the time from the
# fake's first token to the first answer event a client sees, and the
# tokens per second relayed for a long answer (target: 95% or more of the
# fake's direct rate).
set -u
BUILD=$(cd "$1" && pwd)
FLOWCGI_BIN=$BUILD/flowcgi
. "$(dirname "$0")/../e2e/lib.sh"
trap 'for p in $FLOWCGI_PIDS $NGINX_PID; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T_DIR"' EXIT
TOKENS=${BENCH_LLM_TOKENS:-3000}
DELAY=${BENCH_LLM_FIRST_DELAY:-0.3}

python3 "$TOP/tests/fakes/fake_llm.py" >"$T_DIR/fake.port" 2>/dev/null &
FLOWCGI_PIDS="$FLOWCGI_PIDS $!"
i=0; while [ ! -s "$T_DIR/fake.port" ]; do i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.05; done
LLM="http://127.0.0.1:$(head -1 "$T_DIR/fake.port")"
script() {	# script <seconds between tokens>
	python3 -c "import json; print(json.dumps({'responses': [{'repeat': True, 'first_delay': $DELAY, 'delay': $1, 'chunks': ['t%d ' % i for i in range($TOKENS)]}]}))" |
	    curl -s -X POST --data-binary @- "$LLM/_script" >/dev/null
}
FC_LOG_LEVEL=warn FLOWCGI_LLM_BASE_URL=$LLM/v1 start_flowcgi fc >/dev/null
start_nginx "127.0.0.1:$FC_PORT" >/dev/null
TOKEN=$(admin_token)
jq -n --rawfile y "$TOP/tests/e2e/apps/chat_llm.yml" '{mode: "yaml-content", yaml_content: $y}' >"$T_DIR/imp.json"
req POST /console/api/apps/imports -H 'Content-Type: application/json' --data-binary @"$T_DIR/imp.json"
APP=$(jqr .app_id)
req POST "/console/api/apps/$APP/api-keys"
KEY=$(jqr .token)

# measure <url> <body> <header...>: "first_token_s tokens_per_s" where the
# first token is the first chunk / message event carrying text.
measure() {
	python3 - "$@" <<'PY'
import json, sys, time, urllib.request
url, body = sys.argv[1], sys.argv[2].encode()
req = urllib.request.Request(url, data=body, method="POST")
req.add_header("Content-Type", "application/json")
for h in sys.argv[3:]:
    k, v = h.split(": ", 1)
    req.add_header(k, v)
t0 = time.monotonic(); first = None; n = 0
with urllib.request.urlopen(req) as r:
    for raw in r:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        ev = json.loads(line[6:])
        text = ev.get("answer") if ev.get("event") == "message" else \
            (ev.get("choices") or [{}])[0].get("delta", {}).get("content")
        if text:
            n += 1
            if first is None:
                first = time.monotonic()
t1 = time.monotonic()
print("%.4f %.1f %d" % (first - t0, n / (t1 - first) if t1 > first else 0, n))
PY
}
best_of() {	# the best of 3 runs: lowest first token, highest rate
	for _ in 1 2 3; do measure "$@"; done | sort -k2 -n -r | head -1
}
echo
echo "Streaming a $TOKENS-token answer from the fake model (first token after ${DELAY}s), best of 3"
for pace in ${BENCH_LLM_PACE:-0.001 0}; do
	script "$pace"
	D=$(best_of "$LLM/v1/chat/completions" '{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}')
	F=$(best_of "$BASE/v1/chat-messages" '{"inputs":{},"query":"go","user":"b","response_mode":"streaming"}' "Authorization: Bearer $KEY")
	set -- $D; D_FIRST=$1 D_RATE=$2
	set -- $F; F_FIRST=$1 F_RATE=$2 F_N=$3
	awk -v df="$D_FIRST" -v dr="$D_RATE" -v ff="$F_FIRST" -v fr="$F_RATE" \
	    -v n="$F_N" -v pace="$pace" 'BEGIN {
		if (pace > 0) printf "paced at one token every %g s (faster than any real model):\n", pace
		else printf "unpaced (the relay'"'"'s own ceiling):\n"
		printf "  fake model directly:        first token %.1f ms, %8.0f tokens/s\n", df * 1000, dr
		printf "  through nginx and flowcgi:  first token %.1f ms, %8.0f tokens/s (%d message events)\n", ff * 1000, fr, n
		printf "  added to the first token: %.1f ms; relayed rate %.2f of the direct rate (target >= 0.95)\n", (ff - df) * 1000, (dr > 0 ? fr / dr : 0)
	}'
done
