#!/bin/sh
# run-all.sh [-j N] <build dir> — runs every test: unit tests, fuzz seed
# replays, end-to-end tests through nginx. Each test writes TAP to its own
# log; this prints one line per test and closes with "N passed, N failed,
# N skipped" counted over every TAP result. Exits non-zero on any failure.
#
# TESTS="t_conf_load e2e_t_apps" limits the run to the named tests (shell
# patterns: TESTS='e2e_*' runs the end-to-end tests).
# Tests run N at a time (-j N, or JOBS; the machine's cores by default):
# every test has its own temporary folder, free loopback ports, its own
# nginx, flowcgi, PostgreSQL and dockerd, so none waits for another or
# reads what another left. The tests known to be slow (the times of the
# last run, in <build dir>/test-logs/.times) start first; the lines are
# printed whole, in the order the tests started, never interleaved.
# SHUFFLE=1 starts them in a random order instead (SHUFFLE=<number>: that
# seed, to run one order again): the check that no test needs another's
# leftovers.
# Each test runs under timeout(1): TEST_TIMEOUT seconds (600; the sanitizer
# flavours are slower) and then it fails, with its whole process group
# (servers it started) killed; the slowest tests are listed at the end.
set -u
JOBS=${JOBS:-}
while getopts j: o; do
	case $o in
	j) JOBS=$OPTARG ;;
	*) echo "usage: run-all.sh [-j N] <build dir>" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: run-all.sh [-j N] <build dir>" >&2; exit 2; }
BUILD=$1
[ -n "$JOBS" ] || JOBS=$(nproc 2>/dev/null || echo 1)
case $JOBS in ''|*[!0-9]*|0) echo "run-all.sh: -j wants a number" >&2
	exit 2 ;; esac
LOGS=$BUILD/test-logs
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
mkdir -p "$LOGS"
RUN=$(mktemp -d "${TMPDIR:-/tmp}/flowcgi-run.XXXXXX") || exit 1
trap 'rm -rf "$RUN"' EXIT
trap 'exit 1' INT TERM
times=$LOGS/.times
[ -f "$times" ] && cp "$times" "$RUN/last-times"
: >"$RUN/times"

want() {
	[ -z "${TESTS:-}" ] && return 0
	set -f	# the patterns are for the names, not for files here
	found=1
	for p in $TESTS; do
		case "$1" in $p) found=0; break ;; esac
	done
	set +f
	return $found
}

# The list: one "<name> <kind> <path>" a line.
for t in "$BUILD"/tests/t_*; do
	[ -x "$t" ] || continue
	n=$(basename "$t")
	want "$n" && echo "$n unit $t"
done >"$RUN/list"
for r in "$BUILD"/replay/fuzz_*; do
	[ -x "$r" ] || continue
	n=$(basename "$r")
	want "replay_$n" && echo "replay_$n replay $r"
done >>"$RUN/list"
for t in tests/e2e/t_*.sh; do
	[ -f "$t" ] || continue
	n=e2e_$(basename "$t" .sh)
	want "$n" && echo "$n e2e $t"
done >>"$RUN/list"

# The order they start in: the slowest of the last run first (a test not in
# it may be a slow new one: first too), or shuffled.
if [ -n "${SHUFFLE:-}" ] && [ "${SHUFFLE}" != 0 ]; then
	seed=$SHUFFLE
	[ "$seed" = 1 ] && seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	echo "order: shuffled, SHUFFLE=$seed"
	awk -v s="$seed" 'BEGIN { srand(s) } { print rand() "\t" $0 }' \
	    "$RUN/list" | sort -n | cut -f2- >"$RUN/order"
else
	awk 'NR == FNR { t[$2] = $1; next }
	    { print ($1 in t ? t[$1] : 1000000) "\t" NR "\t" $0 }' \
	    "$RUN/last-times" "$RUN/list" 2>/dev/null | sort -k1,1rn -k2,2n |
	    cut -f3- >"$RUN/order" || cp "$RUN/list" "$RUN/order"
	[ -s "$RUN/order" ] || cp "$RUN/list" "$RUN/order"
fi

# run_one <i> <name> <kind> <path>: runs one test and leaves its report in
# $RUN/<i>.out (the lines to print) and $RUN/<i>.res ("pass fail skip secs
# name"); then says <i> on the pipe.
run_one() {
	i=$1 name=$2 kind=$3 path=$4
	log=$LOGS/$name.log
	start=$(date +%s)
	case $kind in
	unit) set -- "$path" ;;
	replay) set -- "$path" "tests/fuzz/seeds/${name#replay_}" ;;
	e2e) set -- env FLOWCGI_BIN="$PWD/$BUILD/flowcgi" \
	    FLOWCGI_BUILD="$PWD/$BUILD" bash "$path" ;;
	esac
	timeout -k 10 "$TEST_TIMEOUT" "$@" >"$log" 2>&1 </dev/null \
	    3>&- 4>&-
	rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "not ok - $name timed out after $TEST_TIMEOUT s" \
		    "(TEST_TIMEOUT)" >>"$log"
	fi
	s=$(grep -c '^ok [0-9]* # SKIP' "$log")
	p=$(( $(grep -c '^ok ' "$log") - s ))
	f=$(grep -c '^not ok ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1	# crashed or exited non-zero without saying why
		echo "not ok - $name exited with status $rc" >>"$log"
	elif [ "$rc" -eq 0 ] && [ $((p + f + s)) -eq 0 ]; then
		f=1	# ran no check at all: nothing was shown
		echo "not ok - $name ran no check" >>"$log"
	fi
	secs=$(( $(date +%s) - start ))
	if [ "$f" -eq 0 ] && [ "$s" -gt 0 ]; then
		printf 'PASS %-36s %4d checks %4ds, %d skipped: %s\n' "$name" \
		    "$p" "$secs" "$s" "$(grep -m1 '^ok [0-9]* # SKIP' "$log" |
		    sed 's/^ok [0-9]* # SKIP //')"
	elif [ "$f" -eq 0 ]; then
		printf 'PASS %-36s %4d checks %4ds\n' "$name" "$p" "$secs"
	else
		printf 'FAIL %-36s %4d of %d checks failed (see %s)\n' "$name" \
		    "$f" $((p + f)) "$log"
		grep '^not ok\|^#' "$log" | head -20 | sed 's/^/    /'
	fi >"$RUN/$i.out"
	# The prerequisites a test found missing (lib.sh's need: "# SKIP
	# needs <what>: ..."), said once at the end.
	sed -n 's/^ok [0-9]* # SKIP needs \([^:]*\):.*/\1/p' "$log" |
	    sort -u >"$RUN/$i.needs"
	echo "$p $f $s $secs $name" >"$RUN/$i.res"
	echo "$i" >&3
}

mkfifo "$RUN/done" || exit 1
exec 3<>"$RUN/done"
total=$(wc -l <"$RUN/order")
started=0
finished=0
printed=1
pass=0 fail=0 skip=0 failed_tests=""
exec 4<"$RUN/order"
while [ "$finished" -lt "$total" ]; do
	while [ "$started" -lt "$total" ] &&
	    [ $((started - finished)) -lt "$JOBS" ]; do
		read -r name kind path <&4
		started=$((started + 1))
		run_one "$started" "$name" "$kind" "$path" &
	done
	read -r d <&3
	finished=$((finished + 1))
	# Print every report that is complete, in the order they started.
	while [ "$printed" -le "$started" ] && [ -f "$RUN/$printed.res" ]; do
		cat "$RUN/$printed.out"
		read -r p f s secs name <"$RUN/$printed.res"
		pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
		[ "$f" -gt 0 ] && failed_tests="$failed_tests $name"
		echo "$secs $name" >>"$RUN/times"
		printed=$((printed + 1))
	done
done
exec 4<&-
wait

cp "$RUN/times" "$times"
if [ "$(wc -l <"$times")" -gt 1 ]; then
	printf 'slowest:'
	sort -rn "$times" | head -5 | while read -r s n; do
		printf ' %s %ds' "$n" "$s"; done
	echo
fi
[ -n "$failed_tests" ] && echo "failed:$failed_tests"
needs=$(cat "$RUN"/*.needs 2>/dev/null | sort -u | paste -sd, - |
    sed 's/,/, /g')
echo "$pass passed, $fail failed, $skip skipped${needs:+ (not here: $needs)}"
[ "$fail" -eq 0 ]
