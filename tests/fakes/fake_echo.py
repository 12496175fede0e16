#!/usr/bin/env python3
"""fake_echo.py - an HTTP server that echoes what it was sent, for tests.

    python3 tests/fakes/fake_echo.py     (prints its port, then serves)

Any GET, POST, PUT, PATCH or DELETE answers 200 with a JSON body
{"method", "path", "authorization", "x_api_key"}: the request's
Authorization and X-Api-Key headers ("" when absent). GET /_requests
returns every request seen so far (the same objects, oldest first);
POST /_reset forgets them.
"""
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
        self.send_json(200, seen)

    do_GET = echo
    do_POST = echo
    do_PUT = echo
    do_PATCH = echo
    do_DELETE = echo


def main():
    serve(Handler)


if __name__ == "__main__":
    main()
