#!/bin/sh
# run-all.sh <build dir> — runs every test: unit tests, fuzz seed replays,
# end-to-end tests through nginx. Each test writes TAP to its own log; this
# prints one line per test and closes with "N passed, N failed" counted over
# every TAP result. Exits non-zero on any failure.
#
# TESTS="t_conf_load e2e_t_apps" limits the run to the named tests (shell
# patterns: TESTS='e2e_*' runs the end-to-end tests).
# Each test runs under timeout(1): TEST_TIMEOUT seconds (600; the sanitizer
# flavours are slower) and then it fails, with its whole process group
# (servers it started) killed; the slowest tests are listed at the end.
set -u
BUILD=$1
LOGS=$BUILD/test-logs
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
mkdir -p "$LOGS"
pass=0
fail=0
skip=0
failed_tests=""
times=$LOGS/.times
: >"$times"

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

run() {	# run <name> <command...>
	name=$1; shift
	want "$name" || return 0
	log=$LOGS/$name.log
	start=$(date +%s)
	timeout -k 10 "$TEST_TIMEOUT" "$@" >"$log" 2>&1
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
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + s))
	secs=$(( $(date +%s) - start ))
	echo "$secs $name" >>"$times"
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
		failed_tests="$failed_tests $name"
	fi
}

for t in "$BUILD"/tests/t_*; do
	[ -x "$t" ] || continue
	run "$(basename "$t")" "$t"
done

for r in "$BUILD"/replay/fuzz_*; do
	[ -x "$r" ] || continue
	n=$(basename "$r")
	run "replay_$n" "$r" "tests/fuzz/seeds/$n"
done

for t in tests/e2e/t_*.sh; do
	[ -f "$t" ] || continue
	run "e2e_$(basename "$t" .sh)" env FLOWCGI_BIN="$PWD/$BUILD/flowcgi" \
	    FLOWCGI_BUILD="$PWD/$BUILD" bash "$t"
done

if [ "$(wc -l <"$times")" -gt 1 ]; then
	printf 'slowest:'
	sort -rn "$times" | head -5 | while read -r s n; do
		printf ' %s %ds' "$n" "$s"; done
	echo
fi
[ -n "$failed_tests" ] && echo "failed:$failed_tests"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
