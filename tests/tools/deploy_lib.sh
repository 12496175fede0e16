# deploy_lib.sh — sourced after tests/e2e/lib.sh by tests/e2e/t_deploy_*.sh
# and tests/bench/deploy.sh: a real Apache (Debian's apache2) with its own
# ServerRoot and configuration in a temporary directory, on a free loopback
# port, in front of flowcgi; the contrib files filled in with sed.
#
# Apache is started in the foreground (-D FOREGROUND, in its own session)
# as a child of the test, so that it is stopped with the test. As root its children (and so
# the flowcgi processes that mod_fcgid and mod_cgid start) run as
# AP_USER (www-data), never as root: Apache refuses that.

AP_MODDIR=/usr/lib/apache2/modules
APACHE_PIDS=

# ap_have: 0 when apache2 and the modules named are installed.
ap_have() {
	command -v apache2 >/dev/null 2>&1 || return 1
	for m in "$@"; do
		[ -f "$AP_MODDIR/mod_$m.so" ] || return 1
	done
}

if [ "$(id -u)" = 0 ]; then
	AP_USER=www-data
	id "$AP_USER" >/dev/null 2>&1 || AP_USER=nobody
	AP_GROUP=$(id -gn "$AP_USER")
	# Apache's children must reach the files under T_DIR.
	chmod 711 "$T_DIR"
else
	AP_USER=
	AP_GROUP=
fi

# ap_own <path...>: gives the paths to Apache's user (who runs the flowcgi
# processes that mod_fcgid and mod_cgid start).
ap_own() {
	[ -n "$AP_USER" ] && chown -R "$AP_USER:$AP_GROUP" "$@"
	return 0
}

# start_apache <name> <modules> <site conf file>: Apache on a free port
# (AP_PORT) with the modules named (space-separated, as in mod_<name>.so;
# the MPM AP_MPM (event by default), authz_core and mime are always loaded) and the
# site file included at server level; DocumentRoot is AP_DOCROOT (default
# AP_DIR/htdocs); AP_NO_ACCESS_LOG=1 leaves out the access log (as the
# nginx of the tests has none). Sets AP_PID, AP_DIR, AP_PORT, BASE.
start_apache() {
	local name=$1 mods=$2 site=$3 m
	AP_DIR=$T_DIR/apache-$name
	AP_PORT=$(free_port)
	mkdir -p "$AP_DIR/logs" "$AP_DIR/run" "$AP_DIR/fcgid"
	ap_own "$AP_DIR/fcgid"
	{
		echo "ServerRoot $AP_DIR"
		echo "ServerName 127.0.0.1"
		echo "Listen 127.0.0.1:$AP_PORT"
		echo "PidFile $AP_DIR/run/httpd.pid"
		echo "DefaultRuntimeDir $AP_DIR/run"
		echo "Mutex file:$AP_DIR/run default"
		echo "ErrorLog $AP_DIR/logs/error.log"
		echo "LogLevel warn"
		if [ -n "$AP_USER" ]; then
			echo "User $AP_USER"
			echo "Group $AP_GROUP"
		fi
		for m in "mpm_${AP_MPM:-event}" authz_core mime $mods; do
			echo "LoadModule ${m}_module $AP_MODDIR/mod_$m.so"
		done
		echo "TypesConfig /etc/mime.types"
		if [ -z "${AP_NO_ACCESS_LOG:-}" ]; then
			echo "LogFormat \"%h %r %>s %b %D\" short"
			echo "CustomLog $AP_DIR/logs/access.log short"
		fi
		echo "Timeout 300"
		echo "KeepAlive On"
		# event MPM: enough threads for the benchmark's connections
		echo "<IfModule mpm_event_module>"
		echo "  StartServers 2"
		echo "  ServerLimit 4"
		echo "  ThreadsPerChild 32"
		echo "  MaxRequestWorkers 128"
		echo "</IfModule>"
		echo "<IfModule mpm_prefork_module>"
		echo "  StartServers 4"
		echo "  MaxRequestWorkers 32"
		echo "</IfModule>"
		echo "<IfModule mod_fcgid.c>"
		echo "  FcgidIPCDir $AP_DIR/fcgid"
		echo "  FcgidProcessTableFile $AP_DIR/fcgid/shm"
		echo "</IfModule>"
		echo "<IfModule mod_cgid.c>"
		echo "  ScriptSock $AP_DIR/run/cgid.sock"
		echo "</IfModule>"
		echo "DocumentRoot ${AP_DOCROOT:-$AP_DIR/htdocs}"
		# as Debian's apache2.conf: nothing, then the web root
		echo "<Directory />"
		echo "  AllowOverride None"
		echo "  Require all denied"
		echo "</Directory>"
		echo "<FilesMatch \"^\\.ht\">"
		echo "  Require all denied"
		echo "</FilesMatch>"
		echo "<Directory ${AP_DOCROOT:-$AP_DIR/htdocs}>"
		echo "  AllowOverride None"
		echo "  Require all granted"
		echo "</Directory>"
		echo "Include $site"
	} >"$AP_DIR/httpd.conf"
	mkdir -p "${AP_DOCROOT:-$AP_DIR/htdocs}"
	apache2 -f "$AP_DIR/httpd.conf" -t >"$AP_DIR/logs/configtest.log" 2>&1 ||
	    { echo "# apache2 -t failed:"; sed 's/^/# /' \
	    "$AP_DIR/logs/configtest.log"; return 1; }
	# In a session of its own: on the way out the prefork MPM signals its
	# whole process group, which would otherwise be the test's.
	setsid apache2 -f "$AP_DIR/httpd.conf" -D FOREGROUND \
	    >>"$AP_DIR/logs/stdout.log" 2>&1 &
	AP_PID=$!
	APACHE_PIDS="$APACHE_PIDS $AP_PID"
	wait_port "$AP_PORT" || { echo "# apache did not start:"; \
	    sed 's/^/# /' "$AP_DIR/logs/error.log" "$AP_DIR/logs/stdout.log"; \
	    return 1; }
	BASE="http://127.0.0.1:$AP_PORT"
}

# ap_webroot <dir> <data_dir in flowcgi.yml: 0|1>: <dir>/home/public_html/flow
# holds flowcgi.fcgi, .htaccess and flowcgi.yml, as a user would lay them
# out (without the data_dir line: the data lands in var/ beside them); the
# home belongs to Apache's user, as on a shared host.
ap_webroot() {
	local d=$1/home/public_html/flow
	mkdir -p "$d"
	cp "$FLOWCGI_BIN" "$d/flowcgi.fcgi"
	chmod 755 "$d/flowcgi.fcgi"
	cp "$TOP/contrib/apache/htaccess" "$d/.htaccess"
	if [ "$2" = 1 ]; then
		cp "$TOP/contrib/apache/flowcgi.yml" "$d/flowcgi.yml"
	else
		sed '/^ *data_dir:/d' "$TOP/contrib/apache/flowcgi.yml" >"$d/flowcgi.yml"
	fi
	echo '<p>the rest of the site</p>' >"$1/home/public_html/index.html"
	ap_own "$1/home"
	sed "s|\"/var/www/html/flow\"|\"$d\"|" "$TOP/contrib/apache/flowcgi-fcgid.conf" \
	    >"$1/site.conf"
}
# stop_apache [pid]: stops one Apache (the last started by default) and
# waits for it and its children (flowcgi processes of mod_fcgid included).
stop_apache() {
	local p=${1:-$AP_PID} i
	[ -n "$p" ] || return 0
	kill -TERM "$p" 2>/dev/null
	for i in $(seq 100); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	APACHE_PIDS=$(echo " $APACHE_PIDS " | sed "s/ $p / /")
}

deploy_cleanup() {
	local p
	for p in $APACHE_PIDS; do stop_apache "$p"; done
	# flowcgi processes that mod_fcgid started and lost track of
	[ -n "${T_DIR:-}" ] && pgrep -f "$T_DIR/" | while read -r p; do
		kill "$p" 2>/dev/null; done
	return 0
}

# stream_gap <url> <key> <seconds>: runs tests/e2e/apps/slow.yml streaming
# (its code node sleeps <seconds>) and stamps each event line with the time
# it arrived; sets GAP_MS (last event - first event), FIRST_MS (first event
# after the request) and STREAM_DONE (the run's "done" output).
stream_gap() {
	local url=$1 key=$2 secs=$3 t0 first last f=$T_DIR/stamped.$$
	t0=$(date +%s%3N)
	curl -sS -N -H "Authorization: Bearer $key" \
	    -H 'Content-Type: application/json' \
	    -d "{\"inputs\":{\"seconds\":$secs},\"user\":\"s\",\"response_mode\":\"streaming\"}" \
	    "$url" 2>>"$T_DIR/curl.err" | while IFS= read -r line; do
		[ -n "$line" ] && printf '%s %s\n' "$(date +%s%3N)" "$line"
	done >"$f"
	first=$(grep -m1 'workflow_started' "$f" | cut -d' ' -f1)
	last=$(grep -m1 'workflow_finished' "$f" | cut -d' ' -f1)
	GAP_MS=$(( ${last:-0} - ${first:-0} ))
	FIRST_MS=$(( ${first:-0} - t0 ))
	STREAM_DONE=$(grep -m1 'workflow_finished' "$f" | cut -d' ' -f2- |
	    sed 's/^data: //' | jq -r .data.outputs.done 2>/dev/null)
}

# import_slow: imports tests/e2e/apps/slow.yml through BASE$1 (a prefix,
# "" or "/flow") with TOKEN; sets SLOW_APP and SLOW_KEY.
import_slow() {
	jq -n --rawfile y "$TOP/tests/e2e/apps/slow.yml" \
	    '{mode: "yaml-content", yaml_content: $y}' >"$T_DIR/slow.json"
	req POST "$1/console/api/apps/imports" \
	    -H 'Content-Type: application/json' --data-binary @"$T_DIR/slow.json"
	SLOW_APP=$(jqr .app_id)
	req POST "$1/console/api/apps/$SLOW_APP/api-keys"
	SLOW_KEY=$(jqr .token)
}

# crud_checks <label> <prefix>: create, read, list, update, delete through
# BASE<prefix> with TOKEN: 7 checks. Leaves CRUD_ID (a second app, kept).
crud_checks() {
	local l=$1 pre=$2 id
	req POST "$pre/console/api/apps" -H 'Content-Type: application/json' \
	    --data-binary "{\"name\":\"$l app\",\"mode\":\"workflow\"}"
	is "$STATUS" 201 "$l: create an app"
	id=$(jqr .id)
	is "$(jqr .api_base_url)" "$pre/v1" "$l: api_base_url carries the prefix (relative: no server.public_url)"
	req GET "$pre/console/api/apps/$id"
	is "$STATUS $(jqr .name)" "200 $l app" "$l: read it back"
	req PUT "$pre/console/api/apps/$id" -H 'Content-Type: application/json' \
	    --data-binary "{\"name\":\"$l renamed\"}"
	is "$STATUS $(jqr .name)" "200 $l renamed" "$l: update it"
	req GET "$pre/console/api/apps?name=renamed"
	is "$(jqr '.data[0].id')" "$id" "$l: find it in the list"
	req DELETE "$pre/console/api/apps/$id"
	is "$STATUS" 204 "$l: delete it"
	req GET "$pre/console/api/apps/$id"
	is "$STATUS $(jqr .code)" "404 not_found" "$l: gone, a JSON 404"
}

# admin_check <label> <prefix>: GET <prefix>/admin/ reaches flowcgi: the
# admin page (200 HTML, and the files it loads by relative URLs), or,
# until it exists, flowcgi's JSON 404.
admin_check() {
	local l=$1 pre=$2
	local a bad=""
	req GET "$pre/admin/"
	if [ "$STATUS" = 200 ]; then
		printf '%s' "$HDRS" | grep -qi '^content-type: text/html'
		ok $? "$l: the admin page is served (HTML)"
		# its scripts and styles, by the relative URLs the page uses
		for a in $(printf '%s' "$BODY" | grep -o -E '(src|href)="[^"#:/][^"]*"' |
		    sed -E 's/^[a-z]+="//; s/"$//' | sort -u); do
			req GET "$pre/admin/$a"
			[ "$STATUS" = 200 ] || bad="$bad $a:$STATUS"
		done
		is "${bad:-none}" none "$l: the admin page's own files load"
	else
		is "$STATUS $(jqr .code) $(jqr .status)" "404 not_found 404" \
		    "$l: /admin/ reaches flowcgi (its JSON 404 until the page exists)"
	fi
}

# upload_check <label> <prefix> <app id> <key>: a multipart upload to
# <prefix>/v1/files/upload with the app key, and 1 MiB into the app's files
# and back, byte for byte: 2 checks.
upload_check() {
	local l=$1 pre=$2 app=$3 key=$4 node
	printf 'deployed %s\n' "$l" >"$T_DIR/up.txt"
	TOKEN=$key req POST "$pre/v1/files/upload" \
	    -F "file=@$T_DIR/up.txt;type=text/plain" -F user=u
	is "$STATUS $(jqr .name) $(jqr .size)" "201 up.txt $(wc -c <"$T_DIR/up.txt")" \
	    "$l: a file upload (multipart, app key)"
	[ -f "$T_DIR/up.bin" ] || head -c 1048576 /dev/urandom >"$T_DIR/up.bin"
	req POST "$pre/console/api/apps/$app/assets/files?name=up.bin&replace=1" \
	    -H 'Content-Type: application/octet-stream' --data-binary @"$T_DIR/up.bin"
	node=$(jqr .id)
	curl -sS -o "$T_DIR/down.bin" -H "Authorization: Bearer $TOKEN" \
	    "$BASE$pre/console/api/apps/$app/assets/files/$node/download"
	cmp -s "$T_DIR/up.bin" "$T_DIR/down.bin"
	ok $? "$l: 1 MiB up into the app's files and back ($STATUS)"
}

# must <command...>: runs a start-up step; when it fails, that is a failed
# check (lib.sh's finish counts only checks) and the test ends.
must() {
	"$@" || { ok 1 "start-up: $*"; exit 1; }
}
