#!/bin/sh
# documents.sh <build dir> — `make bench`: the PDF reader
# (engine/documents/pdf.c) against pdftotext (poppler-utils) on the same
# 200-page text PDF in the same run, made here by reportlab
# (tests/documents/make_fixtures.py). Each side runs as its own process
# BENCH_DOC_ROUNDS times (5), alternating; the table shows the median
# wall time as pages/s, the ratio flowcgi / pdftotext, and the peak
# memory (max RSS, GNU time) of each. Reported, not asserted (targets:
# ratio >= 1.0, memory under 64 MB). BENCH_DOC_PAGES changes the page count.

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 <build dir>" >&2
	exit 2
fi
BUILD=$1
ROUNDS=${BENCH_DOC_ROUNDS:-5}
PAGES=${BENCH_DOC_PAGES:-200}
TOOL=$BUILD/tools/doc_bench
MAKER=$(dirname "$0")/../documents/make_fixtures.py

for t in pdftotext /usr/bin/time; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "documents bench skipped: $t is not installed"
		exit 0
	fi
done
if ! /usr/bin/python3 -c 'import reportlab' 2>/dev/null; then
	echo "documents bench skipped: python3-reportlab is not installed"
	exit 0
fi
[ -x "$TOOL" ] || { echo "$TOOL is missing" >&2; exit 1; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/doc-bench.XXXXXX") || exit 1
trap 'rm -rf "$DIR"' EXIT
PDF=$DIR/long.pdf
/usr/bin/python3 "$MAKER" long "$PDF" "$PAGES" || exit 1

# side <name> <command...>: one timed run; appends "<seconds> <max KB>"
# to $DIR/<name>.
side() {
	n=$1
	shift
	/usr/bin/time -f '%e %M' -o "$DIR/t" "$@" >"$DIR/out.$n" || return 1
	cat "$DIR/t" >>"$DIR/$n"
}
i=0
while [ $i -lt "$ROUNDS" ]; do
	if [ $((i % 2)) -eq 0 ]; then
		side fc "$TOOL" pdf "$PDF" || exit 1
		side ref pdftotext -enc UTF-8 "$PDF" - || exit 1
	else
		side ref pdftotext -enc UTF-8 "$PDF" - || exit 1
		side fc "$TOOL" pdf "$PDF" || exit 1
	fi
	i=$((i + 1))
done
GOT=$(cut -d' ' -f1 "$DIR/out.fc")
[ "$GOT" = "$PAGES" ] || { echo "doc_bench read $GOT pages, not $PAGES" >&2; exit 1; }
med() {	# med <file> <column>
	cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 }
	    END { print v[int((NR + 1) / 2)] }'
}
FC_T=$(med "$DIR/fc" 1); REF_T=$(med "$DIR/ref" 1)
FC_M=$(med "$DIR/fc" 2); REF_M=$(med "$DIR/ref" 2)
echo
echo "PDF text, $PAGES pages ($(wc -c <"$PDF") bytes), median of $ROUNDS runs:"
awk -v p="$PAGES" -v a="$FC_T" -v b="$REF_T" -v ma="$FC_M" -v mb="$REF_M" \
    'function r(t) { return t > 0 ? p / t : 0 }
    BEGIN {
	printf "  flowcgi (poppler-glib): %8.0f pages/s, peak %6.1f MB\n", r(a), ma / 1024
	printf "  pdftotext:              %8.0f pages/s, peak %6.1f MB\n", r(b), mb / 1024
	printf "  ratio flowcgi / pdftotext (pages/s): %.2f (target >= 1.0), memory target < 64 MB\n", (r(b) > 0 ? r(a) / r(b) : 0)
    }'
echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(getconf _NPROCESSORS_ONLN) CPUs"
