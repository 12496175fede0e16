#!/bin/sh
# npm-install.sh <dir> <file>: installs <dir>'s pinned packages (npm ci from
# its package-lock.json) unless <file> (a path under <dir>) is there. Tests
# that run side by side share these folders: npm ci empties node_modules
# before it fills it, so a second test reading it then, or a second npm ci,
# would fail. One lock per folder (flock on <dir>/.npm-install.lock) makes
# them wait for each other, and whoever comes second finds <file> and
# installs nothing. npm's words go to stderr.
set -u
dir=$1 file=$2
exec 9>"$dir/.npm-install.lock" || exit 1
flock 9 || exit 1
[ -e "$dir/$file" ] && exit 0
cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2
