#!/bin/bash
# t_malformed.sh — 100+ malformed requests through nginx (bad JSON, huge
# bodies, wrong methods, bad and oversized unicode names, deep nesting,
# wrong field types), each answered with a JSON 4xx whose status field
# matches; afterwards the same server process is healthy, serves a normal
# create, and none of the bad requests stored anything.
. "$(dirname "$0")/lib.sh"

FLOWCGI_LIMITS_MAX_JSON_BODY=64k start_front || exit 1
PID0=$FC_PID
req POST $A -H 'Content-Type: application/json' \
    --data-binary '{"name":"target","mode":"chat"}'
APP=$(jqr .id)
NBAD=0

# bad <method> <path> <content-type or -> <body file or -> [curl args...]
bad() {
	local m=$1 p=$2 ct=$3 f=$4 got
	shift 4
	local -a a=(-sS -X "$m" -o "$T_DIR/m.body" -w '%{http_code}'
	    -H "Authorization: Bearer $TOKEN")
	[ "$ct" != - ] && a+=(-H "Content-Type: $ct")
	[ "$f" != - ] && a+=(--data-binary "@$f")
	got=$(curl "${a[@]}" "$@" "$BASE$p" 2>"$T_DIR/curl.err")
	NBAD=$((NBAD + 1))
	if [ "${got:0:1}" = 4 ] && jq -e --argjson s "$got" \
	    '(.code|type)=="string" and (.message|type)=="string" and .status==$s' \
	    "$T_DIR/m.body" >/dev/null 2>&1; then
		ok 0 "#$NBAD $m $p ${f##*/}: JSON $got"
	else
		ok 1 "#$NBAD $m $p ${f##*/}: JSON 4xx"
		echo "#   got $got: $(head -c 300 "$T_DIR/m.body")"
	fi
}

body() {	# body <name> <printf format> [args]: writes $T_DIR/<name>
	local n=$1; shift
	printf "$@" >"$T_DIR/$n"
	B=$T_DIR/$n
}

# ---- bad JSON: 32 ----
i=0
while IFS= read -r line; do
	i=$((i + 1))
	printf '%s' "$line" >"$T_DIR/badjson$i"
	bad POST $A application/json "$T_DIR/badjson$i"
done <<'LIST'
{
}
{"name":"x","mode":"chat"
{"name":"x" "mode":"chat"}
{"name":"x",,"mode":"chat"}
{"name":'x',"mode":"chat"}
{name:"x",mode:"chat"}
{"name":"x","mode":"chat",}
["name","x"]
"just a string"
42
true
null
{"name":"x","mode":"chat"}{"again":1}
{"name":"x","mode":"chat"} trailing
{"name":"\x","mode":"chat"}
{"name":"\u12","mode":"chat"}
{"name":"\ud800","mode":"chat"}
{"name":"\udc00\ud800","mode":"chat"}
{"name":"tab	inside","mode":"chat"}
{"name":"x","mode":"chat","n":01}
{"name":"x","mode":"chat","n":1.}
{"name":"x","mode":"chat","n":NaN}
{"name":"x","mode":"chat","n":Infinity}
{"name":"x","mode":"chat","n":-}
{"name":"x","mode":"chat","n":1e}
{"name":"x","mode":"chat","n":0x10}
{"name":"x","mode":"chat","a":[1,2,]}
{"name":"x","mode":"chat","a":[1 2]}
{"name":"x","name":"y","mode":"chat"}
{"name":"x","mode":"chat"} /* comment */
/* comment */ {"name":"x","mode":"chat"}
{"name":"x","mode":"chat","a":{"b":}}
LIST
# a lone NUL byte, and bytes that are no text at all
printf '{"name":"a\0b","mode":"chat"}' >"$T_DIR/nul"
bad POST $A application/json "$T_DIR/nul"
head -c 3000 /dev/urandom >"$T_DIR/random"
bad POST $A application/json "$T_DIR/random"

# ---- unicode: 16 ----
for s in '\xff' '\xfe\xff' '\xc0\xaf' '\xe0\x80\xaf' '\xed\xa0\x80' \
    '\xf4\x90\x80\x80' '\xf8\x88\x80\x80\x80' '\xc3' '\xe2\x82' \
    '\x80' 'ok\xbfok' '\xf0\x9f\x9a'; do
	body "u$((++i))" '{"name":"%b","mode":"chat"}' "$s"
	bad POST $A application/json "$B"
done
body u-long '{"name":"%s","mode":"chat"}' "$(for k in $(seq 256); do printf '名'; done)"
bad POST $A application/json "$B"
body u-long-emoji '{"name":"%s","mode":"chat"}' "$(for k in $(seq 256); do printf '🚀'; done)"
bad POST $A application/json "$B"
body u-desc '{"name":"ü","mode":"chat","description":"%s"}' "$(for k in $(seq 401); do printf 'é'; done)"
bad POST $A application/json "$B"
body u-put '{"name":"%b"}' '\xc3\x28'
bad PUT "$A/$APP" application/json "$B"

# ---- deep nesting: 12 ----
nest() {	# nest <open> <close> <depth>
	local o c
	o=$(head -c "$3" /dev/zero | tr '\0' "$1")
	c=$(head -c "$3" /dev/zero | tr '\0' "$2")
	printf '{"name":"deep","mode":"chat","x":%s%s}' "$o" "$c"
}
for d in 64 65 100 1000 5000 30000; do
	nest '[' ']' $d >"$T_DIR/deep$d"
	bad POST $A application/json "$T_DIR/deep$d"
done
for d in 64 200 2000; do
	{ printf '{"name":"deep","mode":"chat","x":'
	  for k in $(seq $d); do printf '{"a":'; done; printf 1
	  head -c $d /dev/zero | tr '\0' '}'; printf '}'; } >"$T_DIR/deepo$d"
	bad POST $A application/json "$T_DIR/deepo$d"
done
head -c 60000 /dev/zero | tr '\0' '[' >"$T_DIR/open-only"
bad POST $A application/json "$T_DIR/open-only"
nest '[' ']' 100 >"$T_DIR/deep-put"
bad PUT "$A/$APP" application/json "$T_DIR/deep-put"
bad POST "$A/$APP/copy" application/json "$T_DIR/deep-put"

# ---- huge bodies: 12 ----
for n in 65537 100000 1000000 4000000 12000000; do
	{ printf '{"name":"big","mode":"chat","pad":"'
	  head -c "$n" /dev/zero | tr '\0' a; printf '"}'; } >"$T_DIR/big$n"
	bad POST $A application/json "$T_DIR/big$n"
done
bad PUT "$A/$APP" application/json "$T_DIR/big1000000"
bad POST "$A/$APP/copy" application/json "$T_DIR/big1000000"
bad POST $A application/json "$T_DIR/big4000000" -H 'Transfer-Encoding: chunked'
bad POST $A text/plain "$T_DIR/big4000000"
bad POST $A application/octet-stream "$T_DIR/big100000"
bad POST $A multipart/form-data "$T_DIR/big100000"
bad POST $A - "$T_DIR/big100000" -H 'Content-Type:'

# ---- wrong methods and paths: 20 ----
for m in PATCH DELETE PUT OPTIONS FOO; do bad $m $A - -; done
for m in POST PATCH OPTIONS; do bad $m "$A/$APP" - -; done
for m in GET PUT DELETE; do bad $m "$A/$APP/copy" - -; done
for m in POST PUT DELETE; do bad $m /healthz - -; done
bad GET /console/api - -
bad GET /console/api/app - -
bad GET "$A/$APP/copy/more" - -
bad GET /v1/nothing - -
bad GET "/flow/console/api/apps/$APP/x" - -
bad GET /flow/ - -

# ---- well-formed JSON, wrong fields: 12 ----
i=0
while IFS= read -r line; do
	i=$((i + 1))
	printf '%s' "$line" >"$T_DIR/field$i"
	bad POST $A application/json "$T_DIR/field$i"
done <<'LIST'
{"name":["x"],"mode":"chat"}
{"name":{"x":1},"mode":"chat"}
{"name":"x","mode":["chat"]}
{"name":"x","mode":"CHAT"}
{"name":"x","mode":""}
{"name":"","mode":""}
{"name":"x","mode":"chat","icon_type":"png"}
{"name":"x","mode":"chat","icon_background":7}
{"name":"x","mode":"chat","max_active_requests":1.5}
{"name":"x","mode":"chat","use_icon_as_answer_icon":"yes"}
LIST
for q in 'page=0' 'limit=0' 'limit=1000' 'page=-3' 'page=1e3' 'limit=%20' \
    'mode=sql' 'page=99999999999999999999'; do
	bad GET "$A?$q" - -
done
for h in 'If-Match: 5' 'If-Match: "x"' 'If-Match: "-1"'; do
	bad PUT "$A/$APP" application/json "$T_DIR/field1" -H "$h"
done

[ "$NBAD" -ge 100 ]
ok $? "sent $NBAD malformed requests"

# ---- still healthy, same process, nothing stored ----
req GET /healthz
is "$STATUS" 200 "healthy afterwards"
kill -0 "$PID0" 2>/dev/null
ok $? "the same flowcgi process is still running"
req GET "$A?limit=100"
is "$(jqr .total)" 1 "no malformed request stored an app"
req GET "$A/$APP"
is "$(jqr '[.name,.revision]|map(tostring)|join(",")')" "target,1" \
    "no malformed request changed the existing app"
req POST $A -H 'Content-Type: application/json' \
    --data-binary '{"name":"after the storm","mode":"workflow"}'
is "$STATUS" 201 "a good create works afterwards"
! grep -qiE 'assert|abort|sanitizer|segv' "$T_DIR/fc.log"
ok $? "no crash or sanitizer report in the server log"
