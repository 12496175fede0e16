#!/usr/bin/env bash
# pg.sh <build dir> — what PostgreSQL costs against LMDB. The 10-node
# workflow (ten_nodes.yml, POST /v1/workflows/run blocking, the body run.sh
# uses) and a console read (GET /console/api/apps/{id}) through a real
# nginx, wrk -c BENCH_PG_CONNECTIONS (16) for BENCH_PG_DURATION (5s), on:
# LMDB (one process; the baseline), PostgreSQL with one process, and
# PostgreSQL with two processes (separate data directories) behind one
# upstream. PostgreSQL is a private server (tests/e2e/postgres.sh, fsync
# off: its flushes are not what this measures; storage.sync off on every
# side for the same reason). Prints runs/s and requests/s with their ratio
# to LMDB's; for PostgreSQL also the statements and round trips per run
# (pg_stat_statements, over the runs' wrk) and the CPU the server's
# processes and flowcgi's used during it, as a share of one core: on a
# machine of two cores, two hosts can only gain what the server leaves.
# Then two processes against one, and the CPU per run of flowcgi and of
# the server with the database's share of it (the server's CPU over
# both). Figures are reported, not asserted. Without PostgreSQL it says so and
# exits 0.
set -u
BUILD=$(cd "$1" && pwd)
FLOWCGI_BIN=$BUILD/flowcgi
DUR=${BENCH_PG_DURATION:-5s}
CONNS=${BENCH_PG_CONNECTIONS:-16}
. "$(dirname "$0")/../e2e/lib.sh"
ROOT_DIR=$T_DIR
NG_PIDS=
. "$(dirname "$0")/bench_lib.sh"
PGSH=$(dirname "$0")/../e2e/postgres.sh
trap 'rc=$?; sh "$PGSH" stop "$ROOT_DIR/pg"; bench_cleanup; exit $rc' EXIT
trap 'exit 1' INT TERM
for t in wrk nginx curl jq; do
	command -v "$t" >/dev/null 2>&1 || die "'$t' is not installed"
done
sh "$PGSH" start "$ROOT_DIR/pg" >"$ROOT_DIR/pg.out" 2>&1
case $? in
0) ;;
77) echo "postgres bench: skipped, $(head -1 "$ROOT_DIR/pg.out")"; exit 0 ;;
*) die "postgres did not start: $(cat "$ROOT_DIR/pg.out")" ;;
esac
PGURL=$(cat "$ROOT_DIR/pg/url")
PSQL="$(cat "$ROOT_DIR/pg/bin")/psql"
# pg_stat_statements (in Debian's server package) needs a restart to load
echo "shared_preload_libraries = 'pg_stat_statements'" >>"$(cat "$ROOT_DIR/pg/pgdata")/postgresql.conf"
sh "$PGSH" down "$ROOT_DIR/pg" && sh "$PGSH" up "$ROOT_DIR/pg" ||
    die "postgres did not restart"
STATS=1
"$PSQL" -qAt "$PGURL" -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' \
    >/dev/null 2>&1 || STATS=0
sql() { "$PSQL" -qAt "$PGURL" -c "$1"; }
# cpu_ticks <pid...>: user + system clock ticks of those processes
cpu_ticks() {
	local p t=0 f
	for p in "$@"; do
		f=$(cut -d')' -f2- "/proc/$p/stat" 2>/dev/null) || continue
		set -- $f
		t=$((t + ${12} + ${13}))
	done
	echo "$t"
}
pg_pids() { pgrep -P "$(head -1 "$(cat "$ROOT_DIR/pg/pgdata")/postmaster.pid")"; }
export FLOWCGI_STORAGE_SYNC=false
cat >"$ROOT_DIR/run.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"inputs":{"q":"hello"},"user":"bench","response_mode":"blocking"}'
wrk.headers["Content-Type"] = "application/json"
LUA

# side <name> <backend> <processes>: flowcgi processes on that backend
# behind one nginx; the ten-node app imported; sets BASE, KEY, ID, TOKEN.
# (start_flowcgi sets a global "name": this one is "side".)
side() {
	local side=$1 be=$2 n=$3 i keep ups=()
	SIDE_PIDS=
	for i in $(seq 1 "$n"); do
		mkdir -p "$ROOT_DIR/$side$i"
		[ "$i" -gt 1 ] && cp "$ROOT_DIR/${side}1/admin_token" \
		    "$ROOT_DIR/$side$i/"
		FC_DATA=$ROOT_DIR/$side$i FLOWCGI_STORAGE_BACKEND=$be \
		    FLOWCGI_STORAGE_POSTGRES_URL=$PGURL \
		    start_flowcgi "$side$i" || die "flowcgi $side$i did not start"
		SIDE_PIDS="$SIDE_PIDS $FC_PID"
		ups+=("127.0.0.1:$FC_PORT")
	done
	keep=$T_DIR	# nginx_side, with every upstream
	T_DIR=$ROOT_DIR/$side-side
	mkdir -p "$T_DIR"
	start_nginx "${ups[@]}" || die "nginx ($side) did not start"
	T_DIR=$keep
	NG_PIDS="$NG_PIDS $NGINX_PID"
	TOKEN=$(FC_DATA=$ROOT_DIR/${side}1 FLOWCGI_STORAGE_BACKEND=$be \
	    FLOWCGI_STORAGE_POSTGRES_URL=$PGURL admin_token)
	import_file "$(dirname "$0")/ten_nodes.yml"
	ID=$(jqr .app_id)
	[ -n "$ID" ] && [ "$ID" != null ] || die "import on $side: $BODY"
	req POST "/console/api/apps/$ID/api-keys"
	KEY=$(jqr .token)
}

# measure <name>: runs/s, then console reads/s, into R_<name>, C_<name>;
# on PostgreSQL statements and round trips per run into S_<name>, T_<name>
# and the CPU of the server and of flowcgi (cores) into PC_<name>, FC_<name>
measure() {
	local f=$ROOT_DIR/$1 fc0 pc0 fc1 pc1 t0 t1 pids
	[ "$STATS" = 1 ] && sql 'SELECT pg_stat_statements_reset()' >/dev/null
	pids=$(pg_pids)
	fc0=$(cpu_ticks $SIDE_PIDS); pc0=$(cpu_ticks $pids); t0=$(date +%s%N)
	wrk -t2 -c"$CONNS" -d"$DUR" -s "$ROOT_DIR/run.lua" \
	    -H "Authorization: Bearer $KEY" "$BASE/v1/workflows/run" >"$f.run" 2>&1 ||
	    die "wrk failed: $(cat "$f.run")"
	# the pool connects on demand: the server's processes at the end
	t1=$(date +%s%N); fc1=$(cpu_ticks $SIDE_PIDS); pc1=$(cpu_ticks $(pg_pids))
	grep -q 'Non-2xx' "$f.run" && die "$1 answered errors: $(grep Non-2xx "$f.run")"
	printf -v "FC_$1" '%s' "$(awk -v a="$fc0" -v b="$fc1" -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz / (t / 1e9) }')"
	printf -v "PC_$1" '%s' "$(awk -v a="$pc0" -v b="$pc1" -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz / (t / 1e9) }')"
	if [ "$STATS" = 1 ] && [ "$2" = pg ]; then
		# a write's BEGIN, puts and store_need checks (SELECT 1 / count)
		# ride in its COMMIT's round trip (the pipeline), a read's SELECT 1
		# in its BEGIN's, and its ROLLBACK is sent without waiting (its
		# answer is read with the next use)
		sql "SELECT query, calls FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC" >"$f.stmts"
		printf -v "S_$1" '%s' "$(awk -F'|' -v n="$(wrk_requests "$f.run")" '{ c += $NF } END { printf "%.1f", c / n }' "$f.stmts")"
		printf -v "T_$1" '%s' "$(awk -F'|' -v n="$(wrk_requests "$f.run")" '
			/^BEGIN ISOLATION LEVEL SERIALIZABLE/ || /^SELECT \$1\|/ || /^ROLLBACK\|/ || /DO UPDATE SET v = EXCLUDED.v/ || /^SELECT [^ ]+ \/ count\(\*\) FROM / { next }
			{ c += $NF } END { printf "%.1f", c / n }' "$f.stmts")"
	fi
	wrk -t2 -c"$CONNS" -d"$DUR" -H "Authorization: Bearer $TOKEN" \
	    "$BASE/console/api/apps/$ID" >"$f.read" 2>&1 ||
	    die "wrk failed: $(cat "$f.read")"
	grep -q 'Non-2xx' "$f.read" && die "$1 answered errors: $(grep Non-2xx "$f.read")"
	printf -v "R_$1" '%s' "$(wrk_rps "$f.run")"
	printf -v "C_$1" '%s' "$(wrk_rps "$f.read")"
}

BUSY=$(cpu_busy)
side lmdb lmdb 1; measure lmdb lmdb
side pg1 postgres 1; measure pg1 pg
side pg2 postgres 2; measure pg2 pg
echo "PostgreSQL against LMDB (wrk -c$CONNS -d$DUR each, storage.sync off; machine $(awk -v b="$BUSY" 'BEGIN { printf "%.0f%%", b * 100 }') busy before):"
for s in lmdb pg1 pg2; do
	r=R_$s; c=C_$s
	case $s in lmdb) l="LMDB, 1 process" ;; pg1) l="postgres, 1 process" ;;
	pg2) l="postgres, 2 processes, one upstream" ;; esac
	awk -v l="$l" -v r="${!r}" -v c="${!c}" -v br="$R_lmdb" -v bc="$C_lmdb" \
	    'BEGIN { printf "  %-38s %8.1f runs/s (%.2f)  %8.1f reads/s (%.2f)\n", l, r, r / br, c, c / bc }'
done
echo "During the runs (CPU in cores of $(nproc); per run on PostgreSQL: statements, round trips):"
for s in lmdb pg1 pg2; do
	p=PC_$s; f=FC_$s; st=S_$s; rt=T_$s
	if [ "$s" = lmdb ]; then
		printf '  %-38s flowcgi %s\n' "$s" "${!f}"
	else
		printf '  %-38s flowcgi %s  postgres %s  %s statements  %s round trips\n' \
		    "$s" "${!f}" "${!p}" "${!st:-?}" "${!rt:-?}"
	fi
done
# Two hosts against one, and what each run cost in CPU: the database's
# share is the server's processes' CPU over all the CPU the run took
# (flowcgi's and the server's; nginx and wrk are the same on every side)
awk -v r1="$R_pg1" -v r2="$R_pg2" -v c1="$C_pg1" -v c2="$C_pg2" \
    'BEGIN { printf "Two processes against one on PostgreSQL: %.2f runs/s, %.2f reads/s\n", r2 / r1, c2 / c1 }'
echo "CPU per run (ms; flowcgi + postgres) and the database's share of it:"
for s in lmdb pg1 pg2; do
	p=PC_$s; f=FC_$s; r=R_$s
	awk -v l="$s" -v f="${!f}" -v p="${!p}" -v r="${!r}" -v lm="$s" 'BEGIN {
		if (lm == "lmdb") p = 0
		printf "  %-38s %.3f + %.3f ms   database %.0f%%\n", l, f * 1000 / r, p * 1000 / r, (f + p > 0 ? 100 * p / (f + p) : 0) }'
done
[ -n "${KEEP:-}" ] && echo "statements of each side: $ROOT_DIR/*.stmts"
exit 0
