#!/bin/bash
# t_admin_knowledge.sh — the admin page's Knowledge section through nginx
# in Debian's chromium driven by playwright-core
# (tests/browser/knowledge.test.js): create a knowledge base, upload
# tests/documents/notes.docx with progress, wait for it to be indexed,
# see a chunk, hit-test a query and see a score. The screenshot is kept
# in <build>/test-logs/screenshots.
. "$(dirname "$0")/lib.sh"

CHROMIUM=${FLOWCGI_CHROMIUM:-/usr/bin/chromium}
BROWSER_DIR=$TOP/tests/browser

start_front || exit 1
need node
if [ ! -x "$CHROMIUM" ]; then
	ok 1 "chromium ($CHROMIUM) is installed (contrib/install-deps.sh)"
	exit 1
fi
"$TOP/tests/npm-install.sh" "$BROWSER_DIR" node_modules/playwright-core \
    2>"$T_DIR/npm.log"
ok $? "playwright-core is installed (npm ci when missing)" ||
    sed 's/^/# /' "$T_DIR/npm.log"

ADMIN_URL="$BASE/admin/" ADMIN_TOKEN="$TOKEN" CHROMIUM="$CHROMIUM" \
DOC="$TOP/tests/documents/notes.docx" OUT_DIR="$T_DIR" \
    timeout 120 node "$BROWSER_DIR/knowledge.test.js" >"$T_DIR/browser.tap" 2>&1
rc=$?
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok 0 "${line#ok - }" ;;
	"not ok - "*) ok 1 "${line#not ok - }" ;;
	*) echo "# $line" ;;
	esac
done <"$T_DIR/browser.tap"
is "$rc" 0 "the browser script ran to its end"

# what the page made is there through the console API too
req GET /console/api/datasets
is "$(jqr '[.data[] | select(.name == "Meeting notes")] | length')" 1 \
    "the knowledge base the page made is listed by the console API"

if [ -n "${FLOWCGI_BUILD:-}" ]; then
	mkdir -p "$FLOWCGI_BUILD/test-logs/screenshots" &&
	    cp "$T_DIR"/*.png "$FLOWCGI_BUILD/test-logs/screenshots/" 2>/dev/null
	echo "# screenshots in $FLOWCGI_BUILD/test-logs/screenshots"
fi
finish
