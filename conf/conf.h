/*
 * conf — flowcgi's settings: built-in defaults, the YAML file, FLOWCGI_*
 * environment overrides; and logging, which those settings configure.
 *
 * Every setting lives in one table in conf.c with its type, default and
 * bounds; conf/flowcgi.yml documents each one and a unit test keeps the two
 * in step. Nothing here includes another flowcgi module.
 */
#ifndef FLOWCGI_CONF_H
#define FLOWCGI_CONF_H

#include <stddef.h>
#include <stdint.h>

#define CONF_ERRMAX 512

enum conf_log_level {
	CONF_LOG_ERROR = 0,
	CONF_LOG_WARN,
	CONF_LOG_INFO,
	CONF_LOG_DEBUG,
};

enum conf_log_format {
	CONF_LOG_TEXT = 0,
	CONF_LOG_JSON,		/* one JSON object per line */
};

struct conf {
	/* server */
	char	 listen[256];		/* host:port or unix:/path */
	int	 socket_mode;		/* permissions of a unix socket */
	char	 socket_group[64];	/* its group; "" = the process's */
	char	 socket_owner[64];	/* its owner; "" = the process's */
	char	 allowed_clients[1024];	/* TCP peers: addresses, CIDRs, "*" */
	char	 allowed_users[512];	/* unix peers' users; "" = any */
	char	 allowed_groups[512];	/* unix peers' groups; "" = any */
	int	 workers;		/* serving threads kept ready */
	int	 max_connections;	/* connections served at once */
	int64_t	 thread_stack;		/* stack of a serving thread, bytes */
	int	 thread_idle;		/* seconds before a spare thread ends */
	int	 read_timeout;		/* seconds to receive a whole request */
	int	 write_timeout;		/* seconds a client may stop reading */
	int	 stream_flush_ms;	/* events held to share a flush; 0 = none */
	int	 max_runs;		/* runs at once; 0 = 3/4 of connections */
	char	 data_dir[1024];	/* LMDB environment, token, keys */
	char	 url_prefix[256];	/* forced mount prefix; "" = detect */
	char	 public_url[512];	/* absolute URLs in answers; "" = relative */
	int	 shutdown_grace;	/* seconds to finish requests on stop */
	/* apps and runs */
	int	 app_max_active_requests; /* runs at once per app; 0 = any */
	int	 run_stop_on_disconnect; /* a client that leaves stops its run */
	int	 run_publish_after;	/* ms before a run in progress is
					 * stored as running; 0 = at once */
	int	 run_app_cache;		/* parsed apps kept for runs */
	int64_t	 run_history_max_age;	/* seconds a run is kept; 0 = ever */
	int	 run_history_max_count;	/* runs kept per app; 0 = all */
	int	 run_prune_interval;	/* seconds between background passes;
					   0 = none (flowcgi prune only) */
	int	 run_prune_batch;	/* records one write transaction deletes */
	int	 run_stop_check_ms;	/* ms between looks for a stop */
	int	 run_host_lease;	/* seconds before a silent process's
					   running runs are failed */
	int64_t	 run_event_log;		/* bytes of a live run's events kept
					   for a page that comes back; 0 =
					   none */
	/* limits */
	int64_t	 max_body;		/* bytes in one request body */
	int64_t	 max_json_body;		/* bytes in one JSON request body */
	int	 max_json_depth;	/* nesting of a JSON request body */
	int	 request_timeout;	/* seconds a request may run */
	/* storage */
	int64_t	 map_size;		/* initial LMDB map size, bytes */
	int64_t	 max_map_size;		/* the map never grows past this */
	int	 sync;			/* fsync every commit */
	int	 batch_max;		/* most writes in one commit;
					   0: 64 with sync, else 1 */
	char	 storage_backend[16];	/* lmdb or postgres */
	char	 postgres_url[1024];	/* libpq conninfo or postgres:// URL */
	int	 postgres_pool;		/* connections per process; 0 = from
					   server.max_runs */
	int	 postgres_wait;		/* seconds a transaction waits for
					   the database, then 503 */
	char	 secrets_key_file[1024]; /* the secrets key; "" = secret.key
					   of the data directory */
	/* /v1/audio-to-text and /v1/text-to-audio */
	char	 audio_stt_model[256];	/* "provider#model" */
	char	 audio_tts_model[256];	/* "provider#model" */
	int64_t	 audio_max_upload;	/* bytes of one audio upload */
	/* workflow runs (Dify's defaults) */
	int	 workflow_max_steps;	/* node executions per run */
	int	 workflow_max_time;	/* seconds per run */
	int	 workflow_max_parallel;	/* concurrent branches per run */
	int	 workflow_max_loop;	/* rounds of one loop or iteration */
	int	 workflow_last_run_scan; /* debugger runs a node's last-run
					   reads back through */
	int	 workflow_max_versions;	/* published versions kept per app */
	int	 workflow_max_threads;	/* threads of one run, all levels */
	int64_t	 workflow_max_variable_size; /* bytes of one environment or
					   conversation variable's value */
	/* assets: the app file system */
	int64_t	 asset_max_file;	/* bytes in one file */
	int64_t	 asset_max_app_bytes;	/* bytes of all files of one app */
	int	 asset_max_files;	/* files and folders of one app */
	int	 asset_max_path;	/* bytes in a full path */
	int	 asset_max_name;	/* bytes in one file or folder name */
	int	 asset_batch_max_files;	/* nodes one batch-upload makes */
	int64_t	 asset_link_ttl;	/* seconds a signed file link lives */
	/* files uploaded through the service API */
	int64_t	 upload_max_file;	/* bytes in one upload */
	/* bundles: .zip exports of sandboxed apps */
	int64_t	 bundle_max_size;	/* bytes, compressed and unpacked */
	int	 bundle_max_ratio;	/* unpacked / compressed */
	int64_t	 bundle_import_ttl;	/* seconds a prepared import waits */
	int	 bundle_max_pending;	/* prepared imports at once */
	/* outbound HTTP (http-request node, tools, yaml-url, LLM, E2B) */
	int	 http_connect_timeout;	/* seconds */
	int	 http_timeout;		/* seconds for a whole exchange */
	int64_t	 http_max_response;	/* bytes */
	int	 http_allow_private;	/* let app content reach private nets */
	int64_t	 http_max_text_response; /* http-request node: text body */
	int64_t	 http_max_binary_response; /* http-request node: file body */
	/* MCP servers (tool nodes, agents) */
	int	 mcp_timeout;		/* seconds to connect, per request */
	int	 mcp_sse_read_timeout;	/* seconds an answer may take */
	int	 mcp_max_sessions;	/* servers with a session, per run */
	/* tool providers declared as data (engine/tools/manifest.c) */
	char	 tools_providers_dir[1024]; /* an admin's manifests; "" none */
	int	 tools_max_retries;	/* retries of a retryable answer */
	int	 tools_timeout;		/* seconds for one tool request */
	int64_t	 tools_max_file;	/* bytes of a file a tool fetches */
	/* file-making tools (md_exporter, chart, qrcode) */
	int64_t	 export_max_input;	/* bytes of Markdown or chart data */
	int64_t	 export_max_output;	/* bytes of one file made */
	int	 export_max_pages;	/* pages of one PDF */
	int	 export_max_points;	/* values of one chart */
	int	 tools_workflow_max_depth; /* workflow tools nested in runs */
	/* pdf_process (engine/tools/pdf_process.c) */
	int	 tools_pdf_max_pages;	/* pages of one pdf_to_png call */
	/* the document readers (engine/documents/) */
	int64_t	 documents_max_file_size; /* bytes of one file read */
	int	 documents_max_pages;	/* pages of one PDF */
	int64_t	 documents_max_unpacked; /* bytes out of one file */
	int	 documents_max_ratio;	/* unpacked / packed of a zip */
	int	 documents_max_cells;	/* values of one sheet */
	int	 documents_timeout;	/* seconds reading one file */
	int64_t	 tools_pdf_max_pixels;	/* pixels of one page image */
	/* the database tool (engine/tools/database.c) */
	int	 tools_db_max_rows;	/* rows of one answer */
	int64_t	 tools_db_max_bytes;	/* bytes of one answer's values */
	int	 tools_db_timeout;	/* seconds one query may run */
	/* knowledge bases (engine/knowledge/) */
	int64_t	 kb_max_document;	/* bytes of one document's text */
	int	 kb_max_segments;	/* chunks of one document */
	int	 kb_max_query;		/* characters of a retrieve query */
	int	 kb_max_metadata_fields; /* custom metadata fields a dataset */
	int	 kb_embed_batch;	/* texts per embeddings request */
	int	 kb_embed_retries;	/* retries of a transient answer */
	int	 kb_keyword_index;	/* keyword search reads the index */
	/* annotation reply (engine/knowledge/annotations.c) */
	int	 annotations_max;	/* question/answer pairs of one app */
	int	 annotations_max_text;	/* bytes of a question or an answer */
	int	 annotations_max_hits;	/* hit histories one app keeps */
	/* a new conversation named by the app's model (engine/run/suggest.c) */
	int	 conversation_auto_name;
	/* sandbox: the local (bubblewrap) provider and its limits */
	char	 code_python_paths[2048]; /* folders for PYTHONPATH, comma-separated */
	char	 sandbox_dir[1024];	/* workspaces; "" = <data_dir>/sandboxes */
	int	 sandbox_network;	/* egress through the proxy */
	char	 sandbox_network_allow[4096]; /* hosts, comma-separated */
	int	 sandbox_network_connections; /* open at once, per sandbox */
	int	 sandbox_network_idle;	/* seconds a silent connection lives */
	int64_t	 sandbox_memory;	/* RLIMIT_DATA per process, bytes */
	int	 sandbox_cpu_seconds;	/* RLIMIT_CPU per process */
	int	 sandbox_processes;	/* RLIMIT_NPROC of the sandbox uid */
	int64_t	 sandbox_file_size;	/* RLIMIT_FSIZE, bytes */
	int64_t	 sandbox_workspace_size; /* all files of one sandbox, bytes */
	int	 sandbox_workspace_list_max; /* entries a listing answers */
	int	 sandbox_open_files;	/* RLIMIT_NOFILE */
	int	 sandbox_timeout;	/* wall-clock seconds per command */
	int64_t	 sandbox_max_output;	/* bytes kept of stdout, of stderr */
	int	 sandbox_uid;		/* uid commands run as when root */
	int64_t	 sandbox_memory_budget;	/* all local sandboxes; 0: half RAM */
	int	 sandbox_budget_wait;	/* seconds a create waits for room */
	/* code nodes: warm runners (engine/sandbox/codepool.c) */
	int	 code_pool_size;	/* per language; 0: none */
	int	 code_pool_idle;	/* seconds before one is replaced */
	int	 code_fork_server;	/* python3 on fork servers */
	int	 code_fork_server_javascript;	/* and javascript */
	int	 code_pool_max;		/* fork servers per process at most */
	int	 code_pool_wait_ms;	/* for a busy fork server, before a
					 * cold start */
	int	 code_pool_spare_idle;	/* seconds one above pool_size may
					 * wait unused */
	/* code nodes: Dify's limits on a result (CODE_MAX_*) */
	int	 code_max_string_length; /* characters of a string */
	int	 code_max_depth;	/* nesting of a value */
	int	 code_max_string_array_length; /* items */
	int	 code_max_object_array_length; /* items */
	int	 code_max_number_array_length; /* items */
	/* the sandboxed runtime's Agent (llm node with computer_use) */
	int	 agent_command_timeout;	/* wall-clock seconds per command */
	int	 agent_output_max;	/* characters of output the model sees */
	int	 agent_output_keep;	/* head and tail characters when cut */
	int	 agent_max_files;	/* files returned from output/ */
	int64_t	 agent_max_file_size;	/* bytes per returned file */
	/* model providers (engine/llm/) */
	char	 llm_base_url[1024];	/* catch-all OpenAI-compatible URL */
	char	 llm_api_key[512];	/* its API key */
	int	 llm_timeout;		/* seconds per model request */
	int	 llm_retries;		/* retries of a 429 / 5xx answer */
	int	 llm_backoff_ms;	/* first wait before a retry */
	int	 llm_max_backoff_ms;	/* longest wait before a retry */
	/* metrics (GET /metrics) and traces (OTLP) */
	int	 metrics_enabled;	/* answer GET /metrics */
	char	 metrics_token[256];	/* its own bearer token; "" = admin's */
	char	 metrics_allow[1024];	/* client addresses; "" = any */
	int	 metrics_max_series;	/* label sets per metric */
	int	 metrics_share_interval; /* s between writes for the other
					 * processes; 0 = none */
	char	 tracing_endpoint[1024]; /* OTLP/HTTP traces URL; "" = off */
	char	 tracing_headers[2048];	/* "k=v,k2=v2", values %-encoded */
	int	 tracing_include_content; /* prompts, inputs, outputs */
	int	 tracing_queue_max;	/* spans waiting to be sent */
	int	 tracing_batch_max;	/* spans in one request */
	int	 tracing_flush_ms;	/* longest a span waits */
	int	 tracing_timeout;	/* s for one export request */
	char	 tracing_service_name[128]; /* resource service.name */
	/* logging */
	int	 log_level;		/* enum conf_log_level */
	char	 log_file[1024];	/* "" = standard error */
	int	 log_format;		/* enum conf_log_format */
	int	 log_requests;		/* a line per request at info */
	/* the Web App (fcgi/web_*.c) */
	int	 webapp_enabled;	/* serve the share pages */
	char	 webapp_frame_ancestors[1024]; /* CSP frame-ancestors */
	int	 webapp_rate_limit;	/* runs a minute per address / user */
	int	 webapp_saved_max;	/* saved messages per end user */
};

/* Fills c with the built-in defaults. Never fails. */
void	conf_defaults(struct conf *c);

/*
 * Reads the YAML file at path over the values already in c. Returns 0, or
 * -1 with a message naming the file, line and key in err (CONF_ERRMAX bytes):
 * an unknown key, a wrong type or an impossible value.
 */
int	conf_load_file(struct conf *c, const char *path, char *err);

/*
 * Applies FLOWCGI_<SECTION>_<NAME> environment variables over c (for
 * example FLOWCGI_SERVER_WORKERS, FLOWCGI_LIMITS_MAX_BODY). Returns 0, or -1
 * with a message naming the variable in err.
 */
int	conf_load_env(struct conf *c, char *err);

/* The number of settings, and the dotted name ("server.workers") of one. */
size_t	conf_setting_count(void);
const char *conf_setting_name(size_t i);

/*
 * Formats setting i of c as it would be written in the YAML file into buf.
 * Returns buf.
 */
const char *conf_setting_format(const struct conf *c, size_t i, char *buf,
	    size_t bufsz);

/* ====== Logging ====== */

/*
 * Sets the level and destination of log lines. path NULL or "" means
 * standard error. Returns 0 or -1 when the file cannot be opened.
 */
int	log_init(int level, const char *path);
/* CONF_LOG_TEXT (the default) or CONF_LOG_JSON. */
void	log_set_format(int format);
/* 1: log_request lines at info (log.requests); 0: at debug. */
void	log_set_requests(int on);

/*
 * What the lines a thread logs are about, written into each JSON line
 * (request_id, route, app, run_id; NULL or "" leaves one out). The
 * request's strings are borrowed until the next call or
 * log_context_clear; the run's are copied.
 */
void	log_context_request(const char *request_id, const char *route);
void	log_context_run(const char *app, const char *run_id);
void	log_context_clear(void);
/* The request id of the calling thread's request, or NULL. */
const char *log_context_request_id(void);

/*
 * One line about an answered request, with its method, path, status and
 * duration in ms (JSON: members method, status, duration_ms): at info
 * level with log.requests on, else at debug.
 */
void	log_request(const char *method, const char *path, int status,
	    double ms);

/* One line each, prefixed with time and level; thread-safe. */
void	log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ====== Metrics ====== */

/*
 * Counters, gauges and histograms that any module updates and GET /metrics
 * shows in the Prometheus text format (metrics.c). Updating one is a few
 * atomic operations and takes no lock (the first use of a new set of
 * label values takes one, once); with metrics.enabled off it is a load
 * and a branch. Label values must come from bounded sets (app ids, node
 * types, provider and model names, route patterns, statuses), never from
 * end users; each is cut to 64 bytes and a metric keeps at most
 * metrics.max_series sets of them (the rest count in one "_overflow"
 * series). The label names of each metric are fixed in metrics.c, in the
 * order given here.
 */
enum metric_kind { METRIC_COUNTER, METRIC_GAUGE, METRIC_HISTOGRAM };

enum metric_id {
	METRIC_RUNS_STARTED,		/* app, mode */
	METRIC_RUNS_FINISHED,		/* app, mode, status */
	METRIC_RUN_DURATION,		/* app, mode; seconds */
	METRIC_RUNS_ACTIVE,		/* gauge */
	METRIC_STREAMS_ACTIVE,		/* gauge */
	METRIC_NODE_DURATION,		/* node_type, status; seconds */
	METRIC_REJECTED,		/* limit, status */
	METRIC_LLM_CALLS,		/* provider, model, status */
	METRIC_LLM_DURATION,		/* provider, model; seconds */
	METRIC_LLM_TOKENS,		/* provider, model, type */
	METRIC_SANDBOX_OPS,		/* provider, op, status */
	METRIC_SANDBOX_DURATION,	/* provider, op; seconds */
	METRIC_HTTP_REQUESTS,		/* route, status */
	METRIC_HTTP_DURATION,		/* route; seconds */
	METRIC_STORE_COMMIT_DURATION,	/* seconds */
	METRIC_STORE_FSYNCS,
	METRIC_CONNECTIONS,		/* gauge */
	METRIC_CONNECTIONS_DROPPED,	/* reason */
	METRIC_TRACE_SPANS,		/* outcome */
	METRIC_PROCESS_RSS,		/* gauge, bytes */
	METRIC_PROCESS_THREADS,		/* gauge */
	METRIC_PROCESS_START,		/* gauge, s since the epoch */
	METRIC_SERIES_OVERFLOW,		/* family */
	METRIC__COUNT
};

/* The label values of one update: METRIC_LABELS(app, mode). */
#define METRIC_LABELS(...) ((const char *const[]){ __VA_ARGS__ })

/*
 * Turns metrics on with at most max_series label sets per metric (a no-op
 * when enabled is 0: every update then costs a branch). Returns 0, or -1
 * when out of memory. Called once, before any thread counts.
 */
int	metrics_init(int enabled, int max_series);
int	metrics_enabled(void);
/* "<host>:<pid>", the instance label of this process's series (also the
 * traces' service.instance.id), whether metrics are on or not. */
const char *metrics_instance(void);
/* This machine's name into buf ("localhost" when it has none). */
const char *conf_hostname(char *buf, size_t n);

/* Adds n to a counter (n >= 0) or a gauge (any n). */
void	metric_add(enum metric_id id, const char *const *labels, int64_t n);
/* Sets a gauge. */
void	metric_set(enum metric_id id, const char *const *labels, int64_t v);
/* Counts one observation v in a histogram. */
void	metric_observe(enum metric_id id, const char *const *labels,
	    double v);
/* Monotonic seconds, for durations. */
double	metric_clock(void);

/*
 * Shares this process's series with the others on data_dir: they go to
 * <data_dir>/metrics/<pid>.prom every interval seconds and before each
 * scrape, and a scrape shows the series of every live process. 0 (also
 * when metrics are off or interval is 0), or -1 with errno.
 */
int	metrics_share_start(const char *data_dir, int interval);
void	metrics_share_stop(void);

/*
 * The exposition (text format 0.0.4) of every metric, with the series of
 * the other processes when shared. 0 with *out malloc'd (caller frees),
 * or -1 (metrics off, out of memory).
 */
int	metrics_render(char **out, size_t *len);

/*
 * Escapes s[0..n) for the text format into out (outsz bytes, cut to fit):
 * backslash and newline, and with help 0 (a label value) the double quote.
 * Returns the length written.
 */
size_t	metrics_escape(const char *s, size_t n, int help, char *out,
	    size_t outsz);

#endif
