# t_knowledge.sh — the knowledge-retrieval node through Dify's External
# Knowledge API (a fake under tests/fakes): datasets configured through the
# console API (key masked, encrypted at rest), records merged best first
# and cut to top_k, passed to the LLM as context; an unconfigured dataset
# and a refused key fail with clear messages.
. "$(dirname "$0")/lib.sh"

start_fake knowledge KB
start_llm_front || exit 1
W=/console/api/workspaces/current/knowledge-bases
import_app "$TOP/tests/e2e/apps/knowledge.yml"
ask() { curl -sS -H "Authorization: Bearer $KEY" -H "$J" \
    -d "{\"inputs\":{},\"query\":\"$1\",\"user\":\"u\"}" "$BASE/v1/chat-messages"; }

out=$(ask "refunds")
is "$(printf '%s' "$out" | jq -r '"\(.status) \(.code)"')" "400 invalid_param" "an unconfigured dataset fails the run"
printf '%s' "$out" | jq -r .message | grep -q "knowledge base 'ds-a' is not configured"
ok $? "... saying which dataset and how to configure it"

req POST "$W/ds-a" -H "$J" -d "{\"endpoint\":\"$KB\",\"api_key\":\"kb-secret\",\"knowledge_id\":\"kb-a\"}"
is "$STATUS" 200 "configure ds-a"
req POST "$W/ds-b" -H "$J" -d "{\"endpoint\":\"$KB/\",\"api_key\":\"kb-secret\",\"knowledge_id\":\"kb-b\"}"
req GET "$W"
is "$(jqr '[.data[].api_key] | unique | join(",")')" "[__HIDDEN__]" "keys are masked"
if [ "${FLOWCGI_STORAGE_BACKEND:-lmdb}" = postgres ]; then
	is "$("$FLOWCGI_BUILD/tools/store_poke" "$T_DIR/data" dump |
	    grep -c kb-secret)" 0 "keys are encrypted at rest"
else
	is "$(grep -c kb-secret "$T_DIR/data/data.mdb")" 0 "keys are encrypted at rest"
fi

out=$(ask "refunds")
is "$(printf '%s' "$out" | jq -r .event)" message "the run succeeds with both datasets"
is "$(curl -s "$KB/_requests" | jq -r '[.[] | select(.path=="/retrieval") | .auth] | unique | join(",")')" \
    "Bearer kb-secret" "the API key goes as a bearer token"
is "$(curl -s "$KB/_requests" | jq -r '.[-1].body.retrieval_setting | "\(.top_k) \(.score_threshold)"')" \
    "3 0.3" "top_k and the score threshold are passed on"
ctx=$(curl -s "$LLM/_requests" | jq -r '.[-1].body.messages[0].content')
is "$ctx" "Use this:
kb-a says refunds (best)
kb-b says refunds (best)
kb-a says refunds (weak)" "the 4 records merged best first, cut to top_k (3), as the LLM's context"

req POST "$W/ds-b" -H "$J" -d "{\"endpoint\":\"$KB\",\"api_key\":\"[__HIDDEN__]\",\"knowledge_id\":\"kb-b\"}"
out=$(ask "again")
is "$(printf '%s' "$out" | jq -r .event)" message "the mask keeps the stored key"
req POST "$W/ds-b" -H "$J" -d "{\"endpoint\":\"$KB\",\"api_key\":\"wrong\",\"knowledge_id\":\"kb-b\"}"
out=$(ask "again")
printf '%s' "$out" | jq -r .message | grep -q "HTTP 403 Authorization failed"
ok $? "a refused key fails with the API's message"
req DELETE "$W/ds-b"
is "$STATUS" 204 "delete a dataset's configuration"
