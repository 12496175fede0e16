#!/usr/bin/env bash
# fsync.sh <build dir> — what durability costs a run and what group commit
# saves. The 10-node workflow (ten_nodes.yml, POST /v1/workflows/run
# blocking, through a real nginx, wrk with the body run.sh uses) runs
# against a fresh flowcgi per setting: storage.batch_max 1 (one transaction
# per write) and BENCH_FSYNC_BATCH (64, the default), each with storage.sync
# on and off, at 1 and BENCH_FSYNC_CONNECTIONS (32) connections, for
# BENCH_FSYNC_DURATION (5s) each, in BENCH_FSYNC_ROUNDS (3) rounds whose
# order alternates (forwards, backwards, ...) so that no setting always
# meets the same moment of a busy machine; the table shows medians. The
# baselines, measured in the same rounds, are the trivial FastCGI responder
# behind its own nginx: as the ratios were first taken (nginx opens a
# connection per request, "trivial") and with the keep-alive that flowcgi's
# nginx uses ("trivial-ka"; libfcgi's accept loop then ties a thread to each
# kept connection, so it is given BENCH_TRIVIAL_KA_THREADS, 64).
# BENCH_FSYNC_COUNTER (perf, strace, none) overrides how flushes are
# counted.
#
# Per setting: flushes of the flowcgi process per run (fdatasync, fsync and
# msync calls counted with perf's syscall tracepoints, or strace -c in a
# separate pass when perf cannot), runs/s and their ratio to the trivial
# responder's requests/s, and the bytes a run adds to the data file (used
# pages from mdb_stat -ef before and after, less free pages). Then
# tests/tools/store_bench: what a failing writer costs a batch with a rerun
# against nested transactions. Figures are reported, not asserted; the
# machine's load is printed with them. Exits non-zero only when something
# fails to run.
set -u
BUILD=$(cd "$1" && pwd)
FLOWCGI_BIN=$BUILD/flowcgi
TRIVIAL_BIN=$BUILD/tools/fcgi_trivial
DUR=${BENCH_FSYNC_DURATION:-5s}
ROUNDS=${BENCH_FSYNC_ROUNDS:-3}
CONNS=${BENCH_FSYNC_CONNECTIONS:-32}
BATCH=${BENCH_FSYNC_BATCH:-64}
THREADS=${BENCH_THREADS:-16}
. "$(dirname "$0")/bench_lib.sh"
for t in wrk nginx curl jq; do
	command -v "$t" >/dev/null 2>&1 || die "'$t' is not installed"
done
. "$(dirname "$0")/../e2e/lib.sh"
ROOT_DIR=$T_DIR
NG_PIDS=
TRIVIAL_PID=
COUNT_PID=
trap 'rc=$?; bench_cleanup $COUNT_PID; exit $rc' EXIT
trap 'exit 1' INT TERM
OUT=$ROOT_DIR/out
mkdir -p "$OUT"

# ====== Counting flushes ======

SYSCALLS="fdatasync fsync msync"
COUNTER=${BENCH_FSYNC_COUNTER:-}	# perf, strace or none; found out
if [ -n "$COUNTER" ]; then
	:
elif perf stat -x, -e syscalls:sys_enter_fdatasync -- true >/dev/null 2>&1
then
	COUNTER=perf
elif command -v strace >/dev/null 2>&1; then
	COUNTER=strace
else
	COUNTER=none
fi

# count_start <pid> <file>, count_stop <file>: the flush calls of a process
# (all its threads, also those started meanwhile) in between; count_stop
# prints their sum. Not in a subshell: it waits for the counter to write.
count_start() {
	case $COUNTER in
	perf)
		perf stat -x, -o "$2" -p "$1" -e "$(printf \
		    'syscalls:sys_enter_%s,' $SYSCALLS | sed 's/,$//')" &
		;;
	strace)
		strace -c -f -o "$2" -e "trace=$(echo $SYSCALLS |
		    tr ' ' ,)" -p "$1" &
		;;
	*)	return 0 ;;
	esac
	COUNT_PID=$!
	sleep 0.5	# attached before the load starts
}
count_stop() {
	[ -n "$COUNT_PID" ] || { echo 0; return; }
	kill -INT "$COUNT_PID"; wait "$COUNT_PID" 2>/dev/null
	COUNT_PID=
	case $COUNTER in
	perf)	awk -F, '$3 ~ /^syscalls:sys_enter_/ { n += $1 + 0 }
		    END { print n + 0 }' "$1" ;;
	strace)	# "% time seconds usecs/call calls [errors] syscall"
		awk -v want="$SYSCALLS" 'BEGIN { split(want, w, " ")
		    for (i in w) ok[w[i]] = 1 }
		    ok[$NF] { n += $4 }
		    END { print n + 0 }' "$1" ;;
	esac
}

# used_bytes <data dir>: bytes of data.mdb in use (pages used less free
# pages, by mdb_stat -ef), or its size on disk without mdb_stat.
used_bytes() {
	if command -v mdb_stat >/dev/null 2>&1; then
		mdb_stat -ef "$1" | awk '
		    /Page size:/ { ps = $3 }
		    /Number of pages used:/ { used = $5 }
		    /Free pages:/ { free = $3 }
		    END { print (used - free) * ps }'
	else
		du -B1 "$1/data.mdb" | cut -f1
	fi
}

# ====== Servers ======

cat >"$ROOT_DIR/run.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"inputs":{"q":"hello"},"user":"bench","response_mode":"blocking"}'
wrk.headers["Content-Type"] = "application/json"
LUA

# Per server: its URL, key, pid and data directory.
declare -A URL KEYS PIDS DATA

# setting <batch_max> <sync>: a fresh flowcgi with its own data directory
# and nginx, the ten-node app and its key.
setting() {
	local sv=b$1-$2	# not "name": start_flowcgi sets that
	FC_DATA=$ROOT_DIR/data-$sv
	mkdir -p "$FC_DATA"
	FLOWCGI_SERVER_WORKERS=$THREADS FLOWCGI_STORAGE_BATCH_MAX=$1 \
	    FLOWCGI_STORAGE_SYNC=$2 FC_LOG_LEVEL=warn \
	    start_flowcgi "fc-$sv" || die "flowcgi ($sv) did not start"
	nginx_side "$sv" "127.0.0.1:$FC_PORT"
	TOKEN=$(admin_token) || die "flowcgi token failed"
	import_app "$TOP/tests/bench/ten_nodes.yml"
	[ -n "$KEY" ] && [ "$KEY" != null ] ||
	    die "importing ten_nodes.yml: $BODY"
	URL[$sv]=$BASE/v1/workflows/run
	KEYS[$sv]=$KEY
	PIDS[$sv]=$FC_PID
	DATA[$sv]=$FC_DATA
	SERVERS="$SERVERS $sv"
}

# ====== Load ======

# load <server> <connections> <file> [count]: one wrk run into file; with
# count (and a flowcgi server), its flushes go to <file>.flush (perf) and
# the bytes it stored to <file>.bytes.
load() {
	local srv=$1 c=$2 f=$3 count=${4:-} t b0=0
	t=$(( c < 2 ? c : 2 ))
	case $srv in trivial*) count= ;; esac
	if [ -n "$count" ]; then
		b0=$(used_bytes "${DATA[$srv]}")
		[ "$COUNTER" = perf ] && count_start "${PIDS[$srv]}" "$f.count"
	fi
	wrk -t"$t" -c"$c" -d"$DUR" --latency -s "$ROOT_DIR/run.lua" \
	    -H "Authorization: Bearer ${KEYS[$srv]}" "${URL[$srv]}" \
	    >"$f" 2>&1 || die "wrk failed ($srv, $c): $(cat "$f")"
	grep -q 'Non-2xx or 3xx responses' "$f" &&
	    die "$srv: errors under load: $(grep 'Non-2xx' "$f")"
	grep -q '^Requests/sec:' "$f" || die "no result from wrk: $(cat "$f")"
	[ -n "$count" ] || return 0
	[ "$COUNTER" = perf ] && count_stop "$f.count" >"$f.flush"
	echo $(( $(used_bytes "${DATA[$srv]}") - b0 )) >"$f.bytes"
}

# ====== Run ======

BUSY=$(cpu_busy)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
FS=$(df -T "$ROOT_DIR" | awk 'NR == 2 { print $2 }')
start_trivial "$THREADS"
URL[trivial]=$TR_BASE/v1/workflows/run
KEYS[trivial]=none
start_trivial "${BENCH_TRIVIAL_KA_THREADS:-64}" 1
URL[trivial-ka]=$TR_BASE/v1/workflows/run
KEYS[trivial-ka]=none
SERVERS="trivial trivial-ka"
for bm in 1 "$BATCH"; do
	for sync in true false; do
		setting "$bm" "$sync"
	done
done
TARGETS=
for srv in $SERVERS; do
	DUR=2s load "$srv" "$CONNS" "$OUT/$srv-warm.txt"
	TARGETS="$TARGETS $srv:1 $srv:$CONNS"
done
r=1
while [ "$r" -le "$ROUNDS" ]; do
	order=$TARGETS
	[ $((r % 2)) = 0 ] && order=$(printf '%s\n' $TARGETS | tac)
	for tg in $order; do
		load "${tg%:*}" "${tg#*:}" "$OUT/${tg%:*}-c${tg#*:}-r$r.txt" 1
	done
	r=$((r + 1))
done
# strace slows the server down: it counts in passes of its own, after.
if [ "$COUNTER" = strace ]; then
	for tg in $TARGETS; do
		srv=${tg%:*}; c=${tg#*:}
		case $srv in trivial*) continue ;; esac
		f=$OUT/$srv-c$c-strace.txt
		count_start "${PIDS[$srv]}" "$f.count"
		load "$srv" "$c" "$f"
		count_stop "$f.count" >"$f.flush"
	done
fi
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
mkdir -p "$ROOT_DIR/sb"
SB=$("$BUILD/tools/store_bench" "$ROOT_DIR/sb" 32 100) ||
    die "store_bench failed"

# ====== Table ======

# med <server> <conns> <figure function>: the median over the rounds.
med() {
	for f in "$OUT/$1-c$2"-r*.txt; do "$3" "$f"; done | median
}
# per_run <server> <conns> <flush|bytes>: the sum over the counted runs
# divided by their runs.
per_run() {
	local f n=0 runs=0 pat='r*'
	if [ "$3" = flush ] && [ "$COUNTER" = strace ]; then
		pat=strace
	fi
	# shellcheck disable=SC2086
	for f in "$OUT/$1-c$2-"$pat.txt; do
		n=$((n + $(cat "$f.$3" 2>/dev/null || echo 0)))
		runs=$((runs + $(wrk_requests "$f")))
	done
	awk -v n="$n" -v r="$runs" \
	    'BEGIN { printf "%.2f\n", (r > 0 ? n / r : 0) }'
}
echo
echo "Durability: the 10-node workflow, blocking, through nginx; median of" \
    "$ROUNDS rounds of wrk -d$DUR; data on $FS"
printf '%-34s %11s %10s %9s %9s %10s %8s\n' "" "flushes/run" "runs/s" \
    "/ trivial" "/ triv-ka" "bytes/run" "p50 ms"
for c in 1 "$CONNS"; do
	tr=$(med trivial "$c" wrk_rps)
	trk=$(med trivial-ka "$c" wrk_rps)
	for srv in trivial trivial-ka; do
		awk -v rps="$(med "$srv" "$c" wrk_rps)" -v tr="$tr" \
		    -v trk="$trk" -v p50="$(med "$srv" "$c" wrk_p50_ms)" \
		    -v name="$srv, $c conn" 'BEGIN {
			printf "%-34s %11s %10.1f %9.3f %9.3f %10s %8.2f\n",
			    name, "", rps, (tr > 0 ? rps / tr : 0),
			    (trk > 0 ? rps / trk : 0), "", p50 }'
	done
	for srv in $SERVERS; do
		case $srv in trivial*) continue ;; esac
		fl=$(per_run "$srv" "$c" flush)
		[ "$COUNTER" = none ] && fl=n/a
		bm=${srv#b}; bm=${bm%-*}
		awk -v fl="$fl" -v rps="$(med "$srv" "$c" wrk_rps)" \
		    -v tr="$tr" -v trk="$trk" \
		    -v by="$(per_run "$srv" "$c" bytes)" \
		    -v p50="$(med "$srv" "$c" wrk_p50_ms)" \
		    -v name="batch_max $bm, sync ${srv##*-}, $c conn" 'BEGIN {
			printf "%-34s %11s %10.1f %9.3f %9.3f %10.0f %8.2f\n",
			    name, fl, rps, (tr > 0 ? rps / tr : 0),
			    (trk > 0 ? rps / trk : 0), by, p50 }'
	done
done
echo "flushes counted with: $COUNTER (fdatasync + fsync + msync calls:" \
    "with sync on, a commit's flush of its pages and the shared flushes" \
    "of meta pages after it; with batch_max 1 both are the writer's own)"
echo "load: $BUSY of $(getconf _NPROCESSORS_ONLN) CPUs busy before," \
    "load average $LOAD0 before, $LOAD1 after"
echo
echo "A failing writer in a batch (tests/tools/store_bench):"
printf '%s\n' "$SB" | sed 's/^/  /'
