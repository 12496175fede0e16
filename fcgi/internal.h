/*
 * internal.h — the request, the arena, responses and routes; private to
 * fcgi/.
 */
#ifndef FLOWCGI_FCGI_INTERNAL_H
#define FLOWCGI_FCGI_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "fcgi/fcgi.h"

/* ====== Arena: allocations that die with the request ====== */

struct arena;

/* NULL when out of memory. */
struct arena *arena_new(void);
/* Runs the cleanups (last registered first), then frees every block. */
void	arena_free(struct arena *a);
/* Zeroed memory living as long as a; NULL when out of memory. */
void	*arena_alloc(struct arena *a, size_t n);
char	*arena_strdup(struct arena *a, const char *s);
char	*arena_strndup(struct arena *a, const char *s, size_t n);
char	*arena_printf(struct arena *a, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Calls fn(p) when a is freed. Returns 0 or -1 when out of memory. */
int	arena_cleanup_add(struct arena *a, void (*fn)(void *), void *p);
/* Registers json_decref(j) on a and returns j (NULL passes through). */
json_t	*arena_json(struct arena *a, json_t *j);

/* ====== The request ====== */

/* How a request reaches us: a FastCGI request or plain CGI stdio. */
struct req_io {
	const char	*(*param)(void *ctx, const char *name);
	ssize_t		 (*read)(void *ctx, char *buf, size_t n);
	int		 (*write)(void *ctx, const char *buf, size_t n);
	int		 (*flush)(void *ctx);
	/* 1 once the client went away (hung up, or stopped reading) */
	int		 (*gone)(void *ctx);
	void		*ctx;
};

/*
 * 1 once the server's stop grace (server.shutdown_grace) is over: runs
 * still going must stop now.
 */
int	server_cancelling(void);

/* A condition variable whose timed waits count CLOCK_MONOTONIC time. */
void	cond_init_monotonic(pthread_cond_t *cv);

/* ====== Peers: who may use the FastCGI socket (peer.c) ====== */

struct sockaddr;
struct conf;

struct peer_net {
	unsigned char	 addr[16];	/* IPv4 as ::ffff:a.b.c.d */
	int		 bits;		/* prefix length over the 16 bytes */
};

struct peer_acl {
	int		 any_addr;	/* "*" in server.allowed_clients */
	struct peer_net	*nets;
	int		 nnets;
	uid_t		*uids;		/* server.allowed_users */
	int		 nuids;
	gid_t		*gids;		/* server.allowed_groups */
	int		 ngids;
};

/*
 * Reads server.allowed_clients, allowed_users and allowed_groups into acl
 * (names resolved to ids now; an empty allowed_clients lets no TCP peer
 * in, "*" any). 0, or -1 with err saying which entry is wrong; acl then
 * holds nothing. peer_acl_release frees it.
 */
int	peer_acl_init(struct peer_acl *acl, const struct conf *c, char *err,
	    size_t errsz);
void	peer_acl_release(struct peer_acl *acl);
/*
 * 1 when sa, an accepted TCP peer, is in server.allowed_clients (any other
 * family is not for this list: 1); shown (may be NULL) gets the address as
 * text for the log.
 */
int	peer_addr_allowed(const struct peer_acl *acl, const struct sockaddr *sa,
	    char *shown, size_t shownsz);
/* 1 when a unix socket peer's uid or primary gid is allowed (both lists
 * empty: any). */
int	peer_cred_allowed(const struct peer_acl *acl, uid_t uid, gid_t gid);
/* An address as 16 bytes (IPv4 as ::ffff:a.b.c.d); 0, or -1 if it is none. */
int	peer_addr_parse(const char *s, unsigned char out[16]);
/* 1 when addr is in entry ("10.0.0.5", "10.0.0.0/8", "::1", "fd00::/8"). */
int	peer_addr_in(const unsigned char addr[16], const char *entry);

#define REQ_MAX_CAPTURES 4
#define REQ_MAX_HEADERS 9

struct req {
	struct arena		*a;
	const struct req_io	*io;
	const struct conf	*conf;
	struct engine		*eng;
	const unsigned char	*admin_token_hash;	/* SHA-256 */

	const char	*method;
	const char	*path;		/* after the prefix, not decoded */
	const char	*prefix;	/* mount prefix: "" or "/flow" */
	const char	*query;		/* raw QUERY_STRING, never NULL */
	const char	*content_type;	/* never NULL */
	int64_t		 content_length;	/* -1 when not given */

	char		*body;		/* NUL-terminated once read */
	size_t		 body_len;
	json_t		*json;		/* parsed JSON body, or NULL */

	char		*captures[REQ_MAX_CAPTURES];	/* decoded {} */
	int		 ncaptures;

	const char	*hdr_name[REQ_MAX_HEADERS];	/* extra response */
	const char	*hdr_value[REQ_MAX_HEADERS];
	int		 nhdrs;
	int		 status;	/* sent status, 0 before */
	char		 app_id[37];	/* AUTH_APP: the key's app */
	const char	*route;		/* the matched route's pattern, or
					 * "unmatched": a metric label */
	char		 request_id[65]; /* X-Request-Id, given or made */
	const json_t	*model_params;	/* the web API's more-like-this:
					 * completion_params set over the
					 * app's for the run it starts
					 * (run_opts.model_params), or NULL */
};

/* A CGI/FastCGI parameter such as "HTTP_IF_MATCH", or NULL. */
const char *req_param(struct req *r, const char *name);

/* The errors of http_form_decode. */
enum http_decode_err {
	HTTP_ENUL = -300,	/* a byte decodes to NUL */
	HTTP_ENOMEM = -301,
};

/*
 * Percent-decodes s[0..n) ('+' is a space, as in a form) into a new
 * NUL-terminated string in a. Returns 0 with *out, HTTP_ENUL when a byte
 * decodes to NUL (the C string would be cut short, so no value is given),
 * or HTTP_ENOMEM; *out is NULL on an error.
 */
int	http_form_decode(struct arena *a, const char *s, size_t n,
	    char **out);

/*
 * Checks that every name and value of the query decodes, none holding a
 * NUL: the router calls it once for every request it dispatches, so no
 * handler sees a query value cut short. Returns 0, or -1 after answering
 * 400 (a NUL) or 500 (out of memory).
 */
int	req_query_check(struct req *r);

/*
 * Decoded value of query parameter name, in r's arena; NULL when absent.
 * A value that does not decode (a NUL, out of memory) is NULL after the
 * request was answered 400 or 500, so what the handler sends after is
 * dropped; behind the router (req_query_check) only out of memory can.
 */
const char *req_query(struct req *r, const char *name);

/* 1 when query parameter name is "true" (any case) or "1". */
int	req_query_true(struct req *r, const char *name);

/*
 * Integer query parameter name into *out: def when absent or empty, else
 * a decimal from lo to hi. Returns 0, or -1 after answering 400.
 */
int	req_query_int(struct req *r, const char *name, int def, int lo,
	    int hi, int *out);

/*
 * Where this flowcgi is mounted, for URLs in answers: server.public_url
 * ("https://host[/prefix]"), or the bare prefix ("" or "/flow") when it is
 * not set, so that links are relative; the Host header is never used.
 * Lives in r's arena (or the configuration).
 */
const char *req_base_url(struct req *r);

/*
 * Reads the whole body, at most max bytes. Returns 0, or an HTTP status
 * (413 over the limit, 400 when it ends short) after answering with it.
 */
int	req_read_body(struct req *r, int64_t max);

/*
 * Reads and parses a JSON body into r->json (an empty body is {}).
 * Returns 0, or the HTTP status it answered with: 413, 415, 400.
 */
int	req_read_json(struct req *r);

/*
 * String field k of r->json into *out (NULL when absent or null; lives as
 * long as r->json). Returns 0, or -1 after answering 400: not a string, or
 * missing while required.
 */
int	req_json_string(struct req *r, const char *k, int required,
	    const char **out);

/* Adds a response header for the next resp_* call. */
void	resp_header(struct req *r, const char *name, const char *value);
/* Content-Disposition: attachment with the file name (RFC 5987 form). */
void	resp_attachment(struct req *r, const char *filename);
/* The Content-Type of a downloaded file, by the extension of its name
 * (a path's last part); application/octet-stream when unknown. */
const char *resp_mime_of(const char *name);

/* Sends status and the JSON body (stolen: resp_json decrefs it). */
void	resp_json(struct req *r, int status, json_t *body);

/* Sends {code, message, status}. message is a printf format. */
void	resp_error(struct req *r, int status, const char *code,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Sends data[0..len) as it is, with the given Content-Type. */
void	resp_bytes(struct req *r, int status, const char *ctype,
	    const void *data, size_t len);

/*
 * The one byte range "Range: bytes=..." (RFC 9110 14.1.2) asks of a body
 * of size bytes: 1 with [*off, *off + *len), 0 when the whole body is the
 * answer (no header, another unit, several ranges, or a header that does
 * not parse: a server may ignore it), -1 when no byte of it is in the body
 * (416). Suffix ranges (bytes=-N) and open ones (bytes=N-) are understood.
 */
int	http_range(const char *h, uint64_t size, uint64_t *off, uint64_t *len);

/*
 * Sends stored blob sum (size bytes; engine_asset_open gives both) with the
 * given Content-Type, a chunk at a time (engine_blob_send): a file of any
 * size costs one chunk of memory. A Range header of the request asking
 * one range is answered 206 with that range (416 when none of it is
 * there); else 200 and the whole. Should its bytes go away midway (the
 * file replaced, its old contents let go), the answer ends short of its
 * Content-Length, logged: a broken download, never other bytes.
 */
void	resp_blob(struct req *r, const char *ctype, const char *sum,
	    uint64_t size);

/*
 * Starts a streamed response: status 200, text/event-stream, no caching,
 * X-Accel-Buffering: no. Then write with resp_write, flush with
 * resp_flush.
 */
void	resp_begin_stream(struct req *r);
int	resp_write(struct req *r, const char *s, size_t n);
int	resp_flush(struct req *r);

/* The reason phrase of HTTP status code status ("Partial Content"); a
 * code flowcgi never sends gets its class's ("Client Error"). Static. */
const char *http_status_text(int status);

/* Sends a status with no body (204, 304). */
void	resp_empty(struct req *r, int status);

/* Maps an ENGINE_E* code to an error response; err explains EINVAL. */
void	resp_engine_error(struct req *r, int rc, const char *err,
	    const char *what);

/* Maps a STORE_E* code of a handler's own store read or write to the
 * error response resp_engine_error gives for the engine's; what names
 * the thing ("site", "saved messages"). */
void	resp_store_error(struct req *r, int rc, const char *what);

/*
 * The run run_id, when it belongs to app_id; the caller decrefs it. NULL
 * after answering: the engine's error, or 404 "<what> not found".
 */
json_t	*req_app_run(struct req *r, const char *app_id,
	    const char *run_id, const char *what);

/* ====== multipart/form-data ====== */

struct mp_part {
	const char	*name;		/* form field name */
	const char	*filename;	/* NULL when not a file */
	const char	*content_type;	/* NULL when not given */
	const char	*data;		/* points into the body */
	size_t		 len;
};

/* 1 when content_type is multipart/form-data (leading spaces allowed). */
int	multipart_is_form(const char *content_type);
/* The boundary parameter of a multipart/form-data content type (on a),
 * or NULL when it has none that is valid. */
char	*multipart_boundary(struct arena *a, const char *content_type);

/*
 * Splits body by the boundary named in content_type. On success *parts
 * (in arena a) holds *nparts parts whose data points into body. Returns 0,
 * or -1 with a message in err (also when a part's headers hold a NUL
 * byte: its name or file name would be cut short).
 */
int	multipart_parse(struct arena *a, const char *content_type,
	    const char *body, size_t len, size_t max_parts,
	    struct mp_part **parts, size_t *nparts, char *err, size_t errsz);

/*
 * Text field p's value as a NUL-terminated string in r's arena into *out.
 * Returns 0, or -1 after answering 400 when it holds a NUL byte (the
 * string would be cut short) or 500 out of memory.
 */
int	req_part_text(struct req *r, const struct mp_part *p,
	    const char **out);

/* ====== Server-sent event streams (sse.c) ====== */

/*
 * Runs o (its on_start / on_event / arg are set here) with the answer
 * streamed as server-sent events. Returns engine_run's code; every error
 * has been answered: as JSON before the stream started, as an "error"
 * event after. *out as engine_run.
 */
int	sse_run(struct req *r, struct run_opts *o, char *err, json_t **out);

/*
 * Answers GET /api/workflow/{task_id}/events: the events of run task_id
 * of app_id and end user user (engine_run_events) as a server-sent event
 * stream, with its pings and flushes; a run not found or of another kind
 * is the JSON error before any stream.
 */
void	sse_follow(struct req *r, const char *app_id, const char *user,
	    const char *task_id);

/* ====== Run admission (admit.c) ====== */

struct run_slot {
	struct engine	*e;
	int64_t		 app_slot;	/* the held app slot */
	int		 app_held;	/* app_slot is held */
	int		 counted;	/* counted in the process's runs */
};

/*
 * Admits one run of app_id: within server.max_runs for the process and
 * app.max_active_requests for the app (across processes). Returns 0 with
 * *s held (run_release frees it) and o->cancelled set to stop the run when
 * the server's stop grace is over, or when the client went away and
 * run.stop_on_disconnect is set; or -1 after answering 503 or 429 with
 * Retry-After.
 */
int	run_admit(struct req *r, const char *app_id, struct run_opts *o,
	    struct run_slot *s);
void	run_release(struct run_slot *s);

/* ====== Signed links (files.c) ====== */

/*
 * A signed link (engine_link_sign) to method on path (a route path, no
 * mount prefix) living ttl seconds: the base URL (req_base_url), path and
 * its query, in r's arena. NULL after answering 500.
 */
const char *signed_url(struct req *r, const char *method, const char *path,
	    int64_t ttl);

/*
 * The link to download ("download", a GET) or upload ("upload", a PUT of
 * the raw bytes) file node_id of app_id, living assets.link_ttl. NULL
 * after answering 500.
 */
const char *asset_link(struct req *r, const char *app_id,
	    const char *node_id, const char *what);

/*
 * The link to PUT the .zip of prepared bundle import import_id, living
 * bundle.import_ttl. NULL after answering 500.
 */
const char *bundle_upload_link(struct req *r, const char *import_id);

/*
 * The link to GET app_id's .zip bundle, with its secrets or without,
 * living assets.link_ttl. NULL after answering 500.
 */
const char *bundle_export_link(struct req *r, const char *app_id,
	    int include_secret);

/* ====== Routing ====== */

enum route_auth {
	AUTH_NONE,
	AUTH_ADMIN,	/* Authorization: Bearer <admin token> */
	AUTH_APP,	/* Authorization: Bearer <app API key> */
};

/*
 * What a service route (/v1/...) is to the Web App, or'd into its auth:
 * with WEB_ROUTE the router also answers it under /api (the path without
 * "/v1") for the holder of a passport, as that end user (web_api_enter),
 * so both APIs have one handler and one table.
 */
#define AUTH_MASK	0x0f
#define WEB_ROUTE	0x10	/* reachable as /api/... with a passport */
#define WEB_RUN		0x20	/* starts a run or a model call: rate
				   limited per address and end user */
#define WEB_STREAM	0x40	/* the web API's runs always stream */

struct route {
	const char	*method;
	const char	*pattern;	/* "/console/api/apps/{}" */
	void		 (*handler)(struct req *r);
	unsigned	 auth;		/* an enum route_auth, with WEB_*
					   flags on a service route */
};

/* The route tables of each API file; each ends with a zeroed entry. */
extern const struct route console_app_routes[];
extern const struct route system_routes[];
extern const struct route console_asset_routes[];
extern const struct route console_dsl_routes[];
extern const struct route console_run_routes[];
extern const struct route service_routes[];
extern const struct route service_conv_routes[];
extern const struct route service_audio_routes[];
extern const struct route annotation_routes[];
extern const struct route console_model_routes[];
extern const struct route console_sandbox_routes[];
extern const struct route console_workspace_routes[];
extern const struct route console_admin_routes[];
extern const struct route console_workflow_routes[];
extern const struct route console_tool_routes[];
extern const struct route console_builtin_tool_routes[];
extern const struct route file_routes[];
/* Knowledge API (service_datasets.c) */
extern const struct route service_dataset_routes[];
extern const struct route console_dataset_routes[];

/* ====== The Web App (web_site.c, web_api.c, web_pages.c) ====== */

extern const struct route web_site_routes[];
extern const struct route web_api_routes[];
extern const struct route web_page_routes[];

/*
 * Before a service route's handler when the router reached it under /api
 * (flags: its WEB_* flags): checks the passport and the site, counts a
 * run against the rate limits, and makes the passport's app the key's app
 * and its end user the request's "user" (replacing the client's). 0 to
 * go on to the handler, or -1 after answering.
 */
int	web_api_enter(struct req *r, unsigned flags);

#define WEB_CODE_LEN 16

/* A new site code: 16 of [A-Za-z0-9] from the CSPRNG. 0, or -1 when the
 * CSPRNG fails. */
int	web_site_code_new(char out[WEB_CODE_LEN + 1]);
/* 1 when s has a site code's shape. */
int	web_code_valid(const char *s);
/*
 * The site record of app_id, made now if it has none (a new reference);
 * NULL after answering (404 for no such app, 500/503 storage).
 */
json_t	*web_site_get(struct req *r, const char *app_id);
/*
 * The site whose code is code: 0 with *out (a new reference), 1 when
 * there is none (nothing answered), -1 after answering a storage error.
 */
int	web_site_by_code(struct req *r, const char *code, json_t **out);
/*
 * The service API's check of enable_api for the key's app (r->app_id):
 * 0 when on (or the app has no site yet), else -1 after answering 403 as
 * Dify's ("The app's API service has been disabled.").
 */
int	web_site_api_check(struct req *r);
/* Dify's console view of site record s (a new reference; NULL when out
 * of memory). */
json_t	*web_site_view(struct req *r, const json_t *s);
/*
 * Sets the app detail's site, enable_site and enable_api from app_id's
 * site (made now if needed). 0, or -1 after answering.
 */
int	web_app_detail_site(struct req *r, const char *app_id,
	    json_t *detail);

/* Handles one request completely: prefix, route, auth, handler. */
void	router_dispatch(struct req *r);

/* 0 when the Authorization header carries the admin token. */
int	auth_check_admin(struct req *r);

/*
 * 0 when Authorization carries an app's API key (sets r->app_id), -1 when
 * it carries none or one that is no key, or the ENGINE_E* code that kept
 * it from looking (ENGINE_EUNAVAIL: the database is away).
 */
int	auth_check_app(struct req *r);

/* SHA-256 of s into out (32 bytes). */
void	auth_hash(const char *s, unsigned char out[32]);

#endif
