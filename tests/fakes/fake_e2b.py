#!/usr/bin/env python3
"""fake_e2b.py - an offline E2B: the control plane REST API and envd (the
in-sandbox daemon) on one loopback port, speaking E2B's wire protocol byte
for byte (shared/reference/sandbox-protocols.md sections 1, 2 and 2.7).

Python 3 standard library only. Start it, read the port from the first line
of standard output, point an E2B client at http://127.0.0.1:PORT for both
the API and envd, and read back every request it received.

    python3 tests/fakes/fake_e2b.py [--port N] [--host H] [--api-key K]

Each fake sandbox is a real temporary folder standing for the sandbox's
root: sandbox path /home/user/a.txt is <folder>/home/user/a.txt, a relative
path is relative to /home/user, and commands really run (/bin/bash from the
host, in their own session, cwd and HOME mapped into the folder). It is a
protocol double, not an isolation boundary: commands run as the fake's user.

Addressing (as E2B's edge proxy routes, packages/shared/pkg/proxy/host.go):
  - a request carrying E2b-Sandbox-Id (and E2b-Sandbox-Port: 49983) goes to
    that sandbox's envd, whatever the Host (loopback form of the shared
    host "sandbox.<domain>");
  - Host "49983-<sandboxID>.<anything>" (per-sandbox host) goes to envd too;
  - anything else is the control plane.
A sandbox that does not exist (or was killed, or expired) answers envd
traffic with the proxy's 502 {"sandboxId", "message": "The sandbox was not
found", "code": 502}.

Control plane (X-API-Key must match --api-key / FAKE_E2B_API_KEY, default
e2b_0000000000000000000000000000000000000000; else 401 {code, message}):
  POST   /sandboxes, /v2/sandboxes       create -> 201 Sandbox; envdAccessToken
                                         only with "secure": true (/v2:
                                         secure unless "secure": false)
  GET    /sandboxes, /v2/sandboxes       list -> [ListedSandbox]
                                         (X-Total-Running header)
  GET    /sandboxes/{id}                 -> SandboxDetail, 404
  DELETE /sandboxes/{id}                 -> 204, 404
  POST   /sandboxes/{id}/timeout         {"timeout": s} -> 204 (TTL = now+s)
  POST   /sandboxes/{id}/refreshes       {"duration": s} -> 204 (TTL += s)
  POST   /sandboxes/{id}/connect, /v2/sandboxes/{id}/connect -> 200 Sandbox
A sandbox past its TTL is killed (processes and folder) by a reaper.

envd (X-Access-Token checked when the sandbox is secure; 401 plain JSON):
  GET  /health                          204
  GET  /envs                            {}
  GET  /files?path=&username=           raw bytes (gzip when accepted);
                                         404/400 {code, message}
  POST /files?path=&username=           multipart/form-data (parts named
                                         "file", target = path or filename)
                                         or application/octet-stream
                                         -> [{path, name, type: "file"}]
  POST /process.Process/Start           Connect server streaming, JSON
                                         codec, envelope framing: start,
                                         data (base64), keepalive (every
                                         Keepalive-Ping-Interval s), end,
                                         then the end-stream frame (0x02)
                                         with {} or {"error": {code,
                                         message}}; Connect-Timeout-Ms is
                                         the process lifetime (SIGKILL and
                                         deadline_exceeded at expiry)
  POST /process.Process/{SendSignal,SendInput,CloseStdin,List}  unary
  POST /filesystem.Filesystem/{Stat,ListDir,MakeDir,Move,Remove} unary
Unary errors are Connect errors: {"code": "not_found", "message"} with the
matching HTTP status.

Test hooks (no API key needed):
  GET  /_requests    every request so far: [{method, path, host, headers
                     (lower-case), body (JSON, or the decoded envelope
                     messages for connect+json, or null), raw_hex (first
                     4 KiB of the body), time}]
  POST /_reset       forget the requests
  GET  /_sandboxes   {id: {alive, dir, end_at, secure, metadata, processes}}
  POST /_drop_streams  cut every process.Process/Start stream in flight
                     (the processes go on running, as with a lost link)
  POST /_fail        {op: status | {"status", "message", "times"}} makes
                     op fail (until /_fail {} or "times" uses); ops: create,
                     list, get, kill, timeout, refresh, connect, files_get,
                     files_post, start, signal, listdir, stat, health.
                     Special start modes: {"start": {"mode": "end_error"}}
                     (end-stream error right after start), "truncate" (body
                     ends without the end-stream frame), "ignore_deadline"
                     (Connect-Timeout-Ms not enforced).
  Environment FAKE_E2B_FAIL holds the same JSON at start-up.
"""
import argparse
import base64
import gzip
import json
import os
import queue
import random
import re
import secrets
import shutil
import signal
import socket
import stat
import string
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from datetime import datetime, timezone
from http.server import ThreadingHTTPServer

from fake_http import JSONHandler, serve

ENVD_PORT = "49983"
ENVD_VERSION = "0.6.2"
DEFAULT_KEY = "e2b_" + "0" * 40
MAX_TIMEOUT = 24 * 3600

LOCK = threading.RLock()
STATE = {"requests": [], "fail": {}, "sandboxes": {}, "api_key": DEFAULT_KEY,
         "drop": 0}

CONNECT_HTTP = {
    "canceled": 499, "unknown": 500, "invalid_argument": 400,
    "deadline_exceeded": 504, "not_found": 404, "already_exists": 409,
    "permission_denied": 403, "resource_exhausted": 429,
    "failed_precondition": 400, "aborted": 409, "out_of_range": 400,
    "unimplemented": 501, "internal": 500, "unavailable": 503,
    "data_loss": 500, "unauthenticated": 401,
}

SIGNAL_NAMES = {
    1: "hangup", 2: "interrupt", 3: "quit", 4: "illegal instruction",
    5: "trace/breakpoint trap", 6: "aborted", 7: "bus error",
    8: "floating point exception", 9: "killed", 10: "user defined signal 1",
    11: "segmentation fault", 12: "user defined signal 2",
    13: "broken pipe", 14: "alarm clock", 15: "terminated",
}


def now_rfc3339(t=None):
    t = time.time() if t is None else t
    return datetime.fromtimestamp(t, timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")


def frame(obj, flags=0):
    """One Connect envelope: flags byte, big-endian length, JSON."""
    payload = json.dumps(obj, separators=(",", ":")).encode()
    return bytes([flags]) + len(payload).to_bytes(4, "big") + payload


def unframe(raw):
    """The envelope messages in raw: [(flags, obj or None)], or None."""
    out, off = [], 0
    while off < len(raw):
        if len(raw) - off < 5:
            return None
        flags = raw[off]
        n = int.from_bytes(raw[off + 1:off + 5], "big")
        if len(raw) - off - 5 < n:
            return None
        try:
            obj = json.loads(raw[off + 5:off + 5 + n] or b"null")
        except ValueError:
            obj = None
        out.append((flags, obj))
        off += 5 + n
    return out


def take_fail(op):
    """The failure scripted for op, consuming one use, or None."""
    with LOCK:
        f = STATE["fail"].get(op)
        if f is None:
            return None
        if isinstance(f, int):
            f = {"status": f}
        times = f.get("times")
        if times is not None:
            if times <= 1:
                del STATE["fail"][op]
            else:
                STATE["fail"][op] = dict(f, times=times - 1)
        return f


class Proc:
    def __init__(self, popen, config, tag):
        self.popen = popen
        self.config = config
        self.tag = tag


class Sandbox:
    def __init__(self, template, timeout, secure, metadata, env_vars):
        self.id = "i" + "".join(random.choice(string.ascii_lowercase +
                                              string.digits)
                                for _ in range(19))
        self.template = template
        self.secure = secure
        self.token = secrets.token_hex(16) if secure else None
        self.metadata = metadata or {}
        self.env_vars = env_vars or {}
        self.started = time.time()
        self.end_at = self.started + timeout
        self.dir = tempfile.mkdtemp(prefix="fake-e2b-")
        self.home = os.path.join(self.dir, "home", "user")
        os.makedirs(self.home)
        os.makedirs(os.path.join(self.dir, "tmp"))
        self.alive = True
        self.procs = {}

    def map(self, path):
        """Host path for a sandbox path (relative: to /home/user)."""
        if path is None or path == "":
            path = "/home/user"
        if not path.startswith("/"):
            path = "/home/user/" + path
        norm = os.path.normpath(path)
        if norm.startswith("//"):
            norm = norm[1:]
        return os.path.join(self.dir, norm.lstrip("/"))

    def unmap(self, host):
        rel = os.path.relpath(host, self.dir)
        return "/" if rel == "." else "/" + rel

    def kill(self):
        self.alive = False
        for p in list(self.procs.values()):
            try:
                os.killpg(p.popen.pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def view(self, detail=False):
        v = {"templateID": self.template, "sandboxID": self.id,
             "clientID": "6532622b", "envdVersion": ENVD_VERSION,
             "alias": self.template, "domain": None,
             "startedAt": now_rfc3339(self.started),
             "endAt": now_rfc3339(self.end_at), "cpuCount": 2,
             "memoryMB": 512, "diskSizeMB": 1024, "metadata": self.metadata,
             "state": "running"}
        if detail:
            v["envdAccessToken"] = self.token
        return v


def reaper():
    while True:
        time.sleep(0.2)
        with LOCK:
            for sb in list(STATE["sandboxes"].values()):
                if sb.alive and time.time() >= sb.end_at:
                    sb.kill()


def entry_info(sb, host):
    st = os.lstat(host)
    if stat.S_ISDIR(st.st_mode):
        typ = "FILE_TYPE_DIRECTORY"
    elif stat.S_ISLNK(st.st_mode):
        typ = "FILE_TYPE_SYMLINK"
    else:
        typ = "FILE_TYPE_FILE"
    e = {"name": os.path.basename(host) or "/", "type": typ,
         "path": sb.unmap(host), "size": str(st.st_size),
         "mode": stat.S_IMODE(st.st_mode) | (0o20000000000 if typ ==
                                              "FILE_TYPE_DIRECTORY" else 0),
         "permissions": stat.filemode(st.st_mode), "owner": "user",
         "group": "user", "modifiedTime": now_rfc3339(st.st_mtime)}
    if typ == "FILE_TYPE_SYMLINK":
        e["symlinkTarget"] = os.readlink(host)
    return e


class ConnectError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class Handler(JSONHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # Headers and body go out in separate writes: without this, Nagle
        # and delayed ACKs stall every exchange on a kept-alive connection.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # -- plumbing ----------------------------------------------------------

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            out = b""
            while True:
                line = self.rfile.readline().strip()
                n = int(line.split(b";")[0] or b"0", 16)
                if n == 0:
                    while self.rfile.readline().strip():
                        pass
                    return out
                out += self.rfile.read(n)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def record(self, raw):
        ct = (self.headers.get("Content-Type") or "").lower()
        body = None
        if ct.startswith("application/connect+json"):
            msgs = unframe(raw)
            body = [m[1] for m in msgs] if msgs is not None else None
        elif raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        rec = {"method": self.command, "path": self.path,
               "host": self.headers.get("Host"),
               "headers": {k.lower(): v for k, v in self.headers.items()},
               "body": body, "raw_hex": raw[:4096].hex(),
               "time": time.time()}
        with LOCK:
            STATE["requests"].append(rec)

    def send(self, status, body=b"", ctype="application/json", headers=None):
        if not isinstance(body, (bytes, bytearray)):
            body = json.dumps(body).encode()
        self.send_response(status)
        if status != 204:
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if status != 204 and self.command != "HEAD":
            self.wfile.write(body)

    def api_error(self, status, message):
        self.send(status, {"code": status, "message": message})

    def connect_error(self, code, message):
        self.send(CONNECT_HTTP.get(code, 500),
                  {"code": code, "message": message})

    def route(self):
        raw = self.read_body()
        self.record(raw)
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        query = urllib.parse.parse_qs(url.query)
        if path.startswith("/_"):
            return self.hooks(path, raw)
        sid = self.headers.get("E2b-Sandbox-Id")
        host = (self.headers.get("Host") or "").split(":")[0]
        m = re.match(r"^(\d+)-([a-z0-9]+)(-[^.]*)?\.", host)
        if sid is None and m is not None:
            sid = m.group(2)
            port = m.group(1)
        else:
            port = self.headers.get("E2b-Sandbox-Port", ENVD_PORT)
        if sid is not None:
            return self.envd(sid, port, path, query, raw)
        return self.control(path, query, raw)

    do_GET = do_POST = do_DELETE = do_PUT = route

    # -- test hooks --------------------------------------------------------

    def hooks(self, path, raw):
        if path == "/_requests":
            with LOCK:
                reqs = list(STATE["requests"])
            return self.send(200, reqs)
        if path == "/_reset":
            with LOCK:
                STATE["requests"] = []
            return self.send(200, {})
        if path == "/_fail":
            with LOCK:
                STATE["fail"] = json.loads(raw or b"{}")
            return self.send(200, {})
        if path == "/_drop_streams":
            with LOCK:
                STATE["drop"] += 1
            return self.send(200, {})
        if path == "/_sandboxes":
            with LOCK:
                v = {s.id: {"alive": s.alive, "dir": s.dir,
                            "end_at": s.end_at, "secure": s.secure,
                            "metadata": s.metadata,
                            "processes": [p.popen.pid for p in
                                          s.procs.values()
                                          if p.popen.poll() is None]}
                     for s in STATE["sandboxes"].values()}
            return self.send(200, v)
        return self.send(404, {"code": 404, "message": "no such hook"})

    # -- control plane -----------------------------------------------------

    def control(self, path, query, raw):
        key = self.headers.get("X-API-Key")
        if key != STATE["api_key"]:
            return self.api_error(401, "Invalid API key, it must start "
                                  "with 'e2b_' prefix and be valid"
                                  if key else "missing API key")
        parts = [p for p in path.split("/") if p]
        if parts and parts[0] == "v2":
            parts = parts[1:]
            v2 = True
        else:
            v2 = False
        if not parts or parts[0] != "sandboxes":
            return self.api_error(404, "not found")
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            return self.api_error(400, "request body is not JSON")
        if len(parts) == 1 and self.command == "POST":
            return self.create(body, v2)
        if len(parts) == 1 and self.command == "GET":
            f = take_fail("list")
            if f:
                return self.api_error(f["status"], f.get("message",
                                                         "list failed"))
            with LOCK:
                alive = [s.view() for s in STATE["sandboxes"].values()
                         if s.alive]
            limit = int((query.get("limit") or ["100"])[0])
            return self.send(200, alive[:limit],
                             headers={"X-Total-Running": str(len(alive))})
        with LOCK:
            sb = STATE["sandboxes"].get(parts[1])
        if sb is None or not sb.alive:
            return self.api_error(404, "sandbox \"%s\" doesn't exist or "
                                  "you don't have access to it" % parts[1])
        op = parts[2] if len(parts) > 2 else None
        if op is None and self.command == "GET":
            f = take_fail("get")
            if f:
                return self.api_error(f["status"], f.get("message",
                                                         "get failed"))
            return self.send(200, sb.view(detail=True))
        if op is None and self.command == "DELETE":
            f = take_fail("kill")
            if f:
                return self.api_error(f["status"], f.get("message",
                                                         "kill failed"))
            with LOCK:
                sb.kill()
            return self.send(204)
        if op == "timeout" and self.command == "POST":
            f = take_fail("timeout")
            if f:
                return self.api_error(f["status"], f.get("message",
                                                         "timeout failed"))
            t = body.get("timeout")
            if not isinstance(t, int) or t < 0:
                return self.api_error(400, "timeout must be an integer >= 0")
            if t > MAX_TIMEOUT:
                return self.api_error(400, "Timeout cannot be greater than "
                                      "24 hours")
            with LOCK:
                sb.end_at = time.time() + t
            return self.send(204)
        if op == "refreshes" and self.command == "POST":
            f = take_fail("refresh")
            if f:
                return self.api_error(f["status"], f.get("message",
                                                         "refresh failed"))
            d = body.get("duration", 60)
            if not isinstance(d, int) or d < 0 or d > 3600:
                return self.api_error(400, "duration must be 0..3600")
            with LOCK:
                sb.end_at = max(sb.end_at, time.time()) + d
            return self.send(204)
        if op == "connect" and self.command == "POST":
            f = take_fail("connect")
            if f:
                return self.api_error(f["status"], f.get("message",
                                                         "connect failed"))
            t = body.get("timeout")
            if isinstance(t, int) and t > 0:
                with LOCK:
                    sb.end_at = max(sb.end_at, time.time() + t)
            return self.send(200, sb.view(detail=True))
        return self.api_error(404, "not found")

    def create(self, body, v2):
        f = take_fail("create")
        if f:
            return self.api_error(f["status"], f.get(
                "message", "Failed to create sandbox: no capacity"))
        tid = body.get("templateID")
        if not isinstance(tid, str) or not tid:
            return self.api_error(400, "templateID is required")
        t = body.get("timeout", 15)
        if not isinstance(t, int) or t <= 0:
            return self.api_error(400, "Timeout must be greater than 0")
        if t > MAX_TIMEOUT:
            return self.api_error(400, "Timeout cannot be greater than "
                                  "24 hours")
        secure = body.get("secure", v2) is True
        sb = Sandbox(tid, t, secure, body.get("metadata"),
                     body.get("envVars"))
        with LOCK:
            STATE["sandboxes"][sb.id] = sb
        v = sb.view()
        for k in ("cpuCount", "memoryMB", "diskSizeMB", "metadata",
                  "state", "startedAt", "endAt"):
            del v[k]
        v["trafficAccessToken"] = None
        if secure:
            v["envdAccessToken"] = sb.token
        return self.send(201, v)

    # -- envd --------------------------------------------------------------

    def envd(self, sid, port, path, query, raw):
        with LOCK:
            sb = STATE["sandboxes"].get(sid)
        if sb is None or not sb.alive or port != ENVD_PORT:
            return self.send(502, {"sandboxId": sid, "message":
                                   "The sandbox was not found", "code": 502})
        if path == "/health":
            f = take_fail("health")
            if f:
                return self.api_error(f["status"], "unhealthy")
            return self.send(204)
        if sb.secure and self.headers.get("X-Access-Token") != sb.token:
            return self.api_error(401, "unauthorized access, please "
                                  "provide a valid access token or method "
                                  "signing if supported")
        if path == "/envs" and self.command == "GET":
            return self.send(200, sb.env_vars)
        if path == "/files" and self.command == "GET":
            return self.files_get(sb, query)
        if path == "/files" and self.command == "POST":
            return self.files_post(sb, query, raw)
        if self.command != "POST":
            return self.api_error(405, "method not allowed")
        if path == "/process.Process/Start":
            return self.start(sb, raw)
        m = re.match(r"^/(process\.Process|filesystem\.Filesystem)/(\w+)$",
                     path)
        if m is None:
            return self.connect_error("unimplemented", "%s is not "
                                      "implemented" % path)
        ct = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if ct != "application/json":
            return self.send(415, b"", "text/plain")
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            return self.connect_error("invalid_argument", "bad JSON")
        try:
            if m.group(1) == "process.Process":
                res = self.process_unary(sb, m.group(2), req)
            else:
                res = self.fs_unary(sb, m.group(2), req)
        except ConnectError as e:
            return self.connect_error(e.code, e.message)
        return self.send(200, res)

    def files_get(self, sb, query):
        f = take_fail("files_get")
        if f:
            return self.api_error(f["status"], f.get("message", "failed"))
        p = (query.get("path") or [""])[0]
        host = sb.map(p)
        if not os.path.lexists(host):
            return self.api_error(404, "path '%s' does not exist" %
                                  sb.unmap(host))
        if os.path.isdir(host):
            return self.api_error(400, "path '%s' is a directory" %
                                  sb.unmap(host))
        with open(host, "rb") as fh:
            data = fh.read()
        headers = {"Content-Disposition": "inline; filename=%s" %
                   os.path.basename(host)}
        if "gzip" in (self.headers.get("Accept-Encoding") or ""):
            data = gzip.compress(data)
            headers["Content-Encoding"] = "gzip"
        return self.send(200, data, "application/octet-stream", headers)

    def files_post(self, sb, query, raw):
        f = take_fail("files_post")
        if f:
            return self.api_error(f["status"], f.get("message", "failed"))
        qpath = (query.get("path") or [None])[0]
        ctype = self.headers.get("Content-Type") or ""
        items = []
        if ctype.startswith("multipart/form-data"):
            m = re.search(r'boundary="?([^";]+)"?', ctype)
            if m is None:
                return self.api_error(400, "multipart boundary missing")
            for name, fname, data in parse_multipart(raw, m.group(1)):
                if name != "file":
                    continue
                target = qpath or fname
                if not target:
                    return self.api_error(400, "no path for the file")
                items.append((target, data))
            if len(items) > 1 and qpath:
                return self.api_error(400, "cannot upload several files "
                                      "to one path")
        elif ctype.startswith("application/octet-stream"):
            if not qpath:
                return self.api_error(400, "path is required")
            if (self.headers.get("Content-Encoding") or "") == "gzip":
                raw = gzip.decompress(raw)
            items.append((qpath, raw))
        else:
            return self.api_error(400, "unsupported Content-Type %r" % ctype)
        if not items:
            return self.api_error(400, "no file in the request")
        out = []
        for target, data in items:
            host = sb.map(target)
            if os.path.isdir(host):
                return self.api_error(400, "path '%s' is a directory" %
                                      sb.unmap(host))
            os.makedirs(os.path.dirname(host), exist_ok=True)
            with open(host, "wb") as fh:
                fh.write(data)
            out.append({"path": sb.unmap(host),
                        "name": os.path.basename(host), "type": "file"})
        return self.send(200, out)

    def fs_unary(self, sb, method, req):
        f = take_fail(method.lower())
        if f:
            raise ConnectError(f.get("code", "internal"),
                               f.get("message", "failed"))
        if method == "Stat":
            host = sb.map(req.get("path"))
            if not os.path.lexists(host):
                raise ConnectError("not_found", "file not found: %s" %
                                   req.get("path"))
            return {"entry": entry_info(sb, host)}
        if method == "MakeDir":
            host = sb.map(req.get("path"))
            if os.path.lexists(host):
                raise ConnectError("already_exists", "directory already "
                                   "exists: %s" % req.get("path"))
            os.makedirs(host)
            return {"entry": entry_info(sb, host)}
        if method == "Remove":
            host = sb.map(req.get("path"))
            if not os.path.lexists(host):
                raise ConnectError("not_found", "file not found")
            if os.path.isdir(host) and not os.path.islink(host):
                shutil.rmtree(host)
            else:
                os.unlink(host)
            return {}
        if method == "Move":
            src = sb.map(req.get("source"))
            dst = sb.map(req.get("destination"))
            if not os.path.lexists(src):
                raise ConnectError("not_found", "source not found")
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            os.rename(src, dst)
            return {"entry": entry_info(sb, dst)}
        if method == "ListDir":
            depth = req.get("depth", 1)
            if not isinstance(depth, int) or depth < 1:
                depth = 1
            host = sb.map(req.get("path"))
            if not os.path.lexists(host):
                raise ConnectError("not_found", "directory not found: %s" %
                                   req.get("path"))
            if not os.path.isdir(host):
                raise ConnectError("invalid_argument", "path is not a "
                                   "directory: %s" % req.get("path"))
            entries = []

            def walk(d, level):
                for name in sorted(os.listdir(d)):
                    h = os.path.join(d, name)
                    entries.append(entry_info(sb, h))
                    if (level < depth and os.path.isdir(h) and
                            not os.path.islink(h)):
                        walk(h, level + 1)
            walk(host, 1)
            return {"entries": entries}
        raise ConnectError("unimplemented", "filesystem.Filesystem/%s is "
                           "not implemented" % method)

    def find_proc(self, sb, sel):
        sel = sel or {}
        for pid, p in sb.procs.items():
            if ("pid" in sel and int(sel["pid"]) == pid) or \
               ("tag" in sel and sel["tag"] == p.tag):
                return p
        raise ConnectError("not_found", "process with %s not found" %
                           json.dumps(sel))

    def process_unary(self, sb, method, req):
        f = take_fail("signal" if method == "SendSignal" else method.lower())
        if f:
            raise ConnectError(f.get("code", "internal"),
                               f.get("message", "failed"))
        if method == "List":
            return {"processes": [
                dict({"config": p.config, "pid": pid},
                     **({"tag": p.tag} if p.tag else {}))
                for pid, p in sb.procs.items() if p.popen.poll() is None]}
        if method == "SendSignal":
            p = self.find_proc(sb, req.get("process"))
            sig = req.get("signal")
            num = {"SIGNAL_SIGKILL": 9, "SIGNAL_SIGTERM": 15}.get(sig, sig)
            if num not in (9, 15):
                raise ConnectError("invalid_argument", "invalid signal")
            try:
                os.killpg(p.popen.pid, num)
            except OSError:
                pass
            return {}
        if method == "SendInput":
            p = self.find_proc(sb, req.get("process"))
            data = base64.b64decode((req.get("input") or {}).get("stdin",
                                                                  ""))
            if p.popen.stdin is None:
                raise ConnectError("failed_precondition", "stdin not "
                                   "enabled or closed")
            p.popen.stdin.write(data)
            p.popen.stdin.flush()
            return {}
        if method == "CloseStdin":
            p = self.find_proc(sb, req.get("process"))
            if p.popen.stdin is not None:
                p.popen.stdin.close()
                p.popen.stdin = None
            return {}
        raise ConnectError("unimplemented", "process.Process/%s is not "
                           "implemented" % method)

    # -- process.Process/Start ---------------------------------------------

    def stream_frame(self, obj, flags=0):
        data = frame(obj, flags)
        self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")
        self.wfile.flush()

    def start(self, sb, raw):
        ct = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if ct != "application/connect+json":
            return self.send(415, b"", "text/plain")
        f = take_fail("start")
        mode = None
        if f:
            if "mode" in f:
                mode = f["mode"]
            else:
                return self.api_error(f["status"], f.get("message",
                                                         "failed"))
        msgs = unframe(raw)
        self.send_response(200)
        self.send_header("Content-Type", "application/connect+json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            self.run_stream(sb, msgs, mode)
        except (BrokenPipeError, ConnectionResetError):
            pass    # the process goes on, as envd's does
        self.close_connection = True

    def end_stream(self, code=None, message=None):
        self.stream_frame({"error": {"code": code, "message": message}}
                          if code else {}, 0x02)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def run_stream(self, sb, msgs, mode):
        if msgs is None or len(msgs) != 1 or msgs[0][0] != 0 or \
                not isinstance(msgs[0][1], dict):
            return self.end_stream("invalid_argument", "the request must "
                                   "be one uncompressed enveloped message")
        req = msgs[0][1]
        cfg = req.get("process") or {}
        cmd = cfg.get("cmd")
        if not isinstance(cmd, str) or not cmd:
            return self.end_stream("invalid_argument", "process.cmd is "
                                   "required")
        args = cfg.get("args") or []
        cwd = sb.map(cfg.get("cwd") or "/home/user")
        if not os.path.isdir(cwd):
            return self.end_stream("invalid_argument", "error starting "
                                   "process: chdir %s: no such file or "
                                   "directory" % (cfg.get("cwd") or ""))
        tmo = self.headers.get("Connect-Timeout-Ms")
        deadline = None
        if tmo is not None:
            try:
                deadline = time.monotonic() + int(tmo) / 1000.0
            except ValueError:
                return self.end_stream("invalid_argument", "bad "
                                       "Connect-Timeout-Ms")
        if mode == "ignore_deadline":
            deadline = None
        try:
            ka = int(self.headers.get("Keepalive-Ping-Interval") or 90)
        except ValueError:
            ka = 90
        env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
                       "/sbin:/bin",
               "HOME": sb.home, "USER": "user", "LANG": "C.UTF-8",
               "E2B_SANDBOX": "true", "E2B_SANDBOX_ID": sb.id}
        env.update(sb.env_vars)
        env.update(cfg.get("envs") or {})
        with_stdin = req.get("stdin", True) is not False
        try:
            popen = subprocess.Popen(
                [cmd] + list(args), cwd=cwd, env=env,
                stdin=subprocess.PIPE if with_stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True)
        except OSError as e:
            return self.end_stream("invalid_argument", "error starting "
                                   "process: %s" % e)
        proc = Proc(popen, cfg, req.get("tag"))
        with LOCK:
            sb.procs[popen.pid] = proc
        q = queue.Queue()

        def pump(stream, name):
            while True:
                chunk = os.read(stream.fileno(), 32768)
                if not chunk:
                    break
                q.put((name, chunk))
            q.put((name, None))
        threads = [threading.Thread(target=pump, args=(popen.stdout, n),
                                    daemon=True)
                   for n in ("stdout",)]
        threads.append(threading.Thread(target=pump,
                                        args=(popen.stderr, "stderr"),
                                        daemon=True))
        for t in threads:
            t.start()
        self.stream_frame({"event": {"start": {"pid": popen.pid}}})
        if mode == "end_error":
            os.killpg(popen.pid, signal.SIGKILL)
            return self.end_stream("internal", "envd lost the process")
        if tmo is not None and int(tmo) <= 0:
            return self.end_stream("deadline_exceeded",
                                   "context deadline exceeded")
        open_streams = 2
        last_sent = time.monotonic()
        expired = False
        drop = STATE["drop"]
        while open_streams > 0:
            now = time.monotonic()
            if STATE["drop"] != drop:
                # /_drop_streams: the link is cut, the process goes on.
                self.connection.shutdown(socket.SHUT_RDWR)
                raise ConnectionResetError("dropped")
            if deadline is not None and now >= deadline:
                expired = True
                try:
                    os.killpg(popen.pid, signal.SIGKILL)
                except OSError:
                    pass
                break
            wait = min(ka - (now - last_sent), 0.1)
            if deadline is not None:
                wait = min(wait, deadline - now)
            try:
                name, chunk = q.get(timeout=max(wait, 0.001))
            except queue.Empty:
                if time.monotonic() - last_sent >= ka:
                    self.stream_frame({"event": {"keepalive": {}}})
                    last_sent = time.monotonic()
                continue
            if chunk is None:
                open_streams -= 1
                continue
            self.stream_frame({"event": {"data": {
                name: base64.b64encode(chunk).decode()}}})
            last_sent = time.monotonic()
        if expired:
            popen.wait()
            return self.end_stream("deadline_exceeded",
                                   "context deadline exceeded")
        while True:
            remaining = None if deadline is None else deadline - \
                time.monotonic()
            try:
                rc = popen.wait(timeout=min(ka, remaining) if remaining
                                is not None else ka)
                break
            except subprocess.TimeoutExpired:
                if deadline is not None and time.monotonic() >= deadline:
                    os.killpg(popen.pid, signal.SIGKILL)
                    popen.wait()
                    return self.end_stream("deadline_exceeded",
                                           "context deadline exceeded")
                self.stream_frame({"event": {"keepalive": {}}})
        if mode == "truncate":
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return None
        end = {}
        if rc >= 0:
            if rc != 0:
                end["exitCode"] = rc
            end["exited"] = True
            end["status"] = "exit status %d" % rc
        else:
            end["exitCode"] = -1
            end["status"] = "signal: %s" % SIGNAL_NAMES.get(-rc,
                                                            str(-rc))
        self.stream_frame({"event": {"end": end}})
        return self.end_stream()


def parse_multipart(raw, boundary):
    """[(form name, file name, bytes)] of a multipart/form-data body."""
    out = []
    delim = b"--" + boundary.encode()
    for part in raw.split(delim)[1:]:
        if part.startswith(b"--"):
            break
        part = part[2:] if part.startswith(b"\r\n") else part
        head, _, data = part.partition(b"\r\n\r\n")
        if data.endswith(b"\r\n"):
            data = data[:-2]
        disp = ""
        for line in head.decode("utf-8", "replace").split("\r\n"):
            if line.lower().startswith("content-disposition:"):
                disp = line
        name = re.search(r'\bname="([^"]*)"', disp)
        fname = re.search(r'\bfilename="((?:[^"\\]|\\.)*)"', disp)
        out.append((name.group(1) if name else None,
                    re.sub(r'\\(.)', r'\1', fname.group(1)) if fname
                    else None, data))
    return out


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--api-key", default=os.environ.get("FAKE_E2B_API_KEY",
                                                         DEFAULT_KEY))
    a = ap.parse_args()
    STATE["api_key"] = a.api_key
    if os.environ.get("FAKE_E2B_FAIL"):
        STATE["fail"] = json.loads(os.environ["FAKE_E2B_FAIL"])
    threading.Thread(target=reaper, daemon=True).start()

    def stop(*_):
        with LOCK:
            for sb in STATE["sandboxes"].values():
                if sb.alive:
                    sb.kill()
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    serve(Handler, a.port, a.host, Server)


if __name__ == "__main__":
    main()
