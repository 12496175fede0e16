/*
 * service.c — Dify's service API (/v1, Authorization: Bearer <app key>):
 * workflow runs and chat messages, blocking or streamed as server-sent
 * events, stop, run detail, workflow logs, parameters, info, meta and
 * site. Conversations and messages are in service_conv.c.
 *
 * Streaming (sse.c): the run executes in this request's thread, each
 * event flushed as it happens, pings every 10 s.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fcgi/internal.h"

/*
 * Seconds since the epoch of an ISO 8601 time ("2024-01-31T12:00:00",
 * with a Z or +hh:mm, or a date alone), or -1 when it is not one.
 */
static int64_t
iso_seconds(const char *s)
{
	struct tm	tm;
	int		y, mo, d, h = 0, mi = 0, se = 0, oh = 0, om = 0, n = 0;
	char		sign = 0;

	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3)
		return -1;
	s += n;
	if ((*s == 'T' || *s == ' ') && (sscanf(s + 1, "%2d:%2d%n", &h, &mi,
	    &n) == 2)) {
		s += 1 + n;
		if (*s == ':' && sscanf(s + 1, "%2d%n", &se, &n) == 1)
			s += 1 + n;
		if (*s == '.')
			for (s++; *s >= '0' && *s <= '9'; s++)
				;
	}
	if (*s == 'Z')
		s++;
	else if ((*s == '+' || *s == '-') && sscanf(s + 1, "%2d:%2d%n", &oh,
	    &om, &n) == 2) {
		sign = *s;
		s += 1 + n;
	}
	if (*s != '\0' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 ||
	    mi > 59 || se > 60)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	return (int64_t)timegm(&tm) - (sign == '+' ? 1 : sign == '-' ? -1 :
	    0) * (int64_t)(oh * 3600 + om * 60);
}

/* ====== Runs ====== */

/*
 * Runs the app of the key: chat is 0 for /v1/workflows/run, 1 for
 * /v1/chat-messages, 2 for /v1/completion-messages; version, for
 * /v1/workflows/{workflow_id}/run, the published version to run.
 */
static void
run_app(struct req *r, int chat, const char *version)
{
	struct run_opts	 o;
	struct run_slot	 slot = { NULL, 0, 0, 0 };
	const char	*rmode, *user, *query = NULL, *conv = NULL;
	const char	*parent = NULL;
	char		 err[ENGINE_ERRMAX] = "", mode[32], status[32] = "";
	char		 rerr[ENGINE_ERRMAX] = "";
	json_t		*inputs, *res = NULL;
	int		 rc, streaming;

	if (req_read_json(r) != 0)
		return;
	if ((rc = engine_app_mode(r->eng, r->app_id, mode, sizeof(mode))) !=
	    0) {
		resp_engine_error(r, rc, "", "app");
		return;
	}
	if (!chat && strcmp(mode, "workflow") != 0) {
		resp_error(r, 400, "not_workflow_app", "Please check if your "
		    "app mode matches the right API route.");
		goto out;
	}
	if (chat == 1 && strcmp(mode, "advanced-chat") != 0 &&
	    strcmp(mode, "chat") != 0 && strcmp(mode, "agent-chat") != 0) {
		resp_error(r, 400, "not_chat_app", "Please check if your app "
		    "mode matches the right API route.");
		goto out;
	}
	/* Dify's CompletionApi: AppUnavailableError for any other mode
	 * (api/controllers/service_api/app/completion.py) */
	if (chat == 2 && strcmp(mode, "completion") != 0) {
		resp_error(r, 400, "app_unavailable", "App unavailable, please "
		    "check your app configurations.");
		goto out;
	}
	inputs = json_object_get(r->json, "inputs");
	if (!json_is_object(inputs)) {
		resp_error(r, 400, "invalid_param", "inputs is required and "
		    "must be an object");
		goto out;
	}
	if (req_json_string(r, "user", 1, &user) != 0 ||
	    req_json_string(r, "response_mode", 0, &rmode) != 0 ||
	    (chat == 1 && (req_json_string(r, "query", 1, &query) != 0 ||
	    req_json_string(r, "conversation_id", 0, &conv) != 0 ||
	    req_json_string(r, "parent_message_id", 0, &parent) != 0)))
		goto out;
	/*
	 * parent_message_id (Dify's web API's; its service API stores
	 * UUID_NIL whatever is sent, flowcgi's takes it too): absent, the
	 * conversation's newest; null or "", a thread of its own; else a
	 * UUID, of a message of this conversation (the engine's 404).
	 */
	if (parent != NULL && *parent != '\0' && engine_uuid_check(parent) !=
	    0) {
		resp_error(r, 400, "invalid_param", "parent_message_id: %.64s "
		    "is not a valid uuid", parent);
		goto out;
	}
	if (parent == NULL && json_object_get(r->json, "parent_message_id") !=
	    NULL)
		parent = "";	/* null */
	/* Dify refuses an id that is no UUID before looking for it */
	if (conv != NULL && *conv != '\0' && engine_uuid_check(conv) != 0) {
		resp_error(r, 400, "invalid_param", "conversation_id: %.64s is "
		    "not a valid uuid", conv);
		goto out;
	}
	if (rmode != NULL && strcmp(rmode, "streaming") != 0 &&
	    strcmp(rmode, "blocking") != 0) {
		resp_error(r, 400, "invalid_param", "response_mode must be "
		    "streaming or blocking");
		goto out;
	}
	streaming = rmode != NULL && strcmp(rmode, "streaming") == 0;
	if (!streaming && strcmp(mode, "agent-chat") == 0) {
		resp_error(r, 400, "app_unavailable", "Agent Chat App does not "
		    "support blocking mode");
		goto out;
	}
	memset(&o, 0, sizeof(o));
	o.app_id = r->app_id;
	o.inputs = inputs;
	o.user = user;
	o.query = query;
	o.conversation_id = conv != NULL && *conv != '\0' ? conv : NULL;
	o.parent_message_id = parent;
	o.files = json_object_get(r->json, "files");
	o.invoke_from = "service-api";
	o.workflow_id = version;
	o.model_params = r->model_params;
	/* Dify's auto_generate_name, true unless given false */
	o.no_auto_name = json_is_false(json_object_get(r->json,
	    "auto_generate_name"));
	o.status = status;
	o.error = rerr;
	if (run_admit(r, r->app_id, &o, &slot) != 0)
		goto out;
	if (streaming)
		rc = sse_run(r, &o, err, &res);
	else if ((rc = engine_run(r->eng, &o, err, &res)) != 0 &&
	    version != NULL && rc == ENGINE_ENOTFOUND)
		resp_error(r, 404, "not_found", "%s", err);
	else if (rc != 0)
		resp_engine_error(r, rc, err, "app or conversation");
	if (rc != 0)
		goto out;
	/*
	 * A chat whose run failed: Dify's blocking pipeline raises the
	 * error event's ValueError("Run failed: ...") and the API answers
	 * it as 400 invalid_param (libs/external_api.py); the answer of a
	 * chat has no status to say it.
	 */
	if (!streaming && chat && strcmp(status, "failed") == 0)
		resp_error(r, 400, "invalid_param", "Run failed: %s", rerr);
	else if (!streaming)
		resp_json(r, 200, json_incref(res));
out:
	run_release(&slot);
	json_decref(res);
}

static void
h_workflow_run(struct req *r)
{
	run_app(r, 0, NULL);
}

/*
 * POST /v1/workflows/{workflow_id}/run: Dify's WorkflowRunByIdApi
 * (api/controllers/service_api/app/workflow.py) runs that published
 * version: an id that is no UUID is 400 bad_request, one the app did not
 * publish 404 "Workflow not found with id: ..." (AppGenerateService).
 */
static void
h_workflow_run_version(struct req *r)
{
	if (engine_uuid_check(r->captures[0]) != 0) {
		resp_error(r, 400, "bad_request", "Invalid workflow_id format: "
		    "'%.64s'. ", r->captures[0]);
		return;
	}
	run_app(r, 0, r->captures[0]);
}

static void
h_chat(struct req *r)
{
	run_app(r, 1, NULL);
}

static void
h_completion(struct req *r)
{
	run_app(r, 2, NULL);
}

/*
 * POST .../{task}/stop {user}: as Dify's stop routes
 * (api/controllers/service_api/app/completion.py, workflow.py): the route
 * must match the app's mode (workflow: not_workflow_app, chat:
 * not_chat_app, completion: app_unavailable), then the stop flag is set
 * for the key's app and the end user's task, and the answer is always
 * 200 {"result": "success"}: an unknown, finished or someone else's task
 * is not stopped, and answers the same, so the answer tells nothing.
 * kind is 0 workflow, 1 chat, 2 completion.
 */
static void
stop_task(struct req *r, int kind)
{
	const char	*user;
	char		 mode[32];
	int		 rc;

	if (req_read_json(r) != 0 || req_json_string(r, "user", 1, &user) != 0)
		return;
	if ((rc = engine_app_mode(r->eng, r->app_id, mode, sizeof(mode))) !=
	    0) {
		resp_engine_error(r, rc, "", "app");
		return;
	}
	if (kind == 0 && strcmp(mode, "workflow") != 0) {
		resp_error(r, 400, "not_workflow_app", "Please check if your "
		    "app mode matches the right API route.");
		return;
	}
	if (kind == 1 && strcmp(mode, "advanced-chat") != 0 &&
	    strcmp(mode, "chat") != 0 && strcmp(mode, "agent-chat") != 0) {
		resp_error(r, 400, "not_chat_app", "Please check if your app "
		    "mode matches the right API route.");
		return;
	}
	if (kind == 2 && strcmp(mode, "completion") != 0) {
		resp_error(r, 400, "app_unavailable", "App unavailable, please "
		    "check your app configurations.");
		return;
	}
	rc = engine_run_stop(r->eng, r->app_id, user, r->captures[0]);
	if (rc != 0 && rc != ENGINE_ENOTFOUND) {
		resp_engine_error(r, rc, "", "task");
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

static void
h_stop_workflow(struct req *r)
{
	stop_task(r, 0);
}

static void
h_stop_chat(struct req *r)
{
	stop_task(r, 1);
}

static void
h_stop_completion(struct req *r)
{
	stop_task(r, 2);
}

/*
 * GET /v1/: Dify's IndexApi (api/controllers/service_api/index.py), no key
 * needed: {welcome, api_version, server_version}.
 */
static void
h_index(struct req *r)
{
	resp_json(r, 200, json_pack("{s:s,s:s,s:s}", "welcome",
	    "Dify OpenAPI", "api_version", "v1", "server_version",
	    FLOWCGI_VERSION));
}

static void
h_run_detail(struct req *r)
{
	json_t *run, *res;

	if ((run = req_app_run(r, r->app_id, r->captures[0],
	    "workflow run")) == NULL)
		return;
	res = json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O}",
	    "id", json_object_get(run, "id"), "workflow_id",
	    json_object_get(run, "workflow_id"), "status",
	    json_object_get(run, "status"), "inputs",
	    json_object_get(run, "inputs"), "outputs",
	    json_object_get(run, "outputs") ? json_object_get(run,
	    "outputs") : json_null(), "error", json_object_get(run, "error") ?
	    json_object_get(run, "error") : json_null(), "total_steps",
	    json_object_get(run, "total_steps") ? json_object_get(run,
	    "total_steps") : json_integer(0), "total_tokens",
	    json_object_get(run, "total_tokens") ? json_object_get(run,
	    "total_tokens") : json_integer(0), "created_at",
	    json_object_get(run, "created_at"), "finished_at",
	    json_object_get(run, "finished_at") ? json_object_get(run,
	    "finished_at") : json_null(), "elapsed_time",
	    json_object_get(run, "elapsed_time") ? json_object_get(run,
	    "elapsed_time") : json_real(0));
	json_decref(run);
	resp_json(r, 200, res);
}

/* ====== App description ====== */

/* The app with the DSL it runs (shared: read only), or NULL after an
 * answer. */
static json_t *
app_live(struct req *r)
{
	json_t	*app = NULL;
	int	 rc;

	if ((rc = engine_app_get_live(r->eng, r->app_id, &app)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return NULL;
	}
	return app;
}

/*
 * The start node's variables as Dify's user_input_form; NULL when out of
 * memory.
 */
static json_t *
user_input_form(const json_t *wf)
{
	json_t		*form = json_array(), *n, *v, *item;
	const char	*type;
	size_t		 i, j;

	json_array_foreach(json_object_get(json_object_get(wf, "graph"),
	    "nodes"), i, n) {
		type = json_string_value(json_object_get(json_object_get(n,
		    "data"), "type"));
		if (type == NULL || strcmp(type, "start") != 0)
			continue;
		json_array_foreach(json_object_get(json_object_get(n, "data"),
		    "variables"), j, v) {
			/* a variable that is no object (a DSL may hold one)
			 * is no input: failing on it is no out of memory */
			if (!json_is_object(v))
				continue;
			type = json_string_value(json_object_get(v, "type"));
			item = json_deep_copy(v);
			if (json_object_set_new(item, "default",
			    json_object_get(v, "default") ? json_incref(
			    json_object_get(v, "default")) : json_string(""))
			    != 0 || json_array_append_new(form, json_pack(
			    "{s:O}", type ? type : "text-input", item)) != 0) {
				json_decref(item);
				json_decref(form);
				return NULL;
			}
			json_decref(item);
		}
	}
	return form;
}

/* Feature k of feat as Dify's parameters show it, or dflt (JSON text). */
static json_t *
feature(const json_t *feat, const char *k, const char *dflt)
{
	json_t *v = json_object_get(feat, k);

	return v != NULL && !json_is_null(v) ? json_incref(v) :
	    json_loads(dflt, JSON_DECODE_ANY, NULL);
}

/*
 * GET /v1/parameters: a workflow's or chatflow's features and start
 * inputs, or a chat, agent-chat or completion app's model_config (its
 * features and user_input_form), each feature with Dify's default when
 * the app does not set it.
 */
static void
h_parameters(struct req *r)
{
	json_t	*app, *dsl, *wf, *feat, *res, *form;

	if ((app = app_live(r)) == NULL)
		return;
	dsl = json_object_get(app, "dsl");
	wf = json_object_get(dsl, "workflow");
	if (json_is_object(wf)) {
		feat = json_object_get(wf, "features");
		form = user_input_form(wf);
	} else {
		feat = json_object_get(dsl, "model_config");
		form = json_incref(json_object_get(feat, "user_input_form"));
		if (!json_is_array(form)) {
			json_decref(form);
			form = json_array();
		}
	}
	res = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,"
	    "s:{s:i,s:i,s:i,s:i,s:i,s:i}}",
	    "opening_statement", feature(feat, "opening_statement", "null"),
	    "suggested_questions", feature(feat, "suggested_questions", "[]"),
	    "suggested_questions_after_answer", feature(feat,
	    "suggested_questions_after_answer", "{\"enabled\":false}"),
	    "speech_to_text", feature(feat, "speech_to_text",
	    "{\"enabled\":false}"), "text_to_speech", feature(feat,
	    "text_to_speech", "{\"enabled\":false}"), "retriever_resource",
	    feature(feat, "retriever_resource", "{\"enabled\":false}"),
	    "annotation_reply", feature(feat, "annotation_reply",
	    "{\"enabled\":false}"), "more_like_this", feature(feat,
	    "more_like_this", "{\"enabled\":false}"),
	    "sensitive_word_avoidance", feature(feat,
	    "sensitive_word_avoidance", "{\"enabled\":false,\"type\":\"\","
	    "\"configs\":[]}"), "user_input_form", form, "file_upload",
	    feature(feat, "file_upload", "{\"image\":{\"enabled\":false,"
	    "\"number_limits\":3,\"detail\":\"high\",\"transfer_methods\":"
	    "[\"remote_url\",\"local_file\"]}}"), "system_parameters",
	    "file_size_limit", 15, "image_file_size_limit", 10,
	    "audio_file_size_limit", 50, "video_file_size_limit", 100,
	    "workflow_file_upload_limit", 10, "image_file_batch_limit", 10);
	json_decref(app);
	if (res == NULL)
		resp_error(r, 500, "internal_server_error", "out of memory");
	else
		resp_json(r, 200, res);
}

static void
h_info(struct req *r)
{
	json_t	*app = NULL;
	int	 rc;

	if ((rc = engine_app_get(r->eng, r->app_id, &app)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return;
	}
	resp_json(r, 200, json_pack("{s:O,s:O,s:[],s:O,s:s}", "name",
	    json_object_get(app, "name"), "description",
	    json_object_get(app, "description"), "tags", "mode",
	    json_object_get(app, "mode"), "author_name", "flowcgi"));
	json_decref(app);
}

/* The emoji icon Dify gives a tool without one. */
static json_t *
tool_icon(void)
{
	return json_pack("{s:s,s:s}", "background", "#252525", "content",
	    "\xf0\x9f\x98\x81");
}

/*
 * GET /v1/meta: {tool_icons: {tool name: icon}} for the tools of the
 * app's tool nodes or agent. flowcgi serves no tool icons, so each is
 * the emoji icon Dify falls back to when it has none.
 */
static void
h_meta(struct req *r)
{
	json_t		*app, *dsl, *icons, *nodes, *n, *t;
	const char	*name, *type;
	size_t		 i;
	int		 bad = 0;

	if ((app = app_live(r)) == NULL)
		return;
	dsl = json_object_get(app, "dsl");
	icons = json_object();
	nodes = json_object_get(json_object_get(json_object_get(dsl,
	    "workflow"), "graph"), "nodes");
	json_array_foreach(nodes, i, n) {
		type = json_string_value(json_object_get(json_object_get(n,
		    "data"), "type"));
		name = json_string_value(json_object_get(json_object_get(n,
		    "data"), "tool_name"));
		if (type != NULL && strcmp(type, "tool") == 0 && name != NULL)
			bad |= json_object_set_new(icons, name, tool_icon());
	}
	json_array_foreach(json_object_get(json_object_get(json_object_get(dsl,
	    "model_config"), "agent_mode"), "tools"), i, t)
		if ((name = json_string_value(json_object_get(t,
		    "tool_name"))) != NULL)
			bad |= json_object_set_new(icons, name, tool_icon());
	json_decref(app);
	if (bad) {	/* resp_json answers NULL with a 500 */
		json_decref(icons);
		icons = NULL;
	}
	resp_json(r, 200, json_pack("{s:o}", "tool_icons", icons));
}

/*
 * GET /v1/site: the app's web site settings, which flowcgi does not keep:
 * Dify's defaults for a new app, with its name, icon and description.
 */
static void
h_site(struct req *r)
{
	json_t	*app = NULL, *nul = json_null();
	int	 rc;

	if ((rc = engine_app_get(r->eng, r->app_id, &app)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return;
	}
#define F(k) (json_object_get(app, (k)) ? json_object_get(app, (k)) : nul)
	resp_json(r, 200, json_pack("{s:O,s:n,s:b,s:O,s:O,s:O,s:n,s:O,s:n,"
	    "s:n,s:n,s:s,s:b,s:O}", "title", F("name"), "chat_color_theme",
	    "chat_color_theme_inverted", 0, "icon_type", F("icon_type"),
	    "icon", F("icon"), "icon_background", F("icon_background"),
	    "icon_url", "description", F("description"), "copyright",
	    "privacy_policy", "custom_disclaimer", "default_language", "en-US",
	    "show_workflow_steps", 1, "use_icon_as_answer_icon",
	    json_is_true(json_object_get(app, "use_icon_as_answer_icon")) ?
	    json_true() : json_false()));
#undef F
	json_decref(app);
}

/*
 * GET /v1/workflows/logs?keyword=&status=&created_at__before=
 * &created_at__after=&created_by_end_user_session_id=&page=&limit=
 */
static void
h_workflow_logs(struct req *r)
{
	struct run_log_query	 q;
	const char		*st, *v;
	const char		*times[2] = { "created_at__after",
				    "created_at__before" };
	int64_t			*t[2];
	json_t			*out = NULL;
	int			 rc, i;

	memset(&q, 0, sizeof(q));
	t[0] = &q.after;
	t[1] = &q.before;
	if (req_query_int(r, "page", 1, 1, 99999, &q.page) != 0 ||
	    req_query_int(r, "limit", 20, 1, 100, &q.limit) != 0)
		return;
	if ((st = req_query(r, "status")) != NULL && *st != '\0') {
		if (strcmp(st, "succeeded") != 0 && strcmp(st, "failed") != 0 &&
		    strcmp(st, "stopped") != 0) {
			resp_error(r, 400, "invalid_param", "status must be "
			    "succeeded, failed or stopped");
			return;
		}
		q.status = st;
	}
	for (i = 0; i < 2; i++)
		if ((v = req_query(r, times[i])) != NULL && *v != '\0' &&
		    (*t[i] = iso_seconds(v)) < 0) {
			resp_error(r, 400, "invalid_param", "%s must be an ISO "
			    "8601 time such as 2024-01-31T12:00:00Z",
			    times[i]);
			return;
		}
	q.keyword = req_query(r, "keyword");
	q.user = req_query(r, "created_by_end_user_session_id");
	if (q.user != NULL && *q.user == '\0')
		q.user = NULL;
	if ((rc = engine_run_logs(r->eng, r->app_id, &q, &out)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return;
	}
	resp_json(r, 200, out);
}

/* POST /v1/files/upload: multipart with "file" and "user". */
static void
h_upload(struct req *r)
{
	struct mp_part	*parts;
	const char	*data = NULL, *name = NULL, *mime = NULL, *user = NULL;
	char		 err[ENGINE_ERRMAX] = "";
	size_t		 n, i, len = 0;
	json_t		*out = NULL;
	int		 rc;

	if (req_read_body(r, r->conf->max_body) != 0)
		return;
	if (multipart_parse(r->a, r->content_type, r->body, r->body_len, 8,
	    &parts, &n, err, sizeof(err)) != 0) {
		resp_error(r, 400, "invalid_multipart", "%s", err);
		return;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(parts[i].name, "file") == 0 && data == NULL) {
			data = parts[i].data;
			len = parts[i].len;
			name = parts[i].filename;
			mime = parts[i].content_type;
		} else if (strcmp(parts[i].name, "user") == 0 &&
		    user == NULL && req_part_text(r, &parts[i], &user) != 0)
			return;
	}
	if (data == NULL) {
		resp_error(r, 400, "no_file_uploaded", "Please upload your "
		    "file.");
		return;
	}
	rc = engine_upload_put(r->eng, r->app_id, user, name, mime, data, len,
	    err, &out);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "app");
		return;
	}
	resp_json(r, 201, out);
}

/* 1 when a file of type mime shown on our origin could run script. */
static int
mime_active(const char *mime)
{
	static const char *const active[] = { "text/html",
	    "application/xhtml+xml", "image/svg+xml", "text/xml",
	    "application/xml", "text/javascript", "application/javascript" };
	size_t	i, n;

	for (i = 0; i < sizeof(active) / sizeof(active[0]); i++) {
		n = strlen(active[i]);
		if (strncasecmp(mime, active[i], n) == 0 &&
		    (mime[n] == '\0' || mime[n] == ';' || mime[n] == ' '))
			return 1;
	}
	return 0;
}

/*
 * GET /v1/files/{file}/preview[?as_attachment=true]: an upload of the
 * key's app (another app's is 404), streamed from storage with its type,
 * or as an attachment; one byte range when asked (Range: audio and video
 * seek). Types that could run script on our origin (HTML, SVG, XML) are
 * always attachments, and every answer is sandboxed by its CSP.
 */
static void
h_file_preview(struct req *r)
{
	const char	*mime, *name;
	char		 sum[65];
	uint64_t	 size = 0;
	json_t		*meta = NULL;
	int		 rc, attach;

	rc = engine_upload_open(r->eng, r->app_id, r->captures[0], &meta, sum,
	    &size);
	if (rc == ENGINE_ENOTFOUND) {
		resp_error(r, 404, "file_not_found", "file not found");
		return;
	}
	if (rc != 0) {
		resp_engine_error(r, rc, "", "file");
		return;
	}
	mime = json_string_value(json_object_get(meta, "mime_type"));
	name = json_string_value(json_object_get(meta, "name"));
	if (mime == NULL || *mime == '\0')
		mime = "application/octet-stream";
	attach = req_query_true(r, "as_attachment") || mime_active(mime);
	if (attach) {
		resp_attachment(r, name);
		mime = "application/octet-stream";
	}
	resp_header(r, "Content-Security-Policy", "sandbox");
	resp_header(r, "Cache-Control", "private, max-age=3600");
	resp_blob(r, mime, sum, size);
	json_decref(meta);
}

const struct route service_routes[] = {
	{ "POST", "/v1/files/upload", h_upload, AUTH_APP | WEB_ROUTE },
	{ "GET", "/v1/files/{}/preview", h_file_preview, AUTH_APP },
	{ "POST", "/v1/workflows/run", h_workflow_run, AUTH_APP |
	    WEB_ROUTE | WEB_RUN | WEB_STREAM },
	{ "POST", "/v1/workflows/{}/run", h_workflow_run_version, AUTH_APP },
	{ "POST", "/v1/chat-messages", h_chat,
	    AUTH_APP | WEB_ROUTE | WEB_RUN },
	{ "POST", "/v1/completion-messages", h_completion, AUTH_APP |
	    WEB_ROUTE | WEB_RUN },
	{ "POST", "/v1/completion-messages/{}/stop", h_stop_completion,
	    AUTH_APP | WEB_ROUTE },
	{ "POST", "/v1/workflows/tasks/{}/stop", h_stop_workflow, AUTH_APP |
	    WEB_ROUTE },
	{ "POST", "/v1/chat-messages/{}/stop", h_stop_chat, AUTH_APP |
	    WEB_ROUTE },
	{ "GET", "/v1/workflows/run/{}", h_run_detail, AUTH_APP },
	{ "GET", "/v1/parameters", h_parameters, AUTH_APP | WEB_ROUTE },
	{ "GET", "/v1/info", h_info, AUTH_APP },
	{ "GET", "/v1/meta", h_meta, AUTH_APP | WEB_ROUTE },
	{ "GET", "/v1/site", h_site, AUTH_APP },
	{ "GET", "/v1/workflows/logs", h_workflow_logs, AUTH_APP },
	{ "GET", "/v1/", h_index, AUTH_NONE },
	{ "GET", "/v1", h_index, AUTH_NONE },
	{ NULL, NULL, NULL, AUTH_NONE },
};
