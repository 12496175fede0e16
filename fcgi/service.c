/*
 * service.c — Dify's service API (/v1, Authorization: Bearer <app key>):
 * workflow runs and chat messages, blocking or streamed as server-sent
 * events, stop, run detail, parameters and info.
 *
 * Streaming (sse.c): the run executes in this request's thread, each
 * event flushed as it happens, pings every 10 s.
 */
#include <string.h>

#include "fcgi/internal.h"

/* ====== Runs ====== */

/*
 * Runs the app of the key: chat is 0 for /v1/workflows/run, 1 for
 * /v1/chat-messages, 2 for /v1/completion-messages.
 */
static void
run_app(struct req *r, int chat)
{
	struct run_opts	 o;
	struct run_slot	 slot = { -1, 0 };
	const char	*mode, *rmode, *user, *query = NULL, *conv = NULL;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*app = NULL, *inputs, *res = NULL;
	int		 rc, streaming;

	if (req_read_json(r) != 0)
		return;
	if ((rc = engine_app_get(r->eng, r->app_id, &app)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return;
	}
	mode = json_string_value(json_object_get(app, "mode"));
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
	if (chat == 2 && strcmp(mode, "completion") != 0) {
		resp_error(r, 400, "not_completion_app", "Please check if your "
		    "app mode matches the right API route.");
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
	    req_json_string(r, "conversation_id", 0, &conv) != 0)))
		goto out;
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
	o.files = json_object_get(r->json, "files");
	o.invoke_from = "service-api";
	if (run_admit(r, r->app_id, &o, &slot) != 0)
		goto out;
	if (streaming)
		rc = sse_run(r, &o, err, &res);
	else if ((rc = engine_run(r->eng, &o, err, &res)) != 0)
		resp_engine_error(r, rc, err, "app or conversation");
	if (rc != 0)
		goto out;
	if (!streaming)
		resp_json(r, 200, json_incref(res));
out:
	run_release(&slot);
	json_decref(res);
	json_decref(app);
}

static void
h_workflow_run(struct req *r)
{
	run_app(r, 0);
}

static void
h_chat(struct req *r)
{
	run_app(r, 1);
}

static void
h_completion(struct req *r)
{
	run_app(r, 2);
}

/*
 * POST .../{task}/stop {user}: only the key's app and the end user who
 * started the task may stop it; any other task is 404, as an unknown one.
 * A finished task of theirs answers success, as Dify does.
 */
static void
h_stop(struct req *r)
{
	const char	*user;
	int		 rc;

	if (req_read_json(r) != 0 || req_json_string(r, "user", 1, &user) != 0)
		return;
	if ((rc = engine_run_stop(r->eng, r->app_id, user,
	    r->captures[0])) != 0) {
		resp_engine_error(r, rc, "", "task");
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
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

static json_t *
app_draft(struct req *r)
{
	json_t	*app = NULL;
	int	 rc;

	if ((rc = engine_app_get_full(r->eng, r->app_id, &app)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return NULL;
	}
	return app;
}

/* The start node's variables as Dify's user_input_form. */
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
			type = json_string_value(json_object_get(v, "type"));
			item = json_deep_copy(v);
			json_object_set_new(item, "default", json_object_get(v,
			    "default") ? json_incref(json_object_get(v,
			    "default")) : json_string(""));
			json_array_append_new(form, json_pack("{s:o}",
			    type ? type : "text-input", item));
		}
	}
	return form;
}

static void
h_parameters(struct req *r)
{
	json_t *app, *dsl, *wf, *feat, *res;

	if ((app = app_draft(r)) == NULL)
		return;
	dsl = json_object_get(app, "dsl");
	wf = json_object_get(dsl, "workflow");
	feat = json_is_object(wf) ? json_object_get(wf, "features") :
	    json_object_get(dsl, "model_config");
	res = json_pack("{s:s,s:[],s:{s:b},s:{s:b},s:{s:b},s:{s:b},s:{s:b},"
	    "s:{s:b},s:{s:b},s:o,s:{},s:{s:i,s:i,s:i,s:i,s:i,s:i}}",
	    "opening_statement", json_string_value(json_object_get(feat,
	    "opening_statement")) ? json_string_value(json_object_get(feat,
	    "opening_statement")) : "", "suggested_questions",
	    "suggested_questions_after_answer", "enabled", 0,
	    "speech_to_text", "enabled", 0, "text_to_speech", "enabled", 0,
	    "retriever_resource", "enabled", 0, "annotation_reply", "enabled",
	    0, "more_like_this", "enabled", 0, "sensitive_word_avoidance",
	    "enabled", 0, "user_input_form", user_input_form(wf),
	    "file_upload", "system_parameters", "file_size_limit", 15,
	    "image_file_size_limit", 10, "audio_file_size_limit", 50,
	    "video_file_size_limit", 100, "workflow_file_upload_limit", 10,
	    "image_file_batch_limit", 10);
	if (res != NULL && json_is_array(json_object_get(feat,
	    "suggested_questions")))
		json_object_set(res, "suggested_questions",
		    json_object_get(feat, "suggested_questions"));
	json_decref(app);
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
		} else if (strcmp(parts[i].name, "user") == 0)
			user = arena_strndup(r->a, parts[i].data,
			    parts[i].len);
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

/*
 * The end user of a service request, from the query (GET) or the JSON
 * body: required, as in Dify. NULL after answering 400.
 */
static const char *
service_user(struct req *r, int from_body)
{
	const char *user = NULL;

	if (from_body) {
		if (req_read_json(r) != 0 ||
		    req_json_string(r, "user", 1, &user) != 0)
			return NULL;
	} else
		user = req_query(r, "user");
	if (user == NULL || *user == '\0') {
		resp_error(r, 400, "invalid_param", "user is required");
		return NULL;
	}
	return user;
}

/* A conversation that is not the user's, in Dify's words. */
static void
conversation_error(struct req *r, int rc)
{
	if (rc == ENGINE_ENOTFOUND)
		resp_error(r, 404, "not_found", "Conversation Not Exists.");
	else
		resp_engine_error(r, rc, "", "conversation");
}

/* GET /v1/conversations?user=&limit= */
static void
h_conversations(struct req *r)
{
	const char	*user;
	json_t		*out = NULL;
	int		 limit, rc;

	if (req_query_int(r, "limit", 20, 1, 100, &limit) != 0 ||
	    (user = service_user(r, 0)) == NULL)
		return;
	rc = engine_conversation_list(r->eng, r->app_id, user, limit, &out);
	if (rc != 0) {
		resp_engine_error(r, rc, "", "app");
		return;
	}
	resp_json(r, 200, out);
}

/* GET /v1/messages?conversation_id=&user=&limit= */
static void
h_messages(struct req *r)
{
	const char	*conv = req_query(r, "conversation_id"), *user;
	json_t		*out = NULL;
	int		 limit, rc;

	if (req_query_int(r, "limit", 20, 1, 100, &limit) != 0)
		return;
	if (conv == NULL || *conv == '\0') {
		resp_error(r, 400, "invalid_param", "conversation_id is "
		    "required");
		return;
	}
	if ((user = service_user(r, 0)) == NULL)
		return;
	rc = engine_message_list(r->eng, r->app_id, user, conv, limit, &out);
	if (rc != 0) {
		conversation_error(r, rc);
		return;
	}
	resp_json(r, 200, out);
}

/* DELETE /v1/conversations/{id} {user} */
static void
h_conversation_delete(struct req *r)
{
	const char	*user;
	int		 rc;

	if ((user = service_user(r, 1)) == NULL)
		return;
	rc = engine_conversation_delete(r->eng, r->app_id, user,
	    r->captures[0]);
	if (rc != 0) {
		conversation_error(r, rc);
		return;
	}
	resp_empty(r, 204);
}

const struct route service_routes[] = {
	{ "GET", "/v1/conversations", h_conversations, AUTH_APP },
	{ "DELETE", "/v1/conversations/{}", h_conversation_delete, AUTH_APP },
	{ "GET", "/v1/messages", h_messages, AUTH_APP },
	{ "POST", "/v1/files/upload", h_upload, AUTH_APP },
	{ "POST", "/v1/workflows/run", h_workflow_run, AUTH_APP },
	{ "POST", "/v1/chat-messages", h_chat, AUTH_APP },
	{ "POST", "/v1/completion-messages", h_completion, AUTH_APP },
	{ "POST", "/v1/completion-messages/{}/stop", h_stop, AUTH_APP },
	{ "POST", "/v1/workflows/tasks/{}/stop", h_stop, AUTH_APP },
	{ "POST", "/v1/chat-messages/{}/stop", h_stop, AUTH_APP },
	{ "GET", "/v1/workflows/run/{}", h_run_detail, AUTH_APP },
	{ "GET", "/v1/parameters", h_parameters, AUTH_APP },
	{ "GET", "/v1/info", h_info, AUTH_APP },
	{ NULL, NULL, NULL, AUTH_NONE },
};
