#!/usr/bin/env python3
"""fcgi_probe.py - one FastCGI request straight to flowcgi, bypassing the
web server, as any local user could send it.

Python 3 standard library only; used by tests/e2e/t_listen.sh.

    fcgi_probe.py (--port P [--host H] [--bind ADDR] | --unix PATH)
                  [--uri /healthz] [--param NAME=VALUE ...] [--silent]
                  [--timeout S] [--body-file FILE]

Connects to H:P (127.0.0.1 by default; from ADDR with --bind) or to the
unix socket PATH, sends one GET request for URI with the parameters a web
server sets (REMOTE_ADDR 127.0.0.1 unless --param gives another), and
reads until the server ends the request or closes. With --silent it sends
nothing and only waits for the server to close. Prints one JSON line:
{"result": "answered" | "closed" | "timeout" | "refused", "status": the
HTTP status of an answer or null, "ms": time from connect to result,
"body": the start of the answer's body}; the whole body goes to FILE.
"""
import argparse
import json
import socket
import struct
import time


def record(rtype, content, req_id=1):
    return struct.pack(">BBHHBx", 1, rtype, req_id, len(content), 0) + content


def nv(name, value):
    def ln(n):
        return bytes([n]) if n < 128 else struct.pack(">I", n | 0x80000000)
    n, v = name.encode(), value.encode()
    return ln(len(n)) + ln(len(v)) + n + v


def request(uri, params):
    p = {"REQUEST_METHOD": "GET", "REQUEST_URI": uri, "SCRIPT_NAME": "",
         "DOCUMENT_URI": uri.split("?")[0], "QUERY_STRING": "",
         "SERVER_PROTOCOL": "HTTP/1.1", "GATEWAY_INTERFACE": "CGI/1.1",
         "REMOTE_ADDR": "127.0.0.1", "SERVER_NAME": "localhost",
         "SERVER_PORT": "80"}
    p.update(params)
    body = b"".join(nv(k, v) for k, v in p.items())
    return (record(1, struct.pack(">HB5x", 1, 0)) + record(4, body) +
            record(4, b"") + record(5, b""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int)
    ap.add_argument("--bind")
    ap.add_argument("--unix")
    ap.add_argument("--uri", default="/healthz")
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--silent", action="store_true")
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--body-file")
    a = ap.parse_args()
    params = dict(x.split("=", 1) for x in a.param)
    out = {"result": None, "status": None, "ms": None, "body": ""}
    t0 = time.monotonic()
    try:
        if a.unix:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(a.timeout)
            s.connect(a.unix)
        else:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(a.timeout)
            if a.bind:
                s.bind((a.bind, 0))
            s.connect((a.host, a.port))
    except OSError as e:
        out.update(result="refused", body=str(e),
                   ms=round((time.monotonic() - t0) * 1000))
        print(json.dumps(out))
        return
    t0 = time.monotonic()
    data = b""
    try:
        if not a.silent:
            s.sendall(request(a.uri, params))
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if b"\x01\x03\x00\x01" in data:   # FCGI_END_REQUEST, id 1
                break
    except socket.timeout:
        out["result"] = "timeout"
    except OSError:
        pass                                  # reset: closed
    out["ms"] = round((time.monotonic() - t0) * 1000)
    stdout = b""
    i = 0
    while i + 8 <= len(data):
        _, rtype, _, clen, plen = struct.unpack(">BBHHB", data[i:i + 7])
        if rtype == 6:
            stdout += data[i + 8:i + 8 + clen]
        i += 8 + clen + plen
    if stdout:
        out["result"] = "answered"
        head, _, body = stdout.partition(b"\r\n\r\n")
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"status:"):
                out["status"] = int(line.split()[1])
        if out["status"] is None:
            out["status"] = 200
        out["body"] = body[:200].decode("utf-8", "replace")
        if a.body_file:
            with open(a.body_file, "wb") as f:
                f.write(body)
    elif out["result"] is None:
        out["result"] = "closed"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
