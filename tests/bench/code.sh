#!/bin/sh
# code.sh <build dir> — `make bench`: what a code node costs. Runs a
# start -> code -> end workflow in process (tests/tools/code_bench.c)
# BENCH_CODE_RUNS times (100) per language: with code.pool_size 0, every
# code node starting its sandbox and interpreter (the baseline), then with
# the default pool of warm runners, paced (each run waits, outside the
# timed part, until a runner is warm again: code nodes that come less often
# than one refill) and back to back (a burst: runs that find the pool empty
# start cold). For each language the same two again with the pool's
# runners as fork servers (code.fork_server, code.fork_server_javascript,
# engine/sandbox/codefork.c), against the one-shot pool and the cold path
# of the same run, and the memory of an idle fork server. Then runs/s
# through nginx (code_nginx.sh). Prints p50 and p99 of the whole run and
# of the code node alone, and pool on / off. Reported, not asserted (target: node p50 on a
# warm runner under 5 ms).

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 <build dir>" >&2
	exit 2
fi
BUILD=$1
RUNS=${BENCH_CODE_RUNS:-100}

for t in bwrap /usr/bin/python3 /usr/bin/node; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "code node bench skipped: $t is not installed"
		exit 0
	fi
done
DIR=$(mktemp -d "${TMPDIR:-/tmp}/code-bench.XXXXXX") || exit 1
trap 'rm -rf "$DIR"' EXIT
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
echo
"$BUILD/tools/code_bench" "$DIR" "$RUNS" || exit 1
echo "  load average before: $LOAD on $(getconf _NPROCESSORS_ONLN) CPUs," \
    "after: $(cut -d' ' -f1-3 /proc/loadavg)"
# The same nodes through nginx, 8 clients (tests/bench/code_nginx.sh).
bash "$(dirname "$0")/code_nginx.sh" "$BUILD" || exit 1
