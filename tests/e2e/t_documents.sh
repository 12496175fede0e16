#!/bin/bash
# t_documents.sh — a workflow with a document-extractor node, run through
# nginx with the service API on uploaded files (tests/documents/): a PDF of
# two pages (English, then Chinese and Japanese), a docx with a table, an
# xlsx of two sheets, and a password-protected PDF, which fails the node
# with a clear error; then the second round of readers: a pptx (uploaded,
# previewed with its type and bytes, read slide by slide with its notes),
# an eml, an xls and a text file in GBK. Last, a real export (a chatflow
# that sends sys.files through a list-operator to a document-extractor and
# the text to its model) answers from a PDF, a docx and an xlsx.
. "$(dirname "$0")/lib.sh"

start_llm_front || exit 1
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

PPTX=application/vnd.openxmlformats-officedocument.presentationml.presentation
run_file "$FIX/deck.pptx" $PPTX
is "$STATUS $(jqr .data.status)" "200 succeeded" "a pptx: the run succeeds"
is "$(jqr .data.outputs.text)" "Roadmap 2025
第一季度：发布
second line
Tail
| Quarter | Goal |
| --- | --- |
| Q1 | 上线 |
Mention the budget
Thank you" "... slides in the presentation's order, a table, the notes"
# the upload the run read, previewed: its type and its bytes
STATUS=$(curl -sS -D "$T_DIR/h.raw" -o "$T_DIR/deck" -w '%{http_code}' \
    -H "Authorization: Bearer $KEY" "$BASE/v1/files/$UP/preview")
is "$STATUS $(tr -d '\r' <"$T_DIR/h.raw" | sed -n 's/^[Cc]ontent-[Tt]ype: //p' |
    tail -1)" "200 $PPTX" "the pptx's preview: 200 with its type"
cmp -s "$T_DIR/deck" "$FIX/deck.pptx"
ok $? "... and its bytes"

run_file "$FIX/mail.eml" message/rfc822
is "$STATUS $(jqr .data.status)" "200 succeeded" "an eml: the run succeeds"
is "$(jqr .data.outputs.text)" "Subject: 季度报告 ready
From: Li Lei <lilei@example.com>
To: Han Meimei <han@example.com>
Date: Fri, 01 Mar 2024 09:30:00 +0000

Hello,

the report is attached.
报告见附件。

Attachment: report.pdf" "... headers, the text part, the attachment named"

run_file "$FIX/sales.xls" application/vnd.ms-excel
is "$STATUS $(jqr .data.status)" "200 succeeded" "an xls: the run succeeds"
is "$(jqr .data.outputs.text | head -3)" "| Product | Qty | Price | Date |
| ------- | --- | ----- | ---- |
| 苹果 | 3 | 1.5 | 2024-01-05 00:00:00 |" "... its sheets as Markdown tables"

run_file "$FIX/gbk.txt" text/plain
is "$(jqr .data.outputs.text | head -1)" "中文编码测试：这是一个用国标码保存的文本文件。" \
    "a text file in GBK: read as Chinese, not mojibake"

# a pptx that is no zip: the node fails, saying so
printf 'not a presentation' >"$T_DIR/bad.pptx"
run_file "$T_DIR/bad.pptx" $PPTX
is "$(jqr .data.status)" failed "a damaged pptx: the run fails"
ok "$(jqr .data.error | grep -q 'not a pptx' && echo 0 || echo 1)" \
    "... saying the file is not a pptx"

# ====== A real export reads the user's documents ======
# svcvit__simple-kimi.yml (tests/e2e/apps/dify): with web search off and a
# document attached, an if-else on sys.files picks the document branch, a
# list-operator keeps the documents, the document-extractor reads the first
# and the model's query is the text and the question (its memory's
# query_prompt_template); the fake model echoes it, so the answer holds what
# the extractor read.
import_app "$TOP/tests/e2e/apps/dify/svcvit__simple-kimi.yml"
[ -n "$KEY" ] || { echo "# import: $BODY"; exit 1; }
# chat_file <file> <type>: uploads it and asks about it, blocking
chat_file() {
	svc "$KEY" POST /v1/files/upload -F "file=@$1;type=$2" -F user=u
	UP=$(jqr .id)
	svc "$KEY" POST /v1/chat-messages -H "$J" -d "{\"inputs\":{\"web_search\":\"关闭\",\"role_def\":\"助手\"},\"query\":\"总结\",\"user\":\"u\",\"response_mode\":\"blocking\",\"files\":[{\"type\":\"document\",\"transfer_method\":\"local_file\",\"upload_file_id\":\"$UP\"}]}"
}
# doc_node: the document-extractor's status in the app's newest run
doc_node() {
	req GET "$A/$APP/workflow-runs?limit=1"
	req GET "$A/$APP/workflow-runs/$(jqr '.data[0].id')/node-executions"
	jqr '.data[] | select(.node_type == "document-extractor") | .status'
}

chat_file "$FIX/two-pages.pdf" application/pdf
is "$STATUS" 200 "the export with a PDF: answered"
ok "$(jqr .answer | grep -q '第二页：文档提取器' && jqr .answer |
    grep -q 'Revenue rose by 12 percent' && echo 0 || echo 1)" \
    "... from both pages of the PDF"
is "$(doc_node)" succeeded "... its document-extractor succeeded"

chat_file "$FIX/notes.docx" \
    application/vnd.openxmlformats-officedocument.wordprocessingml.document
is "$STATUS" 200 "the export with a docx: answered"
ok "$(jqr .answer | grep -q '| 李雷 | Engineer |' && echo 0 || echo 1)" \
    "... from the docx, its table included"
is "$(doc_node)" succeeded "... its document-extractor succeeded"

chat_file "$FIX/sales.xlsx" \
    application/vnd.openxmlformats-officedocument.spreadsheetml.sheet
is "$STATUS" 200 "the export with an xlsx: answered"
ok "$(jqr .answer | grep -q '| 苹果 |' && echo 0 || echo 1)" \
    "... from the workbook's table"
is "$(doc_node)" succeeded "... its document-extractor succeeded"
