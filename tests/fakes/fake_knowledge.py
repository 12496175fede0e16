#!/usr/bin/env python3
"""fake_knowledge.py - Dify's External Knowledge API, for tests.

    python3 tests/fakes/fake_knowledge.py     (prints its port, then serves)

POST /retrieval with "Authorization: Bearer kb-secret" and a body
{knowledge_id, query, retrieval_setting: {top_k, score_threshold}} answers
{"records": [...]}: two records per knowledge_id whose content names the
knowledge id and the query, scores 0.9 / 0.4 for "kb-a" and 0.7 / 0.2 for
others, whatever the retrieval_setting asks: the setting is recorded, never
applied, so that the node's own merge and cut to top_k is what a test sees
(an API may answer more than asked; a fake answers no more than one
would). A wrong key gets 403 with
{"error_code": 1002, "error_msg": "Authorization failed"}; GET /_requests
returns every request body.
"""
import json
import sys
from fake_http import JSONHandler, serve

REQUESTS = []


class Handler(JSONHandler):
    def do_GET(self):
        if self.path == "/_requests":
            self.send_json(200, REQUESTS)
        else:
            self.send_json(404, {"error_msg": "not found"})

    def do_POST(self):
        body = json.loads(self.read_body() or b"{}")
        REQUESTS.append({"path": self.path, "auth": self.headers.get("Authorization"),
                         "body": body})
        if not self.path.endswith("/retrieval"):
            self.send_json(404, {"error_msg": "not found"})
            return
        if self.headers.get("Authorization") != "Bearer kb-secret":
            self.send_json(403, {"error_code": 1002, "error_msg": "Authorization failed"})
            return
        kid = body.get("knowledge_id", "")
        q = body.get("query", "")
        hi, lo = (0.9, 0.4) if kid == "kb-a" else (0.7, 0.2)
        recs = [{"content": "%s says %s (best)" % (kid, q), "score": hi,
                 "title": kid + ".md", "metadata": {"path": kid}},
                {"content": "%s says %s (weak)" % (kid, q), "score": lo,
                 "title": kid + ".md", "metadata": {"path": kid}}]
        self.send_json(200, {"records": recs})


def main():
    serve(Handler)


if __name__ == "__main__":
    sys.exit(main())
