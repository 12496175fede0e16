#!/bin/sh
# deploy.sh <build dir> — `make bench`, the deployment part: the same CRUD
# read, GET /console/api/apps/{id} with the admin token, through each
# front that docs/deploy.md describes, with the contrib configuration
# files (as tests/e2e/t_deploy_*.sh use them):
#
#   nginx            contrib/nginx (site + TCP upstream) -> flowcgi serve
#   proxy_fcgi       Apache mod_proxy_fcgi -> the same flowcgi process
#   fcgid            Apache mod_fcgid, the .htaccess layout: Apache starts
#                    and reuses flowcgi.fcgi processes
#   cgi              Apache mod_cgid, the same layout: a process a request
#
# Each gets one wrk warm-up run, then BENCH_ROUNDS measured runs in turn
# (the order rotates every round); the table shows medians and the ratio of
# each to nginx. The figures are reported, not asserted. The exit status is
# non-zero only when something fails to run or answers anything but 2xx.
#
# Settings (environment): BENCH_WRK_THREADS (2), BENCH_CONNECTIONS (32),
# BENCH_DEPLOY_DURATION (5s), BENCH_WARMUP (3s), BENCH_DEPLOY_ROUNDS (1),
# BENCH_CGI_CONNECTIONS (8: mod_cgi forks a process per request; more
# connections only queue). KEEP=1 keeps the temporary directory.
# Raw wrk output and the table go to <build dir>/bench/deploy/.

if [ -z "${BASH_VERSION:-}" ]; then
	exec bash "$0" "$@"
fi

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 <build dir>" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
FLOWCGI_BIN=$BUILD/flowcgi
OUT=$BUILD/bench/deploy

WRK_THREADS=${BENCH_WRK_THREADS:-2}
CONNS=${BENCH_CONNECTIONS:-32}
CGI_CONNS=${BENCH_CGI_CONNECTIONS:-8}
DURATION=${BENCH_DEPLOY_DURATION:-5s}
WARMUP=${BENCH_WARMUP:-3s}
ROUNDS=${BENCH_DEPLOY_ROUNDS:-1}

die() {
	echo "bench (deploy): $*" >&2
	exit 1
}

[ -x "$FLOWCGI_BIN" ] || die "$FLOWCGI_BIN is missing"
for t in wrk nginx curl jq apache2; do
	command -v "$t" >/dev/null 2>&1 || die "'$t' is not installed"
done

# shellcheck source=../e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"
# shellcheck source=../tools/deploy_lib.sh
. "$TOP/tests/tools/deploy_lib.sh"
ap_have proxy proxy_fcgi fcgid cgid rewrite ||
    die "apache2 with proxy_fcgi, fcgid, cgid and rewrite is not installed"

ROOT_DIR=$T_DIR
cleanup() {
	deploy_cleanup
	[ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null
	for p in $FLOWCGI_PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "${KEEP:-}" ]; then
		echo "bench (deploy): logs in $ROOT_DIR"
	else
		rm -rf "$ROOT_DIR"
	fi
}
trap 'rc=$?; cleanup; exit $rc' EXIT
trap 'exit 1' INT TERM

rm -rf "$OUT"
mkdir -p "$OUT" || die "cannot create $OUT"

# ====== The fronts ======

# new_app <label> <base url>: creates an app through base with TOKEN;
# sets URL_<label> to its GET URL and TOKEN_<label>.
new_app() {
	BASE=$2
	req POST /console/api/apps -H 'Content-Type: application/json' \
	    -d '{"name":"bench","mode":"workflow","description":"make bench"}'
	[ "$STATUS" = 201 ] || die "$1: creating the app: HTTP $STATUS $BODY"
	printf -v "URL_$1" '%s' "$2/console/api/apps/$(jqr .id)"
	printf -v "TOKEN_$1" '%s' "$TOKEN"
}

FC_LOG_LEVEL=warn
export FLOWCGI_SERVER_WORKERS=16
must start_flowcgi flowcgi
TOKEN=$(admin_token)
FC_PID_MAIN=$FC_PID

# nginx, with the contrib site and upstream files
NG=$ROOT_DIR/ngx
NG_PORT=$(free_port)
mkdir -p "$NG/tmp"
cp /etc/nginx/fastcgi_params "$TOP/contrib/nginx/flowcgi_params" "$NG/"
sed "s|server 127.0.0.1:9000;|server 127.0.0.1:$FC_PORT;|" \
    "$TOP/contrib/nginx/flowcgi-upstream-tcp.conf" >"$NG/upstream.conf"
sed "s|listen 80;|listen 127.0.0.1:$NG_PORT;|" \
    "$TOP/contrib/nginx/flowcgi-site.conf" >"$NG/site.conf"
cat >"$NG/nginx.conf" <<NGX
worker_processes 2;
daemon off;
pid $NG/nginx.pid;
error_log $NG/error.log warn;
$( [ "$(id -u)" = 0 ] && echo "user root;" )
events { worker_connections 2048; }
http {
	access_log off;
	client_body_temp_path $NG/tmp/body;
	fastcgi_temp_path $NG/tmp/fastcgi;
	proxy_temp_path $NG/tmp/proxy;
	uwsgi_temp_path $NG/tmp/uwsgi;
	scgi_temp_path $NG/tmp/scgi;
	include upstream.conf;
	include site.conf;
}
NGX
nginx -p "$NG" -c "$NG/nginx.conf" >>"$NG/stdout.log" 2>&1 &
NGINX_PID=$!
wait_port "$NG_PORT" || die "nginx did not start: $(cat "$NG/error.log")"
new_app nginx "http://127.0.0.1:$NG_PORT"

# Apache mod_proxy_fcgi, to the same flowcgi
sed "s|^Define FLOWCGI_BACKEND .*|Define FLOWCGI_BACKEND \"fcgi://127.0.0.1:$FC_PORT\"|" \
    "$TOP/contrib/apache/flowcgi-proxy-fcgi.conf" >"$ROOT_DIR/proxy.conf"
AP_NO_ACCESS_LOG=1 must start_apache proxy "proxy proxy_fcgi" "$ROOT_DIR/proxy.conf"
new_app proxy_fcgi "$BASE/flow"

# Apache mod_fcgid and mod_cgid, the shared-hosting layout
for side in fcgid cgi; do
	W=$ROOT_DIR/$side
	ap_webroot "$W" 1
	mods="fcgid rewrite"
	[ "$side" = cgi ] && mods="cgid rewrite"
	AP_DOCROOT=$W/home/public_html AP_NO_ACCESS_LOG=1 \
	    must start_apache "$side" "$mods" "$W/site.conf"
	curl -s -o /dev/null "$BASE/flow/healthz"
	TOKEN=$(head -n1 "$W/home/flowcgi-data/admin_token" 2>/dev/null)
	[ -n "$TOKEN" ] || die "$side: no admin token in $W/home/flowcgi-data"
	new_app "$side" "$BASE/flow"
done

# ====== wrk ======

run_wrk() {	# run_wrk <side> <label> <duration>
	local side=$1 label=$2 dur=$3 url tok c f
	url=URL_$side; tok=TOKEN_$side
	c=$CONNS
	[ "$side" = cgi ] && c=$CGI_CONNS
	f=$OUT/$label-$side.txt
	wrk -t"$WRK_THREADS" -c"$c" -d"$dur" --latency \
	    -H "Authorization: Bearer ${!tok}" "${!url}" >"$f" 2>&1 ||
	    die "wrk failed against $side: $(cat "$f")"
	if grep -q 'Non-2xx or 3xx responses' "$f"; then
		die "$side answered errors under load: $(grep 'Non-2xx' "$f")"
	fi
	grep -q '^Requests/sec:' "$f" || die "no result from wrk: $(cat "$f")"
}
wrk_rps() { awk '$1 == "Requests/sec:" { print $2 }' "$1"; }
wrk_pct_ms() {	# wrk_pct_ms <file> <50%|99%>
	awk -v p="$2" '$1 == p {
		v = $2 + 0; u = $2; sub(/^[0-9.]+/, "", u)
		if (u == "us") v /= 1000; else if (u == "s") v *= 1000
		printf "%.3f\n", v }' "$1"
}
median() { sort -g | awk '{ v[NR] = $1 } END {
	if (NR == 0) print 0
	else if (NR % 2) print v[(NR + 1) / 2]
	else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

SIDES="nginx proxy_fcgi fcgid cgi"
echo "bench (deploy): $ROUNDS round(s) of wrk -t$WRK_THREADS -c$CONNS" \
    "(cgi: -c$CGI_CONNS) -d$DURATION after a $WARMUP warm-up"
for side in $SIDES; do run_wrk "$side" warmup "$WARMUP"; done
r=1
while [ "$r" -le "$ROUNDS" ]; do
	# rotate: round r starts with side r (mod 4)
	order=$(echo "$SIDES" | awk -v k=$(( (r - 1) % 4 )) '{
		for (i = 0; i < NF; i++) printf "%s ", $((i + k) % NF + 1) }')
	for side in $order; do
		run_wrk "$side" "round$r" "$DURATION"
		printf '  round %d %-11s %10.1f req/s  p99 %8.2f ms\n' "$r" "$side" \
		    "$(wrk_rps "$OUT/round$r-$side.txt")" \
		    "$(wrk_pct_ms "$OUT/round$r-$side.txt" 99%)"
	done
	r=$((r + 1))
done
kill -0 "$FC_PID_MAIN" 2>/dev/null || die "flowcgi died during the load"
FCGID_PROCS=$(pgrep -fc "$ROOT_DIR/fcgid/home/public_html/flow/flowcgi.fcgi")

med() {	# med <side> <figure function> [its argument]
	local f
	for f in "$OUT"/round*-"$1".txt; do "$2" "$f" ${3:+"$3"}; done | median
}
NG_RPS=$(med nginx wrk_rps)
{
	echo
	echo "GET /console/api/apps/{id} by deployment (median of $ROUNDS," \
	    "wrk -t$WRK_THREADS -c$CONNS -d$DURATION; cgi -c$CGI_CONNS)"
	echo
	printf '%-34s %12s %9s %11s %11s\n' "" "requests/s" "/ nginx" \
	    "p50" "p99"
	for side in $SIDES; do
		case $side in
		nginx) what="nginx -> flowcgi serve (TCP)" ;;
		proxy_fcgi) what="Apache mod_proxy_fcgi -> same" ;;
		fcgid) what="Apache mod_fcgid (.htaccess)" ;;
		cgi) what="Apache mod_cgid, process/request" ;;
		esac
		rps=$(med "$side" wrk_rps)
		awk -v w="$what" -v a="$rps" -v b="$NG_RPS" \
		    -v p5="$(med "$side" wrk_pct_ms 50%)" \
		    -v p9="$(med "$side" wrk_pct_ms 99%)" 'BEGIN {
			printf "%-34s %12.1f %9.3f %8.2f ms %8.2f ms\n", w, a,
			    (b > 0 ? a / b : 0), p5, p9 }'
	done
	echo
	echo "mod_fcgid kept $FCGID_PROCS flowcgi.fcgi processes after the load;" \
	    "a request that finds them all busy waits until mod_fcgid starts" \
	    "another, which is its p99"
	echo "raw wrk output: $OUT/"
} | tee "$OUT/summary.txt"
exit 0
