#!/usr/bin/env python3
"""fake_echo.py - an HTTP server that echoes what it was sent, for tests.

    python3 tests/fakes/fake_echo.py     (prints its port, then serves)

Any GET, POST, PUT, PATCH or DELETE answers 200 with a JSON body
{"method", "path", "authorization", "x_api_key"}: the request's
Authorization and X-Api-Key headers ("" when absent). GET /_requests
returns every request seen so far (the same objects, oldest first);
POST /_reset forgets them.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REQUESTS = []


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def send_json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def echo(self):
        n = int(self.headers.get("Content-Length", "0") or "0")
        if n > 0:
            self.rfile.read(n)
        if self.path == "/_requests":
            self.send_json(200, REQUESTS)
            return
        if self.path == "/_reset":
            REQUESTS.clear()
            self.send_json(200, {})
            return
        seen = {
            "method": self.command,
            "path": self.path,
            "authorization": self.headers.get("Authorization", ""),
            "x_api_key": self.headers.get("X-Api-Key", ""),
        }
        REQUESTS.append(seen)
        self.send_json(200, seen)

    do_GET = echo
    do_POST = echo
    do_PUT = echo
    do_PATCH = echo
    do_DELETE = echo


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
