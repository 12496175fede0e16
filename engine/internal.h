/*
 * internal.h — declarations shared by the engine's own files only.
 */
#ifndef FLOWCGI_ENGINE_INTERNAL_H
#define FLOWCGI_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "conf/dbuf.h"
#include "engine/engine.h"

struct run;

struct engine {
	const struct conf	*conf;
	struct store		*store;
	/* the runs in progress in this process (live.c) */
	pthread_mutex_t		 live_mu;
	pthread_cond_t		 live_cv;
	struct run		*live;
	pthread_t		 live_thread;	/* stores runs as they pass
						 * run.publish_after */
	int			 live_thread_on;
	int			 live_idle;	/* it waits with no run due */
	int64_t			 live_wake;	/* or until then (monotonic) */
	int			 live_quit;
	int			 live_serving;	/* also fails the runs of lost
						 * hosts (engine_serve) */
	char			 host_id[37];	/* this process's lease */
	int64_t			 lease_renewed;	/* monotonic ms */
	int64_t			 lease_swept;	/* monotonic ms */
	/* parsed apps, reused while their stored bytes stay the same */
	struct app_cache	*apps;
	/* the secrets key opened this database's check (secrets.c) */
	atomic_int		 key_checked;
	/* warm code runners (engine/sandbox/codepool.c); NULL: none */
	struct sandbox_code_pool *code_pool;
	/* tool providers declared as data (engine/tools/manifest.c) */
	struct tool_manifests	*tool_manifests;
	/* the knowledge indexer thread (engine/knowledge/kb.c); NULL: none */
	struct kb_indexer	*kb_indexer;
};

/*
 * At engine_open: the built-in tool manifests, then tools.providers_dir's
 * (*.yml, *.yaml, in name order; one of a built-in's name replaces it),
 * into e->tool_manifests (engine/tools/manifest.c). ENGINE_EINVAL (err
 * says which file, line and key) stops the engine. tool_manifests_close
 * frees them.
 */
int	tool_manifests_open(struct engine *e, char *err);
void	tool_manifests_close(struct engine *e);

/* The registry of runs in progress (live.c), set up and torn down with e. */
int	live_init(struct engine *e);
void	live_fini(struct engine *e);

/* ====== Traces (trace.c) ====== */

/*
 * Spans of OpenTelemetry traces, exported over OTLP/HTTP JSON when
 * tracing.otlp_endpoint is set. With tracing off span_start returns NULL,
 * and every other call takes NULL and does nothing, so a hook costs a
 * branch. A span belongs to the thread that started it until span_end,
 * which sends it (the span is gone after it). Attribute strings are
 * copied.
 */
enum span_kind { SPAN_INTERNAL = 1, SPAN_SERVER = 2, SPAN_CLIENT = 3 };
struct span;

/* Starts the exporter thread (no-op without an endpoint); 0 or
 * ENGINE_ENOMEM. trace_stop sends what is queued (one try) and ends it;
 * called when no run is left. */
int	trace_start(struct engine *e);
void	trace_stop(struct engine *e);
int	trace_enabled(void);
/* 1 when prompts, inputs and outputs go into spans
 * (tracing.include_content). */
int	trace_content(void);

/* A new span under parent, or the root of a new trace when parent is
 * NULL. NULL when tracing is off or out of memory. */
struct span *span_start(const char *name, struct span *parent,
	    enum span_kind kind);
void	span_attr_str(struct span *s, const char *k, const char *v);
void	span_attr_int(struct span *s, const char *k, int64_t v);
void	span_attr_double(struct span *s, const char *k, double v);
void	span_attr_strings(struct span *s, const char *k,
	    const char *const *v, size_t n);
/* Content attributes (text, or JSON made text): set only with
 * tracing.include_content, cut to 16 KB. */
void	span_attr_content(struct span *s, const char *k, const char *text);
void	span_attr_content_json(struct span *s, const char *k,
	    const json_t *v);
/* Marks the span failed with message (copied). */
void	span_error(struct span *s, const char *message);
void	span_end(struct span *s);
/* The 32 hex digits of s's trace, or NULL. */
const char *span_trace_id(const struct span *s);

/*
 * The calling thread's current span, the parent of spans started below
 * it (a node's model requests, tool calls, commands); set returns the one
 * it replaces.
 */
struct span *span_current(void);
struct span *span_set_current(struct span *s);

/* Maps a STORE_E* code to the ENGINE_E* code the engine returns. */
int	engine_from_store(int rc);

/* Writes a message into err (ENGINE_ERRMAX bytes) and returns ENGINE_EINVAL. */
int	engine_invalid(char *err, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* The number of Unicode code points in the UTF-8 string s. */
size_t	engine_utf8_len(const char *s);

/* ====== Outbound HTTP (outbound.c) ====== */

struct curl_slist;

struct outbound_req {
	const char		*method;	/* NULL: GET, or POST with body */
	const char		*url;
	const struct curl_slist	*headers;
	const void		*body;
	size_t			 body_len;
	int			 trusted;	/* admin-configured: no guard */
	int			 follow;	/* follow up to 5 redirects */
	int			 timeout;	/* 0: http.timeout */
	int			 connect_timeout; /* 0: http.connect_timeout */
	int			 insecure;	/* do not verify TLS peers */
	int64_t			 max_bytes;	/* 0: http.max_response */
	/* Streaming: when set, bytes go here instead of resp->body; return
	 * non-zero to abort. */
	int			 (*on_data)(const char *p, size_t n, void *arg);
	void			*arg;
	/* Each response header line, CR/LF stripped, as it arrives. */
	void			 (*on_header)(const char *line, size_t n,
				    void *arg);
	void			*header_arg;
};
#define OUTBOUND_ON_HEADER 1

struct outbound_resp {
	long	 status;
	char	*body;		/* NUL-terminated, malloc'd; caller frees */
	size_t	 len;
	char	*content_type;	/* malloc'd or NULL */
	char	*headers;	/* the final response's header block, "Name:
				 * value" lines; malloc'd or NULL */
	size_t	 headers_len;
	long	 retry_after;	/* seconds from Retry-After, -1 when absent */
};
#define OUTBOUND_RETRY_AFTER 1

/*
 * Performs one HTTP exchange through libcurl with the http.* limits. Unless
 * req->trusted, every address connected to (after DNS, and on redirects)
 * must be public unless http.allow_private. Returns 0 with resp filled
 * (any HTTP status), or ENGINE_EFETCH / ENGINE_ELIMIT with err saying why.
 * Free resp with outbound_resp_release.
 */
int	outbound_fetch(struct engine *e, const struct outbound_req *req,
	    char *err, struct outbound_resp *resp);
void	outbound_resp_release(struct outbound_resp *resp);

/*
 * A response read as it arrives, for as long as its reader wants (the
 * event stream of an MCP server on the HTTP+SSE transport): the same
 * guard and limits as outbound_fetch, but no overall time limit and the
 * transfer only moves while outbound_stream_wait runs. The body goes to
 * req->on_data (required); req->max_bytes caps the whole stream.
 *
 * outbound_stream_open returns once the response's head is in (status
 * through outbound_stream_status), or fails within req->timeout (0:
 * http.timeout) with ENGINE_EFETCH / ENGINE_ELIMIT and err. req is
 * copied, but what its pointers point to (url, headers, arg) must stay
 * valid until outbound_stream_close.
 *
 * outbound_stream_wait moves the transfer along until done(arg) returns
 * non-zero (checked first and after each arrival; NULL: never), which
 * returns 0; the stream ending first or timeout_ms passing is
 * ENGINE_EFETCH with err saying which. on_data is called from within it.
 */
struct outbound_stream;
int	outbound_stream_open(struct engine *e, const struct outbound_req *req,
	    char *err, struct outbound_stream **out);
long	outbound_stream_status(const struct outbound_stream *s);
int	outbound_stream_wait(struct outbound_stream *s, int timeout_ms,
	    int (*done)(void *arg), void *arg, char *err);
/* Ends the transfer (the server sees the connection close). NULL: no-op. */
void	outbound_stream_close(struct outbound_stream *s);

/* 1 when addr (AF_INET or AF_INET6 sockaddr) is private, loopback,
 * link-local, multicast or otherwise not a public unicast address. */
struct sockaddr;
int	outbound_addr_private(const struct sockaddr *addr);

/* ====== Templates (template.c, jinja/) ====== */

/*
 * The renderers write into a struct dbuf (conf/dbuf.h); these add the
 * forms of Python and JSON to one.
 */

/* Appends code point c as UTF-8. */
void	tpl_add_utf8(struct dbuf *sb, uint32_t c);

/* Python's str() of an int and repr() of a float: 1.0, 0.1, 1e+16, inf. */
void	tpl_add_py_int(struct dbuf *sb, int64_t v);
void	tpl_add_py_float(struct dbuf *sb, double d);

/* Python's repr() of the str s (n bytes of UTF-8), quotes included. */
void	tpl_add_py_str(struct dbuf *sb, const char *s, size_t n);

/* json.dumps of a str; ascii: ensure_ascii=True (\uXXXX escapes). */
void	tpl_add_json_str(struct dbuf *sb, const char *s, size_t n, int ascii);

/* The code point of the UTF-8 sequence at s (n > 0 bytes left); *len
 * gets its length (1 and U+FFFD for a malformed byte). */
uint32_t	tpl_utf8_next(const char *s, size_t n, size_t *len);

/* 1 when v is a Dify file object ("dify_model_identity": "__dify__file__"). */
int	tpl_is_file(const json_t *v);

/*
 * How a value becomes text (api/core/variables/segments.py). TPL_TEXT
 * (Segment.text): null, files and empty arrays "", strings as they are,
 * numbers and booleans as Python's str() (1.0, True), objects as
 * json.dumps(ensure_ascii=False), arrays of strings as JSON, other arrays
 * as Python's repr. TPL_MARKDOWN (Segment.markdown, answer nodes): objects
 * as JSON indented by 2, arrays as "- item" lines, files as [name](url) or
 * ![name](url) for images.
 */
enum tpl_form {
	TPL_TEXT,
	TPL_MARKDOWN
};

/*
 * v as text in form, appended to sb / as a new malloc'd string in *out
 * (caller frees). Returns 0, ENGINE_ENOMEM, or ENGINE_EINVAL when v nests
 * deeper than 512 levels.
 */
int	tpl_add_value_text(struct dbuf *sb, const json_t *v,
	    enum tpl_form form);
int	tpl_value_text(const json_t *v, enum tpl_form form, char **out);

/* Python's repr() of v ({'a': [1, 'x', None, True]}); *out malloc'd,
 * caller frees. Returns 0, ENGINE_ENOMEM or ENGINE_EINVAL (too deep). */
int	tpl_py_repr(const json_t *v, char **out);

/*
 * Resolves a reference for tpl_render: parts[0..nparts) are the dotted
 * pieces ("llm", "text"). Returns a value borrowed from the caller (valid
 * until tpl_render returns) or NULL when there is none.
 */
typedef const json_t *(*tpl_lookup_fn)(void *ctx, const char *const *parts,
    size_t nparts);

/* tpl_render flag: {{#context#}} is looked up with the one part "context"
 * (the LLM node's knowledge context); unresolved it stays literal. */
#define TPL_CONTEXT 0x1

/*
 * Renders Dify's variable template tpl (NUL-terminated): each
 * {{#a.b(.c...)#}} (first part [A-Za-z0-9_]{1,50}, then 1-10 parts
 * [A-Za-z_][A-Za-z0-9_]{0,29}) becomes lookup's value as text in form, or
 * the dotted text a.b when lookup returns NULL. Like Dify's
 * convert_template, literal text between references that contains a dot
 * is offered to lookup split at the dots too, and written as it is when
 * that finds nothing. lookup may be NULL (nothing resolves). max_chars: 0,
 * or the most code points the result may have. *out is malloc'd (caller
 * frees). Returns 0, ENGINE_ENOMEM, ENGINE_ELIMIT ("output length" in err)
 * or ENGINE_EINVAL (a value nested too deeply; err says so).
 */
int	tpl_render(const char *tpl, enum tpl_form form, unsigned flags,
	    tpl_lookup_fn lookup, void *ctx, size_t max_chars, char *err,
	    char **out);

/*
 * The references tpl makes, for recording a node's inputs: *out is a new
 * JSON array of selectors (arrays of strings, ["llm", "text"]), each once,
 * in order of first use. {{#context#}} is not listed. Returns 0 or
 * ENGINE_ENOMEM.
 */
int	tpl_selectors(const char *tpl, json_t **out);

/*
 * Limits of the Jinja2 renderer; each names itself in the error when it
 * trips (ENGINE_ELIMIT). jinja_limits_default fills Dify-like defaults.
 */
struct jinja_limits {
	size_t	max_template;	/* "template size": bytes of source, 1 MiB */
	size_t	max_output;	/* "output length": code points, 400000 */
	size_t	max_loop;	/* "loop iterations": in total, 100000 */
	size_t	max_depth;	/* "nesting depth": of blocks, 64 */
	size_t	max_expr_depth;	/* "expression depth": 64 */
	size_t	max_value;	/* "value size": bytes of a string or items
				 * of a list made while rendering, 4 MiB */
	size_t	max_steps;	/* "evaluation steps": 10 million */
};
void	jinja_limits_default(struct jinja_limits *lim);

struct jinja_tpl;

/*
 * Parses a Jinja2 template (src, len bytes of UTF-8) for the subset this
 * engine runs (see engine/jinja/jinja.h). lim is copied (NULL: defaults). *out is
 * freed with jinja_free and may be rendered many times, from several
 * threads at once. Returns 0, ENGINE_ENOMEM, ENGINE_ELIMIT, or
 * ENGINE_EINVAL with err naming the problem (a syntax error, or a
 * construct outside the subset such as a macro) and its line.
 */
int	jinja_compile(const char *src, size_t len,
	    const struct jinja_limits *lim, char *err, struct jinja_tpl **out);
void	jinja_free(struct jinja_tpl *t);

/*
 * Renders t with the variables of the JSON object vars (borrowed; NULL for
 * none) as Jinja2 3.x in Python 3 would (jinja2.Template(src).render(
 * **vars)). *out is malloc'd and NUL-terminated (caller frees); *outlen
 * (may be NULL) gets its length in bytes. Returns 0, ENGINE_ENOMEM,
 * ENGINE_ELIMIT (err names the limit) or ENGINE_EINVAL (err says what
 * failed and at which line: an undefined value used, a type error,
 * division by zero...).
 */
int	jinja_render_compiled(const struct jinja_tpl *t, const json_t *vars,
	    char *err, char **out, size_t *outlen);

/* jinja_compile + jinja_render_compiled + jinja_free in one call. */
int	jinja_render(const char *src, size_t len, const json_t *vars,
	    const struct jinja_limits *lim, char *err, char **out,
	    size_t *outlen);

/* ====== Secrets and model providers ====== */

/*
 * Secrets at rest (secrets.c): AES-256-GCM with a 32-byte key in the file
 * secret.key of the data directory (mode 0600, made on first use, never
 * in the database). aad (may be NULL) names where the secret lives, such
 * as "model_providers/openai"; decrypting needs the same aad.
 *
 * secret_encrypt: *out = "v1:<base64>" text, malloc'd (caller frees).
 * secret_decrypt: *out = the plain text, malloc'd; free it with
 * secret_free, which wipes it first. Both return 0, ENGINE_EINVAL (a
 * value that is not ours or does not decrypt: err says so),
 * ENGINE_ESTORE (the key file cannot be read or made) or ENGINE_ENOMEM.
 * err is never NULL and never holds the secret.
 */
int	secret_encrypt(struct engine *e, const char *aad, const char *plain,
	    char *err, char **out);
int	secret_decrypt(struct engine *e, const char *aad, const char *enc,
	    char *err, char **out);
void	secret_free(char *s);

/*
 * The 32-byte key that signs links (links.c), from the file link.key of
 * the data directory (mode 0600, made on first use, like secret.key).
 * Returns 0 or ENGINE_ESTORE with err saying why. Wipe key after use.
 */
int	secret_link_key(struct engine *e, unsigned char key[32], char *err);

/*
 * At engine_open: 0 when this process's secrets key opens the check the
 * first sealed secret left in the database (or there is none yet), else
 * ENGINE_EINVAL / ENGINE_ESTORE with err telling the operator what to do.
 */
int	secret_key_verify(struct engine *e, char *err);

/*
 * The secrets an app's DSL carries (secrets.c lists the fields: secret
 * environment variables, an http-request node's API key, a tool or agent
 * node's inline headers), walked in the workflow object wf in place:
 *
 *	DSL_SECRET_SEAL   encrypt each plain value (a draft about to be
 *	                  stored: import; never twice on one document)
 *	DSL_SECRET_OPEN   decrypt each sealed value (a run, an export with
 *	                  include_secret); a plain value (stored before
 *	                  secrets were sealed) stays; each plain value is
 *	                  added to found (a JSON array, may be NULL),
 *	                  longest first, for secrets_scrub
 *	DSL_SECRET_MASK   each value becomes ENGINE_SECRET_MASK (API answers)
 *	DSL_SECRET_BLANK  each value becomes "" (export without secrets)
 *
 * Empty values and an API key that is only a {{#...#}} reference are left
 * alone. wf that is not an object is no error. Returns 0, or a
 * secret_encrypt / secret_decrypt error (err says which, never the
 * value), or ENGINE_ENOMEM; on an error wf is partly done.
 */
enum dsl_secret_op {
	DSL_SECRET_SEAL, DSL_SECRET_OPEN, DSL_SECRET_MASK, DSL_SECRET_BLANK,
};
int	dsl_secrets(struct engine *e, json_t *wf, enum dsl_secret_op op,
	    json_t *found, char *err);

/*
 * A workflow sent back by a client holds ENGINE_SECRET_MASK where it got a
 * secret masked: each such value of wf becomes the value at the same place
 * of old (the stored workflow, opened), found by the variable's name or
 * the node's id, or "" where old has none. Returns 0 or ENGINE_ENOMEM.
 */
int	dsl_secrets_keep(json_t *wf, const json_t *old);

/*
 * v (stolen) with every occurrence of a string of secrets (an array of
 * plain secrets, as dsl_secrets OPEN fills it; those of fewer than 4
 * bytes are not looked for) in any string inside it replaced by
 * ENGINE_SECRET_MASK. Returns v itself when nothing matched, else a new
 * scrubbed copy (v is released: values shared with others are never
 * changed), or NULL when memory ran out: a value that holds a secret
 * never comes back.
 */
json_t	*secrets_scrub(const json_t *secrets, json_t *v);

/* 1 unless the stored JSON text raw surely holds no sealed secret. */
int	secrets_maybe_sealed(const void *raw, size_t len);

/* ====== File objects (nodes/files.c) ====== */

/*
 * Dify file objects as nodes and tools make them: the bytes in `url` as a
 * data: URL (base64), transfer_method "tool_file" (see
 * engine/nodes/nodes.h, which also reads a file's bytes for a node).
 */

/*
 * A new file object holding len bytes of data as a data: URL. name may be
 * NULL ("file" + an extension from mime); mime NULL is guessed from the
 * name's extension, else application/octet-stream. Returns a new
 * reference, or NULL when out of memory.
 */
json_t	*file_from_bytes(const char *name, const char *mime, const void *data,
	    size_t len);

/*
 * The file's extension without the dot, lower-cased, into buf: from
 * `extension`, else the name's suffix, else from mime_type. "" when none.
 * Returns buf.
 */
const char *file_ext(const json_t *file, char *buf, size_t bufsz);

/*
 * Decodes base64 (standard or URL-safe alphabet, padding optional,
 * whitespace skipped) of n bytes at s. *out is malloc'd and NUL-terminated
 * (caller frees). Returns 0, or -1 on a bad character or out of memory.
 */
int	file_b64_decode(const char *s, size_t n, char **out, size_t *outlen);

/* base64 of n bytes, malloc'd and NUL-terminated, or NULL. */
char	*file_b64_encode(const void *data, size_t n);

#endif
