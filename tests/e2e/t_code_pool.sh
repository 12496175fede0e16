#!/bin/bash
# t_code_pool.sh — warm code runners in the real server: code nodes give
# the same answers with code.pool_size 2 (the default) and 0; the server
# keeps warm runners in sandboxes of their own once a code node ran, none
# with size 0; and after SIGTERM no runner process, sandbox folder or
# mount of it is left. A sandbox.memory_budget too small for one sandbox
# fails the code node with a message, not the request.
. "$(dirname "$0")/lib.sh"
need bwrap	# the local sandbox provider

J='Content-Type: application/json'

# runner_dirs <pid>: the runner folders (.flowcgi-code-...) in the command
# lines of <pid>'s descendants, one per line.
runner_dirs() {
	local kids p
	kids=$(ps -e -o pid= -o ppid= | awk -v root="$1" '
	    { parent[$1] = $2 }
	    END { for (p in parent) { q = p; n = 0
		while (q > 1 && q != root && n++ < 64) q = parent[q]
		if (q == root && p != root) print p } }')
	for p in $kids; do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null |
		    grep -o '\.flowcgi-code-[0-9a-f]*' | head -1
	done | sort -u
}

# run_code <seconds>: one blocking run of slow.yml; prints status and
# the output.
run_code() {
	svc "$KEY" POST /v1/workflows/run -H "$J" \
	    -d "{\"inputs\":{\"seconds\":$1},\"user\":\"p\",\"response_mode\":\"blocking\"}"
	echo "$STATUS $(jqr .data.status) $(jqr .data.outputs.done)"
}

for size in 2 0; do
	FC_DATA=$T_DIR/data$size
	export FLOWCGI_CODE_POOL_SIZE=$size
	start_flowcgi "fc$size" || exit 1
	start_nginx "127.0.0.1:$FC_PORT" || exit 1
	TOKEN=$(admin_token)
	import_app "$TOP/tests/e2e/apps/slow.yml"
	for i in 1 2 3; do
		is "$(run_code 0)" "200 succeeded yes" \
		    "pool_size $size: code nodes run ($i)"
	done
	SB=$FC_DATA/sandboxes
	if [ "$size" -gt 0 ]; then
		# python3 runners refill in the background: wait for two
		i=0
		while [ "$(runner_dirs "$FC_PID" | wc -l)" -lt 2 ]; do
			i=$((i + 1)); [ $i -gt 600 ] && break; sleep 0.05
		done
		DIRS=$(runner_dirs "$FC_PID")
		is "$(echo "$DIRS" | grep -c .)" 2 \
		    "pool_size 2: two warm python3 runners wait"
		is "$(ls "$SB" | wc -l)" 2 "... each in a sandbox of its own"
	else
		is "$(runner_dirs "$FC_PID" | grep -c .)" 0 \
		    "pool_size 0: no runner waits"
		is "$(ls "$SB" | wc -l)" 0 "... and no sandbox is left"
		DIRS=
	fi
	kill -TERM "$FC_PID"
	{ wait "$FC_PID"; } 2>/dev/null
	is "$?" 0 "pool_size $size: the server stops on SIGTERM"
	is "$(ls "$SB" | wc -l)" 0 "... leaving no sandbox folder"
	is "$(grep -c " $SB/" /proc/self/mountinfo)" 0 "... and no mount"
	left=0
	for d in $DIRS; do
		i=0
		while pgrep -f -- "$d" >/dev/null; do
			i=$((i + 1)); [ $i -gt 200 ] && { left=1; break; }
			sleep 0.05
		done
	done
	is "$left" 0 "... and no runner process"
	stop_nginx
done

# A memory budget too small for one sandbox: the code node fails naming
# sandbox.memory_budget, the run answers 200 with the run failed (not a
# 500), the warm pool does not fill, and nothing is left reserved.
FC_DATA=$T_DIR/data_budget
export FLOWCGI_CODE_POOL_SIZE=2
export FLOWCGI_SANDBOX_MEMORY_BUDGET=100m
export FLOWCGI_SANDBOX_BUDGET_WAIT=0
start_flowcgi "fcbudget" || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
TOKEN=$(admin_token)
import_app "$TOP/tests/e2e/apps/slow.yml"
svc "$KEY" POST /v1/workflows/run -H "$J" \
    -d '{"inputs":{"seconds":0},"user":"p","response_mode":"blocking"}'
is "$STATUS $(jqr .data.status)" "200 failed" \
    "memory_budget 100m: the run answers 200, the run failed"
echo "# error: $(jqr .data.error)"
case "$(jqr .data.error)" in
*sandbox.memory_budget*) ok=1 ;;
*) ok=0 ;;
esac
is "$ok" 1 "... with an error naming sandbox.memory_budget"
is "$(ls "$FC_DATA/sandboxes" | wc -l)" 0 "... and no sandbox is left"
kill -TERM "$FC_PID"
{ wait "$FC_PID"; } 2>/dev/null
is "$?" 0 "memory_budget 100m: the server stops on SIGTERM"
stop_nginx
unset FLOWCGI_SANDBOX_MEMORY_BUDGET FLOWCGI_SANDBOX_BUDGET_WAIT
