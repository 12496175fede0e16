#!/bin/bash
# t_admin_editor.sh — the admin page's graph editor (the Edit tab) in
# Debian's chromium driven by playwright-core (tests/browser/editor.test.js)
# through nginx, mounted under /flow/, with the fake LLM as the model
# provider: a workflow built from blank, published and run through
# /v1/workflows/run; before it, the editor's state alone
# (tests/browser/editor-state.test.mjs, node only). FLOWCGI_CHROMIUM
# overrides /usr/bin/chromium. The screenshots of each panel are kept in
# <build>/test-logs/screenshots.
. "$(dirname "$0")/lib.sh"

CHROMIUM=${FLOWCGI_CHROMIUM:-/usr/bin/chromium}
BROWSER_DIR=$TOP/tests/browser

# tap <file>: the "ok - " / "not ok - " lines of a script's output as checks
tap() {
	local line
	while IFS= read -r line; do
		case "$line" in
		"ok - "*) ok 0 "${line#ok - }" ;;
		"not ok - "*) ok 1 "${line#not ok - }" ;;
		*) echo "# $line" ;;
		esac
	done <"$1"
}

need node
# the editor's state (fcgi/ui/editor.js) without a browser
node "$BROWSER_DIR/editor-state.test.mjs" >"$T_DIR/state.tap" 2>&1
rc=$?
tap "$T_DIR/state.tap"
is "$rc" 0 "the editor state script ran to its end"

if [ ! -x "$CHROMIUM" ]; then
	skip "needs chromium ($CHROMIUM; contrib/install-deps.sh)"; exit 0
fi
start_llm_front || exit 1
if [ ! -d "$BROWSER_DIR/node_modules/playwright-core" ]; then
	(cd "$BROWSER_DIR" && npm ci --no-audit --no-fund --loglevel=error) \
	    >"$T_DIR/npm.log" 2>&1
	ok $? "npm ci installs playwright-core" ||
	    sed 's/^/# /' "$T_DIR/npm.log"
fi

ADMIN_URL="$BASE/flow/admin/" ADMIN_TOKEN="$TOKEN" CHROMIUM="$CHROMIUM" \
OUT_DIR="$T_DIR" \
    timeout 180 node "$BROWSER_DIR/editor.test.js" >"$T_DIR/browser.tap" 2>&1
rc=$?
tap "$T_DIR/browser.tap"
is "$rc" 0 "the browser script ran to its end"
if [ -n "${FLOWCGI_BUILD:-}" ]; then
	mkdir -p "$FLOWCGI_BUILD/test-logs/screenshots" &&
	    cp "$T_DIR"/*.png "$FLOWCGI_BUILD/test-logs/screenshots/" 2>/dev/null
	echo "# screenshots in $FLOWCGI_BUILD/test-logs/screenshots"
fi
