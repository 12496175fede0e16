#!/bin/bash
# t_deploy_systemd.sh — socket activation without a running systemd:
# flowcgi started the way systemd starts a service of contrib/systemd/
# flowcgi.socket (listening socket on fd 3, LISTEN_FDS=1, LISTEN_PID = its
# own pid), by tests/tools/listen_fds on a TCP port and on a unix socket,
# and by systemd-socket-activate where it is installed; each serves through
# nginx and stops on SIGTERM with exit 0. A LISTEN_PID of another process
# is ignored, as sd_listen_fds(3) says. Where the binary finds its
# configuration: flowcgi.yml beside it (relative paths from there), below
# -c, FLOWCGI_CONFIG and FLOWCGI_* variables. The unit files pass
# `systemd-analyze verify` with ExecStart pointing at the built binary.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/tools/deploy_lib.sh"
trap 'deploy_cleanup; finish; exit $?' EXIT

LFDS=${FLOWCGI_BUILD:-$(dirname "$FLOWCGI_BIN")}/tools/listen_fds
export FLOWCGI_SERVER_DATA_DIR=$T_DIR/data
TOKEN=$("$FLOWCGI_BIN" token </dev/null)

# serves <label> <upstream> <pid>: through nginx (lib.sh's start_nginx),
# /healthz, a create and a list: 3 checks; then SIGTERM: exit 0 (2 more).
serves() {
	local l=$1 up=$2 pid=$3 rc
	must start_nginx "$up"
	TOKEN=none req GET /flow/healthz
	is "$STATUS $(jqr .status)" "200 ok" "$l: /healthz through nginx"
	req POST /flow/console/api/apps -H 'Content-Type: application/json' \
	    --data-binary "{\"name\":\"$l\",\"mode\":\"workflow\"}"
	is "$STATUS" 201 "$l: create an app"
	req GET "/flow/console/api/apps?name=$(printf '%s' "$l" | jq -sRr @uri)"
	is "$(jqr .total)" 1 "$l: list it"
	stop_nginx
	kill -TERM "$pid"; wait "$pid"; rc=$?
	is "$rc" 0 "$l: SIGTERM, exit 0"
	kill -0 "$pid" 2>/dev/null
	is "$?" 1 "$l: the process is gone"
}

# ====== LISTEN_FDS on a TCP port (tests/tools/listen_fds) ======

[ -x "$LFDS" ]
ok $? "tests/tools/listen_fds is built"
P=$(free_port)
# server.allowed_clients holds on systemd's socket too
FLOWCGI_SERVER_ALLOWED_CLIENTS=127.0.0.1 \
    "$LFDS" "127.0.0.1:$P" "$FLOWCGI_BIN" serve >>"$T_DIR/lfds.log" 2>&1 </dev/null &
LPID=$!
FLOWCGI_PIDS="$FLOWCGI_PIDS $LPID"
must wait_port "$P"
# the port is listen_fds' own from the start: wait for flowcgi's word
wait_until 10 grep -q 'accepting on the socket systemd passed (fd 3)' \
    "$T_DIR/lfds.log"
is "$(readlink "/proc/$LPID/fd/3" | cut -d: -f1)" socket \
    "LISTEN_FDS: fd 3 is the listening socket"
grep -q 'accepting on the socket systemd passed (fd 3)' "$T_DIR/lfds.log"
ok $? "LISTEN_FDS: flowcgi takes the socket from fd 3"
tr '\0' '\n' <"/proc/$LPID/environ" | grep -q '^LISTEN_FDS='
ok $? "LISTEN_FDS: (its initial environment had LISTEN_FDS)"
python3 "$TOP/tests/tools/fcgi_probe.py" --port "$P" --bind 127.0.0.2 \
    >"$T_DIR/probe.json"
is "$(jq -r .result "$T_DIR/probe.json")" closed \
    "LISTEN_FDS tcp: a client not in server.allowed_clients is closed"
serves "listen_fds tcp" "127.0.0.1:$P" "$LPID"

# ====== LISTEN_FDS on a unix socket, started with no arguments ======

SOCK=$T_DIR/activated.sock
"$LFDS" "unix:$SOCK" "$FLOWCGI_BIN" >>"$T_DIR/lfds-unix.log" 2>&1 </dev/null &
UPID=$!
FLOWCGI_PIDS="$FLOWCGI_PIDS $UPID"
wait_until 10 grep -q 'accepting on the socket systemd passed' \
    "$T_DIR/lfds-unix.log"
ok $? "LISTEN_FDS, no arguments: flowcgi serves on fd 3"
serves "listen_fds unix" "unix:$SOCK" "$UPID"
[ -S "$SOCK" ]
ok $? "LISTEN_FDS: the socket systemd owns is left in place on exit"

# ====== LISTEN_FDS on a unix socket with contrib/systemd/flowcgi.yml ======

# Its server.allowed_users (www-data, root) decide who is served; nginx's
# workers run as root here.
SD=$TOP/contrib/systemd
if [ "$(id -u)" = 0 ] && id www-data >/dev/null 2>&1; then
	SOCK2=$T_DIR/unit.sock
	"$LFDS" "unix:$SOCK2" "$FLOWCGI_BIN" serve -c "$SD/flowcgi.yml" \
	    >>"$T_DIR/lfds-yml.log" 2>&1 </dev/null &
	YPID=$!
	FLOWCGI_PIDS="$FLOWCGI_PIDS $YPID"
	wait_until 20 grep -q 'unix socket peers accepted: users \[www-data,root\]' \
	    "$T_DIR/lfds-yml.log"
	ok $? "flowcgi.yml: flowcgi checks the peers of systemd's socket"
	chmod 0666 "$SOCK2"	# the mode lets anyone in: the setting decides
	chmod 755 "$T_DIR"
	install -m 0755 "$TOP/tests/tools/fcgi_probe.py" "$T_DIR/fcgi_probe.py"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	    /usr/bin/python3 "$T_DIR/fcgi_probe.py" --unix "$SOCK2" \
	    >"$T_DIR/probe.json" 2>"$T_DIR/probe.err"
	is "$(jq -r .result "$T_DIR/probe.json")" closed \
	    "flowcgi.yml: a peer not in server.allowed_users is closed"
	serves "flowcgi.yml unix" "unix:$SOCK2" "$YPID"
else
	skip "contrib/systemd/flowcgi.yml's allowed_users: needs root and www-data"
fi

# ====== LISTEN_PID of another process: not ours, so not used ======

P2=$(free_port)
LISTEN_FDS=1 LISTEN_PID=1 "$FLOWCGI_BIN" serve --listen "127.0.0.1:$P2" \
    >>"$T_DIR/notours.log" 2>&1 </dev/null 3</dev/null &
NPID=$!
FLOWCGI_PIDS="$FLOWCGI_PIDS $NPID"
wait_port "$P2"
ok $? "LISTEN_PID of another process: flowcgi listens on server.listen"
kill -TERM "$NPID"; wait "$NPID"

# ====== systemd-socket-activate (package systemd), as systemd does it ======

if command -v systemd-socket-activate >/dev/null 2>&1; then
	P3=$(free_port)
	systemd-socket-activate -l "127.0.0.1:$P3" \
	    -E FLOWCGI_SERVER_DATA_DIR="$T_DIR/data" \
	    "$FLOWCGI_BIN" serve >>"$T_DIR/ssa.log" 2>&1 </dev/null &
	SPID=$!
	FLOWCGI_PIDS="$FLOWCGI_PIDS $SPID"
	must wait_port "$P3"
	serves "systemd-socket-activate" "127.0.0.1:$P3" "$SPID"
	grep -q 'accepting on the socket systemd passed' "$T_DIR/ssa.log"
	ok $? "systemd-socket-activate: flowcgi took the socket from fd 3"
else
	skip "systemd-socket-activate (package systemd) is not installed"
fi

# ====== where the binary finds its configuration ======

# flowcgi.yml beside the binary (a web root's flowcgi.fcgi); relative
# paths in it start at its folder, whatever the working directory.
B=$T_DIR/bin
mkdir -p "$B" "$T_DIR/elsewhere"
cp "$FLOWCGI_BIN" "$B/flowcgi.fcgi"
printf 'server:\n  data_dir: "../beside-data"\n' >"$B/flowcgi.yml"
printf 'server:\n  data_dir: "%s"\n' "$T_DIR/named-data" >"$T_DIR/named.yml"
(cd "$T_DIR/elsewhere" && env -u FLOWCGI_SERVER_DATA_DIR -u FLOWCGI_CONFIG \
    "$B/flowcgi.fcgi" token </dev/null >"$T_DIR/t1" 2>&1)
ok $? "beside the binary: flowcgi.yml is read ($(head -c 200 "$T_DIR/t1"))"
is "$(stat -c %a "$T_DIR/beside-data" 2>/dev/null)" 700 \
    "beside the binary: its relative data_dir starts at its folder; made 0700"
(cd "$T_DIR/elsewhere" && PATH=$B:$PATH env -u FLOWCGI_SERVER_DATA_DIR \
    -u FLOWCGI_CONFIG flowcgi.fcgi token </dev/null >/dev/null 2>&1)
is "$(ls "$T_DIR/elsewhere")" "" "beside the binary: found through PATH too"
env -u FLOWCGI_SERVER_DATA_DIR FLOWCGI_CONFIG=$T_DIR/named.yml \
    "$B/flowcgi.fcgi" token </dev/null >/dev/null 2>&1
[ -d "$T_DIR/named-data" ]
ok $? "FLOWCGI_CONFIG wins over the file beside the binary"
rm -rf "$T_DIR/named-data"
env -u FLOWCGI_SERVER_DATA_DIR -u FLOWCGI_CONFIG "$B/flowcgi.fcgi" token \
    -c "$T_DIR/named.yml" </dev/null >/dev/null 2>&1
[ -d "$T_DIR/named-data" ]
ok $? "-c wins over the file beside the binary"
FLOWCGI_SERVER_DATA_DIR=$T_DIR/env-data "$B/flowcgi.fcgi" token \
    </dev/null >/dev/null 2>&1
[ -d "$T_DIR/env-data" ]
ok $? "FLOWCGI_SERVER_DATA_DIR wins over its data_dir"
printf 'server:\n  lisen: "x"\n' >"$B/flowcgi.yml"
env -u FLOWCGI_CONFIG "$B/flowcgi.fcgi" token </dev/null >/dev/null \
    2>"$T_DIR/bad.err"
is "$?" 2 "beside the binary: a mistake in it stops start-up (exit 2)"
grep -qF "$B/flowcgi.yml:2: key 'server.lisen'" "$T_DIR/bad.err"
ok $? "... naming the file, line and key"

# ====== the unit files ======

SD=$TOP/contrib/systemd
grep -q '^ExecStart=/usr/local/bin/flowcgi serve' "$SD/flowcgi.service"
ok $? "flowcgi.service starts /usr/local/bin/flowcgi serve"
for k in 'NoNewPrivileges=yes' 'ProtectSystem=strict' 'PrivateTmp=yes' \
    'ReadWritePaths=/var/lib/flowcgi' 'User=flowcgi' 'StateDirectory=flowcgi'; do
	grep -qx "$k" "$SD/flowcgi.service"
	ok $? "flowcgi.service: $k"
done
FLOWCGI_SERVER_DATA_DIR=$T_DIR/yml "$FLOWCGI_BIN" token -c "$SD/flowcgi.yml" \
    </dev/null >/dev/null 2>"$T_DIR/yml.err"
ok $? "contrib/systemd/flowcgi.yml is a valid configuration $(head -c 200 "$T_DIR/yml.err")"
grep -qx 'ListenStream=/run/flowcgi/flowcgi.sock' "$SD/flowcgi.socket"
ok $? "flowcgi.socket listens on /run/flowcgi/flowcgi.sock"
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$T_DIR/units"
	sed "s|/usr/local/bin/flowcgi|$FLOWCGI_BIN|" "$SD/flowcgi.service" \
	    >"$T_DIR/units/flowcgi.service"
	cp "$SD/flowcgi.socket" "$T_DIR/units/"
	systemd-analyze verify "$T_DIR/units/flowcgi.socket" \
	    "$T_DIR/units/flowcgi.service" >"$T_DIR/verify.out" 2>&1
	rc=$?
	sed 's/^/# /' "$T_DIR/verify.out"
	is "$rc" 0 "systemd-analyze verify: exit 0"
	is "$(grep -c . "$T_DIR/verify.out")" 0 "systemd-analyze verify: no warnings"
else
	skip "systemd-analyze is not installed: the unit files are not verified"
fi
