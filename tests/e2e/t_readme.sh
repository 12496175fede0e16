# t_readme.sh — runs the README's quick start exactly as written, against
# a real nginx and flowcgi (only the address and data directory differ).
. "$(dirname "$0")/lib.sh"

start_flowcgi fc
start_nginx "127.0.0.1:$FC_PORT"
block=$(sed -n '/<!-- quickstart -->/,/<!-- \/quickstart -->/p' "$TOP/README.md" |
    sed '1,2d;$d' | sed '$d')
ok "$([ -n "$block" ] && echo 0 || echo 1)" "README has a quick start block"
printf '%s\n' "$block" |
    sed "s|http://127.0.0.1:8080|$BASE|; s|FLOWCGI_SERVER_DATA_DIR=var|FLOWCGI_SERVER_DATA_DIR=$T_DIR/data|; s|build/release/flowcgi|$FLOWCGI_BIN|" \
    >"$T_DIR/quickstart.sh"
(cd "$TOP" && bash -e "$T_DIR/quickstart.sh") >"$T_DIR/out.txt" 2>"$T_DIR/err.txt"
ok $? "the quick start runs without an error"
grep -q '"greeting": "Good day, Ada. It is a pleasure to meet you."' "$T_DIR/out.txt"
ok $? "the blocking run answers the formal greeting"
sed -n 's/^data: //p' "$T_DIR/out.txt" | jq -r .event >"$T_DIR/events"
is "$(head -1 "$T_DIR/events") $(tail -1 "$T_DIR/events")" \
    "workflow_started workflow_finished" "the streaming run sends events"
is "$(sed -n 's/^data: //p' "$T_DIR/out.txt" | jq -r 'select(.event=="workflow_finished") | .data.outputs.greeting')" \
    "Hey Ada! Welcome!" "the streamed run takes the casual branch"
out=$(cd "$TOP" && FLOWCGI_SERVER_DATA_DIR=$T_DIR/cli "$FLOWCGI_BIN" run \
    contrib/examples/greeting.yml --input name=Ada 2>/dev/null)
is "$(printf '%s' "$out" | jq -r .greeting)" "Hey Ada! Welcome!" "flowcgi run as the README says"
