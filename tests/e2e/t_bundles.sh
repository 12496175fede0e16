# t_bundles.sh — bundles and files as Dify's web client does them, through
# nginx: the three-step bundle import (imports-bundle/prepare, a PUT of the
# .zip to the signed upload_url, confirm) with a real exported bundle and
# hostile input (steps out of order, unknown, changed and expired links,
# other imports' and apps' ids, oversize, zip bombs, path traversal); the
# asset routes reorder (persisted, listed in order), download-url (signed
# links that expire), files/upload and batch-upload (several files, one
# failing as in Dify); expired prepared imports removed by the pruner.
. "$(dirname "$0")/lib.sh"

# Small limits so that the refusals are cheap to reach.
export FLOWCGI_BUNDLE_MAX_SIZE=100k FLOWCGI_BUNDLE_MAX_PENDING=3 \
    FLOWCGI_ASSETS_MAX_FILE_SIZE=300k FLOWCGI_ASSETS_BATCH_MAX_FILES=6
start_front || exit 1
Z='Content-Type: application/zip'
A=/console/api/apps
SEEDS=$TOP/tests/fuzz/seeds/fuzz_bundle

has() {	# has <text> <substring> <description>
	case "$1" in *"$2"*) ok 0 "$3" ;;
	*) ok 1 "$3"; echo "#   '$1' lacks '$2'" ;; esac
}

# put_link <url> <file>: PUTs a file to a signed link with no token, as
# the browser does; sets STATUS and BODY.
put_link() {
	BODY=$(curl -sS -X PUT -H 'Content-Type: application/octet-stream' \
	    --data-binary @"$2" -o - -w '\n%{http_code}' "$BASE$1")
	STATUS=${BODY##*
}
	BODY=${BODY%
*}
}

# get_link <url> <out file>: GETs a signed link with no token; sets STATUS.
get_link() {
	STATUS=$(curl -sS -D "$T_DIR/link.h" -o "$2" -w '%{http_code}' \
	    "$BASE$1")
}

apps() {	# number of apps
	curl -s -H "Authorization: Bearer $TOKEN" "$BASE$A?limit=100" |
	    jq .total
}

entries() {	# entries <db>: records in one database of the store
	db_count "$1"
}

# ---- A real bundle: a sandboxed chatflow with files, exported ----
import_file "$TOP/tests/e2e/apps/sandboxed.yml"
SRC=$(jqr .app_id)
req POST $A/$SRC/assets/folders -H "$J" -d '{"name":"skills"}'
SK=$(jqr .id)
printf -- '---\nname: report\ndescription: Weekly report\n---\nWrite it.\n' \
    >"$T_DIR/SKILL.md"
req POST $A/$SRC/assets/files -F "file=@$T_DIR/SKILL.md" -F "parent_id=$SK"
SKID=$(jqr .id)
head -c 20000 /dev/urandom >"$T_DIR/r.bin"
req POST "$A/$SRC/assets/files?name=r.bin&parent_id=$SK" \
    -H 'Content-Type: application/octet-stream' --data-binary @"$T_DIR/r.bin"
req GET "$A/$SRC/export-bundle"
is "$STATUS $(jqr .filename)" "200 Report writer.zip" "export-bundle"
EXPORT=$(jqr .download_url)
has "$EXPORT" "/console/api/files/app-bundles/$SRC/without-secrets/download?" \
    "its download_url is a signed link"
get_link "$EXPORT" "$T_DIR/b.zip"
is "$STATUS $(head -c 2 "$T_DIR/b.zip")" "200 PK" \
    "which gives the zip without a token, as Dify's presigned link"
grep -qi "^content-disposition: attachment; filename\*=UTF-8''Report%20writer.zip" \
    "$T_DIR/link.h"
ok $? "... named like the app"
get_link "${EXPORT/without-secrets/with-secrets}" "$T_DIR/x"
is "$STATUS" 403 "a link changed to include the secrets is 403"
req GET "$A/$SRC/export-bundle?include_secret=true"
has "$(jqr .download_url)" "/$SRC/with-secrets/download?" \
    "include_secret=true signs a link with the secrets"

# ---- The three steps ----
n_apps=$(apps)
req POST $A/imports-bundle/prepare
is "$STATUS" 200 "prepare answers 200"
ID=$(jqr .import_id)
URL=$(jqr .upload_url)
printf '%s' "$ID" | grep -Eqx '[0-9a-f]{32}'
ok $? "import_id is 32 hex digits, as Dify's"
has "$URL" "/console/api/files/bundle-imports/$ID/upload?expires_at=" \
    "upload_url is a signed link for this import"
put_link "$URL" "$T_DIR/b.zip"
is "$STATUS" 204 "PUT of the zip to upload_url, without a token: 204"
req POST $A/imports-bundle/$ID/confirm -H "$J" -d '{"name":"Three steps"}'
is "$STATUS $(jqr .status) $(jqr .app_mode)" "200 completed advanced-chat" \
    "confirm imports the bundle"
APP=$(jqr .app_id)
is "$(apps)" $((n_apps + 1)) "one app made"
req GET $A/$APP
is "$(jqr .name) $(jqr .runtime_type)" "Three steps sandboxed" \
    "confirm's name is used, the app is sandboxed"
req GET $A/$APP/assets/tree
is "$(jqr '[.. | objects | select(.node_type?) | .path] | sort | join(",")')" \
    "/skills,/skills/SKILL.md,/skills/r.bin" "the bundle's files came along"
is "$(jqr '.children[0].children[] | select(.name=="SKILL.md") | .id')" \
    "$SKID" "node ids come from the manifest"
RB=$(jqr '.. | objects | select(.name?=="r.bin") | .id')
curl -sS -H "Authorization: Bearer $TOKEN" -o "$T_DIR/r2.bin" \
    "$BASE$A/$APP/assets/files/$RB/download"
cmp -s "$T_DIR/r.bin" "$T_DIR/r2.bin"
ok $? "a binary file survives the three steps"
is "$(entries imports)" 0 "the confirm ended the prepared import"

# Steps out of order, and twice.
req POST $A/imports-bundle/$ID/confirm -H "$J" -d '{}'
is "$STATUS $(jqr .code)" "404 not_found" "a second confirm is 404"
put_link "$URL" "$T_DIR/b.zip"
is "$STATUS $(printf '%s' "$BODY" | jq -r .code)" "403 forbidden" \
    "an upload after the confirm is 403: the link was used"
req POST $A/imports-bundle/prepare
ID2=$(jqr .import_id)
URL2=$(jqr .upload_url)
req POST $A/imports-bundle/$ID2/confirm -H "$J" -d '{}'
is "$STATUS $(jqr .code)" "400 invalid_param" "confirm before the upload is 400"
has "$(jqr .message)" "nothing was uploaded" "... saying what is missing"
put_link "$URL2" "$T_DIR/b.zip"
is "$STATUS" 204 "the prepared import waited for its upload"
put_link "$URL2" "$T_DIR/b.zip"
is "$STATUS $(printf '%s' "$BODY" | jq -r .code)" "403 forbidden" \
    "an upload link works once: a second PUT is 403"
req POST $A/imports-bundle/$ID2/confirm -H "$J" -d '{"name":"Later"}'
is "$STATUS $(jqr .status)" "200 completed" "then the confirm works"
is "$(apps)" $((n_apps + 2)) "one app for it, however many uploads"

# Unknown and other ids.
req POST $A/imports-bundle/0123456789abcdef0123456789abcdef/confirm \
    -H "$J" -d '{}'
is "$STATUS" 404 "confirm of an unknown import is 404"
req POST "$A/imports-bundle/..%2F..%2Fx/confirm" -H "$J" -d '{}'
is "$STATUS" 404 "confirm of a malformed id is 404"
req POST $A/imports/$ID2/confirm
is "$STATUS $(jqr .status)" "400 failed" \
    "a bundle import id is no pending DSL import"
req POST $A/imports-bundle/prepare
ID3=$(jqr .import_id)
URL3=$(jqr .upload_url)
req POST $A/imports-bundle/prepare
WAITING=$(jqr .import_id)
put_link "${URL3/$ID3/$WAITING}" "$T_DIR/b.zip"
is "$STATUS $(printf '%s' "$BODY" | jq -r .code)" "403 forbidden" \
    "another import's id in a link is 403"
put_link "${URL3%%\?*}?expires_at=99&nonce=00&sign=x" "$T_DIR/b.zip"
is "$STATUS" 403 "a made-up signature is 403"
sig=${URL3##*sign=}
if [ "${sig:0:1}" = A ]; then flip=B; else flip=A; fi
put_link "${URL3%sign=*}sign=$flip${sig:1}" "$T_DIR/b.zip"
is "$STATUS" 403 "one changed character of the signature is 403"
exp=${URL3#*expires_at=}; exp=${exp%%&*}
put_link "${URL3/expires_at=$exp/expires_at=$((exp + 60))}" "$T_DIR/b.zip"
is "$STATUS" 403 "a later expiry is 403"
put_link "${URL3%%\?*}" "$T_DIR/b.zip"
is "$STATUS" 403 "a link without its query is 403"
has "$(printf '%s' "$BODY" | jq -r .message)" "expires_at, nonce and sign" \
    "... naming what it lacks"
req PUT "${URL3%%\?*}" -H "$Z" --data-binary @"$T_DIR/b.zip"
is "$STATUS" 403 "the admin token is no substitute for the signature"
req POST "${URL3%%\?*}"
is "$STATUS" 405 "the link takes PUT only"

# Limits and hostile bundles (refused by the checks every import uses).
head -c 150000 /dev/urandom >"$T_DIR/big.zip"
put_link "$URL3" "$T_DIR/big.zip"
is "$STATUS $(printf '%s' "$BODY" | jq -r .code)" "413 payload_too_large" \
    "a bundle over bundle.max_size is 413"
has "$(printf '%s' "$BODY" | jq -r .message)" bundle.max_size \
    "... naming bundle.max_size"
n_apps=$(apps)
put_link "$URL3" "$SEEDS/bombish.zip"
is "$STATUS" 204 "a zip bomb uploads (it is small)"
req POST $A/imports-bundle/$ID3/confirm -H "$J" -d '{}'
is "$STATUS $(jqr .status) $(jqr .code)" "400 failed import_failed" \
    "its confirm fails"
has "$(jqr .message)" bundle.max_ratio "... naming bundle.max_ratio"
req POST $A/imports-bundle/$ID3/confirm -H "$J" -d '{}'
is "$STATUS" 404 "a failed confirm ends the import, as in Dify"
req POST $A/imports-bundle/prepare
ID5=$(jqr .import_id)
put_link "$(jqr .upload_url)" "$SEEDS/slip.zip"
req POST $A/imports-bundle/$ID5/confirm -H "$J" -d '{}'
is "$STATUS $(jqr .status)" "400 failed" "a path-traversal bundle fails"
has "$(jqr .message)" ".." "... naming the '..' entry"
req POST $A/imports-bundle/prepare
ID6=$(jqr .import_id)
printf 'not a zip at all' >"$T_DIR/garbage.zip"
put_link "$(jqr .upload_url)" "$T_DIR/garbage.zip"
req POST $A/imports-bundle/$ID6/confirm -H "$J" -d '{}'
is "$STATUS $(jqr .status)" "400 failed" "a garbage upload fails"
is "$(apps)" "$n_apps" "nothing half-written: no app from a failed confirm"
is "$(entries imports)" 1 "failed confirms left nothing; one import waits"

# At most bundle.max_pending prepared imports wait at once.
req POST $A/imports-bundle/prepare
req POST $A/imports-bundle/prepare
is "$STATUS" 200 "prepare up to bundle.max_pending"
req POST $A/imports-bundle/prepare
is "$STATUS $(jqr .code)" "429 too_many_requests" "one more is 429"
has "$(jqr .message)" bundle.max_pending "... naming bundle.max_pending"

# The one-step import is still there.
req POST "$A/imports-bundle?name=One" -H "$Z" --data-binary @"$T_DIR/b.zip"
is "$STATUS $(jqr .status)" "200 completed" "the one-step POST still imports"

# ---- Reorder ----
for f in a b c; do
	req POST "$A/$APP/assets/files?name=$f.txt" \
	    -H 'Content-Type: text/plain' --data-binary "$f"
	eval "N_$f=\$(jqr .id)"
done
names() {	# the root's names in listed order
	curl -s -H "Authorization: Bearer $TOKEN" "$BASE$A/$APP/assets/tree" |
	    jq -r '[.children[].name] | join(",")'
}
is "$(names)" "skills,a.txt,b.txt,c.txt" "new files go last"
req POST $A/$APP/assets/nodes/$N_c/reorder -H "$J" -d '{"after_node_id":null}'
is "$STATUS $(jqr .name) $(jqr .order)" "200 c.txt 0" \
    "reorder to the front answers the node"
is "$(names)" "c.txt,skills,a.txt,b.txt" "the listing follows"
req POST $A/$APP/assets/nodes/$N_a/reorder -H "$J" \
    -d "{\"after_node_id\":\"$N_b\"}"
is "$STATUS $(names)" "200 c.txt,skills,b.txt,a.txt" "reorder after a sibling"
req POST $A/$APP/assets/nodes/$SK/reorder -H "$J" -d '{}'
is "$STATUS $(names)" "200 skills,c.txt,b.txt,a.txt" \
    "no after_node_id: first"
req GET $A/$APP/assets/tree
is "$(jqr '[.children[].order] | join(",")')" "0,1,2,3" \
    "siblings are numbered in their new order"
req POST $A/$APP/assets/nodes/$N_a/reorder -H "$J" \
    -d "{\"after_node_id\":\"$RB\"}"
is "$STATUS" 404 "after a node of another folder is 404"
req POST $A/$APP/assets/nodes/$N_a/reorder -H "$J" \
    -d "{\"after_node_id\":\"$SKID\"}"
is "$STATUS" 404 "after another app's node is 404"
req POST $A/$SRC/assets/nodes/$N_a/reorder -H "$J" -d '{}'
is "$STATUS" 404 "reordering another app's node is 404"
req POST $A/$APP/assets/nodes/$N_a/reorder -H "$J" \
    -d "{\"after_node_id\":\"$N_a\"}"
is "$STATUS" 400 "after itself is 400"
is "$(names)" "skills,c.txt,b.txt,a.txt" "refusals changed nothing"

# ---- download-url ----
req GET $A/$APP/assets/files/$RB/download-url
is "$STATUS" 200 "download-url answers 200"
DL=$(jqr .download_url)
has "$DL" "/console/api/files/app-assets/$APP/$RB/download?expires_at=" \
    "download_url is a signed link"
get_link "$DL" "$T_DIR/r3.bin"
is "$STATUS" 200 "the link downloads without a token"
cmp -s "$T_DIR/r.bin" "$T_DIR/r3.bin"
ok $? "... the file's bytes"
grep -qi "^content-disposition: attachment; filename\*=UTF-8''r.bin" \
    "$T_DIR/link.h"
ok $? "... as an attachment named like the file"
grep -qi '^x-content-type-options: nosniff' "$T_DIR/link.h"
ok $? "... never sniffed into something to render"
get_link "/flow$DL" "$T_DIR/r4.bin"
is "$STATUS" 200 "the link works under the /flow prefix too"
get_link "${DL/$APP/$SRC}" "$T_DIR/x"
is "$STATUS" 403 "the link with another app's id is 403"
req GET $A/$SRC/assets/files/$N_a/download-url
is "$STATUS" 404 "download-url for another app's file is 404"
req GET $A/$APP/assets/files/$SK/download-url
is "$STATUS" 404 "download-url of a folder is 404"
req GET $A/$APP/assets/files/00000000-0000-7000-8000-000000000000/download-url
is "$STATUS" 404 "download-url of an unknown file is 404"
req PUT "${DL%%\?*}" -H 'Content-Type: text/plain' --data-binary x
is "$STATUS" 405 "a download link cannot upload"

# ---- files/upload: one file, then its bytes to the link ----
printf 'uploaded through a link\n' >"$T_DIR/up.txt"
req POST $A/$APP/assets/files/upload -H "$J" \
    -d "{\"name\":\"up.txt\",\"size\":24,\"parent_id\":\"$SK\"}"
is "$STATUS $(jqr .node.path) $(jqr .node.size)" "201 /skills/up.txt 0" \
    "files/upload makes an empty file"
UPID=$(jqr .node.id)
put_link "$(jqr .upload_url)" "$T_DIR/up.txt"
is "$STATUS" 204 "its bytes go to upload_url without a token"
req GET $A/$APP/assets/files/$UPID
is "$(jqr .node.size) $(jqr .content)" "24 uploaded through a link" \
    "the file holds them"
req POST $A/$APP/assets/files/upload -H "$J" \
    -d "{\"name\":\"up.txt\",\"size\":1,\"parent_id\":\"$SK\"}"
is "$STATUS $(jqr .node.name)" "201 up 1.txt" \
    "a taken name gets a number, as in Dify"
req POST $A/$APP/assets/files/upload -H "$J" -d '{"name":"huge","size":400000}'
is "$STATUS $(jqr .message | grep -c assets.max_file_size)" "413 1" \
    "a size over assets.max_file_size is 413"
req POST $A/$APP/assets/files/upload -H "$J" -d '{"name":"nosize"}'
is "$STATUS" 400 "size is required"
req POST $A/$APP/assets/files/upload -H "$J" \
    -d "{\"name\":\"x\",\"size\":1,\"parent_id\":\"$SKID\"}"
is "$STATUS" 400 "a parent of another app is refused"

# ---- batch-upload: a tree at once, one PUT per file ----
count() {	# nodes of the app's tree
	curl -s -H "Authorization: Bearer $TOKEN" "$BASE$A/$APP/assets/tree" |
	    jq '[.. | objects | select(.node_type?)] | length'
}
n0=$(count)
cat >"$T_DIR/batch.json" <<'EOF'
{"children": [
  {"name": "docs", "node_type": "folder", "children": [
    {"name": "a.md", "node_type": "file", "size": 6},
    {"name": "b.md", "node_type": "file", "size": 6},
    {"name": "deep", "node_type": "folder", "children": []}
  ]},
  {"name": "root.txt", "node_type": "file", "size": 5}
]}
EOF
req POST $A/$APP/assets/batch-upload -H "$J" --data-binary @"$T_DIR/batch.json"
is "$STATUS" 201 "batch-upload answers 201"
is "$(jqr '[.children[] | .name, (.upload_url == null)] | join(",")')" \
    "docs,true,root.txt,false" "folders have no upload_url, files have one"
is "$(jqr '[.children[0].children[].name] | join(",")')" "a.md,b.md,deep" \
    "the tree comes back in order"
is "$(count)" $((n0 + 5)) "all five nodes made at once"
printf 'alpha\n' >"$T_DIR/a.md"
printf 'root\n' >"$T_DIR/root.txt"
head -c 400000 /dev/zero >"$T_DIR/b.md"
MADE=$BODY
made() { printf '%s' "$MADE" | jq -r "$1"; }
put_link "$(made '.children[0].children[0].upload_url')" "$T_DIR/a.md"
a=$STATUS
put_link "$(made '.children[0].children[1].upload_url')" "$T_DIR/b.md"
b=$STATUS
put_link "$(made '.children[1].upload_url')" "$T_DIR/root.txt"
is "$a $b $STATUS" "204 413 204" "one file of three fails (too large)"
req GET $A/$APP/assets/tree
is "$(jqr '[.. | objects | select(.name? == "a.md" or .name? == "b.md" or
    .name? == "root.txt") | "\(.name)=\(.size)"] | sort | join(",")')" \
    "a.md=6,b.md=0,root.txt=5" \
    "the others hold their bytes; the failed one stays, empty"
BAT=$(jqr '.. | objects | select(.name? == "a.md") | .id')
req GET $A/$APP/assets/files/$BAT
is "$(jqr .content)" alpha "a batch file reads back"
req POST $A/$APP/assets/batch-upload -H "$J" --data-binary @"$T_DIR/batch.json"
is "$STATUS $(jqr '.children[0].name')" "201 docs 1" \
    "a second batch of the same tree gets numbered names"
n1=$(count)
req POST $A/$APP/assets/batch-upload -H "$J" -d '{"children":[
    {"name":"ok","node_type":"folder","children":[
      {"name":"fine.txt","node_type":"file","size":1},
      {"name":"../bad","node_type":"file","size":1}]}]}'
is "$STATUS" 400 "a bad name inside the batch is 400"
has "$(jqr .message)" "ok/../bad" "... naming the entry"
req POST $A/$APP/assets/batch-upload -H "$J" -d '{"children":[
    {"name":"1","node_type":"file"},{"name":"2","node_type":"file"},
    {"name":"3","node_type":"file"},{"name":"4","node_type":"file"},
    {"name":"5","node_type":"file"},{"name":"6","node_type":"file"},
    {"name":"7","node_type":"file"}]}'
is "$STATUS $(jqr .message | grep -c assets.batch_max_files)" "413 1" \
    "a batch over assets.batch_max_files is 413"
req POST $A/$APP/assets/batch-upload -H "$J" \
    -d '{"children":[{"name":"big","node_type":"file","size":400000}]}'
is "$STATUS" 413 "a file over assets.max_file_size refuses the batch"
req POST $A/$APP/assets/batch-upload -H "$J" \
    -d '{"children":[{"name":"w","node_type":"link"}]}'
is "$STATUS" 400 "an unknown node_type is 400"
req POST $A/$APP/assets/batch-upload -H "$J" -d '{"children":[]}'
is "$STATUS" 400 "an empty batch is 400"
ONE='"children":[{"name":"x","node_type":"file"}]'
req POST $A/$APP/assets/batch-upload -H "$J" -d "{\"parent_id\":\"$SK\",$ONE}"
is "$STATUS" 201 "a batch under a folder"
req POST $A/$APP/assets/batch-upload -H "$J" -d "{\"parent_id\":\"$SKID\",$ONE}"
is "$STATUS" 400 "a batch under another app's folder is refused"
is "$(count)" $((n1 + 1)) "refused batches made nothing"

# ---- Short-lived links: the same data, restarted with 5-second TTLs ----
# (room for a busy machine between making a link and using it)
DL_OLD=$DL
ORDER=$(names)
kill "$FC_PID"; wait "$FC_PID" 2>/dev/null
stop_nginx
FLOWCGI_ASSETS_LINK_TTL=5 FLOWCGI_BUNDLE_IMPORT_TTL=5 \
    FLOWCGI_BUNDLE_MAX_PENDING=10 start_flowcgi fc2
start_nginx "127.0.0.1:$FC_PORT"
is "$(names)" "$ORDER" "the order survives a restart"
get_link "$DL_OLD" "$T_DIR/x"
is "$STATUS" 403 "a link longer than assets.link_ttl now allows is 403"
has "$(jq -r .message "$T_DIR/x")" "longer than" "... saying why"
req GET $A/$APP/assets/files/$RB/download-url
DL=$(jqr .download_url)
req POST $A/imports-bundle/prepare
EXP_ID=$(jqr .import_id)
EXP_URL=$(jqr .upload_url)
blobs0=$(entries blobs)
req POST $A/imports-bundle/prepare
PR_ID=$(jqr .import_id)
cp "$T_DIR/b.zip" "$T_DIR/b2.zip"; printf 'unique tail' >>"$T_DIR/b2.zip"
put_link "$(jqr .upload_url)" "$T_DIR/b2.zip"
is "$STATUS $(entries blobs)" "204 $((blobs0 + 1))" \
    "an upload within the expiry is one more blob"
sleep 6	# past the 5-second expiry of every link and import above
get_link "$DL" "$T_DIR/x"
is "$STATUS" 403 "a download link past its expiry is 403"
has "$(jq -r .message "$T_DIR/x")" expired "... saying it expired"
put_link "$EXP_URL" "$T_DIR/b.zip"
is "$STATUS" 403 "an upload link past its expiry is 403"
req POST $A/imports-bundle/$PR_ID/confirm -H "$J" -d '{}'
is "$STATUS" 404 "a prepared import past bundle.import_ttl is 404"
FLOWCGI_SERVER_DATA_DIR=$T_DIR/data "$FLOWCGI_BIN" prune \
    >"$T_DIR/prune.log" 2>&1
is "$?" 0 "flowcgi prune"
is "$(db_has imports "$PR_ID"; echo $?) $(db_has imports "$EXP_ID"; echo $?)" \
    "1 1" "the pruner removed the expired prepared imports"
is "$(entries blobs)" "$blobs0" "... and the upload's blob"
db_has imports "$WAITING"
ok $? "a prepared import still in its time stays"
req GET /healthz
is "$STATUS" 200 "server healthy at the end"
