# t_tools_email.sh — the native email provider end to end through nginx
# against tests/fakes/fake_smtp.py: its credentials in Settings > Tools
# (the schema of its manifest, the password masked in answers and sealed
# at rest), then a workflow's tool node sending a mail with them, checked
# as the SMTP server received it.
. "$(dirname "$0")/lib.sh"

PASSWORD=s3cret-pass
python3 "$TOP/tests/fakes/fake_smtp.py" --log "$T_DIR/smtp.jsonl" \
    >"$T_DIR/smtp.port" 2>"$T_DIR/smtp.log" &
FLOWCGI_PIDS="$FLOWCGI_PIDS $!"
i=0
while [ ! -s "$T_DIR/smtp.port" ] && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.05; done
SMTP_PORT=$(sed -n 's/^PORT //p' "$T_DIR/smtp.port")
[ -n "$SMTP_PORT" ] || { echo "# fake_smtp did not start"; exit 1; }
start_front || exit 1
TP=/console/api/workspaces/current/tool-provider/builtin

req GET /console/api/workspaces/current/tool-providers
is "$(jqr '[.[] | select(.name=="email")][0] | [.type, (.is_team_authorization | tostring), ([.credentials_schema[] | select(.type=="secret-input") | .name] | join(","))] | join(" ")')" \
    "builtin false email_password" "email is listed, its password a secret"
is "$(jqr '[.[] | select(.name=="database")][0].credentials_schema[0] | .name + " " + .type')" \
    "db_uri secret-input" "database's URI is a secret too"

jq -n --arg p "$SMTP_PORT" --arg k "$PASSWORD" '{credentials: {smtp_server: "127.0.0.1",
    smtp_port: $p, email_account: "sender@example.com", email_password: $k,
    encrypt_method: "NONE"}}' >"$T_DIR/cred.json"
req POST "$TP/langgenius/email/email/update" -H "$J" --data-binary @"$T_DIR/cred.json"
is "$STATUS $(jqr .result)" "200 success" "POST builtin/langgenius/email/email/update stores them"
req GET "$TP/email/credentials"
is "$STATUS $(jqr .email_password) $(jqr .smtp_server)" "200 [__HIDDEN__] 127.0.0.1" \
    "GET credentials masks the password only"
grep -aqF "$PASSWORD" "$T_DIR"/data/*.mdb 2>/dev/null
ok $((! $?)) "the password is sealed in the database"

import_app "$TOP/tests/e2e/apps/tools_email.yml"
svc "$KEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs": {"subject": "Weekly 周报", "body": "All good."}, "user": "u", "response_mode": "blocking"}'
is "$STATUS $(jqr .data.status)" "200 succeeded" "the workflow's email node runs"
is "$(jqr .data.outputs.said | jq -c . 2>/dev/null)" \
    '{"team@example.com":"send email success","boss@example.com":"send email success"}' \
    "... answering as the plugin does"
mail=$(tail -1 "$T_DIR/smtp.jsonl" 2>/dev/null)
is "$(printf '%s' "$mail" | jq -r '[.mail_from, (.rcpt | join("+")), .auth.user, .auth.password] | join(" ")')" \
    "sender@example.com team@example.com+boss@example.com sender@example.com $PASSWORD" \
    "the server got the envelope and the stored login"
printf '%s' "$mail" | jq -r .data | grep -q '^Subject: =?utf-8?b?V2Vla2x5IOWRqOaKpQ==?='
ok $? "... and the subject as an encoded-word"
grep -qF "$PASSWORD" "$T_DIR"/*.log
ok $((! $?)) "the password is in no log of flowcgi's"
