# t_annotations_logs.sh — Dify's annotations beyond the reply, through
# nginx: hit histories (console .../annotations/{id}/hit-histories), CSV
# batch import with its job status, export, and annotating a message from
# its log (console POST .../annotations with message_id). Embeddings come
# from the fake OpenAI-compatible /embeddings (a hashed bag of words).
# Each expected shape names where in Dify's source (langgenius/dify,
# api/) it comes from.
. "$(dirname "$0")/lib.sh"

start_fake embed EMB || exit 1
FLOWCGI_ANNOTATIONS_MAX_PER_APP=6 FLOWCGI_ANNOTATIONS_MAX_HIT_HISTORIES=2 \
    start_llm_front || exit 1
req POST /console/api/workspaces/current/model-providers/fakeemb -H "$J" \
    -d "{\"base_url\":\"$EMB/v1\",\"api_key\":\"\"}"
ask() { svc "$KEY" POST /v1/chat-messages -H "$J" -d "{\"inputs\":{},\"query\":\"$1\",\"user\":\"u\"}"; }
csv_import() {	# csv_import <app> <file> [<name>]: the console's import
	req POST "$A/$1/annotations/batch-import" -F "file=@$2;filename=${3:-a.csv}"
}

import_app "$TOP/tests/e2e/apps/chat_stream.yml"
APP1=$APP KEY1=$KEY

# ====== Annotating a message from its log ======

llm_script '{"responses": [{"text": "We close at five."}]}'
ask "When do you close"
MSG=$(jqr .message_id) CONV=$(jqr .conversation_id)
# console/app/annotation.py AnnotationApi.post -> annotation_service.py
# up_insert_app_annotation_from_message: question defaults to the
# message's query, answer (or content) is required
req POST "$A/$APP/annotations" -H "$J" -d "{\"message_id\":\"$MSG\",\"answer\":\"Five o'clock.\"}"
is "$STATUS $(jqr 'keys | join(",")')" "200 answer,created_at,hit_count,id,question" \
    "annotate a message: Dify's annotation fields"
AM=$(jqr .id)
is "$(jqr '[.question, .answer] | join("|")')" "When do you close|Five o'clock." \
    "... the question is the message's query"
req POST "$A/$APP/annotations" -H "$J" -d "{\"message_id\":\"$MSG\",\"content\":\"At five.\"}"
is "$STATUS $(jqr .id) $(jqr .answer)" "200 $AM At five." \
    "the same message again: its annotation rewritten (content as answer)"
req GET "$A/$APP/annotations"
is "$(jqr .total)" 1 "... not a second one"
req POST "$A/$APP/annotations" -H "$J" -d "{\"message_id\":\"$MSG\",\"question\":\"Closing time\",\"answer\":\"At five.\"}"
is "$(jqr .question)" "Closing time" "a question given replaces the query"
req POST "$A/$APP/annotations" -H "$J" -d "{\"message_id\":\"$MSG\"}"
is "$STATUS $(jqr .message)" "400 Either 'answer' or 'content' must be provided" \
    "no answer: Dify's message, 400"
req POST "$A/$APP/annotations" -H "$J" -d '{"message_id":"00000000-0000-7000-8000-000000000000","answer":"x"}'
is "$STATUS $(jqr .message)" "404 Message Not Exists." "an unknown message: 404"
req POST "$A/$APP/annotations" -H "$J" -d '{"message_id":"not-a-uuid","answer":"x"}'
is "$STATUS" 404 "... a message id that is not one: 404"

# ====== CSV batch import ======

# Dify's template (web/app/components/app/annotation/batch-add-annotation-
# modal/csv-downloader.tsx): a header row, question and answer columns
printf '\xef\xbb\xbfquestion,answer\nWhat is the refund policy,"Thirty days, no questions."\n"Say ""hi""",hi\n  ,skipped\nonly a question,\nOpening hours,Nine to five.\n' >"$T_DIR/ok.csv"
csv_import "$APP" "$T_DIR/ok.csv"
# annotation_service.py batch_import_app_annotations: {job_id,
# job_status "waiting", record_count} (the task runs after the answer;
# here it has ended before, and the status says so)
is "$STATUS $(jqr 'keys | join(",")') $(jqr .job_status) $(jqr .record_count)" \
    "200 job_id,job_status,record_count waiting 3" \
    "import: Dify's job, rows without both fields skipped"
JOB=$(jqr .job_id)
# AnnotationBatchImportStatusApi.get
req GET "$A/$APP/annotations/batch-import-status/$JOB"
is "$STATUS $(jq -c . <<<"$BODY")" "200 {\"job_id\":\"$JOB\",\"job_status\":\"completed\",\"error_msg\":\"\"}" \
    "the import's status: Dify's fields"
req GET "$A/$APP/annotations/batch-import-status/00000000-0000-7000-8000-000000000000"
is "$STATUS $(jqr .message)" "404 The job does not exist." "an unknown import job: 404"
req GET "$A/$APP/annotations?keyword=say"
is "$(jqr '[.data[] | .question + "=" + .answer] | join(";")')" 'Say "hi"=hi' \
    "quoted fields read as CSV (libcsv): doubled quotes, commas"
req GET "$A/$APP/annotations?keyword=refund"
is "$(jqr .data[0].answer)" "Thirty days, no questions." "... a comma inside quotes"
req GET "$A/$APP/annotations?keyword=question"
is "$(jqr '[.data[].question] | index("question")')" null "the header row is not imported (BOM and all)"

printf 'question\nonly one column\n' >"$T_DIR/one.csv"
csv_import "$APP" "$T_DIR/one.csv"
# a file Dify cannot take: 200 {"error_msg"} (the service catches the
# ValueError), no job
is "$STATUS $(jq -c . <<<"$BODY")" '200 {"error_msg":"Invalid CSV format. The file must contain at least 2 columns (question and answer)."}' \
    "one column: Dify's 200 with error_msg"
printf 'question,answer\n,\n' >"$T_DIR/none.csv"
csv_import "$APP" "$T_DIR/none.csv"
is "$STATUS $(jqr .error_msg)" "200 The CSV file must contain at least 1 valid annotation record(s). Found 0 valid record(s)." \
    "no valid row: Dify's message, 200"
printf 'no newline' >"$T_DIR/flat.csv"
csv_import "$APP" "$T_DIR/flat.csv"
is "$STATUS $(jqr .error_msg)" "200 The CSV file appears to be empty or invalid." "no row at all: 200 error_msg"
printf 'question,answer\nq,a\n"open quote,x\n' >"$T_DIR/bad.csv"
csv_import "$APP" "$T_DIR/bad.csv"
ok "$([ "$STATUS" = 200 ] && printf '%s' "$(jqr .error_msg)" | grep -q '^An error occurred while processing the file' && echo 0 || echo 1)" \
    "an unterminated quote: 200, libcsv's reason in error_msg ($(jqr .error_msg))"
csv_import "$APP" "$T_DIR/ok.csv" a.txt
is "$STATUS $(jqr .message)" "400 Invalid file type. Only CSV files are allowed" \
    "not a .csv: Dify's message, 400"
req POST "$A/$APP/annotations/batch-import" -F "other=x"
is "$STATUS $(jqr .code)" "400 no_file_uploaded" "no file: 400"
req POST "$A/$APP/annotations/batch-import" -F "file=@$T_DIR/ok.csv;filename=a.csv" -F "file2=@$T_DIR/ok.csv;filename=b.csv"
is "$STATUS $(jqr .code)" "400 too_many_files" "two files: 400"
# 4 kept, 6 allowed: 3 more would pass annotations.max_per_app
csv_import "$APP" "$T_DIR/ok.csv"
is "$STATUS $(jqr .message)" "413 the import would pass annotations.max_per_app (6)" \
    "past annotations.max_per_app: 413 naming the setting, nothing imported"
req GET "$A/$APP/annotations"
is "$(jqr .total)" 4 "... the app keeps what it had"

# ====== Export ======

req POST "$A/$APP/annotations" -H "$J" -d '{"question":"=HYPERLINK(\"x\")","answer":"@SUM(A1)"}'
AF=$(jqr .id)
# AnnotationExportApi.get: {data: [annotation_fields]}, newest first,
# CSVSanitizer.sanitize_value on question and answer
req GET "$A/$APP/annotations/export"
is "$STATUS $(jqr '.data | length') $(jqr '.data[0] | keys | join(",")')" \
    "200 5 answer,created_at,hit_count,id,question" "export: every annotation, Dify's fields"
is "$(jqr '.data[0] | [.id, .question, .answer] | join("|")')" "$AF|'=HYPERLINK(\"x\")|'@SUM(A1)" \
    "... newest first, a formula quoted (Dify's CSV injection guard)"
req GET "$A/$APP/annotations?keyword=HYPERLINK"
is "$(jqr .data[0].question)" '=HYPERLINK("x")' "... but stored as written"
req DELETE "$A/$APP/annotations/$AF"

# ====== Hit histories ======

svc "$KEY" POST /v1/apps/annotation-reply/enable -H "$J" -d '{"score_threshold":0.5,"embedding_provider_name":"fakeemb","embedding_model_name":"bow"}'
is "$(jqr .job_status)" waiting "the reply on"
req GET "$A/$APP/annotations?keyword=refund"
AR=$(jqr .data[0].id)
req GET "$A/$APP/annotations/$AR/hit-histories"
is "$STATUS $(jq -c . <<<"$BODY")" '200 {"data":[],"has_more":false,"limit":20,"total":0,"page":1}' \
    "no hits yet: Dify's empty page"
ask "What is the refund policy"
is "$(jqr .metadata.annotation_reply.id)" "$AR" "a query answered by the annotation"
HM=$(jqr .message_id)
req GET "$A/$APP/annotations/$AR/hit-histories"
# fields/annotation_fields.py annotation_hit_history_fields
is "$STATUS $(jqr '.data[0] | keys | join(",")')" "200 created_at,id,match,question,response,score,source" \
    "a hit history: Dify's fields"
is "$(jqr '.data[0] | [.question, .source, .match, .response] | join("|")')" \
    "What is the refund policy|api|What is the refund policy|Thirty days, no questions." \
    "... the query asked, the service API's source (InvokeFrom.to_source), the matched pair"
is "$(jqr '.data[0].score >= 0.99 and .data[0].score <= 1.0001')" true "... and its score ($(jqr .data[0].score))"
ok "$(jqr '.data[0].created_at | type == "number" and . > 1700000000' | grep -qx true && echo 0 || echo 1)" "... and its time"
ask "refund policy please"
ask "what refund policy"
req GET "$A/$APP/annotations/$AR/hit-histories?limit=1"
is "$(jqr '[.total, (.data | length), .has_more, .data[0].question] | join("|")')" "2|1|true|what refund policy" \
    "newest first; the app keeps annotations.max_hit_histories (2)"
ok "$(jqr '.data[0].score < 1' | grep -qx true && echo 0 || echo 1)" "... a looser query's lower score"
req GET "$A/$APP/annotations?keyword=refund"
is "$(jqr .data[0].hit_count)" 3 "hit_count counts every hit, kept or not"
req GET "$A/$APP/annotations/00000000-0000-7000-8000-000000000000/hit-histories"
is "$STATUS $(jqr .message)" "404 Annotation not found" "an unknown annotation's histories: 404"

# another app sees neither the histories nor the export
import_app "$TOP/tests/e2e/apps/chat_stream.yml"
APP2=$APP
req GET "$A/$APP2/annotations/$AR/hit-histories"
is "$STATUS" 404 "another app's annotation's histories: 404"
req GET "$A/$APP2/annotations/export"
is "$STATUS $(jqr '.data | length')" "200 0" "another app's export: its own (none)"
req GET "$A/$APP2/annotations/batch-import-status/$JOB"
is "$STATUS" 404 "another app's import job: 404"
req POST "$A/$APP2/annotations" -H "$J" -d "{\"message_id\":\"$HM\",\"answer\":\"x\"}"
is "$STATUS $(jqr .message)" "404 Message Not Exists." "another app's message: 404"

# deleting an annotation drops its histories (annotation_service.py
# delete_app_annotation); a new one has none
req DELETE "$A/$APP1/annotations/$AR"
req GET "$A/$APP1/annotations/$AR/hit-histories"
is "$STATUS" 404 "a deleted annotation's histories: 404"

# with the reply on an import is embedded at once and answers
printf 'question,answer\nWhere is the shop,On the corner.\n' >"$T_DIR/shop.csv"
csv_import "$APP1" "$T_DIR/shop.csv"
is "$(jqr .job_status)" waiting "an import with the reply on"
req GET "$A/$APP1/annotations/batch-import-status/$(jqr .job_id)"
is "$(jqr .job_status)" completed "... done by the time it answered"
KEY=$KEY1
ask "Where is the shop"
is "$(jqr .answer)" "On the corner." "... its annotations answer at once"
