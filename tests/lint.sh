#!/bin/sh
# lint.sh — house rules a compiler does not check: banned calls and the
# direction of includes (fcgi -> engine -> storage, any -> conf).
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
[ $bad -eq 0 ] && echo "lint: clean"
exit $bad
