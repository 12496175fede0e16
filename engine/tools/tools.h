/*
 * tools.h — tool providers (private to engine/).
 *
 * A tool provider is one file in engine/tools/ that fills one struct
 * tool_provider and adds one line to the registry in tools.c. Builtins
 * (time, webscraper, json_process, code) answer from their own tables;
 * the `api` provider type reads an OpenAPI 3 schema stored with
 * engine_tool_provider_put; the `mcp` provider type talks to an MCP
 * server over Streamable HTTP or HTTP+SSE. The tool node
 * (engine/nodes/tool.c) and the agent go through tool_invoke and
 * tool_describe, and the agent's mcp_server through mcp_list_tools and
 * mcp_call_tool.
 *
 * Errors: 0 or a negative ENGINE_E* code with a message in err
 * (ENGINE_ERRMAX bytes). ENGINE_ENOTFOUND means flowcgi has no such
 * provider or tool. Like Dify, a tool that ran but could not do what was
 * asked (a bad timezone, a bad JSON path) usually answers with a text
 * message instead of failing.
 */
#ifndef FLOWCGI_ENGINE_TOOLS_H
#define FLOWCGI_ENGINE_TOOLS_H

#include <stdint.h>

#include <jansson.h>

#include "engine/internal.h"
#include "engine/llm/llm.h"

struct mcp_pool;

/* Limits every provider is held to. */
#define TOOL_MAX_TEXT		(4 * 1024 * 1024)	/* bytes of text */
#define TOOL_MAX_SCHEMA		(1024 * 1024)	/* an OpenAPI schema */

/*
 * The run a tool is called from, as tools see it: the executor sets it
 * around each node's run (tool_run_set), so that a tool reached from a
 * node, or from an agent's loop, finds its run without being passed it.
 * Its strings live as long as the run; run is the struct run itself (for
 * run_opts.parent), mcp its MCP sessions (made when first asked for) and
 * stopped whether a stop was asked for (thread-safe).
 */
struct tool_run {
	const struct tool_run	*parent;	/* a workflow tool's caller */
	int			 depth;		/* parents above it */
	const char		*id;		/* workflow_run_id */
	const char		*app_id;
	const char		*user;		/* sys.user_id, or NULL */
	const char		*invoke_from;
	const char		*request_id;
	void			*run;
	struct mcp_pool		*(*mcp)(void *run);
	int			(*stopped)(void *run);
};

/* The run of the node this thread runs, or NULL outside one. */
const struct tool_run *tool_run_current(void);
/* Makes r the thread's run (NULL: none); returns the one before. */
const struct tool_run *tool_run_set(const struct tool_run *r);

/* One call of one tool. */
struct tool_call {
	const char	*provider;	/* provider_id as the DSL names it */
	const char	*provider_type;	/* builtin, plugin, api, mcp; or NULL */
	const char	*provider_name;	/* NULL when not given */
	const char	*tool;		/* tool_name; NULL for tool_describe */
	const json_t	*params;	/* object of resolved parameters */
	const json_t	*node;		/* the tool node's data, or NULL */
	struct mcp_pool	*mcp;		/* the run's MCP sessions, or NULL */
	const json_t	*credentials;	/* the provider's credentials {key: value}, opened, or NULL */
};

/*
 * What a tool gives back, in the shape of Dify's tool messages: text
 * messages joined, json messages (objects) in order, files (Dify file
 * objects) and variables. Zero it, fill it with the tool_result_* calls,
 * free it with tool_result_release.
 */
struct tool_result {
	struct dbuf	 text;
	json_t		*json;		/* array of objects, or NULL */
	json_t		*files;		/* array of file objects, or NULL */
	json_t		*variables;	/* object, or NULL */
	int		 final;		/* a failure that trying again cannot
					 * mend (a missing credential) */
};

/* Appends a text message. Returns 0 or ENGINE_ENOMEM / ENGINE_ELIMIT. */
int	tool_result_text(struct tool_result *r, const char *s, size_t n);
/* Appends a json message (obj stolen). Returns 0 or ENGINE_ENOMEM. */
int	tool_result_json(struct tool_result *r, json_t *obj);
/* Appends a file object (stolen). Returns 0 or ENGINE_ENOMEM. */
int	tool_result_file(struct tool_result *r, json_t *file);
/* Sets variable name to v (stolen). Returns 0 or ENGINE_ENOMEM. */
int	tool_result_var(struct tool_result *r, const char *name, json_t *v);
void	tool_result_release(struct tool_result *r);

struct tool_provider {
	const char	*name;		/* "time", "api", "mcp" */
	/*
	 * The provider's tools for call (call->tool is NULL): *out is a new
	 * array of {name, description, parameters} where parameters is a
	 * JSON schema object ({type: object, properties, required}).
	 */
	int	(*list)(struct engine *e, const struct tool_call *call,
		    char *err, json_t **out);
	/* Runs call->tool with call->params; fills out (see above). */
	int	(*invoke)(struct engine *e, const struct tool_call *call,
		    char *err, struct tool_result *out);
	/* 1 when invoke reads call->credentials: tool_invoke then reads
	 * the provider's stored ones (a read of the store per call, which
	 * the local providers are spared) */
	int	  credentials;
};

extern const struct tool_provider tool_provider_time;
extern const struct tool_provider tool_provider_webscraper;
extern const struct tool_provider tool_provider_json_process;
extern const struct tool_provider tool_provider_code;
extern const struct tool_provider tool_provider_api;
extern const struct tool_provider tool_provider_mcp;
extern const struct tool_provider tool_provider_manifest;
extern const struct tool_provider tool_provider_rss;
extern const struct tool_provider tool_provider_rookie_rss;
extern const struct tool_provider tool_provider_duckduckgo;
extern const struct tool_provider tool_provider_base64_codec;
extern const struct tool_provider tool_provider_md_exporter;
extern const struct tool_provider tool_provider_chart;
extern const struct tool_provider tool_provider_qrcode;
extern const struct tool_provider tool_provider_echarts;
extern const struct tool_provider tool_provider_pdf_process;
extern const struct tool_provider tool_provider_dingtalk;
extern const struct tool_provider tool_provider_workflow;
extern const struct tool_provider tool_provider_mcp_sse;
extern const struct tool_provider tool_provider_mcp_config_during_use;

/*
 * 0 when id is a published workflow app of this server (what a
 * provider_type workflow tool names), else ENGINE_ENOTFOUND with err
 * naming it (workflow_tool.c).
 */
int	workflow_tool_app_ok(struct engine *e, const char *id, char *err);
extern const struct tool_provider tool_provider_email;
extern const struct tool_provider tool_provider_email163;
extern const struct tool_provider tool_provider_database;
extern const struct tool_provider tool_provider_audio;

/* ====== Registry (tools.c) ====== */

/*
 * The provider for a DSL's provider id and type: "time",
 * "langgenius/time/time" and "langgenius/time" all name the builtin time
 * (plugin prefixes stripped); provider_type "api", "mcp" and "workflow"
 * pick those providers whatever the id (a workflow tool's app is looked
 * up when it is listed or called). NULL when flowcgi has none.
 */
const struct tool_provider *tool_provider_find(const char *id,
	    const char *provider_type);

/* The native providers of the registry, in its order; NULL past the end. */
const struct tool_provider *tool_builtin_at(size_t i);

/*
 * tool_provider_find, then the manifests of e: &tool_provider_manifest
 * when one answers to id (and provider_type is not api, mcp or
 * workflow). NULL when flowcgi has no such provider.
 */
const struct tool_provider *tool_provider_lookup(struct engine *e,
	    const char *id, const char *provider_type);

/*
 * Runs a tool: finds the provider (tool_provider_lookup) and invokes it
 * with the provider's stored credentials in call->credentials (when the
 * caller gave none). ENGINE_ENOTFOUND: no such provider or tool;
 * ENGINE_EINVAL: a parameter or credential is missing or wrong
 * (out->final says so when no retry can mend it); ENGINE_EFETCH: the
 * remote failed.
 */
int	tool_invoke(struct engine *e, const struct tool_call *call, char *err,
	    struct tool_result *out);

/*
 * What an agent gives an LLM for call->provider's tools: *out is a new
 * array of {name, description, parameters (JSON schema)}; with call->tool
 * set, only that tool (ENGINE_ENOTFOUND if it has none of that name).
 */
int	tool_describe(struct engine *e, const struct tool_call *call,
	    char *err, json_t **out);

/* ====== Tools an agent configured (tools.c) ====== */

/*
 * A tool entry of an agent's configuration as a model sees it. cfg is
 * the DSL's entry ({type, provider_name, tool_name, settings {k: {value}},
 * parameters {k: {auto, value}}}): *description (malloc'd), *schema (the
 * tool's JSON schema without the parameters the entry fixes) and *fixed
 * ({k: value} of the settings and the non-auto parameters), new
 * references. mcp: the run's MCP sessions, for an mcp entry. Returns 0,
 * or an ENGINE_E* code with err saying why (ENGINE_ENOTFOUND: flowcgi has
 * no such tool).
 */
int	tool_configured(struct engine *e, const json_t *cfg, const json_t *node,
	    struct mcp_pool *mcp, char *err, char **description,
	    json_t **schema, json_t **fixed);

/*
 * Runs the tool of entry cfg with a model's arguments (JSON text; not an
 * object counts as {}) overlaid by fixed: *out (malloc'd) is what the
 * model sees, the text messages or else the JSON ones, or "tool error:
 * ..." when the tool failed; *files (if files is not NULL) the files it
 * made, a new reference or NULL. Returns 0 or ENGINE_ENOMEM.
 */
int	tool_run_configured(struct engine *e, const json_t *cfg,
	    const json_t *fixed, const char *args, const json_t *node,
	    struct mcp_pool *mcp, char **out, json_t **files);

/* ====== Helpers for providers (tools.c) ====== */

/* A builtin tool's parameter, for its JSON schema. */
struct tool_param {
	const char	*name;
	const char	*type;		/* JSON schema type */
	int		 required;
	const char	*description;
};

/* A builtin tool: its name, description and parameters (NULL-ended). */
struct tool_def {
	const char		*name;
	const char		*description;
	const struct tool_param	*params;
};

/* The JSON description array of defs (NULL-ended table). New reference. */
json_t	*tool_defs_json(const struct tool_def *defs);

/* 1 when def table defs has a tool called name. */
int	tool_defs_has(const struct tool_def *defs, const char *name);

/*
 * A parameter as text: strings as they are, numbers and booleans as
 * Python's str() gives them, other values as JSON; NULL when missing or
 * null. *buf holds a malloc'd copy when one had to be made (free it).
 */
const char *tool_param_str(const json_t *params, const char *name,
	    char **buf);

/*
 * The bytes of file object f (a tool's file parameter): its data: URL
 * decoded, or its http(s) url / remote_url fetched through outbound_fetch
 * (SSRF guard, tools.timeout), at most tools.max_file_size bytes. what
 * names it in a message ("attachment"). *data is malloc'd and
 * NUL-terminated (caller frees). Returns 0, ENGINE_EINVAL (err says
 * why), ENGINE_EFETCH / ENGINE_ELIMIT, ENGINE_ENOMEM.
 */
int	tool_file_bytes(struct engine *e, const json_t *f, const char *what,
	    char *err, char **data, size_t *len);

/* A parameter as a boolean (true, "true", "1", non-zero); dflt if absent. */
int	tool_param_bool(const json_t *params, const char *name, int dflt);

/*
 * A parameter as an integer (numbers, or strings holding one). Returns 0,
 * 1 when absent or null, -1 when not a number.
 */
int	tool_param_int(const json_t *params, const char *name, int64_t *out);

/*
 * Python's json.dumps(v, ensure_ascii=ascii): ", " and ": " separators,
 * floats as repr. *out malloc'd (caller frees). Returns 0, ENGINE_ENOMEM
 * or ENGINE_EINVAL (nested too deeply).
 */
int	tool_json_dumps(const json_t *v, int ascii, char **out);

/* ====== Time zones (tz.c) ====== */

/*
 * A time zone read from the IANA tz database (TZif files under TZDIR or
 * /usr/share/zoneinfo) by this code itself: the C library's TZ handling
 * works on one process-wide zone set through the environment, which
 * threads cannot change safely, so flowcgi reads the zone file and its
 * POSIX TZ footer on its own. Immutable once loaded.
 */
struct tz_zone;

/* Offset from UTC, DST flag and abbreviation in effect at one instant. */
struct tz_info {
	int32_t	 off;		/* seconds east of UTC */
	int	 isdst;
	char	 abbr[16];	/* "CST", "+08", "UTC" */
};

/*
 * Loads zone name ("Asia/Shanghai", "UTC"). Returns 0 with *out
 * (tz_free), ENGINE_ENOTFOUND for an unknown or malformed name,
 * ENGINE_EINVAL for an unreadable zone file (err says why).
 */
int	tz_load(const char *name, char *err, struct tz_zone **out);
void	tz_free(struct tz_zone *z);

/* What is in effect at t (seconds since the epoch). */
void	tz_lookup(const struct tz_zone *z, int64_t t, struct tz_info *out);

/*
 * The instant of wall-clock time local (seconds since the epoch as if the
 * wall clock were UTC) in z, choosing as pytz's localize(is_dst=False)
 * does: in a repeated hour the standard-time reading, in a skipped hour
 * the offset before the change.
 */
int64_t	tz_localize(const struct tz_zone *z, int64_t local);

/*
 * Python's datetime.strftime(fmt) for instant t (plus usec
 * microseconds) shown in zone info: %f, %z and %Z as Python does them,
 * everything else through the C library's strftime on a struct tm (C
 * locale names). *out malloc'd (caller frees). Returns 0, ENGINE_ENOMEM
 * or ENGINE_ELIMIT (the result would pass 64 KiB).
 */
int	tz_strftime(const char *fmt, int64_t t, int usec,
	    const struct tz_info *info, char **out);

/* Days since 1970-01-01 of a proleptic Gregorian date. */
int64_t	tz_days_from_civil(int64_t y, int m, int d);

/* ====== Providers declared as data (manifest.c, manifest_run.c) ====== */

/*
 * A parsed manifest (docs/tools.md): doc is the YAML as JSON, name its
 * identity.name, file where it came from (for messages), text its source
 * (for line numbers). Immutable once loaded; owned by the engine.
 */
#define TOOL_STEPS_MAX		8	/* steps of a provider, or of a tool */
#define TOOL_STEP_EACH_MAX	50	/* requests one `each` step may send */

struct tool_manifest {
	const char	*name;
	char		*file;
	char		*text;
	json_t		*doc;
};

/*
 * Parses and checks one manifest (len bytes of YAML). Returns 0 with
 * *out (tool_manifest_free), ENGINE_EINVAL with err naming the file, the
 * line and the key, or ENGINE_ENOMEM.
 */
int	tool_manifest_parse(const char *file, const char *text, size_t len,
	    char *err, struct tool_manifest **out);
void	tool_manifest_free(struct tool_manifest *m);

/* tool_manifests_open and _close: engine/internal.h. */

/* The manifests of e, in load order; the one i, or NULL past the end. */
size_t	tool_manifest_count(const struct engine *e);
const struct tool_manifest *tool_manifest_at(const struct engine *e,
	    size_t i);

/*
 * The manifest that answers to id: its name, an alias, or a plugin id
 * whose second segment is one ("langgenius/tavily/tavily",
 * "langgenius/tavily:0.0.5@..."). NULL when none; valid while e is open.
 */
const struct tool_manifest *tool_manifest_find(const struct engine *e,
	    const char *id);

/* Tool tool of m (borrowed), or NULL. */
const json_t *tool_manifest_tool(const struct tool_manifest *m,
	    const char *tool);

/* The en_US text of a Dify label ({en_US, zh_Hans} or a string), or dflt. */
const char *tool_manifest_label(const json_t *v, const char *dflt);

/*
 * The JSON schema ({type: object, properties, required}) of tool's
 * parameters, only those of form llm when llm_only (what a model fills),
 * files left out. New reference, NULL when out of memory.
 */
json_t	*tool_manifest_schema(const json_t *tool, int llm_only);

/*
 * Runs m's provider-level steps alone with creds (a manifest whose test
 * is `{steps: true}`): 0, or the error a call would give, credentials
 * masked.
 */
int	tool_manifest_test_steps(struct engine *e,
	    const struct tool_manifest *m, const json_t *creds, char *err);

/*
 * Reads an RSS 2.0, RSS 1.0 or Atom feed of len bytes (rss.c; no network,
 * no DTD, no entities): *out is a new {title, link, description, format,
 * items: [{title, link, published, author, summary}]} with at most
 * max_items items. Returns 0, ENGINE_EINVAL (err says why) or
 * ENGINE_ENOMEM. A manifest's `response.format: feed` reads its answer so.
 */
int	tool_feed_parse(const char *data, size_t len, size_t max_items,
	    char *err, json_t **out);

/* The value at dotted path ("body.results.0.url") of v, borrowed. */
const json_t *tool_path_get(const json_t *v, const char *path);

/* ====== Credentials of built-in providers (credentials.c) ====== */

/*
 * The stored credentials of the provider id names (manifest or native),
 * secrets opened: *out a new object, or NULL when none are stored or
 * flowcgi has no such provider. Returns 0 or an ENGINE_E* code (err
 * says why, never a secret).
 */
int	tool_credentials_open(struct engine *e, const char *id, char *err,
	    json_t **out);

/* ====== Stored providers (store.c, api.c) ====== */

/* Where custom providers live in the settings database, and how many. */
#define TOOL_PROVIDER_PREFIX	"tool_provider/"
#define TOOL_PROVIDER_MAX	1000

/* 1 when name is a provider name: 1 to 128 bytes, no control bytes. */
int	tool_provider_name_ok(const char *name);

/* Every stored provider record, in name order: *out a new array. */
int	tool_provider_all(struct engine *e, json_t **out);

/*
 * The stored record of the custom provider a call names (see
 * engine_tool_provider_put), of type ("api" or "mcp"): by provider_name,
 * then provider as a name, then provider as an id or (mcp) as a
 * server_identifier. *out is a new reference. ENGINE_ENOTFOUND (err
 * names the provider) when none.
 */
int	tool_provider_record(struct engine *e, const struct tool_call *call,
	    const char *type, char *err, json_t **out);

/*
 * Checks OpenAPI 3 schema text (JSON or YAML): *doc is the parsed
 * document, *tools its operations [{name, description, method, path}]
 * (new references). Returns 0 or ENGINE_EINVAL with err saying why.
 */
int	api_schema_check(const char *text, char *err, json_t **doc,
	    json_t **tools);

/* ====== MCP wire formats (mcp_wire.c) ====== */

/*
 * Reads an event stream of JSON-RPC messages (a Streamable HTTP answer,
 * or the HTTP+SSE transport's stream) as it arrives. Responses and the
 * server's requests are kept in msgs (at most 1024); notifications are
 * dropped; an `endpoint` event's data goes to endpoint (endpoints counts
 * them). An event larger than max bytes is ENGINE_ELIMIT; after an
 * error, feeding returns it again. Init (0 or ENGINE_ENOMEM), feed,
 * finish, then release (always, even after a failed init).
 */
struct mcp_reader {
	struct llm_sse	 sse;
	size_t		 max;
	json_t		*msgs;
	char		*endpoint;
	int		 endpoints;
	int		 rc;
};
int	mcp_reader_init(struct mcp_reader *r, size_t max);
int	mcp_reader_feed(struct mcp_reader *r, const char *p, size_t n);
int	mcp_reader_finish(struct mcp_reader *r);
void	mcp_reader_release(struct mcp_reader *r);
/* The response to id, taken out of r (new reference), or NULL. */
json_t	*mcp_reader_take(struct mcp_reader *r, json_int_t id);
/* The oldest request of the server's, taken out of r, or NULL. */
json_t	*mcp_reader_take_request(struct mcp_reader *r);

/*
 * The response to id in a whole POST answer: a JSON body (an object, or
 * a batch array), or with sse an event stream (events of at most max
 * bytes). New reference, or NULL when it holds none.
 */
json_t	*mcp_body_response(const char *body, size_t len, int sse, size_t max,
	    json_int_t id);

/*
 * The URL the HTTP+SSE transport POSTs to: data of the `endpoint` event
 * resolved against the stream's URL base. It must stay on base's origin
 * (scheme, host, port), or the server's headers would go elsewhere.
 * *out malloc'd. Returns 0, ENGINE_EINVAL (err says why) or ENGINE_ENOMEM.
 */
int	mcp_endpoint_url(const char *base, const char *data, char *err,
	    char **out);

/*
 * 1 when header line (n bytes, no CR/LF) is Mcp-Session-Id with a value
 * of visible ASCII shorter than bufsz, which goes to buf; else 0.
 */
int	mcp_session_header(const char *line, size_t n, char *buf,
	    size_t bufsz);

/* The tools of a tools/list result (those with a name). New array. */
json_t	*mcp_tools_of(const json_t *result);

/* MCP tools as tool_describe gives them: [{name, description,
 * parameters (inputSchema)}]. New array, NULL when out of memory. */
json_t	*mcp_tools_describe(const json_t *tools);

/*
 * A tools/call result into Dify's tool messages (mcp_wire.c says how).
 * isError is ENGINE_EINVAL with the tool's text in err; a part that is
 * not valid base64 ENGINE_EINVAL; too much text ENGINE_ELIMIT.
 */
int	mcp_call_result(const json_t *result, const char *tool, char *err,
	    struct tool_result *out);

/* url with its path and query masked (each becomes six asterisks), as
 * the API shows a registered server. *out malloc'd. */
int	mcp_url_mask(const char *url, char **out);

/* ====== MCP servers (mcp.c, mcp_providers.c) ====== */

/* A server to talk to. Owned: mcp_server_release. */
struct mcp_server {
	char	*url;
	json_t	*headers;	/* {name: value}, plain */
	int	 trusted;	/* registered by the admin: no SSRF guard */
	int	 timeout;	/* seconds; 0: mcp.timeout */
	int	 read_timeout;	/* seconds; 0: mcp.sse_read_timeout */
};
void	mcp_server_release(struct mcp_server *s);

/* The server of registered record rec, its secrets opened. */
int	mcp_server_from_record(struct engine *e, const json_t *rec, char *err,
	    struct mcp_server *out);

/*
 * The server at url as app content names it: the registered server of
 * exactly that URL (trusted, its own headers), or an untrusted one with
 * headers (an object, or NULL). ENGINE_EINVAL for a URL that is not
 * http(s).
 */
int	mcp_server_for_url(struct engine *e, const char *url,
	    const json_t *headers, char *err, struct mcp_server *out);

/*
 * The server a tool call names: a registered one (tool_provider_record),
 * else the node's own server_url / mcp_server (mcp_server_for_url).
 * ENGINE_ENOTFOUND with err when neither.
 */
int	mcp_server_of_call(struct engine *e, const struct tool_call *call,
	    char *err, struct mcp_server *out);

/*
 * The sessions of one run, one per server (at most mcp.max_sessions;
 * past that a call has a session of its own). mcp_pool_free closes each
 * (DELETE, or the event stream). Thread-safe; NULL from new when out of
 * memory (then every call has a session of its own).
 */
struct mcp_pool *mcp_pool_new(void);
void	mcp_pool_free(struct engine *e, struct mcp_pool *p);

/*
 * The tools of server s (pool: the run's sessions, or NULL for one
 * exchange): mcp_tools gives the MCP tools as the server lists them,
 * mcp_list_tools as tool_describe does. New references.
 */
int	mcp_tools(struct engine *e, struct mcp_pool *pool,
	    const struct mcp_server *s, char *err, json_t **out);
int	mcp_list_tools(struct engine *e, struct mcp_pool *pool,
	    const struct mcp_server *s, char *err, json_t **out);

/* Calls tool name with args (an object, or NULL) on server s. */
int	mcp_call_tool(struct engine *e, struct mcp_pool *pool,
	    const struct mcp_server *s, const char *name, const json_t *args,
	    char *err, struct tool_result *out);

/*
 * The same, its arguments sent as they are, with the tools/call result as
 * the server answered it in *result (new reference; isError not read).
 */
int	mcp_call_raw(struct engine *e, struct mcp_pool *pool,
	    const struct mcp_server *s, const char *name, const json_t *args,
	    char *err, json_t **result);

/* A registered server as the API shows it (Dify's ToolProviderApiEntity,
 * secrets masked). New reference, NULL when out of memory. */
json_t	*mcp_provider_view(const json_t *rec);

/*
 * A registered server's record from the console's fields in (over old,
 * the stored one, or NULL): secrets sealed, *url the URL in the clear
 * (free it), *url_changed whether it differs from old's.
 */
int	mcp_record_build(struct engine *e, const json_t *in, const json_t *old,
	    char *err, json_t **out, char **url, int *url_changed);

/* engine_tool_provider_put for type mcp: *out is the view. */
int	mcp_provider_put(struct engine *e, const json_t *in, char *err,
	    json_t **out);

#endif
