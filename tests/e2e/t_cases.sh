#!/bin/bash
# t_cases.sh — runs every tests/e2e/cases/*.case: one request and its
# expected answer, sent through nginx at / and again under the /flow/
# prefix. The server runs with small limits so that 413 and the depth
# limit are cheap to reach: limits.max_json_body 4k, max_json_depth 16.
#
# A case file is "key: value" lines ('#' starts a comment):
#   desc:     what the case shows (defaults to the file name)
#   method:   GET, POST, ... (default GET)
#   path:     the path after the prefix
# In any line ${APP} is an existing workflow app's id, ${TOKEN} the admin
# token and ${PREFIX} the prefix ("" or "/flow").
#   auth:     "admin" (default), "none", or a whole Authorization value
#   header:   a request header, as curl -H takes it (repeatable)
#   body:     the request body, the rest of the line as it is
#   body-gen: bash code whose standard output is the body
#   status:   the expected HTTP status
#   jq:       a jq expression that must be true of the response body
#   hdr:      a response header line that must be present (name
#             case-insensitive), e.g. "Allow: GET, POST"
# Every response with status >= 400 must also be JSON
# {code: string, message: string, status: <the HTTP status>}.
. "$(dirname "$0")/lib.sh"

FLOWCGI_LIMITS_MAX_JSON_BODY=4k FLOWCGI_LIMITS_MAX_JSON_DEPTH=16 \
    start_front || exit 1
req POST /console/api/apps -H 'Content-Type: application/json' \
    --data-binary '{"name":"case fixture","mode":"workflow"}'
APP=$(jqr .id)
is "$STATUS" 201 "fixture app created"

run_case() {	# run_case <file> <prefix>
	local f=$1 prefix=$2 line key val
	local desc method=GET path= auth=admin status= body= gen= hasbody=0
	local -a hdrs=() jqs=() want_hdrs=()
	while IFS= read -r line || [ -n "$line" ]; do
		case "$line" in ''|'#'*) continue ;; esac
		line=${line//'${APP}'/$APP}
		line=${line//'${TOKEN}'/$TOKEN}
		line=${line//'${PREFIX}'/$prefix}
		key=${line%%:*}
		val=${line#*:}
		val=${val# }
		case "$key" in
		desc) desc=$val ;;
		method) method=$val ;;
		path) path=$val ;;
		auth) auth=$val ;;
		header) hdrs+=(-H "$val") ;;
		body) body=$val; hasbody=1 ;;
		body-gen) gen=$val; hasbody=1 ;;
		status) status=$val ;;
		jq) jqs+=("$val") ;;
		hdr) want_hdrs+=("$val") ;;
		*) ok 1 "$f: unknown key '$key'"; return ;;
		esac
	done <"$f"
	desc="${desc:-$(basename "$f" .case)} [${prefix:-/}]"
	local -a args=(-X "$method" -o "$T_DIR/case.body" -D "$T_DIR/case.hdrs"
	    -w '%{http_code}')
	case "$auth" in
	admin) args+=(-H "Authorization: Bearer $TOKEN") ;;
	none) ;;
	*) args+=(-H "Authorization: $auth") ;;
	esac
	if [ "$hasbody" = 1 ]; then
		if [ -n "$gen" ]; then
			eval "$gen" >"$T_DIR/case.req"
		else
			printf '%s' "$body" >"$T_DIR/case.req"
		fi
		args+=(--data-binary "@$T_DIR/case.req")
	fi
	[ "$method" = HEAD ] && args=(-I "${args[@]:2}")
	local got
	got=$(curl -sS "${args[@]}" "${hdrs[@]}" "$BASE$prefix$path" \
	    2>"$T_DIR/curl.err")
	BODY=$(cat "$T_DIR/case.body")
	is "$got" "$status" "$desc: status"
	if [ "$got" -ge 400 ] && [ "$method" != HEAD ]; then
		printf '%s' "$BODY" | jq -e --argjson s "$got" \
		    '(.code|type) == "string" and (.message|type) == "string"
		     and .status == $s and (keys|length) == 3' >/dev/null 2>&1
		ok $? "$desc: error body is {code, message, status}"
		tr -d '\r' <"$T_DIR/case.hdrs" |
		    grep -qi '^content-type: application/json'
		ok $? "$desc: error is application/json"
	fi
	local e h
	for e in "${jqs[@]}"; do
		printf '%s' "$BODY" | jq -e "$e" >/dev/null 2>&1
		ok $? "$desc: $e"
	done
	for h in "${want_hdrs[@]}"; do
		tr -d '\r' <"$T_DIR/case.hdrs" | grep -qixF "$h"
		ok $? "$desc: header $h"
	done
	if [ "$T_FAIL" -gt 0 ] && [ -z "${CASE_SHOWN:-}" ]; then
		CASE_SHOWN=1
		echo "# first failure: $f; response $got: ${BODY:0:300}"
	fi
}

n=0
for f in "$TOP"/tests/e2e/cases/*.case; do
	run_case "$f" ""
	run_case "$f" /flow
	n=$((n + 1))
done
[ "$n" -ge 30 ]
ok $? "ran $n case files"
# the server lived through all of them
req GET /healthz
is "$STATUS" 200 "healthy after every case"
kill -0 "$FC_PID"
ok $? "flowcgi still running (pid $FC_PID)"
