# t_sandbox_network.sh — sandbox.network for the local (bubblewrap)
# provider, through command nodes: with network on and a plain file server
# on the host's loopback allowed by sandbox.network_allow, pip installs a
# wheel from it (built here with python3 only) into the workspace; a host
# not on the list and a private address not listed get the proxy's 403;
# with network off nothing reaches out. Through nginx and the service API
# for the install, through `flowcgi run` for the other settings.
. "$(dirname "$0")/lib.sh"

APPF=$TOP/tests/e2e/apps/sandboxed_net.yml
need bwrap
if ! /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
	skip "/usr/bin/python3 has no pip (Debian package python3-pip)"
	exit 0
fi

# A wheel of one module, and a file server for its folder.
mkdir -p "$T_DIR/index"
python3 - "$T_DIR/index" <<'PY'
import base64, hashlib, sys, zipfile
name, ver = "flowcgi_nettest", "0.1"
files = {
    name + "/__init__.py": 'VALUE = "installed from the local index"\n',
    name + "-" + ver + ".dist-info/METADATA":
        "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + ver + "\n",
    name + "-" + ver + ".dist-info/WHEEL":
        "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
}
record = name + "-" + ver + ".dist-info/RECORD"
lines = []
for p, t in files.items():
    d = base64.urlsafe_b64encode(hashlib.sha256(t.encode()).digest())
    lines.append("%s,sha256=%s,%d" % (p, d.rstrip(b"=").decode(), len(t)))
lines.append(record + ",,")
files[record] = "\n".join(lines) + "\n"
whl = "%s/%s-%s-py3-none-any.whl" % (sys.argv[1], name, ver)
with zipfile.ZipFile(whl, "w") as z:
    for p, t in files.items():
        z.writestr(p, t)
PY
ok $? "a wheel built with python3"
IDX_PORT=$(free_port)
python3 -m http.server "$IDX_PORT" --bind 127.0.0.1 \
    --directory "$T_DIR/index" >"$T_DIR/index.log" 2>&1 &
FLOWCGI_PIDS="$FLOWCGI_PIDS $!"
wait_port "$IDX_PORT" || { echo "# the file server did not start"; exit 1; }
served() { grep -c '"GET ' "$T_DIR/index.log"; }

# fetch <url>: a python3 fetch inside the sandbox, through the proxy the
# environment names: "body ...", "http <code> <message>" or "error ...".
fetch() {
	printf '%s' "python3 -c 'import sys, urllib.request, urllib.error
try:
    print(\"body\", urllib.request.urlopen(sys.argv[1], timeout=10).status)
except urllib.error.HTTPError as e:
    print(\"http\", e.code, e.read().decode())
except Exception as e:
    print(\"error\", e)' $1"
}

# Network on, the file server's address allowed: through nginx.
FLOWCGI_SANDBOX_NETWORK=true FLOWCGI_SANDBOX_NETWORK_ALLOW="127.0.0.1" \
    start_front || exit 1
import_app "$APPF"
run_svc() {	# run_svc <command>: the run's outputs (JSON)
	jq -n --arg c "$1" '{inputs: {cmd: $c}, user: "u",
	    response_mode: "blocking"}' >"$T_DIR/run.json"
	svc "$KEY" POST /v1/workflows/run -H 'Content-Type: application/json' \
	    --data-binary @"$T_DIR/run.json"
	printf '%s' "$BODY" | jq -c .data.outputs
}
out=$(run_svc "pip install --no-index --find-links http://127.0.0.1:$IDX_PORT/ \
--trusted-host 127.0.0.1 flowcgi_nettest 2>&1 | tail -3; \
python3 -c 'import flowcgi_nettest; print(flowcgi_nettest.VALUE)'; \
ls .local/lib/python3*/site-packages | grep -c flowcgi_nettest")
printf '%s\n' "$out" | jq -r .out | sed 's/^/# /'
printf '%s' "$out" | jq -r .out | grep -q 'Successfully installed flowcgi_nettest-0.1'
ok $? "pip install from the allowed local index succeeds in the sandbox"
printf '%s' "$out" | jq -r .out | grep -qx 'installed from the local index'
ok $? "the installed module imports"
is "$(printf '%s' "$out" | jq -r .out | grep -v '^$' | tail -1)" 2 \
    "into the workspace's user site (.local)"
[ "$(served)" -ge 2 ]
ok $? "the file server saw the index and the wheel fetched"

out=$(run_svc "$(fetch http://example.com/) ; $(fetch http://169.254.169.254/)")
printf '%s' "$out" | jq -r .out | grep -q "^http 403 flowcgi sandbox proxy: 'example.com' is not an allowed host; the sandbox may reach only: 127.0.0.1 (sandbox.network_allow)"
ok $? "a host not on the list: 403 with the list"
printf '%s' "$out" | jq -r .out | grep -q "^http 403 flowcgi sandbox proxy: '169.254.169.254' is not an allowed host"
ok $? "the cloud metadata address: 403"
out=$(run_svc "curl -sS -o /dev/null -w '%{http_code}' https://example.com/ 2>&1; echo; \
python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $IDX_PORT), timeout=3)' 2>&1 | tail -1")
if [ -x /usr/bin/curl ]; then
	printf '%s' "$out" | jq -r .out | grep -q '403'
	ok $? "curl over https (CONNECT) to a host not on the list: 403"
else
	skip "no /usr/bin/curl"
fi
printf '%s' "$out" | jq -r .out | grep -q 'ConnectionRefusedError'
ok $? "no direct way to the host's loopback: only the proxy"

# Network on, any host but no private address: `flowcgi run`.
cli() {	# cli <network> <allow> <command>: the run's outputs (JSON)
	FLOWCGI_SERVER_DATA_DIR=$T_DIR/cli FLOWCGI_SANDBOX_NETWORK=$1 \
	    FLOWCGI_SANDBOX_NETWORK_ALLOW=$2 "$FLOWCGI_BIN" run "$APPF" \
	    --input "cmd=$3" 2>"$T_DIR/cli.err"
}
before=$(served)
out=$(cli true '*' "$(fetch http://10.255.255.1/) ; NO_PROXY= no_proxy= $(fetch http://127.0.0.1:$IDX_PORT/) ; $(fetch http://[fd00::1]/)")
printf '%s' "$out" | jq -r .out | grep -q "^http 403 flowcgi sandbox proxy: '10.255.255.1' resolves to 10.255.255.1, a private or reserved address"
ok $? "network_allow '*': a private address not listed is refused"
printf '%s' "$out" | jq -r .out | grep -q "^http 403 flowcgi sandbox proxy: '127.0.0.1' resolves to 127.0.0.1, a loopback address"
ok $? "network_allow '*': the host's loopback is refused"
printf '%s' "$out" | jq -r .out | grep -q "^http 403 flowcgi sandbox proxy: 'fd00::1' resolves to fd00::1, a private or reserved address"
ok $? "network_allow '*': a unique local IPv6 address is refused"
is "$(served)" "$before" "the file server saw none of it"

# An empty list: nothing.
out=$(cli true '' "NO_PROXY= no_proxy= $(fetch http://127.0.0.1:$IDX_PORT/)")
printf '%s' "$out" | jq -r .out | grep -q "may reach only: no host at all"
ok $? "an empty network_allow lets nothing through"

# Network off: no proxy, no route, nothing reaches out.
out=$(cli false 127.0.0.1 "echo \"proxy=\${HTTPS_PROXY:-none}\"; $(fetch http://127.0.0.1:$IDX_PORT/); \
pip install --no-index --find-links http://127.0.0.1:$IDX_PORT/ --trusted-host 127.0.0.1 flowcgi_nettest >/dev/null 2>&1; echo pip=\$?")
printf '%s' "$out" | jq -r .out | grep -qx 'proxy=none'
ok $? "network off: no proxy in the environment"
printf '%s' "$out" | jq -r .out | grep -q '^error .*Connection refused'
ok $? "network off: the fetch fails"
printf '%s' "$out" | jq -r .out | grep -qx 'pip=1'
ok $? "network off: pip install fails"
is "$(served)" "$before" "network off: the file server saw nothing"
