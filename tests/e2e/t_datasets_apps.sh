# t_datasets_apps.sh — runs reading local datasets through nginx: a chat
# app's model_config.dataset_configs (multiple: top_k, score threshold, a
# rerank model across datasets; single: the dataset's own settings) made
# into a knowledge-retrieval node before its LLM as Dify's converter does,
# the chunks in the prompt inside Dify's context block and the answer's
# retriever_resources filled; a completion app's dataset_query_variable;
# the knowledge-retrieval node reranking in reranking_model mode.
. "$(dirname "$0")/lib.sh"

start_fake embed EMB || exit 1
start_llm_front || exit 1
req POST /console/api/workspaces/current/model-providers/fakeemb -H "$J" \
    -d "{\"base_url\":\"$EMB/v1\",\"api_key\":\"\"}"
is "$STATUS" 200 "a rerank provider entry"
req POST /console/api/datasets/api-keys; DK=$(jqr .token)

done_indexing() {
	svc "$DK" GET "/v1/datasets/$1/documents/$2/indexing-status"
	[ "$(jqr '.data[0].indexing_status')" = completed ]
}
# dataset <name> <text>: an economy dataset of one document, one chunk a
# line, indexed; sets DS
dataset() {
	svc "$DK" POST /v1/datasets -H "$J" -d "{\"name\":\"$1\",\"indexing_technique\":\"economy\"}"
	DS=$(jqr .id)
	jq -n --arg t "$2" --arg n "$1.txt" '{name: $n, text: $t, process_rule: {mode: "custom",
	  rules: {pre_processing_rules: [], segmentation: {separator: "\\n", max_tokens: 100}}}}' >"$T_DIR/doc.json"
	svc "$DK" POST "/v1/datasets/$DS/document/create-by-text" -H "$J" --data-binary @"$T_DIR/doc.json"
	wait_until 10 done_indexing "$DS" "$(jqr .batch)"
}
dataset Shop "refunds are paid within fourteen days
shipping takes three days
gift cards never expire"
DSA=$DS
dataset Office "office opens at nine days a week
refunds of travel costs take thirty days"
DSB=$DS
is "$(jqr '.data[0].indexing_status')" completed "two datasets indexed"

# chat_app <mode> <dataset_configs json> [dataset_query_variable]: imports a
# classic app reading the datasets; sets APP and KEY
chat_app() {
	jq -n --arg m "$1" --argjson dc "$2" --arg qv "${3:-}" '{app: {mode: $m, name: "KB \($m)"},
	  kind: "app", version: "0.6.0", model_config: {
	  model: {provider: "openai", name: "gpt-4o-mini", mode: "chat", completion_params: {}},
	  pre_prompt: "You are the shop assistant.", prompt_type: "simple",
	  user_input_form: [{"text-input": {variable: "q", label: "Q", required: false}}],
	  retriever_resource: {enabled: true}, dataset_query_variable: $qv,
	  dataset_configs: $dc}}' >"$T_DIR/app.json"
	python3 -c 'import json,sys,yaml; print(yaml.safe_dump(json.load(open(sys.argv[1]))))' \
	    "$T_DIR/app.json" >"$T_DIR/app.yml"
	import_app "$T_DIR/app.yml"
}
ids() { jq -nc --arg a "$1" --arg b "${2:-}" '[$a, $b] | map(select(. != "")) | map({dataset: {enabled: true, id: .}})'; }

# multiple, no rerank: both datasets searched, merged best first, top_k
chat_app chat "{\"retrieval_model\":\"multiple\",\"top_k\":2,\"reranking_enable\":false,
  \"datasets\":{\"datasets\":$(ids "$DSA" "$DSB")}}"
is "$(printf '%s' "$APP" | wc -c)" 36 "a chat app with dataset_configs imports"
llm_script '[{"text":"fourteen"}]'
out=$(curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"refunds fourteen","user":"u","response_mode":"blocking"}' "$BASE/v1/chat-messages")
is "$(printf '%s' "$out" | jq -r .answer)" fourteen "the chat app answers"
sys=$(curl -s "$LLM/_requests" | jq -r '.[-1].body.messages[0].content')
case $sys in "Use the following context as your learned knowledge, inside <context></context> XML tags.

<context>
refunds are paid within fourteen days
"*"</context>"*"You are the shop assistant.") ok 0 "the chunks in Dify's context block, before pre_prompt" ;;
*) ok 1 "the chunks in Dify's context block, before pre_prompt (got '$sys')" ;; esac
is "$(printf '%s' "$out" | jq -r '.metadata.retriever_resources | length')" 2 "retriever_resources: top_k 2 across both datasets"
is "$(printf '%s' "$out" | jq -r '.metadata.retriever_resources[0] | "\(.position) \(.dataset_name) \(.document_name) \(.content)"')" \
    "1 Shop Shop.txt refunds are paid within fourteen days" "... the best first, with its dataset and document"
is "$(printf '%s' "$out" | jq -r '[.metadata.retriever_resources[].dataset_id] | sort | join(" ")')" \
    "$(printf '%s\n' "$DSA" "$DSB" | sort | tr '\n' ' ' | sed 's/ $//')" "... one hit of each dataset"

# a threshold no chunk reaches: nothing retrieved, the context empty
chat_app chat "{\"retrieval_model\":\"multiple\",\"top_k\":4,\"reranking_enable\":false,
  \"score_threshold_enabled\":true,\"score_threshold\":0.99,\"datasets\":{\"datasets\":$(ids "$DSA")}}"
llm_script '[{"text":"none"}]'
out=$(curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"refunds days","user":"u","response_mode":"blocking"}' "$BASE/v1/chat-messages")
is "$(printf '%s' "$out" | jq -r '.metadata.retriever_resources // [] | length')" 0 "score_threshold 0.99: no chunk retrieved"

# multiple with a rerank model: every dataset's hits reranked together
# (the fake scores the share of the query's words a chunk holds)
chat_app chat "{\"retrieval_model\":\"multiple\",\"top_k\":3,\"reranking_enable\":true,\"reranking_mode\":\"reranking_model\",
  \"reranking_model\":{\"reranking_provider_name\":\"langgenius/fakeemb/fakeemb\",\"reranking_model_name\":\"rr-1\"},
  \"datasets\":{\"datasets\":$(ids "$DSA" "$DSB")}}"
llm_script '[{"text":"ok"}]'
out=$(curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"travel costs refunds","user":"u","response_mode":"blocking"}' "$BASE/v1/chat-messages")
is "$(printf '%s' "$out" | jq -r '.metadata.retriever_resources[0].content')" \
    "refunds of travel costs take thirty days" "reranked: the chunk holding every query word first"
is "$(printf '%s' "$out" | jq -r '.metadata.retriever_resources[0].score')" 1 "... scored by the rerank model"
is "$(curl -s "$EMB/_requests" | jq -c '[.[] | select(.path=="/v1/rerank") | .body | [.model, .query]] | last')" \
    '["rr-1","travel costs refunds"]' "... one /rerank request with the model and the query"

# single, one dataset: searched by the dataset's own settings (top_k 1)
svc "$DK" PATCH "/v1/datasets/$DSA" -H "$J" -d '{"retrieval_model":{"search_method":"keyword_search","top_k":1,
  "reranking_enable":false,"score_threshold_enabled":false}}'
is "$STATUS" 200 "the dataset's retrieval settings: top_k 1"
chat_app chat "{\"retrieval_model\":\"single\",\"datasets\":{\"datasets\":$(ids "$DSA")}}"
llm_script '[{"text":"ok"}]'
out=$(curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"shipping days","user":"u","response_mode":"blocking"}' "$BASE/v1/chat-messages")
is "$(printf '%s' "$out" | jq -r '[.metadata.retriever_resources[].content] | join("|")')" \
    "shipping takes three days" "single: the dataset's own top_k"

# single over two datasets: the model picks one by a tool call (Dify's
# function-call router: a tool per dataset, named by its id, described
# by its description or "useful for when you want to answer queries
# about the <name>"), and only that one is searched
svc "$DK" PATCH "/v1/datasets/$DSB" -H "$J" -d '{"description":"Office hours\nand travel costs"}'
chat_app chat "{\"retrieval_model\":\"single\",\"datasets\":{\"datasets\":$(ids "$DSA" "$DSB")}}"
llm_script "[{\"match\":\"refunds days\",\"tool_calls\":[{\"id\":\"c1\",\"name\":\"$DSB\",\"arguments\":{}}]},{\"text\":\"ok\"}]"
out=$(curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"refunds days","user":"u","response_mode":"blocking"}' "$BASE/v1/chat-messages")
is "$(printf '%s' "$out" | jq -r '[.metadata.retriever_resources[].dataset_name] | unique | join(" ")')" Office \
    "single over two: only the dataset the model picked is searched" || echo "# $out"
route=$(curl -s "$LLM/_requests" | jq -c '.[-2].body')
is "$(printf '%s' "$route" | jq -r '.messages | map("\(.role):\(.content)") | join("|")')" \
    "system:You are a helpful AI assistant.|user:refunds days" "... asked with Dify's router prompt and the query"
is "$(printf '%s' "$route" | jq -r '[.tools[].function | "\(.name == "'"$DSA"'" or .name == "'"$DSB"'")=\(.description)"] | join("|")')" \
    "true=useful for when you want to answer queries about the Shop|true=Office hoursand travel costs" \
    "... one tool a dataset, named by its id, described as Dify's"
llm_script '[{"match":"refunds days","text":"none of them"},{"text":"ok"}]'
out=$(curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"refunds days","user":"u","response_mode":"blocking"}' "$BASE/v1/chat-messages")
is "$(printf '%s' "$out" | jq -r '.metadata.retriever_resources // [] | length')" 0 "... no tool called: nothing retrieved, as Dify's router"
is "$(printf '%s' "$out" | jq -r .answer)" ok "... and the run goes on"

# agent-chat: each dataset a tool the agent may call (Dify's
# DatasetRetrieverTool), the retrieved contents one a line its answer
chat_app agent-chat "{\"retrieval_model\":\"multiple\",\"top_k\":2,\"reranking_enable\":false,\"datasets\":{\"datasets\":$(ids "$DSA" "$DSB")}}"
TA="dataset_$(printf '%s' "$DSA" | tr - _)"
llm_script "[{\"match\":\"how long\",\"tool_calls\":[{\"id\":\"c1\",\"name\":\"$TA\",\"arguments\":{\"query\":\"refunds days\"}}]},{\"text\":\"fourteen days\"}]"
out=$(curl -sS -N -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"how long do refunds take","user":"u","response_mode":"streaming"}' "$BASE/v1/chat-messages")
is "$(printf '%s\n' "$out" | sed -n 's/^data: //p' | jq -rs 'map(select(.event == "agent_message" or .event == "message") | .answer) | join("")')" \
    "fourteen days" "agent-chat with datasets answers" || echo "# $out"
reqs=$(curl -s "$LLM/_requests")
is "$(printf '%s' "$reqs" | jq -r '.[-2].body.tools | map(.function | "\(.name)=\(.description)=\(.parameters.required | join(","))") | sort | join("|")')" \
    "$(printf '%s\n' "$TA=useful for when you want to answer queries about the Shop=query" "dataset_$(printf '%s' "$DSB" | tr - _)=Office hoursand travel costs=query" | sort | tr '\n' '|' | sed 's/|$//')" \
    "... each dataset a tool, named and described as Dify's"
is "$(printf '%s' "$reqs" | jq -r '.[-1].body.messages | map(select(.role == "tool"))[0].content')" \
    "$(printf 'refunds are paid within fourteen days\nshipping takes three days')" \
    "... the tool's answer: the chunks found (the app's top_k 2), one a line"

# completion: the query is the dataset_query_variable input
chat_app completion "{\"retrieval_model\":\"multiple\",\"top_k\":1,\"reranking_enable\":false,
  \"datasets\":{\"datasets\":$(ids "$DSA")}}" q
llm_script '[{"text":"ok"}]'
out=$(curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{"q":"gift cards"},"user":"u","response_mode":"blocking"}' "$BASE/v1/completion-messages")
is "$(printf '%s' "$out" | jq -r .answer)" ok "the completion app answers" || echo "# $out"
prompt=$(curl -s "$LLM/_requests" | jq -r '.[-1].body.messages[-1].content')
case $prompt in *"<context>
gift cards never expire
</context>"*) ok 0 "completion: the dataset_query_variable input is the query" ;;
*) ok 1 "completion: the dataset_query_variable input is the query (got '$prompt')" ;; esac

# the knowledge-retrieval node in reranking_model mode
sed -e "s/dataset_ids: \[ds-a, ds-b\]/dataset_ids: [$DSA, $DSB]/" \
    -e 's/multiple_retrieval_config: .*/multiple_retrieval_config: {top_k: 2, reranking_enable: true, reranking_mode: reranking_model, reranking_model: {provider: langgenius\/fakeemb\/fakeemb, model: rr-1}}/' \
    "$TOP/tests/e2e/apps/knowledge.yml" >"$T_DIR/kb.yml"
import_app "$T_DIR/kb.yml"
llm_script '[{"text":"ok"}]'
out=$(curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"office nine days","user":"u","response_mode":"blocking"}' "$BASE/v1/chat-messages")
is "$(printf '%s' "$out" | jq -r .answer)" ok "a workflow with a reranking knowledge node runs"
req GET "/console/api/apps/$APP/workflow-runs"
req GET "/console/api/apps/$APP/workflow-runs/$(jqr '.data[0].id')/node-executions"
res=$(jqr '[.data[] | select(.node_type=="knowledge-retrieval")][0].outputs.result')
is "$(printf '%s' "$res" | jq -r '[.[] | "\(.metadata.position):\(.metadata.score * 100 | round)"] | join(" ")')" "1:100 2:33" \
    "the node's result ordered and scored by the rerank model, top_k 2"
is "$(printf '%s' "$res" | jq -r '.[0].content')" "office opens at nine days a week" "... the chunk holding both words first"
is "$(curl -s "$EMB/_requests" | jq -c '[.[] | select(.path=="/v1/rerank") | .body | [.query, (.documents | length)]] | last')" \
    '["office nine days",4]' "... one /rerank over every dataset's hits (2 each)"
sed -e "s/dataset_ids: \[ds-a, ds-b\]/dataset_ids: [$DSA]/" \
    -e 's/multiple_retrieval_config: .*/multiple_retrieval_config: {top_k: 2, reranking_enable: true, reranking_mode: reranking_model, reranking_model: {provider: nowhere, model: x}}/' \
    "$TOP/tests/e2e/apps/knowledge.yml" >"$T_DIR/kb2.yml"
import_app "$T_DIR/kb2.yml"
out=$(curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d '{"inputs":{},"query":"refunds","user":"u","response_mode":"blocking"}' "$BASE/v1/chat-messages")
case $(printf '%s' "$out" | jq -r '"\(.status) \(.message)"') in "400 Run failed: "*"rerank model x"*) ok 0 "a failing rerank model fails the run, naming it" ;;
*) ok 1 "a failing rerank model fails the run, naming it (got '$out')" ;; esac
