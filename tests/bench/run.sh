#!/bin/sh
# run.sh <build dir> — `make bench`: flowcgi against a trivial FastCGI
# responder built from the same libfcgi, each behind its own real nginx with
# the same settings (tests/e2e/lib.sh, contrib/nginx/flowcgi_params).
#
# Both get the same request, GET /console/api/apps/{id} with the admin token,
# from wrk with the same -t/-c/-d. After one warm-up run each, the measured
# runs alternate A B / B A / A B ... so that neither side always goes first;
# the table shows the median over the rounds. flowcgi's memory comes from
# /proc/<pid>/status (VmRSS idle after start and after the load, VmHWM), its
# CPU time per request from /proc/<pid>/stat.
#
# The figures are reported, not asserted (targets: flowcgi/trivial
# requests/s >= 0.80, memory under 20 MB). The exit status is non-zero only
# when something fails to run or a run answers anything but 2xx.
#
# Settings (environment): BENCH_THREADS (FastCGI worker threads of both
# servers: the trivial responder's pool, flowcgi's server.workers kept
# ready; default 16), BENCH_WRK_THREADS
# (2), BENCH_CONNECTIONS (32), BENCH_DURATION (10s), BENCH_WARMUP (3s),
# BENCH_ROUNDS (3). KEEP=1 keeps the temporary directory with the logs.
# Raw wrk output and the table go to <build dir>/bench/.

# lib.sh is bash; `make bench` runs us with sh.
if [ -z "${BASH_VERSION:-}" ]; then
	exec bash "$0" "$@"
fi

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 <build dir>" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
FLOWCGI_BIN=$BUILD/flowcgi
TRIVIAL_BIN=$BUILD/tools/fcgi_trivial
OUT=$BUILD/bench

THREADS=${BENCH_THREADS:-16}
WRK_THREADS=${BENCH_WRK_THREADS:-2}
CONNS=${BENCH_CONNECTIONS:-32}
DURATION=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-3s}
ROUNDS=${BENCH_ROUNDS:-3}

# shellcheck source=bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
for b in "$FLOWCGI_BIN" "$TRIVIAL_BIN"; do
	[ -x "$b" ] || die "$b is missing (make FLAVOUR=... bench builds it)"
done
for t in wrk nginx curl jq; do
	command -v "$t" >/dev/null 2>&1 || die "'$t' is not installed"
done

# shellcheck source=../e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"

# lib.sh's EXIT trap prints a TAP plan; a bench has none. Its T_DIR holds
# both servers' logs and one nginx prefix per side.
ROOT_DIR=$T_DIR
NG_PIDS=
TRIVIAL_PID=
# shellcheck disable=SC2154
trap 'rc=$?; bench_cleanup; exit $rc' EXIT
trap 'exit 1' INT TERM

rm -rf "$OUT"
mkdir -p "$OUT" || die "cannot create $OUT"
# Anything else busy on the machine skews both sides: say so in the table.
BUSY_BEFORE=$(cpu_busy)
NCPU=$(getconf _NPROCESSORS_ONLN)

# ====== /proc ======

# proc_kb <pid> <field>: a "kB" field of /proc/<pid>/status, e.g. VmRSS.
proc_kb() {
	awk -v f="$2:" '$1 == f { print $2; found = 1 }
	    END { if (!found) print 0 }' "/proc/$1/status"
}

# proc_cpu_ticks <pid>: utime + stime of the whole process, in clock ticks.
proc_cpu_ticks() {
	stat=$(cat "/proc/$1/stat")
	# shellcheck disable=SC2086
	set -- ${stat##*\) }	# fields from 3 on; field 14 is now $12
	echo $(( ${12} + ${13} ))
}

mb() { awk -v k="$1" 'BEGIN { printf "%.1f MB", k / 1024 }'; }

# ====== Servers ======

export FLOWCGI_SERVER_WORKERS=$THREADS
# shellcheck disable=SC2034
FC_LOG_LEVEL=warn	# read by start_flowcgi
start_flowcgi flowcgi || die "flowcgi did not start"
FLOWCGI_PID=$FC_PID
sleep 0.5	# let the workers settle before the idle figure
IDLE_RSS=$(proc_kb "$FLOWCGI_PID" VmRSS)
IDLE_ANON=$(proc_kb "$FLOWCGI_PID" RssAnon)

# One nginx prefix per side, the same settings on both: no keep-alive to
# the upstream, which libfcgi's accept loop cannot take (fsync.sh measures
# flowcgi with it against the trivial responder with and without it).
NGINX_KEEPALIVE=0 nginx_side flowcgi "127.0.0.1:$FC_PORT"
FC_BASE=$BASE
start_trivial "$THREADS"

# ====== The app and the URLs ======

TOKEN=$(admin_token) || die "flowcgi token failed"
BASE=$FC_BASE
req POST /console/api/apps -H 'Content-Type: application/json' \
    -d '{"name":"bench","mode":"workflow","description":"make bench"}'
[ "$STATUS" = 201 ] || die "creating the app: HTTP $STATUS $BODY"
APP_ID=$(jqr .id)
[ -n "$APP_ID" ] || die "no id in $BODY"
APP_PATH=/console/api/apps/$APP_ID

req GET "$APP_PATH"
[ "$STATUS" = 200 ] || die "flowcgi: GET $APP_PATH: HTTP $STATUS $BODY"
FC_BYTES=$(printf '%s' "$BODY" | wc -c)
BASE=$TR_BASE
req GET "$APP_PATH"
[ "$STATUS" = 200 ] || die "fcgi_trivial: GET $APP_PATH: HTTP $STATUS"
TR_BYTES=$(printf '%s' "$BODY" | wc -c)

# ====== wrk ======

# run_wrk <side> <label> <duration>: one wrk run written to
# $OUT/<label>-<side>.txt; adds the process's CPU ticks to the file.
run_wrk() {
	side=$1; label=$2; dur=$3
	case $side in
	flowcgi) url=$FC_BASE$APP_PATH; pid=$FLOWCGI_PID ;;
	trivial) url=$TR_BASE$APP_PATH; pid=$TRIVIAL_PID ;;
	esac
	f=$OUT/$label-$side.txt
	c0=$(proc_cpu_ticks "$pid")
	wrk -t"$WRK_THREADS" -c"$CONNS" -d"$dur" --latency \
	    -H "Authorization: Bearer $TOKEN" "$url" >"$f" 2>&1 ||
	    die "wrk failed against $side: $(cat "$f")"
	c1=$(proc_cpu_ticks "$pid")
	echo "server cpu ticks: $((c1 - c0)) (of $(getconf CLK_TCK)/s)" >>"$f"
	if grep -q 'Non-2xx or 3xx responses' "$f"; then
		die "$side answered errors under load: $(grep 'Non-2xx' "$f")"
	fi
	grep -q '^Requests/sec:' "$f" || die "no result from wrk: $(cat "$f")"
}

# wrk_cpu_us <file>: server CPU per request (wrk_rps, wrk_p99_ms: in
# bench_lib.sh).
wrk_cpu_us() {
	awk -v hz="$(getconf CLK_TCK)" '
	    / requests in / { n = $1 }
	    $1 == "server" && $2 == "cpu" { t = $4 }
	    END { if (n > 0) printf "%.1f\n", t / hz * 1e6 / n; else print 0 }' "$1"
}
wrk_errors() {
	awk '$1 == "Socket" { sub(/^ */, ""); print }' "$1"
}

echo "bench: $ROUNDS rounds of wrk -t$WRK_THREADS -c$CONNS -d$DURATION" \
    "--latency after a $WARMUP warm-up, $THREADS FastCGI threads each"
run_wrk flowcgi warmup "$WARMUP"
run_wrk trivial warmup "$WARMUP"

r=1
while [ "$r" -le "$ROUNDS" ]; do
	if [ $((r % 2)) = 1 ]; then order="flowcgi trivial"; else
		order="trivial flowcgi"; fi
	for side in $order; do
		run_wrk "$side" "round$r" "$DURATION"
		f=$OUT/round$r-$side.txt
		printf '  round %d %-8s %10.1f req/s  p99 %8.2f ms  %7.1f us CPU/req %s\n' \
		    "$r" "$side" "$(wrk_rps "$f")" "$(wrk_p99_ms "$f")" \
		    "$(wrk_cpu_us "$f")" "$(wrk_errors "$f")"
	done
	r=$((r + 1))
done

END_RSS=$(proc_kb "$FLOWCGI_PID" VmRSS)
END_HWM=$(proc_kb "$FLOWCGI_PID" VmHWM)
END_ANON=$(proc_kb "$FLOWCGI_PID" RssAnon)
END_FILE=$(proc_kb "$FLOWCGI_PID" RssFile)
TR_HWM=$(proc_kb "$TRIVIAL_PID" VmHWM)
kill -0 "$FLOWCGI_PID" 2>/dev/null || die "flowcgi died during the load"

# ====== Table ======

med() {	# med <side> <figure function>
	for f in "$OUT"/round*-"$1".txt; do "$2" "$f"; done | median
}
FC_RPS=$(med flowcgi wrk_rps)
TR_RPS=$(med trivial wrk_rps)
FC_P99=$(med flowcgi wrk_p99_ms)
TR_P99=$(med trivial wrk_p99_ms)
FC_CPU=$(med flowcgi wrk_cpu_us)
TR_CPU=$(med trivial wrk_cpu_us)

{
	echo
	echo "GET /console/api/apps/{id} through nginx (median of $ROUNDS" \
	    "rounds, wrk -t$WRK_THREADS -c$CONNS -d$DURATION)"
	echo
	printf '%-22s %12s %12s %14s %8s\n' "" "requests/s" "p99 latency" \
	    "server CPU/req" "body"
	printf '%-22s %12.1f %9.2f ms %11.1f us %6d B\n' "flowcgi" \
	    "$FC_RPS" "$FC_P99" "$FC_CPU" "$FC_BYTES"
	printf '%-22s %12.1f %9.2f ms %11.1f us %6d B\n' "trivial responder" \
	    "$TR_RPS" "$TR_P99" "$TR_CPU" "$TR_BYTES"
	awk -v a="$FC_RPS" -v b="$TR_RPS" -v c="$FC_P99" -v d="$TR_P99" \
	    -v e="$FC_CPU" -v g="$TR_CPU" 'BEGIN {
		printf "%-22s %12.2f %12.2f %14.2f\n", "flowcgi / trivial",
		    (b > 0 ? a / b : 0), (d > 0 ? c / d : 0),
		    (g > 0 ? e / g : 0)
		printf "%-22s %12s %12s\n", "  target", ">= 0.80", "(reported)"
	}'
	echo
	printf 'flowcgi memory (target < 20 MB): VmRSS %s idle after start' \
	    "$(mb "$IDLE_RSS")"
	printf ' (RssAnon %s),\n' "$(mb "$IDLE_ANON")"
	printf '  %s after the load (RssAnon %s, RssFile %s), VmHWM %s\n' \
	    "$(mb "$END_RSS")" "$(mb "$END_ANON")" "$(mb "$END_FILE")" \
	    "$(mb "$END_HWM")"
	printf 'trivial responder VmHWM: %s\n' "$(mb "$TR_HWM")"
	echo "raw wrk output: $OUT/"
	awk -v b="$BUSY_BEFORE" -v n="$NCPU" 'BEGIN { if (b + 0 >= 0.10)
	    printf "note: %.0f%% of the %d CPUs were busy before the bench " \
	    "started; other load makes the figures noisy\n", b * 100, n }'
} | tee "$OUT/summary.txt"

# ====== A 10-node workflow run, blocking, through nginx ======

BASE=$FC_BASE
jq -n --rawfile y "$(dirname "$0")/ten_nodes.yml" \
    '{mode: "yaml-content", yaml_content: $y}' >"$ROOT_DIR/imp.json"
req POST /console/api/apps/imports -H 'Content-Type: application/json' \
    --data-binary @"$ROOT_DIR/imp.json"
WF_ID=$(jqr .app_id)
[ -n "$WF_ID" ] && [ "$WF_ID" != null ] || die "importing ten_nodes.yml: $BODY"
req POST "/console/api/apps/$WF_ID/api-keys"
KEY=$(jqr .token)
cat >"$ROOT_DIR/run.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"inputs":{"q":"hello"},"user":"bench","response_mode":"blocking"}'
wrk.headers["Content-Type"] = "application/json"
LUA
run_post() {	# run_post <side> <label>
	side=$1; label=$2
	case $side in
	flowcgi) url=$FC_BASE/v1/workflows/run ;;
	trivial) url=$TR_BASE/v1/workflows/run ;;
	esac
	f=$OUT/$label-$side.txt
	wrk -t"$WRK_THREADS" -c"$CONNS" -d"$DURATION" --latency -s \
	    "$ROOT_DIR/run.lua" -H "Authorization: Bearer $KEY" "$url" \
	    >"$f" 2>&1 || die "wrk (run) failed against $side: $(cat "$f")"
	grep -q 'Non-2xx or 3xx responses' "$f" &&
	    die "$side answered errors under load: $(grep 'Non-2xx' "$f")"
	wrk_rps "$f" >/dev/null
}
run_post flowcgi runwarm
run_post flowcgi run1
run_post trivial run1
WF_RPS=$(wrk_rps "$OUT/run1-flowcgi.txt")
RT_RPS=$(wrk_rps "$OUT/run1-trivial.txt")
ENGINE_LINE=$(mkdir -p "$ROOT_DIR/eng" && \
    "$BUILD/tools/engine_bench" nodes "$ROOT_DIR/eng" 300)
CORPUS=${FLOWCGI_CORPUS:-$(dirname "$0")/../../../shared/dsl-corpus/files}
DSL_LINE=$(mkdir -p "$ROOT_DIR/dsl" && \
    "$BUILD/tools/engine_bench" corpus "$ROOT_DIR/dsl" "$CORPUS")
# pruning run history beside runs that write (tests/tools/prune_bench.c)
PRUNE_LINE=$(mkdir -p "$ROOT_DIR/prune" && \
    "$BUILD/tools/prune_bench" "$ROOT_DIR/prune" 20000)
SBX_LINE=$("$BUILD/tools/sandbox_bench" 2>&1 | tail -4)
E2B_LINE=$(cd "$(dirname "$0")/../.." && "$BUILD/tools/sandbox_e2b_bench" 200 2>&1 | tail -5)
# The ssh provider against a real sshd on loopback: the provider's test
# starts one and measures exec through the provider against a raw ssh over
# the same ControlMaster (its "# bench:" lines).
SSH_LINE=$("$BUILD/tests/t_sandbox_ssh" 2>&1 | sed -n 's/^# bench: //p' | awk -F': ' '
	{ v[$1] = $2 + 0; print "  " $0 }
	END { if (v["raw ssh -S true"] > 0) printf "  ssh exec / raw ssh over the same ControlMaster: %.2f\n", v["ssh exec true"] / v["raw ssh -S true"] }')
# The docker provider against a private dockerd: the provider's test starts
# one and measures exec through the provider against `docker exec` run by
# hand in the same container (its "# bench:" lines).
DOCKER_LINE=$(cd "$(dirname "$0")/../.." &&
    "$BUILD/tests/t_sandbox_conformance_docker" 2>&1 | sed -n 's/^# bench: //p' | awk -F': ' '
	{ v[$1] = $2 + 0; print "  " $0 }
	END { if (v["docker CLI exec true"] > 0) printf "  docker exec / docker CLI exec in the same container: %.2f\n", v["docker exec true"] / v["docker CLI exec true"] }')
[ -n "$DOCKER_LINE" ] ||
    DOCKER_LINE="  no figures: its test printed none (no private dockerd here?)"

# ====== 10 MB through flowcgi's file API vs nginx on its own ======

head -c 10485760 /dev/urandom >"$ROOT_DIR/ten.bin"
mkdir -p "$ROOT_DIR/static" && cp "$ROOT_DIR/ten.bin" "$ROOT_DIR/static/"
S_PORT=$(free_port)
mkdir -p "$ROOT_DIR/snginx/tmp"
cat >"$ROOT_DIR/snginx/nginx.conf" <<NGX
worker_processes 1;
daemon off;
pid $ROOT_DIR/snginx/nginx.pid;
error_log $ROOT_DIR/snginx/error.log warn;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path $ROOT_DIR/snginx/tmp;
	client_max_body_size 64m;
	server {
		listen 127.0.0.1:$S_PORT;
		location /static/ { root $ROOT_DIR; }
		location = /sink { client_body_in_single_buffer on;
			client_body_buffer_size 16m; proxy_pass http://127.0.0.1:$S_PORT/ok; }
		location = /ok { return 204; }
	}
}
NGX
nginx -p "$ROOT_DIR/snginx" -c "$ROOT_DIR/snginx/nginx.conf" >/dev/null 2>&1 &
NG_PIDS="$NG_PIDS $!"
wait_port "$S_PORT" || die "static nginx did not start"
req POST /console/api/apps -H 'Content-Type: application/json' \
    -d '{"name":"files","mode":"workflow"}'
F_APP=$(jqr .id)
time_curl() {	# time_curl <n> <curl args...>: median seconds of n transfers
	n=$1; shift
	i=0
	while [ $i -lt "$n" ]; do
		curl -s -o /dev/null -w '%{time_total}\n' "$@"
		i=$((i + 1))
	done | median
}
UP_FC=$(time_curl 5 -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/octet-stream' --data-binary @"$ROOT_DIR/ten.bin" \
    "$FC_BASE/console/api/apps/$F_APP/assets/files?name=ten.bin&replace=1")
req GET "/console/api/apps/$F_APP/assets/tree"
F_NODE=$(jqr '.children[0].id')
DOWN_FC=$(time_curl 5 -H "Authorization: Bearer $TOKEN" \
    "$FC_BASE/console/api/apps/$F_APP/assets/files/$F_NODE/download")
UP_NG=$(time_curl 5 --data-binary @"$ROOT_DIR/ten.bin" "http://127.0.0.1:$S_PORT/sink")
DOWN_NG=$(time_curl 5 "http://127.0.0.1:$S_PORT/static/ten.bin")

{
	echo
	echo "10-node workflow (no code, no model), POST /v1/workflows/run blocking, wrk -c$CONNS -d$DURATION"
	printf '%-22s %12.1f runs/s  p50 %8.2f ms  p99 %8.2f ms\n' "flowcgi" \
	    "$WF_RPS" "$(wrk_p50_ms "$OUT/run1-flowcgi.txt")" \
	    "$(wrk_p99_ms "$OUT/run1-flowcgi.txt")"
	printf '%-22s %12.1f req/s   p50 %8.2f ms  p99 %8.2f ms\n' \
	    "trivial responder" "$RT_RPS" "$(wrk_p50_ms "$OUT/run1-trivial.txt")" \
	    "$(wrk_p99_ms "$OUT/run1-trivial.txt")"
	awk -v a="$WF_RPS" -v b="$RT_RPS" 'BEGIN { printf "%-22s %12.3f  (storage.sync on; flushes: the durability table)\n", "flowcgi / trivial", (b > 0 ? a / b : 0) }'
	echo "$ENGINE_LINE  (target: under 50 us per node)"
	echo "$DSL_LINE"
	echo "$PRUNE_LINE"
	echo "$SBX_LINE"
	echo "e2b provider against the fake E2B (per run):"
	echo "$E2B_LINE"
	echo "ssh provider against a real sshd on loopback (mean of 20 execs, 10 creates):"
	echo "$SSH_LINE"
	echo "docker provider against a private dockerd (mean of 20 execs, 5 creates):"
	echo "$DOCKER_LINE"
	echo
	echo "10 MB file, median of 5 (curl time_total)"
	awk -v a="$UP_FC" -v b="$UP_NG" 'BEGIN { printf "  upload:   flowcgi %.3f s, nginx alone %.3f s, ratio %.2f\n", a, b, (b > 0 ? a / b : 0) }'
	awk -v a="$DOWN_FC" -v b="$DOWN_NG" 'BEGIN { printf "  download: flowcgi %.3f s, nginx static %.3f s, ratio %.2f\n", a, b, (b > 0 ? a / b : 0) }'
} | tee -a "$OUT/summary.txt"
# ====== Durability: flushes per run, group commit ======
bash "$(dirname "$0")/fsync.sh" "$BUILD" | tee -a "$OUT/summary.txt" ||
    die "the fsync bench failed"
# ====== Code nodes: the warm runner pool off and on ======
sh "$(dirname "$0")/code.sh" "$BUILD" | tee -a "$OUT/summary.txt" ||
    die "the code node bench failed"

# ====== Streaming from a model ======
bash "$(dirname "$0")/llm.sh" "$BUILD" | tee -a "$OUT/summary.txt" ||
    die "the streaming bench failed"

# ====== The Web App: a chat turn against the service API's ======
bash "$(dirname "$0")/webapp.sh" "$BUILD" | tee -a "$OUT/summary.txt" ||
    die "the web app bench failed"

# ====== A run's event log (GET /api/workflow/{task_id}/events) ======
bash "$(dirname "$0")/events.sh" "$BUILD" | tee -a "$OUT/summary.txt" ||
    die "the event log bench failed"

# ====== Knowledge bases: indexing and retrieval ======
bash "$(dirname "$0")/knowledge.sh" "$BUILD" | tee -a "$OUT/summary.txt" ||
    die "the knowledge bench failed"

# ====== Many simultaneous runs and idle sockets ======
bash "$(dirname "$0")/concurrency.sh" "$BUILD" | tee -a "$OUT/summary.txt" ||
    die "the concurrency bench failed"

# ====== PostgreSQL against LMDB ======
bash "$(dirname "$0")/pg.sh" "$BUILD" | tee -a "$OUT/summary.txt" ||
    die "the postgres bench failed"

# ====== Documents: the PDF reader against pdftotext ======
sh "$(dirname "$0")/documents.sh" "$BUILD" | tee -a "$OUT/summary.txt" ||
    die "the documents bench failed"

# ====== Metrics and tracing on against off ======
bash "$(dirname "$0")/observe.sh" "$BUILD" | tee -a "$OUT/summary.txt" ||
    die "the metrics and tracing bench failed"

# ====== Web servers side by side: nginx, Apache mod_proxy_fcgi, mod_fcgid,
# CGI ======
bash "$(dirname "$0")/deploy.sh" "$BUILD" || die "the deployment bench failed"
exit 0
