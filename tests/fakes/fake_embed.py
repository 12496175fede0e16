#!/usr/bin/env python3
"""fake_embed.py - an OpenAI-compatible embedding server and a Jina/Cohere
style rerank server with deterministic answers, for tests.

    python3 tests/fakes/fake_embed.py     (prints its port, then serves)

POST /v1/embeddings {model, input: [str]} answers {data: [{index,
embedding}], usage}: a hashed bag of words of DIM (64) dimensions, not
normalised (flowcgi normalises as Dify does): each lowercased word of
letters and digits adds 1 at md5(word) mod DIM, so texts sharing words are
close and expected rankings can be written by hand. A text with no word
embeds as e0.

POST /v1/rerank {model, query, documents, top_n} answers {results: [{index,
relevance_score}]}: the share of the query's distinct words found in the
document, best first, cut to top_n.

GET /_requests returns every request (path and body).
"""
import hashlib
import json
import re
import sys
from fake_http import JSONHandler, serve

DIM = 64
REQUESTS = []


def words(s):
    return re.findall(r"[0-9a-z]+", s.lower())


def embed(s):
    v = [0.0] * DIM
    for w in words(s):
        v[int(hashlib.md5(w.encode()).hexdigest(), 16) % DIM] += 1.0
    if not any(v):
        v[0] = 1.0
    return v


class Handler(JSONHandler):
    def do_GET(self):
        if self.path == "/_requests":
            self.send_json(200, REQUESTS)
        else:
            self.send_json(404, {"error": {"message": "not found"}})

    def do_POST(self):
        body = json.loads(self.read_body() or b"{}")
        REQUESTS.append({"path": self.path, "body": body})
        if self.path.endswith("/embeddings"):
            inp = body.get("input", [])
            if isinstance(inp, str):
                inp = [inp]
            self.send_json(200, {"object": "list", "model": body.get("model"),
                                 "data": [{"object": "embedding", "index": i,
                                           "embedding": embed(t)}
                                          for i, t in enumerate(inp)],
                                 "usage": {"prompt_tokens": sum(len(words(t)) for t in inp),
                                           "total_tokens": sum(len(words(t)) for t in inp)}})
        elif self.path.endswith("/rerank"):
            q = set(words(body.get("query", "")))
            docs = body.get("documents", [])
            res = []
            for i, d in enumerate(docs):
                t = d if isinstance(d, str) else d.get("text", "")
                res.append({"index": i, "relevance_score":
                            len(q & set(words(t))) / len(q) if q else 0.0})
            res.sort(key=lambda r: -r["relevance_score"])
            self.send_json(200, {"results": res[: body.get("top_n") or len(res)]})
        else:
            self.send_json(404, {"error": {"message": "not found"}})


def main():
    serve(Handler)


if __name__ == "__main__":
    sys.exit(main())
