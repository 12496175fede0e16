"""fake_http.py - what the HTTP fakes beside it share: a request handler
that keeps quiet, reads a body and answers JSON, and their start: a free
loopback port printed on the first line of stdout, then serving until
killed.

    from fake_http import JSONHandler, serve
    class Handler(JSONHandler): ...
    serve(Handler)
"""
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JSONHandler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def send_json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve(handler, port=0, host="127.0.0.1", server=ThreadingHTTPServer,
          banner="%d"):
    """Serves handler on host:port (0: a free one); the first line of
    stdout is banner with the port, so that a test can wait for it."""
    srv = server((host, port), handler)
    srv.daemon_threads = True
    print(banner % srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
