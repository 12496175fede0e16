# bench_lib.sh — shared by the benches, sourced after tests/e2e/lib.sh: the
# trivial responder behind its own nginx, figures out of wrk's output,
# medians, and how busy the machine is. Expects ROOT_DIR (the bench's
# temporary directory) and NG_PIDS (nginx processes to stop at the end).

die() {
	echo "bench: $*" >&2
	exit 1
}

# bench_cleanup [pid...]: at exit, stops those, the nginx processes, the
# trivial responder and flowcgi, and removes ROOT_DIR (kept with KEEP=1).
bench_cleanup() {
	for p in "$@" $NG_PIDS ${TRIVIAL_PIDS:-} $FLOWCGI_PIDS; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if [ -n "${KEEP:-}" ]; then
		echo "bench: logs in $ROOT_DIR"
	else
		rm -rf "$ROOT_DIR"
	fi
}

# Anything else busy on the machine skews every side: the share of the CPUs
# busy during one second (0.00 to 1.00).
cpu_busy() {
	s0=$(head -1 /proc/stat); sleep 1; s1=$(head -1 /proc/stat)
	printf '%s\n%s\n' "$s0" "$s1" | awk '{
		idle = $5 + $6; tot = 0
		for (i = 2; i <= NF; i++) tot += $i
		if (NR == 1) { i0 = idle; t0 = tot } else { di = idle - i0; dt = tot - t0 }
	} END { printf "%.2f\n", (dt > 0 ? (dt - di) / dt : 0) }'
}

# nginx_side <name> <upstream>: a real nginx (tests/e2e/lib.sh's settings)
# with its prefix in $ROOT_DIR/<name>-side in front of upstream; sets
# NGINX_PID and BASE and adds the pid to NG_PIDS.
nginx_side() {
	local keep=$T_DIR
	T_DIR=$ROOT_DIR/$1-side
	mkdir -p "$T_DIR"
	start_nginx "$2" || die "nginx ($1) did not start"
	T_DIR=$keep
	NG_PIDS="$NG_PIDS $NGINX_PID"
}

# start_trivial <threads> [keepalive]: tests/tools/fcgi_trivial
# (TRIVIAL_BIN) with that many threads behind its own nginx; sets
# TRIVIAL_PID (also added to TRIVIAL_PIDS) and TR_BASE. Without keepalive
# (1) nginx opens a connection per request: libfcgi's accept loop holds a
# thread on each kept connection, so with nginx's keep-alive pool larger
# than its threads a request can wait on a connection nobody reads.
start_trivial() {
	local port
	port=$(free_port)
	"$TRIVIAL_BIN" "127.0.0.1:$port" "$1" >>"$ROOT_DIR/trivial.log" 2>&1 &
	TRIVIAL_PID=$!
	TRIVIAL_PIDS="${TRIVIAL_PIDS:-} $TRIVIAL_PID"
	wait_port "$port" ||
	    die "fcgi_trivial did not start: $(cat "$ROOT_DIR/trivial.log")"
	if [ "${2:-0}" = 0 ]; then
		NGINX_KEEPALIVE=0 nginx_side trivial "127.0.0.1:$port"
	else
		nginx_side trivial-ka "127.0.0.1:$port"
	fi
	TR_BASE=$BASE
}

# wrk_rps <file>, wrk_requests <file>, wrk_p50_ms <file>, wrk_p99_ms
# <file>: one figure of a wrk output.
wrk_rps() { awk '$1 == "Requests/sec:" { print $2 }' "$1"; }
wrk_requests() { awk '/ requests in / { print $1 }' "$1"; }
wrk_pct_ms() {	# wrk_pct_ms <file> <50%|99%>
	awk -v p="$2" '$1 == p {
		v = $2 + 0; u = $2; sub(/^[0-9.]+/, "", u)
		if (u == "us") v /= 1000; else if (u == "s") v *= 1000
		else if (u == "m") v *= 60000
		printf "%.3f\n", v }' "$1"
}
wrk_p50_ms() { wrk_pct_ms "$1" 50%; }
wrk_p99_ms() { wrk_pct_ms "$1" 99%; }

median() { sort -g | awk '{ v[NR] = $1 } END {
	if (NR == 0) print 0
	else if (NR % 2) print v[(NR + 1) / 2]
	else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
