#!/usr/bin/env python3
"""fake_mcp.py — fakes of the outside services flowcgi's tools talk to.

Python 3 standard library only. Listens on 127.0.0.1 (port from --port,
0 for any free one), prints "PORT <n>" on its first line of output, and
serves until killed:

  POST /mcp        a Streamable HTTP MCP server (JSON-RPC 2.0) answering
                   with application/json bodies
  POST /mcp-sse    the same, answering with text/event-stream (a
                   notification event first, then the response)
  POST /mcp-auth   like /mcp, but 401 without "Authorization: Bearer
                   secret"
  POST /mcp-strict like /mcp-sse, with real sessions: initialize makes a
                   new one ("strict-<n>"), a request without a live one is
                   404, DELETE with its Mcp-Session-Id ends it;
                   POST /forget ends them all (the server restarted)
  DELETE /mcp...   ends the session (200), recorded like any request
      tools: "add" {a, b} -> text "<a+b>"; "weather" {city} -> text
      holding a JSON object {"city": ..., "temp": 21}; "fail" -> isError;
      "parts" -> two text parts and an image; "list" -> text "[1, "two"]";
      "pinger" -> asks the client for a ping (a request of the server's,
      id "srv-1") before answering "pong" (on event streams).
      initialize answers with an Mcp-Session-Id header.
  GET /sse         the HTTP+SSE transport: an event stream that first
                   announces "endpoint" /messages?sessionId=<n>, then
                   carries the answers to what is POSTed there (202);
                   /sse-elsewhere announces an endpoint on another origin.
                   A stream the client closes is recorded as
                   {"method": "CLOSED", "path": "/sse?sessionId=<n>"}
  /api/...         an HTTP service described by tests' OpenAPI schemas:
                   every request is answered with a JSON object echoing
                   {method, path, query, headers (lower-case), body}
                   ("GET /api/text" answers text/plain "plain answer",
                   "/api/empty" an empty body, "/api/fail" status 500)
  GET /page        an HTML page for the webscraper; /page.txt plain text;
                   /page.pdf a PDF content type; /missing is 404
  GET /requests    the requests seen so far (JSON list of {method, path,
                   headers, body}); DELETE /requests clears them
"""
import base64
import itertools
import json
import queue
import sys
import threading
from fake_http import JSONHandler, serve
from urllib.parse import urlsplit, parse_qs

LOCK = threading.Lock()
SEEN = []
SESSION = "sess-4242"
STRICT = set()          # live sessions of /mcp-strict
STREAMS = {}            # HTTP+SSE session id -> queue of events
COUNTER = itertools.count(1)
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()

PAGE = """<!DOCTYPE html>
<html><head><title>Test  Page</title>
<meta name="author" content="Ada Lovelace">
<style>body { color: red; }</style>
<script>var hidden = "script text";</script></head>
<body><nav><a href="/">Home</a> <a href="/x">Menu item</a></nav>
<h1>Main   heading</h1>
<p>First paragraph with <b>bold</b> text.</p>
<p>Second
   paragraph.</p>
<ul><li>one</li><li>two</li></ul>
<noscript>enable js</noscript>
</body></html>
"""

TOOLS = [
    {"name": "add", "description": "Add two numbers",
     "inputSchema": {"type": "object",
                     "properties": {"a": {"type": "number"},
                                    "b": {"type": "number"}},
                     "required": ["a", "b"]}},
    {"name": "weather", "description": "Weather of a city",
     "inputSchema": {"type": "object",
                     "properties": {"city": {"type": "string"}},
                     "required": ["city"]}},
    {"name": "fail", "description": "Always fails",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "parts", "description": "Two texts and an image",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "list", "description": "A JSON list that is not objects",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "pinger", "description": "Pings the client first",
     "inputSchema": {"type": "object", "properties": {}}},
]


def call_tool(name, args):
    if name == "add":
        a, b = args.get("a", 0), args.get("b", 0)
        s = float(a) + float(b)
        if s == int(s):
            s = int(s)
        return {"content": [{"type": "text", "text": str(s)}],
                "isError": False}
    if name == "weather":
        return {"content": [{"type": "text", "text": json.dumps(
            {"city": args.get("city"), "temp": 21})}], "isError": False}
    if name == "fail":
        return {"content": [{"type": "text", "text": "it broke"}],
                "isError": True}
    if name == "parts":
        return {"content": [{"type": "text", "text": "first"},
                            {"type": "image", "data": PNG,
                             "mimeType": "image/png"},
                            {"type": "text", "text": "second"}]}
    if name == "list":
        return {"content": [{"type": "text", "text": '[1, "two"]'}]}
    if name == "pinger":
        return {"content": [{"type": "text", "text": "pong"}]}
    return None


def answer(msg):
    """The messages a request gets: a request of the server's for
    "pinger", then the response."""
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        result = {"protocolVersion": "2025-03-26",
                  "capabilities": {"tools": {}},
                  "serverInfo": {"name": "fake", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        p = msg.get("params") or {}
        result = call_tool(p.get("name"), p.get("arguments") or {})
        if result is None:
            return [{"jsonrpc": "2.0", "id": mid, "error": {
                "code": -32602, "message": "Unknown tool: %s" %
                p.get("name")}}]
        if p.get("name") == "pinger":
            return [{"jsonrpc": "2.0", "id": "srv-1", "method": "ping"},
                    {"jsonrpc": "2.0", "id": mid, "result": result}]
    else:
        return [{"jsonrpc": "2.0", "id": mid, "error": {
            "code": -32601, "message": "Method not found"}}]
    return [{"jsonrpc": "2.0", "id": mid, "result": result}]


class Handler(JSONHandler):
    protocol_version = "HTTP/1.1"

    def _record(self, body):
        with LOCK:
            SEEN.append({
                "method": self.command,
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode("utf-8", "replace"),
            })

    def _send(self, status, ctype, data, extra=None):
        if isinstance(data, str):
            data = data.encode()
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _json(self, status, obj, extra=None):
        self._send(status, "application/json", json.dumps(obj), extra)

    # ------------------------------------------------------------------
    def _mcp(self, body, sse, strict=False):
        try:
            msg = json.loads(body)
        except ValueError:
            self._json(400, {"jsonrpc": "2.0", "id": None, "error": {
                "code": -32700, "message": "Parse error"}})
            return
        method = msg.get("method")
        extra = {}
        if strict and method != "initialize":
            with LOCK:
                live = self.headers.get("Mcp-Session-Id") in STRICT
            if not live:
                self._send(404, "text/plain", "no such session")
                return
        if msg.get("id") is None or not method:  # a notification, or
            self._send(202, None, b"")            # an answer of ours
            return
        if method == "initialize":
            sid = SESSION
            if strict:
                sid = "strict-%d" % next(COUNTER)
                with LOCK:
                    STRICT.add(sid)
            extra["Mcp-Session-Id"] = sid
        events = answer(msg)
        if not sse:
            self._json(200, events[-1], extra)
            return
        note = {"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": "working"}}
        data = "event: message\ndata: %s\n\n" % json.dumps(note)
        for i, e in enumerate(events):
            data += "id: %d\nevent: message\ndata: %s\n\n" % (
                i + 1, json.dumps(e))
        self._send(200, "text/event-stream", data, extra)

    # ------------------------------------------------------------------
    def _sse_get(self, path):
        sid = str(next(COUNTER))
        q = queue.Queue()
        with LOCK:
            STREAMS[sid] = q
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        where = "/messages?sessionId=%s" % sid
        if path == "/sse-elsewhere":
            where = "http://elsewhere.invalid" + where
        try:
            self.wfile.write(("event: endpoint\ndata: %s\n\n" %
                              where).encode())
            self.wfile.flush()
            while True:
                try:
                    ev = q.get(timeout=0.2)
                    out = "event: message\ndata: %s\n\n" % json.dumps(ev)
                except queue.Empty:
                    out = ": keep-alive\n\n"
                self.wfile.write(out.encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        with LOCK:
            STREAMS.pop(sid, None)
            SEEN.append({"method": "CLOSED", "path": "/sse?sessionId=" +
                         sid, "headers": {}, "body": ""})
        self.close_connection = True

    def _sse_post(self, body):
        sid = parse_qs(urlsplit(self.path).query).get("sessionId", [""])[0]
        with LOCK:
            q = STREAMS.get(sid)
        if q is None:
            self._send(404, "text/plain", "no such session")
            return
        try:
            msg = json.loads(body)
        except ValueError:
            self._send(400, "text/plain", "bad JSON")
            return
        self._send(202, "text/plain", "Accepted")
        if msg.get("id") is not None and msg.get("method"):
            for e in answer(msg):
                q.put(e)

    # ------------------------------------------------------------------
    def _api(self, body):
        u = urlsplit(self.path)
        if u.path == "/api/text":
            self._send(200, "text/plain", "plain answer")
            return
        if u.path == "/api/empty":
            self._send(200, "application/json", b"")
            return
        if u.path == "/api/fail":
            self._send(500, "text/plain", "server exploded")
            return
        if u.path == "/api/list":
            self._json(200, [1, "two", {"three": 3}])
            return
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        self._json(200, {
            "method": self.command,
            "path": u.path,
            "query": {k: v[0] for k, v in parse_qs(u.query).items()},
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": parsed,
        })

    def _handle(self):
        body = self.read_body()
        path = urlsplit(self.path).path
        if path == "/requests":
            if self.command == "DELETE":
                with LOCK:
                    SEEN.clear()
                self._json(200, {"ok": True})
            else:
                with LOCK:
                    self._json(200, list(SEEN))
            return
        self._record(body)
        if path == "/forget":
            with LOCK:
                STRICT.clear()
            self._json(200, {"ok": True})
        elif path in ("/sse", "/sse-elsewhere") and self.command == "GET":
            self._sse_get(path)
        elif path == "/messages" and self.command == "POST":
            self._sse_post(body)
        elif path in ("/mcp", "/mcp-sse", "/mcp-auth", "/mcp-strict"):
            if self.command == "DELETE":
                with LOCK:
                    STRICT.discard(self.headers.get("Mcp-Session-Id"))
                self._send(200, None, b"")
                return
            if self.command != "POST":
                self._send(405, "text/plain", "POST only")
                return
            if path == "/mcp-auth" and \
                    self.headers.get("Authorization") != "Bearer secret":
                self._send(401, "text/plain", "unauthorized")
                return
            self._mcp(body, path in ("/mcp-sse", "/mcp-strict"),
                      path == "/mcp-strict")
        elif path.startswith("/api/"):
            self._api(body)
        elif path == "/page":
            self._send(200, "text/html; charset=utf-8", PAGE)
        elif path == "/page.txt":
            self._send(200, "text/plain", "just text\n")
        elif path == "/page.pdf":
            self._send(200, "application/pdf", b"%PDF-1.4")
        elif path == "/empty.html":
            self._send(200, "text/html", "<html><body> </body></html>")
        else:
            self._send(404, "text/plain", "not found")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle


def main():
    port = 0
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--port":
        port = int(args[1])
    serve(Handler, port, banner="PORT %d")


if __name__ == "__main__":
    main()
