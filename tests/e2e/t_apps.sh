#!/bin/bash
# t_apps.sh — the console app API through nginx: create / read / update /
# delete / copy round trips, ETag with If-Match (412) and If-None-Match
# (304), paging and filters, and the same app seen at / and under /flow/.
. "$(dirname "$0")/lib.sh"

start_front || exit 1

etag() { printf '%s\n' "$HDRS" | sed -n 's/^[Ee][Tt][Aa][Gg]: //p'; }

# ---- create, read back through both mounts ----
req POST /console/api/apps -H "$J" --data-binary \
    '{"name":"Round trip 名前 🚀","mode":"workflow","description":"first","icon":"🤖","icon_background":"#E4FBCC"}'
is "$STATUS" 201 "create: 201"
ID=$(jqr .id)
is "$(etag)" '"1"' "create: ETag \"1\""
is "$(jqr .name)" "Round trip 名前 🚀" "create: unicode name kept"
is "$(jqr .api_base_url)" "/v1" "api_base_url at / (relative without server.public_url)"
req GET "/console/api/apps/$ID"
is "$STATUS" 200 "get at /"
is "$(jqr '[.id,.name,.description,.mode,.icon,.icon_background]|join("|")')" \
    "$ID|Round trip 名前 🚀|first|workflow|🤖|#E4FBCC" "get: fields as created"
req GET "/flow/console/api/apps/$ID"
is "$STATUS" 200 "get under /flow"
is "$(jqr .id)" "$ID" "same app under /flow"
is "$(jqr .api_base_url)" "/flow/v1" \
    "api_base_url under /flow"
req POST /flow/console/api/apps -H "$J" \
    --data-binary '{"name":"made under flow","mode":"chat"}'
is "$STATUS" 201 "create under /flow"
FID=$(jqr .id)
req GET "/console/api/apps/$FID"
is "$(jqr .name)" "made under flow" "an app made under /flow is seen at /"
TOKEN=none req GET /flow/healthz
is "$STATUS" 200 "/flow/healthz without auth"
TOKEN=none req GET /flow/console/api/apps
is "$STATUS" 401 "/flow/console/api/apps without auth is 401"
req GET /flow/nope
is "$STATUS" 404 "/flow/nope is 404"
is "$(jqr .status)" 404 "/flow/nope answers JSON"
printf '%s\n' "$HDRS" | grep -qi '^content-type: application/json'
ok $? "responses are application/json"

# ---- update with ETags ----
req PUT "/console/api/apps/$ID" -H "$J" -H 'If-Match: "1"' --data-binary \
    '{"name":"Renamed","description":"second","use_icon_as_answer_icon":true,"max_active_requests":3}'
is "$STATUS" 200 "PUT with the current If-Match: 200"
is "$(etag)" '"2"' "PUT: ETag \"2\""
is "$(jqr '[.name,.description,.use_icon_as_answer_icon,.max_active_requests,.mode]|map(tostring)|join("|")')" \
    "Renamed|second|true|3|workflow" "PUT: fields changed, mode kept"
req PUT "/console/api/apps/$ID" -H "$J" -H 'If-Match: "1"' \
    --data-binary '{"name":"Lost update"}'
is "$STATUS" 412 "PUT with a stale If-Match: 412"
is "$(jqr .code)" precondition_failed "412 code"
req GET "/console/api/apps/$ID"
is "$(jqr .name)" Renamed "the stale PUT changed nothing"
is "$(etag)" '"2"' "ETag still \"2\""
req PUT "/flow/console/api/apps/$ID" -H "$J" -H 'If-Match: W/"2"' \
    --data-binary '{"name":"Weak"}'
is "$STATUS" 200 "a weak If-Match of the current revision works"
req PUT "/console/api/apps/$ID" -H "$J" -H 'If-Match: *' \
    --data-binary '{"name":"Star"}'
is "$STATUS" 200 "If-Match: * works"
req PUT "/console/api/apps/$ID" -H "$J" --data-binary '{"name":"NoMatch"}'
is "$STATUS" 200 "PUT without If-Match works"
is "$(etag)" '"5"' "every update bumped the revision"

# ---- conditional GET ----
req GET "/console/api/apps/$ID" -H 'If-None-Match: "5"'
is "$STATUS" 304 "If-None-Match with the current ETag: 304"
is "$BODY" "" "304 has no body"
is "$(etag)" '"5"' "304 carries the ETag"
req GET "/console/api/apps/$ID" -H 'If-None-Match: "4"'
is "$STATUS" 200 "If-None-Match with an old ETag: 200"
is "$(jqr .name)" NoMatch "... with the record"
TOKEN=none req GET "/console/api/apps/$ID" -H 'If-None-Match: "5"'
is "$STATUS" 401 "If-None-Match does not bypass auth"

# ---- copy ----
req POST "/console/api/apps/$ID/copy" -H "$J" \
    --data-binary '{"name":"The copy","icon_type":"emoji","icon":"📄"}'
is "$STATUS" 201 "copy: 201"
CID=$(jqr .id)
[ -n "$CID" ] && [ "$CID" != "$ID" ]
ok $? "copy has a new id"
is "$(jqr '[.name,.mode,.description,.icon]|join("|")')" \
    "The copy|workflow|second|📄" "copy: mode and description kept, overrides applied"
is "$(etag)" '"1"' "copy starts at revision 1"
SRC_WF=$(curl -sS -H "Authorization: Bearer $TOKEN" \
    "$BASE/console/api/apps/$ID" | jq -r .workflow.id)
CP_WF=$(jqr .workflow.id)
[ -n "$CP_WF" ] && [ "$CP_WF" != null ] && [ "$CP_WF" != "$SRC_WF" ]
ok $? "copy has its own draft workflow"
req GET "/console/api/apps/$ID"
is "$(jqr .name)" NoMatch "the source is unchanged by the copy"
req POST "/flow/console/api/apps/$FID/copy"
is "$STATUS" 201 "copy without a body"
is "$(jqr '[.name,.mode]|join("|")')" "made under flow|chat" \
    "copy without a body keeps name and mode"

# ---- delete ----
req DELETE "/console/api/apps/$CID"
is "$STATUS" 204 "delete: 204"
is "$BODY" "" "204 has no body"
req GET "/console/api/apps/$CID"
is "$STATUS" 404 "a deleted app is 404"
req DELETE "/flow/console/api/apps/$CID"
is "$STATUS" 404 "deleting twice is 404"
req GET "/console/api/apps?limit=100"
is "$(jqr "[.data[].id] | index(\"$CID\")")" null "a deleted app is not listed"
[ "$(jqr "[.data[].id] | index(\"$ID\")")" != null ]
ok $? "the source is still listed"

# ---- paging over a known set, newest first ----
for i in $(seq -w 1 25); do
	case $((10#$i % 3)) in 0) m=chat ;; 1) m=workflow ;; 2) m=completion ;; esac
	curl -sS -o /dev/null -w '%{http_code}\n' -X POST \
	    -H "Authorization: Bearer $TOKEN" -H "$J" \
	    --data-binary "{\"name\":\"Page-$i\",\"mode\":\"$m\"}" \
	    "$BASE/console/api/apps"
done >"$T_DIR/codes"
is "$(sort -u "$T_DIR/codes")" 201 "25 creates answered 201"
all=""
for pg in 1 2 3 4; do
	req GET "/console/api/apps?page=$pg&limit=10&name=page-"
	is "$STATUS" 200 "page $pg: 200"
	case $pg in
	1|2) want="$pg,10,25,true,10" ;;
	3) want="3,10,25,false,5" ;;
	*) want="4,10,25,false,0" ;;
	esac
	is "$(jqr '[.page,.limit,.total,.has_more,(.data|length)]|map(tostring)|join(",")')" \
	    "$want" "page $pg: page, limit, total, has_more, size"
	all="$all$(jqr '.data[].name' | tr '\n' ' ')"
done
want=$(for i in $(seq -w 25 -1 1); do printf 'Page-%s ' "$i"; done)
is "$all" "$want" "pages together list all 25, newest first, once each"
req GET "/console/api/apps?page=2&limit=7&name=PAGE-"
is "$(jqr '[.data[].name]|join(" ")')" \
    "Page-18 Page-17 Page-16 Page-15 Page-14 Page-13 Page-12" \
    "page 2 of 7, case-insensitive name"
req GET "/console/api/apps?mode=workflow&name=Page-&limit=100"
is "$(jqr '.total')" 9 "mode=workflow filter: 9 of the 25"
is "$(jqr '[.data[].mode]|unique|join(",")')" workflow "only workflow apps"
req GET "/console/api/apps?mode=chat&name=Page-2"
is "$(jqr '[.data[].name]|join(" ")')" "Page-24 Page-21" \
    "mode and name together"
req GET "/console/api/apps?mode=all&name=page-1&limit=3"
is "$(jqr '[.total,.has_more,(.data|length)]|map(tostring)|join(",")')" \
    "10,true,3" "mode=all with a name: total counts every match"
req GET "/console/api/apps?name=%E5%90%8D%E5%89%8D"
is "$(jqr '[.data[].id]|join(",")')" "" "the renamed app no longer matches its old name"
req GET "/console/api/apps?name=no%20such%20app"
is "$(jqr '[.total,.has_more]|map(tostring)|join(",")')" "0,false" \
    "a filter matching nothing"
req GET "/console/api/apps?name=Page-0%31"
is "$(jqr '[.data[].name]|join(" ")')" "Page-01" "percent-encoded filter"
req GET "/console/api/apps?name=Page+-01"
is "$(jqr '.total')" 0 "+ decodes to a space"

# ---- the list shows records as they are now ----
req GET "/console/api/apps?name=NoMatch"
is "$(jqr '[.total, .data[0].id, .data[0].name]|map(tostring)|join(",")')" \
    "1,$ID,NoMatch" "the list shows the updated app"
