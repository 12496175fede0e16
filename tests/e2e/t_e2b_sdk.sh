# t_e2b_sdk.sh — proves tests/fakes/fake_e2b.py faithful to E2B: the
# official e2b JavaScript SDK (pinned in tests/e2b-sdk/package-lock.json)
# creates a sandbox on the fake, runs commands, writes, reads and lists
# files, lists sandboxes and kills it (tests/e2b-sdk/sdk_scenario.mjs). The
# same scenario runs through flowcgi's provider in tests/unit/t_sandbox_e2b.c.
#
# Installs the SDK with `npm ci` when tests/e2b-sdk/node_modules is missing
# (needs the npm registry). Without node or npm it is one counted skip;
# it fails when the SDK cannot be installed or anything differs.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
SDK=$TOP/tests/e2b-sdk
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/flowcgi-e2b-sdk.XXXXXX")
FAKE=
cleanup() {
	[ -n "$FAKE" ] && kill "$FAKE" 2>/dev/null && wait "$FAKE" 2>/dev/null
	rm -rf "$T_DIR"
}
trap cleanup EXIT

for c in node npm; do	# the one rule of lib.sh's need: a counted skip
	command -v $c >/dev/null && continue
	echo "ok 1 # SKIP needs $c: not installed (contrib/install-deps.sh)"
	echo "1..1"
	exit 0
done
if [ ! -d "$SDK/node_modules/e2b" ]; then
	if ! (cd "$SDK" && npm ci --no-audit --no-fund) >"$T_DIR/npm.log" 2>&1; then
		echo "not ok 1 - npm ci in tests/e2b-sdk failed"
		sed 's/^/# /' "$T_DIR/npm.log" | tail -20
		exit 1
	fi
fi
echo "ok 1 - the e2b SDK $(node -p "require('$SDK/node_modules/e2b/package.json').version") is installed"

python3 "$TOP/tests/fakes/fake_e2b.py" >"$T_DIR/fake.port" 2>"$T_DIR/fake.log" &
FAKE=$!
i=0
while [ ! -s "$T_DIR/fake.port" ]; do
	i=$((i + 1))
	if [ $i -gt 200 ]; then
		echo "not ok 2 - the fake E2B did not start"
		sed 's/^/# /' "$T_DIR/fake.log"
		exit 1
	fi
	sleep 0.05
done
echo "ok 2 - the fake E2B listens on port $(head -1 "$T_DIR/fake.port")"

# The SDK's TAP lines, renumbered after ours.
(cd "$SDK" && FAKE_E2B="http://127.0.0.1:$(head -1 "$T_DIR/fake.port")" \
    timeout 60 node sdk_scenario.mjs) >"$T_DIR/sdk.tap" 2>&1
rc=$?
n=2
while IFS= read -r line; do
	case $line in
	"ok "*) n=$((n + 1)); echo "ok $n - sdk: ${line#* - }" ;;
	"not ok "*) n=$((n + 1)); echo "not ok $n - sdk: ${line#* - }" ;;
	"1.."*) ;;
	*"passed, "*" failed"*) ;;
	*) echo "# $line" ;;
	esac
done <"$T_DIR/sdk.tap"
if [ "$rc" -ne 0 ] || ! grep -q '^# [0-9]* passed, 0 failed' "$T_DIR/sdk.tap"; then
	n=$((n + 1))
	echo "not ok $n - the SDK scenario exited with $rc"
	sed 's/^/# fake: /' "$T_DIR/fake.log" | tail -20
	exit 1
fi
echo "1..$n"
