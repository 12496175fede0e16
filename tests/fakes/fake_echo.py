#!/usr/bin/env python3
"""fake_echo.py - an HTTP server that echoes what it was sent, for tests.

    python3 tests/fakes/fake_echo.py     (prints its port, then serves)

Any GET, POST, PUT, PATCH or DELETE answers 200 with a JSON body
{"method", "path", "authorization", "x_api_key"}: the request's
Authorization and X-Api-Key headers ("" when absent). HEAD answers the
head a GET of the same path would (Content-Type, Content-Length), no
body, except under /_nohead/, where it is 405 Method Not Allowed (a server
that knows no HEAD). GET /_requests
returns every request seen so far (the same objects, oldest first);
POST /_reset forgets them. A GET under /_named/ answers text/plain with
the header "Content-Disposition: <the query, percent-decoded>" (a server
that names its file).
"""
import json
import urllib.parse

from fake_http import JSONHandler, serve

REQUESTS = []


class Handler(JSONHandler):
    def echo(self):
        self.read_body()
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
        if self.path.startswith("/_named/"):
            cd = urllib.parse.unquote(self.path.partition("?")[2])
            body = b"named file\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Disposition", cd)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_json(200, seen)

    def do_HEAD(self):
        seen = {"method": "HEAD", "path": self.path, "authorization": "",
                "x_api_key": ""}
        REQUESTS.append(seen)
        if self.path.startswith("/_nohead/"):
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = json.dumps(dict(seen, method="GET")).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()

    do_GET = echo
    do_POST = echo
    do_PUT = echo
    do_PATCH = echo
    do_DELETE = echo


def main():
    serve(Handler)


if __name__ == "__main__":
    main()
