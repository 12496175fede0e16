#!/bin/bash
# t_code_fork.sh — python3 and javascript code nodes on fork servers,
# through nginx: one server per language serves node after node (the same
# server process answers), and nothing a node does reaches the next: a
# global, an attribute set on a pre-imported (required) module,
# sys.modules or Object.prototype, a monkeypatched builtin, the
# environment, files in the workspace, /tmp and /dev/shm, a background
# process and a daemon that left its session. The code cannot ptrace,
# signal or read the memory of its server, and a node that crashes, hangs
# past sandbox.timeout or runs out of memory fails alone: the same server
# answers the next node.
. "$(dirname "$0")/lib.sh"

J='Content-Type: application/json'

# probe <case>: one blocking run of the language's isolation app (its key
# in KEY); sets STATUS, BODY and R (the code node's JSON, or "").
probe() {
	svc "$KEY" POST /v1/workflows/run -H "$J" \
	    -d "{\"inputs\":{\"case\":\"$1\"},\"user\":\"f\",\"response_mode\":\"blocking\"}"
	R=$(jqr .data.outputs.r)
}
rj() { printf '%s' "$R" | jq -c "$1" 2>/dev/null; }

if ! command -v bwrap >/dev/null || [ ! -x /usr/bin/python3 ] ||
    [ ! -x /usr/bin/node ]; then
	skip "bwrap, /usr/bin/python3 or /usr/bin/node is not installed"
	exit 0
fi

FC_DATA=$T_DIR/data
export FLOWCGI_CODE_POOL_SIZE=1 FLOWCGI_CODE_POOL_MAX=1
export FLOWCGI_CODE_FORK_SERVER=true FLOWCGI_CODE_FORK_SERVER_JAVASCRIPT=true
export FLOWCGI_SANDBOX_TIMEOUT=3
start_flowcgi fc || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
TOKEN=$(admin_token)
# check_lang <language> <app> <look fields> <name of the module table>
# <error of an out-of-memory node, a case pattern>
check_lang() {
	L=$1 LOOK=$3 MODS=$4 OOM=$5
	import_app "$TOP/tests/e2e/apps/$2"

	# The first node runs cold and starts the server; the next ones find it.
	i=0
	while :; do
		probe look
		[ "$(rj .fork)" = true ] && break
		i=$((i + 1)); [ $i -gt 100 ] && break
	done
	is "$STATUS $(jqr .data.status) $(rj .fork)" "200 succeeded true" \
	    "a $L code node runs on the $L fork server"
	SERVER=$(rj .id)
	is "$(rj "[$LOOK,.files,.workspace,.procs]")" \
	    '[false,false,false,false,false,[false,false,false],[],0]' \
	    "... in a clean child: no global, module change, file or process"

	probe set
	is "$STATUS $(jqr .data.status) $(rj .id)" "200 succeeded $SERVER" \
	    "a $L node leaves a global, $MODS, a builtin, files, processes"
	ok "$([ "$(rj .procs)" -ge 2 ] && echo 0 || echo 1)" \
	    "... and its background processes ran ($(rj .procs) besides it)"
	probe look
	is "$(rj .id)" "$SERVER" "the same server answers the next node"
	is "$(rj "[$LOOK]")" '[false,false,false,false,false]' \
	    "... which sees no global, module attribute, $MODS entry, builtin or variable"
	is "$(rj '.files')" '[false,false,false]' \
	    "... no file in the workspace, /tmp or /dev/shm"
	is "$(rj '.workspace')" '[]' "... an empty workspace"
	is "$(rj '.procs')" 0 "... and no process left by the node before"

	probe attack
	is "$STATUS $(jqr .data.status)" "200 succeeded" "a $L node attacks its server"
	is "$(rj '[.ptrace,.kill,.term,.stop,.group,.all,.probe]')" \
	    '[1,1,1,1,1,1,1]' \
	    "... ptrace and every signal to it, its group and -1: EPERM"
	ok "$(case "$(rj .mem)" in 1|13) echo 0 ;; *) echo 1 ;; esac)" \
	    "... /proc/<server>/mem cannot be read (errno $(rj .mem))"
	probe look
	is "$(rj .id) $(rj .procs)" "$SERVER 0" "... and the server lives on"

	for c in crash hang memory; do
		probe $c
		is "$STATUS $(jqr .data.status)" "200 failed" "a $L node that ends in $c fails"
		echo "# $c: $(jqr .data.error)"
		probe look
		is "$STATUS $(jqr .data.status) $(rj .id) $(rj .procs)" \
		    "200 succeeded $SERVER 0" "... alone: the same server answers the next node"
	done
	probe hang
	case "$(jqr .data.error)" in
	*sandbox.timeout*) ok=1 ;;
	*) ok=0 ;;
	esac
	is "$ok" 1 "a hang fails naming sandbox.timeout"
	probe memory
	case "$(jqr .data.error)" in
	$OOM) ok=1 ;;
	*) ok=0 ;;
	esac
	is "$ok" 1 "running out of memory fails naming it ($OOM)"
}

check_lang python3 isolation.yml '.global,.module,.sys_modules,.builtin,.env' \
    sys.modules '*MemoryError*'
check_lang javascript isolation_js.yml '.global,.module,.proto,.builtin,.env' \
    Object.prototype '*memory*'

kill -TERM "$FC_PID"
{ wait "$FC_PID"; } 2>/dev/null
is "$?" 0 "the server stops on SIGTERM"
is "$(ls "$FC_DATA/sandboxes" | wc -l)" 0 "... leaving no sandbox folder"
stop_nginx
