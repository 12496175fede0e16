#!/bin/bash
# t_documents.sh — a workflow with a document-extractor node, run through
# nginx with the service API on uploaded files (tests/documents/): a PDF of
# two pages (English, then Chinese and Japanese), a docx with a table, an
# xlsx of two sheets, and a password-protected PDF, which fails the node
# with a clear error.
. "$(dirname "$0")/lib.sh"

start_front || exit 1
import_app "$TOP/tests/e2e/apps/documents.yml"
FIX=$TOP/tests/documents

# run_file <file> <type>: uploads it and runs the workflow on it, blocking;
# BODY and STATUS are the run's answer.
run_file() {
	svc "$KEY" POST /v1/files/upload -F "file=@$1;type=$2" -F user=u
	UP=$(jqr .id)
	svc "$KEY" POST /v1/workflows/run -H "$J" -d "{\"inputs\":{\"f\":{\"type\":\"document\",\"transfer_method\":\"local_file\",\"upload_file_id\":\"$UP\"}},\"user\":\"u\",\"response_mode\":\"blocking\"}"
}

run_file "$FIX/two-pages.pdf" application/pdf
is "$STATUS $(jqr .data.status)" "200 succeeded" "a PDF: the run succeeds"
is "$(jqr .data.outputs.text)" "Quarterly report
Revenue rose by 12 percent.
第二页：文档提取器
繁體中文與日本語のテキスト" "... with the text of both pages, CJK included"

run_file "$FIX/notes.docx" \
    application/vnd.openxmlformats-officedocument.wordprocessingml.document
is "$STATUS $(jqr .data.status)" "200 succeeded" "a docx: the run succeeds"
is "$(jqr .data.outputs.text)" "Meeting notes
会议纪要：下周发布
| Name | Role |
| --- | --- |
| 李雷 | Engineer |" "... paragraphs, and the table in Markdown"

run_file "$FIX/sales.xlsx" \
    application/vnd.openxmlformats-officedocument.spreadsheetml.sheet
is "$STATUS $(jqr .data.status)" "200 succeeded" "an xlsx: the run succeeds"
is "$(jqr .data.outputs.text)" "| Product | Qty | Price | Date |
| ------- | --- | ----- | ---- |
| 苹果 | 3.0 | 1.5 | 2024-01-05 00:00:00 |
| Banana | 10.0 | 0.25 | 2024-02-29 13:30:00 |
| Two lines | 7.0 | 2.0 | 2023-12-31 00:00:00 |

| 说明 | Count | Unnamed: 2 | Flag |
| -- | ----- | ---------- | ---- |
| 繁體字 | 1.0 | nan | True |
| nan | nan | nan | False |
| x | 2.0 | extra | True |" "... every sheet a Markdown table, as Dify's pandas makes it"

run_file "$FIX/encrypted.pdf" application/pdf
is "$(jqr .data.status)" failed "a password-protected PDF: the run fails"
ok "$(jqr .data.error | grep -q 'protected by a password' && echo 0 || echo 1)" \
    "... saying the PDF is protected by a password"
