#!/usr/bin/env python3
"""compare.py <fixture> <stream> - a stream of server-sent events compared
event by event with a recorded Dify stream (tests/e2e/streams/*.events).

The fixture: one event a line as JSON; lines starting with "#" are
comments (where in Dify's source or docs the event comes from). A value is
  - a fixed value (compared as it is), or
  - a shape: "<uuid>", "<timestamp>" (integer seconds), "<int>",
    "<number>", "<string>", "<bool>", "<null>", "<object>", "<array>",
    alternatives joined by "|" ("<string|null>"); "<uuid:name>" is a uuid
    equal to every other "<uuid:name>" of the stream;
  - an object: exactly these keys, each compared the same way;
  - {"<each>": value}: a non-empty array whose every item is compared
    with value.
An event line may carry "<repeat>": "+": one or more such events in a row.
Prints each difference ("event 3 (message): .answer: ..."), exits 1 when
there is any; the events compared are named on the last line.
"""
import json
import re
import sys

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                  r"[0-9a-f]{12}$")
NAMES = {}


def shape_ok(shape, v):
    for alt in shape[1:-1].split("|"):
        kind, _, name = alt.partition(":")
        if kind == "uuid" and isinstance(v, str) and UUID.match(v):
            if name:
                if NAMES.setdefault(name, v) != v:
                    continue
            return True
        if kind == "timestamp" and isinstance(v, int) and \
                not isinstance(v, bool) and 1500000000 < v < 4000000000:
            return True
        if kind == "int" and isinstance(v, int) and not isinstance(v, bool):
            return True
        if kind == "number" and isinstance(v, (int, float)) and \
                not isinstance(v, bool):
            return True
        if kind == "string" and isinstance(v, str):
            return True
        if kind == "bool" and isinstance(v, bool):
            return True
        if kind == "null" and v is None:
            return True
        if kind == "object" and isinstance(v, dict):
            return True
        if kind == "array" and isinstance(v, list):
            return True
    return False


def diff(want, got, path, out):
    if isinstance(want, str) and want.startswith("<") and \
            want.endswith(">"):
        if not shape_ok(want, got):
            out.append("%s: %s, not %s" % (path or ".", json.dumps(got),
                                           want))
        return
    if isinstance(want, dict) and list(want) == ["<each>"]:
        if not isinstance(got, list) or not got:
            out.append("%s: %s, not a non-empty array" % (path,
                                                          json.dumps(got)))
            return
        for i, item in enumerate(got):
            diff(want["<each>"], item, "%s[%d]" % (path, i), out)
        return
    if isinstance(want, dict):
        if not isinstance(got, dict):
            out.append("%s: %s, not an object" % (path, json.dumps(got)))
            return
        for k in sorted(set(want) - set(got)):
            out.append("%s.%s: missing (Dify sends it)" % (path, k))
        for k in sorted(set(got) - set(want)):
            out.append("%s.%s: sent, and Dify does not" % (path, k))
        for k in sorted(set(want) & set(got)):
            diff(want[k], got[k], "%s.%s" % (path, k), out)
        return
    if want != got or type(want) is not type(got):
        out.append("%s: %s, not %s" % (path or ".", json.dumps(got),
                                       json.dumps(want)))


def load_fixture(path):
    events = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                events.append(json.loads(line))
            except ValueError as e:
                sys.exit("%s:%d: %s" % (path, n, e))
    return events


def load_stream(path):
    events = []
    with open(path) as f:
        for line in f:
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
    return events


def main():
    want = load_fixture(sys.argv[1])
    got = load_stream(sys.argv[2])
    out = []
    i = 0
    for w in want:
        w = dict(w)
        repeat = w.pop("<repeat>", None)
        n = 0
        while i < len(got):
            if repeat and n > 0 and got[i].get("event") != w.get("event"):
                break
            errs = []
            diff(w, got[i], "", errs)
            label = "event %d (%s)" % (i + 1, got[i].get("event"))
            out.extend("%s: %s" % (label, e) for e in errs)
            i += 1
            n += 1
            if not repeat:
                break
        if n == 0:
            out.append("event %d: missing, Dify sends %s here" %
                       (i + 1, w.get("event")))
    for k in range(i, len(got)):
        out.append("event %d (%s): sent, and Dify sends no more" %
                   (k + 1, got[k].get("event")))
    for line in out:
        print(line)
    print("compared %d events: %s" % (len(got), " ".join(
        g.get("event", "?") for g in got)))
    sys.exit(1 if out else 0)


if __name__ == "__main__":
    main()
