#!/usr/bin/env bash
# knowledge.sh <build dir> — local knowledge bases through nginx: indexing
# throughput of one create-by-text document split into BENCH_KB_CHUNKS
# chunks (custom rule, one line a chunk; from the answer to "completed"),
# and the latency of POST /v1/datasets/{id}/retrieve (top 10, economy:
# BM25) over them, p50 and max of BENCH_KB_QUERIES: through the stored
# keyword index, then, as the baseline in the same run, by a second server
# on the same data reading every segment (knowledge.keyword_index false);
# both must answer the same.
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
echo "knowledge (economy, BM25):"
awk -v n="$n" -v ms=$(( (t1 - t0) / 1000000 )) 'BEGIN { printf "  indexing: %d chunks in %d ms, %.0f chunks/s\n", n, ms, n * 1000 / ms }'
# p50 <label>: the p50 (ms) of QUERIES retrieves through $BASE, printed
# with the max; the p50 alone in $T_DIR/<label>.p50.
p50() {
	for i in $(seq 1 "$QUERIES"); do
		curl -s -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $DK" -H "$J" \
		    -d '{"query":"refund7 gift12 day3","retrieval_model":{"top_k":10}}' \
		    "$BASE/v1/datasets/$DS/retrieve"
	done | sort -n | awk -v n="$n" -v l="$1" -v f="$T_DIR/$1.p50" '{ a[NR] = $1 } END { printf "  retrieve top-10 over %d chunks, %s: p50 %.1f ms, max %.1f ms\n", n, l, a[int((NR + 1) / 2)] * 1000, a[NR] * 1000; printf "%.3f\n", a[int((NR + 1) / 2)] * 1000 >f }'
}
p50 index
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"refund7 gift12 day3","retrieval_model":{"top_k":10}}'
printf '%s' "$BODY" | jq -c '[.records[] | [.segment.id, .score]]' >"$T_DIR/index.hits"
# the baseline: a second server on the same data reading every segment
# (knowledge.keyword_index false), behind its own nginx
FLOWCGI_KNOWLEDGE_KEYWORD_INDEX=false start_flowcgi scan || exit 1
NG1=$NGINX_PID
start_nginx "127.0.0.1:$FC_PORT" || exit 1
FLOWCGI_PIDS="$FLOWCGI_PIDS $NG1"
p50 scan
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"refund7 gift12 day3","retrieval_model":{"top_k":10}}'
printf '%s' "$BODY" | jq -c '[.records[] | [.segment.id, .score]]' >"$T_DIR/scan.hits"
cmp -s "$T_DIR/index.hits" "$T_DIR/scan.hits" || { echo "knowledge: the index and the scan answer differently"; exit 1; }
awk -v i="$(cat "$T_DIR/index.p50")" -v s="$(cat "$T_DIR/scan.p50")" 'BEGIN { printf "  keyword index vs scan (same answers): p50 %.1f ms vs %.1f ms, %.1fx faster\n", i, s, s / i }'
