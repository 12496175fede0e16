#!/bin/bash
# t_file_preview.sh — GET /v1/files/{id}/preview through nginx, as Dify's
# service API has it: an upload comes back with its type and length, as an
# attachment with ?as_attachment=true; one byte range when asked (206 with
# Content-Range, 416 past the end, several ranges: the whole), also across
# the chunks of a file over 256 KiB; HTML and SVG always as attachments,
# every answer sandboxed by its CSP; another app's key, or an unknown id,
# is 404.
. "$(dirname "$0")/lib.sh"

start_front || exit 1
import_app "$TOP/tests/e2e/apps/echo_chat.yml"
K1=$KEY
import_app "$TOP/tests/e2e/apps/echo_chat.yml"
K2=$KEY

upload() {	# upload <file> <type>: FILE = the new upload's id
	curl -sS -H "Authorization: Bearer $K1" \
	    -F "file=@$1;type=$2" -F user=u "$BASE/v1/files/upload" >"$T_DIR/up.json"
	FILE=$(jq -r .id "$T_DIR/up.json")
}
# get <key> <path> [curl args]: the body in $T_DIR/body, headers in
# $T_DIR/h (lowercase names), STATUS
get() {
	local k=$1 p=$2
	shift 2
	STATUS=$(curl -sS -D "$T_DIR/h.raw" -o "$T_DIR/body" -w '%{http_code}' \
	    -H "Authorization: Bearer $k" "$@" "$BASE$p")
	tr -d '\r' <"$T_DIR/h.raw" | sed 's/^\([^:]*\):/\L\1:/' >"$T_DIR/h"
}
hdr() { sed -n "s/^$1: //p" "$T_DIR/h" | tail -1; }

head -c 300000 /dev/urandom >"$T_DIR/big.bin"
upload "$T_DIR/big.bin" audio/mpeg
BIG=$FILE
ok "$([ -n "$BIG" ] && [ "$BIG" != null ] && echo 0 || echo 1)" "a file of two chunks uploaded"
get "$K1" "/v1/files/$BIG/preview"
is "$STATUS $(hdr content-type) $(hdr content-length)" "200 audio/mpeg 300000" \
    "preview: 200, its type and length"
cmp -s "$T_DIR/body" "$T_DIR/big.bin"
ok $? "... and its bytes"
is "$(hdr accept-ranges)" bytes "... saying it takes byte ranges"
is "$(hdr content-security-policy)" sandbox "... sandboxed"
is "$(grep -c '^content-disposition:' "$T_DIR/h")" 0 "... inline"

# One range across the edge of the first chunk (262144).
get "$K1" "/v1/files/$BIG/preview" -H 'Range: bytes=262000-262299'
is "$STATUS $(hdr content-range) $(hdr content-length)" \
    "206 bytes 262000-262299/300000 300" "a range across two chunks: 206"
cmp -s "$T_DIR/body" <(tail -c +262001 "$T_DIR/big.bin" | head -c 300)
ok $? "... its bytes"
get "$K1" "/v1/files/$BIG/preview" -H 'Range: bytes=-100'
is "$STATUS $(hdr content-range)" "206 bytes 299900-299999/300000" "the last 100 bytes"
cmp -s "$T_DIR/body" <(tail -c 100 "$T_DIR/big.bin")
ok $? "... their bytes"
get "$K1" "/v1/files/$BIG/preview" -H 'Range: bytes=299990-'
is "$STATUS $(hdr content-length)" "206 10" "an open range to the end"
get "$K1" "/v1/files/$BIG/preview" -H 'Range: bytes=300000-'
is "$STATUS $(hdr content-range) $(jq -r .code "$T_DIR/body")" \
    "416 bytes */300000 range_not_satisfiable" "a range past the end: JSON 416"
get "$K1" "/v1/files/$BIG/preview" -H 'Range: bytes=0-1,5-6'
is "$STATUS $(hdr content-length)" "200 300000" "several ranges: the whole file"

get "$K1" "/v1/files/$BIG/preview?as_attachment=true"
is "$STATUS $(hdr content-type)" "200 application/octet-stream" \
    "as_attachment=true: octet-stream"
is "$(hdr content-disposition)" "attachment; filename*=UTF-8''big.bin" "... named"

printf '<html><script>alert(1)</script></html>' >"$T_DIR/page.html"
upload "$T_DIR/page.html" text/html
get "$K1" "/v1/files/$FILE/preview"
is "$STATUS $(hdr content-type)" "200 application/octet-stream" \
    "HTML is never shown on our origin"
is "$(hdr content-disposition)" "attachment; filename*=UTF-8''page.html" \
    "... it is an attachment"
printf '<svg xmlns="http://www.w3.org/2000/svg"/>' >"$T_DIR/i.svg"
upload "$T_DIR/i.svg" "image/svg+xml; charset=utf-8"
get "$K1" "/v1/files/$FILE/preview"
is "$(hdr content-type)" application/octet-stream "nor SVG"

printf 'hello' >"$T_DIR/small.txt"
upload "$T_DIR/small.txt" text/plain
get "$K1" "/v1/files/$FILE/preview"
is "$STATUS $(hdr content-type) $(cat "$T_DIR/body")" "200 text/plain hello" \
    "a small text file, inline"
get "$K2" "/v1/files/$FILE/preview"
is "$STATUS $(jq -r .code "$T_DIR/body")" "404 file_not_found" \
    "another app's key: 404"
get "$K1" "/v1/files/0190f000-0000-7000-8000-000000000001/preview"
is "$STATUS $(jq -r .code "$T_DIR/body")" "404 file_not_found" "an unknown id: 404"
get "$K1" "/v1/files/nope/preview"
is "$STATUS" 404 "not an id: 404"
get bad-key "/v1/files/$FILE/preview"
is "$STATUS" 401 "no key: 401"
