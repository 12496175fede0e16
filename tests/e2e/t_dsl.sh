# t_dsl.sh — DSL import and export through nginx: every DSL file of the
# project (tests/e2e/apps, tests/e2e/apps/dify) and of the shared corpus
# (when it is here) imports and round-trips (export -> import -> export is
# byte-stable), every .zip bundle of tests/e2e/apps too (files and all),
# pending / confirm, overwrite by app_id, secrets on export, yaml-url with
# the SSRF guard, bundles with files, and the CLI.
. "$(dirname "$0")/lib.sh"

FILES=("$TOP"/tests/e2e/apps/*.yml "$TOP"/tests/e2e/apps/dify/*.yml)
CORPUS=${FLOWCGI_CORPUS:-$TOP/../shared/dsl-corpus/files}
if [ -d "$CORPUS" ]; then
	FILES+=("$CORPUS"/*.yml)
else
	skip "the shared DSL corpus (../shared/dsl-corpus/files, or FLOWCGI_CORPUS) is not here: the project's own files only"
fi

start_front || exit 1

# Every file: imported (200, or 202 pending for newer versions, then
# confirmed), then export -> import -> export gives identical YAML. Each
# step must answer 200 with its body (an export that fails would write the
# same error into both files and look stable).
n=0; bad=0; unstable=0; broken=0
for f in "${FILES[@]}"; do
	n=$((n + 1))
	import_file "$f"
	st=$(jqr .status)
	if [ "$STATUS" = 202 ] && [ "$st" = pending ]; then
		req POST "$A/imports/$(jqr .id)/confirm"
		st=$(jqr .status)
	fi
	case "$STATUS $st" in
	"200 completed"|"200 completed-with-warnings") ;;
	*) bad=$((bad + 1)); echo "# import $(basename "$f"): $STATUS $BODY"
	   continue ;;
	esac
	id=$(jqr .app_id)
	# exported <file>: the last answer was a 200 export with its YAML
	exported() {
		[ "$STATUS" = 200 ] &&
		    [ "$(jqr '.data | type')" = string ] && jqr .data >"$1" &&
		    grep -q '^kind: app$' "$1"
	}
	req GET "$A/$id/export?include_secret=true"
	if ! exported "$T_DIR/e1.yml"; then
		broken=$((broken + 1))
		echo "# export 1 $(basename "$f"): $STATUS $BODY" | head -c 300
		echo; continue
	fi
	import_file "$T_DIR/e1.yml"
	case "$STATUS $(jqr .status)" in
	"200 completed"|"200 completed-with-warnings") ;;
	*) broken=$((broken + 1))
	   echo "# import of the export $(basename "$f"): $STATUS $BODY" |
	       head -c 300; echo; continue ;;
	esac
	req GET "$A/$(jqr .app_id)/export?include_secret=true"
	if ! exported "$T_DIR/e2.yml"; then
		broken=$((broken + 1))
		echo "# export 2 $(basename "$f"): $STATUS $BODY" | head -c 300
		echo; continue
	fi
	if ! cmp -s "$T_DIR/e1.yml" "$T_DIR/e2.yml"; then
		unstable=$((unstable + 1))
		echo "# unstable: $(basename "$f")"
	fi
done
is "$bad" 0 "all $n DSL files import"
is "$broken" 0 "every export and re-import of the $n answers 200 with its body"
is "$unstable" 0 "export -> import -> export is stable for all $n"

# An export gives each node the type it came with: variable-assigner, the
# aggregator's first name, stays (Dify keeps it, and runs it as the
# aggregator).
spellings() { grep -cE "^ +type: variable-$1\$"; }
for f in "$TOP"/tests/e2e/apps/dify/*Customer_Review_Analysis*.yml \
    "$TOP"/tests/e2e/apps/dify/*Text_Summarization*.yml; do
	import_file "$f"
	req GET "$A/$(jqr .app_id)/export"
	is "$(jqr .data | spellings assigner) $(jqr .data | spellings aggregator)" \
	    "$(spellings assigner <"$f") $(spellings aggregator <"$f")" \
	    "$(basename "$f" | cut -c1-24)...: the export keeps variable-assigner"
done

# bundle_export <app id> <file>: the app's bundle, downloaded
bundle_export() {
	req GET "$A/$1/export-bundle?include_secret=true"
	curl -sS -H "Authorization: Bearer $TOKEN" -o "$2" "$BASE$(jqr .download_url)"
}

# bundle_view <zip>: its DSL, its entries and each file's bytes (sha256),
# and its manifest without the time it was made: what must not change
bundle_view() {
	local e
	unzip -Z1 "$1" | sort
	unzip -Z1 "$1" | grep -v '/$' | sort | while IFS= read -r e; do
		case "$e" in
		manifest.json) unzip -p "$1" "$e" | jq -S 'del(.generated_at)' ;;
		*) printf '%s %s\n' "$(unzip -p "$1" "$e" | sha256sum | cut -c1-64)" "$e" ;;
		esac
	done
}

# Every bundle of the project: imported with its files, then export ->
# import -> export gives the same DSL, files and manifest.
for z in "$TOP"/tests/e2e/apps/*.zip; do
	b=$(basename "$z")
	req POST "$A/imports-bundle" -H 'Content-Type: application/zip' \
	    --data-binary @"$z"
	is "$STATUS $(jqr .status)" "200 completed" "$b: imports"
	id=$(jqr .app_id)
	req GET "$A/$id/assets/tree"
	want=$(unzip -Z1 "$z" | grep -v '^manifest.json$' | grep / | grep -v '/$' |
	    sed 's|^[^/]*/|/|' | sort | tr '\n' ,)
	is "$(jqr '[.. | objects | select(.node_type? == "file") | .path] | sort | join(",")')," \
	    "$want" "$b: its files are the app's files"
	bundle_export "$id" "$T_DIR/x1.zip"
	req POST "$A/imports-bundle" -H 'Content-Type: application/zip' \
	    --data-binary @"$T_DIR/x1.zip"
	bundle_export "$(jqr .app_id)" "$T_DIR/x2.zip"
	bundle_view "$T_DIR/x1.zip" >"$T_DIR/v1"
	bundle_view "$T_DIR/x2.zip" >"$T_DIR/v2"
	[ -s "$T_DIR/v1" ] && cmp -s "$T_DIR/v1" "$T_DIR/v2"
	ok $? "$b: export -> import -> export gives the same bundle" ||
	    diff "$T_DIR/v1" "$T_DIR/v2" | head -20 | sed 's/^/# /'
done

# Versions: newer is held pending, confirmable once; older minor warns.
cat >"$T_DIR/newer.yml" <<'YML'
version: 9.1.0
kind: app
app: {name: From the future, mode: workflow}
workflow:
  graph:
    nodes:
    - id: s
      data: {type: start, title: Start, variables: []}
    edges: []
  features: {}
YML
import_file "$T_DIR/newer.yml"
is "$STATUS $(jqr .status) $(jqr .imported_dsl_version) $(jqr .app_id)" \
    "202 pending 9.1.0 null" "a newer version is held pending"
PID=$(jqr .id)
req POST "$A/imports/$PID/confirm"
is "$STATUS $(jqr .status)" "200 completed" "confirm finishes it"
NEWAPP=$(jqr .app_id)
req GET "$A/$NEWAPP"
is "$STATUS $(jqr .name)" "200 From the future" "the confirmed app exists"
req POST "$A/imports/$PID/confirm"
is "$STATUS $(jqr .status)" "400 failed" "a pending import confirms only once"
req POST "$A/imports/00000000-0000-7000-8000-000000000000/confirm"
is "$STATUS $(jqr .error)" "400 import expired or does not exist" "unknown import"
sed 's/^version: .*/version: 0.1.5/' "$T_DIR/newer.yml" >"$T_DIR/older.yml"
import_file "$T_DIR/older.yml"
is "$STATUS $(jqr .status)" "200 completed-with-warnings" "an older minor version warns"
sed 's/^version: .*/version: 0.1/' "$T_DIR/newer.yml" >"$T_DIR/float.yml"
import_file "$T_DIR/float.yml"
is "$STATUS $(jqr .status)" "400 failed" "a non-string version fails"
printf 'kind: app\napp: [1, 2\n' >"$T_DIR/broken.yml"
import_file "$T_DIR/broken.yml"
is "$STATUS $(jqr .status) $(jqr '.error | test("line")')" "400 failed true" \
    "broken YAML fails naming the line"
req POST $A/imports -H "$J" -d '{"mode":"yaml-content"}'
is "$STATUS $(jqr .code)" "400 invalid_param" "yaml_content is required"
req POST $A/imports -H "$J" -d '{"mode":"zip"}'
is "$STATUS" 400 "unknown mode"

# Overrides and overwrite by app_id.
jq -n --rawfile y "$T_DIR/older.yml" '{mode: "yaml-content", yaml_content: $y,
    name: "Renamed", icon: "🚀"}' >"$T_DIR/imp.json"
req POST $A/imports -H "$J" --data-binary @"$T_DIR/imp.json"
OW=$(jqr .app_id)
req GET "$A/$OW"
is "$(jqr .name) $(jqr .icon)" "Renamed 🚀" "name and icon overrides apply"
jq -n --rawfile y "$T_DIR/newer.yml" --arg id "$OW" '{mode: "yaml-content",
    yaml_content: ($y | sub("9.1.0"; "0.6.0") | sub("From the future"; "Other")),
    app_id: $id}' >"$T_DIR/imp.json"
req POST $A/imports -H "$J" --data-binary @"$T_DIR/imp.json"
is "$STATUS $(jqr .app_id)" "200 $OW" "app_id overwrites the draft in place"
req GET "$A/$OW/export"
is "$(jqr .data | grep -c 'name: Renamed')" 1 "overwrite keeps the app's own name"
req POST $A -H "$J" -d '{"name":"chat","mode":"chat"}'
CHAT=$(jqr .id)
jq -n --rawfile y "$T_DIR/older.yml" --arg id "$CHAT" \
    '{mode: "yaml-content", yaml_content: $y, app_id: $id}' >"$T_DIR/imp.json"
req POST $A/imports -H "$J" --data-binary @"$T_DIR/imp.json"
is "$STATUS $(jqr .status)" "400 failed" "a chat app cannot be overwritten"

# Secrets: blanked unless include_secret.
cat >"$T_DIR/secret.yml" <<'YML'
version: 0.6.0
kind: app
app: {name: Secrets, mode: workflow}
workflow:
  environment_variables:
  - {id: a, name: API_KEY, value: sk-very-secret, value_type: secret}
  - {id: b, name: REGION, value: eu, value_type: string}
  graph:
    nodes:
    - id: s
      data: {type: start, title: Start, variables: []}
    edges: []
  features: {}
YML
import_file "$T_DIR/secret.yml"
SEC=$(jqr .app_id)
req GET "$A/$SEC/export"
is "$(jqr .data | grep -c sk-very-secret) $(jqr .data | grep -c 'value: eu')" "0 1" \
    "export blanks secret variables, keeps the others"
req GET "$A/$SEC/export?include_secret=true"
is "$(jqr .data | grep -c sk-very-secret)" 1 "include_secret=true keeps them"

# yaml-url: fetched through the SSRF guard; loopback is refused.
req POST $A/imports -H "$J" -d "{\"mode\":\"yaml-url\",\"yaml_url\":\"$BASE/x.yml\"}"
is "$STATUS $(jqr .status) $(jqr '.error | test("allow_private")')" \
    "400 failed true" "yaml-url to a loopback address is refused"
req POST $A/imports -H "$J" -d '{"mode":"yaml-url","yaml_url":"file:///etc/passwd"}'
is "$STATUS $(jqr .status)" "400 failed" "yaml-url must be http(s)"

# Bundles: export a sandboxed app with files, import it back.
sed 's/  features: {}/  features: {sandbox: {enabled: true}}/' "$T_DIR/secret.yml" \
    >"$T_DIR/sandboxed.yml"
import_file "$T_DIR/sandboxed.yml"
SB=$(jqr .app_id)
req GET "$A/$SB"
is "$(jqr .runtime_type)" sandboxed "runtime_type follows features.sandbox"
req POST $A/$SB/assets/folders -H "$J" -d '{"name":"skills"}'
SK=$(jqr .id)
req POST $A/$SB/assets/folders -H "$J" -d "{\"name\":\"空\",\"parent_id\":\"$SK\"}"
printf -- '---\nname: x\ndescription: y\n---\n' >"$T_DIR/SKILL.md"
req POST $A/$SB/assets/files -F "file=@$T_DIR/SKILL.md" -F "parent_id=$SK"
SKID=$(jqr .id)
head -c 50000 /dev/urandom >"$T_DIR/r.bin"
req POST "$A/$SB/assets/files?name=r.bin&parent_id=$SK" -H 'Content-Type: application/octet-stream' --data-binary @"$T_DIR/r.bin"
req GET "$A/$SB/export-bundle"
is "$STATUS $(jqr .filename)" "200 Secrets.zip" "export-bundle names the file"
curl -sS -H "Authorization: Bearer $TOKEN" -o "$T_DIR/b.zip" "$BASE$(jqr .download_url)"
is "$(head -c 2 "$T_DIR/b.zip")" PK "download_url gives the zip"
unzip -Z1 "$T_DIR/b.zip" | sort >"$T_DIR/list"
grep -qx 'Secrets.yml' "$T_DIR/list" && grep -qx 'manifest.json' "$T_DIR/list" && \
    grep -qx 'Secrets/skills/SKILL.md' "$T_DIR/list"
ok $? "bundle holds the DSL, the manifest and the files"
req POST "$A/imports-bundle?name=Back" -H 'Content-Type: application/zip' --data-binary @"$T_DIR/b.zip"
is "$STATUS $(jqr .status)" "200 completed" "bundle import"
BACK=$(jqr .app_id)
req GET "$A/$BACK/assets/tree"
is "$(jqr '[.. | objects | select(.node_type?) | .path] | sort | join(",")')" \
    "/skills,/skills/SKILL.md,/skills/r.bin,/skills/空" "the files come back, empty folder too"
is "$(jqr '.children[] | select(.name=="skills") | .children[] | select(.name=="SKILL.md") | .id')" \
    "$SKID" "node ids come back from the manifest"
RB=$(jqr '.. | objects | select(.name?=="r.bin") | .id')
curl -sS -H "Authorization: Bearer $TOKEN" -o "$T_DIR/r2.bin" "$BASE$A/$BACK/assets/files/$RB/download"
cmp -s "$T_DIR/r.bin" "$T_DIR/r2.bin"
ok $? "binary file survives the bundle round trip"
req POST "$A/imports-bundle" -F "file=@$T_DIR/b.zip" -F name=Multi
is "$STATUS $(jqr .status)" "200 completed" "bundle import as multipart"
printf 'not a zip' >"$T_DIR/bad.zip"
req POST "$A/imports-bundle" -H 'Content-Type: application/zip' --data-binary @"$T_DIR/bad.zip"
is "$STATUS $(jqr .status)" "400 failed" "a damaged bundle fails"

# CLI: import and export with the same binary, on the same data.
id=$(FLOWCGI_SERVER_DATA_DIR=$T_DIR/data "$FLOWCGI_BIN" import "$T_DIR/secret.yml")
is "$?" 0 "flowcgi import prints the app id"
req GET "$A/$id"
is "$STATUS $(jqr .name)" "200 Secrets" "the server sees the CLI's import"
(cd "$T_DIR" && FLOWCGI_SERVER_DATA_DIR=$T_DIR/data "$FLOWCGI_BIN" export "$SB" 2>/dev/null)
is "$(head -c 2 "$T_DIR/Secrets.zip")" PK "flowcgi export writes a .zip for a sandboxed app"
FLOWCGI_SERVER_DATA_DIR=$T_DIR/data "$FLOWCGI_BIN" export "$id" -o "$T_DIR/c.yml" 2>/dev/null
grep -q '^kind: app' "$T_DIR/c.yml"
ok $? "flowcgi export -o writes the YAML"
FLOWCGI_SERVER_DATA_DIR=$T_DIR/data "$FLOWCGI_BIN" import "$T_DIR/newer.yml" >/dev/null 2>&1
is "$?" 3 "CLI import of a newer version asks for --yes"
FLOWCGI_SERVER_DATA_DIR=$T_DIR/data "$FLOWCGI_BIN" import --yes "$T_DIR/newer.yml" >/dev/null 2>&1
is "$?" 0 "--yes confirms it"
FLOWCGI_SERVER_DATA_DIR=$T_DIR/data "$FLOWCGI_BIN" import "$T_DIR/b.zip" >/dev/null
is "$?" 0 "CLI imports a bundle"
req GET /healthz
is "$STATUS" 200 "server healthy at the end"
