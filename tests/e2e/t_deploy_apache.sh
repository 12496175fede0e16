#!/bin/bash
# t_deploy_apache.sh — flowcgi behind a real Apache (Debian's apache2) the
# ways contrib/apache/ and docs/deploy.md describe, with the contrib files
# themselves (ports and paths filled in with sed):
#   1. mod_proxy_fcgi (flowcgi-proxy-fcgi.conf) to a flowcgi on a TCP port
#      (server.allowed_clients), then on a unix socket (mode 0660 in
#      Apache's group, server.allowed_users), under /flow/;
#   2. mod_fcgid with the shared-hosting layout: flowcgi.fcgi, .htaccess
#      (htaccess) and flowcgi.yml in public_html/flow/, the data directory
#      made by flowcgi outside the web root (flowcgi-fcgid.conf is the
#      server's part);
#   3. plain CGI, mod_cgid (event MPM, as Debian's a2enmod cgi picks) with
#      the same .htaccess and a flowcgi.yml without data_dir: the data
#      directory lands in the folder and must not be served; then mod_cgi
#      (prefork MPM) on the same folder.
# Each: CRUD, a streamed run whose first event comes before the run ends,
# uploads, the admin page, files that must never be served.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/tools/deploy_lib.sh"
trap 'deploy_cleanup; finish; exit $?' EXIT

if ! ap_have proxy proxy_fcgi fcgid cgid rewrite; then
	echo "# apache2 with proxy_fcgi, fcgid (libapache2-mod-fcgid), cgid and"
	echo "# rewrite is not installed: contrib/install-deps.sh installs it"
	ok 1 "apache2 and its modules are installed"
	exit 1
fi
CONTRIB=$TOP/contrib/apache
J='Content-Type: application/json'

# ====== 1. mod_proxy_fcgi ======

# TCP only from Apache's address, as docs/deploy.md sets it
FLOWCGI_SERVER_ALLOWED_CLIENTS=127.0.0.1 must start_flowcgi fc
TOKEN=$(admin_token)
grep -q 'TCP clients accepted from \[127.0.0.1\] (server.allowed_clients)' \
    "$T_DIR/fc.log"
ok $? "proxy_fcgi: flowcgi on TCP serves only server.allowed_clients"
# the two Define lines swapped with docs/deploy.md's very command, then
# the port filled in
sed -e 's|^Define FLOWCGI_BACKEND|#&|' \
    -e 's|^#Define FLOWCGI_BACKEND "fcgi:|Define FLOWCGI_BACKEND "fcgi:|' \
    "$CONTRIB/flowcgi-proxy-fcgi.conf" |
    sed "s|^Define FLOWCGI_BACKEND \"fcgi://127.0.0.1:9000\"|Define FLOWCGI_BACKEND \"fcgi://127.0.0.1:$FC_PORT\"|" \
    >"$T_DIR/proxy-tcp.conf"
grep -qF "sed -i -e 's|^Define FLOWCGI_BACKEND|#&|'" "$TOP/docs/deploy.md" &&
    grep -qF "    -e 's|^#Define FLOWCGI_BACKEND \"fcgi:|Define FLOWCGI_BACKEND \"fcgi:|'" \
    "$TOP/docs/deploy.md"
ok $? "docs/deploy.md swaps the Define lines the same way"
grep -q "^Define FLOWCGI_BACKEND \"fcgi://127.0.0.1:$FC_PORT\"" "$T_DIR/proxy-tcp.conf"
ok $? "proxy_fcgi: the contrib file names the TCP backend"
must start_apache proxy "proxy proxy_fcgi" "$T_DIR/proxy-tcp.conf"
TOKEN=none req GET /flow/healthz
is "$STATUS $(jqr .status)" "200 ok" "proxy_fcgi: /flow/healthz"
TOKEN=none req GET /flow/console/api/apps
is "$STATUS $(jqr .code)" "401 unauthorized" "proxy_fcgi: 401 without the token"
crud_checks proxy_fcgi /flow
admin_check proxy_fcgi /flow
import_slow /flow
[ -n "$SLOW_KEY" ] && [ "$SLOW_KEY" != null ]
ok $? "proxy_fcgi: imported the slow app and made a key"
stream_gap "$BASE/flow/v1/workflows/run" "$SLOW_KEY" 2
echo "# proxy_fcgi: first event after $FIRST_MS ms, $GAP_MS ms before the last"
[ "$GAP_MS" -ge 1500 ]
ok $? "proxy_fcgi: the first event came ${GAP_MS} ms before the run ended"
is "$STREAM_DONE" yes "proxy_fcgi: the streamed run finished with its outputs"
upload_check proxy_fcgi /flow "$SLOW_APP" "$SLOW_KEY"
req GET /console/api/apps
is "$STATUS" 404 "proxy_fcgi: nothing outside /flow/ goes to flowcgi"
stop_apache
kill -TERM "$FC_PID"; wait "$FC_PID"

# The unix-socket variant, the file's own Define: 0660 for Apache's
# group, as contrib/systemd/flowcgi.yml sets it, and only Apache's user
# served (server.allowed_users).
SOCK=$T_DIR/fc.sock
APU=${AP_USER:-$(id -un)}
FLOWCGI_SERVER_DATA_DIR=$T_DIR/data \
    FLOWCGI_SERVER_SOCKET_GROUP=${AP_GROUP:-$(id -gn)} \
    FLOWCGI_SERVER_ALLOWED_USERS=$APU \
    "$FLOWCGI_BIN" serve --listen "unix:$SOCK" >>"$T_DIR/unix.log" 2>&1 </dev/null &
UPID=$!
FLOWCGI_PIDS="$FLOWCGI_PIDS $UPID"
wait_until 10 grep -q "listening on unix:$SOCK" "$T_DIR/unix.log"
is "$(stat -c '%a %G' "$SOCK")" "660 ${AP_GROUP:-$(id -gn)}" \
    "proxy_fcgi: the socket is 0660 in Apache's group"
sed "s|^Define FLOWCGI_BACKEND \"unix:/run/flowcgi/flowcgi.sock|Define FLOWCGI_BACKEND \"unix:$SOCK|" \
    "$CONTRIB/flowcgi-proxy-fcgi.conf" >"$T_DIR/proxy-unix.conf"
grep -q "^Define FLOWCGI_BACKEND \"unix:$SOCK|fcgi://localhost\"" "$T_DIR/proxy-unix.conf"
ok $? "proxy_fcgi: the contrib file's unix-socket line, filled in"
must start_apache proxyunix "proxy proxy_fcgi" "$T_DIR/proxy-unix.conf"
req GET "/flow/console/api/apps/$SLOW_APP"
is "$STATUS $(jqr .name)" "200 Slow" "proxy_fcgi over a unix socket: the same data"
stream_gap "$BASE/flow/v1/workflows/run" "$SLOW_KEY" 1
[ "$GAP_MS" -ge 700 ]
ok $? "proxy_fcgi over a unix socket: streamed (${GAP_MS} ms between first and last)"
if [ "$APU" != root ] && [ "$(id -u)" = 0 ]; then
	# root may open the socket (any mode) but is not Apache's user
	python3 "$TOP/tests/tools/fcgi_probe.py" --unix "$SOCK" \
	    >"$T_DIR/probe.json"
	is "$(jq -r .result "$T_DIR/probe.json")" closed \
	    "proxy_fcgi: a peer other than Apache's user is closed (server.allowed_users)"
else
	skip "a second user to connect as (needs root)"
fi
stop_apache
kill -TERM "$UPID"; wait "$UPID"

# ====== 2. mod_fcgid, the shared-hosting layout ======

# the admin token, once flowcgi (as Apache's user) has made it
token_of() { head -n1 "$1/admin_token" 2>/dev/null; }

W=$T_DIR/fcgid
ap_webroot "$W" 1
grep -q "<Directory \"$W/home/public_html/flow\">" "$W/site.conf"
ok $? "fcgid: the contrib server part names the folder"
AP_DOCROOT=$W/home/public_html must start_apache fcgid "fcgid rewrite" \
    "$W/site.conf"
TOKEN=none req GET /flow/healthz
is "$STATUS $(jqr .status)" "200 ok" "fcgid: /flow/healthz starts flowcgi.fcgi"
DATA=$W/home/flowcgi-data
[ -d "$DATA" ]
ok $? "fcgid: flowcgi made the data directory that flowcgi.yml names (outside the web root)"
is "$(stat -c %a "$DATA")" 700 "fcgid: ... mode 0700"
[ -z "$AP_USER" ] || is "$(stat -c %U "$DATA")" "$AP_USER" \
    "fcgid: ... owned by Apache's user, who runs flowcgi"
TOKEN=$(token_of "$DATA")
[ -n "$TOKEN" ]
ok $? "fcgid: the admin token is in the data directory"
pgrep -f "$W/home/public_html/flow/flowcgi.fcgi" >/dev/null
ok $? "fcgid: a flowcgi.fcgi process stays up between requests"
crud_checks fcgid /flow
admin_check fcgid /flow
import_slow /flow
stream_gap "$BASE/flow/v1/workflows/run" "$SLOW_KEY" 2
echo "# fcgid: first event after $FIRST_MS ms, $GAP_MS ms before the last"
[ "$GAP_MS" -ge 1500 ]
ok $? "fcgid: the first event came ${GAP_MS} ms before the run ended"
is "$STREAM_DONE" yes "fcgid: the streamed run finished with its outputs"
upload_check fcgid /flow "$SLOW_APP" "$SLOW_KEY"
code=$(curl -s -o /dev/null -w '%{http_code}' "$BASE/flow/")
is "$code" 302 "fcgid: the folder itself redirects to the admin page"
# Never served: the settings beside the binary, the data (here outside
# the web root), the binary's folder listing.
# Keys that would sit in the folder if the data directory were put there.
echo fca-leak >"$W/home/public_html/flow/secret.key"
echo fca-leak >"$W/home/public_html/flow/link.key"
for p in /flow/flowcgi.yml /flow/.htaccess /flow/../flowcgi-data/admin_token \
    /flowcgi-data/admin_token /flow/secret.key /flow/link.key; do
	code=$(curl -s --path-as-is -o "$T_DIR/leak" -w '%{http_code}' "$BASE$p")
	case $code in 400|403|404) r=0 ;; *) r=1 ;; esac
	grep -q "fca-" "$T_DIR/leak" && r=1
	ok $r "fcgid: $p is not served ($code)"
done
is "$(curl -s "$BASE/index.html")" '<p>the rest of the site</p>' \
    "fcgid: the rest of the web root is untouched"
stop_apache

# ====== 3. plain CGI (mod_cgid), flowcgi.yml without data_dir ======

W=$T_DIR/cgi
ap_webroot "$W" 0
AP_DOCROOT=$W/home/public_html must start_apache cgi "cgid rewrite" \
    "$W/site.conf"
TOKEN=none req GET /flow/healthz
is "$STATUS $(jqr .status)" "200 ok" "cgi: /flow/healthz"
DATA=$W/home/public_html/flow/var
is "$(stat -c %a "$DATA" 2>/dev/null)" 700 \
    "cgi: with no data_dir the data directory is var/ beside the binary, mode 0700"
TOKEN=$(token_of "$DATA")
! pgrep -f "$W/home/public_html/flow/flowcgi.fcgi" >/dev/null
ok $? "cgi: no flowcgi process is left after a request"
crud_checks cgi /flow
admin_check cgi /flow
import_slow /flow
stream_gap "$BASE/flow/v1/workflows/run" "$SLOW_KEY" 2
echo "# cgi: first event after $FIRST_MS ms, $GAP_MS ms before the last"
[ "$GAP_MS" -ge 1500 ]
ok $? "cgi: the first event came ${GAP_MS} ms before the run ended"
is "$STREAM_DONE" yes "cgi: the streamed run finished with its outputs"
upload_check cgi /flow "$SLOW_APP" "$SLOW_KEY"
for p in /flow/var/admin_token /flow/var/data.mdb /flow/var/ \
    /flow/var/lock.mdb /flow/flowcgi.yml /flow/.htaccess; do
	code=$(curl -s -o "$T_DIR/leak" -w '%{http_code}' "$BASE$p")
	case $code in 403|404) r=0 ;; *) r=1 ;; esac
	grep -q "fca-" "$T_DIR/leak" && r=1
	ok $r "cgi: $p is not served ($code)"
done
stop_apache

# mod_cgi proper (prefork MPM: Debian's a2enmod cgi there), the same folder
AP_MPM=prefork AP_DOCROOT=$W/home/public_html must start_apache cgiprefork \
    "cgi rewrite" "$W/site.conf"
req GET "/flow/console/api/apps/$SLOW_APP"
is "$STATUS $(jqr .name)" "200 Slow" "mod_cgi (prefork): the same data through the same .htaccess"
crud_checks mod_cgi /flow
stream_gap "$BASE/flow/v1/workflows/run" "$SLOW_KEY" 2
echo "# mod_cgi: first event after $FIRST_MS ms, $GAP_MS ms before the last"
[ "$GAP_MS" -ge 1500 ]
ok $? "mod_cgi: the first event came ${GAP_MS} ms before the run ended"
stop_apache
