# t_datasets_meta.sh — document metadata through nginx: Dify's metadata
# routes (create, list with counts, rename, delete, built-in fields on and
# off, documents/metadata setting values checked against their types),
# metadata_filtering_conditions in retrieve (each type's operators, and /
# or, empty) and in the knowledge-retrieval node (manual mode, a value
# rendered from a variable).
. "$(dirname "$0")/lib.sh"

start_llm_front || exit 1
req POST /console/api/datasets/api-keys; DK=$(jqr .token)
done_indexing() {
	svc "$DK" GET "/v1/datasets/$DS/documents/$1/indexing-status"
	[ "$(jqr '.data[0].indexing_status')" = completed ]
}
svc "$DK" POST /v1/datasets -H "$J" -d '{"name":"Meta","indexing_technique":"economy"}'
DS=$(jqr .id)
doc() {
	svc "$DK" POST "/v1/datasets/$DS/document/create-by-text" -H "$J" -d "{\"name\":\"$1\",\"text\":\"$2\"}"
	eval "$3=\$(jqr .document.id)"
	wait_until 10 done_indexing "$(jqr .batch)"
}
doc policy.txt "refund policy for shoes" D1
doc guide.txt "refund guide for hats" D2
doc notes.txt "refund notes for coats" D3

svc "$DK" POST "/v1/datasets/$DS/metadata" -H "$J" -d '{"type":"string","name":"category"}'
is "$STATUS" 201 "create a string field"; MC=$(jqr .id)
svc "$DK" POST "/v1/datasets/$DS/metadata" -H "$J" -d '{"type":"number","name":"year"}'; MY=$(jqr .id)
svc "$DK" POST "/v1/datasets/$DS/metadata" -H "$J" -d '{"type":"time","name":"published"}'; MT=$(jqr .id)
svc "$DK" POST "/v1/datasets/$DS/metadata" -H "$J" -d '{"type":"string","name":"category"}'
is "$STATUS" 409 "a second field of the same name: 409"
svc "$DK" POST "/v1/datasets/$DS/metadata" -H "$J" -d '{"type":"string","name":"document_name"}'
is "$STATUS" 400 "a built-in name: 400"
svc "$DK" POST "/v1/datasets/$DS/metadata" -H "$J" -d '{"type":"blob","name":"x"}'
is "$STATUS" 400 "a type Dify has not: 400"

svc "$DK" POST "/v1/datasets/$DS/documents/metadata" -H "$J" -d "{\"operation_data\":[
  {\"document_id\":\"$D1\",\"metadata_list\":[{\"id\":\"$MC\",\"value\":\"footwear\",\"name\":\"category\"},{\"id\":\"$MY\",\"value\":2021},{\"id\":\"$MT\",\"value\":1600000000}]},
  {\"document_id\":\"$D2\",\"metadata_list\":[{\"id\":\"$MC\",\"value\":\"headwear\"},{\"id\":\"$MY\",\"value\":\"2024\"},{\"id\":\"$MT\",\"value\":1700000000}]}]}"
is "$STATUS" 200 "documents/metadata sets values" || echo "# $BODY"
svc "$DK" POST "/v1/datasets/$DS/documents/metadata" -H "$J" -d "{\"operation_data\":[{\"document_id\":\"$D3\",\"metadata_list\":[{\"id\":\"$MY\",\"value\":\"soon\"}]}]}"
is "$STATUS" 400 "a number field given text: 400"
svc "$DK" GET "/v1/datasets/$DS/documents/$D1"
is "$(jqr '[.doc_metadata[] | "\(.name)=\(.value)"] | join(",")')" "category=footwear,year=2021,published=1600000000" "the document holds its typed values"
svc "$DK" GET "/v1/datasets/$DS/metadata"
is "$(jqr '[.doc_metadata[] | "\(.name):\(.type):\(.count)"] | join(",")')" "category:string:2,year:number:2,published:time:2" \
    "list: fields with the documents using them"
is "$(jqr .built_in_field_enabled)" false "... built-in fields off"

# retrieve <conditions json>: the names of the documents found for "refund"
names() {
	svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d "{\"query\":\"refund\",\"retrieval_model\":{\"top_k\":10,
	  \"metadata_filtering_conditions\":$1}}"
	[ "$STATUS" = 200 ] || { echo "status $STATUS $BODY"; return; }
	jqr '[.records[].segment.document.name] | sort | join(",")'
}
is "$(names '{"logical_operator":"and","conditions":[]}')" "guide.txt,notes.txt,policy.txt" "no condition: every document"
is "$(names '{"conditions":[{"name":"category","comparison_operator":"is","value":"footwear"}]}')" policy.txt "string is"
is "$(names '{"conditions":[{"name":"category","comparison_operator":"contains","value":"wear"}]}')" "guide.txt,policy.txt" "string contains"
is "$(names '{"conditions":[{"name":"category","comparison_operator":"not contains","value":"foot"}]}')" guide.txt "string not contains (a document without the field is not kept)"
is "$(names '{"conditions":[{"name":"category","comparison_operator":"start with","value":"head"}]}')" guide.txt "string start with"
is "$(names '{"conditions":[{"name":"category","comparison_operator":"empty"}]}')" notes.txt "empty"
is "$(names '{"conditions":[{"name":"year","comparison_operator":"≥","value":2022}]}')" guide.txt "number ≥"
is "$(names '{"conditions":[{"name":"year","comparison_operator":"=","value":"2021"}]}')" policy.txt "number ="
is "$(names '{"conditions":[{"name":"published","comparison_operator":"before","value":1650000000}]}')" policy.txt "time before"
is "$(names '{"logical_operator":"and","conditions":[{"name":"year","comparison_operator":">","value":2000},{"name":"category","comparison_operator":"is","value":"headwear"}]}')" guide.txt "and"
is "$(names '{"logical_operator":"or","conditions":[{"name":"category","comparison_operator":"is","value":"footwear"},{"name":"year","comparison_operator":"empty"}]}')" "notes.txt,policy.txt" "or"
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"refund","retrieval_model":{"metadata_filtering_conditions":{"conditions":[{"name":"year","comparison_operator":"like","value":1}]}}}'
is "$STATUS" 400 "an unknown comparison_operator: 400"

svc "$DK" GET "/v1/datasets/$DS/metadata/built-in"
is "$(jqr '[.fields[].name] | join(",")')" "document_name,uploader,upload_date,last_update_date,source" "the built-in fields"
is "$(names '{"conditions":[{"name":"document_name","comparison_operator":"is","value":"notes.txt"}]}')" "" "built-in fields off: not filterable"
svc "$DK" POST "/v1/datasets/$DS/metadata/built-in/enable"
is "$STATUS" 200 "built-in fields on"
is "$(names '{"conditions":[{"name":"document_name","comparison_operator":"end with","value":"s.txt"}]}')" notes.txt "... document_name filters"

svc "$DK" PATCH "/v1/datasets/$DS/metadata/$MC" -H "$J" -d '{"name":"kind"}'
is "$(jqr .name)" kind "rename a field"
is "$(names '{"conditions":[{"name":"kind","comparison_operator":"is","value":"footwear"}]}')" policy.txt "... the documents' values follow the name"
svc "$DK" DELETE "/v1/datasets/$DS/metadata/$MY"
is "$STATUS" 204 "delete a field"
svc "$DK" GET "/v1/datasets/$DS/documents/$D2"
is "$(jqr '[.doc_metadata[].name] | join(",")')" "kind,published" "... its values go from the documents"

svc "$DK" POST /v1/datasets -H "$J" -d '{"name":"Other","indexing_technique":"economy"}'
OTHER=$(jqr .id)
svc "$DK" PATCH "/v1/datasets/$OTHER/metadata/$MC" -H "$J" -d '{"name":"stolen"}'
is "$STATUS" 404 "another dataset's field: 404"

# the knowledge-retrieval node, manual filtering with a value from a variable
sed -e "s/dataset_ids: \[ds-a, ds-b\]/dataset_ids: [$DS]\n        metadata_filtering_mode: manual\n        metadata_filtering_conditions: {logical_operator: and, conditions: [{name: kind, comparison_operator: is, value: '{{#sys.user_id#}}'}]}/" \
    -e 's/multiple_retrieval_config: .*/multiple_retrieval_config: {top_k: 5}/' \
    "$TOP/tests/e2e/apps/knowledge.yml" >"$T_DIR/kb.yml"
import_app "$T_DIR/kb.yml"
out=$(curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"refund","user":"headwear","response_mode":"blocking"}' "$BASE/v1/chat-messages")
is "$(printf '%s' "$out" | jq -r .status // empty)" "" "the run succeeds" || echo "# $out"
req GET "/console/api/apps/$APP/workflow-runs"
req GET "/console/api/apps/$APP/workflow-runs/$(jqr '.data[0].id')/node-executions"
is "$(jqr '[.data[] | select(.node_type=="knowledge-retrieval")][0].outputs.result | map(.title) | join(",")')" guide.txt \
    "the node keeps the documents its manual conditions pass (value rendered)"

# automatic: the model writes the conditions from the query (Dify's
# _automatic_metadata_filter: its prompts, the datasets' field names)
sed -e "s/dataset_ids: \[ds-a, ds-b\]/dataset_ids: [$DS]\n        metadata_filtering_mode: automatic\n        metadata_model_config: {provider: openai, name: gpt-4o-mini, mode: chat, completion_params: {}}/" \
    -e 's/multiple_retrieval_config: .*/multiple_retrieval_config: {top_k: 5}/' \
    "$TOP/tests/e2e/apps/knowledge.yml" >"$T_DIR/kb3.yml"
import_app "$T_DIR/kb3.yml"
auto_titles() {	# auto_titles <the model's answer>: the node's result titles
	jq -n --arg t "$1" '[{match: "input_text", text: $t}, {text: "ok"}]' >"$T_DIR/script.json"
	llm_script "$(cat "$T_DIR/script.json")"
	out=$(curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
	    -d '{"inputs":{},"query":"refund for footwear","user":"u","response_mode":"blocking"}' "$BASE/v1/chat-messages")
	req GET "/console/api/apps/$APP/workflow-runs"
	req GET "/console/api/apps/$APP/workflow-runs/$(jqr '.data[0].id')/node-executions"
	jqr '[.data[] | select(.node_type=="knowledge-retrieval")][0].outputs.result | map(.title) | sort | join(",")'
}
is "$(auto_titles '```json
{"metadata_map": [{"metadata_field_name": "kind", "metadata_field_value": "footwear", "comparison_operator": "is"}]}
```')" policy.txt "automatic: the documents the model's conditions pass"
ask=$(curl -s "$LLM/_requests" | jq -c '[.[] | select(.body.messages[-1].content | contains("input_text"))][0].body.messages')
is "$(printf '%s' "$ask" | jq -r 'map(.role) | join(",")')" "system,user,assistant,user,assistant,user" "... asked with Dify's prompt and its two examples"
is "$(printf '%s' "$ask" | jq -r '.[-1].content')" "$(printf "\n    '{\"input_text\": \"refund for footwear\",',\n    '\"metadata_fields\": ['kind', 'published']}'")" \
    "... the query and the datasets' field names"
is "$(auto_titles '{"metadata_map": [{"metadata_field_name": "colour", "metadata_field_value": "red", "comparison_operator": "is"}]}')" \
    "guide.txt,notes.txt,policy.txt" "... a field the datasets have not: no filter"
is "$(auto_titles 'I cannot tell')" "guide.txt,notes.txt,policy.txt" "... an answer without metadata_map: no filter, as Dify's"
