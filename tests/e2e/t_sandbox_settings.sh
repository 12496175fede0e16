#!/bin/bash
# t_sandbox_settings.sh — sandbox provider settings through nginx, against a
# real sshd on a free loopback port (own host key, a password user that
# exists only in sshd's private mount namespace): list with schemas, save a
# wrong ssh config (400 with ssh's message), save the right one (host key
# pinned), secrets masked and never returned, the mask keeping the
# password, test, activate, switching back and forth, delete.
# Needs root, /usr/sbin/sshd and unshare; otherwise it says so and fails.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/sbin/sshd ]; then
	ok 1 "needs root and /usr/sbin/sshd (openssh-server)"; exit 1
fi
PASS='e2e pass-123'
start_sshd sbe2e 61235 "$PASS" || { ok 1 "sshd started"; exit 1; }
S=$SSHD_DIR

start_front || exit 1
P=/console/api/workspaces/current
cfg() {	# cfg <password>
	printf '{"config":{"ssh_host":"127.0.0.1","ssh_port":"%s",
	    "ssh_username":"sbe2e","ssh_password":"%s",
	    "base_working_path":"%s/home/work"}}' "$SSH_PORT" "$1" "$S"
}
no_secret() {
	case "$BODY" in *"$PASS"*) ok 1 "$1";; *) ok 0 "$1";; esac
}

req GET $P/sandbox-providers
is "$STATUS" 200 "list: 200"
is "$(jqr '[.[].provider_type] | index("local") != null')" true "list: local"
is "$(jqr '.[] | select(.provider_type=="local") | .is_active')" true \
    "local is active by default"
is "$(jqr '.[] | select(.provider_type=="ssh") | .is_tenant_configured')" \
    false "ssh not configured"
is "$(jqr '.[] | select(.provider_type=="ssh") | .config_schema[] |
    select(.name=="ssh_password") | .type')" secret-input \
    "ssh_password is a secret in the schema"

req POST $P/sandbox-provider/ssh/config -H "$J" --data-binary "$(cfg nope)"
is "$STATUS" 400 "wrong password: 400"
case "$(jqr .message)" in *"authentication failed"*) ok 0 \
    "wrong password: ssh's message";; *) ok 1 "wrong password: ssh's message" \
    ; echo "# $BODY";; esac
req POST $P/sandbox-provider/ssh/activate
is "$STATUS" 400 "activate before configuring: 400"

req POST $P/sandbox-provider/ssh/config -H "$J" --data-binary "$(cfg "$PASS")"
is "$STATUS" 200 "right config: 200"
is "$(jqr .result)" success "right config: success"
no_secret "save: no password in the answer"
req GET $P/sandbox-providers
is "$(jqr '.[] | select(.provider_type=="ssh") | .config.ssh_password')" \
    "[__HIDDEN__]" "list: password masked"
case "$(jqr '.[] | select(.provider_type=="ssh") | .config.ssh_host_key')" in
ssh-*) ok 0 "list: host key pinned";; *) ok 1 "list: host key pinned";; esac
no_secret "list: no password"
store_lacks "$PASS" sbe2e
ok $? "password not stored in clear (the user name is)"

# The mask keeps the stored password (it still logs in).
req POST $P/sandbox-provider/ssh/config -H "$J" \
    --data-binary "$(cfg '[__HIDDEN__]')"
is "$STATUS" 200 "mask keeps the password: 200"
req POST $P/sandbox-provider/ssh/test -H "$J" --data-binary '{}'
is "$STATUS" 200 "test the stored config: 200"

req POST $P/sandbox-provider/ssh/activate
is "$STATUS" 200 "activate ssh: 200"
req GET $P/sandbox-providers
is "$(jqr '.[] | select(.is_active) | .provider_type')" ssh "ssh is active"
req POST $P/sandbox-provider/local/activate
is "$STATUS" 200 "activate local: 200"
req GET $P/sandbox-providers
is "$(jqr '.[] | select(.is_active) | .provider_type')" local "local again"
req POST $P/sandbox-provider/ssh/activate
req DELETE $P/sandbox-provider/ssh/config
is "$STATUS" 200 "delete: 200"
req GET $P/sandbox-providers
is "$(jqr '.[] | select(.provider_type=="ssh") | .is_tenant_configured')" \
    false "deleted"
is "$(jqr '.[] | select(.is_active) | .provider_type')" local \
    "deleting the active provider falls back to local"
req DELETE $P/sandbox-provider/ssh/config
is "$STATUS" 404 "delete twice: 404"
req POST $P/sandbox-provider/nope/config -H "$J" --data-binary '{}'
is "$STATUS" 404 "unknown provider: 404"
stop_control_masters
