# t_datasets_file.sh — Dify's document/create-by-file behind nginx: a
# multipart upload ("file" and the JSON "data" with its process rule) of a
# PDF, a Word file and a Markdown file is read by the document readers,
# indexed in the background and found by retrieve; Dify's errors for no
# file, two files, no file name, a type no reader takes and bad data; a
# dataset key cannot reach a dataset that does not exist.
. "$(dirname "$0")/lib.sh"

start_front || exit 1
req POST /console/api/datasets/api-keys
DK=$(jqr .token)
svc "$DK" POST /v1/datasets -H "$J" -d '{"name":"Files","indexing_technique":"economy"}'
DS=$(jqr .id)
DOCS=$TOP/tests/documents

done_indexing() {
	svc "$DK" GET "/v1/datasets/$DS/documents/$1/indexing-status"
	[ "$(jqr '.data[0].indexing_status')" = completed ]
}
RULE='{"indexing_technique":"economy","process_rule":{"mode":"custom","rules":{"pre_processing_rules":[],"segmentation":{"separator":"\\n","max_tokens":100}}}}'

svc "$DK" POST "/v1/datasets/$DS/document/create-by-file" \
    -F "data=$RULE" -F "file=@$DOCS/two-pages.pdf;type=application/pdf"
is "$STATUS" 200 "create-by-file with a PDF"
is "$(jqr .document.name)" two-pages.pdf "... named by the file"
is "$(jqr .document.data_source_type)" upload_file "... an uploaded file"
B1=$(jqr .batch)
wait_until 10 done_indexing "$B1"
ok $? "... indexed in the background"
is "$(jqr '.data[0].total_segments > 1')" true "... the custom rule split it into lines"

svc "$DK" POST "/v1/datasets/$DS/document/create_by_file" -F "file=@$DOCS/notes.docx"
is "$STATUS" 200 "create_by_file with a Word file and no data (the automatic rule)"
B2=$(jqr .batch)
wait_until 10 done_indexing "$B2"
ok $? "... indexed"

printf '# Returns\n\nParcels go back by courier within 30 days.\n' >"$T_DIR/returns.md"
svc "$DK" POST "/v1/datasets/$DS/document/create-by-file" -F "file=@$T_DIR/returns.md"
B3=$(jqr .batch)
wait_until 10 done_indexing "$B3"
ok $? "a Markdown file indexed"

svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"revenue percent"}'
is "$(jqr '.records[0].segment.content')" "Revenue rose by 12 percent." "the PDF's text is retrieved"
is "$(jqr '.records[0].segment.document.name')" two-pages.pdf "... from its document"
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"会议纪要"}'
is "$(jqr '.records[0].segment.document.name')" notes.docx "the Word file's Chinese text is retrieved"
svc "$DK" POST "/v1/datasets/$DS/retrieve" -H "$J" -d '{"query":"courier"}'
is "$(jqr '.records[0].segment.document.name')" returns.md "the Markdown file's text is retrieved"

# Dify's errors
svc "$DK" POST "/v1/datasets/$DS/document/create-by-file" -F "data=$RULE"
is "$STATUS" 400 "no file: 400"
is "$(jqr .code)" no_file_uploaded "... no_file_uploaded"
svc "$DK" POST "/v1/datasets/$DS/document/create-by-file" -H "$J" -d '{}'
is "$STATUS" 400 "not multipart: 400"
svc "$DK" POST "/v1/datasets/$DS/document/create-by-file" \
    -F "file=@$T_DIR/returns.md" -F "file=@$DOCS/notes.docx"
is "$(jqr .code)" too_many_files "two files: too_many_files"
printf 'MZ\0\0' >"$T_DIR/tool.exe"
svc "$DK" POST "/v1/datasets/$DS/document/create-by-file" -F "file=@$T_DIR/tool.exe"
is "$STATUS" 415 "a type no reader takes: 415"
is "$(jqr .message)" "File type not allowed." "... as Dify says it"
svc "$DK" POST "/v1/datasets/$DS/document/create-by-file" -F "file=@$T_DIR/returns.md;filename="
is "$STATUS" 400 "no file name: 400"
svc "$DK" POST "/v1/datasets/$DS/document/create-by-file" -F "data=[1" -F "file=@$T_DIR/returns.md"
is "$STATUS" 400 "data that is not a JSON object: 400"
svc "$DK" POST "/v1/datasets/$DS/document/create-by-file" -F "file=@$DOCS/truncated.pdf"
is "$STATUS" 400 "a damaged PDF: 400 with the reader's reason"
case $(jqr .message) in *truncated.pdf*) ok 0 "... naming the file" ;;
*) ok 1 "... naming the file (got '$(jqr .message)')" ;; esac
svc "$DK" POST "/v1/datasets/01a2426f-0a30-7003-86fc-86f7baf352ee/document/create-by-file" \
    -F "file=@$T_DIR/returns.md"
is "$STATUS" 404 "a dataset that does not exist: 404"
svc "$DK" GET "/v1/datasets/$DS/documents"
is "$(jqr '.data | length')" 3 "the refused uploads made no document"

finish
