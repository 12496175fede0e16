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

struct conf {
	/* server */
	char	 listen[256];		/* host:port or unix:/path */
	int	 socket_mode;		/* permissions of a unix socket */
	char	 socket_group[64];	/* its group; "" = the process's */
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
	/* limits */
	int64_t	 max_body;		/* bytes in one request body */
	int64_t	 max_json_body;		/* bytes in one JSON request body */
	int	 max_json_depth;	/* nesting of a JSON request body */
	int	 request_timeout;	/* seconds a request may run */
	/* storage */
	int64_t	 map_size;		/* initial LMDB map size, bytes */
	int64_t	 max_map_size;		/* the map never grows past this */
	int	 sync;			/* fsync every commit */
	int	 batch_max;		/* most writes in one commit */
	/* workflow runs (Dify's defaults) */
	int	 workflow_max_steps;	/* node executions per run */
	int	 workflow_max_time;	/* seconds per run */
	int	 workflow_max_parallel;	/* concurrent branches per run */
	int	 workflow_max_loop;	/* rounds of one loop or iteration */
	int	 workflow_max_threads;	/* threads of one run, all levels */
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
	/* sandbox: the local (bubblewrap) provider and its limits */
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
	/* code nodes: warm runners (engine/sandbox/codepool.c) */
	int	 code_pool_size;	/* per language; 0: none */
	int	 code_pool_idle;	/* seconds before one is replaced */
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
	/* logging */
	int	 log_level;		/* enum conf_log_level */
	char	 log_file[1024];	/* "" = standard error */
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

/* One line each, prefixed with time and level; thread-safe. */
void	log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
