/*
 * conf.c — the settings table, the YAML loader and environment overrides.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "conf/conf.h"

enum setting_type {
	SET_STR,
	SET_INT,
	SET_SIZE,	/* bytes, with an optional k, m or g suffix */
	SET_BOOL,
	SET_LEVEL,	/* error, warn, info, debug */
	SET_MODE,	/* file permissions in octal: "0660" */
	SET_DURATION,	/* seconds, with an optional s, m, h or d suffix */
	SET_LIST,	/* words; kept as one string, comma-separated */
	SET_LOGFMT,	/* text, json */
};

struct setting {
	const char		*name;	/* section.key */
	enum setting_type	 type;
	size_t			 off;
	size_t			 size;	/* for SET_STR: buffer size */
	const char		*def;	/* default, as written in YAML */
	int64_t			 min, max;
};

#define S_STR(n, f, d)                                                        \
	{ n, SET_STR, offsetof(struct conf, f),                               \
	    sizeof(((struct conf *)0)->f), d, 0, 0 }
#define S_LIST(n, f, d)                                                       \
	{ n, SET_LIST, offsetof(struct conf, f),                              \
	    sizeof(((struct conf *)0)->f), d, 0, 0 }
#define S_INT(n, t, f, d, lo, hi)                                             \
	{ n, t, offsetof(struct conf, f), sizeof(((struct conf *)0)->f), d,   \
	    lo, hi }

static const struct setting settings[] = {
	S_STR("server.listen", listen, "127.0.0.1:9000"),
	S_INT("server.socket_mode", SET_MODE, socket_mode, "0660", 0, 0777),
	S_STR("server.socket_group", socket_group, ""),
	S_STR("server.socket_owner", socket_owner, ""),
	S_LIST("server.allowed_clients", allowed_clients, "127.0.0.0/8,::1"),
	S_LIST("server.allowed_users", allowed_users, ""),
	S_LIST("server.allowed_groups", allowed_groups, ""),
	S_INT("server.workers", SET_INT, workers, "4", 1, 1024),
	S_INT("server.max_connections", SET_INT, max_connections, "1024", 2,
	    65536),
	S_INT("server.thread_stack", SET_SIZE, thread_stack, "256k", 64 << 10,
	    64 << 20),
	S_INT("server.thread_idle", SET_INT, thread_idle, "30", 1, 86400),
	S_INT("server.read_timeout", SET_INT, read_timeout, "30", 1, 3600),
	S_INT("server.write_timeout", SET_INT, write_timeout, "300", 1, 86400),
	S_INT("server.stream_flush_ms", SET_INT, stream_flush_ms, "5", 0, 1000),
	S_INT("server.max_runs", SET_INT, max_runs, "0", 0, 65536),
	S_STR("server.data_dir", data_dir, "var"),
	S_STR("server.url_prefix", url_prefix, ""),
	S_STR("server.public_url", public_url, ""),
	S_INT("server.shutdown_grace", SET_INT, shutdown_grace, "30", 0, 3600),
	S_INT("app.max_active_requests", SET_INT, app_max_active_requests, "0",
	    0, 100000),
	S_INT("run.stop_on_disconnect", SET_BOOL, run_stop_on_disconnect,
	    "false", 0, 1),
	S_INT("run.publish_after", SET_INT, run_publish_after, "200", 0,
	    3600000),
	S_INT("run.app_cache", SET_INT, run_app_cache, "64", 0, 100000),
	S_INT("run.history_max_age", SET_DURATION, run_history_max_age, "30d",
	    0, (int64_t)36500 * 86400),
	S_INT("run.history_max_count", SET_INT, run_history_max_count, "10000",
	    0, 1000000000),
	S_INT("run.prune_interval", SET_DURATION, run_prune_interval, "10m", 0,
	    86400 * 7),
	S_INT("run.prune_batch", SET_INT, run_prune_batch, "200", 1, 10000),
	S_INT("run.stop_check_ms", SET_INT, run_stop_check_ms, "100", 0, 10000),
	S_INT("run.host_lease", SET_DURATION, run_host_lease, "30s", 2, 86400),
	S_INT("run.event_log", SET_SIZE, run_event_log, "1m", 0,
	    (int64_t)1 << 30),
	S_INT("limits.max_body", SET_SIZE, max_body, "64m", 1024,
	    (int64_t)4 << 30),
	S_INT("limits.max_json_body", SET_SIZE, max_json_body, "16m", 1024,
	    (int64_t)1 << 30),
	S_INT("limits.max_json_depth", SET_INT, max_json_depth, "64", 2, 1000),
	S_INT("limits.request_timeout", SET_INT, request_timeout, "1200", 1,
	    86400),
	S_INT("storage.map_size", SET_SIZE, map_size, "64m", 1 << 20,
	    (int64_t)1 << 40),
	S_INT("storage.max_map_size", SET_SIZE, max_map_size, "16g", 1 << 20,
	    (int64_t)1 << 40),
	S_INT("storage.sync", SET_BOOL, sync, "true", 0, 1),
	S_INT("storage.batch_max", SET_INT, batch_max, "0", 0, 1024),
	S_STR("storage.backend", storage_backend, "lmdb"),
	S_STR("storage.postgres_url", postgres_url, ""),
	S_INT("storage.postgres_pool", SET_INT, postgres_pool, "0", 0, 1024),
	S_INT("storage.postgres_wait", SET_DURATION, postgres_wait, "10s", 1,
	    3600),
	S_STR("secrets.key_file", secrets_key_file, ""),
	S_STR("audio.speech_to_text_model", audio_stt_model,
	    "openai#whisper-1"),
	S_STR("audio.text_to_speech_model", audio_tts_model, "openai#tts-1"),
	S_INT("audio.max_upload", SET_SIZE, audio_max_upload, "30m", 1024,
	    (int64_t)1 << 32),
	S_INT("workflow.max_steps", SET_INT, workflow_max_steps, "500", 1,
	    1000000),
	S_INT("workflow.max_time", SET_INT, workflow_max_time, "1200", 1,
	    86400 * 7),
	S_INT("workflow.max_parallel", SET_INT, workflow_max_parallel, "10", 1,
	    256),
	S_INT("workflow.max_loop", SET_INT, workflow_max_loop, "100", 1,
	    1000000),
	S_INT("workflow.last_run_scan", SET_INT, workflow_last_run_scan,
	    "100", 1, 100000),
	S_INT("workflow.max_versions", SET_INT, workflow_max_versions, "100",
	    0, 100000),
	S_INT("workflow.max_threads", SET_INT, workflow_max_threads, "32", 1,
	    4096),
	S_INT("workflow.max_variable_size", SET_SIZE, workflow_max_variable_size,
	    "200k", 1, (int64_t)1 << 30),
	S_INT("assets.max_file_size", SET_SIZE, asset_max_file, "15m", 1,
	    (int64_t)1 << 31),
	S_INT("assets.max_app_size", SET_SIZE, asset_max_app_bytes, "200m", 1,
	    (int64_t)1 << 40),
	S_INT("assets.max_files", SET_INT, asset_max_files, "1000", 1,
	    1000000),
	S_INT("assets.max_path", SET_INT, asset_max_path, "1024", 16, 4096),
	S_INT("assets.max_name", SET_INT, asset_max_name, "255", 1, 1024),
	S_INT("assets.batch_max_files", SET_INT, asset_batch_max_files, "200",
	    1, 1000000),
	S_INT("assets.link_ttl", SET_DURATION, asset_link_ttl, "1h", 1,
	    86400 * 7),
	S_INT("uploads.max_file_size", SET_SIZE, upload_max_file, "15m", 1,
	    (int64_t)1 << 31),
	S_INT("bundle.max_size", SET_SIZE, bundle_max_size, "50m", 1024,
	    (int64_t)1 << 32),
	S_INT("bundle.max_ratio", SET_INT, bundle_max_ratio, "100", 2, 100000),
	S_INT("bundle.import_ttl", SET_DURATION, bundle_import_ttl, "1h", 1,
	    86400 * 7),
	S_INT("bundle.max_pending", SET_INT, bundle_max_pending, "20", 1,
	    10000),
	S_INT("http.connect_timeout", SET_INT, http_connect_timeout, "10", 1,
	    600),
	S_INT("http.timeout", SET_INT, http_timeout, "600", 1, 86400),
	S_INT("http.max_response", SET_SIZE, http_max_response, "10m", 1024,
	    (int64_t)1 << 32),
	S_INT("http.allow_private", SET_BOOL, http_allow_private, "false", 0,
	    1),
	S_INT("http.max_text_response", SET_SIZE, http_max_text_response, "1m",
	    1024, (int64_t)1 << 32),
	S_INT("http.max_binary_response", SET_SIZE, http_max_binary_response,
	    "10m", 1024, (int64_t)1 << 32),
	S_INT("mcp.timeout", SET_INT, mcp_timeout, "30", 1, 86400),
	S_INT("mcp.sse_read_timeout", SET_INT, mcp_sse_read_timeout, "300", 1,
	    86400),
	S_INT("mcp.max_sessions", SET_INT, mcp_max_sessions, "8", 1, 256),
	S_STR("tools.providers_dir", tools_providers_dir, ""),
	S_INT("tools.max_retries", SET_INT, tools_max_retries, "2", 0, 10),
	S_INT("tools.timeout", SET_INT, tools_timeout, "60", 1, 3600),
	S_INT("tools.max_file_size", SET_SIZE, tools_max_file, "10m", 1024,
	    (int64_t)1 << 31),
	S_INT("export.max_input", SET_SIZE, export_max_input, "4m", 1024,
	    (int64_t)1 << 30),
	S_INT("export.max_output", SET_SIZE, export_max_output, "32m", 4096,
	    (int64_t)1 << 31),
	S_INT("export.max_pages", SET_INT, export_max_pages, "500", 1, 100000),
	S_INT("export.max_points", SET_INT, export_max_points, "10000", 1,
	    1000000),
	S_INT("tools.pdf_max_pages", SET_INT, tools_pdf_max_pages, "20", 1,
	    1000),
	S_INT("documents.max_file_size", SET_SIZE, documents_max_file_size,
	    "50m", 1, (int64_t)1 << 31),
	S_INT("documents.max_pages", SET_INT, documents_max_pages, "1000", 1,
	    1000000),
	S_INT("documents.max_unpacked", SET_SIZE, documents_max_unpacked,
	    "64m", 1024, (int64_t)1 << 31),
	S_INT("documents.max_ratio", SET_INT, documents_max_ratio, "200", 1,
	    100000),
	S_INT("documents.max_cells", SET_INT, documents_max_cells, "1000000",
	    1, 100000000),
	S_INT("documents.timeout", SET_DURATION, documents_timeout, "60s", 1,
	    86400),
	S_INT("tools.pdf_max_pixels", SET_INT, tools_pdf_max_pixels,
	    "25000000", 10000, 400000000),
	S_INT("tools.workflow_max_depth", SET_INT, tools_workflow_max_depth,
	    "5", 1, 64),
	S_INT("tools.database_max_rows", SET_INT, tools_db_max_rows, "1000", 1,
	    1000000),
	S_INT("tools.database_max_bytes", SET_SIZE, tools_db_max_bytes, "1m",
	    1024, (int64_t)1 << 30),
	S_INT("tools.database_timeout", SET_INT, tools_db_timeout, "30", 1,
	    3600),
	S_INT("knowledge.max_document_size", SET_SIZE, kb_max_document, "15m",
	    1024, (int64_t)1 << 31),
	S_INT("knowledge.max_segments", SET_INT, kb_max_segments, "20000", 1,
	    10000000),
	S_INT("knowledge.max_query", SET_INT, kb_max_query, "250", 1, 100000),
	S_INT("knowledge.max_metadata_fields", SET_INT, kb_max_metadata_fields,
	    "50", 1, 1000),
	S_INT("knowledge.embed_batch", SET_INT, kb_embed_batch, "32", 1, 2048),
	S_INT("knowledge.embed_retries", SET_INT, kb_embed_retries, "3", 0, 10),
	S_INT("knowledge.keyword_index", SET_BOOL, kb_keyword_index, "true", 0,
	    1),
	S_INT("annotations.max_per_app", SET_INT, annotations_max, "2000", 1,
	    100000),
	S_INT("annotations.max_text", SET_SIZE, annotations_max_text, "64k",
	    16, 1 << 24),
	S_INT("annotations.max_hit_histories", SET_INT, annotations_max_hits,
	    "1000", 0, 100000),
	S_INT("conversation.auto_name", SET_BOOL, conversation_auto_name,
	    "true", 0, 1),
	S_STR("sandbox.dir", sandbox_dir, ""),
	S_INT("sandbox.network", SET_BOOL, sandbox_network, "false", 0, 1),
	S_LIST("sandbox.network_allow", sandbox_network_allow, "*"),
	S_INT("sandbox.network_connections", SET_INT,
	    sandbox_network_connections, "32", 1, 4096),
	S_INT("sandbox.network_idle", SET_INT, sandbox_network_idle, "60", 1,
	    86400),
	S_INT("sandbox.memory", SET_SIZE, sandbox_memory, "512m", 16 << 20,
	    (int64_t)1 << 40),
	S_INT("sandbox.cpu_seconds", SET_INT, sandbox_cpu_seconds, "30", 1,
	    86400),
	S_INT("sandbox.processes", SET_INT, sandbox_processes, "64", 4,
	    100000),
	S_INT("sandbox.file_size", SET_SIZE, sandbox_file_size, "64m", 4096,
	    (int64_t)1 << 40),
	S_INT("sandbox.workspace_size", SET_SIZE, sandbox_workspace_size,
	    "256m", 1 << 20, (int64_t)1 << 40),
	S_INT("sandbox.workspace_list_max", SET_INT,
	    sandbox_workspace_list_max, "10000", 1, 1000000),
	S_INT("sandbox.open_files", SET_INT, sandbox_open_files, "256", 16,
	    65536),
	S_INT("sandbox.timeout", SET_INT, sandbox_timeout, "60", 1, 86400),
	S_INT("sandbox.max_output", SET_SIZE, sandbox_max_output, "1m", 1024,
	    (int64_t)1 << 30),
	S_INT("sandbox.uid", SET_INT, sandbox_uid, "65534", 1, 2147483647),
	S_INT("sandbox.memory_budget", SET_SIZE, sandbox_memory_budget, "0", 0,
	    (int64_t)1 << 50),
	S_INT("sandbox.budget_wait", SET_INT, sandbox_budget_wait, "30", 0,
	    3600),
	/* at most SANDBOX_POOL_MAX (engine/sandbox/sandbox.h) */
	S_LIST("code.python_paths", code_python_paths, ""),
	S_INT("code.pool_size", SET_INT, code_pool_size, "2", 0, 16),
	S_INT("code.pool_idle", SET_INT, code_pool_idle, "300", 0, 86400),
	S_INT("code.fork_server", SET_BOOL, code_fork_server, "true", 0, 1),
	S_INT("code.fork_server_javascript", SET_BOOL,
	    code_fork_server_javascript, "false", 0, 1),
	S_INT("code.pool_max", SET_INT, code_pool_max, "4", 0, 16),
	S_INT("code.pool_spare_idle", SET_INT, code_pool_spare_idle, "30", 0,
	    86400),
	S_INT("code.pool_wait_ms", SET_INT, code_pool_wait_ms, "1000", 0,
	    60000),
	S_INT("code.max_string_length", SET_INT, code_max_string_length,
	    "400000", 1, 1 << 30),
	S_INT("code.max_depth", SET_INT, code_max_depth, "5", 1, 100),
	S_INT("code.max_string_array_length", SET_INT,
	    code_max_string_array_length, "30", 1, 10000000),
	S_INT("code.max_object_array_length", SET_INT,
	    code_max_object_array_length, "30", 1, 10000000),
	S_INT("code.max_number_array_length", SET_INT,
	    code_max_number_array_length, "1000", 1, 10000000),
	S_INT("agent.command_timeout", SET_INT, agent_command_timeout, "3600",
	    1, 86400),
	S_INT("agent.output_max", SET_INT, agent_output_max, "8000", 100,
	    10000000),
	S_INT("agent.output_keep", SET_INT, agent_output_keep, "2500", 10,
	    5000000),
	S_INT("agent.max_files", SET_INT, agent_max_files, "50", 0, 10000),
	S_INT("agent.max_file_size", SET_SIZE, agent_max_file_size, "10m", 1,
	    (int64_t)1 << 32),
	S_STR("llm.base_url", llm_base_url, ""),
	S_STR("llm.api_key", llm_api_key, ""),
	S_INT("llm.timeout", SET_INT, llm_timeout, "600", 1, 86400),
	S_INT("llm.retries", SET_INT, llm_retries, "3", 0, 10),
	S_INT("llm.backoff_ms", SET_INT, llm_backoff_ms, "1000", 0, 600000),
	S_INT("llm.max_backoff_ms", SET_INT, llm_max_backoff_ms, "30000", 0,
	    3600000),
	S_INT("metrics.enabled", SET_BOOL, metrics_enabled, "false", 0, 1),
	S_STR("metrics.token", metrics_token, ""),
	S_LIST("metrics.allow", metrics_allow, ""),
	S_INT("metrics.max_series", SET_INT, metrics_max_series, "1000", 10,
	    1000000),
	S_INT("metrics.share_interval", SET_INT, metrics_share_interval, "10",
	    0, 3600),
	S_STR("tracing.otlp_endpoint", tracing_endpoint, ""),
	S_STR("tracing.headers", tracing_headers, ""),
	S_INT("tracing.include_content", SET_BOOL, tracing_include_content,
	    "false", 0, 1),
	S_INT("tracing.queue_max", SET_INT, tracing_queue_max, "8192", 16,
	    10000000),
	S_INT("tracing.batch_max", SET_INT, tracing_batch_max, "512", 1,
	    100000),
	S_INT("tracing.flush_ms", SET_INT, tracing_flush_ms, "1000", 10,
	    600000),
	S_INT("tracing.timeout", SET_INT, tracing_timeout, "10", 1, 600),
	S_STR("tracing.service_name", tracing_service_name, "flowcgi"),
	S_INT("log.level", SET_LEVEL, log_level, "info", 0, 3),
	S_STR("log.file", log_file, ""),
	S_INT("log.format", SET_LOGFMT, log_format, "text", 0, 1),
	S_INT("log.requests", SET_BOOL, log_requests, "false", 0, 1),
	S_INT("webapp.enabled", SET_BOOL, webapp_enabled, "true", 0, 1),
	S_STR("webapp.frame_ancestors", webapp_frame_ancestors, "*"),
	S_INT("webapp.rate_limit", SET_INT, webapp_rate_limit, "60", 0,
	    1000000),
	S_INT("webapp.saved_messages_max", SET_INT, webapp_saved_max, "500",
	    1, 10000),
};
#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

static const char *const level_names[] = {"error", "warn", "info", "debug"};
static const char *const format_names[] = {"text", "json"};

/* ====== Values ====== */

static int
parse_int64(const char *s, int64_t *out)
{
	char	*end;
	long long v;

	if (*s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s)
		return -1;
	*out = v;
	return (int)(end - s);
}

/* What a value of an integer type looks like, for messages. */
static const char *
type_want(enum setting_type t)
{
	switch (t) {
	case SET_SIZE: return "a size such as 512k or 64m";
	case SET_DURATION: return "a duration such as 90s, 12h or 30d";
	default: return "an integer";
	}
}

/*
 * A list setting from text: words separated by commas or blanks, each of
 * printable characters but the separators, kept in p (size bytes) joined
 * by single commas; "" is the empty list. Returns 0 or -1 with why.
 */
static int
list_set(char *p, size_t size, const char *text, char *why, size_t whysz)
{
	size_t	o = 0, n;

	for (;;) {
		text += strspn(text, ", \t\r\n");
		if (*text == '\0')
			break;
		n = strcspn(text, ", \t\r\n");
		if (o + (o > 0) + n >= size) {
			snprintf(why, whysz, "longer than %zu bytes", size - 1);
			return -1;
		}
		if (o > 0)
			p[o++] = ',';
		memcpy(p + o, text, n);
		for (; n > 0; n--, o++, text++)
			if (!isprint((unsigned char)*text)) {
				snprintf(why, whysz, "a list entry holds a "
				    "control character");
				return -1;
			}
	}
	p[o] = '\0';
	return 0;
}

/*
 * The multiplier of unit suffix u of a value of type t: k, m, g (powers of
 * 1024) for sizes; s, m, h, d (seconds) for durations. 0 when u is none.
 */
static int64_t
unit_of(enum setting_type t, char u)
{
	switch (tolower((unsigned char)u)) {
	case 'k': return t == SET_SIZE ? (int64_t)1 << 10 : 0;
	case 'g': return t == SET_SIZE ? (int64_t)1 << 30 : 0;
	case 'm': return t == SET_SIZE ? (int64_t)1 << 20 : 60;
	case 's': return t == SET_DURATION ? 1 : 0;
	case 'h': return t == SET_DURATION ? 3600 : 0;
	case 'd': return t == SET_DURATION ? 86400 : 0;
	default: return 0;
	}
}

/*
 * Parses text as the value of setting st and stores it in c. Returns 0, or
 * -1 with a reason in why ("expected an integer", "must be at least 1").
 */
static int
setting_set(struct conf *c, const struct setting *st, const char *text,
    char *why, size_t whysz)
{
	char	*p = (char *)c + st->off, *end;
	int64_t	 v = 0, mul;
	int	 n;
	size_t	 i;

	switch (st->type) {
	case SET_STR:
		if (strlen(text) >= st->size) {
			snprintf(why, whysz, "longer than %zu bytes",
			    st->size - 1);
			return -1;
		}
		memcpy(p, text, strlen(text) + 1);
		return 0;
	case SET_LIST:
		return list_set(p, st->size, text, why, whysz);
	case SET_BOOL:
		if (strcmp(text, "true") == 0 || strcmp(text, "yes") == 0)
			v = 1;
		else if (strcmp(text, "false") == 0 || strcmp(text, "no") == 0)
			v = 0;
		else {
			snprintf(why, whysz, "expected true or false");
			return -1;
		}
		*(int *)p = (int)v;
		return 0;
	case SET_LEVEL:
		for (i = 0; i < 4; i++)
			if (strcmp(text, level_names[i]) == 0)
				break;
		if (i == 4) {
			snprintf(why, whysz,
			    "expected error, warn, info or debug");
			return -1;
		}
		*(int *)p = (int)i;
		return 0;
	case SET_LOGFMT:
		for (i = 0; i < 2; i++)
			if (strcmp(text, format_names[i]) == 0)
				break;
		if (i == 2) {
			snprintf(why, whysz, "expected text or json");
			return -1;
		}
		*(int *)p = (int)i;
		return 0;
	case SET_MODE:
		errno = 0;
		v = strtoll(text, &end, 8);
		if (*text == '\0' || *end != '\0' || errno != 0 || v < st->min ||
		    v > st->max) {
			snprintf(why, whysz, "expected permissions in octal "
			    "such as 0660");
			return -1;
		}
		*(int *)p = (int)v;
		return 0;
	case SET_INT:
	case SET_SIZE:
	case SET_DURATION:
		if ((n = parse_int64(text, &v)) < 0) {
			snprintf(why, whysz, "expected %s",
			    type_want(st->type));
			return -1;
		}
		if (st->type != SET_INT && text[n] != '\0' &&
		    text[n + 1] == '\0') {
			if ((mul = unit_of(st->type, text[n])) == 0 || v < 0 ||
			    v > INT64_MAX / mul) {
				snprintf(why, whysz, "expected %s",
				    type_want(st->type));
				return -1;
			}
			v *= mul;
		} else if (text[n] != '\0') {
			snprintf(why, whysz, "expected %s",
			    type_want(st->type));
			return -1;
		}
		if (v < st->min) {
			snprintf(why, whysz, "must be at least %" PRId64,
			    st->min);
			return -1;
		}
		if (v > st->max) {
			snprintf(why, whysz, "must be at most %" PRId64,
			    st->max);
			return -1;
		}
		if (st->size == sizeof(int))
			*(int *)p = (int)v;
		else
			*(int64_t *)p = v;
		return 0;
	}
	return -1;
}

static const struct setting *
setting_find(const char *name)
{
	size_t i;

	for (i = 0; i < NSETTINGS; i++)
		if (strcmp(settings[i].name, name) == 0)
			return &settings[i];
	return NULL;
}

void
conf_defaults(struct conf *c)
{
	char	why[128];
	size_t	i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < NSETTINGS; i++)
		(void)setting_set(c, &settings[i], settings[i].def, why,
		    sizeof(why));
}

size_t
conf_setting_count(void)
{
	return NSETTINGS;
}

const char *
conf_setting_name(size_t i)
{
	return i < NSETTINGS ? settings[i].name : NULL;
}

const char *
conf_setting_format(const struct conf *c, size_t i, char *buf, size_t bufsz)
{
	const struct setting	*st = &settings[i];
	const char		*p = (const char *)c + st->off;
	int64_t			 v;

	switch (st->type) {
	case SET_STR:
		snprintf(buf, bufsz, "\"%s\"", p);
		break;
	case SET_LIST:
		snprintf(buf, bufsz, "[%s]", p);
		break;
	case SET_BOOL:
		snprintf(buf, bufsz, "%s", *(const int *)p ? "true" : "false");
		break;
	case SET_LEVEL:
		snprintf(buf, bufsz, "%s", level_names[*(const int *)p & 3]);
		break;
	case SET_LOGFMT:
		snprintf(buf, bufsz, "%s", format_names[*(const int *)p & 1]);
		break;
	case SET_MODE:
		snprintf(buf, bufsz, "%04o", (unsigned)*(const int *)p);
		break;
	default:
		v = st->size == sizeof(int) ? *(const int *)p
					    : *(const int64_t *)p;
		snprintf(buf, bufsz, "%" PRId64, v);
		break;
	}
	return buf;
}

/* ====== YAML file ====== */

/* The scalars of sequence seq joined by commas into buf; -1 when one is
 * not a scalar or they do not fit. */
static int
list_join(yaml_document_t *doc, yaml_node_t *seq, char *buf, size_t bufsz)
{
	yaml_node_item_t	*it;
	yaml_node_t		*v;
	size_t			 o = 0, n;

	buf[0] = '\0';
	for (it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		v = yaml_document_get_node(doc, *it);
		if (v == NULL || v->type != YAML_SCALAR_NODE)
			return -1;
		n = v->data.scalar.length;
		if (o + 1 + n >= bufsz)
			return -1;
		if (o > 0)
			buf[o++] = ',';
		memcpy(buf + o, v->data.scalar.value, n);
		o += n;
		buf[o] = '\0';
	}
	return 0;
}

/*
 * The file is a mapping of sections, each a mapping of scalar settings:
 *
 *	server:
 *	  workers: 16
 */
int
conf_load_file(struct conf *c, const char *path, char *err)
{
	FILE		*f = NULL;
	yaml_parser_t	 parser;
	yaml_document_t	 doc;
	yaml_node_t	*root, *sec, *key, *val, *k2;
	yaml_node_pair_t *sp, *kp;
	char		 name[128], why[128], text[8192];
	const struct setting *st;
	int		 rc = -1, have_parser = 0, have_doc = 0;

	if ((f = fopen(path, "rb")) == NULL) {
		snprintf(err, CONF_ERRMAX, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err, CONF_ERRMAX, "%s: out of memory", path);
		goto out;
	}
	have_parser = 1;
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, CONF_ERRMAX, "%s:%zu: %s", path,
		    parser.problem_mark.line + 1,
		    parser.problem ? parser.problem : "invalid YAML");
		goto out;
	}
	have_doc = 1;
	root = yaml_document_get_root_node(&doc);
	if (root == NULL) {	/* empty file: defaults stand */
		rc = 0;
		goto out;
	}
	if (root->type != YAML_MAPPING_NODE) {
		snprintf(err, CONF_ERRMAX,
		    "%s:%zu: expected a mapping of sections", path,
		    root->start_mark.line + 1);
		goto out;
	}
	for (sp = root->data.mapping.pairs.start;
	     sp < root->data.mapping.pairs.top; sp++) {
		key = yaml_document_get_node(&doc, sp->key);
		sec = yaml_document_get_node(&doc, sp->value);
		if (key->type != YAML_SCALAR_NODE) {
			snprintf(err, CONF_ERRMAX, "%s:%zu: expected a section "
			    "name", path, key->start_mark.line + 1);
			goto out;
		}
		if (sec->type == YAML_SCALAR_NODE &&
		    sec->data.scalar.length == 0)
			continue;	/* "section:" with nothing under it */
		if (sec->type != YAML_MAPPING_NODE) {
			snprintf(err, CONF_ERRMAX, "%s:%zu: key '%s': expected "
			    "a mapping of settings", path,
			    key->start_mark.line + 1,
			    (char *)key->data.scalar.value);
			goto out;
		}
		for (kp = sec->data.mapping.pairs.start;
		     kp < sec->data.mapping.pairs.top; kp++) {
			k2 = yaml_document_get_node(&doc, kp->key);
			val = yaml_document_get_node(&doc, kp->value);
			snprintf(name, sizeof(name), "%s.%s",
			    (char *)key->data.scalar.value,
			    k2->type == YAML_SCALAR_NODE
				? (char *)k2->data.scalar.value : "?");
			if ((st = setting_find(name)) == NULL) {
				snprintf(err, CONF_ERRMAX, "%s:%zu: key '%s': "
				    "unknown setting", path,
				    k2->start_mark.line + 1, name);
				goto out;
			}
			if (st->type == SET_LIST &&
			    val->type == YAML_SEQUENCE_NODE) {
				if (list_join(&doc, val, text, sizeof(text)) !=
				    0) {
					snprintf(err, CONF_ERRMAX, "%s:%zu: key "
					    "'%s': expected a list of words "
					    "shorter than %zu bytes in all",
					    path, val->start_mark.line + 1,
					    name, sizeof(text));
					goto out;
				}
			} else if (val->type != YAML_SCALAR_NODE) {
				snprintf(err, CONF_ERRMAX, "%s:%zu: key '%s': "
				    "expected a single value", path,
				    val->start_mark.line + 1, name);
				goto out;
			} else
				snprintf(text, sizeof(text), "%s",
				    (char *)val->data.scalar.value);
			if (setting_set(c, st, text, why, sizeof(why)) != 0) {
				snprintf(err, CONF_ERRMAX, "%s:%zu: key '%s': "
				    "%s", path, val->start_mark.line + 1, name,
				    why);
				goto out;
			}
		}
	}
	rc = 0;
out:
	if (have_doc)
		yaml_document_delete(&doc);
	if (have_parser)
		yaml_parser_delete(&parser);
	if (f != NULL)
		fclose(f);
	return rc;
}

/* ====== Environment ====== */

int
conf_load_env(struct conf *c, char *err)
{
	char	 var[160], why[128];
	const char *v;
	size_t	 i, j;

	for (i = 0; i < NSETTINGS; i++) {
		snprintf(var, sizeof(var), "FLOWCGI_%s", settings[i].name);
		for (j = 0; var[j] != '\0'; j++)
			var[j] = var[j] == '.' ? '_'
					       : (char)toupper((unsigned char)var[j]);
		if ((v = getenv(var)) == NULL)
			continue;
		if (setting_set(c, &settings[i], v, why, sizeof(why)) != 0) {
			snprintf(err, CONF_ERRMAX, "environment %s (key '%s'): "
			    "%s", var, settings[i].name, why);
			return -1;
		}
	}
	return 0;
}
