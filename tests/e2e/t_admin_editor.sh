#!/bin/bash
# t_admin_editor.sh — the admin page's graph editor (the Edit tab) in
# Debian's chromium driven by playwright-core (tests/browser/editor.test.js)
# through nginx, mounted under /flow/, with the fake LLM as the model
# provider: a workflow built from blank, published and run through
# /v1/workflows/run; each template of the create form made, published and
# run, every node type's panel, an iteration built and run
# (tests/browser/editor-more.test.js); a real Dify export (tests/browser/fixtures/
# difytest__conditional_parallel_code_execution_workflow.yml, Dify's own
# test fixture) changed in two places and exported again; before it all,
# the editor's state alone
# (tests/browser/editor-state.test.mjs, node only); a node run alone
# with an edited input (tests/browser/editor-step.test.js). FLOWCGI_CHROMIUM
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
# the create form's templates, served as they are in the tree
for f in "$TOP"/fcgi/admin/templates/*.yml; do
	n=${f##*/}
	curl -sS -D "$T_DIR/h" -o "$T_DIR/t.yml" "$BASE/flow/admin/templates/$n"
	cmp -s "$f" "$T_DIR/t.yml" && grep -qi '^content-type: application/yaml' \
	    "$T_DIR/h"
	ok $? "admin/templates/$n is the template file, as YAML"
done
req GET /flow/admin/templates/nope.yml
is "$STATUS $(jqr .code)" "404 not_found" "a template that is not there is a JSON 404"
# installed once for the tests that share the folder (npm-install.sh)
"$TOP/tests/npm-install.sh" "$BROWSER_DIR" node_modules/playwright-core \
    2>"$T_DIR/npm.log"
ok $? "playwright-core is installed (npm ci when missing)" ||
    sed 's/^/# /' "$T_DIR/npm.log"

ADMIN_URL="$BASE/flow/admin/" ADMIN_TOKEN="$TOKEN" CHROMIUM="$CHROMIUM" \
OUT_DIR="$T_DIR" \
ROUNDTRIP="$BROWSER_DIR/fixtures/difytest__conditional_parallel_code_execution_workflow.yml" \
    timeout 180 node "$BROWSER_DIR/editor.test.js" >"$T_DIR/browser.tap" 2>&1
rc=$?
tap "$T_DIR/browser.tap"
is "$rc" 0 "the browser script ran to its end"

# templates, every node type's panel, an iteration (editor-more.test.js)
ADMIN_URL="$BASE/flow/admin/" ADMIN_TOKEN="$TOKEN" CHROMIUM="$CHROMIUM" \
OUT_DIR="$T_DIR" LLM="$LLM" \
    timeout 180 node "$BROWSER_DIR/editor-more.test.js" >"$T_DIR/more.tap" 2>&1
rc=$?
tap "$T_DIR/more.tap"
is "$rc" 0 "the templates and panels script ran to its end"

# a node run alone from the run panel and from its settings panel
# (editor-step.test.js); code nodes need the sandbox
if command -v bwrap >/dev/null && [ -x /usr/bin/python3 ]; then
	ADMIN_URL="$BASE/flow/admin/" ADMIN_TOKEN="$TOKEN" CHROMIUM="$CHROMIUM" \
	OUT_DIR="$T_DIR" STEP_APP="$TOP/tests/e2e/apps/single_step.yml" \
	    timeout 180 node "$BROWSER_DIR/editor-step.test.js" \
	    >"$T_DIR/step.tap" 2>&1
	rc=$?
	tap "$T_DIR/step.tap"
	is "$rc" 0 "the single-step script ran to its end"
else
	skip "a single run of a code node needs bwrap and /usr/bin/python3"
fi

# The export after the editor's two changes differs from the one before
# only there: the if-else condition's value and the code node's code.
diff=$(python3 - "$T_DIR/export-before.yml" "$T_DIR/export-after.yml" <<'PY'
import sys, yaml
a, b = (yaml.safe_load(open(p)) for p in sys.argv[1:3])
out = []
def walk(x, y, p):
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y), key=str):
            walk(x.get(k, '<none>'), y.get(k, '<none>'), p + '.' + str(k))
    elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (u, v) in enumerate(zip(x, y)):
            key = u.get('id') if isinstance(u, dict) and 'id' in u else i
            walk(u, v, p + '[' + str(key) + ']')
    elif x != y:
        out.append(p + ': ' + repr(x)[:40] + ' -> ' + repr(y)[:40])
walk(a, b, '')
print('\n'.join(out))
PY
)
want=".workflow.graph.nodes[1754230718377].data.cases[true].conditions[bb59bde2-e97f-4b38-ba77-d2ac7c6805d3].value: '1' -> '2'"
case "$diff" in
"$want"*) r=0 ;; *) r=1 ;; esac
ok $r "the export's if-else condition value changed" || echo "# $diff"
printf '%s\n' "$diff" | sed 's/^/# changed: /'
n=$(printf '%s\n' "$diff" | grep -c .)
is "$n $(printf '%s\n' "$diff" | grep -c '^\.workflow\.graph\.nodes\[1754230738434\]\.data\.code: ')" \
    "2 1" "... and the code node's code, and nothing else" || echo "# $diff"
if [ -n "${FLOWCGI_BUILD:-}" ]; then
	mkdir -p "$FLOWCGI_BUILD/test-logs/screenshots" &&
	    cp "$T_DIR"/*.png "$FLOWCGI_BUILD/test-logs/screenshots/" 2>/dev/null
	echo "# screenshots in $FLOWCGI_BUILD/test-logs/screenshots"
fi
