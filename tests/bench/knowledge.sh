#!/usr/bin/env bash
# knowledge.sh <build dir> — local knowledge bases through nginx: indexing
# throughput of one create-by-text document split into BENCH_KB_CHUNKS
# chunks (custom rule, one line a chunk; from the answer to "completed"),
# and the latency of POST /v1/datasets/{id}/retrieve (top 10, economy:
# BM25 over every segment) over them, p50 and max of BENCH_KB_QUERIES.
set -u
BUILD=$(cd "$1" && pwd)
FLOWCGI_BIN=$BUILD/flowcgi
. "$(dirname "$0")/../e2e/lib.sh"
trap 'for p in $FLOWCGI_PIDS $NGINX_PID; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T_DIR"' EXIT
CHUNKS=${BENCH_KB_CHUNKS:-20000}
QUERIES=${BENCH_KB_QUERIES:-20}

start_front >/dev/null || exit 1
req POST /console/api/datasets/api-keys; DK=$(jqr .token)
svc "$DK" POST /v1/datasets -H "$J" -d '{"name":"bench","indexing_technique":"economy"}'
DS=$(jqr .id)
python3 - "$CHUNKS" >"$T_DIR/doc.json" <<'PY'
import json, random, sys
random.seed(1)
w = ["alpha", "beta", "gamma", "delta", "refund", "ship", "order", "price",
     "item", "day", "week", "return", "card", "gift", "box"]
lines = (" ".join(random.choice(w) + str(random.randint(0, 500))
         for _ in range(40)) for _ in range(int(sys.argv[1])))
print(json.dumps({"name": "bench.txt", "text": "\n".join(lines),
    "process_rule": {"mode": "custom", "rules": {"pre_processing_rules": [],
    "segmentation": {"separator": "\\n", "max_tokens": 100}}}}))
PY
t0=$(date +%s%N)
svc "$DK" POST "/v1/datasets/$DS/document/create-by-text" -H "$J" --data-binary @"$T_DIR/doc.json"
B=$(jqr .batch)
indexed() {
	svc "$DK" GET "/v1/datasets/$DS/documents/$B/indexing-status"
	[ "$(jqr '.data[0].indexing_status')" = completed ]
}
wait_until 600 indexed || { echo "knowledge: indexing did not finish"; exit 1; }
t1=$(date +%s%N)
n=$(jqr '.data[0].total_segments')
echo "knowledge (economy, BM25 at query time):"
awk -v n="$n" -v ms=$(( (t1 - t0) / 1000000 )) 'BEGIN { printf "  indexing: %d chunks in %d ms, %.0f chunks/s\n", n, ms, n * 1000 / ms }'
for i in $(seq 1 "$QUERIES"); do
	curl -s -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $DK" -H "$J" \
	    -d '{"query":"refund7 gift12 day3","retrieval_model":{"top_k":10}}' \
	    "$BASE/v1/datasets/$DS/retrieve"
done | sort -n | awk -v n="$n" '{ a[NR] = $1 } END { printf "  retrieve top-10 over %d chunks: p50 %.1f ms, max %.1f ms\n", n, a[int((NR + 1) / 2)] * 1000, a[NR] * 1000 }'
