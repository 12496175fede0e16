#!/bin/bash
# t_hostile_gen.sh — every console and service route, called with hostile
# requests made from the route tables themselves (fcgi/*.c, read from the
# source: a route added is a route called). For each route:
#  - its ids filled with real ones (an app, a file node, a key, a run, an
#    upload, a conversation, a message, a version, an import), with random
#    ones, with another app's, and with an app whose DSL holds values of
#    wrong types the importer lets by;
#  - when it takes a body, bodies of every JSON type ({}, [], [1], "s", 1,
#    true, null), one that is not JSON, and objects whose fields (every
#    field a handler reads) are all of a wrong type;
#  - every query parameter its file reads, holding a NUL (%00: must be
#    400) and 64 KiB (straight to flowcgi's FastCGI socket: nginx passes
#    at most about 30 KiB, which goes through nginx).
# Fails on any 5xx, on any answer whose body is not JSON (but for the
# routes listed in NON_JSON below, which send files, pages, redirects,
# metrics or server-sent events when they succeed; their errors are JSON
# too), and
# when the requests take longer than GEN_BUDGET seconds (50).
. "$(dirname "$0")/lib.sh"

# A 64 KiB query value needs a request line longer than nginx's default.
NGINX_HTTP_EXTRA='large_client_header_buffers 4 256k;' start_front || exit 1

cat >"$T_DIR/wf.yml" <<'YML'
app: {mode: workflow, name: Generated workflow}
kind: app
version: 0.6.0
workflow:
  features: {}
  graph:
    edges:
    - {id: e1, source: start, sourceHandle: source, target: end, targetHandle: target}
    nodes:
    - id: start
      data: {type: start, title: Start, variables: []}
    - id: end
      data: {type: end, title: End, outputs: []}
YML

# An app whose DSL holds values of wrong types where the importer lets
# them by (titles, features, start variables that are no objects).
cat >"$T_DIR/odd.yml" <<'YML'
app: {mode: advanced-chat, name: Odd, description: 5, icon: [1]}
kind: app
version: 0.6.0
workflow:
  features: {file_upload: 3, opening_statement: [1], suggested_questions: x}
  graph:
    edges: []
    nodes:
    - id: start
      data: {type: start, title: [1], variables: [1, x, null, {variable: a, type: 7, options: 3}]}
    - id: ans
      data: {type: answer, answer: [1], title: 4}
YML

# ---- real ids of every kind a route takes ----
import_app "$T_DIR/wf.yml"
WF=$APP WKEY=$KEY
req GET "$A/$WF/api-keys"
KEYID=$(jqr '.data[0].id')
import_app "$TOP/tests/e2e/apps/echo_chat.yml"
CHAT=$APP CKEY=$KEY
import_app "$T_DIR/wf.yml"
OTHER=$APP OKEY=$KEY
import_app "$T_DIR/odd.yml"
ODD=$APP ODDKEY=$KEY
svc "$WKEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{},"user":"u","response_mode":"blocking"}'
RUN=$(jqr .workflow_run_id)
svc "$CKEY" POST /v1/chat-messages -H "$J" \
    -d '{"inputs":{},"query":"hi","user":"u","response_mode":"blocking"}'
CONV=$(jqr .conversation_id) MSG=$(jqr .message_id)
printf 'generated\n' >"$T_DIR/up.txt"
UPLOAD=$(curl -sS -H "Authorization: Bearer $CKEY" \
    -F "file=@$T_DIR/up.txt;type=text/plain" -F user=u \
    "$BASE/v1/files/upload" | jq -r .id)
req POST "$A/$WF/assets/files/upload" -H "$J" -d '{"name":"n.txt","size":1}'
NODE=$(jqr .node.id)
req POST "$A/$WF/workflows/publish" -H "$J" -d '{}'
VERSION=$(jqr .id)
import_file "$TOP/tests/e2e/apps/newer_version.yml"
IMPORT=$(jqr .id)
req POST "$A/imports-bundle/prepare"
BIMPORT=$(jqr .import_id)
for v in WF WKEY KEYID CHAT CKEY OTHER OKEY ODD ODDKEY RUN CONV MSG UPLOAD \
    NODE VERSION IMPORT BIMPORT; do
	[ -n "${!v}" ] && [ "${!v}" != null ] && continue
	ok 1 "a real id for $v"
	exit 1
done
ok 0 "real ids of apps (one of an odd DSL), a key, a run, a conversation, a message, an upload, a file, a version and two imports"

jq -n --arg wf "$WF" --arg wkey "$WKEY" --arg keyid "$KEYID" \
    --arg chat "$CHAT" --arg ckey "$CKEY" --arg other "$OTHER" \
    --arg okey "$OKEY" --arg odd "$ODD" --arg oddkey "$ODDKEY" --arg run "$RUN" --arg conv "$CONV" --arg msg "$MSG" \
    --arg upload "$UPLOAD" --arg node "$NODE" --arg version "$VERSION" \
    --arg import "$IMPORT" --arg bimport "$BIMPORT" --arg token "$TOKEN" \
    --arg base "$BASE" --arg fc_port "$FC_PORT" \
    '$ARGS.named' >"$T_DIR/ids.json"

GEN_BUDGET=${GEN_BUDGET:-50} T_N_START=$T_N \
    python3 - "$TOP" "$T_DIR/ids.json" "$T_DIR/gen.count" <<'PY'
import glob, http.client, json, os, re, sys, time, urllib.parse, uuid

top, ids = sys.argv[1], json.load(open(sys.argv[2]))
budget = float(os.environ["GEN_BUDGET"])
n_tap = int(os.environ.get("T_N_START", "0"))

# ---- the route tables, from the source ----
ROUTE = re.compile(r'\{\s*"(GET|POST|PUT|DELETE|PATCH)",\s*((?:[A-Z_]+\s*)?'
                   r'(?:"[^"]*"\s*)*),\s*(h_\w+),\s*(AUTH_\w+)'
                   r'(?:\s*\|\s*WEB_\w+)*\s*\}')	# WEB_*: also under /api
QPARAM = re.compile(r'(?:req_query\w*|query_bool)\(r,\s*"(\w+)"'
                    r'|"(created_at__\w+)"')
FIELD = re.compile(r'(?:req_json_string\(r,|json_object_get\(r->json,)\s*"(\w+)"')
routes, fields, entries = [], set(), 0
# A table written through a function-like macro (the same routes under two
# prefixes, fcgi/service_datasets.c): each use expanded with its arguments,
# the definition itself left out.
FMACRO = re.compile(r'^#define\s+([A-Z_]+)\(([A-Z_, ]+)\)((?:.*\\\n)*.*)$', re.M)
def expand(src):
    for m in list(FMACRO.finditer(src)):
        name, params = m.group(1), [a.strip() for a in m.group(2).split(",")]
        body = m.group(3).replace("\\\n", "\n")
        if not re.search(r'\{\s*"(?:GET|POST|PUT|DELETE|PATCH)",', body):
            continue
        src = src.replace(m.group(0), "")
        def use(u):
            args = [a.strip() for a in u.group(1).split(",")]
            out = body
            for prm, arg in zip(params, args):
                out = re.sub(r'\b%s\b' % prm, arg, out)
            return out
        src = re.sub(r'\b%s\(([^()]*)\)' % name, use, src)
    return src

for f in sorted(glob.glob(top + "/fcgi/*.c")):
    src = expand(open(f).read())
    macros = {m.group(1): "".join(re.findall(r'"([^"]*)"', m.group(2)))
              for m in re.finditer(r'^#define\s+([A-Z_]+)\s+((?:"[^"\n]*"\s*)+)$',
                                   src, re.M)}
    params = sorted({a or b for a, b in QPARAM.findall(src)})
    fields |= set(FIELD.findall(src))
    entries += len(re.findall(r'\{\s*"(?:GET|POST|PUT|DELETE|PATCH)",', src))
    for m in ROUTE.finditer(src):
        pat = "".join(macros.get(a, "?" + a) if a else b
                      for a, b in re.findall(r'([A-Z_]+)|"([^"]*)"', m.group(2)))
        routes.append((m.group(1), pat, m.group(4), os.path.basename(f), params))

n_notok = 0
def tap(good, what):
    global n_tap, n_notok
    n_tap += 1
    n_notok += not good
    print(("ok %d - %s" if good else "not ok %d - %s") % (n_tap, what))
    return good

tap(entries == len(routes) and len(routes) >= 90 and
    all("?" not in p for _, p, _, _, _ in routes),
    "%d routes read from the route tables (%d table entries)" %
    (len(routes), entries))

# Routes whose success is not JSON: files, pages, metrics, event streams.
NON_JSON = {
    ("GET", "/admin"), ("GET", "/admin/{}"), ("GET", "/metrics"),
    ("GET", "/healthz"), ("GET", "/embed.js"), ("GET", "/embed.min.js"),
    ("GET", "/console/api/apps/{}/export-bundle"),
    ("GET", "/console/api/apps/{}/bundle"),
    ("GET", "/console/api/apps/{}/assets/files/{}/download"),
    ("GET", "/console/api/apps/{}/sandbox/files/download"),
    ("GET", "/console/api/files/app-bundles/{}/{}/download"),
    ("GET", "/console/api/files/app-assets/{}/{}/download"),
    ("GET", "/v1/files/{}/preview"),
    ("POST", "/console/api/apps/{}/workflows/draft/run"),
    ("POST", "/console/api/apps/{}/advanced-chat/workflows/draft/run"),
    ("POST", "/v1/workflows/run"), ("POST", "/v1/chat-messages"),
    ("POST", "/v1/completion-messages"),
}

# ---- filling a pattern's ids ----
def real_id(seg_before, pat):
    """The real id for the {} after path segment seg_before."""
    return {
        "apps": ids["wf"], "files": ids["node"], "nodes": ids["node"],
        "api-keys": ids["keyid"], "workflow-runs": ids["run"],
        "imports": ids["import"], "imports-bundle": ids["bimport"],
        "bundle-imports": ids["bimport"], "model-providers": "openai",
        "sandbox-provider": "local", "knowledge-bases": str(uuid.uuid4()),
        "tools": str(uuid.uuid4()), "update": str(uuid.uuid4()),
        "completion-messages": ids["run"], "tasks": ids["run"],
        "chat-messages": ids["run"], "run": ids["run"],
        "conversations": ids["conv"], "messages": ids["msg"],
        "admin": "app.js", "app-bundles": ids["wf"],
        "app-assets": ids["wf"], "workflows": ids["version"],
    }.get(seg_before, "x")

def fill(pat, how):
    segs, out = pat.split("/"), []
    for i, s in enumerate(segs):
        if s != "{}":
            out.append(s)
            continue
        prev = segs[i - 1]
        v = real_id(prev, pat)
        if i >= 2 and segs[i - 2] == "app-bundles":
            v = "without-secrets"
        elif i >= 2 and segs[i - 2] == "app-assets":
            v = ids["node"]
        if how == "random":
            v = str(uuid.uuid4())
        elif how in ("other", "odd") and \
                prev in ("apps", "app-assets", "app-bundles"):
            v = ids[how]
        out.append(urllib.parse.quote(v, safe=""))
    path = "/".join(out)
    # chat routes of an app work on the chat app
    if "advanced-chat" in pat and how == "real":
        path = path.replace(ids["wf"], ids["chat"], 1)
    return path

def auth_of(method, pat, auth, how):
    if auth == "AUTH_ADMIN":
        return "Bearer " + ids["token"]
    if auth == "AUTH_APP":
        if how in ("other", "odd"):
            return "Bearer " + ids["okey" if how == "other" else "oddkey"]
        return "Bearer " + (ids["wkey"] if pat.startswith("/v1/workflows")
                            else ids["ckey"])
    return None

WRONG = [12345, {"a": [True]}, [None]]
BODIES = ["{}", "[]", "[1]", '"s"', "1", "true", "null", "not json {"] + \
    [json.dumps({k: w for k in sorted(fields | {
        "graph", "features", "environment_variables", "credentials",
        "config", "server_url", "server_identifier", "target_id",
        "position", "model", "pre_prompt", "dataset_id", "enabled",
        "variables", "hash"})}) for w in WRONG]
BIG = "a" * 65536
# nginx sends all of a request's FastCGI parameters in one record of at
# most 64 KiB, and the query twice (QUERY_STRING, REQUEST_URI): the most
# it passes is about 30 KiB, above which nginx itself answers 500. So the
# 64 KiB value goes to flowcgi's own FastCGI socket, and 30 KiB through
# nginx.
NGINX_MAX = "a" * 30000

u = urllib.parse.urlparse(ids["base"])
conn = None
def send(method, path, auth, body):
    global conn
    hdrs = {"Content-Type": "application/json"}
    if auth:
        hdrs["Authorization"] = auth
    for attempt in (0, 1):
        try:
            if conn is None:
                conn = http.client.HTTPConnection(u.hostname, u.port,
                                                  timeout=15)
            conn.request(method, path, body=body, headers=hdrs)
            r = conn.getresponse()
            data = r.read()
            if r.getheader("Connection", "").lower() == "close":
                conn.close(); conn = None
            return r.status, r.getheader("Content-Type", ""), data
        except (http.client.HTTPException, OSError):
            if conn is not None:
                conn.close()
            conn = None
            if attempt:
                raise

def fcgi_pairs(params):
    out = b""
    for k, v in params.items():
        k, v = k.encode(), v.encode()
        for n in (len(k), len(v)):
            out += bytes([n]) if n < 128 else (n | 0x80000000).to_bytes(4, "big")
        out += k + v
    return out

def fcgi_records(kind, data):
    out, i = b"", 0
    while True:
        chunk = data[i:i + 65535]
        out += bytes([1, kind, 0, 1]) + len(chunk).to_bytes(2, "big") + \
            b"\0\0" + chunk
        i += 65535
        if not chunk:
            return out
        if i >= len(data):
            out += bytes([1, kind, 0, 1, 0, 0, 0, 0])
            return out

def send_fcgi(method, path, auth, body):
    """The request straight to flowcgi's FastCGI socket (no nginx)."""
    import socket
    route, _, query = path.partition("?")
    body = (body or "").encode()
    params = {"REQUEST_METHOD": method, "REQUEST_URI": path,
              "SCRIPT_NAME": route, "DOCUMENT_URI": route,
              "QUERY_STRING": query, "SERVER_PROTOCOL": "HTTP/1.1",
              "REMOTE_ADDR": "127.0.0.1", "CONTENT_TYPE": "application/json",
              "CONTENT_LENGTH": str(len(body))}
    if auth:
        params["HTTP_AUTHORIZATION"] = auth
    s = socket.create_connection(("127.0.0.1", int(ids["fc_port"])),
                                 timeout=15)
    s.sendall(bytes([1, 1, 0, 1, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]) +
              fcgi_records(4, fcgi_pairs(params)) + fcgi_records(5, body))
    buf, out = b"", b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        buf += d
        while len(buf) >= 8:
            n = int.from_bytes(buf[4:6], "big") + buf[6]
            if len(buf) < 8 + n:
                break
            kind, content = buf[1], buf[8:8 + int.from_bytes(buf[4:6], "big")]
            buf = buf[8 + n:]
            if kind == 6:
                out += content
            elif kind == 3:
                buf, d = b"", None
                break
        if d is None:
            break
    s.close()
    head, _, data = out.partition(b"\r\n\r\n")
    st, ct = 200, ""
    for line in head.decode("latin-1").split("\r\n"):
        k, _, v = line.partition(":")
        if k.lower() == "status":
            st = int(v.split()[0])
        elif k.lower() == "content-type":
            ct = v.strip()
    return st, ct, data

start, sent, failures = time.monotonic(), 0, []
# DELETEs last (the real app goes with one), the app's own DELETE very last
order = sorted(routes, key=lambda r: (r[0] == "DELETE",
                                     r[1] == "/console/api/apps/{}"))
for method, pat, auth, fname, params in order:
    cases = []   # (how, query, body, want400)
    hows = ["real", "random", "other", "odd"] \
        if "{}" in pat or auth == "AUTH_APP" else ["real"]
    takes_body = method in ("POST", "PUT", "PATCH")
    for how in hows:
        cases.append((how, "", "{}" if takes_body else None, False))
    if takes_body:
        for b in BODIES[1:]:
            cases.append(("real", "", b, False))
        if "{}" in pat:
            cases.append(("random", "", "[]", False))
            cases.append(("random", "", BODIES[-1], False))
    for p in params:
        b = "{}" if takes_body else None
        cases.append(("real", p + "=%00", b, True))
        cases.append(("real", p + "=a%00b&x=1", None, True))
        cases.append(("real", p + "=" + NGINX_MAX, b, False))
        cases.append(("direct", p + "=" + BIG, b, False))
    bad = []
    for how, q, body, want400 in cases:
        direct = how == "direct"
        how = "real" if direct else how
        path = fill(pat, how) + ("?" + q if q else "")
        try:
            st, ct, data = (send_fcgi if direct else send)(
                method, path, auth_of(method, pat, auth, how), body)
        except Exception as e:
            bad.append("%s %s: no answer (%s)" % (method, path[:120], e))
            sent += 1
            continue
        sent += 1
        why = None
        if st >= 500:
            why = "status %d" % st
        elif want400 and st != 400:
            why = "a NUL in the query answered %d, not 400" % st
        elif st in (204, 304) and not data:
            pass
        elif (method, pat) in NON_JSON and 200 <= st < 400:
            pass
        else:
            try:
                j = json.loads(data)
                # an error is {code, message, status}; an import that
                # failed is Dify's import record, status "failed"
                if st >= 400 and not (isinstance(j, dict) and (
                        (j.get("status") == st and
                         isinstance(j.get("code"), str) and
                         isinstance(j.get("message"), str)) or
                        ("/imports" in pat and
                         j.get("status") == "failed"))):
                    why = "error %d without {code, message, status}" % st
            except ValueError:
                why = "status %d, a body that is not JSON (%s)" % (st, ct)
        if why:
            bad.append("%s %s body=%s: %s: %r" % (
                method, path[:120], (body or "")[:40], why, data[:160]))
    failures += bad
    tap(not bad, "%s %s: %d hostile requests, no 5xx, every answer JSON" %
        (method, pat, len(cases)))
    for b in bad[:4]:
        print("#   " + b)
took = time.monotonic() - start
tap(took <= budget, "%d requests in %.1f s (budget %g s)" % (sent, took, budget))
print("# generated requests: %d, failures: %d" % (sent, len(failures)))
open(sys.argv[3], "w").write("%d %d\n" % (n_tap, n_notok))
PY
# the python checks counted into this test's TAP numbering
read -r n nfail <"$T_DIR/gen.count" 2>/dev/null || { ok 1 "the generator ran"; exit 1; }
T_PASS=$((T_PASS + n - T_N - nfail)); T_FAIL=$((T_FAIL + nfail)); T_N=$n

req GET /healthz
is "$STATUS" 200 "the server is healthy after the hostile requests"
