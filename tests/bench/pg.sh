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
# to LMDB's; figures are reported, not asserted. Without PostgreSQL it says
# so and exits 0.
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
	for i in $(seq 1 "$n"); do
		mkdir -p "$ROOT_DIR/$side$i"
		[ "$i" -gt 1 ] && cp "$ROOT_DIR/${side}1/admin_token" \
		    "$ROOT_DIR/$side$i/"
		FC_DATA=$ROOT_DIR/$side$i FLOWCGI_STORAGE_BACKEND=$be \
		    FLOWCGI_STORAGE_POSTGRES_URL=$PGURL \
		    start_flowcgi "$side$i" || die "flowcgi $side$i did not start"
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

# measure <name>: runs/s, then console reads/s, into R_<name>, C_<name>
measure() {
	local f=$ROOT_DIR/$1
	wrk -t2 -c"$CONNS" -d"$DUR" -s "$ROOT_DIR/run.lua" \
	    -H "Authorization: Bearer $KEY" "$BASE/v1/workflows/run" >"$f.run" 2>&1 ||
	    die "wrk failed: $(cat "$f.run")"
	grep -q 'Non-2xx' "$f.run" && die "$1 answered errors: $(grep Non-2xx "$f.run")"
	wrk -t2 -c"$CONNS" -d"$DUR" -H "Authorization: Bearer $TOKEN" \
	    "$BASE/console/api/apps/$ID" >"$f.read" 2>&1 ||
	    die "wrk failed: $(cat "$f.read")"
	grep -q 'Non-2xx' "$f.read" && die "$1 answered errors: $(grep Non-2xx "$f.read")"
	printf -v "R_$1" '%s' "$(wrk_rps "$f.run")"
	printf -v "C_$1" '%s' "$(wrk_rps "$f.read")"
}

BUSY=$(cpu_busy)
side lmdb lmdb 1; measure lmdb
side pg1 postgres 1; measure pg1
side pg2 postgres 2; measure pg2
echo "PostgreSQL against LMDB (wrk -c$CONNS -d$DUR each, storage.sync off; machine $(awk -v b="$BUSY" 'BEGIN { printf "%.0f%%", b * 100 }') busy before):"
for s in lmdb pg1 pg2; do
	r=R_$s; c=C_$s
	case $s in lmdb) l="LMDB, 1 process" ;; pg1) l="postgres, 1 process" ;;
	pg2) l="postgres, 2 processes, one upstream" ;; esac
	awk -v l="$l" -v r="${!r}" -v c="${!c}" -v br="$R_lmdb" -v bc="$C_lmdb" \
	    'BEGIN { printf "  %-38s %8.1f runs/s (%.2f)  %8.1f reads/s (%.2f)\n", l, r, r / br, c, c / bc }'
done
