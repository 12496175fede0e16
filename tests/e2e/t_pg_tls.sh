#!/bin/bash
# t_pg_tls.sh — flowcgi on a PostgreSQL that takes loopback connections
# only over TLS and with a password (scram-sha-256), as a database on
# another machine would. The URL asks for verify-full against the server's
# certificate and names no password; libpq finds it in a password file
# (PGPASSFILE, as ~/.pgpass): an app made through nginx is stored and read
# back over TLS sessions (pg_stat_ssl). A URL without TLS, a wrong
# password, a certificate of another root: flowcgi exits 1 and says why;
# no log ever holds the password, not even one written into the URL.
. "$(dirname "$0")/lib.sh"

pg_private tls
PSQL="$(cat "$PGD/bin")/psql"
PW=$(cat "$PGD/password")
export FLOWCGI_STORAGE_BACKEND=postgres
export FLOWCGI_STORAGE_POSTGRES_URL="$PG_URL"
export FLOWCGI_STORAGE_POSTGRES_WAIT=2
export PGPASSFILE=$PGD/pgpass
J='Content-Type: application/json'
A=/console/api/apps

case $PG_URL in
*sslmode=verify-full*) ok 0 "the URL asks for verify-full" ;;
*) ok 1 "the URL asks for verify-full" ;;
esac
case $PG_URL in
*"$PW"*) ok 1 "the URL names no password" ;;
*) ok 0 "the URL names no password" ;;
esac

start_flowcgi fc || exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
TOKEN=$(admin_token)
req POST $A -H "$J" -d '{"name":"Over TLS","mode":"workflow"}'
is "$STATUS" 201 "an app made through nginx"
ID=$(jqr .id)
req GET "$A/$ID"
is "$STATUS $(jqr .name)" "200 Over TLS" "... read back"
is "$("$PSQL" "$PG_URL" -Atc "SELECT count(*) FROM flowcgi_apps WHERE k = convert_to('$ID', 'UTF8')")" \
    1 "... stored in the database"
SQL="SELECT count(*) FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
    WHERE a.datname = 'flowcgi' AND a.backend_type = 'client backend'
    AND a.pid <> pg_backend_pid()"
n=$("$PSQL" "$PG_URL" -Atc "$SQL AND s.ssl")
ok "$([ "${n:-0}" -ge 1 ] && echo 0 || echo 1)" "flowcgi's sessions are TLS ($n)"
is "$("$PSQL" "$PG_URL" -Atc "$SQL AND NOT s.ssl")" 0 "... all of them"

# fails <name> <why> <url> [env...]: a host with that URL exits 1, its log
# saying why (a fragment of libpq's words) and never the password.
fails() {
	local name=$1 why=$2 url=$3 pid rc
	shift 3
	mkdir -p "$T_DIR/$name"
	env "$@" FLOWCGI_SERVER_DATA_DIR="$T_DIR/$name" \
	    FLOWCGI_STORAGE_POSTGRES_URL="$url" \
	    "$FLOWCGI_BIN" serve --listen "127.0.0.1:$(free_port)" \
	    >"$T_DIR/$name.log" 2>&1 &
	pid=$!
	wait_until 20 sh -c "! kill -0 $pid 2>/dev/null"
	ok $? "$name: the host exits"
	wait "$pid"
	rc=$?
	is "$rc" 1 "$name: ... with status 1"
	grep -q "$why" "$T_DIR/$name.log"
	ok $? "$name: ... saying '$why'"
	grep -qF -e "$PW" -e "pw-in-the-url" "$T_DIR/$name.log"
	ok "$([ $? = 1 ] && echo 0 || echo 1)" "$name: ... and no password"
}
PORT=$(cat "$PGD/port")
fails plain "no encryption" \
    "postgres://flowcgi@127.0.0.1:$PORT/flowcgi?sslmode=disable"
printf '127.0.0.1:%s:flowcgi:flowcgi:wrong\n' "$PORT" >"$T_DIR/wrong.pgpass"
chmod 600 "$T_DIR/wrong.pgpass"
fails password "password authentication failed" "$PG_URL" \
    PGPASSFILE="$T_DIR/wrong.pgpass"
fails url-password "password authentication failed" \
    "postgres://flowcgi:pw-in-the-url@127.0.0.1:$PORT/flowcgi?sslmode=require"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$T_DIR/other.key" \
    -out "$T_DIR/other.crt" >/dev/null 2>&1
fails root "certificate verify failed" \
    "postgres://flowcgi@127.0.0.1:$PORT/flowcgi?sslmode=verify-full&sslrootcert=$T_DIR/other.crt"
grep -qF "$PW" "$T_DIR/fc.log"
ok "$([ $? = 1 ] && echo 0 || echo 1)" "the serving host's log holds no password"
