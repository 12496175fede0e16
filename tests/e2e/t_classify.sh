# t_classify.sh — question-classifier and parameter-extractor through the
# CLI and the fake LLM: the chosen class routes the run, unknown answers
# fall back to the first class, parameters come through a forced function
# call and are coerced to their types.
. "$(dirname "$0")/lib.sh"

start_fake llm LLM
run() {	# run <text>: the outputs of a CLI run, as JSON
	FLOWCGI_SERVER_DATA_DIR=$T_DIR/data FLOWCGI_LLM_BASE_URL=$LLM/v1 \
	    "$FLOWCGI_BIN" run "$TOP/tests/e2e/apps/classify.yml" --input "text=$1" 2>"$T_DIR/err"
}

llm_script '{"responses": [
  {"text": "<think>easy</think>{\"keywords\": [\"pizza\"], \"category_id\": \"c1\", \"category_name\": \"Order\"}"},
  {"tool_calls": [{"id": "t", "name": "extract_parameters", "arguments": {"item": "pizza", "count": "3", "size": "XL"}}]}
]}'
out=$(run "three pizzas please")
is "$(printf '%s' "$out" | jq -r .class)" Order "the classifier's answer routes the run"
is "$(printf '%s' "$out" | jq -r '.item + " " + (.count|tostring) + " [" + .size + "] " + (.ok|tostring)')" \
    "pizza 3 [] 1" "parameters extracted, count coerced to a number, an unknown option dropped"
reqs=$(curl -s "$LLM/_requests")
is "$(printf '%s' "$reqs" | jq -r '.[1].body.tool_choice.function.name')" extract_parameters \
    "the extractor forces its function"
is "$(printf '%s' "$reqs" | jq -r '.[1].body.tools[0].function.parameters.required | join(",")')" \
    "item,count" "required parameters are required in the schema"
printf '%s' "$reqs" | jq -r '.[0].body.messages[1].content' | jq -e '.categories | length == 2' >/dev/null
ok $? "the classifier sends the categories as JSON"

llm_script '{"responses": [{"text": "I cannot decide."}, {"text": "no function call"}]}'
out=$(run "hmm")
is "$(printf '%s' "$out" | jq -r .class)" Order "an unreadable answer picks the first class, as Dify does"
is "$(printf '%s' "$out" | jq -r .ok)" 0 "a failed extraction reports __is_success 0"

llm_script '{"responses": [{"text": "{\"category_id\": \"c2\", \"category_name\": \"Other\"}"}]}'
out=$(run "hello there")
is "$(printf '%s' "$out" | jq -r '.class + " / " + .other')" "Other / not an order" \
    "the other class takes the other branch"
