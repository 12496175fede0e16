/*
 * conversations.c — chatflow conversations and their messages as the
 * service API lists them. Records: conversations (id -> record with
 * app_id, from_end_user_id, variables), messages ("<conversation id>/<message
 * id>" -> record); ids are time-ordered, so key order is time order.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/records/records.h"

static const char *
str_of(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* 1 when conversation rec is app_id's and user's (NULL: anyone's). */
static int
of_owner(const json_t *rec, const char *app_id, const char *user)
{
	return record_owned(rec, app_id, "from_end_user_id", user);
}

/* ====== Conversations ====== */

/* Dify's SimpleConversation of record rec. New reference. */
static json_t *
conv_view(const json_t *rec)
{
	json_t *name = json_object_get(rec, "name");
	json_t *inputs = json_object_get(rec, "inputs");

	return json_pack("{s:O,s:o,s:o,s:s,s:s,s:O,s:O}", "id",
	    json_object_get(rec, "id"), "name", name ? json_incref(name) :
	    json_string(""), "inputs", inputs ? json_incref(inputs) :
	    json_object(), "status", "normal", "introduction", "",
	    "created_at", json_object_get(rec, "created_at"), "updated_at",
	    json_object_get(rec, "updated_at"));
}

/* How engine_conversation_list orders: by field, descending or not. */
struct conv_order {
	const char	*field;		/* "created_at" or "updated_at" */
	int		 desc;
};

/*
 * Order of a and b by the field, then by id (time-ordered), so that
 * records of the same second page in a fixed order and none is skipped
 * (qsort_r: arg is the struct conv_order).
 */
static int
conv_cmp(const void *pa, const void *pb, void *arg)
{
	const json_t		*a = *(json_t *const *)pa;
	const json_t		*b = *(json_t *const *)pb;
	const struct conv_order	*o = arg;
	json_int_t		 x = json_integer_value(json_object_get(a,
				    o->field));
	json_int_t		 y = json_integer_value(json_object_get(b,
				    o->field));
	int			 c;

	c = x < y ? -1 : x > y;
	if (c == 0)
		c = strcmp(str_of(a, "id") ? str_of(a, "id") : "",
		    str_of(b, "id") ? str_of(b, "id") : "");
	return o->desc ? -c : c;
}

int
engine_conversation_list(struct engine *e, const char *app_id,
    const char *user, const struct conv_page *pg, char *err, json_t **out)
{
	struct store_txn	*t = NULL;
	struct conv_order	 o = { "updated_at", 1 };
	json_t			*all = NULL, *data = NULL, *rec, **v = NULL;
	const char		*k, *sort = pg->sort_by;
	size_t			 n = 0, i, from = 0;
	int			 rc;

	if (sort != NULL && *sort != '\0') {
		o.desc = *sort == '-';
		o.field = sort + o.desc;
		if (strcmp(o.field, "created_at") != 0 &&
		    strcmp(o.field, "updated_at") != 0)
			return engine_invalid(err, "sort_by must be one of "
			    "created_at, -created_at, updated_at, -updated_at");
	}
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = records_collect(t, STORE_DB_CONVERSATIONS, NULL, app_id, 0,
	    &all);
	store_read_end(t);
	if (rc != 0)
		return engine_from_store(rc);
	rc = ENGINE_ENOMEM;
	if ((v = calloc(json_object_size(all) + 1, sizeof(*v))) == NULL ||
	    (data = json_array()) == NULL)
		goto out;
	json_object_foreach(all, k, rec)
		if (of_owner(rec, app_id, user))
			v[n++] = rec;
	qsort_r(v, n, sizeof(*v), conv_cmp, &o);
	if (pg->last_id != NULL && *pg->last_id != '\0') {
		for (i = 0; i < n; i++)
			if (strcmp(str_of(v[i], "id"), pg->last_id) == 0)
				break;
		if (i == n) {
			snprintf(err, ENGINE_ERRMAX, "Last Conversation Not "
			    "Exists.");
			rc = ENGINE_ENOTFOUND;
			goto out;
		}
		from = i + 1;
	}
	for (i = from; i < n && i < from + (size_t)pg->limit; i++)
		if (json_array_append_new(data, conv_view(v[i])) != 0)
			goto out;
	if ((*out = json_pack("{s:i,s:b,s:O}", "limit", pg->limit, "has_more",
	    i < n, "data", data)) != NULL)
		rc = 0;
out:
	free(v);
	json_decref(all);
	json_decref(data);
	return rc;
}

/* ====== Messages ====== */

/*
 * The parent_message_id of stored message rec, as Dify keeps it: an id,
 * null (the first of a thread) or UUID_NIL, "after the one before" (the
 * service API's, and every message stored before messages had parents,
 * as Dify's migration marked its own). New reference.
 */
static json_t *
message_parent(const json_t *rec)
{
	const json_t *p = json_object_get(rec, "parent_message_id");

	return p != NULL ? json_incref((json_t *)p) :
	    json_string(ENGINE_UUID_NIL);
}

/* Dify's message list item of stored message rec. New reference. */
static json_t *
message_view(const json_t *rec)
{
	const json_t	*fb = json_object_get(rec, "feedback");
	json_t		*inputs = json_object_get(rec, "inputs");
	const char	*st = str_of(rec, "status");

	/* the lists a run stored with the message (agent_thoughts of an
	 * agent app, message_files, retriever_resources), else empty */
#define LIST(k) (json_is_array(json_object_get(rec, (k))) ? \
	json_incref(json_object_get(rec, (k))) : json_array())
	return json_pack("{s:O,s:O,s:o,s:o,s:O,s:O,s:o,s:o,s:o,s:o,s:O,"
	    "s:s,s:O}", "id", json_object_get(rec, "id"), "conversation_id",
	    json_object_get(rec, "conversation_id"), "parent_message_id",
	    message_parent(rec), "inputs", inputs ? json_incref(inputs) : json_object(), "query",
	    json_object_get(rec, "query"),
	    "answer", json_object_get(rec, "answer"), "message_files",
	    LIST("message_files"),
	    "feedback", json_is_object(fb) ? json_pack("{s:O}", "rating",
	    json_object_get(fb, "rating")) : json_null(),
	    "retriever_resources", LIST("retriever_resources"),
	    "agent_thoughts", LIST("agent_thoughts"), "created_at",
	    json_object_get(rec, "created_at"), "status", st == NULL ||
	    strcmp(st, "failed") != 0 ? "normal" : "error", "error",
	    st != NULL && strcmp(st, "failed") == 0 && json_object_get(rec,
	    "error") ? json_object_get(rec, "error") : json_null());
#undef LIST
}

int
engine_message_list(struct engine *e, const char *app_id, const char *user,
    const char *conv_id, const char *first_id, int limit, char *err,
    json_t **out)
{
	struct store_txn	*t = NULL;
	json_t			*all = NULL, *data = NULL, *rec, *conv = NULL;
	const char		*k;
	char			 prefix[64];
	size_t			 n, end, from, i;
	int			 rc;

	if (engine_uuid_check(conv_id) != 0)
		goto gone;
	snprintf(prefix, sizeof(prefix), "%s/", conv_id);
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = store_get_json(t, STORE_DB_CONVERSATIONS, conv_id, &conv))
	    == 0 && !of_owner(conv, app_id, user))
		rc = STORE_ENOTFOUND;
	/* message ids are time-ordered: key order is time order */
	if (rc == 0)
		rc = records_collect(t, STORE_DB_MESSAGES, prefix, NULL, 0,
		    &all);
	store_read_end(t);
	json_decref(conv);
	if (rc == STORE_ENOTFOUND)
		goto gone;
	if (rc != 0)
		return engine_from_store(rc);
	/* Dify's pages run backwards: the newest first, then those before
	 * first_id; each page itself oldest first. */
	n = json_object_size(all);
	end = n;
	if (first_id != NULL && *first_id != '\0') {
		i = 0;
		end = n + 1;
		json_object_foreach(all, k, rec) {
			if (strcmp(k + strlen(prefix), first_id) == 0)
				end = i;
			i++;
		}
		if (end > n) {
			if (err != NULL)
				snprintf(err, ENGINE_ERRMAX, "First Message "
				    "Not Exists.");
			json_decref(all);
			return ENGINE_ENOTFOUND;
		}
	}
	from = end > (size_t)limit ? end - (size_t)limit : 0;
	rc = ENGINE_ENOMEM;
	if ((data = json_array()) == NULL)
		goto out;
	i = 0;
	json_object_foreach(all, k, rec) {
		if (i >= from && i < end && !json_is_null(rec) &&
		    json_array_append_new(data, message_view(rec)) != 0)
			goto out;
		i++;
	}
	if ((*out = json_pack("{s:i,s:b,s:O}", "limit", limit, "has_more",
	    from > 0, "data", data)) != NULL)
		rc = 0;
out:
	json_decref(all);
	json_decref(data);
	return rc;
gone:
	if (err != NULL)
		snprintf(err, ENGINE_ERRMAX, "Conversation Not Exists.");
	return ENGINE_ENOTFOUND;
}

/*
 * Dify's extract_thread_messages, walked the other way round: from the
 * newest message back, each message taken is the one its successor
 * names as parent (UUID_NIL: whichever comes next), until one with a
 * null parent. Dify's loop also stops at a null parent of a message off
 * the thread (a regenerated first answer newer than the thread's own);
 * this follows the parents only.
 */
int
engine_message_thread(struct engine *e, const char *app_id,
    const char *user, const char *conv_id, const char *parent, size_t max,
    char *err, json_t **out)
{
	struct store_txn	*t = NULL;
	json_t			*all = NULL, *conv = NULL, *rec, *res = NULL;
	json_t			**recs = NULL;
	const char		*k, *next, *id;
	char			 prefix[64];
	size_t			 n, i, taken = 0;
	int			 rc, found;

	*out = NULL;
	if ((res = json_array()) == NULL)
		return ENGINE_ENOMEM;
	next = parent == NULL ? ENGINE_UUID_NIL : parent;
	/* a thread of its own: nothing before it */
	if (*next == '\0') {
		*out = res;
		return 0;
	}
	found = strcmp(next, ENGINE_UUID_NIL) == 0;
	rc = 0;
	if (engine_uuid_check(conv_id) == 0) {
		snprintf(prefix, sizeof(prefix), "%s/", conv_id);
		if ((rc = store_read_begin(e->store, &t)) != 0) {
			json_decref(res);
			return engine_from_store(rc);
		}
		if ((rc = store_get_json(t, STORE_DB_CONVERSATIONS, conv_id,
		    &conv)) == 0 && !of_owner(conv, app_id, user))
			rc = STORE_ENOTFOUND;
		if (rc == 0)
			rc = records_collect(t, STORE_DB_MESSAGES, prefix, NULL,
			    0, &all);
		store_read_end(t);
		json_decref(conv);
		if (rc == STORE_ENOTFOUND)
			rc = 0;		/* no conversation: no messages */
	}
	if (rc != 0) {
		rc = engine_from_store(rc);
		goto out;
	}
	/* key order is time order: walk it backwards */
	n = json_object_size(all);
	rc = ENGINE_ENOMEM;
	if (n > 0 && (recs = calloc(n, sizeof(*recs))) == NULL)
		goto out;
	i = 0;
	json_object_foreach(all, k, rec)
		recs[i++] = rec;
	for (i = n; i > 0 && next != NULL; i--) {
		rec = recs[i - 1];
		if (!json_is_object(rec) || (id = str_of(rec, "id")) == NULL)
			continue;
		if (strcmp(next, ENGINE_UUID_NIL) != 0 && strcmp(next, id) != 0)
			continue;
		found = 1;
		if (taken < max) {
			if (json_array_insert_new(res, 0, json_pack("{s:O,s:O}",
			    "query", json_object_get(rec, "query"), "answer",
			    json_object_get(rec, "answer"))) != 0)
				goto out;
			taken++;
		}
		/* no member: stored before parents were (UUID_NIL) */
		rec = json_object_get(rec, "parent_message_id");
		next = rec == NULL ? ENGINE_UUID_NIL : json_string_value(rec);
	}
	if (!found) {
		if (err != NULL)
			snprintf(err, ENGINE_ERRMAX, "Message Not Exists.");
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	*out = res;
	res = NULL;
	rc = 0;
out:
	free(recs);
	json_decref(all);
	json_decref(res);
	return rc;
}

/*
 * The stored key "<conversation id>/<message id>" of message msg_id of
 * app_id and user (NULL: anyone's) into key, with its conversation's
 * record in *conv (new reference; conv may be NULL). Each of the app's
 * conversations is looked at by key, without reading it, until one holds
 * the message. Returns 0, STORE_ENOTFOUND or a STORE_E* code.
 */
static int
message_find(struct store_txn *t, const char *app_id, const char *user,
    const char *msg_id, char key[96], json_t **conv)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	const void		*v;
	size_t			 vlen, mlen = strlen(msg_id);
	json_t			*rec;
	int			 rc;

	if (engine_uuid_check(msg_id) != 0)
		return STORE_ENOTFOUND;
	if ((rc = store_cursor_open(t, STORE_DB_CONVERSATIONS, &c)) != 0)
		return rc;
	for (rc = store_cursor_first(c, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv)) {
		if (kv.klen != 36)
			continue;
		memcpy(key, kv.k, 36);
		key[36] = '/';
		memcpy(key + 37, msg_id, mlen + 1);
		if (store_get(t, STORE_DB_MESSAGES, key, 37 + mlen, &v,
		    &vlen) != 0)
			continue;
		if ((rec = json_loadb(kv.v, kv.vlen, 0, NULL)) == NULL)
			continue;
		if (!of_owner(rec, app_id, user)) {
			json_decref(rec);
			break;	/* the message is another's */
		}
		if (conv != NULL)
			*conv = rec;
		else
			json_decref(rec);
		store_cursor_close(c);
		return 0;
	}
	store_cursor_close(c);
	return rc == 0 || rc == STORE_ENOTFOUND ? STORE_ENOTFOUND : rc;
}

int
engine_message_get(struct engine *e, const char *app_id, const char *user,
    const char *msg_id, json_t **out)
{
	struct store_txn	*t = NULL;
	char			 key[96];
	int			 rc;

	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = message_find(t, app_id, user, msg_id, key, NULL)) == 0)
		rc = store_get_json(t, STORE_DB_MESSAGES, key, out);
	store_read_end(t);
	return engine_from_store(rc);
}

/* ====== Feedback ====== */

struct feedback {
	const char	*app_id;
	const char	*user;
	const char	*msg_id;
	const char	*rating;	/* NULL: take it back */
	const char	*content;
	char		*err;
};

static int
feedback_fn(struct store_txn *t, void *arg)
{
	struct feedback	*f = arg;
	json_t		*msg = NULL, *fb = NULL;
	char		 key[96], id[37];
	int64_t		 now = engine_now();
	int		 rc;

	if ((rc = message_find(t, f->app_id, f->user, f->msg_id, key,
	    NULL)) != 0 || (rc = store_get_json(t, STORE_DB_MESSAGES, key,
	    &msg)) != 0)
		return rc;
	fb = json_object_get(msg, "feedback");
	if (f->rating == NULL && !json_is_object(fb)) {
		snprintf(f->err, ENGINE_ERRMAX, "rating cannot be None when "
		    "feedback not exists");
		rc = STORE_EINVAL;
	} else if (f->rating == NULL)
		json_object_del(msg, "feedback");
	else if (json_is_object(fb)) {
		if (json_object_set_new(fb, "rating",
		    json_string(f->rating)) != 0 ||
		    json_object_set_new(fb, "content", f->content ?
		    json_string(f->content) : json_null()) != 0 ||
		    json_object_set_new(fb, "updated_at",
		    json_integer(now)) != 0)
			rc = STORE_ENOMEM;
	} else {
		engine_uuid(id);
		if ((fb = json_pack("{s:s,s:s,s:s?,s:s,s:I,s:I}", "id", id,
		    "rating", f->rating, "content", f->content, "from_source",
		    "user", "created_at", (json_int_t)now, "updated_at",
		    (json_int_t)now)) == NULL ||
		    json_object_set_new(msg, "feedback", fb) != 0)
			rc = STORE_ENOMEM;
	}
	if (rc == 0)
		rc = store_put_json(t, STORE_DB_MESSAGES, key, msg, 0);
	json_decref(msg);
	return rc;
}

int
engine_message_feedback(struct engine *e, const char *app_id,
    const char *user, const char *msg_id, const char *rating,
    const char *content, char *err)
{
	struct feedback	f = { app_id, user, msg_id, rating, content, err };
	int		rc;

	if (rating != NULL && strcmp(rating, "like") != 0 &&
	    strcmp(rating, "dislike") != 0)
		return engine_invalid(err, "rating must be like, dislike or "
		    "null");
	rc = store_write(e->store, feedback_fn, &f);
	if (rc == STORE_EINVAL)
		return ENGINE_EINVAL;
	if (rc == STORE_ENOTFOUND)
		snprintf(err, ENGINE_ERRMAX, "Message Not Exists.");
	return engine_from_store(rc);
}

/* Seconds since the epoch as Dify's isoformat() of a naive UTC time. */
static json_t *
iso_time(json_int_t secs)
{
	struct tm	tm;
	time_t		tt = (time_t)secs;
	char		buf[32];

	if (gmtime_r(&tt, &tm) == NULL)
		return json_null();
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	return json_string(buf);
}

/* Feedback records, newest first, for qsort. */
static int
feedback_cmp(const void *a, const void *b)
{
	const json_t	*x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t	 p = json_integer_value(json_object_get(x, "_t"));
	json_int_t	 q = json_integer_value(json_object_get(y, "_t"));
	int		 c = p < q ? 1 : p > q ? -1 : 0;

	return c != 0 ? c : -strcmp(str_of(x, "id"), str_of(y, "id"));
}

int
engine_app_feedbacks(struct engine *e, const char *app_id, int page,
    int limit, json_t **out)
{
	struct store_txn	*t = NULL;
	json_t			*convs = NULL, *msgs = NULL, *list = NULL;
	json_t			*data = NULL, *fb, *rec, *conv, **v = NULL;
	const char		*k, *mk;
	char			 prefix[64];
	size_t			 n, i, from;
	int			 rc;

	if ((list = json_array()) == NULL || (data = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = store_read_begin(e->store, &t)) != 0) {
		rc = engine_from_store(rc);
		goto out;
	}
	/* feedback lives in the messages of the app's conversations */
	rc = records_collect(t, STORE_DB_CONVERSATIONS, NULL, app_id, 0,
	    &convs);
	json_object_foreach(convs, k, conv) {
		snprintf(prefix, sizeof(prefix), "%s/", k);
		if (rc != 0 || (rc = records_collect(t, STORE_DB_MESSAGES,
		    prefix, NULL, 0, &msgs)) != 0)
			break;
		json_object_foreach(msgs, mk, rec) {
			if (!json_is_object(fb = json_object_get(rec,
			    "feedback")))
				continue;
			if (json_array_append_new(list, json_pack("{s:O,s:s,"
			    "s:O,s:O,s:O,s:O,s:O,s:O,s:n,s:o,s:o,s:O}", "id",
			    json_object_get(fb, "id"), "app_id", app_id,
			    "conversation_id", json_object_get(rec,
			    "conversation_id"), "message_id",
			    json_object_get(rec, "id"), "rating",
			    json_object_get(fb, "rating"), "content",
			    json_object_get(fb, "content") ? json_object_get(fb,
			    "content") : json_null(), "from_source",
			    json_object_get(fb, "from_source"),
			    "from_end_user_id", json_object_get(conv,
			    "from_end_user_id") ? json_object_get(conv,
			    "from_end_user_id") : json_null(),
			    "from_account_id", "created_at", iso_time(
			    json_integer_value(json_object_get(fb,
			    "created_at"))), "updated_at", iso_time(
			    json_integer_value(json_object_get(fb,
			    "updated_at"))), "_t", json_object_get(fb,
			    "created_at"))) != 0) {
				rc = STORE_ENOMEM;
				break;
			}
		}
		json_decref(msgs);
		msgs = NULL;
	}
	store_read_end(t);
	if (rc != 0) {
		rc = engine_from_store(rc);
		goto out;
	}
	rc = ENGINE_ENOMEM;
	n = json_array_size(list);
	if ((v = calloc(n + 1, sizeof(*v))) == NULL)
		goto out;
	json_array_foreach(list, i, rec)
		v[i] = rec;
	qsort(v, n, sizeof(*v), feedback_cmp);
	from = (size_t)(page - 1) * (size_t)limit;
	for (i = from; i < n && i < from + (size_t)limit; i++) {
		json_object_del(v[i], "_t");
		if (json_array_append(data, v[i]) != 0)
			goto out;
	}
	if ((*out = json_pack("{s:O}", "data", data)) != NULL)
		rc = 0;
out:
	free(v);
	json_decref(convs);
	json_decref(list);
	json_decref(data);
	return rc;
}

/* ====== Names and variables ====== */

struct rename {
	const char	*app_id;
	const char	*user;
	const char	*conv_id;
	const char	*name;
	json_t		*out;
};

static int
rename_fn(struct store_txn *t, void *arg)
{
	struct rename	*rn = arg;
	json_t		*conv = NULL;
	int		 rc;

	if ((rc = store_get_json(t, STORE_DB_CONVERSATIONS, rn->conv_id,
	    &conv)) != 0)
		return rc;
	if (!of_owner(conv, rn->app_id, rn->user))
		rc = STORE_ENOTFOUND;
	else if (rn->name != NULL) {
		if (json_object_set_new(conv, "name",
		    json_string(rn->name)) != 0 ||
		    json_object_set_new(conv, "updated_at",
		    json_integer(engine_now())) != 0)
			rc = STORE_ENOMEM;
		else
			rc = store_put_json(t, STORE_DB_CONVERSATIONS,
			    rn->conv_id, conv, 0);
	}
	if (rc == 0 && (rn->out = conv_view(conv)) == NULL)
		rc = STORE_ENOMEM;
	json_decref(conv);
	return rc;
}

int
engine_conversation_rename(struct engine *e, const char *app_id,
    const char *user, const char *conv_id, const char *name, json_t **out)
{
	struct rename	rn = { app_id, user, conv_id, name, NULL };
	int		rc;

	if (engine_uuid_check(conv_id) != 0)
		return ENGINE_ENOTFOUND;
	if ((rc = engine_from_store(store_write(e->store, rename_fn,
	    &rn))) == 0)
		*out = rn.out;
	return rc;
}

int
engine_conversation_get(struct engine *e, const char *app_id,
    const char *user, const char *conv_id, json_t **out)
{
	struct store_txn	*t = NULL;
	json_t			*conv = NULL;
	int			 rc;

	if (engine_uuid_check(conv_id) != 0)
		return ENGINE_ENOTFOUND;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = store_get_json(t, STORE_DB_CONVERSATIONS, conv_id, &conv);
	store_read_end(t);
	if (rc == 0 && !of_owner(conv, app_id, user)) {
		json_decref(conv);
		rc = STORE_ENOTFOUND;
	}
	if (rc == 0)
		*out = conv;
	return engine_from_store(rc);
}

/* 1 when name holds needle, ASCII case folded (Dify's ilike %needle%). */
static int
name_has(const char *name, const char *needle)
{
	size_t i, n = strlen(needle);

	for (; *name != '\0'; name++) {
		for (i = 0; i < n && name[i] != '\0' &&
		    tolower((unsigned char)name[i]) ==
		    tolower((unsigned char)needle[i]); i++)
			;
		if (i == n)
			return 1;
	}
	return n == 0;
}

/*
 * A variable's value as Dify's API shows it, a string: text as it is,
 * anything else as JSON text; null stays null. New reference.
 */
static json_t *
value_text(const json_t *v)
{
	json_t	*s;
	char	*j;

	if (v == NULL || json_is_null(v))
		return json_null();
	if (json_is_string(v))
		return json_incref((json_t *)v);
	if ((j = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return NULL;
	s = json_string(j);
	free(j);
	return s;
}

int
engine_conversation_variables(struct engine *e, const char *app_id,
    const char *user, const char *conv_id, const char *last_id, int limit,
    const char *name, char *err, json_t **out)
{
	json_t		*conv = NULL, *app = NULL, *data = NULL, *d, *val;
	const json_t	*decl, *vals;
	const char	*vn, *vt, *id;
	size_t		 i;
	int		 rc, sealed, seen = last_id == NULL || *last_id == '\0';
	int		 more = 0;

	if (name != NULL)
		for (vn = name; *vn != '\0'; vn++)
			if (!isalnum((unsigned char)*vn) && *vn != '-' &&
			    *vn != '_' && *vn != '.')
				return engine_invalid(err, "Variable name can "
				    "only contain letters, numbers, hyphens "
				    "(-), underscores (_), and periods (.)");
	if ((rc = engine_conversation_get(e, app_id, user, conv_id,
	    &conv)) != 0) {
		snprintf(err, ENGINE_ERRMAX, "Conversation Not Exists.");
		return rc;
	}
	if ((rc = app_cache_get(e, app_id, 0, &app, &sealed)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if ((data = json_array()) == NULL)
		goto out;
	/* the app declares them (id, type, description); the conversation
	 * holds their values as its last message left them */
	decl = json_object_get(json_object_get(json_object_get(app, "dsl"),
	    "workflow"), "conversation_variables");
	vals = json_object_get(conv, "variables");
	json_array_foreach(decl, i, d) {
		if ((vn = str_of(d, "name")) == NULL ||
		    (id = str_of(d, "id")) == NULL)
			continue;
		if (!seen) {
			seen = strcmp(id, last_id) == 0;
			continue;
		}
		if (name != NULL && !name_has(vn, name))
			continue;
		if ((int)json_array_size(data) == limit) {
			more = 1;
			break;
		}
		val = json_object_get(vals, vn);
		if (val == NULL)
			val = json_object_get(d, "value");
		vt = str_of(d, "value_type");
		if (json_array_append_new(data, json_pack("{s:s,s:s,s:s,s:o,"
		    "s:s,s:O,s:O}", "id", id, "name", vn, "value_type",
		    vt ? vt : "string", "value", value_text(val),
		    "description", str_of(d, "description") ? str_of(d,
		    "description") : "", "created_at", json_object_get(conv,
		    "created_at"), "updated_at", json_object_get(conv,
		    "updated_at"))) != 0)
			goto out;
	}
	if (!seen) {
		snprintf(err, ENGINE_ERRMAX, "Conversation Variable Not "
		    "Exists.");
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	if ((*out = json_pack("{s:i,s:b,s:O}", "limit", limit, "has_more",
	    more, "data", data)) != NULL)
		rc = 0;
out:
	json_decref(conv);
	json_decref(app);
	json_decref(data);
	return rc;
}

/*
 * Dify's SegmentType of a JSON value (SegmentType.infer_segment_type):
 * string, integer, float, boolean, object, none, or array[<one type>]
 * (array[any] when mixed or empty).
 */
static void
segment_type(const json_t *v, char *buf, size_t size)
{
	char	 one[16], first[16] = "";
	json_t	*item;
	size_t	 i;

	if (json_is_array(v)) {
		json_array_foreach(v, i, item) {
			segment_type(item, one, sizeof(one));
			if (strcmp(one, "integer") == 0 ||
			    strcmp(one, "float") == 0)
				snprintf(one, sizeof(one), "number");
			if (i == 0)
				snprintf(first, sizeof(first), "%s", one);
			else if (strcmp(first, one) != 0)
				snprintf(first, sizeof(first), "any");
		}
		snprintf(buf, size, "array[%s]", first[0] != '\0' &&
		    strncmp(first, "array", 5) != 0 ? first : "any");
		return;
	}
	snprintf(buf, size, "%s", json_is_string(v) ? "string" :
	    json_is_integer(v) ? "integer" : json_is_real(v) ? "float" :
	    json_is_boolean(v) ? "boolean" : json_is_object(v) ? "object" :
	    "none");
}

/* 1 when v is a value of Dify's type vt (SegmentType.is_valid). */
static int
segment_valid(const char *vt, const json_t *v)
{
	char	got[24], want[24];
	json_t	*item;
	size_t	i;

	if (vt == NULL || strcmp(vt, "string") == 0 || strcmp(vt, "secret")
	    == 0)
		return json_is_string(v);
	if (strcmp(vt, "number") == 0)
		return json_is_number(v);
	if (strcmp(vt, "integer") == 0)
		return json_is_integer(v);
	if (strcmp(vt, "float") == 0)
		return json_is_number(v);
	if (strcmp(vt, "boolean") == 0)
		return json_is_boolean(v);
	if (strcmp(vt, "object") == 0)
		return json_is_object(v);
	if (strcmp(vt, "array[any]") == 0)
		return json_is_array(v);
	if (strncmp(vt, "array[", 6) != 0 || !json_is_array(v))
		return 0;
	snprintf(want, sizeof(want), "%s", vt + 6);
	want[strcspn(want, "]")] = '\0';
	json_array_foreach(v, i, item) {
		segment_type(item, got, sizeof(got));
		if (strcmp(want, "number") == 0 ? !json_is_number(item) :
		    strcmp(got, want) != 0)
			return 0;
	}
	return 1;
}

struct var_set {
	const char	*app_id;
	const char	*user;
	const char	*conv_id;
	const char	*name;
	const json_t	*value;
	const json_t	*declared;	/* every declared variable */
	json_t		*conv;		/* after: the conversation */
};

static int
var_set_fn(struct store_txn *t, void *arg)
{
	struct var_set	*vs = arg;
	json_t		*conv = NULL, *vals, *d;
	const char	*vn;
	size_t		 i;
	int		 rc;

	if ((rc = store_get_json(t, STORE_DB_CONVERSATIONS, vs->conv_id,
	    &conv)) != 0)
		return rc;
	if (!of_owner(conv, vs->app_id, vs->user)) {
		json_decref(conv);
		return STORE_ENOTFOUND;
	}
	/* before its first message has ended a conversation holds no
	 * values: the declared ones, then this one */
	if (!json_is_object(vals = json_object_get(conv, "variables"))) {
		rc = json_object_set_new(conv, "variables", json_object());
		vals = json_object_get(conv, "variables");
		json_array_foreach(vs->declared, i, d)
			if (rc == 0 && (vn = str_of(d, "name")) != NULL &&
			    json_object_get(d, "value") != NULL)
				rc = json_object_set(vals, vn,
				    json_object_get(d, "value"));
		if (rc != 0) {
			json_decref(conv);
			return STORE_ENOMEM;
		}
	}
	if (json_object_set(vals, vs->name, (json_t *)vs->value) != 0 ||
	    json_object_set_new(conv, "updated_at",
	    json_integer(engine_now())) != 0) {
		json_decref(conv);
		return STORE_ENOMEM;
	}
	if ((rc = store_put_json(t, STORE_DB_CONVERSATIONS, vs->conv_id, conv,
	    0)) != 0) {
		json_decref(conv);
		return rc;
	}
	vs->conv = conv;
	return 0;
}

int
engine_conversation_variable_set(struct engine *e, const char *app_id,
    const char *user, const char *conv_id, const char *var_id,
    const json_t *value, char *err, json_t **out)
{
	struct var_set	 vs = { app_id, user, conv_id, NULL, value, NULL,
			    NULL };
	json_t		*conv = NULL, *app = NULL, *d, *found = NULL;
	const json_t	*decl;
	const char	*vt;
	char		 got[24];
	size_t		 i;
	int		 rc, sealed;

	if ((rc = engine_conversation_get(e, app_id, user, conv_id,
	    &conv)) != 0) {
		snprintf(err, ENGINE_ERRMAX, "Conversation Not Exists.");
		return rc;
	}
	if ((rc = app_cache_get(e, app_id, 0, &app, &sealed)) != 0)
		goto out;
	decl = json_object_get(json_object_get(json_object_get(app, "dsl"),
	    "workflow"), "conversation_variables");
	json_array_foreach(decl, i, d)
		if (str_of(d, "id") != NULL && str_of(d, "name") != NULL &&
		    strcmp(str_of(d, "id"), var_id) == 0)
			found = d;
	if (found == NULL) {
		snprintf(err, ENGINE_ERRMAX, "Conversation Variable Not "
		    "Exists.");
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	vt = str_of(found, "value_type");
	if (!segment_valid(vt, value)) {
		segment_type(value, got, sizeof(got));
		rc = engine_invalid(err, "Type mismatch: variable '%.100s' "
		    "expects %.30s, but got %s type", str_of(found, "name"),
		    vt ? vt : "string", got);
		goto out;
	}
	vs.name = str_of(found, "name");
	vs.declared = decl;
	if ((rc = engine_from_store(store_write(e->store, var_set_fn,
	    &vs))) != 0) {
		if (rc == ENGINE_ENOTFOUND)
			snprintf(err, ENGINE_ERRMAX, "Conversation Not "
			    "Exists.");
		goto out;
	}
	*out = json_pack("{s:s,s:s,s:s,s:o,s:s,s:O,s:O}", "id", var_id,
	    "name", vs.name, "value_type", vt ? vt : "string", "value",
	    value_text(value), "description", str_of(found, "description") ?
	    str_of(found, "description") : "", "created_at",
	    json_object_get(vs.conv, "created_at"), "updated_at",
	    json_object_get(vs.conv, "updated_at"));
	rc = *out != NULL ? 0 : ENGINE_ENOMEM;
out:
	json_decref(vs.conv);
	json_decref(conv);
	json_decref(app);
	return rc;
}

/* Deletes every key of db that starts with prefix. */
static int
delete_prefix(struct store_txn *t, enum store_db db, const char *prefix)
{
	json_t		*all = NULL, *v;
	const char	*k;
	int		 rc;

	if ((rc = records_collect(t, db, prefix, NULL, 0, &all)) != 0)
		return rc;
	json_object_foreach(all, k, v)
		if ((rc = store_del(t, db, k, strlen(k))) != 0)
			break;
	json_decref(all);
	return rc;
}

/*
 * Deletes conversation id (record conv) with its messages and drops its
 * reference to the sandbox workspace blob run.c keeps for it.
 */
static int
conv_delete(struct store_txn *t, const char *id, const json_t *conv)
{
	char		 prefix[64];
	const char	*ws;
	int		 rc;

	snprintf(prefix, sizeof(prefix), "%s/", id);
	if ((rc = delete_prefix(t, STORE_DB_MESSAGES, prefix)) != 0)
		return rc;
	if ((ws = str_of(conv, "workspace")) != NULL &&
	    (rc = store_blob_unref(t, ws)) != 0 && rc != STORE_ENOTFOUND)
		return rc;
	return store_del(t, STORE_DB_CONVERSATIONS, id, strlen(id));
}

struct conv_del {
	const char	*app_id;
	const char	*user;
	const char	*conv_id;
};

static int
conv_del_fn(struct store_txn *t, void *arg)
{
	struct conv_del	*d = arg;
	json_t		*conv = NULL;
	int		 rc;

	if ((rc = store_get_json(t, STORE_DB_CONVERSATIONS, d->conv_id,
	    &conv)) != 0)
		return rc;
	rc = of_owner(conv, d->app_id, d->user) ? conv_delete(t, d->conv_id,
	    conv) :
	    STORE_ENOTFOUND;
	json_decref(conv);
	return rc;
}

int
engine_conversation_delete(struct engine *e, const char *app_id,
    const char *user, const char *conv_id)
{
	struct conv_del d = { app_id, user, conv_id };

	if (engine_uuid_check(conv_id) != 0)
		return ENGINE_ENOTFOUND;
	return engine_from_store(store_write(e->store, conv_del_fn, &d));
}

/*
 * Everything an app's runs left behind, for app.c's delete: runs with
 * their node executions, conversations with their messages, uploads.
 */
int
runs_delete_all(struct store_txn *t, const char *app_id)
{
	json_t		*all = NULL, *rec;
	char		 prefix[64], key[96];
	const char	*k, *id, *sum;
	size_t		 plen;
	int		 rc;

	/* runs_by_app: "<app id>/<run id>" */
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s/", app_id);
	if ((rc = records_collect(t, STORE_DB_RUNS_BY_APP, prefix, NULL, 0,
	    &all)) != 0)
		goto out;
	json_object_foreach(all, k, rec) {
		id = k + plen;
		snprintf(key, sizeof(key), "%s/", id);
		if ((rc = delete_prefix(t, STORE_DB_NODE_RUNS, key)) != 0)
			goto out;
		rc = store_del(t, STORE_DB_NODE_RUNS, id, strlen(id));
		if (rc != 0 && rc != STORE_ENOTFOUND)
			goto out;
		rc = store_del(t, STORE_DB_RUNS, id, strlen(id));
		if (rc != 0 && rc != STORE_ENOTFOUND)
			goto out;
		if ((rc = store_del(t, STORE_DB_RUNS_BY_APP, k,
		    strlen(k))) != 0)
			goto out;
	}
	/* conversations and uploads carry their app in the record */
	json_decref(all);
	if ((rc = records_collect(t, STORE_DB_CONVERSATIONS, NULL, app_id, 0,
	    &all)) != 0)
		goto out;
	json_object_foreach(all, k, rec)
		if ((rc = conv_delete(t, k, rec)) != 0)
			goto out;
	json_decref(all);
	if ((rc = records_collect(t, STORE_DB_UPLOADS, NULL, app_id, 0,
	    &all)) != 0)
		goto out;
	json_object_foreach(all, k, rec) {
		if ((sum = str_of(rec, "checksum")) != NULL)
			store_blob_unref(t, sum);
		if ((rc = store_del(t, STORE_DB_UPLOADS, k, strlen(k))) != 0)
			goto out;
	}
out:
	json_decref(all);
	return rc == STORE_ENOTFOUND ? 0 : rc;
}
