/*
 * suggest.c — what the app's model makes about a conversation outside a
 * run: a name for it (Dify's auto_generate rename) and the questions an
 * end user may ask next (Dify's suggested questions after an answer).
 *
 * The model is the app's own: a chat app's model_config.model, else the
 * first model a node of the workflow names (Dify takes the workspace's
 * default model, which flowcgi does not have). When there is none, or the
 * model fails, the answer is what Dify gives then: the name stays, the
 * list of questions is empty.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"
#include "engine/llm/llm.h"

/* Dify keeps a generated name under 75 characters, then "...". */
#define NAME_MAX_CHARS	75
/* Messages of the conversation the questions are made from (Dify: 3). */
#define SUGGEST_HISTORY	3
/* Bytes of each query and answer given to the model. */
#define SUGGEST_TEXT_MAX	2000

/* ====== The app's model ====== */

/* The {provider, name} model object of a node's data, or NULL. */
static const json_t *
node_model(const json_t *data)
{
	const json_t *m = json_object_get(data, "model");

	if (json_string_value(json_object_get(m, "provider")) != NULL &&
	    json_string_value(json_object_get(m, "name")) != NULL)
		return m;
	return NULL;
}

/*
 * The model of app (a record with its draft as "dsl"), borrowed from it,
 * or NULL when it names none.
 */
static const json_t *
app_model(const json_t *app)
{
	const json_t	*dsl = json_object_get(app, "dsl"), *n, *m;
	size_t		 i;

	if ((m = node_model(json_object_get(dsl, "model_config"))) != NULL)
		return m;
	json_array_foreach(json_object_get(json_object_get(json_object_get(
	    dsl, "workflow"), "graph"), "nodes"), i, n)
		if ((m = node_model(json_object_get(n, "data"))) != NULL)
			return m;
	return NULL;
}

/*
 * Asks model (borrowed) one question with prompt as the user message;
 * *out is the answer text (malloc'd) or NULL when the model failed (the
 * reason is logged). Returns 0 or ENGINE_ENOMEM.
 */
static int
ask(struct engine *e, const json_t *model, const char *prompt, char **out)
{
	struct llm_message	 m;
	struct llm_request	 rq;
	struct llm_response	 rs;
	char			 err[ENGINE_ERRMAX] = "";

	*out = NULL;
	memset(&m, 0, sizeof(m));
	memset(&rq, 0, sizeof(rq));
	memset(&rs, 0, sizeof(rs));
	m.role = LLM_USER;
	m.content = prompt;
	rq.model = json_string_value(json_object_get(model, "name"));
	rq.messages = &m;
	rq.nmessages = 1;
	if (llm_chat(e, json_string_value(json_object_get(model, "provider")),
	    &rq, err, &rs) != 0) {
		log_warn("suggest: the model failed: %s", err);
		llm_response_release(&rs);
		return 0;
	}
	*out = rs.text;
	rs.text = NULL;
	llm_response_release(&rs);
	return 0;
}

/* Appends at most max bytes of s, cut on a character boundary. */
static void
add_cut(struct dbuf *sb, const char *s, size_t max)
{
	size_t n = 0, k;

	while (n < max && s[n] != '\0') {
		if ((k = engine_utf8_seq((const unsigned char *)s + n,
		    strlen(s + n))) == 0)
			k = 1;
		if (n + k > max)
			break;
		n += k;
	}
	dbuf_add(sb, s, n);
}

/* ====== Names ====== */

/* Dify's cut of a long query: over 2000 characters, its first 300,
 * "...[TRUNCATED]...", its last 300; newlines as spaces. */
static void
query_cut(struct dbuf *sb, const char *q)
{
	size_t	len = strlen(q), start = sb->len, i, tail;

	if (len <= SUGGEST_TEXT_MAX)
		dbuf_addstr(sb, q);
	else {
		add_cut(sb, q, 300);
		dbuf_addstr(sb, "...[TRUNCATED]...");
		/* the last 300 bytes, from a character's first byte */
		tail = len - 300;
		while (tail < len && ((unsigned char)q[tail] & 0xc0) == 0x80)
			tail++;
		dbuf_addstr(sb, q + tail);
	}
	for (i = start; sb->p != NULL && i < sb->len; i++)
		if (sb->p[i] == '\n' || sb->p[i] == '\r')
			sb->p[i] = ' ';
	dbuf_addstr(sb, "\n");
}

/*
 * The name in a model's answer: Dify's JSON answer's "Your Output"
 * (LLMGenerator.generate_conversation_name), else its first non-empty
 * line without quotes around it; cut at NAME_MAX_CHARS characters with
 * "..." after. malloc'd; NULL when nothing is left.
 */
static char *
name_of(const char *text)
{
	struct dbuf	 sb = { 0 };
	const char	*p = text, *q, *o, *c;
	size_t		 n, chars = 0, k;
	json_t		*j = NULL;
	char		*r;

	if ((o = strchr(text, '{')) != NULL && (c = strrchr(text, '}')) !=
	    NULL && c > o && (j = json_loadb(o, (size_t)(c - o) + 1, 0,
	    NULL)) != NULL && json_string_value(json_object_get(j,
	    "Your Output")) != NULL) {
		p = json_string_value(json_object_get(j, "Your Output"));
		p += strspn(p, " \t\r\n");
		if (*p != '\0') {
			r = name_of(p);
			json_decref(j);
			return r;
		}
	}
	json_decref(j);
	p = text;

	while (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t')
		p++;
	q = p + strcspn(p, "\r\n");
	while (q > p && (q[-1] == ' ' || q[-1] == '\t'))
		q--;
	if (q - p >= 2 && (*p == '"' || *p == '\'') && q[-1] == *p) {
		p++;
		q--;
	}
	for (n = 0; p + n < q && chars < NAME_MAX_CHARS; n += k, chars++)
		if ((k = engine_utf8_seq((const unsigned char *)p + n,
		    (size_t)(q - p) - n)) == 0)
			k = 1;
	if (n == 0)
		return NULL;
	dbuf_add(&sb, p, n);
	if (p + n < q)
		dbuf_addstr(&sb, "...");
	return dbuf_take(&sb, NULL);
}

int
engine_conversation_autoname(struct engine *e, const char *app_id,
    const char *user, const char *conv_id, json_t **out)
{
	struct dbuf	 sb = { 0 };
	json_t		*app = NULL, *list = NULL, *first;
	const json_t	*model;
	const char	*query;
	char		*prompt = NULL, *text = NULL, *name = NULL;
	int		 rc, sealed;

	/* the first message: the oldest of the last 100 (the first, but
	 * in a conversation longer than that) */
	if ((rc = engine_message_list(e, app_id, user, conv_id, NULL, 100,
	    NULL, &list)) != 0)
		goto out;
	first = json_array_get(json_object_get(list, "data"), 0);
	query = json_string_value(json_object_get(first, "query"));
	if ((rc = app_cache_get(e, app_id, 0, &app, &sealed)) != 0)
		goto out;
	if (query != NULL && *query != '\0' && (model = app_model(app)) !=
	    NULL) {
		/* Dify's CONVERSATION_TITLE_PROMPT asks for this JSON */
		dbuf_addstr(&sb, "You need to decompose the user's input into "
		    "\"subject\" and \"intention\" in order to accurately "
		    "figure out what the user's input language actually is. "
		    "Give a short title, at most a few words, for the "
		    "conversation that begins with the input, in the input's "
		    "language. Answer with JSON only: {\"Language Type\": "
		    "\"...\", \"Your Reasoning\": \"...\", \"Your Output\": "
		    "\"the title\"}\n\nUser Input: ");
		query_cut(&sb, query);
		rc = ENGINE_ENOMEM;
		if ((prompt = dbuf_take(&sb, NULL)) == NULL ||
		    ask(e, model, prompt, &text) != 0)
			goto out;
		if (text != NULL)
			name = name_of(text);
	}
	rc = engine_conversation_rename(e, app_id, user, conv_id, name, out);
out:
	dbuf_free(&sb);
	free(prompt);
	free(text);
	free(name);
	json_decref(list);
	json_decref(app);
	return rc;
}

/* ====== Suggested questions ====== */

/*
 * The questions in a model's answer: the first JSON array in it, its
 * strings in order. New reference, [] when there is none.
 */
static json_t *
questions_of(const char *text)
{
	json_t		*arr = NULL, *out = json_array(), *v;
	const char	*o, *c;
	size_t		 i;

	if (out == NULL)
		return NULL;
	if ((o = strchr(text, '[')) != NULL && (c = strrchr(text, ']')) !=
	    NULL && c > o)
		arr = json_loadb(o, (size_t)(c - o) + 1, 0, NULL);
	json_array_foreach(arr, i, v)
		if (json_is_string(v) && json_string_length(v) > 0 &&
		    json_array_append(out, v) != 0) {
			json_decref(out);
			out = NULL;	/* out of memory */
			break;
		}
	json_decref(arr);
	return out;
}

/* 1 when app's suggested_questions_after_answer feature is on. */
static int
suggest_enabled(const json_t *app)
{
	const json_t	*dsl = json_object_get(app, "dsl");
	const json_t	*feat = json_object_get(json_object_get(dsl,
			    "workflow"), "features");

	if (!json_is_object(json_object_get(dsl, "workflow")))
		feat = json_object_get(dsl, "model_config");
	return json_is_true(json_object_get(json_object_get(feat,
	    "suggested_questions_after_answer"), "enabled"));
}

int
engine_message_suggested(struct engine *e, const char *app_id,
    const char *user, const char *msg_id, char *err, json_t **out)
{
	struct dbuf	 sb = { 0 };
	json_t		*app = NULL, *msg = NULL, *list = NULL, *qs = NULL;
	json_t		*m;
	const json_t	*model;
	char		*prompt = NULL, *text = NULL;
	size_t		 i;
	int		 rc, sealed;

	if ((rc = engine_message_get(e, app_id, user, msg_id, &msg)) != 0) {
		snprintf(err, ENGINE_ERRMAX, "Message Not Exists.");
		goto out;
	}
	if ((rc = app_cache_get(e, app_id, 0, &app, &sealed)) != 0)
		goto out;
	if (!suggest_enabled(app)) {
		rc = engine_invalid(err, "Function Suggested questions after "
		    "answer disabled.");
		goto out;
	}
	/* Dify's TokenBufferMemory: the thread of the newest message */
	if ((model = app_model(app)) != NULL &&
	    (rc = engine_message_thread(e, app_id, user, json_string_value(
	    json_object_get(msg, "conversation_id")), NULL, SUGGEST_HISTORY,
	    err, &list)) == 0) {
		json_array_foreach(list, i, m) {
			dbuf_addstr(&sb, "Human: ");
			add_cut(&sb, json_string_value(json_object_get(m,
			    "query")) ? json_string_value(json_object_get(m,
			    "query")) : "", SUGGEST_TEXT_MAX);
			dbuf_addstr(&sb, "\nAssistant: ");
			add_cut(&sb, json_string_value(json_object_get(m,
			    "answer")) ? json_string_value(json_object_get(m,
			    "answer")) : "", SUGGEST_TEXT_MAX);
			dbuf_addstr(&sb, "\n");
		}
		dbuf_addstr(&sb, "\nFrom the conversation above, guess the "
		    "three questions the human is most likely to ask next, "
		    "each under 20 characters, in the language of the "
		    "assistant's last answer. Answer with a JSON array of "
		    "three strings and nothing else, like "
		    "[\"question1\",\"question2\",\"question3\"].\n");
		rc = ENGINE_ENOMEM;
		if ((prompt = dbuf_take(&sb, NULL)) == NULL ||
		    ask(e, model, prompt, &text) != 0)
			goto out;
	}
	rc = ENGINE_ENOMEM;
	if ((qs = text != NULL ? questions_of(text) : json_array()) == NULL ||
	    (*out = json_pack("{s:s,s:O}", "result", "success", "data",
	    qs)) == NULL)
		goto out;
	rc = 0;
out:
	dbuf_free(&sb);
	free(prompt);
	free(text);
	json_decref(qs);
	json_decref(list);
	json_decref(msg);
	json_decref(app);
	return rc;
}
