#!/bin/bash
# t_lint_modules.sh — tests/lint_modules.sh, the lint of the front end's ES
# module imports: clean on the tree, a cycle in the fixtures of
# tests/lint/modcycle (and in a copy of the tree with one import turned
# back) fails it, as does an import of a module that is not there.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
LINT=$TOP/tests/lint_modules.sh

out=$(sh "$LINT" 2>&1); rc=$?
is "$rc:$out" "0:" "the tree's modules (fcgi/ui, fcgi/admin, fcgi/webapp) import one way"
out=$(sh "$LINT" tests/lint/modok 2>&1); rc=$?
is "$rc:$out" "0:" "a diamond of imports and a package name are no cycle"

out=$(sh "$LINT" tests/lint/modcycle 2>&1); rc=$?
is "$rc" 1 "a cycle a -> b -> c -> a fails the lint"
case "$out" in *"in a cycle"*a.js*b.js*c.js*) r=0 ;; *) r=1 ;; esac
ok $r "... naming the modules of the cycle (the import over two lines read too)" ||
    printf '%s\n' "$out" | sed 's/^/# /'

out=$(sh "$LINT" tests/lint/modmissing 2>&1); rc=$?
case "$rc:$out" in 1:*"not there"*nothing-here.js*) r=0 ;; *) r=1 ;; esac
ok $r "an import of a module that is not there fails the lint"

# The real modules with one import turned back: the shared dom.js
# importing the admin page's page.js (which imports dom.js) is a cycle.
mkdir -p "$T_DIR/fcgi"
cp -r fcgi/ui fcgi/admin "$T_DIR/fcgi/"
printf "import { page } from '../admin/page.js';\n" >>"$T_DIR/fcgi/ui/dom.js"
out=$(cd "$T_DIR" && sh "$LINT" fcgi/ui fcgi/admin 2>&1); rc=$?
case "$rc:$out" in 1:*"in a cycle"*) r=0 ;; *) r=1 ;; esac
ok $r "a copy of the tree with ui/dom.js importing admin/page.js fails the lint"

# tests/lint.sh runs it
grep -q 'lint_modules.sh' tests/lint.sh
ok $? "tests/lint.sh runs the module lint"
