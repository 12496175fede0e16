# t_datasets_tags.sh — Dify's knowledge tags through nginx: create (name
# 1 to 50 characters, unique), list with binding counts, rename, bind to
# and unbind from datasets (tag_ids, and unbinding's older tag_id), a
# dataset's tags and its detail's tags, delete (its bindings too);
# unknown tags and datasets are 404.
. "$(dirname "$0")/lib.sh"

start_front || exit 1
req POST /console/api/datasets/api-keys; DK=$(jqr .token)
svc "$DK" POST /v1/datasets -H "$J" -d '{"name":"T1","indexing_technique":"economy"}'; D1=$(jqr .id)
svc "$DK" POST /v1/datasets -H "$J" -d '{"name":"T2","indexing_technique":"economy"}'; D2=$(jqr .id)

svc "$DK" POST /v1/datasets/tags -H "$J" -d '{"name":"legal"}'
is "$STATUS $(jqr '"\(.name) \(.type) \(.binding_count)"')" "200 legal knowledge 0" "create a tag"
TL=$(jqr .id)
svc "$DK" POST /v1/datasets/tags -H "$J" -d '{"name":"hr"}'; TH=$(jqr .id)
svc "$DK" POST /v1/datasets/tags -H "$J" -d '{"name":"legal"}'
is "$STATUS $(jqr .message)" "400 Tag name already exists" "a taken name: 400"
svc "$DK" POST /v1/datasets/tags -H "$J" -d "{\"name\":\"$(printf '%051d' 0)\"}"
is "$STATUS $(jqr .message)" "400 Name must be between 1 to 50 characters." "51 characters: 400, Dify's words"

svc "$DK" POST /v1/datasets/tags/binding -H "$J" -d "{\"tag_ids\":[\"$TL\",\"$TH\"],\"target_id\":\"$D1\"}"
is "$STATUS" 204 "bind two tags to a dataset"
svc "$DK" POST /v1/datasets/tags/binding -H "$J" -d "{\"tag_ids\":[\"$TL\"],\"target_id\":\"$D2\"}"
svc "$DK" GET /v1/datasets/tags
is "$(jqr 'map("\(.name)=\(.binding_count)") | sort | join(",")')" "hr=1,legal=2" "list: binding counts as strings"
svc "$DK" GET "/v1/datasets/$D1/tags"
is "$(jqr '[.total, (.data | map(.name) | sort | join(","))] | map(tostring) | join(" ")')" "2 hr,legal" "a dataset's tags"
svc "$DK" PATCH /v1/datasets/tags -H "$J" -d "{\"tag_id\":\"$TL\",\"name\":\"law\"}"
is "$(jqr '"\(.name) \(.binding_count)"')" "law 2" "rename a tag"
svc "$DK" GET "/v1/datasets/$D2"
is "$(jqr '[.tags[].name] | join(",")')" law "... the dataset's detail names it anew"

svc "$DK" POST /v1/datasets/tags/unbinding -H "$J" -d "{\"tag_id\":\"$TH\",\"target_id\":\"$D1\"}"
is "$STATUS" 204 "unbind (Dify's older tag_id)"
svc "$DK" GET "/v1/datasets/$D1/tags"
is "$(jqr '[.data[].name] | join(",")')" law "... gone from the dataset"
svc "$DK" POST /v1/datasets/tags/binding -H "$J" -d "{\"tag_ids\":[\"00000000-0000-4000-8000-000000000000\"],\"target_id\":\"$D1\"}"
is "$STATUS $(jqr .message)" "404 Tag not found" "an unknown tag: 404"
svc "$DK" POST /v1/datasets/tags/binding -H "$J" -d "{\"tag_ids\":[\"$TH\"],\"target_id\":\"00000000-0000-4000-8000-000000000000\"}"
is "$STATUS" 404 "an unknown dataset: 404"
svc "$DK" POST /v1/datasets/tags/binding -H "$J" -d "{\"target_id\":\"$D1\"}"
is "$STATUS" 400 "no tag_ids: 400"

svc "$DK" DELETE /v1/datasets/tags -H "$J" -d "{\"tag_id\":\"$TL\"}"
is "$STATUS" 204 "delete a tag"
svc "$DK" GET "/v1/datasets/$D2/tags"
is "$(jqr .total)" 0 "... its bindings went with it"
svc "$DK" GET /v1/datasets/tags
is "$(jqr 'map(.name) | join(",")')" hr "... the list without it"
svc "$DK" POST /v1/datasets/tags/binding -H "$J" -d "{\"tag_ids\":[\"$TH\"],\"target_id\":\"$D1\"}"
svc "$DK" POST /v1/datasets/tags/binding -H "$J" -d "{\"tag_ids\":[\"$TH\"],\"target_id\":\"$D2\"}"
svc "$DK" GET /v1/datasets/tags
is "$(jqr '.[0].binding_count')" 2 "bound to both"
svc "$DK" DELETE "/v1/datasets/$D1"
svc "$DK" GET /v1/datasets/tags
is "$(jqr '.[0].binding_count')" 1 "a deleted dataset's bindings go with it"
