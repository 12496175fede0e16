#!/bin/bash
# t_models.sh — model provider settings through nginx: list, create with
# the key encrypted at rest and masked on read, the mask keeping the key,
# test against tests/fakes/fake_llm.py (what flowcgi sent, the provider's
# error without the key), validation, delete, auth.
. "$(dirname "$0")/lib.sh"

for v in OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_API_KEY DEEPSEEK_API_KEY \
    SILICONFLOW_API_KEY; do unset "$v"; done

# The fake model server; finish() stops it with the flowcgi processes.
start_fake llm FAKE
fake_script() { curl -sS -o /dev/null "$FAKE/_script" --data-binary "$1"; }
fake_requests() { curl -sS "$FAKE/_requests"; }

start_front || exit 1
P=/console/api/workspaces/current/model-providers
SECRET=sk-e2e-secret-0123456789

req GET $P
is "$STATUS" 200 "list: 200"
is "$(jqr '.data[] | select(.name=="openai") | .configured')" false \
    "openai without OPENAI_API_KEY is not configured"
is "$(jqr '.data[] | select(.name=="ollama") | .base_url')" \
    "http://127.0.0.1:11434/v1" "ollama is built in"

req POST $P/fake -H "$J" --data-binary "{\"base_url\":\"$FAKE/v1\",
    \"api_key\":\"$SECRET\",\"models\":[\"fake-model\"]}"
is "$STATUS" 200 "create: 200"
is "$(jqr .api_key)" "[__HIDDEN__]" "create: the key comes back masked"
is "$(jqr .protocol)" openai "create: protocol defaults to openai"
req GET $P
is "$(jqr '.data[0].name')" fake "list: stored entries first"
is "$(jqr '.data[0].api_key')" "[__HIDDEN__]" "list: key masked"
no_secret() {	# no_secret <description>: BODY does not hold the key
	case "$BODY" in *"$SECRET"*) ok 1 "$1";; *) ok 0 "$1";; esac
}
no_secret "list: no key"
req GET /flow$P
is "$STATUS" 200 "list under /flow"

fake_script '[]'
req POST $P/fake/test -H "$J" --data-binary '{}'
is "$STATUS" 200 "test: 200"
is "$(jqr .result)" success "test: success"
is "$(jqr .text)" "echo: Say OK." "test: the fake's answer"
is "$(fake_requests | jq -r '.[0].headers.authorization')" \
    "Bearer $SECRET" "test: flowcgi sent the stored key"
is "$(fake_requests | jq -r '.[0].body.model')" fake-model \
    "test: the entry's first model"

# The mask sent back keeps the key.
req POST $P/fake -H "$J" --data-binary "{\"base_url\":\"$FAKE/v1\",
    \"api_key\":\"[__HIDDEN__]\",\"models\":[\"fake-model\",\"m2\"]}"
is "$STATUS" 200 "update with the mask: 200"
fake_script "{\"api_key\":\"$SECRET\",\"responses\":[]}"
req POST $P/fake/test -H "$J" --data-binary '{"model":"m2"}'
is "$STATUS" 200 "test after a masked update: the key was kept"
is "$(jqr .model)" m2 "test: the model asked for"

# A wrong key: the provider's message, never the key.
fake_script '{"api_key":"sk-another","responses":[]}'
req POST $P/fake/test -H "$J" --data-binary '{}'
is "$STATUS" 400 "test with a refused key: 400"
is "$(jqr .code)" provider_test_failed "test: code"
is "$(jqr .message)" "fake: 401 Incorrect API key provided" \
    "test: the provider's message"
no_secret "test: no key"

# At rest: encrypted with a key file of mode 0600.
DATA=$T_DIR/data
is "$(stat -c %a "$DATA/secret.key")" 600 "secret.key is mode 0600"
store_lacks "$SECRET" "$FAKE/v1"
ok $? "no plain key in the store (its base_url is there)"
if grep -rqa -- "$SECRET" "$T_DIR"/fc.log; then ok 1 "no key in the log"
else ok 0 "no key in the log"; fi

# Validation, 404, auth.
req POST $P/fake -H "$J" --data-binary '{"base_url":"ftp://x"}'
is "$STATUS" 400 "bad base_url: 400"
is "$(jqr .code)" invalid_param "bad base_url: invalid_param"
req POST $P/no%2Fslash -H "$J" --data-binary "{\"base_url\":\"$FAKE/v1\"}"
is "$STATUS" 400 "bad name: 400"
req POST $P/nope/test -H "$J" --data-binary '{}'
is "$STATUS" 404 "test of an unknown entry: 404"
TOKEN=none req GET $P
is "$STATUS" 401 "list without auth: 401"

req DELETE $P/fake
is "$STATUS" 200 "delete: 200"
is "$(jqr .result)" success "delete: success"
req DELETE $P/fake
is "$STATUS" 404 "delete again: 404"
req GET $P
is "$(jqr '[.data[] | select(.name=="fake")] | length')" 0 \
    "deleted entry is gone"
