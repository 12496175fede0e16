#!/bin/sh
# lint.sh — house rules a compiler does not check: banned calls and the
# direction of includes (fcgi -> engine -> storage, any -> conf; inside
# engine/, no loop between its folders), and of the front end's module
# imports (tests/lint_modules.sh).
set -u
bad=0
src=$(git ls-files -co --exclude-standard -- '*.c' '*.h' | grep -v '^tests/')
hits=$(echo "$src" | xargs grep -nE '\b(sprintf|vsprintf|strcpy|strcat|atoi|atol|strtok|gets)\(' || true)
if [ -n "$hits" ]; then
	echo "lint: banned calls (use snprintf, strtol and bounded copies):"
	echo "$hits"; bad=1
fi
hits=$(grep -rnE '#include *"(\.\./)*fcgi/' engine storage conf 2>/dev/null || true)
if [ -n "$hits" ]; then
	echo "lint: engine/, storage/ or conf/ include fcgi/:"; echo "$hits"; bad=1
fi
hits=$(grep -rnE '#include *"(\.\./)*engine/' storage conf 2>/dev/null || true)
if [ -n "$hits" ]; then
	echo "lint: storage/ or conf/ include engine/:"; echo "$hits"; bad=1
fi
hits=$(grep -rnE '#include *"(\.\./)*storage/' conf 2>/dev/null || true)
if [ -n "$hits" ]; then
	echo "lint: conf/ includes storage/:"; echo "$hits"; bad=1
fi
# engine/'s folders include each other's private headers one way only: an
# edge "a b" is a file of engine/a/ including engine/b/<header>; tsort finds
# any loop. engine/internal.h (the engine-wide services) includes no
# folder's header; the top-level engine/*.c files put the engine together
# and may include any.
edges=$(for d in engine/*/; do
	d=${d#engine/}; d=${d%/}
	grep -hoE '#include *"engine/[a-z_]+/' engine/$d/*.[ch] 2>/dev/null |
	    sed -E 's|.*"engine/([a-z_]+)/|\1|' | sort -u |
	    while read -r to; do [ "$to" != "$d" ] && echo "$d $to"; done
done)
loop=$(echo "$edges" | tsort 2>&1 >/dev/null || true)
if [ -n "$loop" ]; then
	echo "lint: engine/ folders include each other in a loop:"
	echo "$loop"; echo "(edges: $(echo "$edges" | tr '\n' ';'))"; bad=1
fi
hits=$(grep -nE '#include *"engine/[a-z_]+/' engine/internal.h || true)
if [ -n "$hits" ]; then
	echo "lint: engine/internal.h includes a folder's header:"
	echo "$hits"; bad=1
fi
# The front end's ES modules (fcgi/ui, fcgi/admin, fcgi/webapp) import one
# way: no cycle, no import of a module that is not there.
sh "$(dirname "$0")/lint_modules.sh" || bad=1
# The README's layout names every top folder and every folder of engine/.
for d in */ engine/*/; do
	d=${d%/}
	case $d in build|node_modules) continue ;; esac
	# what git ignores (var/ after make run, build outputs) is not the
	# project's layout
	git check-ignore -q "$d/" 2>/dev/null && continue
	name=${d#engine/}
	grep -qE "^ *$name/ " README.md || {
		echo "lint: README.md's layout does not name $d/"; bad=1; }
done
[ $bad -eq 0 ] && echo "lint: clean"
exit $bad
