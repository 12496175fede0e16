# t_datasets_update.sh — Dify's update of a document through nginx:
# update-by-text (and update_by_text) with a new name, text and process
# rule, indexed again under a new batch, the old chunks gone and the
# document's metadata kept; update-by-file (and PATCH documents/{id},
# the file optional) taking the file's name and text; Dify's errors.
. "$(dirname "$0")/lib.sh"

start_front || exit 1
req POST /console/api/datasets/api-keys; DK=$(jqr .token)
done_indexing() {
	svc "$DK" GET "/v1/datasets/$DS/documents/$1/indexing-status"
	[ "$(jqr '.data[0].indexing_status')" = completed ] || [ "$(jqr '.data[0].indexing_status')" = error ]
}
hits() {	# hits <query>: the contents found, joined by |
	svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d "{\"query\":\"$1\",\"retrieval_model\":{\"search_method\":\"keyword_search\",\"top_k\":10}}"
	jqr '[.records[].segment.content] | join("|")'
}
svc "$DK" POST /v1/datasets -H "$J" -d '{"name":"Upd","indexing_technique":"economy"}'
DS=$(jqr .id)
RULE='{"mode":"custom","rules":{"pre_processing_rules":[],"segmentation":{"separator":"\\n","max_tokens":100}}}'
svc "$DK" POST "/v1/datasets/$DS/document/create-by-text" -H "$J" -d "{\"name\":\"a.txt\",\"text\":\"alpha one\\nbeta two\",\"process_rule\":$RULE}"
DOC=$(jqr .document.id); B1=$(jqr .batch)
wait_until 10 done_indexing "$B1"
svc "$DK" POST "/v1/datasets/$DS/metadata" -H "$J" -d '{"type":"string","name":"owner"}'; MF=$(jqr .id)
svc "$DK" POST "/v1/datasets/$DS/documents/metadata" -H "$J" -d "{\"operation_data\":[{\"document_id\":\"$DOC\",\"metadata_list\":[{\"id\":\"$MF\",\"value\":\"ann\"}]}]}"
is "$(hits alpha)" "alpha one" "before: the first text is found"

svc "$DK" POST "/v1/datasets/$DS/documents/$DOC/update-by-text" -H "$J" -d '{"text":"gamma three"}'
is "$STATUS $(jqr .message)" "400 Both text and name must be strings." "text without a name: 400, Dify's words"
svc "$DK" POST "/v1/datasets/$DS/documents/00000000-0000-4000-8000-000000000000/update-by-text" -H "$J" -d '{"name":"x","text":"y"}'
is "$STATUS" 404 "no such document: 404"
svc "$DK" POST "/v1/datasets/$DS/documents/$DOC/update-by-text" -H "$J" -d '{"name":"g.txt","text":"gamma three\ndelta four\nepsilon five"}'
is "$STATUS" 200 "update-by-text" || echo "# $BODY"
B2=$(jqr .batch)
is "$(jqr '[.document.id == "'"$DOC"'", .document.name, .batch != "'"$B1"'"] | map(tostring) | join(" ")')" "true g.txt true" \
    "... the same document, renamed, a new batch"
wait_until 10 done_indexing "$B2"
is "$(jqr '.data[0] | "\(.indexing_status) \(.total_segments)"')" "completed 3" "... indexed again: three chunks by the kept rule"
is "$(hits gamma)" "gamma three" "... the new text is found"
is "$(hits alpha)" "" "... the old is not"
svc "$DK" GET "/v1/datasets/$DS/documents/$DOC"
is "$(jqr '[.doc_metadata[] | .value] | join(",")')" ann "... its metadata kept"

svc "$DK" POST "/v1/datasets/$DS/documents/$DOC/update_by_text" -H "$J" -d '{"process_rule":{"mode":"custom","rules":{"pre_processing_rules":[],"segmentation":{"separator":"###","max_tokens":100}}}}'
is "$STATUS" 200 "update_by_text with only a new rule"
wait_until 10 done_indexing "$(jqr .batch)"
is "$(jqr '.data[0].total_segments')" 1 "... the same text split by it (no ###: one chunk)"

printf 'zeta six\nEta seven\n' >"$T_DIR/z.md"
svc "$DK" POST "/v1/datasets/$DS/documents/$DOC/update-by-file" -F "file=@$T_DIR/z.md" -F "data={\"process_rule\":$RULE}"
is "$STATUS $(jqr .document.name)" "200 z.md" "update-by-file: the file's name" || echo "# $BODY"
wait_until 10 done_indexing "$(jqr .batch)"
is "$(hits zeta)" "zeta six" "... and its text"
is "$(hits gamma)" "" "... the text before gone"
svc "$DK" PATCH "/v1/datasets/$DS/documents/$DOC" -F 'data={"name":"renamed.md"}'
is "$STATUS $(jqr .document.name)" "200 renamed.md" "PATCH without a file: the name only"
wait_until 10 done_indexing "$(jqr .batch)"
is "$(hits zeta)" "zeta six" "... the text kept"
printf 'MZ' >"$T_DIR/x.exe"
svc "$DK" PATCH "/v1/datasets/$DS/documents/$DOC" -F "file=@$T_DIR/x.exe"
is "$STATUS" 415 "a file type no reader takes: 415"

svc "$DK" POST "/v1/datasets/$DS/document/create-by-text" -H "$J" -d '{"name":"blank.txt","text":"   "}'
BD=$(jqr .document.id)
wait_until 10 done_indexing "$(jqr .batch)"
svc "$DK" POST "/v1/datasets/$DS/documents/$BD/update-by-text" -H "$J" -d '{"name":"b.txt","text":"now text"}'
is "$STATUS $(jqr .message)" "400 Document is not available" "a document in error: 400, as Dify's"
svc "$DK" POST /v1/datasets -H "$J" -d '{"name":"Other","indexing_technique":"economy"}'
svc "$DK" POST "/v1/datasets/$(jqr .id)/documents/$DOC/update-by-text" -H "$J" -d '{"name":"x","text":"y"}'
is "$STATUS" 404 "another dataset's document: 404"
