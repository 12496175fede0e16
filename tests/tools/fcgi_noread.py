#!/usr/bin/env python3
"""fcgi_noread.py - a FastCGI client that asks for an answer and never reads.

Python 3 standard library only; used by tests/e2e/t_concurrency.sh.

    fcgi_noread.py --port P --uri URI [--token T] [--hold S]

Sends one well-formed FastCGI GET request for URI (FCGI_BEGIN_REQUEST,
FCGI_PARAMS, empty FCGI_STDIN) to 127.0.0.1:P with a small receive buffer,
then reads nothing for S seconds (default 10), so the server's writes block.
Prints {"sent": true}.
"""
import argparse
import json
import socket
import struct
import time


def record(rtype, content, rid=1):
    return struct.pack(">BBHHBx", 1, rtype, rid, len(content), 0) + content


def nv(name, value):
    n, v = name.encode(), value.encode()
    return bytes([len(n)]) + (bytes([len(v)]) if len(v) < 128 else
                              struct.pack(">I", len(v) | 0x80000000)) + n + v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--uri", required=True)
    ap.add_argument("--token")
    ap.add_argument("--hold", type=float, default=10)
    a = ap.parse_args()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", a.port))
    params = [("REQUEST_METHOD", "GET"), ("REQUEST_URI", a.uri),
              ("DOCUMENT_URI", a.uri), ("SCRIPT_NAME", a.uri),
              ("QUERY_STRING", ""), ("SERVER_PROTOCOL", "HTTP/1.1")]
    if a.token:
        params.append(("HTTP_AUTHORIZATION", "Bearer " + a.token))
    body = b"".join(nv(k, v) for k, v in params)
    s.sendall(record(1, struct.pack(">HB5x", 1, 0)) + record(4, body) +
              record(4, b"") + record(5, b""))
    time.sleep(a.hold)
    print(json.dumps({"sent": True}))
    s.close()


if __name__ == "__main__":
    main()
