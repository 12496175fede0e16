#!/usr/bin/env bash
# webapp.sh <build dir> — a Web App chat turn against the same turn through
# the service API, in the same run, the same flowcgi, nginx and fake model:
# POST /api/chat-messages with a passport (the site looked up, the JWT
# checked, the rate limit counted in the store, the end user set) against
# POST /v1/chat-messages with an app key. Each turn streams a short answer
# in a conversation of its own; the two alternate, BENCH_WEBAPP_TURNS each
# (default 40), and the medians of the first answer event and of the whole
# turn are shown with their ratio (web / service). Then the chat page's
# weight: the bytes of the page, its style and every module it imports, as
# a browser fetches them before the first paint (target under 150 KB).
set -u
BUILD=$(cd "$1" && pwd)
FLOWCGI_BIN=$BUILD/flowcgi
. "$(dirname "$0")/../e2e/lib.sh"
trap 'for p in $FLOWCGI_PIDS $NGINX_PID; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T_DIR"' EXIT
TURNS=${BENCH_WEBAPP_TURNS:-40}

python3 "$TOP/tests/fakes/fake_llm.py" >"$T_DIR/fake.port" 2>/dev/null &
FLOWCGI_PIDS="$FLOWCGI_PIDS $!"
i=0; while [ ! -s "$T_DIR/fake.port" ]; do i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.05; done
LLM="http://127.0.0.1:$(head -1 "$T_DIR/fake.port")"
python3 -c "import json; print(json.dumps({'responses': [{'repeat': True, 'chunks': ['Hello ', 'there, ', 'end ', 'user.']}]}))" |
    curl -s -X POST --data-binary @- "$LLM/_script" >/dev/null
# the limit well above the turns: the bench measures the count, not a 429
FLOWCGI_WEBAPP_RATE_LIMIT=100000 FLOWCGI_LOG_LEVEL=warn FLOWCGI_LLM_BASE_URL=$LLM/v1 \
    start_flowcgi fc >/dev/null || exit 1
start_nginx "127.0.0.1:$FC_PORT" >/dev/null || exit 1
TOKEN=$(admin_token)
import_file "$TOP/tests/e2e/apps/chat_llm.yml"
APP=$(jqr .app_id)
req POST "/console/api/apps/$APP/api-keys"
KEY=$(jqr .token)
req GET "/console/api/apps/$APP"
CODE=$(jqr .site.code)
PASS=$(curl -s -H "X-App-Code: $CODE" "$BASE/api/passport?user_id=bench" | jq -r .access_token)

python3 - "$BASE" "$KEY" "$CODE" "$PASS" "$TURNS" <<'PY'
import json, statistics, sys, time, urllib.request
base, key, code, passport, turns = sys.argv[1:5] + [int(sys.argv[5])]
def turn(web):
    body = {"inputs": {}, "query": "hi", "response_mode": "streaming"}
    if web:
        url = base + "/api/chat-messages"
        hdrs = {"X-App-Code": code, "X-App-Passport": passport}
    else:
        url = base + "/v1/chat-messages"
        hdrs = {"Authorization": "Bearer " + key}
        body["user"] = "bench"
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 method="POST")
    req.add_header("Content-Type", "application/json")
    for k, v in hdrs.items():
        req.add_header(k, v)
    t0 = time.monotonic(); first = None; rest = b""; ended = False
    with urllib.request.urlopen(req) as r:
        while True:
            block = r.read1(65536)
            if not block:
                break
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            for raw in lines:
                if not raw.startswith(b"data: "):
                    continue
                ev = json.loads(raw[6:])
                if ev.get("event") == "message" and first is None:
                    first = time.monotonic()
                if ev.get("event") == "message_end":
                    ended = True
    if first is None or not ended:
        sys.exit("a turn ended without its answer")
    return first - t0, time.monotonic() - t0
for web in (True, False):	# warm both
    turn(web)
f = {True: [], False: []}; w = {True: [], False: []}
for i in range(turns):
    for web in ((True, False) if i % 2 == 0 else (False, True)):
        a, b = turn(web)
        f[web].append(a); w[web].append(b)
m = lambda xs: statistics.median(xs) * 1000
print("A Web App chat turn against the same turn through the service API (median of %d each, alternating):" % turns)
print("  first answer event: web %.1f ms, service %.1f ms, ratio %.2f" % (m(f[True]), m(f[False]), m(f[True]) / m(f[False])))
print("  whole turn:         web %.1f ms, service %.1f ms, ratio %.2f" % (m(w[True]), m(w[False]), m(w[True]) / m(w[False])))
PY
[ $? -eq 0 ] || exit 1

# the chat page and what it loads before the first paint
python3 - "$BASE" "$CODE" <<'PY'
import re, sys, urllib.parse, urllib.request
base, code = sys.argv[1:3]
seen = {}
def get(url):
    with urllib.request.urlopen(url) as r:
        return r.read()
page = base + "/chat/" + code
html = get(page); seen[page] = len(html)
todo = [urllib.parse.urljoin(page, u) for u in
        re.findall(rb'(?:href|src)="([^"]+\.(?:css|js))"', html) for u in [u.decode()]]
while todo:
    u = todo.pop()
    if u in seen:
        continue
    b = get(u); seen[u] = len(b)
    if u.endswith(".js"):
        todo += [urllib.parse.urljoin(u, m.decode()) for m in
                 re.findall(rb"""(?:import|from)\s*['"](\.\.?/[^'"]+)['"]""", b)]
total = sum(seen.values())
print("The chat page before its first paint: %d files, %d bytes uncompressed (%.1f KB; target under 150 KB, ratio %.2f of it)" %
      (len(seen), total, total / 1024, total / (150 * 1024)))
PY
