# t_datasets_hq.sh — high_quality datasets through nginx: chunks embedded
# in batches by an OpenAI-compatible /embeddings (the fake: hashed bag of
# words, so rankings follow shared words), vectors L2-normalised and
# searched exactly (cosine), hybrid search as Dify's weighted_score, an
# edited segment embedded again, hits reranked by a rerank model (the
# fake's /rerank), and an unreachable embedding model marking
# the document error with the reason.
. "$(dirname "$0")/lib.sh"

start_fake embed EMB || exit 1
start_front || exit 1
req POST /console/api/workspaces/current/model-providers/fakeemb -H "$J" \
    -d "{\"base_url\":\"$EMB/v1\",\"api_key\":\"\"}"
is "$STATUS" 200 "an embedding provider entry"
req POST /console/api/datasets/api-keys; DK=$(jqr .token)

svc "$DK" POST /v1/datasets -H "$J" -d '{"name":"HQ","indexing_technique":"high_quality",
  "embedding_model":"bow","embedding_model_provider":"fakeemb"}'
is "$STATUS" 200 "create a high_quality dataset"
DS=$(jqr .id)
is "$(jqr .retrieval_model_dict.search_method)" semantic_search "semantic search by default"
is "$(jqr '"\(.embedding_model_provider)/\(.embedding_model)"')" fakeemb/bow "its embedding model"

svc "$DK" POST "/v1/datasets/$DS/document/create-by-text" -H "$J" -d '{
  "name":"faq.txt","text":"refunds are paid within fourteen days\nshipping takes three days\nreturns need the receipt",
  "process_rule":{"mode":"custom","rules":{"pre_processing_rules":[],"segmentation":{"separator":"\\n","max_tokens":100}}}}'
B=$(jqr .batch)
done_indexing() {
	svc "$DK" GET "/v1/datasets/$DS/documents/$1/indexing-status"
	[ "$(jqr '.data[0].indexing_status')" = completed ] || [ "$(jqr '.data[0].indexing_status')" = error ]
}
wait_until 10 done_indexing "$B"
is "$(jqr '.data[0].indexing_status')" completed "indexed with embeddings"
is "$(curl -s "$EMB/_requests" | jq -c '[.[] | select(.path=="/v1/embeddings") | .body.input | length]')" \
    "[3]" "the three chunks go in one batch"

expect() {	# expect <text> <query>: the cosine the fake's vectors give
	python3 -c "
import sys, math; sys.path.insert(0, '$TOP/tests/fakes'); from fake_embed import embed
a, b = embed(sys.argv[1]), embed(sys.argv[2])
print('%.4f' % (sum(x*y for x, y in zip(a, b)) / math.sqrt(sum(x*x for x in a) * sum(y*y for y in b))))" "$1" "$2"
}
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"paid days","retrieval_model":{"search_method":"semantic_search","top_k":3,"reranking_enable":false,"score_threshold_enabled":false}}'
is "$(jqr '.records[0].segment.content')" "refunds are paid within fourteen days" "semantic: the chunk sharing most words first"
is "$(jqr '.records[0].score * 10000 | round / 10000 | tostring')" \
    "$(expect "refunds are paid within fourteen days" "paid days" | sed 's/0*$//')" \
    "... scored by the cosine of normalised vectors"
is "$(jqr '.records[1].segment.content')" "shipping takes three days" "... the one sharing one word next"
is "$(jqr '.records[2].segment.content')" "returns need the receipt" "... the one sharing none last (exact search ranks every vector)"

svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"receipt days","retrieval_model":{"search_method":"hybrid_search","top_k":3,"reranking_enable":true,"reranking_mode":"weighted_score",
  "weights":{"vector_setting":{"vector_weight":0.0},"keyword_setting":{"keyword_weight":1.0}},"score_threshold_enabled":false}}'
kw_first=$(jqr '.records[0].segment.content')
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"receipt days","retrieval_model":{"search_method":"full_text_search","top_k":3,"reranking_enable":false,"score_threshold_enabled":false}}'
is "$kw_first" "$(jqr '.records[0].segment.content')" "hybrid with keyword_weight 1 ranks as full-text search"
is "$kw_first" "returns need the receipt" "... the rarer word wins"

svc "$DK" GET "/v1/datasets/$DS/documents/$(jqr '.records[0].segment.document_id')/segments"
DOC=$(jqr '.data[0].document_id'); SEG=$(jqr '.data[2].id')
svc "$DK" POST "/v1/datasets/$DS/documents/$DOC/segments/$SEG" -H "$J" -d '{"segment":{"content":"parcels go by courier"}}'
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"courier","retrieval_model":{"search_method":"semantic_search","top_k":1,"reranking_enable":false,"score_threshold_enabled":false}}'
is "$(jqr '.records[0].segment.id')" "$SEG" "an edited segment is embedded again"


# reranking_model: the hits reordered by a Jina/Cohere-style /rerank (the
# fake scores the share of the query's words a chunk holds)
RR='"reranking_enable":true,"reranking_mode":"reranking_model","reranking_model":{"reranking_provider_name":"langgenius/fakeemb/fakeemb","reranking_model_name":"rr-1"}'
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d "{\"query\":\"shipping days receipt\",\"retrieval_model\":{\"search_method\":\"semantic_search\",\"top_k\":3,$RR}}"
is "$STATUS" 200 "retrieve with a rerank model"
is "$(jqr '.records[0].segment.content')" "shipping takes three days" "the reranked best first"
is "$(jqr '.records[0].score * 10000 | round')" 6667 "... scored by the rerank model (2 of 3 words)"
is "$(jqr '[.records[1:][] | "\(.segment.content)=\(.score * 10000 | round)"] | join("|")')" \
    "refunds are paid within fourteen days=3333|parcels go by courier=0" "... the others by it too, in its order"
is "$(curl -s "$EMB/_requests" | jq -c '[.[] | select(.path=="/v1/rerank") | .body | [.model, .query, (.documents | length), .top_n]] | last')" \
    '["rr-1","shipping days receipt",3,3]' "one /rerank request with the model, the query and the candidates"
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d "{\"query\":\"shipping days receipt\",\"retrieval_model\":{\"search_method\":\"semantic_search\",\"top_k\":3,\"score_threshold_enabled\":true,\"score_threshold\":0.5,$RR}}"
is "$(jqr '[.records[].segment.content] | join("|")')" "shipping takes three days" "the threshold applies to the rerank scores"
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d "{\"query\":\"shipping\",\"retrieval_model\":{\"search_method\":\"semantic_search\",\"top_k\":3,\"reranking_enable\":true,\"reranking_model\":{\"reranking_provider_name\":\"nowhere\",\"reranking_model_name\":\"x\"}}}"
is "$((STATUS >= 400))" 1 "a rerank model of no provider: an error, not unranked hits"

svc "$DK" POST /v1/datasets -H "$J" -d '{"name":"Broken","indexing_technique":"high_quality","embedding_model":"m","embedding_model_provider":"nowhere"}'
DS2=$(jqr .id)
svc "$DK" POST "/v1/datasets/$DS2/document/create-by-text" -H "$J" -d '{"name":"x.txt","text":"some text"}'
DS=$DS2 wait_until 10 done_indexing "$(jqr .batch)"
is "$(jqr '.data[0].indexing_status')" error "an embedding model that cannot be reached: error"
case $(jqr '.data[0].error') in *nowhere*) ok 0 "... naming the provider" ;;
*) ok 1 "... naming the provider (got '$(jqr '.data[0].error')')" ;; esac
