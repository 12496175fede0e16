#!/bin/sh
# lint_modules.sh [folder...] — the front end's ES modules import one way:
# an edge "a b" is a module of the folders (default fcgi/ui fcgi/admin
# fcgi/webapp) importing b by a relative path ('./x.js', '../ui/x.js');
# tsort finds any cycle, as tests/lint.sh does for engine/'s folders. An
# import of a module that is not there fails too. Imports are read from
# "import ... from '<path>'" (one or more lines), "import '<path>'" and
# "export ... from '<path>'". Prints what it finds; exits 1 on a problem.
set -u
[ $# -eq 0 ] && set -- fcgi/ui fcgi/admin fcgi/webapp
bad=0
edges=
missing=
for dir in "$@"; do
	for f in "$dir"/*.js; do
		[ -f "$f" ] || continue
		d=$(dirname "$f")
		# the specifiers after from or a bare import, quoted '...' or "..."
		specs=$(sed -nE "s/.*(^|[^a-zA-Z_.])(from|import)[[:space:]]*['\"]([^'\"]+)['\"].*/\\3/p" "$f")
		for s in $specs; do
			case $s in ./*|../*) ;; *) continue ;; esac
			to=$(realpath -m --relative-to=. "$d/$s")
			if [ ! -f "$to" ]; then
				missing="$missing$f imports $s ($to is not there)
"
				continue
			fi
			edges="$edges$(realpath -m --relative-to=. "$f") $to
"
		done
	done
done
if [ -n "$missing" ]; then
	echo "lint: a module imports a file that is not there:"
	printf '%s' "$missing"; bad=1
fi
loop=$(printf '%s' "$edges" | tsort 2>&1 >/dev/null || true)
if [ -n "$loop" ]; then
	echo "lint: ES modules import each other in a cycle:"
	echo "$loop"; bad=1
fi
exit $bad
