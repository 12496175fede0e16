# t_datasets_child.sh — parent-child (hierarchical) chunking through nginx,
# as Dify's: process_rule mode hierarchical, parents by paragraph or the
# full document, children by the subchunk segmentation; the children are
# searched (keyword and, in a high_quality dataset, vectors) and the hit is
# the parent with the children that matched; segments list their
# child_chunks; Dify's child_chunks routes list, create, update and delete;
# a parent disabled hides its children, edited with regenerate_child_chunks
# gets new ones, deleted takes them along; the rule is checked.
. "$(dirname "$0")/lib.sh"

start_fake embed EMB || exit 1
start_front || exit 1
req POST /console/api/datasets/api-keys; DK=$(jqr .token)
done_indexing() {
	svc "$DK" GET "/v1/datasets/$DS/documents/$1/indexing-status"
	[ "$(jqr '.data[0].indexing_status')" = completed ] || [ "$(jqr '.data[0].indexing_status')" = error ]
}
svc "$DK" POST /v1/datasets -H "$J" -d '{"name":"PC","indexing_technique":"economy"}'
DS=$(jqr .id)
TEXT='Refund policy\nRefunds are paid within fourteen days\nA receipt is needed\n\nShipping policy\nParcels ship within three days\nCouriers deliver on weekdays'
RULE='{"mode":"hierarchical","rules":{"pre_processing_rules":[],"parent_mode":"paragraph",
  "segmentation":{"separator":"\\n\\n","max_tokens":500},"subchunk_segmentation":{"separator":"\\n","max_tokens":50}}}'

svc "$DK" POST "/v1/datasets/$DS/document/create-by-text" -H "$J" -d "{\"name\":\"p.txt\",\"text\":\"x\",\"doc_form\":\"hierarchical_model\",
  \"process_rule\":{\"mode\":\"hierarchical\",\"rules\":{\"pre_processing_rules\":[],\"segmentation\":{\"separator\":\"\\\\n\\\\n\",\"max_tokens\":500}}}}"
is "$STATUS" 400 "hierarchical without a subchunk_segmentation: 400"
svc "$DK" POST "/v1/datasets/$DS/document/create-by-text" -H "$J" -d "{\"name\":\"p.txt\",\"text\":\"x\",
  \"process_rule\":{\"mode\":\"hierarchical\",\"rules\":{\"pre_processing_rules\":[],\"parent_mode\":\"pages\",\"segmentation\":{\"separator\":\"\\\\n\",\"max_tokens\":500},
  \"subchunk_segmentation\":{\"separator\":\"\\\\n\",\"max_tokens\":50}}}}"
is "$STATUS" 400 "a parent_mode Dify has not: 400"
svc "$DK" POST "/v1/datasets/$DS/document/create-by-text" -H "$J" -d "{\"name\":\"p.txt\",\"text\":\"x\",\"doc_form\":\"hierarchical_model\"}"
is "$STATUS" 400 "doc_form hierarchical_model with an automatic rule: 400"

svc "$DK" POST "/v1/datasets/$DS/document/create-by-text" -H "$J" -d "{\"name\":\"policy.txt\",\"text\":\"$TEXT\",\"doc_form\":\"hierarchical_model\",\"process_rule\":$RULE}"
is "$STATUS" 200 "a parent-child document by text" || echo "# $BODY"
is "$(jqr .document.doc_form)" hierarchical_model "... its doc_form"
DOC=$(jqr .document.id)
wait_until 10 done_indexing "$(jqr .batch)"
is "$(jqr '.data[0] | "\(.indexing_status) \(.total_segments)"')" "completed 2" "indexed: two parents"

svc "$DK" GET "/v1/datasets/$DS/documents/$DOC/segments"
is "$(jqr '[.doc_form, .total] | join(" ")')" "hierarchical_model 2" "the segments are the parents"
is "$(jqr '.data[0].content')" "$(printf 'Refund policy\nRefunds are paid within fourteen days\nA receipt is needed')" "... the first paragraph"
is "$(jqr '[.data[0].child_chunks[] | "\(.position):\(.content):\(.type)"] | join("|")')" \
    "1:Refund policy:automatic|2:Refunds are paid within fourteen days:automatic|3:A receipt is needed:automatic" "... with its child chunks in order"
P1=$(jqr '.data[0].id'); P2=$(jqr '.data[1].id')
is "$(jqr '[.data[0].child_chunks[].segment_id == "'"$P1"'"] | all')" true "... each naming its parent"

svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"within days","retrieval_model":{"search_method":"keyword_search","top_k":4,"reranking_enable":false,"score_threshold_enabled":false}}'
is "$(jqr '.records | length')" 2 "retrieve: one record a parent"
is "$(jqr '[.records[] | .segment.id] | sort | join(" ")')" "$(printf '%s\n' "$P1" "$P2" | sort | tr '\n' ' ' | sed 's/ $//')" "... the parents are the hits"
is "$(jqr '[.records[] | .child_chunks | map(.content) | join(",")] | sort | join("|")')" \
    "Parcels ship within three days|Refunds are paid within fourteen days" "... each with the child that matched"
is "$(jqr '[.records[] | .score == .child_chunks[0].score] | all')" true "... scored by its best child"
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"receipt refunds","retrieval_model":{"search_method":"keyword_search","top_k":4,"reranking_enable":false,"score_threshold_enabled":false}}'
is "$(jqr '[(.records | length), (.records[0].child_chunks | length)] | join(" ")')" "1 2" "two children of one parent: one record with both"
is "$(jqr '.records[0].child_chunks[0].score >= .records[0].child_chunks[1].score')" true "... best child first"

# Dify's child_chunks routes
CC="/v1/datasets/$DS/documents/$DOC/segments/$P1/child_chunks"
svc "$DK" GET "$CC"
is "$(jqr '[.total, .total_pages, .page, .limit] | join(" ")')" "3 1 1 20" "child chunks: list"
is "$(jqr '.data[1] | keys | join(",")')" "content,created_at,id,position,segment_id,type,updated_at,word_count" "... Dify's fields"
svc "$DK" GET "$CC?keyword=receipt"
is "$(jqr '[.total, .data[0].content] | join(" ")')" "1 A receipt is needed" "... by keyword"
svc "$DK" POST "$CC" -H "$J" -d '{"content":"Refunds go back to the original card"}'
is "$STATUS" 200 "create a child chunk" || echo "# $BODY"
is "$(jqr '.data | "\(.position) \(.type) \(.segment_id == "'"$P1"'")"')" "4 customized true" "... after the last, customized"
C4=$(jqr .data.id)
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"original card","retrieval_model":{"search_method":"keyword_search","top_k":4}}'
is "$(jqr '[.records[0].segment.id == "'"$P1"'", .records[0].child_chunks[0].id == "'"$C4"'"] | all')" true "... and searched"
svc "$DK" PATCH "$CC/$C4" -H "$J" -d '{"content":"Refunds go back to the gift voucher"}'
is "$(jqr '.data.content')" "Refunds go back to the gift voucher" "update a child chunk"
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"voucher","retrieval_model":{"search_method":"keyword_search","top_k":4}}'
is "$(jqr '.records[0].child_chunks[0].id')" "$C4" "... searched by its new text"
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"card","retrieval_model":{"search_method":"keyword_search","top_k":4}}'
is "$(jqr '.records | length')" 0 "... not by its old"
svc "$DK" POST "$CC" -H "$J" -d '{"content":"  "}'
is "$STATUS" 400 "a blank child chunk: 400"
svc "$DK" PATCH "$CC/00000000-0000-4000-8000-000000000000" -H "$J" -d '{"content":"x"}'
is "$STATUS $(jqr .message)" "404 Child chunk not found." "no such child chunk: 404"
svc "$DK" PATCH "/v1/datasets/$DS/documents/$DOC/segments/$P2/child_chunks/$C4" -H "$J" -d '{"content":"x"}'
is "$STATUS" 404 "a child chunk through another parent: 404"
svc "$DK" DELETE "$CC/$C4"
is "$STATUS" 204 "delete a child chunk"
svc "$DK" GET "$CC"
is "$(jqr .total)" 3 "... gone"

# the parent's edits reach its children
SEG="/v1/datasets/$DS/documents/$DOC/segments"
svc "$DK" POST "$SEG/$P1" -H "$J" -d '{"segment":{"enabled":false}}'
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"receipt","retrieval_model":{"search_method":"keyword_search","top_k":4}}'
is "$(jqr '.records | length')" 0 "a disabled parent: its children are not found"
svc "$DK" POST "$SEG/$P1" -H "$J" -d '{"segment":{"enabled":true}}'
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"receipt","retrieval_model":{"search_method":"keyword_search","top_k":4}}'
is "$(jqr '.records | length')" 1 "... enabled again: found"
svc "$DK" POST "$SEG/$P2" -H "$J" -d '{"segment":{"content":"Shipping policy\nParcels fly overnight\nTracking is by email","regenerate_child_chunks":true}}'
is "$(jqr '[.data.child_chunks[].content] | join("|")')" "Shipping policy|Parcels fly overnight|Tracking is by email" "regenerate_child_chunks: new children from the new content"
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"weekdays","retrieval_model":{"search_method":"keyword_search","top_k":4}}'
is "$(jqr '.records | length')" 0 "... the old ones gone"
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"overnight","retrieval_model":{"search_method":"keyword_search","top_k":4}}'
is "$(jqr '.records[0].segment.content')" "$(printf 'Shipping policy\nParcels fly overnight\nTracking is by email')" "... the new ones found"
svc "$DK" POST "$SEG" -H "$J" -d '{"segments":[{"content":"Gift policy\nGift cards never expire"}]}'
is "$(jqr '[.data[0].position, (.data[0].child_chunks | length)] | join(" ")')" "3 2" "a segment added: a parent with its children split by the rule"
P3=$(jqr '.data[0].id')
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"expire","retrieval_model":{"search_method":"keyword_search","top_k":4}}'
is "$(jqr '.records[0].segment.id')" "$P3" "... and searched"
svc "$DK" DELETE "$SEG/$P3"
is "$STATUS" 204 "delete a parent"
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"expire","retrieval_model":{"search_method":"keyword_search","top_k":4}}'
is "$(jqr '.records | length')" 0 "... its children went with it"

svc "$DK" POST "/v1/datasets/$DS/document/create-by-text" -H "$J" -d '{"name":"flat.txt","text":"flat text"}'
is "$STATUS $(jqr .message)" "400 doc_form is different from the dataset doc_form." "a text document in a parent-child dataset: 400"
svc "$DK" POST /v1/datasets -H "$J" -d '{"name":"Flat","indexing_technique":"economy"}'
DSF=$(jqr .id)
svc "$DK" POST "/v1/datasets/$DSF/document/create-by-text" -H "$J" -d '{"name":"flat.txt","text":"flat text"}'
DS=$DSF wait_until 10 done_indexing "$(jqr .batch)"
svc "$DK" GET "/v1/datasets/$DSF/documents/$(jqr '.data[0].id')/segments"
FS=$(jqr '.data[0].id'); FD=$(jqr '.data[0].document_id')
svc "$DK" GET "/v1/datasets/$DSF/documents/$FD/segments/$FS/child_chunks"
is "$STATUS" 400 "child chunks of a text document's segment: 400"
svc "$DK" GET "/v1/datasets/$DSF/documents/$DOC/segments/$P1/child_chunks"
is "$STATUS" 404 "... of another dataset's document: 404"

# full-doc: the whole text one parent; high_quality: the children embedded
req POST /console/api/workspaces/current/model-providers/fakeemb -H "$J" \
    -d "{\"base_url\":\"$EMB/v1\",\"api_key\":\"\"}"
svc "$DK" POST /v1/datasets -H "$J" -d '{"name":"PCHQ","indexing_technique":"high_quality",
  "embedding_model":"bow","embedding_model_provider":"fakeemb"}'
DS=$(jqr .id)
svc "$DK" POST "/v1/datasets/$DS/document/create-by-text" -H "$J" -d "{\"name\":\"all.txt\",\"text\":\"$TEXT\",\"doc_form\":\"hierarchical_model\",
  \"process_rule\":{\"mode\":\"hierarchical\",\"rules\":{\"pre_processing_rules\":[],\"parent_mode\":\"full-doc\",\"segmentation\":{\"separator\":\"\\\\n\\\\n\"},
  \"subchunk_segmentation\":{\"separator\":\"\\\\n\",\"max_tokens\":50}}}}"
is "$STATUS" 200 "full-doc needs no parent max_tokens" || echo "# $BODY"
HD=$(jqr .document.id)
wait_until 10 done_indexing "$(jqr .batch)"
is "$(jqr '.data[0] | "\(.indexing_status) \(.total_segments)"')" "completed 1" "full-doc: one parent"
is "$(curl -s "$EMB/_requests" | jq -c '[.[] | select(.path=="/v1/embeddings") | .body.input | length] | last')" 6 "... its six children embedded, not the parent"
svc "$DK" GET "/v1/datasets/$DS/documents/$HD/segments"
is "$(jqr '.data[0].child_chunks | length')" 6 "... listed under it"
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"couriers deliver weekdays","retrieval_model":{"search_method":"semantic_search","top_k":2,"reranking_enable":false,"score_threshold_enabled":false}}'
is "$(jqr '[(.records | length), .records[0].child_chunks[0].content, (.records[0].child_chunks | length)] | join("|")')" \
    "1|Couriers deliver on weekdays|2" "semantic: the top two children, one parent, the nearest first"
is "$(jqr '.records[0].segment.content | length > 100')" true "... the hit is the whole document"
