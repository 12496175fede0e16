#!/bin/bash
# t_multiproc.sh — 4 flowcgi processes on one data directory behind one
# nginx upstream (round robin), starting from a 1 MiB map so it must grow
# while they all write. 4 clients at once each create and update their own
# apps and increment one shared counter app by read-modify-write through
# PUT with If-Match, retrying on 412. No update may be lost: the counter
# ends at exactly 4 x K and every client's apps are all there, updated.
. "$(dirname "$0")/lib.sh"

NP=4 M=30 K=25
export FLOWCGI_STORAGE_MAP_SIZE=1m FLOWCGI_SERVER_WORKERS=4
export FLOWCGI_STORAGE_SYNC=false	# crash safety is t_crash.sh's job
ups=()
for n in $(seq 1 $NP); do
	FC_LOG_LEVEL=debug start_flowcgi "fc$n" || exit 1
	ups+=("127.0.0.1:$FC_PORT")
	pids[$n]=$FC_PID
done
start_nginx "${ups[@]}" || exit 1
TOKEN=$(admin_token)
J='Content-Type: application/json'
# the largest records the limits allow (4-byte characters), ~6 KB each
PAD=$(for i in $(seq 400); do printf '💥'; done)
ICON=$(for i in $(seq 1024); do printf '💥'; done)

req POST /console/api/apps -H "$J" \
    --data-binary '{"name":"counter","mode":"chat","description":"0"}'
is "$STATUS" 201 "counter app created"
CTR=$(jqr .id)

# call <client> <method> <path> [curl args]: sets S (status), B (body), E (ETag)
call() {
	local c=$1 m=$2 p=$3
	shift 3
	S=$(curl -sS -X "$m" -o "$T_DIR/c$c.body" -D "$T_DIR/c$c.hdrs" \
	    -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$@" "$BASE$p")
	B=$(<"$T_DIR/c$c.body")
	E=
	local l
	while IFS= read -r l; do	# builtins only: this runs ~1000 times
		case "$l" in [Ee][Tt][Aa][Gg]:*) E=${l#*: }; E=${E%$'\r'} ;; esac
	done <"$T_DIR/c$c.hdrs"
}

field() {	# field <name>: a string field of the compact JSON in B
	local v=${B#*\"$1\":\"}
	printf '%s' "${v%%\"*}"
}

client() {	# client <n>: prints one line per problem; counts 412s
	local c=$1 j id n tries conflicts=0
	local -a ids=()
	for j in $(seq 1 $M); do
		call "$c" POST /console/api/apps -H "$J" --data-binary \
		    "{\"name\":\"p$c-app$j\",\"mode\":\"workflow\",\"description\":\"$PAD\",\"icon\":\"$ICON\"}"
		[ "$S" = 201 ] || { echo "create p$c-app$j: $S $B"; continue; }
		ids+=("$(field id)")
		# one counter increment between creates while there are some
		[ "$j" -le "$K" ] || continue
		tries=0
		while :; do
			tries=$((tries + 1))
			[ $tries -gt 200 ] && { echo "counter: gave up"; break; }
			call "$c" GET "/console/api/apps/$CTR"
			[ "$S" = 200 ] || { echo "counter get: $S"; continue; }
			n=$(field description)
			call "$c" PUT "/console/api/apps/$CTR" -H "$J" \
			    -H "If-Match: $E" --data-binary \
			    "{\"name\":\"counter\",\"description\":\"$((n + 1))\"}"
			[ "$S" = 200 ] && break
			[ "$S" = 412 ] && { conflicts=$((conflicts + 1)); continue; }
			echo "counter put: $S $B"
			break
		done
	done
	for j in "${!ids[@]}"; do
		call "$c" PUT "/console/api/apps/${ids[$j]}" -H "$J" \
		    -H 'If-Match: "1"' --data-binary \
		    "{\"name\":\"p$c-app$((j + 1)) updated\",\"description\":\"$PAD\"}"
		[ "$S" = 200 ] || echo "update p$c-app$((j + 1)): $S $B"
	done
	echo "conflicts $conflicts" >"$T_DIR/conflicts$c"
}

for c in $(seq 1 $NP); do
	client "$c" >"$T_DIR/problems$c" 2>&1 &
	cl[$c]=$!
done
for c in $(seq 1 $NP); do wait "${cl[$c]}"; done
cat "$T_DIR"/problems* | head -20 | sed 's/^/# /'
is "$(cat "$T_DIR"/problems* | wc -l)" 0 "every client request got its expected answer"
conflicts=$(cat "$T_DIR"/conflicts* | awk '{s += $2} END {print s + 0}')
echo "# 412 conflicts retried: $conflicts"
[ "$conflicts" -gt 0 ]
ok $? "the clients really raced on the counter ($conflicts retries after 412)"

req GET "/console/api/apps/$CTR"
is "$(jqr .description)" $((NP * K)) "the counter lost no update"
is "$(jqr .revision)" $((NP * K + 1)) "one revision per increment"
for c in $(seq 1 $NP); do
	req GET "/console/api/apps?name=p$c-app&limit=100"
	is "$(jqr '.total')" $M "client $c: all $M apps present"
	is "$(jqr '[.data[] | select(.name | endswith(" updated"))] | length')" $M \
	    "client $c: all $M apps updated"
done
req GET "/console/api/apps?limit=1"
is "$(jqr .total)" $((NP * M + 1)) "no stray records"
for n in $(seq 1 $NP); do
	kill -0 "${pids[$n]}" 2>/dev/null
	ok $? "process $n still running"
	c=$(grep -c ' /console/api/apps' "$T_DIR/fc$n.log")
	[ "$c" -gt 0 ]
	ok $? "process $n served requests ($c)"
done
if [ "${FLOWCGI_STORAGE_BACKEND:-lmdb}" = postgres ]; then
	skip "LMDB's map: the store is PostgreSQL"
else
	grep -h 'growing to' "$T_DIR"/fc*.log | sed 's/^/# /' | head -5
	grep -qh 'growing to' "$T_DIR"/fc*.log
	ok $? "the map grew while the processes shared it"
fi
