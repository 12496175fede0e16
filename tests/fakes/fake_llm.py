#!/usr/bin/env python3
"""fake_llm.py - a scripted fake of OpenAI-compatible and Anthropic model APIs.

Python 3 standard library only. Start it, read the port from the first line
of standard output, point a model provider at it, script the answers, and
read back every request it received.

    python3 tests/fakes/fake_llm.py [--script FILE] [--port N] [--host H]

Endpoints
  POST .../chat/completions   OpenAI chat completions (base URL ".../v1")
  POST .../messages           Anthropic Messages (base URL the server root)
  GET  .../models             {"object": "list", "data": [{"id": ...}]}
  POST /_script               replace the script (body: the script JSON);
                              also clears recorded requests unless
                              {"keep_requests": true}
  GET  /_requests             every request so far, oldest first:
                              [{method, path, headers (lower-case names),
                                body (parsed JSON or null), raw, time}]
  POST /_reset                forget the recorded requests
  POST /_release              lets a stream held by "hold_after" go on
  GET  /_streams              {"started", "completed", "cancelled"}: streamed
                              answers begun, sent to the end, and cut off
                              because the client closed the connection
  GET  /_sent                 the text pieces of the last streamed answer
                              as they were sent: [{"text", "time"}], time
                              (time.time()) taken once the piece was flushed

Script: {"responses": [...], "api_key": "sk-...", "models": ["m1"]}, or
just the list. With api_key set, a request without "Authorization: Bearer
<key>" (OpenAI) or "x-api-key: <key>" (Anthropic) gets 401 with the
provider's error body ("Incorrect API key provided" / "invalid x-api-key").

A request takes the first unused response whose "match" (if any) is a
substring of the text of its last user message. A response is used once
unless "repeat": true. When none is left the answer is the text
"echo: <last user message>". Fields of a response:
  match          substring of the last user message
  text           the answer text (default "" when tool_calls are given)
  chunks         the answer text in stream pieces (joined when not streamed)
  reasoning      reasoning text (OpenAI-compatible: reasoning_content, as
                 DeepSeek sends it; Anthropic: a thinking block)
  tool_calls     [{"id", "name", "arguments" (object or JSON text)}]
  finish_reason  OpenAI finish_reason / Anthropic stop_reason to send
                 (defaults: stop / end_turn, tool_calls / tool_use)
  usage          {"prompt_tokens", "completion_tokens"} (defaults from
                 lengths); Anthropic sends them as input/output tokens
  first_delay    seconds before anything is sent (a slow first token)
  delay          seconds between stream chunks
  hold_after     stream: after this many chunks, wait for POST /_release
                 (at most 60 s) before the rest: a run held mid-answer
  status         an HTTP error status; with "error" (message) and
                 "error_type" a provider-shaped error body is sent
  retry_after    a Retry-After header value (seconds), e.g. with 429
  raw            send this body as it is (with "content_type")
  truncate       stream: stop after the chunks, before finish/[DONE]
  model          model name to report (default: the one requested)
"""
import argparse
import json
import sys
import threading
import time
from http.server import ThreadingHTTPServer

from fake_http import JSONHandler, serve

LOCK = threading.Lock()
STATE = {"script": {"responses": []}, "used": set(), "requests": [],
         "streams": {"started": 0, "completed": 0, "cancelled": 0},
         "sent": []}
RELEASE = threading.Event()


def count(what):
    with LOCK:
        STATE["streams"][what] += 1


def normalise(script):
    if isinstance(script, list):
        script = {"responses": script}
    script.setdefault("responses", [])
    return script


def last_user_text(body, anthropic):
    msgs = (body or {}).get("messages") or []
    for m in reversed(msgs):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            return c
        if isinstance(c, list):
            parts = []
            for p in c:
                if isinstance(p, dict) and p.get("type") == "text":
                    parts.append(p.get("text", ""))
                if isinstance(p, dict) and p.get("type") == "tool_result":
                    tc = p.get("content")
                    parts.append(tc if isinstance(tc, str) else
                                 json.dumps(tc))
            return "".join(parts)
    return ""


def pick(text):
    with LOCK:
        for i, r in enumerate(STATE["script"]["responses"]):
            if i in STATE["used"]:
                continue
            m = r.get("match")
            if m is not None and m not in text:
                continue
            if not r.get("repeat"):
                STATE["used"].add(i)
            return r
    return {"text": "echo: " + text}


class Handler(JSONHandler):
    protocol_version = "HTTP/1.1"

    # -- plumbing ----------------------------------------------------------

    def record(self, raw):
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        rec = {"method": self.command, "path": self.path,
               "headers": {k.lower(): v for k, v in self.headers.items()},
               "body": body, "raw": raw.decode("utf-8", "replace"),
               "time": time.time()}
        with LOCK:
            STATE["requests"].append(rec)
        return body

    def send(self, status, body, ctype="application/json", headers=None):
        data = body if isinstance(body, bytes) else (
            body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, data, event=None):
        s = ""
        if event is not None:
            s += "event: %s\n" % event
        s += "data: %s\n\n" % (data if isinstance(data, str)
                               else json.dumps(data))
        self.wfile.write(s.encode())
        self.wfile.flush()

    # -- routes --------------------------------------------------------------

    def do_GET(self):
        if self.path.startswith("/_requests"):
            with LOCK:
                self.send(200, STATE["requests"])
            return
        if self.path.startswith("/_streams"):
            with LOCK:
                self.send(200, dict(STATE["streams"]))
            return
        if self.path.startswith("/_sent"):
            with LOCK:
                self.send(200, list(STATE["sent"]))
            return
        self.record(b"")
        if self.path.rstrip("/").endswith("/models"):
            with LOCK:
                names = STATE["script"].get("models") or ["fake-model"]
            self.send(200, {"object": "list", "data": [
                {"id": n, "object": "model", "created": 0,
                 "owned_by": "fake", "type": "model",
                 "display_name": n} for n in names]})
            return
        self.send(404, {"error": {"message": "no such path",
                                  "type": "invalid_request_error"}})

    def do_POST(self):
        raw = self.read_body()
        if self.path == "/_script":
            script = json.loads(raw or b"[]")
            keep = isinstance(script, dict) and script.get("keep_requests")
            with LOCK:
                STATE["script"] = normalise(script)
                STATE["used"] = set()
                if not keep:
                    STATE["requests"] = []
            self.send(200, {"result": "ok"})
            return
        if self.path == "/_release":
            RELEASE.set()
            self.send(200, {"result": "ok"})
            return
        if self.path == "/_reset":
            with LOCK:
                STATE["requests"] = []
            self.send(200, {"result": "ok"})
            return
        body = self.record(raw)
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/chat/completions"):
            self.openai(body)
        elif path.endswith("/messages"):
            self.anthropic(body)
        else:
            self.send(404, {"error": {"message": "no such path " + path,
                                      "type": "invalid_request_error"}})

    # -- shared --------------------------------------------------------------

    def authorised(self, anthropic):
        with LOCK:
            key = STATE["script"].get("api_key")
        if not key:
            return True
        if anthropic:
            return self.headers.get("x-api-key") == key
        return self.headers.get("Authorization") == "Bearer " + key

    def error(self, r, anthropic, status, message=None, etype=None):
        message = message or r.get("error") or "scripted error"
        headers = {}
        if r.get("retry_after") is not None:
            headers["Retry-After"] = str(r["retry_after"])
        if anthropic:
            body = {"type": "error", "error": {
                "type": etype or r.get("error_type") or "api_error",
                "message": message}}
        else:
            body = {"error": {"message": message,
                              "type": etype or r.get("error_type") or
                              "invalid_request_error",
                              "param": None, "code": None}}
        self.send(status, body, headers=headers)

    def prelude(self, body, anthropic):
        """Auth, script pick, delays, errors. Returns the response or None."""
        if not self.authorised(anthropic):
            r = {}
            if anthropic:
                self.error(r, True, 401, "invalid x-api-key",
                           "authentication_error")
            else:
                self.error(r, False, 401, "Incorrect API key provided",
                           "invalid_request_error")
            return None
        r = pick(last_user_text(body, anthropic))
        if r.get("first_delay"):
            time.sleep(float(r["first_delay"]))
        if r.get("raw") is not None:
            self.send(int(r.get("status", 200)), r["raw"],
                      r.get("content_type", "application/json"))
            return None
        if r.get("status") and int(r["status"]) >= 400:
            self.error(r, anthropic, int(r["status"]))
            return None
        return r

    @staticmethod
    def pieces(r):
        if r.get("chunks") is not None:
            return [str(c) for c in r["chunks"]]
        t = r.get("text")
        if t is None:
            t = "" if r.get("tool_calls") else "ok"
        return [t] if t else []

    @staticmethod
    def args_text(tc):
        a = tc.get("arguments", {})
        return a if isinstance(a, str) else json.dumps(a)

    def usage(self, r, text):
        u = r.get("usage") or {}
        p = int(u.get("prompt_tokens", 10))
        c = int(u.get("completion_tokens", max(1, len(text) // 4)))
        return p, c

    # -- OpenAI --------------------------------------------------------------

    def openai(self, body):
        body = body or {}
        r = self.prelude(body, False)
        if r is None:
            return
        model = r.get("model") or body.get("model") or "fake-model"
        pieces = self.pieces(r)
        text = "".join(pieces)
        calls = r.get("tool_calls") or []
        finish = r.get("finish_reason") or ("tool_calls" if calls
                                            else "stop")
        p, c = self.usage(r, text)
        usage = {"prompt_tokens": p, "completion_tokens": c,
                 "total_tokens": p + c}
        cid = "chatcmpl-fake"
        created = int(time.time())
        if not body.get("stream"):
            msg = {"role": "assistant", "content": text if text or not calls
                   else None}
            if r.get("reasoning"):
                msg["reasoning_content"] = r["reasoning"]
            if calls:
                msg["tool_calls"] = [
                    {"id": tc.get("id", "call_%d" % i), "type": "function",
                     "function": {"name": tc["name"],
                                  "arguments": self.args_text(tc)}}
                    for i, tc in enumerate(calls)]
            self.send(200, {"id": cid, "object": "chat.completion",
                            "created": created, "model": model,
                            "choices": [{"index": 0, "message": msg,
                                         "logprobs": None,
                                         "finish_reason": finish}],
                            "usage": usage})
            return
        include_usage = (body.get("stream_options") or {}).get(
            "include_usage")
        count("started")
        try:
            self.openai_stream(r, body, model, pieces, calls, finish,
                               usage, cid, created, include_usage)
        except (BrokenPipeError, ConnectionResetError):
            count("cancelled")
            raise
        count("completed")

    def openai_stream(self, r, body, model, pieces, calls, finish, usage,
                      cid, created, include_usage):
        self.start_stream()

        def chunk(delta, fin=None, use=None, choices=True):
            o = {"id": cid, "object": "chat.completion.chunk",
                 "created": created, "model": model,
                 "system_fingerprint": "fp_fake",
                 "choices": [{"index": 0, "delta": delta, "logprobs": None,
                              "finish_reason": fin}] if choices else []}
            if use is not None or include_usage:
                o["usage"] = use
            self.sse(o)

        delay = float(r.get("delay") or 0)
        sent = []
        with LOCK:
            STATE["sent"] = sent
        chunk({"role": "assistant", "content": "", "refusal": None})
        if r.get("reasoning"):
            chunk({"reasoning_content": r["reasoning"]})
        hold = r.get("hold_after")
        if hold is not None:
            RELEASE.clear()
        for n, piece in enumerate(pieces):
            if hold is not None and n == hold:
                RELEASE.wait(60)
            if delay:
                time.sleep(delay)
            chunk({"content": piece})
            with LOCK:
                sent.append({"text": piece, "time": time.time()})
        for i, tc in enumerate(calls):
            a = self.args_text(tc)
            half = len(a) // 2
            chunk({"tool_calls": [{"index": i, "id": tc.get(
                "id", "call_%d" % i), "type": "function", "function": {
                    "name": tc["name"], "arguments": ""}}]})
            chunk({"tool_calls": [{"index": i, "function": {
                "arguments": a[:half]}}]})
            chunk({"tool_calls": [{"index": i, "function": {
                "arguments": a[half:]}}]})
        if r.get("truncate"):
            return
        chunk({}, finish)
        if include_usage:
            chunk(None, use=usage, choices=False)
        self.sse("[DONE]")

    # -- Anthropic ------------------------------------------------------------

    def anthropic(self, body):
        body = body or {}
        r = self.prelude(body, True)
        if r is None:
            return
        model = r.get("model") or body.get("model") or "fake-model"
        pieces = self.pieces(r)
        text = "".join(pieces)
        calls = r.get("tool_calls") or []
        stop = r.get("finish_reason") or ("tool_use" if calls
                                          else "end_turn")
        p, c = self.usage(r, text)
        mid = "msg_fake"
        if not body.get("stream"):
            content = []
            if r.get("reasoning"):
                content.append({"type": "thinking",
                                "thinking": r["reasoning"],
                                "signature": "sig"})
            if text:
                content.append({"type": "text", "text": text})
            for i, tc in enumerate(calls):
                a = tc.get("arguments", {})
                content.append({"type": "tool_use",
                                "id": tc.get("id", "toolu_%d" % i),
                                "name": tc["name"],
                                "input": json.loads(a) if isinstance(
                                    a, str) else a})
            self.send(200, {"id": mid, "type": "message",
                            "role": "assistant", "model": model,
                            "content": content, "stop_reason": stop,
                            "stop_sequence": None,
                            "usage": {"input_tokens": p,
                                      "output_tokens": c}})
            return
        self.start_stream()
        delay = float(r.get("delay") or 0)
        self.sse({"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": p, "output_tokens": 1}}},
            "message_start")
        idx = 0
        if r.get("reasoning"):
            self.sse({"type": "content_block_start", "index": idx,
                      "content_block": {"type": "thinking",
                                        "thinking": ""}},
                     "content_block_start")
            self.sse({"type": "content_block_delta", "index": idx,
                      "delta": {"type": "thinking_delta",
                                "thinking": r["reasoning"]}},
                     "content_block_delta")
            self.sse({"type": "content_block_stop", "index": idx},
                     "content_block_stop")
            idx += 1
        if pieces:
            self.sse({"type": "content_block_start", "index": idx,
                      "content_block": {"type": "text", "text": ""}},
                     "content_block_start")
            self.sse({"type": "ping"}, "ping")
            for piece in pieces:
                if delay:
                    time.sleep(delay)
                self.sse({"type": "content_block_delta", "index": idx,
                          "delta": {"type": "text_delta", "text": piece}},
                         "content_block_delta")
            self.sse({"type": "content_block_stop", "index": idx},
                     "content_block_stop")
            idx += 1
        for i, tc in enumerate(calls):
            a = self.args_text(tc)
            half = len(a) // 2
            self.sse({"type": "content_block_start", "index": idx,
                      "content_block": {"type": "tool_use",
                                        "id": tc.get("id", "toolu_%d" % i),
                                        "name": tc["name"], "input": {}}},
                     "content_block_start")
            for part in ("", a[:half], a[half:]):
                self.sse({"type": "content_block_delta", "index": idx,
                          "delta": {"type": "input_json_delta",
                                    "partial_json": part}},
                         "content_block_delta")
            self.sse({"type": "content_block_stop", "index": idx},
                     "content_block_stop")
            idx += 1
        if r.get("truncate"):
            return
        self.sse({"type": "message_delta",
                  "delta": {"stop_reason": stop, "stop_sequence": None},
                  "usage": {"output_tokens": c}}, "message_delta")
        self.sse({"type": "message_stop"}, "message_stop")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024   # hundreds of simultaneous streams

    def handle_error(self, request, client_address):
        # A client that gave up (a timeout test) is not an error here.
        exc = sys.exc_info()[1]
        if not isinstance(exc, (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--script", help="script JSON file")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    a = ap.parse_args()
    if a.script:
        with open(a.script) as f:
            STATE["script"] = normalise(json.load(f))
    serve(Handler, a.port, a.host, Server)


if __name__ == "__main__":
    main()
