/*
 * service_conv.c — Dify's service API for conversations and messages
 * (/v1, Authorization: Bearer <app key>): listing and paging them,
 * renaming and deleting a conversation, its variables, ratings of
 * messages and the questions suggested after one.
 *
 * Everything here belongs to an end user, the "user" of the request: a
 * conversation or message of another end user, or of another app, is a
 * 404 exactly as one that does not exist (the engine sees to it).
 */
#include <string.h>

#include "fcgi/internal.h"

/* ====== Helpers ====== */

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

/*
 * 0 when the key's app is a chat app (chat, agent-chat, advanced-chat);
 * else -1 after answering Dify's 400.
 */
static int
chat_app(struct req *r)
{
	json_t		*app = NULL;
	const char	*mode;
	int		 rc;

	if ((rc = engine_app_get(r->eng, r->app_id, &app)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return -1;
	}
	mode = json_string_value(json_object_get(app, "mode"));
	rc = mode != NULL && (strcmp(mode, "chat") == 0 ||
	    strcmp(mode, "agent-chat") == 0 ||
	    strcmp(mode, "advanced-chat") == 0) ? 0 : -1;
	json_decref(app);
	if (rc != 0)
		resp_error(r, 400, "not_chat_app", "Please check if your app "
		    "mode matches the right API route.");
	return rc;
}

/*
 * Answers an engine error about a conversation or message: a 404 with
 * the engine's message (Dify's words), else as resp_engine_error.
 */
static void
conv_error(struct req *r, int rc, const char *err, const char *dflt)
{
	if (rc == ENGINE_ENOTFOUND)
		resp_error(r, 404, "not_found", "%s", err != NULL &&
		    *err != '\0' ? err : dflt);
	else
		resp_engine_error(r, rc, err, "conversation");
}

/* ====== Conversations ====== */

/*
 * GET /v1/conversations?user=&last_id=&limit=&sort_by=. dify-client
 * 2.3.2 sends its cursor as first_id, which Dify ignores (and so pages
 * forever); it is read here when last_id is not given.
 */
static void
h_conversations(struct req *r)
{
	struct conv_page	 pg;
	const char		*user;
	char			 err[ENGINE_ERRMAX] = "";
	json_t			*out = NULL;
	int			 rc;

	memset(&pg, 0, sizeof(pg));
	if (req_query_int(r, "limit", 20, 1, 100, &pg.limit) != 0 ||
	    (user = service_user(r, 0)) == NULL || chat_app(r) != 0)
		return;
	pg.last_id = req_query(r, "last_id");
	if (pg.last_id == NULL || *pg.last_id == '\0')
		pg.last_id = req_query(r, "first_id");
	pg.sort_by = req_query(r, "sort_by");
	rc = engine_conversation_list(r->eng, r->app_id, user, &pg, err,
	    &out);
	if (rc != 0) {
		conv_error(r, rc, err, "Last Conversation Not Exists.");
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

	if ((user = service_user(r, 1)) == NULL || chat_app(r) != 0)
		return;
	rc = engine_conversation_delete(r->eng, r->app_id, user,
	    r->captures[0]);
	if (rc != 0) {
		conv_error(r, rc, "", "Conversation Not Exists.");
		return;
	}
	resp_empty(r, 204);
}

/*
 * POST /v1/conversations/{id}/name {user, name, auto_generate}: a name
 * given, or (auto_generate true) one the app's model makes from the
 * first message. Answers the conversation.
 */
static void
h_conversation_rename(struct req *r)
{
	const char	*user, *name;
	json_t		*out = NULL, *ag;
	int		 rc, autoname = 0;

	if ((user = service_user(r, 1)) == NULL ||
	    req_json_string(r, "name", 0, &name) != 0 || chat_app(r) != 0)
		return;
	ag = json_object_get(r->json, "auto_generate");
	if (ag != NULL && !json_is_null(ag) && !json_is_boolean(ag)) {
		resp_error(r, 400, "invalid_param", "auto_generate must be a "
		    "boolean");
		return;
	}
	autoname = json_is_true(ag);
	if (!autoname && (name == NULL || name[strspn(name, " \t\r\n")] ==
	    '\0')) {
		resp_error(r, 400, "invalid_param", "name is required when "
		    "auto_generate is false");
		return;
	}
	if (name != NULL && strlen(name) > 255) {
		resp_error(r, 400, "invalid_param", "name is longer than 255 "
		    "bytes");
		return;
	}
	rc = autoname ? engine_conversation_autoname(r->eng, r->app_id, user,
	    r->captures[0], &out) : engine_conversation_rename(r->eng,
	    r->app_id, user, r->captures[0], name, &out);
	if (rc != 0) {
		conv_error(r, rc, "", "Conversation Not Exists.");
		return;
	}
	resp_json(r, 200, out);
}

/* GET /v1/conversations/{id}/variables?user=&last_id=&limit=&variable_name= */
static void
h_conversation_variables(struct req *r)
{
	const char	*user;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*out = NULL;
	int		 limit, rc;

	if (req_query_int(r, "limit", 20, 1, 100, &limit) != 0 ||
	    (user = service_user(r, 0)) == NULL || chat_app(r) != 0)
		return;
	rc = engine_conversation_variables(r->eng, r->app_id, user,
	    r->captures[0], req_query(r, "last_id"), limit, req_query(r,
	    "variable_name"), err, &out);
	if (rc != 0) {
		conv_error(r, rc, err, "Conversation Not Exists.");
		return;
	}
	resp_json(r, 200, out);
}

/*
 * PUT /v1/conversations/{id}/variables/{variable_id} {user, value}: as
 * Dify's ConversationVariableDetailApi.put
 * (api/controllers/service_api/app/conversation.py): a chat app only;
 * 404 "Conversation Not Exists." / "Conversation Variable Not Exists.";
 * a value of another type than the variable's is 400 bad_request with
 * Dify's "Type mismatch" message. Answers the variable.
 */
static void
h_conversation_variable_put(struct req *r)
{
	const char	*user;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*out = NULL, *value;
	int		 rc;

	if ((user = service_user(r, 1)) == NULL || chat_app(r) != 0)
		return;
	if ((value = json_object_get(r->json, "value")) == NULL) {
		resp_error(r, 400, "invalid_param", "value is required");
		return;
	}
	rc = engine_conversation_variable_set(r->eng, r->app_id, user,
	    r->captures[0], r->captures[1], value, err, &out);
	if (rc == ENGINE_EINVAL) {
		resp_error(r, 400, "bad_request", "%s", err);
		return;
	}
	if (rc != 0) {
		conv_error(r, rc, err, "Conversation Not Exists.");
		return;
	}
	resp_json(r, 200, out);
}

/* ====== Messages ====== */

/* GET /v1/messages?conversation_id=&user=&first_id=&limit= */
static void
h_messages(struct req *r)
{
	const char	*conv = req_query(r, "conversation_id"), *user;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*out = NULL;
	int		 limit, rc;

	if (req_query_int(r, "limit", 20, 1, 100, &limit) != 0)
		return;
	if (conv == NULL || *conv == '\0') {
		resp_error(r, 400, "invalid_param", "conversation_id is "
		    "required");
		return;
	}
	if ((user = service_user(r, 0)) == NULL || chat_app(r) != 0)
		return;
	rc = engine_message_list(r->eng, r->app_id, user, conv, req_query(r,
	    "first_id"), limit, err, &out);
	if (rc != 0) {
		conv_error(r, rc, err, "Conversation Not Exists.");
		return;
	}
	resp_json(r, 200, out);
}

/*
 * POST /v1/messages/{id}/feedbacks {user, rating: like | dislike | null,
 * content}: null takes an earlier rating back.
 */
static void
h_feedback(struct req *r)
{
	const char	*user, *rating, *content;
	char		 err[ENGINE_ERRMAX] = "";
	int		 rc;

	if ((user = service_user(r, 1)) == NULL ||
	    req_json_string(r, "rating", 0, &rating) != 0 ||
	    req_json_string(r, "content", 0, &content) != 0)
		return;
	rc = engine_message_feedback(r->eng, r->app_id, user, r->captures[0],
	    rating, content, err);
	if (rc != 0) {
		conv_error(r, rc, err, "Message Not Exists.");
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

/* GET /v1/app/feedbacks?page=&limit= */
static void
h_app_feedbacks(struct req *r)
{
	json_t	*out = NULL;
	int	 page, limit, rc;

	if (req_query_int(r, "page", 1, 1, 99999, &page) != 0 ||
	    req_query_int(r, "limit", 20, 1, 101, &limit) != 0)
		return;
	if ((rc = engine_app_feedbacks(r->eng, r->app_id, page, limit,
	    &out)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return;
	}
	resp_json(r, 200, out);
}

/*
 * GET /v1/messages/{id}/suggested?user=: 403 when the app's
 * suggested_questions_after_answer feature is off, as in Dify.
 */
static void
h_suggested(struct req *r)
{
	const char	*user;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*out = NULL;
	int		 rc;

	if ((user = service_user(r, 0)) == NULL || chat_app(r) != 0)
		return;
	rc = engine_message_suggested(r->eng, r->app_id, user, r->captures[0],
	    err, &out);
	if (rc == ENGINE_EINVAL) {
		resp_error(r, 403, "app_suggested_questions_after_answer_"
		    "disabled", "%s", err);
		return;
	}
	if (rc != 0) {
		conv_error(r, rc, err, "Message Not Exists.");
		return;
	}
	resp_json(r, 200, out);
}

const struct route service_conv_routes[] = {
	{ "GET", "/v1/conversations", h_conversations, AUTH_APP },
	{ "DELETE", "/v1/conversations/{}", h_conversation_delete, AUTH_APP |
	    WEB_ROUTE },
	{ "POST", "/v1/conversations/{}/name", h_conversation_rename,
	    AUTH_APP | WEB_ROUTE },
	{ "GET", "/v1/conversations/{}/variables", h_conversation_variables,
	    AUTH_APP },
	{ "PUT", "/v1/conversations/{}/variables/{}",
	    h_conversation_variable_put, AUTH_APP },
	{ "GET", "/v1/messages", h_messages, AUTH_APP | WEB_ROUTE },
	{ "POST", "/v1/messages/{}/feedbacks", h_feedback, AUTH_APP |
	    WEB_ROUTE },
	{ "GET", "/v1/messages/{}/suggested", h_suggested, AUTH_APP },
	{ "GET", "/v1/app/feedbacks", h_app_feedbacks, AUTH_APP },
	{ NULL, NULL, NULL, AUTH_NONE },
};
