#!/usr/bin/env python3
"""stream_load.py - N simultaneous streaming chats through the service API.

Python 3 standard library only; used by tests/e2e/t_concurrency.sh and
tests/bench/concurrency.sh.

    stream_load.py --base URL --key APPKEY --n N --expect TEXT
                   [--token ADMIN] [--probes K] [--verify] [--timeout S]

Each of N threads posts {"query": "load <i>", "user": "load-<i>",
"response_mode": "streaming"} to /v1/chat-messages and reads the events to
message_end. Once every stream has its first event (all runs are going at
once), it times K requests each of GET /healthz and, with --token, GET
/console/api/apps. With --verify it then reads every conversation back
(/v1/messages) and compares the stored answer. Prints one JSON object:
{n, started, completed, answers_ok, stored_ok, healthz_ms, console_ms,
probe_status, errors, seconds}.
"""
import argparse
import http.client
import json
import threading
import time
import urllib.parse


def conn_for(base, timeout):
    u = urllib.parse.urlsplit(base)
    return http.client.HTTPConnection(u.hostname, u.port or 80,
                                      timeout=timeout), u.path.rstrip("/")


def stream_one(a, i, res, first_event):
    c, prefix = conn_for(a.base, a.timeout)
    r = {"ok": False, "answer": "", "conversation_id": None, "error": None}
    try:
        body = json.dumps({"inputs": {}, "query": "load %d" % i,
                           "user": "load-%d" % i,
                           "response_mode": "streaming"})
        c.request("POST", prefix + "/v1/chat-messages", body,
                  {"Authorization": "Bearer " + a.key,
                   "Content-Type": "application/json"})
        resp = c.getresponse()
        if resp.status != 200:
            r["error"] = "status %d: %s" % (resp.status,
                                            resp.read(300).decode())
            return
        seen = False
        parts = []
        while True:
            line = resp.readline()
            if not line:
                r["error"] = "stream ended before message_end"
                break
            if not line.startswith(b"data: "):
                continue
            ev = json.loads(line[6:])
            if not seen:
                seen = True
                first_event.release()
            if ev.get("event") == "message":
                parts.append(ev.get("answer", ""))
            if ev.get("event") == "message_end":
                r["ok"] = True
                r["conversation_id"] = ev.get("conversation_id")
                break
            if ev.get("event") == "error":
                r["error"] = ev.get("message")
                break
        r["answer"] = "".join(parts)
    except Exception as e:  # a failed stream is a counted result
        r["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        res[i] = r
        c.close()


def timed_get(a, path, headers):
    c, prefix = conn_for(a.base, a.timeout)
    t0 = time.monotonic()
    try:
        c.request("GET", prefix + path, headers=headers)
        resp = c.getresponse()
        resp.read()
        return resp.status, (time.monotonic() - t0) * 1000
    except Exception:
        return 0, (time.monotonic() - t0) * 1000
    finally:
        c.close()


def stored_answer(a, conv, i):
    c, prefix = conn_for(a.base, a.timeout)
    try:
        q = urllib.parse.urlencode({"conversation_id": conv,
                                    "user": "load-%d" % i})
        c.request("GET", prefix + "/v1/messages?" + q,
                  headers={"Authorization": "Bearer " + a.key})
        resp = c.getresponse()
        data = json.loads(resp.read())
        msgs = data.get("data") or []
        return msgs[-1].get("answer") if msgs else None
    except Exception:
        return None
    finally:
        c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--expect", required=True)
    ap.add_argument("--token")
    ap.add_argument("--probes", type=int, default=20)
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()

    t0 = time.monotonic()
    res = [None] * a.n
    first = threading.Semaphore(0)
    threads = [threading.Thread(target=stream_one, args=(a, i, res, first))
               for i in range(a.n)]
    for t in threads:
        t.start()
    started = 0
    deadline = time.monotonic() + a.timeout
    while started < a.n and time.monotonic() < deadline:
        if first.acquire(timeout=0.5):
            started += 1
        elif all(r is not None for r in res):
            break
    out = {"n": a.n, "started": started, "healthz_ms": [], "console_ms": [],
           "probe_status": []}
    for _ in range(a.probes):
        st, ms = timed_get(a, "/healthz", {})
        out["healthz_ms"].append(round(ms, 2))
        out["probe_status"].append(st)
        if a.token:
            st, ms = timed_get(a, "/console/api/apps",
                               {"Authorization": "Bearer " + a.token})
            out["console_ms"].append(round(ms, 2))
            out["probe_status"].append(st)
    for t in threads:
        t.join()
    out["completed"] = sum(1 for r in res if r and r["ok"])
    out["answers_ok"] = sum(1 for r in res
                            if r and r["ok"] and r["answer"] == a.expect)
    if a.verify:
        out["stored_ok"] = sum(
            1 for i, r in enumerate(res) if r and r["ok"] and
            stored_answer(a, r["conversation_id"], i) == a.expect)
    errs = {}
    for r in res:
        if r and r["error"]:
            errs[r["error"]] = errs.get(r["error"], 0) + 1
    out["errors"] = errs
    out["seconds"] = round(time.monotonic() - t0, 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
