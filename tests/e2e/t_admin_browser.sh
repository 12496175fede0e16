#!/bin/bash
# t_admin_browser.sh — the admin page (/admin/) through nginx: its headers
# with curl, then the page itself in Debian's chromium driven by
# playwright-core (tests/browser/admin.test.js), mounted under /flow/.
#
# FLOWCGI_CHROMIUM overrides /usr/bin/chromium; the DSL files it imports
# are real Dify exports in tests/e2e/apps/dify/. The npm package is installed from the committed
# package-lock.json when tests/browser/node_modules is missing. The
# screenshots of each page are kept in <build>/test-logs/screenshots.
. "$(dirname "$0")/lib.sh"

# real Dify exports, kept with the tests
CORPUS=$TOP/tests/e2e/apps/dify
CHROMIUM=${FLOWCGI_CHROMIUM:-/usr/bin/chromium}
BROWSER_DIR=$TOP/tests/browser

# the sandboxed run of the Run tab asks the fake LLM; Settings > Tools'
# Test button the tool fakes
start_fake tools TOOLS || exit 1
start_llm_front || exit 1

# ---- The page as files: redirect, types, caching, security headers ----

for pre in "" /flow; do
	TOKEN=none req GET "$pre/admin"
	is "$STATUS $(printf '%s\n' "$HDRS" | sed -n 's/^Location: //Ip')" \
	    "301 admin/" "$pre/admin redirects to the relative admin/"
	TOKEN=none req GET "$pre/admin/"
	is "$STATUS $(printf '%s' "$BODY" | grep -c '<script type="module" src="admin.js">')" "200 1" \
	    "$pre/admin/ serves the page without a token"
done
hdr() { printf '%s\n' "$HDRS" | sed -n "s/^$1: //Ip" | head -1; }
is "$(hdr Content-Type)" "text/html; charset=utf-8" "index is text/html"
csp=$(hdr Content-Security-Policy)
case "$csp" in *"default-src 'self'"*"script-src 'self'"*) r=0 ;; *) r=1 ;; esac
ok $r "a strict Content-Security-Policy: $csp"
case "$csp" in *unsafe-inline*|*unsafe-eval*|*"*"*) r=1 ;; *) r=0 ;; esac
ok $r "the policy allows nothing inline, no eval, no other host"
is "$(hdr X-Frame-Options)" DENY "X-Frame-Options DENY"
is "$(hdr Cache-Control)" no-cache "Cache-Control no-cache (revalidate)"
is "$(printf '%s\n' "$HDRS" | grep -ci '^cache-control:')" 1 \
    "a single Cache-Control header"
TOKEN=none req GET /flow/admin/admin.js
etag=$(hdr ETag)
is "$STATUS $(hdr Content-Type)" "200 text/javascript; charset=utf-8" \
    "admin.js is text/javascript"
TOKEN=none req GET /flow/admin/admin.js -H "If-None-Match: $etag"
is "$STATUS $BODY" "304 " "If-None-Match with its ETag answers 304"
TOKEN=none req GET /admin/admin.css
is "$STATUS $(hdr Content-Type)" "200 text/css; charset=utf-8" \
    "admin.css is text/css"
TOKEN=none req GET /flow/admin/
printf '%s' "$BODY" | grep -q '<link rel="icon" href="favicon.svg" type="image/svg+xml">'
ok $? "the page links its icon (relative, so under any prefix)"
TOKEN=none req GET /flow/admin/favicon.svg
is "$STATUS $(hdr Content-Type) $(hdr Cache-Control)" \
    "200 image/svg+xml max-age=86400" "favicon.svg is image/svg+xml, kept a day"
case "$BODY" in "<svg xmlns=\"http://www.w3.org/2000/svg\""*) r=0 ;; *) r=1 ;; esac
ok $r "the icon is an SVG image"
etag=$(hdr ETag)
TOKEN=none req GET /flow/admin/favicon.svg -H "If-None-Match: $etag"
is "$STATUS $(hdr Cache-Control)" "304 max-age=86400" "... revalidated with its ETag"
# the shared ES modules of fcgi/ui/, imported as ../ui/<file>
TOKEN=none req GET /flow/ui/dom.js
is "$STATUS $(hdr Content-Type) $(hdr Cache-Control)" \
    "200 text/javascript; charset=utf-8 no-cache" \
    "<prefix>/ui/dom.js (a shared module) is text/javascript, revalidated"
case "$BODY" in *"export function el("*) r=0 ;; *) r=1 ;; esac
ok $r "... and is fcgi/ui/dom.js"
TOKEN=none req GET /flow/ui/admin.js
is "$STATUS $(jqr .code)" "404 not_found" "an admin file is not a shared module"
TOKEN=none req GET /admin/nothing.js
is "$STATUS $(jqr .code)" "404 not_found" "an unknown file is a JSON 404"
TOKEN=none req GET /admin/..%2fGNUmakefile
is "$STATUS" 404 "no way out of the embedded files"
TOKEN=none req POST /admin/
is "$STATUS" 405 "the page is GET only"
# nothing in the page may come from elsewhere or run inline (the SVG
# namespace graph.js draws in is a name, never fetched); an inline script
# or handler is looked for in the HTML (the Web App card's embed snippet
# is text in admin.js, shown with textContent)
n=$(cat "$TOP"/fcgi/admin/*.html "$TOP"/fcgi/admin/*.js "$TOP"/fcgi/admin/*.css \
    "$TOP"/fcgi/ui/*.js |
    sed 's#http://www\.w3\.org/2000/svg##g' | grep -cE 'https?://|innerHTML|outerHTML|insertAdjacentHTML|document\.write' )
n=$((n + $(cat "$TOP"/fcgi/admin/*.html | grep -cE '<script>| on[a-z]+="')))
is "$n" 0 "no external URL, no HTML injection sinks, no inline script"

# ---- The draft endpoints the page uses ----

jq -n --rawfile y "$CORPUS/difytest__conditional_hello_branching_workflow.yml" \
    '{mode: "yaml-content", yaml_content: $y}' >"$T_DIR/imp.json"
req POST /console/api/apps/imports -H "$J" --data-binary @"$T_DIR/imp.json"
APP=$(jqr .app_id)
req GET "/console/api/apps/$APP/workflows/draft"
is "$STATUS $(jqr '.graph.nodes | length') $(jqr '.environment_variables | type')" \
    "200 4 array" "workflows/draft gives the graph as JSON"
curl -sS -N -H "Authorization: Bearer $TOKEN" -H "$J" \
    -d '{"inputs":{"query":"hello"}}' \
    "$BASE/flow/console/api/apps/$APP/workflows/draft/run" >"$T_DIR/sse.txt"
is "$(sed -n 's/^data: //p' "$T_DIR/sse.txt" | jq -r .event | tr '\n' ' ')" \
    "workflow_started node_started node_finished node_started node_finished node_started node_finished workflow_finished " \
    "draft/run streams the run's events with the admin token"
req POST "/console/api/apps/$APP/advanced-chat/workflows/draft/run" -H "$J" \
    -d '{"inputs":{},"query":"x"}'
is "$STATUS $(jqr .code)" "400 not_chat_app" "a workflow app is not run as a chat"
TOKEN=wrong req POST "/console/api/apps/$APP/workflows/draft/run" -H "$J" -d '{}'
is "$STATUS" 401 "draft/run needs the admin token"
req DELETE "/console/api/apps/$APP"

# ---- The page in a real browser ----

need node
if [ ! -x "$CHROMIUM" ]; then
	ok 1 "chromium ($CHROMIUM) is installed (contrib/install-deps.sh)"
	exit 1
fi
# installed once for the tests that share the folder (npm-install.sh)
"$TOP/tests/npm-install.sh" "$BROWSER_DIR" node_modules/playwright-core \
    2>"$T_DIR/npm.log"
ok $? "playwright-core is installed (npm ci when missing)" ||
    sed 's/^/# /' "$T_DIR/npm.log"

# The Sandbox Provider page is checked against a real sshd on loopback.
if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/sbin/sshd ]; then
	ok 1 "needs root and /usr/sbin/sshd (openssh-server)"; exit 1
fi
SSH_PASS='admin pass-789'
start_sshd sbadmin 61237 "$SSH_PASS" || { ok 1 "sshd started"; exit 1; }

# The docker card is checked against a private dockerd when one starts.
DK=$T_DIR/dk
trap 'rc=$?; sh "$TOP/tests/e2e/dockerd.sh" stop "$DK"; finish; f=$?;
    [ "$rc" -ne 0 ] && exit "$rc"; exit "$f"' EXIT
if sh "$TOP/tests/e2e/dockerd.sh" start "$DK" >"$T_DIR/dockerd.out" 2>&1
then DOCKER_SOCK=unix://$DK/docker.sock DOCKER_WHY=
else DOCKER_SOCK= DOCKER_WHY=$(tail -1 "$T_DIR/dockerd.out")
fi

# The script prints "ok - ..." / "not ok - ..." / "# ..." lines; they are
# counted here so that the whole test has one plan.
ADMIN_URL="$BASE/flow/admin/" ADMIN_TOKEN="$TOKEN" CHROMIUM="$CHROMIUM" \
CORPUS="$CORPUS" FIXTURES="$BROWSER_DIR/fixtures" OUT_DIR="$T_DIR" \
SSH_PORT="$SSH_PORT" SSH_USER=sbadmin SSH_PASS="$SSH_PASS" \
SSH_BASE="$SSHD_DIR/home/work" LLM="$LLM" DOCKER_SOCK="$DOCKER_SOCK" \
DOCKER_WHY="$DOCKER_WHY" TOOLS="$TOOLS" \
TOOLS_APP="$TOP/tests/e2e/apps/tools_workflow.yml" \
    timeout 180 node "$BROWSER_DIR/admin.test.js" >"$T_DIR/browser.tap" 2>&1
rc=$?
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok 0 "${line#ok - }" ;;
	"not ok - "*) ok 1 "${line#not ok - }" ;;
	"skip - "*) skip "${line#skip - }" ;;
	*) echo "# $line" ;;
	esac
done <"$T_DIR/browser.tap"
is "$rc" 0 "the browser script ran to its end"
# The screenshots of each page outlive the test's folder.
if [ -n "${FLOWCGI_BUILD:-}" ]; then
	mkdir -p "$FLOWCGI_BUILD/test-logs/screenshots" &&
	    cp "$T_DIR"/*.png "$FLOWCGI_BUILD/test-logs/screenshots/" 2>/dev/null
	echo "# screenshots in $FLOWCGI_BUILD/test-logs/screenshots"
fi
stop_control_masters
