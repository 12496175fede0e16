#!/usr/bin/env python3
"""fake_tools.py - the HTTP APIs of the tool providers that flowcgi's
manifests call (engine/tools/providers/*.yml), each under a path prefix
of its own, with the shapes their documentation gives. The tests point a
provider's base_url at http://127.0.0.1:<port>/<prefix>.

  GET /requests    the requests seen so far (JSON list of {method, path,
                   query, headers, body}); DELETE /requests clears them

Keys: a request whose key (header or query) holds "bad" is answered 401,
as each API answers a wrong key. Queries: "ratelimit" is answered 429 with
Retry-After: 0 every time; "flaky" is answered 503 once per distinct
query, then served; "slow" waits 3 s; "empty" finds nothing.

Started as: fake_tools.py --port 0 (the first line of stdout is
"PORT <n>"), or with no arguments (the port alone).
"""
import base64
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

SEEN = []
FLAKY = set()
LOCK = threading.Lock()

# a 1x1 PNG
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def results(q, n=2):
    return [{"title": "Result %d for %s" % (i + 1, q),
             "url": "https://example.org/%d" % (i + 1),
             "content": "Content %d about %s." % (i + 1, q),
             "score": 0.9 - i / 10} for i in range(n)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body, ctype="application/json", headers=None):
        if not isinstance(body, (bytes, bytearray)):
            body = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        u = urlparse(self.path)
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        if u.path == "/requests":
            with LOCK:
                if self.command == "DELETE":
                    SEEN.clear()
                    return self.reply(200, [])
                return self.reply(200, list(SEEN))
        with LOCK:
            SEEN.append({"method": self.command, "path": u.path,
                         "query": q,
                         "headers": {k.lower(): v for k, v in
                                     self.headers.items()},
                         "body": body})
        auth = (self.headers.get("Authorization") or "") + \
            (self.headers.get("X-Subscription-Token") or "") + \
            q.get("api_key", "") + q.get("appid", "") + q.get("key", "")
        if "bad" in auth:
            return self.reply(401, {"detail": {"error":
                                    "Unauthorized: invalid API key"}})
        words = json.dumps(body) + json.dumps(q) + u.path
        if "ratelimit" in words:
            return self.reply(429, {"message": "too many requests"},
                              headers={"Retry-After": "0"})
        if "flaky" in words:
            with LOCK:
                first = words not in FLAKY
                FLAKY.add(words)
            if first:
                return self.reply(503, {"error": "try again"})
        if "slow" in words:
            time.sleep(3)
        route = ROUTES.get(u.path)
        if route is None:
            for prefix, fn in ROUTES.items():
                if prefix.endswith("/") and u.path.startswith(prefix):
                    route = fn
                    break
        if route is None:
            return self.reply(404, {"message": "no route " + u.path})
        return route(self, u, q, body or {})

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


# ====== Providers ======

def tavily_search(h, u, q, b):
    query = b.get("query", "")
    if "empty" in query:
        return h.reply(200, {"query": query, "results": []})
    out = {"query": query, "results": results(query,
                                              min(int(b.get("max_results", 5)), 2)),
           "response_time": 0.5}
    if b.get("include_answer"):
        out["answer"] = "The answer about " + query
    if b.get("include_images"):
        out["images"] = ["http://127.0.0.1:%d/img/a.png" % PORT]
    return h.reply(200, out)


def tavily_extract(h, u, q, b):
    urls = b.get("urls", "")
    urls = urls.split() if isinstance(urls, str) else urls
    return h.reply(200, {"results": [{"url": x, "raw_content":
                                      "Raw text of " + x} for x in urls],
                         "failed_results": []})


def image(h, u, q, b):
    return h.reply(200, PNG, "image/png")


def jina_reader(h, u, q, b):
    target = u.path[len("/jina/reader/"):]
    return h.reply(200, {"code": 200, "data": {"title": "Example Domain",
                                               "url": target,
                                               "content": "This domain is for use in examples."}})


def jina_search(h, u, q, b):
    from urllib.parse import unquote
    query = unquote(u.path[len("/jina/search/"):])
    return h.reply(200, {"code": 200, "data": results(query)})


def searxng(h, u, q, b):
    if q.get("format") != "json":
        return h.reply(403, b"<html>Forbidden</html>", "text/html")
    if "empty" in q.get("q", ""):
        return h.reply(200, {"query": q["q"], "results": []})
    return h.reply(200, {"query": q.get("q"), "results": results(q.get("q", ""))})


def firecrawl(h, u, q, b):
    op = u.path.split("/")[-1]
    if op == "scrape":
        if not b.get("url", "").startswith("http"):
            return h.reply(400, {"success": False, "error": "Invalid URL"})
        return h.reply(200, {"success": True, "data": {
            "markdown": "# Example\n\nScraped " + b["url"],
            "metadata": {"title": "Example", "sourceURL": b["url"]}}})
    if op == "map":
        return h.reply(200, {"success": True, "links": [b.get("url"), b.get("url") + "/a"]})
    if op == "crawl":
        return h.reply(200, {"success": True, "id": "job-123",
                             "url": "https://api.firecrawl.dev/v1/crawl/job-123"})
    return h.reply(200, {"status": "completed", "total": 1, "completed": 1,
                         "data": [{"markdown": "page of " + op}]})


def wikipedia(h, u, q, b):
    if q.get("generator") != "search" or q.get("action") != "query":
        return h.reply(400, {"error": {"info": "bad query"}})
    if "empty" in q.get("gsrsearch", ""):
        return h.reply(200, {"batchcomplete": True})
    return h.reply(200, {"batchcomplete": True, "query": {"pages": [
        {"pageid": 2, "title": "Second", "index": 2, "extract": "The second page."},
        {"pageid": 1, "title": q["gsrsearch"], "index": 1, "extract": "About " + q["gsrsearch"] + "."}]}})


def serpapi(h, u, q, b):
    return h.reply(200, {"search_metadata": {"status": "Success"},
                         "knowledge_graph": {"title": "Knowledge", "description": "What it is."},
                         "organic_results": [{"title": r["title"], "link": r["url"], "snippet": r["content"]}
                                             for r in results(q.get("q", ""))]})


def chat(h, u, q, b):
    user = b["messages"][-1]["content"]
    return h.reply(200, {"id": "x", "model": b.get("model"), "citations": ["https://example.org/c1"],
                         "choices": [{"index": 0, "message": {"role": "assistant",
                                                              "content": "Answer to " + user}}]})


def brave(h, u, q, b):
    return h.reply(200, {"web": {"results": [{"title": r["title"], "url": r["url"], "description": r["content"]}
                                             for r in results(q.get("q", ""), int(q.get("count", 3)))]}})


def serper(h, u, q, b):
    return h.reply(200, {"organic": [{"title": r["title"], "link": r["url"], "snippet": r["content"]}
                                     for r in results(b.get("q", ""))]})


def weather(h, u, q, b):
    if q.get("q") == "Atlantis":
        return h.reply(404, {"cod": "404", "message": "city not found"})
    return h.reply(200, {"name": q.get("q"), "main": {"temp": 21.5}, "weather": [{"description": "clear sky"}]})


def translate(h, u, q, b):
    return h.reply(200, [[["Bonjour ", "Hello ", None, None], ["le monde", "world", None, None]], None, "en"])


def wecom(h, u, q, b):
    if q.get("key") == "expired":
        return h.reply(200, {"errcode": 93000, "errmsg": "invalid webhook url"})
    return h.reply(200, {"errcode": 0, "errmsg": "ok"})


def feishu(h, u, q, b):
    if u.path.endswith("/expired"):
        return h.reply(200, {"code": 19001, "msg": "param invalid: incoming webhook access token invalid"})
    return h.reply(200, {"code": 0, "msg": "success", "data": {}})


def webhook(h, u, q, b):
    if "discord" in u.path:
        return h.reply(204, b"", "text/plain")
    return h.reply(200, b"ok", "text/plain")


def images(h, u, q, b):
    if u.path.startswith("/siliconflow"):
        return h.reply(200, {"images": [{"url": "http://127.0.0.1:%d/img/flux.png" % PORT}], "seed": 1})
    n = int(b.get("n", 1))
    return h.reply(200, {"created": 1, "data": [{"b64_json": base64.b64encode(PNG).decode(),
                                                 "revised_prompt": "A " + b.get("prompt", "")} for _ in range(n)]})


def arxiv(h, u, q, b):
    query = q.get("search_query", "")
    if "empty" in query:
        entries = ""
    else:
        entries = """<entry><id>http://arxiv.org/abs/1706.03762v7</id>
<updated>2023-08-02T00:41:18Z</updated><published>2017-06-12T17:57:34Z</published>
<title>Attention Is All You Need</title>
<summary>  The dominant sequence transduction models are based on %s.
</summary><author><name>Ashish Vaswani</name></author>
<link href="http://arxiv.org/abs/1706.03762v7" rel="alternate" type="text/html"/></entry>""" % query
    feed = ("""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>arXiv Query: %s</title>%s</feed>"""
            % (query, entries)).encode()
    return h.reply(200, feed, "application/atom+xml; charset=utf-8")


def dingtalk(h, u, q, b):
    import hashlib
    import hmac
    secret = "SECfake-signing-secret"
    want = base64.b64encode(hmac.new(secret.encode(), ("%s\n%s" % (
        q.get("timestamp", ""), secret)).encode(), hashlib.sha256).digest()).decode()
    if q.get("access_token") == "expired":
        return h.reply(200, {"errcode": 300001, "errmsg": "token is not exist"})
    if q.get("sign") != want or abs(time.time() * 1000 - int(q.get("timestamp") or 0)) > 3600000:
        return h.reply(200, {"errcode": 310000, "errmsg": "sign not match"})
    return h.reply(200, {"errcode": 0, "errmsg": "ok"})


def lark(h, u, q, b):
    """The gateway Dify's Feishu plugins call (lark-plugin-api): a tenant
    token for the app's id and secret, then calls that carry it."""
    path = u.path[len("/lark"):]
    if path == "/access_token/get_tenant_access_token":
        if b.get("app_secret") != "s3cret-app" or not b.get("app_id"):
            return h.reply(200, {"code": 10014, "msg": "app secret invalid"})
        return h.reply(200, {"code": 0, "msg": "ok", "expire": 7200,
                             "tenant_access_token": "t-fake-tenant"})
    if h.headers.get("tenant-access-token") != "t-fake-tenant":
        return h.reply(200, {"code": 99991663, "msg": "Invalid access token for authorization"})
    args = dict(q)
    args.update(b if isinstance(b, dict) else {})
    if "missing" in json.dumps(args):
        return h.reply(200, {"code": 1770002, "msg": "not found"})
    if path == "/document/create_document":
        return h.reply(200, {"code": 0, "msg": "创建飞书文档成功，请查看", "log_id": "l-1",
                             "data": {"title": b.get("title"), "type": "docx", "token": "Doc123",
                                      "url": "https://example.feishu.cn/docx/Doc123"}})
    if path == "/document/get_document_content":
        return h.reply(200, {"code": 0, "msg": "success",
                             "data": {"content": "# %s\n云文档内容" % q.get("document_id")}})
    if path == "/base/add_records":
        recs = b.get("records", [])
        return h.reply(200, {"code": 0, "msg": "success", "data": {"records": [
            {"record_id": "rec%d" % i, "fields": json.loads(r["fields"])} for i, r in enumerate(recs)]}})
    return h.reply(200, {"code": 0, "msg": "success", "data": {"path": path, "args": args}})


def youtube(h, u, q, b):
    """YouTube Data API v3: search (channels, a channel's videos) and
    videos (statistics)."""
    if u.path.endswith("/search") and q.get("type") == "channel":
        if "empty" in q.get("q", ""):
            return h.reply(200, {"kind": "youtube#searchListResponse", "items": []})
        return h.reply(200, {"kind": "youtube#searchListResponse", "items": [
            {"kind": "youtube#searchResult", "id": {"kind": "youtube#channel", "channelId": "UCfake"}}]})
    if u.path.endswith("/search"):
        if q.get("channelId") != "UCfake" or not q.get("publishedAfter", "").endswith("T00:00:00Z"):
            return h.reply(400, {"error": {"code": 400, "message": "Invalid value for publishedAfter or channelId"}})
        return h.reply(200, {"items": [
            {"id": {"kind": "youtube#video", "videoId": "v%d" % i}, "snippet": {"title": "Video %d" % i}}
            for i in (1, 2)]})
    if u.path.endswith("/videos"):
        titles = {"v1": "First video", "v2": "It's the second"}
        return h.reply(200, {"items": [{"id": q.get("id"), "snippet": {"title": titles.get(q.get("id"), "?")},
                                        "statistics": {"viewCount": "1%s00" % q.get("id", "")[1:]}}]})
    return h.reply(404, {"error": {"code": 404, "message": "no such method"}})


ROUTES = {
    "/dingtalk/robot/send": dingtalk,
    "/lark/": lark,
    "/youtube/": youtube,
    "/arxiv/api/query": arxiv,
    "/tavily/search": tavily_search,
    "/tavily/extract": tavily_extract,
    "/img/": image,
    "/jina/reader/": jina_reader,
    "/jina/search/": jina_search,
    "/searxng/search": searxng,
    "/firecrawl/v1/": firecrawl,
    "/wikipedia/w/api.php": wikipedia,
    "/google/search": serpapi,
    "/perplexity/chat/completions": chat,
    "/brave": brave,
    "/serper/search": serper,
    "/openweather/data/2.5/weather": weather,
    "/google_translate/translate_a/single": translate,
    "/wecom/cgi-bin/webhook/send": wecom,
    "/feishu/open-apis/bot/v2/hook/": feishu,
    "/hooks/": webhook,
    "/dalle/images/generations": images,
    "/siliconflow/images/generations": images,
}

PORT = 0


def main():
    global PORT
    port = 0
    if "--port" in sys.argv:
        port = int(sys.argv[sys.argv.index("--port") + 1])
    srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    srv.daemon_threads = True
    PORT = srv.server_address[1]
    # the unit tests read "PORT <n>"; tests/e2e/lib.sh's start_fake the
    # number alone
    print(("PORT %d" if "--port" in sys.argv else "%d") % PORT, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
