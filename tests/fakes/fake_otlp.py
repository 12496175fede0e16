#!/usr/bin/env python3
"""fake_otlp.py - an OpenTelemetry collector's OTLP/HTTP traces receiver,
JSON encoding only, for tests.

    python3 tests/fakes/fake_otlp.py [--hang]   (prints its port, then serves)

POST /v1/traces takes an ExportTraceServiceRequest in the OTLP JSON
encoding (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding):
{"resourceSpans": [{"resource": {"attributes": [KeyValue]},
"scopeSpans": [{"scope": {...}, "spans": [Span]}]}]}. It checks what the
specification asks of each span (traceId 32 and spanId 16 lower-case hex
digits, parentSpanId 16 or absent, name, start and end times as decimal
strings with end >= start, kind 0-5, attributes as KeyValue with exactly
one typed value) and answers 400 with the reason when one fails, else 200
with {"partialSuccess": {}}. A Content-Type other than application/json is
415.

GET /_spans returns every span received, oldest first, flattened: the
span's fields as sent, "attributes" made a plain {key: value} object
(intValue as an int, arrayValue as a list), plus "resource" (its
attributes, the same way) and "headers" (the export request's headers,
lower-case names). GET /_stats returns {"requests", "spans", "rejected"}.
POST /_reset forgets everything.

--hang accepts connections and requests and never answers: a collector
that is up but stuck, so the exporter's time limit and queue bound show.
"""
import json
import re
import sys
import threading
import time
from fake_http import JSONHandler, serve

LOCK = threading.Lock()
SPANS = []
STATS = {"requests": 0, "spans": 0, "rejected": 0}
HEX32 = re.compile(r"^[0-9a-f]{32}$")
HEX16 = re.compile(r"^[0-9a-f]{16}$")
HANG = "--hang" in sys.argv


def any_value(v):
    """An OTLP AnyValue as a Python value; ValueError when malformed."""
    if not isinstance(v, dict) or len(v) != 1:
        raise ValueError("AnyValue must have exactly one field: %r" % (v,))
    (k, x), = v.items()
    if k == "stringValue" and isinstance(x, str):
        return x
    if k == "boolValue" and isinstance(x, bool):
        return x
    if k == "intValue":
        # int64 travels as a decimal string (numbers are accepted too)
        if isinstance(x, str) and re.match(r"^-?[0-9]+$", x):
            return int(x)
        if isinstance(x, int):
            return x
    if k == "doubleValue" and isinstance(x, (int, float)):
        return float(x)
    if k == "arrayValue" and isinstance(x, dict):
        return [any_value(e) for e in x.get("values", [])]
    raise ValueError("bad AnyValue %r" % (v,))


def attributes(lst):
    out = {}
    if not isinstance(lst, list):
        raise ValueError("attributes must be a list")
    for kv in lst:
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise ValueError("bad KeyValue %r" % (kv,))
        if kv["key"] in out:
            raise ValueError("attribute %s given twice" % kv["key"])
        out[kv["key"]] = any_value(kv.get("value"))
    return out


def check_span(s):
    if not HEX32.match(s.get("traceId", "")) or s["traceId"] == "0" * 32:
        raise ValueError("bad traceId %r" % s.get("traceId"))
    if not HEX16.match(s.get("spanId", "")) or s["spanId"] == "0" * 16:
        raise ValueError("bad spanId %r" % s.get("spanId"))
    if "parentSpanId" in s and s["parentSpanId"] != "" and \
            not HEX16.match(s["parentSpanId"]):
        raise ValueError("bad parentSpanId %r" % s["parentSpanId"])
    if not isinstance(s.get("name"), str) or s["name"] == "":
        raise ValueError("span without a name")
    t0, t1 = s.get("startTimeUnixNano"), s.get("endTimeUnixNano")
    if not all(isinstance(t, str) and t.isdigit() for t in (t0, t1)):
        raise ValueError("times must be decimal strings: %r %r" % (t0, t1))
    if int(t1) < int(t0):
        raise ValueError("span ends before it starts")
    if s.get("kind", 0) not in range(6):
        raise ValueError("bad kind %r" % s.get("kind"))
    st = s.get("status", {})
    if st.get("code", 0) not in (0, 1, 2):
        raise ValueError("bad status %r" % st)


class Handler(JSONHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        with LOCK:
            if self.path == "/_spans":
                self.send_json(200, SPANS)
            elif self.path == "/_stats":
                self.send_json(200, STATS)
            else:
                self.send_json(404, {"error": "not found"})

    def do_POST(self):
        raw = self.read_body()
        if self.path == "/_reset":
            with LOCK:
                SPANS.clear()
                for k in STATS:
                    STATS[k] = 0
            self.send_json(200, {})
            return
        if HANG:
            time.sleep(3600)
            return
        if self.path != "/v1/traces":
            self.send_json(404, {"error": "not found"})
            return
        ctype = self.headers.get("Content-Type", "")
        if ctype.split(";")[0].strip() != "application/json":
            self.send_json(415, {"error": "JSON only"})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        got = []
        try:
            req = json.loads(raw)
            for rs in req["resourceSpans"]:
                res = attributes(rs.get("resource", {}).get("attributes",
                                                              []))
                for ss in rs["scopeSpans"]:
                    for s in ss["spans"]:
                        check_span(s)
                        flat = dict(s)
                        flat["attributes"] = attributes(
                            s.get("attributes", []))
                        flat["resource"] = res
                        flat["scope"] = ss.get("scope", {})
                        flat["headers"] = headers
                        got.append(flat)
        except (ValueError, KeyError, TypeError) as e:
            with LOCK:
                STATS["requests"] += 1
                STATS["rejected"] += 1
            self.send_json(400, {"error": str(e)})
            return
        with LOCK:
            STATS["requests"] += 1
            STATS["spans"] += len(got)
            SPANS.extend(got)
        self.send_json(200, {"partialSuccess": {}})


def main():
    serve(Handler)


if __name__ == "__main__":
    main()
