#!/usr/bin/env python3
"""idle_conns.py - connections to a FastCGI port that misbehave.

Python 3 standard library only; used by tests/e2e/t_concurrency.sh and
tests/bench/concurrency.sh.

    idle_conns.py --port P --n N [--kind idle|partial|garbage|halfclose]
                  [--ready FILE] [--wait-close S]

Opens N TCP connections to 127.0.0.1:P and, per --kind, sends nothing
(idle), the first half of a FastCGI BEGIN_REQUEST record and then nothing
(partial: slowloris), bytes that are no FastCGI record (garbage), or
nothing and shuts down its writing side (halfclose). Then it touches FILE
(so a caller knows they are all open) and waits up to S seconds for the
server to close each one. Prints {"opened", "closed", "seconds"}: closed
counts connections the server ended (EOF or reset) within the wait.
"""
import argparse
import json
import resource
import select
import socket
import struct
import time


def begin_request():
    # FCGI_BEGIN_REQUEST, request id 1, role RESPONDER, no keep-alive
    body = struct.pack(">HB5x", 1, 0)
    return struct.pack(">BBHHBx", 1, 1, 1, len(body), 0) + body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--kind", default="idle",
                    choices=["idle", "partial", "garbage", "halfclose"])
    ap.add_argument("--ready")
    ap.add_argument("--wait-close", type=float, default=0)
    a = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, a.n + 64)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    socks = []
    t0 = time.monotonic()
    for _ in range(a.n):
        s = socket.create_connection(("127.0.0.1", a.port), timeout=10)
        if a.kind == "partial":
            s.sendall(begin_request()[:11])
        elif a.kind == "garbage":
            s.sendall(b"GET / HTTP/1.0\r\n\r\n" + bytes(range(256)))
        elif a.kind == "halfclose":
            s.shutdown(socket.SHUT_WR)
        socks.append(s)
    if a.ready:
        open(a.ready, "w").close()
    closed = set()
    by_fd = {s.fileno(): s for s in socks}
    p = select.poll()
    for fd in by_fd:
        p.register(fd, select.POLLIN)
    deadline = time.monotonic() + a.wait_close
    while len(closed) < len(socks) and time.monotonic() < deadline:
        for fd, _ in p.poll(500):
            try:
                if by_fd[fd].recv(4096) != b"":
                    continue
            except OSError:
                pass
            closed.add(fd)
            p.unregister(fd)
    print(json.dumps({"opened": len(socks), "closed": len(closed),
                      "seconds": round(time.monotonic() - t0, 2)}))
    for s in socks:
        s.close()


if __name__ == "__main__":
    main()
