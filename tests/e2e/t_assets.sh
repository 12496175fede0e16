# t_assets.sh — the app file system through nginx: folders, uploads
# (multipart and raw), downloads, rename, move, delete, skills, limits,
# refusals, and blobs shared and freed (counted with mdb_stat).
. "$(dirname "$0")/lib.sh"

FLOWCGI_ASSETS_MAX_FILE_SIZE=300k FLOWCGI_ASSETS_MAX_FILES=12 \
    start_front || exit 1

blobs() {	# number of blobs stored (the data directory, or postgres)
	db_count blobs
}

req POST $A -H "$J" -d '{"name":"files","mode":"workflow"}'
APP=$(jqr .id)
req POST $A -H "$J" -d '{"name":"chat","mode":"chat"}'
CHAT=$(jqr .id)

req GET $A/$APP/assets/tree
is "$STATUS $(jqr '.children | length')" "200 0" "empty tree"
req GET $A/$CHAT/assets/tree
is "$STATUS $(jqr .code)" "400 invalid_param" "chat apps have no file system"
req GET $A/00000000-0000-7000-8000-000000000000/assets/tree
is "$STATUS" 404 "tree of a missing app is 404"

# Folders: skills/report with a SKILL.md.
req POST $A/$APP/assets/folders -H "$J" -d '{"name":"skills"}'
is "$STATUS $(jqr .path) $(jqr .node_type)" "201 /skills folder" "mkdir"
SK=$(jqr .id)
req POST $A/$APP/assets/folders -H "$J" -d "{\"name\":\"report\",\"parent_id\":\"$SK\"}"
is "$STATUS $(jqr .path)" "201 /skills/report" "nested mkdir"
RP=$(jqr .id)
req POST $A/$APP/assets/folders -H "$J" -d '{"name":"skills"}'
is "$STATUS $(jqr .code)" "409 conflict" "duplicate name is 409"

printf -- '---\nname: report-writer\ndescription: Writes a weekly report\n---\n# Use\n' \
    >"$T_DIR/SKILL.md"
req POST $A/$APP/assets/files -F "file=@$T_DIR/SKILL.md" -F "parent_id=$RP"
is "$STATUS $(jqr .path) $(jqr .size)" "201 /skills/report/SKILL.md $(stat -c %s "$T_DIR/SKILL.md")" \
    "multipart upload"
SKILL=$(jqr .id)
is "$(jqr .checksum)" "$(sha256sum "$T_DIR/SKILL.md" | cut -d' ' -f1)" \
    "checksum is the sha256 of the bytes"
req GET $A/$APP/assets/tree
is "$(jqr '.children[0].children[0].skill.name')|$(jqr '.children[0].children[0].skill.description')" \
    "report-writer|Writes a weekly report" "skill front matter listed with the tree"

# Raw-body upload, binary content and a unicode name.
head -c 200000 /dev/urandom >"$T_DIR/blob.bin"
req POST "$A/$APP/assets/files?name=%E6%95%B0%E6%8D%AE.bin" \
    -H 'Content-Type: application/octet-stream' --data-binary @"$T_DIR/blob.bin"
is "$STATUS $(jqr .path) $(jqr .size)" "201 /数据.bin 200000" "raw upload with a unicode name"
BIN=$(jqr .id)
curl -sS -H "Authorization: Bearer $TOKEN" -D "$T_DIR/dl.h" \
    -o "$T_DIR/back.bin" "$BASE$A/$APP/assets/files/$BIN/download"
cmp -s "$T_DIR/blob.bin" "$T_DIR/back.bin"
ok $? "download gives the same bytes"
grep -qi "^content-disposition: attachment; filename\*=UTF-8''%E6%95%B0%E6%8D%AE.bin" "$T_DIR/dl.h"
ok $? "download names the file (RFC 5987)"
req GET $A/$APP/assets/files/$SKILL
is "$STATUS $(jqr .content | head -1)" "200 ---" "file content as text"
req GET $A/$APP/assets/files/$BIN
is "$(jqr .encoding)" base64 "binary content comes back as base64"
is "$(jqr .content | base64 -d | cmp -s - "$T_DIR/blob.bin"; echo $?)" 0 \
    "base64 content decodes to the same bytes"

# More than a chunk (256 KiB): stored as chunks and a manifest, no stored
# value larger than a chunk, sent back whole, freed whole.
n0=$(blobs)
head -c 290000 /dev/urandom >"$T_DIR/chunks.bin"
req POST "$A/$APP/assets/files?name=chunks.bin" \
    -H 'Content-Type: application/octet-stream' --data-binary @"$T_DIR/chunks.bin"
is "$STATUS $(jqr .size)" "201 290000" "a file of two chunks is stored"
CH=$(jqr .id)
is "$(blobs)" "$((n0 + 3))" "as two chunks and their manifest"
is "$("$FLOWCGI_BUILD/tools/store_poke" "${FC_DATA:-$T_DIR/data}" largest blobs)" \
    262144 "no stored value is larger than a chunk"
curl -sS -H "Authorization: Bearer $TOKEN" -D "$T_DIR/ch.h" \
    -o "$T_DIR/chunks.back" "$BASE$A/$APP/assets/files/$CH/download"
cmp -s "$T_DIR/chunks.bin" "$T_DIR/chunks.back"
ok $? "its download gives the same bytes"
grep -qi "^content-length: 290000" "$T_DIR/ch.h"
ok $? "with its whole length announced"
req GET $A/$APP/assets/files/$CH
is "$(jqr .content | base64 -d | cmp -s - "$T_DIR/chunks.bin"; echo $?)" 0 \
    "its content (base64) is the same bytes"
req DELETE $A/$APP/assets/nodes/$CH
is "$STATUS $(blobs)" "204 $n0" "deleting it frees its chunks"

# Replace contents: JSON {content}, then ?replace=1 by name.
req PUT $A/$APP/assets/files/$SKILL -H "$J" -d '{"content":"---\nname: renamed\n---\n"}'
is "$STATUS $(jqr .size)" "200 22" "PUT {content} replaces the file"
req GET $A/$APP/assets/tree
is "$(jqr '.children[0].children[0].skill.name')" renamed "skill follows new front matter"
req POST "$A/$APP/assets/files?name=SKILL.md&parent_id=$RP" -H 'Content-Type: text/plain' --data-binary 'x'
is "$STATUS" 409 "create over an existing name is 409"
req POST "$A/$APP/assets/files?name=SKILL.md&parent_id=$RP&replace=1" -H 'Content-Type: text/plain' --data-binary 'x'
is "$STATUS $(jqr .id) $(jqr .size)" "201 $SKILL 1" "replace=1 keeps the node, new bytes"

# Rename and move.
req POST $A/$APP/assets/nodes/$BIN/rename -H "$J" -d '{"name":"data.bin"}'
is "$STATUS $(jqr .path) $(jqr .extension)" "200 /data.bin bin" "rename"
req POST $A/$APP/assets/nodes/$BIN/move -H "$J" -d "{\"parent_id\":\"$RP\"}"
is "$STATUS $(jqr .path)" "200 /skills/report/data.bin" "move into a folder"
req POST $A/$APP/assets/nodes/$SK/move -H "$J" -d "{\"parent_id\":\"$RP\"}"
is "$STATUS $(jqr .code)" "400 invalid_param" "a folder cannot move below itself"
req POST $A/$APP/assets/nodes/$BIN/move -H "$J" -d "{\"parent_id\":\"$BIN\"}"
is "$STATUS" 400 "cannot move into a file"
req POST $A/$APP/assets/nodes/$BIN/move -H "$J" -d '{"parent_id":null}'
is "$STATUS $(jqr .path)" "200 /data.bin" "move back to the root"

# Refused names: each a 400 naming the rule.
for n in '..' '.' 'a/b' '/etc' 'a\\b' 'tab\there' ''; do
	req POST $A/$APP/assets/folders -H "$J" -d "{\"name\":\"$n\"}"
	is "$STATUS" 400 "name '$n' refused"
done
req POST "$A/$APP/assets/files?name=a%00b" -H 'Content-Type: text/plain' --data-binary x
is "$STATUS" 400 "NUL in a name refused"
long=$(printf 'n%.0s' $(seq 1 300))
req POST $A/$APP/assets/folders -H "$J" -d "{\"name\":\"$long\"}"
is "$STATUS $(jqr .message | grep -c assets.max_name)" "400 1" "long name names assets.max_name"

# Limits: file size and file count, each naming its setting.
head -c 400000 /dev/zero >"$T_DIR/big"
req POST "$A/$APP/assets/files?name=big" -H 'Content-Type: application/octet-stream' --data-binary @"$T_DIR/big"
is "$STATUS $(jqr .message | grep -c assets.max_file_size)" "413 1" "file over assets.max_file_size is 413"
for i in 1 2 3 4 5 6 7 8 9 10; do
	req POST "$A/$APP/assets/files?name=f$i" -H 'Content-Type: text/plain' --data-binary "$i"
	last=$STATUS
done
is "$last $(jqr .message | grep -c assets.max_files)" "413 1" "file count over assets.max_files is refused"
req GET $A/$APP/assets/tree
is "$(jqr '[.. | objects | select(.node_type?)] | length')" 12 "nothing half-written past the limit"

# Blobs: shared between apps, freed with their last reference.
n0=$(blobs)
req POST $A/$APP/copy -H "$J" -d '{"name":"copy"}'
COPY=$(jqr .id)
is "$STATUS $(blobs)" "201 $n0" "a copy shares its blobs"
req GET $A/$COPY/assets/tree
is "$(jqr '.children | length')" "$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE$A/$APP/assets/tree" | jq '.children | length')" \
    "the copy has the same tree"
req DELETE $A/$APP/assets/nodes/$SK
is "$STATUS" 204 "recursive folder delete"
req GET $A/$APP/assets/files/$SKILL
is "$STATUS" 404 "files below a deleted folder are gone"
is "$(blobs)" "$n0" "blobs still used by the copy stay"
req DELETE $A/$APP
req DELETE $A/$COPY
is "$STATUS $(blobs)" "204 0" "deleting the last apps frees every blob"

# Prefix: the same API under /flow.
req GET /flow$A/$CHAT
is "$STATUS" 200 "works under the /flow prefix"
req GET /healthz
is "$STATUS" 200 "server healthy at the end"
