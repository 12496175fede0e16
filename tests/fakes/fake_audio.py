#!/usr/bin/env python3
"""fake_audio.py - an OpenAI-compatible audio API on loopback, for the
audio tool's tests.

    python3 tests/fakes/fake_audio.py     (prints its port, then serves)

POST .../audio/speech answers the bytes AUDIO as audio/mpeg, or 400 with
an OpenAI error body when the JSON's voice is "fail". POST
.../audio/transcriptions answers {"text": TRANSCRIPT}. GET /_requests
returns every request seen so far, oldest first: {"method", "path",
"headers" (lower-case names), "body_b64"} - the body exactly as sent.
"""
import base64
import json

from fake_http import JSONHandler, serve

AUDIO = b"ID3\x03\x00fake-mp3\x00\xff\xfe"
TRANSCRIPT = "hello from the fake"
REQUESTS = []


class Handler(JSONHandler):
    def do_GET(self):
        if self.path == "/_requests":
            self.send_json(200, REQUESTS)
        else:
            self.send_json(404, {"error": {"message": "no such path"}})

    def do_POST(self):
        body = self.read_body()
        REQUESTS.append({
            "method": "POST", "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body_b64": base64.b64encode(body).decode()})
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/audio/speech"):
            try:
                voice = json.loads(body).get("voice")
            except ValueError:
                voice = None
            if voice == "fail":
                self.send_json(400, {"error": {"message": "bad voice",
                                               "type": "invalid_request"}})
                return
            self.send_response(200)
            self.send_header("Content-Type", "audio/mpeg")
            self.send_header("Content-Length", str(len(AUDIO)))
            self.end_headers()
            self.wfile.write(AUDIO)
        elif path.endswith("/audio/transcriptions"):
            self.send_json(200, {"text": TRANSCRIPT})
        else:
            self.send_json(404, {"error": {"message": "no such path"}})


if __name__ == "__main__":
    serve(Handler)
