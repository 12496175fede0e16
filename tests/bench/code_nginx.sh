#!/usr/bin/env bash
# code_nginx.sh <build dir> — `make bench` (through code.sh): one-code-node
# workflow runs per second through nginx, POST /v1/workflows/run blocking
# from wrk with BENCH_CODE_CLIENTS (8) connections for BENCH_CODE_DURATION
# (5s) after a 2 s warm-up, python3 and javascript, each in a fresh
# flowcgi with the default pool (fork servers), then with the one-shot
# pool (code.fork_server false) and with no pool at all (code.pool_size
# 0, every node cold) as the baselines of the same command (javascript
# with code.fork_server_javascript on for the fork server row). storage.sync
# is off, so that the figures are the code node's and not the disk's.
# Reported, not asserted (target: 300 runs/s for python3 on 2 cores).
set -u
BUILD=$(cd "$1" && pwd)
FLOWCGI_BIN=$BUILD/flowcgi
for t in wrk nginx bwrap /usr/bin/python3 /usr/bin/node; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "code nodes through nginx skipped: $t is not installed"
		exit 0
	fi
done
. "$(dirname "$0")/../e2e/lib.sh"
trap 'for p in $FLOWCGI_PIDS $NGINX_PID; do kill $p 2>/dev/null; done; wait 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T_DIR"' EXIT
CLIENTS=${BENCH_CODE_CLIENTS:-8}
DURATION=${BENCH_CODE_DURATION:-5s}
WRK_T=$((CLIENTS < 2 ? 1 : 2))

# serve <code.pool_size> <code.fork_server>: (re)starts flowcgi on FC_PORT,
# where nginx passes requests, with a fresh data directory (FC_DATA).
serve() {
	if [ -n "${FC_PID:-}" ]; then
		kill "$FC_PID"; wait "$FC_PID" 2>/dev/null
	fi
	SERVES=$((${SERVES:-0} + 1))
	FC_DATA=$T_DIR/data$SERVES
	FLOWCGI_CODE_POOL_SIZE=$1 FLOWCGI_CODE_FORK_SERVER=$2 \
	    FLOWCGI_CODE_FORK_SERVER_JAVASCRIPT=$2 \
	    FLOWCGI_STORAGE_SYNC=false \
	    FLOWCGI_SERVER_DATA_DIR="$FC_DATA" FLOWCGI_LOG_LEVEL=warn \
	    "$FLOWCGI_BIN" serve --listen "127.0.0.1:$FC_PORT" \
	    >>"$T_DIR/fc.log" 2>&1 &
	FC_PID=$!
	FLOWCGI_PIDS="$FLOWCGI_PIDS $FC_PID"
	wait_port "$FC_PORT"
}

# app <language>: the start -> code -> end app; sets KEY.
app() {
	local code
	if [ "$1" = python3 ]; then
		code='def main(a):\n    return {"r": a + 1}\n'
	else
		code='function main({a}) {\n  return {r: a + 1};\n}\n'
	fi
	cat >"$T_DIR/code.yml" <<YML
version: 0.6.0
kind: app
app: {name: code, mode: workflow}
workflow:
  features: {}
  graph:
    nodes:
    - id: s
      data: {type: start, title: S, variables: [{variable: a, type: number, label: a}]}
    - id: c
      data:
        type: code
        title: C
        code_language: $1
        code: "$(printf '%s' "$code" | sed 's/"/\\"/g')"
        variables: [{variable: a, value_selector: [s, a]}]
        outputs: {r: {type: number}}
    - id: e
      data: {type: end, title: E, outputs: [{variable: r, value_selector: [c, r]}]}
    edges:
    - {id: x, source: s, target: c}
    - {id: y, source: c, target: e}
YML
	TOKEN=$(admin_token)
	import_app "$T_DIR/code.yml"
}

cat >"$T_DIR/run.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"inputs":{"a":1},"user":"bench","response_mode":"blocking"}'
wrk.headers["Content-Type"] = "application/json"
response = function(status, headers, body)
	if status ~= 200 or not string.find(body, '"succeeded"', 1, true) then
		io.stderr:write("bad answer: " .. status .. " " .. body .. "\n")
	end
end
LUA

# measure <language> <pool size> <fork>: sets RES to "runs/s p50 p99" (ms).
# Not in a subshell: serve's FC_PID and FLOWCGI_PIDS must stay ours.
measure() {
	local f=$T_DIR/wrk.txt
	serve "$2" "$3" || return 1
	app "$1"
	[ -n "$KEY" ] && [ "$KEY" != null ] || { echo "import failed: $BODY" >&2; return 1; }
	wrk -t"$WRK_T" -c"$CLIENTS" -d2s -s "$T_DIR/run.lua" \
	    -H "Authorization: Bearer $KEY" "$BASE/v1/workflows/run" \
	    >/dev/null 2>"$T_DIR/wrk.err"
	wrk -t"$WRK_T" -c"$CLIENTS" -d"$DURATION" --latency -s "$T_DIR/run.lua" \
	    -H "Authorization: Bearer $KEY" "$BASE/v1/workflows/run" \
	    >"$f" 2>>"$T_DIR/wrk.err" || return 1
	if [ -s "$T_DIR/wrk.err" ] || grep -q 'Non-2xx' "$f"; then
		echo "code nodes through nginx: errors under load:" >&2
		sort "$T_DIR/wrk.err" | uniq -c | head -5 >&2
		return 1
	fi
	RES=$(awk '$1 == "Requests/sec:" { r = $2 }
	    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
	    $1 == "50%" { p50 = ms($2) } $1 == "99%" { p99 = ms($2) }
	    END { printf "%.1f %.2f %.2f\n", r, p50, p99 }' "$f")
}

FC_PORT=$(free_port)
serve 0 false || exit 1
start_nginx "127.0.0.1:$FC_PORT" >/dev/null || exit 1
echo
echo "one-code-node workflow through nginx, wrk -c$CLIENTS -d$DURATION," \
    "blocking (storage.sync off; load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '  %-10s %-28s %9s %9s %9s\n' "" "" "runs/s" "p50 ms" "p99 ms"
for lang in python3 javascript; do
	measure "$lang" 0 false || exit 1
	cold=$RES
	measure "$lang" 2 false || exit 1
	shot=$RES
	measure "$lang" 2 true || exit 1
	fork=$RES
	set -- $cold; c_rps=$1
	printf '  %-10s %-28s %9s %9s %9s\n' "$lang" "no pool (cold, baseline)" $cold
	printf '  %-10s %-28s %9s %9s %9s\n' "" "one-shot pool" $shot
	printf '  %-10s %-28s %9s %9s %9s\n' "" "fork servers" $fork
	set -- $fork
	awk -v a="$1" -v b="$c_rps" -v t="$lang" 'BEGIN { printf "  %-10s %-28s %9.2f  (target: 300 runs/s%s)\n", "", "fork servers / cold", (b > 0 ? a / b : 0), (t == "python3" ? "" : " for python3") }'
done
echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
