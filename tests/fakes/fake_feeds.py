"""fake_feeds.py - a loopback stand-in for the remotes of the feed and
search tools (engine/tools/rss.c, engine/tools/duckduckgo.c, the file
fetch of engine/tools/codec.c). Listens on 127.0.0.1:<port> (--port, 0
for any free one), prints "PORT <n>" on its first line of output.

  GET  /feed/<name>     tests/fakes/feeds/<name> (rss2.xml, rss1.xml,
                        atom.xml, xxe.xml) as application/rss+xml;
                        /feed/many: an RSS 2.0 feed of 150 items;
                        /feed/notxml: text that is no XML;
                        /feed/html: an XHTML page (XML, but no feed)
  ANY  /status/<code>[/...]  answers that status (429 with Retry-After: 7)
  GET  /slow            answers after 3 seconds
  GET  /blob.png        eight bytes of a PNG signature and four more
  GET  /<platform>?limit=N
                        DailyHotApi: {code, name, title, type, total,
                        updateTime, data: [N items]}; "unknown" is a 404
  POST /html/           DuckDuckGo's HTML endpoint: q=python gives
                        feeds/ddg_page1.html, the form with s=10 its
                        second page ddg_page2.html, q=ratelimit the 202
                        challenge page ddg_anomaly.html, q=fail a 500,
                        anything else ddg_none.html
  GET  /requests        the requests seen so far (JSON list of {method,
                        path, headers, body}); DELETE /requests clears them
"""
import json
import os
import sys
import threading
import time
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_http import JSONHandler, serve  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "feeds")
SEEN = []
LOCK = threading.Lock()


def fixture(name):
    with open(os.path.join(HERE, name), "rb") as f:
        return f.read()


def many_items(n):
    items = "".join(
        "<item><title>Item %d</title><link>https://m.example/%d</link>"
        "</item>" % (i, i) for i in range(n))
    return ('<?xml version="1.0"?><rss version="2.0"><channel>'
            "<title>Many</title>%s</channel></rss>" % items).encode()


def daily_hot(platform, limit):
    data = []
    for i in range(limit):
        item = {"id": 1000 + i, "title": "%s hot %d" % (platform, i + 1),
                "hot": 5000 - i, "url": "https://%s.example/p/%d" %
                (platform, i), "mobileUrl": "https://m.%s.example/p/%d" %
                (platform, i), "timestamp": 1764720000000}
        if i == 0:
            item["author"] = "作者"
        data.append(item)
    return {"code": 200, "name": platform, "title": "知乎", "type": "热榜",
            "link": "https://www.zhihu.com/hot", "total": 50,
            "fromCache": True, "updateTime": "2026-12-03T01:02:03.000Z",
            "data": data}


class Handler(JSONHandler):
    protocol_version = "HTTP/1.1"

    def _record(self, body):
        with LOCK:
            SEEN.append({"method": self.command, "path": self.path,
                         "headers": {k.lower(): v for k, v in
                                     self.headers.items()},
                         "body": body.decode("utf-8", "replace")})

    def _send(self, status, ctype, data, extra=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _handle(self):
        body = self.read_body()
        url = urlsplit(self.path)
        path = url.path
        if path == "/requests":
            if self.command == "DELETE":
                with LOCK:
                    SEEN.clear()
                return self.send_json(200, {"ok": True})
            with LOCK:
                return self.send_json(200, list(SEEN))
        self._record(body)
        if path.startswith("/feed/"):
            name = path[len("/feed/"):]
            if name == "many":
                return self._send(200, "application/rss+xml",
                                  many_items(150))
            if name == "notxml":
                return self._send(200, "text/plain", b"this is not a feed")
            if name == "html":
                return self._send(200, "text/html", b"<html><body><p>page"
                                  b"</p></body></html>")
            try:
                return self._send(200, "application/rss+xml; charset=utf-8",
                                  fixture(name))
            except OSError:
                return self._send(404, "text/plain", b"no such feed")
        if path.startswith("/status/"):
            code = int(path.split("/")[2])
            extra = {"Retry-After": "7"} if code == 429 else None
            return self._send(code, "text/plain", b"status", extra)
        if path == "/slow":
            time.sleep(3)
            return self._send(200, "text/plain", b"late")
        if path == "/blob.png":
            return self._send(200, "image/png",
                              b"\x89PNG\r\n\x1a\n\x00\x01\x02\x03")
        if path == "/html/" and self.command == "POST":
            form = parse_qs(body.decode(), keep_blank_values=True)
            q = form.get("q", [""])[0]
            if q == "ratelimit":
                return self._send(202, "text/html; charset=UTF-8",
                                  fixture("ddg_anomaly.html"))
            if q == "fail":
                return self._send(500, "text/plain", b"oops")
            if q == "python":
                page = "ddg_page2.html" if form.get("s", ["0"])[0] == "10" \
                    else "ddg_page1.html"
                return self._send(200, "text/html; charset=UTF-8",
                                  fixture(page))
            return self._send(200, "text/html; charset=UTF-8",
                              fixture("ddg_none.html"))
        platform = path.strip("/")
        if self.command == "GET" and platform and "/" not in platform:
            if platform == "unknown":
                return self.send_json(404, {"code": 404,
                                            "message": "not found"})
            q = parse_qs(url.query)
            limit = int(q.get("limit", ["10"])[0])
            return self.send_json(200, daily_hot(platform, limit))
        return self._send(404, "text/plain", b"not found")

    do_GET = _handle
    do_POST = _handle
    do_DELETE = _handle


def main():
    port = 0
    if "--port" in sys.argv:
        port = int(sys.argv[sys.argv.index("--port") + 1])
    serve(Handler, port, banner="PORT %d")


if __name__ == "__main__":
    main()
