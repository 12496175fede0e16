#!/bin/bash
# t_prefix.sh — the API under prefixes other than / and /flow/: a nested
# one, one that starts like a URL root of ours (/admin-panel/), and a
# prefix forced with server.url_prefix.
. "$(dirname "$0")/lib.sh"

start_flowcgi fc || exit 1
start_nginx_at "/tools/flowcgi/ /admin-panel/" "127.0.0.1:$FC_PORT" || exit 1
TOKEN=$(admin_token)
J='Content-Type: application/json'

for pre in /tools/flowcgi /admin-panel; do
	TOKEN=none req GET "$pre/healthz"
	is "$STATUS" 200 "$pre: /healthz without auth"
	TOKEN=none req GET "$pre/console/api/apps"
	is "$STATUS" 401 "$pre: 401 without the token"
	req POST "$pre/console/api/apps" -H "$J" \
	    --data-binary "{\"name\":\"under $pre\",\"mode\":\"chat\"}"
	is "$STATUS" 201 "$pre: create"
	id=$(jqr .id)
	is "$(jqr .api_base_url)" "$pre/v1" \
	    "$pre: api_base_url carries the prefix"
	req GET "$pre/console/api/apps/$id"
	is "$(jqr .name)" "under $pre" "$pre: get"
	req PUT "$pre/console/api/apps/$id" -H "$J" -H 'If-Match: "1"' \
	    --data-binary '{"name":"renamed"}'
	is "$STATUS" 200 "$pre: put"
	req POST "$pre/console/api/apps/$id/copy"
	is "$STATUS" 201 "$pre: copy"
	req DELETE "$pre/console/api/apps/$id"
	is "$STATUS" 204 "$pre: delete"
	req PATCH "$pre/console/api/apps"
	is "$STATUS" 405 "$pre: 405"
	req GET "$pre/console/api/nothing"
	is "$(jqr .status)" 404 "$pre: JSON 404"
done
req GET /tools/flowcgi/console/api/apps
is "$(jqr .total)" 2 "both prefixes share one set of apps (the two copies)"
stop_nginx

# server.url_prefix forces the prefix instead of detecting it
FC_DATA=$T_DIR/forced FLOWCGI_SERVER_URL_PREFIX=/flow start_flowcgi forced ||
    exit 1
start_nginx "127.0.0.1:$FC_PORT" || exit 1
TOKEN=$(FC_DATA=$T_DIR/forced admin_token)
req GET /flow/console/api/apps
is "$STATUS" 200 "url_prefix=/flow: /flow/console/api/apps works"
req GET /console/api/apps
is "$STATUS" 404 "url_prefix=/flow: the unprefixed path is 404"
is "$(jqr .code)" not_found "... as JSON"
req POST /flow/console/api/apps -H "$J" --data-binary '{"name":"f","mode":"chat"}'
is "$(jqr .api_base_url)" "/flow/v1" \
    "url_prefix=/flow: api_base_url"
