# t_datasets_console.sh — the Knowledge API under /console/api/datasets
# behind nginx, with the admin token as Dify's console: create a dataset,
# upload a file, its indexing status (by document batch and Dify's
# console batch route), list its segments, hit-test, delete; a dataset
# key is refused there while it opens /v1; an unknown id is 404.
. "$(dirname "$0")/lib.sh"

start_front || exit 1
C=/console/api/datasets
req POST "$C/api-keys"
DK=$(jqr .token)

req POST "$C" -H "$J" -d '{"name":"Console KB","indexing_technique":"economy"}'
is "$STATUS" 200 "console: create a dataset with the admin token"
DS=$(jqr .id)
is "$(jqr .name)" "Console KB" "... named"
req GET "$C"
is "$(jqr "[.data[] | select(.id == \"$DS\")] | length")" 1 "console: the list holds it"
req PATCH "$C/$DS" -H "$J" -d '{"description":"returns and parcels"}'
is "$STATUS" 200 "console: PATCH the dataset"
req GET "$C/$DS"
is "$(jqr .description)" "returns and parcels" "... GET shows the change"

printf 'Returns\n\nParcels go back by courier within 30 days.\n' >"$T_DIR/returns.txt"
req POST "$C/$DS/document/create-by-file" -F "file=@$T_DIR/returns.txt"
is "$STATUS" 200 "console: upload a file"
DOC=$(jqr .document.id)
B=$(jqr .batch)
done_indexing() {
	req GET "$C/$DS/batch/$B/indexing-status"
	[ "$(jqr '.data[0].indexing_status')" = completed ]
}
wait_until 10 done_indexing
ok $? "console: the batch's indexing status comes to completed"
req GET "$C/$DS/documents/$B/indexing-status"
is "$(jqr '.data[0].id')" "$DOC" "... the documents/{batch} route answers the same document"
req GET "$C/$DS/documents"
is "$(jqr '.data[0].id')" "$DOC" "console: the documents list"
req GET "$C/$DS/documents/$DOC/segments"
is "$STATUS" 200 "console: list the segments"
is "$(jqr '[.data[].content] | join(" ") | test("courier")')" true "... the file's text is in them"
req POST "$C/$DS/hit-testing" -H "$J" -d '{"query":"courier"}'
is "$STATUS" 200 "console: hit-testing"
is "$(jqr '.records[0].segment.document_id')" "$DOC" "... finds the document"
is "$(jqr '.records[0].score > 0')" true "... with a score"

# the dataset key: refused on the console, good on /v1
svc "$DK" GET "$C/$DS"
is "$STATUS" 401 "a dataset key is refused on console routes"
svc "$DK" POST "$C/$DS/hit-testing" -H "$J" -d '{"query":"courier"}'
is "$STATUS" 401 "... and on console hit-testing"
svc "$DK" GET "/v1/datasets/$DS"
is "$STATUS" 200 "... while it opens /v1"
svc "" GET "$C"
is "$STATUS" 401 "no token: 401"

# unknown ids and bad input
req GET "$C/no-such-dataset"
is "$STATUS" 404 "an unknown dataset: 404"
is "$(jqr .code)" not_found "... code not_found"
req GET "$C/$DS/documents/no-such-doc/segments"
is "$STATUS" 404 "an unknown document's segments: 404"
req POST "$C/no-such-dataset/hit-testing" -H "$J" -d '{"query":"x"}'
is "$STATUS" 404 "hit-testing an unknown dataset: 404"
req POST "$C" -H "$J" -d '{"indexing_technique":"economy"}'
is "$STATUS" 400 "create with no name: 400"

req DELETE "$C/$DS"
is "$STATUS" 204 "console: delete the dataset"
req GET "$C/$DS"
is "$STATUS" 404 "... gone"

finish
