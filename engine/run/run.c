/*
 * run.c — one run of an app: checks, the variable pool's system, env and
 * conversation namespaces, the executor, events and the run records.
 *
 * Records: runs (run id -> record, with stop_requested set by a stop from
 * any process), runs_by_app ("<app id>/<run id>" -> run id; run ids are
 * time-ordered, so a reverse walk lists newest first), node_runs (run id
 * -> the array of its node executions, in order; data written before
 * schema 3 has one record per execution, "<run id>/<index, 6 digits>").
 * A run is written once, when it ends: its record, its node executions,
 * and a chatflow's conversation and message, in one transaction. A run
 * still going after run.publish_after is also stored as "running" before
 * that (live.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "engine/run/run.h"
#include "engine/knowledge/knowledge.h"

/*
 * Node executions are stored as arrays, not objects: one run's trace is
 * written in one piece, and keys repeated in every execution were most of
 * its bytes and of the time spent writing it. The object form is made
 * again when the console asks (trace_unpack), key for key as the
 * node_finished event carries it.
 */
enum {
	TR_ID, TR_NODE, TR_TYPE, TR_TITLE, TR_INDEX, TR_PRED, TR_INPUTS,
	TR_PROCESS, TR_OUTPUTS, TR_STATUS, TR_ERROR, TR_ELAPSED, TR_META,
	TR_CREATED, TR_FINISHED, TR_ITER, TR_LOOP, TR__COUNT
};

json_t *
trace_pack(const char *exec_id, const struct gnode *n, int index,
    const char *pred, json_t *inputs, json_t *process_data, json_t *outputs,
    const char *status, const char *error, int64_t created_ms,
    int64_t finished_ms, json_t *metadata, const char *iter,
    const char *loop)
{
	json_t	*t, *v[TR__COUNT];
	size_t	 i;

	/* built by hand: json_pack would parse its format every time */
	v[TR_ID] = json_string(exec_id);
	/* the graph's own strings: shared, never changed */
	v[TR_NODE] = json_incref(n->jid);
	v[TR_TYPE] = json_incref(n->jtype);
	v[TR_TITLE] = json_incref(n->jtitle);
	v[TR_INDEX] = json_integer(index);
	v[TR_PRED] = pred ? json_string(pred) : json_null();
	v[TR_INPUTS] = inputs ? json_incref(inputs) : json_null();
	v[TR_PROCESS] = process_data ? json_incref(process_data) : json_null();
	v[TR_OUTPUTS] = outputs ? json_incref(outputs) : json_null();
	v[TR_STATUS] = json_string(status);
	v[TR_ERROR] = error ? json_string(error) : json_null();
	/* milliseconds: an integer is written faster than a real */
	v[TR_ELAPSED] = json_integer(finished_ms - created_ms);
	v[TR_META] = metadata ? json_incref(metadata) : json_null();
	v[TR_CREATED] = json_integer(created_ms / 1000);
	v[TR_FINISHED] = json_integer(finished_ms / 1000);
	v[TR_ITER] = iter ? json_string(iter) : json_null();
	v[TR_LOOP] = loop ? json_string(loop) : json_null();
	t = json_array();
	for (i = 0; i < TR__COUNT; i++) {
		if (t == NULL) {
			json_decref(v[i]);
			continue;
		}
		if (v[i] == NULL || json_array_append_new(t, v[i]) != 0) {
			json_decref(t);
			t = NULL;
		}
	}
	return t;
}

json_t *
trace_unpack(json_t *t)
{
	json_t *o;

#define TR(i) json_array_get(t, (i))
	if (!json_is_array(t) || json_array_size(t) != TR__COUNT)
		return json_incref(t);
	o = json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:b,s:O,s:{},s:O,s:O,"
	    "s:O,s:b,s:O,s:b,s:O,s:O,s:o,s:O,s:O,s:[],s:O}",
	    "id", TR(TR_ID), "node_id", TR(TR_NODE), "node_type", TR(TR_TYPE),
	    "title", TR(TR_TITLE), "index", TR(TR_INDEX),
	    "predecessor_node_id", TR(TR_PRED), "inputs", TR(TR_INPUTS),
	    "inputs_truncated", 0, "created_at", TR(TR_CREATED), "extras",
	    "iteration_id", TR(TR_ITER), "loop_id", TR(TR_LOOP),
	    "process_data", TR(TR_PROCESS), "process_data_truncated", 0,
	    "outputs", TR(TR_OUTPUTS), "outputs_truncated", 0, "status",
	    TR(TR_STATUS), "error", TR(TR_ERROR), "elapsed_time",
	    json_is_integer(TR(TR_ELAPSED)) ? json_real((double)
	    json_integer_value(TR(TR_ELAPSED)) / 1000.0) : json_incref(
	    TR(TR_ELAPSED)), "execution_metadata", TR(TR_META), "finished_at",
	    TR(TR_FINISHED), "files", "node_execution_id", TR(TR_ID));
#undef TR
	return o;
}

static int
run_record_put_text(struct store_txn *t, const char *id, const char *app,
    const char *text, size_t len)
{
	char	key[96];
	int	rc;

	if ((rc = store_put(t, STORE_DB_RUNS, id, strlen(id), text, len, 0))
	    != 0)
		return rc;
	snprintf(key, sizeof(key), "%s/%s", app, id);
	return store_put(t, STORE_DB_RUNS_BY_APP, key, strlen(key), id,
	    strlen(id), 0);
}

int
run_record_put(struct store_txn *t, const json_t *rec)
{
	char	*text;
	size_t	 len;
	int	 rc;

	if ((text = store_json_text(rec, &len)) == NULL)
		return STORE_ENOMEM;
	rc = run_record_put_text(t, json_string_value(json_object_get(rec,
	    "id")), json_string_value(json_object_get(rec, "app_id")), text,
	    len);
	free(text);
	return rc;
}

struct run_write {
	struct engine	*e;
	int		 stored;	/* a start record may be stored */
	json_t		*rec;
	json_t		*nodes;
	char		*rec_text;	/* rec as stored */
	size_t		 rec_len;
	char		*nodes_text;	/* nodes as stored */
	size_t		 nodes_len;
	char		*msg_text;	/* msg as stored, or NULL */
	size_t		 msg_len;
	json_t		*conv;		/* chatflow: the conversation, or NULL */
	json_t		*msg;		/* chatflow: the message, or NULL */
	const char	*ws;		/* sandboxed chatflow: its workspace */
	size_t		 ws_len;
	const char	*draft_user;	/* a draft run's: kept for this user */
	const char	*draft_ws;	/* instead of the conversation's */
	size_t		 draft_ws_len;
};

static int
run_write_fn(struct store_txn *t, void *arg)
{
	struct run_write	*w = arg;
	const char		*id = json_string_value(json_object_get(w->rec,
				    "id"));
	const char		*app = json_string_value(json_object_get(w->rec,
				    "app_id"));
	const void		*v;
	size_t			 vlen;
	json_t			*old = NULL;
	int			 rc;

	/* an app deleted while it ran: its run leaves nothing behind
	 * (STORE_ENEEDED, at once or at the commit; on PostgreSQL the
	 * check waits for no answer, so the write stays one round trip) */
	if ((rc = store_need(t, STORE_DB_APPS, app, strlen(app))) != 0)
		return rc;
	/* stored as running (live.c): its key under the lease goes, and a
	 * stop from elsewhere stays on the record (then its text is made
	 * again, here: rare) */
	if (!w->stored)
		rc = STORE_ENOTFOUND;	/* no read: none can exist */
	else if ((rc = store_get(t, STORE_DB_RUNS, id, strlen(id), &v,
	    &vlen)) == 0) {
		int stop;

		old = json_loadb(v, vlen, 0, NULL);
		stop = json_is_true(json_object_get(old, "stop_requested"));
		json_decref(old);
		if ((rc = live_lease_drop(t, w->e, id)) != 0)
			return rc;
		if (stop && !json_is_true(json_object_get(w->rec,
		    "stop_requested"))) {
			if (json_object_set_new(w->rec, "stop_requested",
			    json_true()) != 0)
				return STORE_ENOMEM;
			free(w->rec_text);
			if ((w->rec_text = store_json_text(w->rec,
			    &w->rec_len)) == NULL)
				return STORE_ENOMEM;
		}
	} else if (rc != STORE_ENOTFOUND)
		return rc;
	if ((rc = run_record_put_text(t, id, app, w->rec_text,
	    w->rec_len)) != 0 ||
	    (rc = store_put(t, STORE_DB_NODE_RUNS, id, strlen(id),
	    w->nodes_text, w->nodes_len, 0)) != 0)
		return rc;
	if (w->draft_ws != NULL && (rc = workspace_draft_put(t, app,
	    w->draft_user, w->draft_ws, w->draft_ws_len)) != 0)
		return rc;
	if (w->conv != NULL) {
		json_t		*prev = NULL;
		const char	*cid = json_string_value(json_object_get(w->conv,
				    "id")), *was;
		char		 hex[STORE_HASH_HEX];

		/* the workspace blob: the new one in, the last one out */
		if (store_get_json(t, STORE_DB_CONVERSATIONS, cid, &prev) == 0 &&
		    (was = json_string_value(json_object_get(prev,
		    "workspace"))) != NULL) {
			if (w->ws == NULL) {
				if (json_object_set(w->conv, "workspace",
				    json_object_get(prev, "workspace")) != 0) {
					json_decref(prev);
					return STORE_ENOMEM;
				}
			} else if ((rc = store_blob_unref(t, was)) != 0 &&
			    rc != STORE_ENOTFOUND) {
				json_decref(prev);
				return rc;
			}
		}
		json_decref(prev);
		if (w->ws != NULL) {
			if ((rc = store_blob_ref(t, w->ws, w->ws_len, hex)) != 0)
				return rc;
			if (json_object_set_new(w->conv, "workspace",
			    json_string(hex)) != 0)
				return STORE_ENOMEM;
		}
		if ((rc = store_put_json(t, STORE_DB_CONVERSATIONS, cid,
		    w->conv, 0)) != 0)
			return rc;
	}
	if (w->msg != NULL) {
		char key[96];

		snprintf(key, sizeof(key), "%s/%s", json_string_value(
		    json_object_get(w->msg, "conversation_id")),
		    json_string_value(json_object_get(w->msg, "id")));
		if ((rc = store_put(t, STORE_DB_MESSAGES, key, strlen(key),
		    w->msg_text, w->msg_len, 0)) != 0)
			return rc;
	}
	return 0;
}

/*
 * Conversation id of app_id started by end user user (NULL: any; Dify
 * scopes conversations to their end user), or ENGINE_ENOTFOUND. New
 * reference.
 */
static int
conversation_load(struct engine *e, const char *app_id, const char *user,
    const char *id, json_t **out)
{
	json_t	*c = NULL;
	int	 rc;

	if (engine_uuid_check(id) != 0)
		return ENGINE_ENOTFOUND;
	/* one key: no transaction (a round trip less on PostgreSQL) */
	if ((rc = store_get_copy_json(e->store, STORE_DB_CONVERSATIONS, id,
	    &c)) != 0)
		return engine_from_store(rc);
	if (!record_owned(c, app_id, "from_end_user_id", user)) {
		json_decref(c);
		return ENGINE_ENOTFOUND;
	}
	*out = c;
	return 0;
}

/* ====== Start ====== */

static const char *
var_str(const json_t *v, const char *k)
{
	return json_string_value(json_object_get(v, k));
}

/* Dify's file types by extension, for files given without a type. */
static const char *
file_type_of(const char *ext)
{
	static const char *const img[] = { "jpg", "jpeg", "png", "gif",
	    "webp", "svg", NULL };
	static const char *const aud[] = { "mp3", "m4a", "wav", "amr", "mpga",
	    NULL };
	static const char *const vid[] = { "mp4", "mov", "mpeg", "webm", NULL };
	size_t i;

	for (i = 0; img[i] != NULL; i++)
		if (strcasecmp(ext, img[i]) == 0)
			return "image";
	for (i = 0; aud[i] != NULL; i++)
		if (strcasecmp(ext, aud[i]) == 0)
			return "audio";
	for (i = 0; vid[i] != NULL; i++)
		if (strcasecmp(ext, vid[i]) == 0)
			return "video";
	return "document";
}

/*
 * A file input as the API gives it ({type, transfer_method, upload_file_id
 * | url}) made into Dify's file object.
 */
static int
file_input(struct engine *e, const char *app_id, const char *name,
    const json_t *in, char *err, json_t **out)
{
	const char	*tm = var_str(in, "transfer_method"), *type, *url, *id;
	const char	*fname, *slash, *dot;
	json_t		*meta = NULL;
	int		 rc;

	if (!json_is_object(in) || tm == NULL)
		return engine_invalid(err, "%s in input form must be a file "
		    "{type, transfer_method, upload_file_id or url}", name);
	type = var_str(in, "type");
	if (strcmp(tm, "local_file") == 0) {
		id = var_str(in, "upload_file_id");
		if (id == NULL || (rc = engine_upload_get(e, app_id, id, NULL,
		    NULL, &meta)) != 0)
			return engine_invalid(err, "%s: upload_file_id names no "
			    "file uploaded for this app", name);
		*out = json_pack("{s:s,s:n,s:s,s:s,s:s,s:n,s:s,s:O,s:s+,s:O,"
		    "s:O,s:n}", "dify_model_identity", "__dify__file__", "id",
		    "tenant_id", "", "type", type ? type : file_type_of(
		    var_str(meta, "extension")), "transfer_method", tm,
		    "remote_url", "related_id", id, "filename",
		    json_object_get(meta, "name"), "extension", ".",
		    var_str(meta, "extension"), "mime_type",
		    json_object_get(meta, "mime_type"), "size",
		    json_object_get(meta, "size"), "url");
		json_decref(meta);
		return *out ? 0 : ENGINE_ENOMEM;
	}
	if (strcmp(tm, "remote_url") == 0) {
		if ((url = var_str(in, "url")) == NULL)
			return engine_invalid(err, "%s: a remote_url file needs "
			    "url", name);
		slash = strrchr(url, '/');
		fname = slash ? slash + 1 : url;
		dot = strrchr(fname, '.');
		*out = json_pack("{s:s,s:n,s:s,s:s,s:s,s:s,s:n,s:s,s:s,s:n,"
		    "s:i,s:s}", "dify_model_identity", "__dify__file__", "id",
		    "tenant_id", "", "type", type ? type : file_type_of(dot ?
		    dot + 1 : ""), "transfer_method", tm, "remote_url", url,
		    "related_id", "filename", fname, "extension", dot ? dot : "",
		    "mime_type", "size", -1, "url", url);
		return *out ? 0 : ENGINE_ENOMEM;
	}
	return engine_invalid(err, "%s: transfer_method must be local_file or "
	    "remote_url", name);
}

/*
 * The run's sys.files from the API's files array: each checked and made
 * into Dify's file object as a file input is, so an upload of another app
 * is refused exactly as an unknown one. *out is a new array.
 */
static int
sys_files(struct engine *e, const char *app_id, const json_t *in, char *err,
    json_t **out)
{
	json_t	*files, *f = NULL, *item;
	size_t	 i;
	int	 rc = 0;

	if ((files = json_array()) == NULL)
		return ENGINE_ENOMEM;
	if (in != NULL && !json_is_null(in) && !json_is_array(in)) {
		rc = engine_invalid(err, "files must be an array");
		goto out;
	}
	json_array_foreach(in, i, item) {
		if ((rc = file_input(e, app_id, "files", item, err, &f)) != 0)
			goto out;
		if (json_array_append_new(files, f) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
out:
	if (rc != 0) {
		json_decref(files);
		return rc;
	}
	*out = files;
	return 0;
}

/*
 * Whether sys.dialogue_count counts the turn being run (1 on a
 * conversation's first message), as Dify 1.x does (advanced_chat's
 * app_generator: get_thread_messages_length() + 1). Exports older than
 * DSL 0.2.0 come from Dify versions that counted only the earlier
 * messages (0 on the first turn); their apps keep that. A DSL without a
 * version (made here) counts the turn.
 */
static int
dialogue_counts_turn(const json_t *dsl)
{
	const char	*v = var_str(dsl, "version");
	unsigned long	 major, minor = 0;
	char		*end;

	if (v == NULL || *v == '\0')
		return 1;
	major = strtoul(v, &end, 10);
	if (end == v)
		return 1;
	if (*end == '.')
		minor = strtoul(end + 1, NULL, 10);
	return major > 0 || minor >= 2;
}

/*
 * Checks the caller's inputs against the start node's variables and makes
 * the start node's inputs: required, max_length, select options, numbers
 * (strings that hold numbers are converted, as Dify does).
 */
static int
start_inputs(struct engine *e, const char *app_id, const struct gnode *start,
    const json_t *in, char *err, json_t **out)
{
	json_t		*res = json_object(), *var, *v, *opts, *o;
	const char	*name, *type, *label;
	size_t		 i, j;
	long long	 maxlen;
	int		 rc = 0, found, bad = res == NULL;
	double		 d;
	char		*end;

	json_array_foreach(json_object_get(start->data, "variables"), i, var) {
		if ((name = var_str(var, "variable")) == NULL)
			continue;
		type = var_str(var, "type");
		label = var_str(var, "label");
		if (label == NULL)
			label = name;
		v = json_object_get(in, name);
		if (v == NULL || json_is_null(v) || (json_is_string(v) &&
		    json_string_length(v) == 0 && type != NULL &&
		    strcmp(type, "number") == 0)) {
			if (json_is_true(json_object_get(var, "required"))) {
				rc = engine_invalid(err, "%s is required in "
				    "input form", name);
				goto out;
			}
			v = json_object_get(var, "default");
			bad |= json_object_set_new(res, name, v != NULL &&
			    !json_is_null(v) ? json_incref(v) :
			    (type != NULL && (strcmp(type, "text-input") == 0 ||
			    strcmp(type, "paragraph") == 0 ||
			    strcmp(type, "select") == 0) ? json_string("") :
			    json_null()));
			continue;
		}
		if (type == NULL || strcmp(type, "text-input") == 0 ||
		    strcmp(type, "paragraph") == 0 ||
		    strcmp(type, "select") == 0) {
			if (!json_is_string(v)) {
				rc = engine_invalid(err, "%s in input form "
				    "must be a string", name);
				goto out;
			}
			/* Dify checks max_length for text-input and
			 * paragraph only: a select's options may be longer */
			maxlen = type != NULL && strcmp(type, "select") == 0 ?
			    0 : json_integer_value(json_object_get(var,
			    "max_length"));
			if (maxlen > 0 && (long long)engine_utf8_len(
			    json_string_value(v)) > maxlen) {
				rc = engine_invalid(err, "%s in input form "
				    "must be less than %lld characters", name,
				    maxlen);
				goto out;
			}
			opts = json_object_get(var, "options");
			if (type != NULL && strcmp(type, "select") == 0 &&
			    json_array_size(opts) > 0) {
				found = 0;
				json_array_foreach(opts, j, o)
					if (json_is_string(o) && strcmp(
					    json_string_value(o),
					    json_string_value(v)) == 0)
						found = 1;
				if (!found) {
					rc = engine_invalid(err, "%s in input "
					    "form must be one of the options",
					    name);
					goto out;
				}
			}
			bad |= json_object_set(res, name, v);
		} else if (strcmp(type, "number") == 0) {
			if (json_is_number(v))
				bad |= json_object_set(res, name, v);
			else if (json_is_string(v)) {
				d = strtod(json_string_value(v), &end);
				if (*end != '\0' || end == json_string_value(v)) {
					rc = engine_invalid(err, "%s in input "
					    "form must be a number", name);
					goto out;
				}
				bad |= json_object_set_new(res, name,
				    strchr(json_string_value(v), '.') ||
				    strchr(json_string_value(v), 'e') ?
				    json_real(d) : json_integer((json_int_t)d));
			} else {
				rc = engine_invalid(err, "%s in input form "
				    "must be a number", name);
				goto out;
			}
		} else if (strcmp(type, "file") == 0) {
			json_t *f = NULL;

			if ((rc = file_input(e, app_id, name, v, err, &f)) != 0)
				goto out;
			bad |= json_object_set_new(res, name, f);
		} else if (strcmp(type, "file-list") == 0) {
			json_t *list = json_array(), *f, *item;

			if (!json_is_array(v)) {
				json_decref(list);
				rc = engine_invalid(err, "%s in input form "
				    "must be a list of files", name);
				goto out;
			}
			json_array_foreach(v, j, item) {
				if ((rc = file_input(e, app_id, name, item,
				    err, &f)) != 0) {
					json_decref(list);
					goto out;
				}
				bad |= json_array_append_new(list, f);
			}
			bad |= json_object_set_new(res, name, list);
		} else
			bad |= json_object_set(res, name, v); /* json, checkbox */
	}
	if (bad) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	*out = res;
	res = NULL;
out:
	json_decref(res);
	return rc;
}

/*
 * The memory of a new message: the thread it follows (its parent's, see
 * engine_message_thread), at most HISTORY_MAX [{query, answer}]. A
 * parent not of this conversation is ENGINE_ENOTFOUND with err.
 */
#define HISTORY_MAX 50
static int
history_load(struct engine *e, const char *app_id, const char *conv_id,
    const char *parent, char *err, json_t **out)
{
	json_decref(*out);
	*out = NULL;
	return engine_message_thread(e, app_id, NULL, conv_id, parent,
	    HISTORY_MAX, err, out);
}

/*
 * env.* from the workflow's environment variables, conversation.* from its
 * conversation variables (one without a value is left unset). Returns 0
 * or ENGINE_ENOMEM.
 */
static int
pool_env(struct pool *p, const json_t *wf)
{
	json_t		*v, *val;
	const char	*name;
	size_t		 i;

	json_array_foreach(json_object_get(wf, "environment_variables"), i,
	    v)
		if ((name = var_str(v, "name")) != NULL &&
		    (val = json_object_get(v, "value")) != NULL &&
		    pool_set(p, "env", name, val) != 0)
			return ENGINE_ENOMEM;
	json_array_foreach(json_object_get(wf, "conversation_variables"), i,
	    v)
		if ((name = var_str(v, "name")) != NULL &&
		    (val = json_object_get(v, "value")) != NULL &&
		    pool_set(p, "conversation", name, val) != 0)
			return ENGINE_ENOMEM;
	return 0;
}

/* Refuses graphs with node types flowcgi cannot run, naming them. */
static int
check_supported(const struct graph *g, char *err)
{
	char	buf[ENGINE_ERRMAX] = "";
	size_t	i, len = 0;
	int	bad = 0;

	for (i = 0; i < g->nnodes; i++) {
		if (g->nodes[i].nt != NULL)
			continue;
		if (bad++ < 4)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
			    "%s'%s' (node %s)", bad > 1 ? ", " : "",
			    g->nodes[i].type, g->nodes[i].id);
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
	}
	if (bad == 0)
		return 0;
	return engine_invalid(err, "this workflow uses node types flowcgi "
	    "cannot run yet: %s%s", buf, bad > 4 ? ", ..." : "");
}

/* ====== The run ====== */

static json_t *
finished_data(struct run *r, const char *status, int64_t end_ms)
{
	/* created_by: an end user's {id, user} (flowcgi's end user id is
	 * the user the request names), as _workflow_finish_to_stream_response */
	return json_pack("{s:s,s:s,s:s,s:O,s:s?,s:f,s:I,s:i,s:o,s:I,s:I,"
	    "s:i,s:[]}",
	    "id", r->id, "workflow_id", r->workflow_id, "status", status,
	    "outputs", r->outputs, "error", strcmp(status, "succeeded") == 0 ||
	    strcmp(status, "partial-succeeded") == 0 ? NULL : r->error,
	    "elapsed_time", (double)(end_ms - r->started_ms) / 1000.0,
	    "total_tokens", (json_int_t)atomic_load(&r->total_tokens),
	    "total_steps", atomic_load(&r->steps), "created_by",
	    r->opts->user != NULL ? json_pack("{s:s,s:s}", "id", r->opts->user,
	    "user", r->opts->user) : json_null(), "created_at", (json_int_t)(r->started_ms / 1000),
	    "finished_at", (json_int_t)(end_ms / 1000),
	    "exceptions_count", r->exceptions, "files");
}

/*
 * Dify's usage object of the run: the tokens of every model answer it
 * got, prices "0" (flowcgi knows no prices), latency in seconds.
 */
static json_t *
run_usage(struct run *r, int64_t end_ms)
{
	return json_pack("{s:I,s:s,s:s,s:s,s:I,s:s,s:s,s:s,s:I,s:s,s:s,"
	    "s:f}", "prompt_tokens", (json_int_t)atomic_load(
	    &r->prompt_tokens), "prompt_unit_price", "0", "prompt_price_unit",
	    "0", "prompt_price", "0", "completion_tokens", (json_int_t)
	    atomic_load(&r->completion_tokens), "completion_unit_price", "0",
	    "completion_price_unit", "0", "completion_price", "0",
	    "total_tokens", (json_int_t)atomic_load(&r->total_tokens),
	    "total_price", "0", "currency", "USD", "latency", (double)(end_ms -
	    r->started_ms) / 1000.0);
}

/*
 * Dify's message metadata (MessageEndStreamResponse.metadata, the
 * blocking answer's): usage, retriever_resources (the citations the
 * run's LLM answers drew on, when the app shows them) and, for an answer
 * an annotation gave, annotation_reply {id, account {id, name}} (flowcgi
 * has no accounts: Dify's "Dify user" for one it cannot find). New
 * reference, or NULL.
 */
static json_t *
run_metadata(struct run *r, json_t *usage)
{
	json_t *m;

	/* TaskStateMetadata: annotation_reply is null unless one answered */
	if ((m = json_pack("{s:O,s:o,s:n}", "usage", usage,
	    "retriever_resources", r->resources != NULL ?
	    json_incref(r->resources) : json_array(), "annotation_reply")) ==
	    NULL)
		return NULL;
	if (r->annotation != NULL && json_object_set_new(m, "annotation_reply",
	    json_pack("{s:O,s:{s:s,s:s}}", "id", json_object_get(r->annotation,
	    "id"), "account", "id", "", "name", "Dify user")) != 0) {
		json_decref(m);
		return NULL;
	}
	return m;
}

/* struct tool_run's calls for a run. */
static struct mcp_pool *
tool_run_mcp(void *arg)
{
	return run_mcp(arg);
}

static int
tool_run_stopped(void *arg)
{
	struct run *r = arg;

	return atomic_load(&r->stopping) || run_stop_requested(r);
}

int
engine_run(struct engine *e, const struct run_opts *o, char *err,
    json_t **out)
{
	struct run		 r;
	struct run_write	 w = { .e = e };
	json_t			*app = NULL, *wf, *inputs = NULL, *data = NULL;
	json_t			*sys = NULL, *conv = NULL, *cvars;
	json_t			*files = NULL, *usage = NULL;
	json_t			*legacy = NULL, *rv, *meta = NULL;
	const char		*status = NULL, *mode;
	long			 start;
	int64_t			 end_ms;
	int			 rc, had_conv, had_msg, live = 0, sealed;
	int			 autoname = 0;

	memset(&r, 0, sizeof(r));
	pthread_mutex_init(&r.mu, NULL);
	pthread_mutex_init(&r.sb_mu, NULL);
	r.e = e;
	r.opts = o;
	/* what a tool sees of this run (ids filled once known) */
	r.tool_run.parent = o->parent != NULL ? &o->parent->tool_run : NULL;
	r.tool_run.depth = o->parent != NULL ? o->parent->tool_run.depth + 1 :
	    0;
	r.tool_run.id = r.id;
	r.tool_run.app_id = r.app_id;
	r.tool_run.user = o->user;
	r.tool_run.invoke_from = o->invoke_from;
	r.tool_run.request_id = o->request_id;
	r.tool_run.run = &r;
	r.tool_run.mcp = tool_run_mcp;
	r.tool_run.stopped = tool_run_stopped;
	r.lim.max_steps = e->conf->workflow_max_steps;
	r.lim.max_seconds = e->conf->workflow_max_time;
	r.lim.max_parallel = e->conf->workflow_max_parallel;
	r.lim.max_loop = e->conf->workflow_max_loop;
	r.lim.max_threads = e->conf->workflow_max_threads;
	/* the console's test runs run the draft; the others what the app
	 * published last (or its draft, never published) */
	if ((rc = o->workflow_id != NULL ? app_cache_get_version(e, o->app_id,
	    o->workflow_id, &app, &sealed) : app_cache_get(e, o->app_id,
	    o->invoke_from != NULL && strcmp(o->invoke_from, "debugger") == 0,
	    &app, &sealed)) != 0) {
		if (rc == ENGINE_ENOTFOUND && o->workflow_id != NULL)
			snprintf(err, ENGINE_ERRMAX, "Workflow not found with "
			    "id: %.40s", o->workflow_id);
		goto out;
	}
	if (sealed) {
		/* opening its secrets below changes it: this run's own copy */
		json_t *own = json_deep_copy(app);

		json_decref(app);
		if ((app = own) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	mode = var_str(app, "mode");
	wf = json_object_get(json_object_get(app, "dsl"), "workflow");
	if (!json_is_object(wf)) {
		/* chat, agent-chat, completion: their model config as a graph */
		if ((legacy = legacy_workflow(json_object_get(app, "dsl"),
		    mode)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if (o->model_params != NULL &&
		    (rc = legacy_model_params(legacy, o->model_params)) != 0)
			goto out;
		wf = legacy;
		r.legacy = mode;
	}
	r.sandboxed = json_is_true(json_object_get(json_object_get(
	    json_object_get(wf, "features"), "sandbox"), "enabled"));
	/* Dify's show_retrieve_source: a chatflow's features, a chat app's
	 * model_config */
	r.show_sources = json_is_true(json_object_get(json_object_get(
	    json_is_object(json_object_get(json_object_get(app, "dsl"),
	    "workflow")) ? json_object_get(wf, "features") : json_object_get(
	    json_object_get(app, "dsl"), "model_config"), "retriever_resource"),
	    "enabled"));
	/* Dify keeps a draft test run's workspace per console user until
	 * it is reset; the service API's stays per conversation */
	if (r.sandboxed && o->invoke_from != NULL && strcmp(o->invoke_from,
	    "debugger") == 0 && o->user != NULL && *o->user != '\0')
		r.draft_user = o->user;
	/* The stored draft's secrets, in the clear for this run only. */
	if ((r.secrets = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = dsl_secrets(e, wf, DSL_SECRET_OPEN, r.secrets, err)) != 0)
		goto out;
	/* a shared app (no secrets to open) shares its graph too */
	if ((sealed || r.legacy != NULL || (r.g = app_cache_graph(e, app)) ==
	    NULL) && (rc = graph_build(wf, err, &r.g)) != 0)
		goto out;
	if ((rc = check_supported(r.g, err)) != 0)
		goto out;
	/*
	 * A console test run of a draft that cannot run is refused before
	 * the run begins, as publishing refuses it: the editor gets a 4xx at
	 * once. A published version (one published before drafts were
	 * checked, or imported as it was) still makes a failed run that
	 * names the problem, recorded with the app's runs (the executor).
	 */
	if (o->invoke_from != NULL && strcmp(o->invoke_from, "debugger") == 0 &&
	    (rc = graph_refuse(r.g, err)) != 0)
		goto out;
	if ((start = graph_root(r.g, NULL)) < 0 ||
	    strcmp(r.g->nodes[start].type, "start") != 0) {
		rc = engine_invalid(err, "the workflow has no start node");
		goto out;
	}
	if (strcmp(mode, "advanced-chat") == 0 || r.legacy != NULL) {
		r.chat = 1;
		if (o->query == NULL && strcmp(mode, "completion") != 0) {
			rc = engine_invalid(err, "query is required");
			goto out;
		}
		/* Dify looks the conversation up before it reads the inputs */
		if (o->conversation_id != NULL) {
			if ((rc = conversation_load(e, o->app_id, o->user,
			    o->conversation_id, &conv)) != 0) {
				if (rc == ENGINE_ENOTFOUND)
					snprintf(err, ENGINE_ERRMAX,
					    "Conversation Not Exists.");
				goto out;
			}
			snprintf(r.conversation_id, sizeof(r.conversation_id),
			    "%s", o->conversation_id);
		} else
			engine_uuid(r.conversation_id);
		engine_uuid(r.message_id);
	}
	/* A conversation keeps the inputs of its first message, as in Dify:
	 * those of a later one are not read. */
	if (json_is_object(json_object_get(conv, "inputs")))
		inputs = json_incref(json_object_get(conv, "inputs"));
	else if ((rc = start_inputs(e, o->app_id, &r.g->nodes[start],
	    o->inputs, err, &inputs)) != 0)
		goto out;
	if ((rc = sys_files(e, o->app_id, o->files, err, &files)) != 0)
		goto out;
	if ((r.pool = pool_new(NULL)) == NULL || (r.node_runs = json_array())
	    == NULL || (r.outputs = json_object()) == NULL ||
	    (r.streamed = json_object()) == NULL ||
	    (r.history = json_array()) == NULL ||
	    (r.skills = json_array()) == NULL ||
	    (r.skill_tools = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	engine_uuid(r.id);
	memcpy(r.task_id, r.id, sizeof(r.id));	/* stop by either id */
	snprintf(r.app_id, sizeof(r.app_id), "%s", o->app_id);
	/* the version that runs: Dify's workflow_id and version */
	rv = json_object_get(app, "run_version");
	snprintf(r.workflow_id, sizeof(r.workflow_id), "%s", var_str(rv,
	    "id") ? var_str(rv, "id") : var_str(json_object_get(app,
	    "workflow"), "id") ? var_str(json_object_get(app, "workflow"),
	    "id") : "");
	r.started_ms = run_now_ms();
	sys = json_pack("{s:s,s:o,s:s,s:s,s:s,s:s,s:I,s:s?,s:I}",
	    "query", o->query ? o->query : "", "files", json_incref(files),
	    "user_id",
	    o->user ? o->user :
	    "", "app_id", r.app_id, "workflow_id", r.workflow_id,
	    "workflow_run_id", r.id, "timestamp",
	    (json_int_t)(r.started_ms / 1000), "conversation_id",
	    r.chat ? r.conversation_id : NULL, "dialogue_count",
	    json_integer_value(json_object_get(conv, "dialogue_count")) +
	    (dialogue_counts_turn(json_object_get(app, "dsl")) ? 1 : 0));
	if (sys == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	/* A conversation's variables carry over from its last message;
	 * the start node's outputs are the inputs, plus sys.* copies. */
	cvars = json_object_get(conv, "variables");
	if (pool_set_all(r.pool, "sys", sys) != 0 ||
	    pool_env(r.pool, wf) != 0 || (cvars != NULL &&
	    pool_set_all(r.pool, "conversation", cvars) != 0) ||
	    pool_set_all(r.pool, r.g->nodes[start].id, inputs) != 0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((conv != NULL || (r.chat && o->parent_message_id != NULL)) &&
	    (rc = history_load(e, r.app_id, r.conversation_id,
	    o->parent_message_id, err, &r.history)) != 0)
		goto out;
	r.start_rec = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:O,s:s,s:I,s:b,"
	    "s:s?,s:s}",
	    "id", r.id, "task_id", r.task_id, "app_id", r.app_id,
	    "workflow_id", r.workflow_id, "version", var_str(rv, "version") ?
	    var_str(rv, "version") : "draft", "mode", mode, "inputs", inputs,
	    "status", "running", "created_at",
	    (json_int_t)(r.started_ms / 1000), "stop_requested", 0,
	    "created_by_end_user", o->user, "invoke_from", o->invoke_from ?
	    o->invoke_from : "service-api");
	/* a workflow tool's run names the run that called it */
	if (r.start_rec != NULL && o->parent != NULL &&
	    json_object_set_new(r.start_rec, "parent_run_id",
	    json_string(o->parent->id)) != 0) {
		json_decref(r.start_rec);
		r.start_rec = NULL;
	}
	if (r.start_rec == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	run_observe_start(&r, app, mode);
	if ((rc = engine_from_store(live_add(&r))) != 0)
		goto out;
	live = 1;
	if (o->on_start != NULL)
		o->on_start(o->arg, r.task_id, r.id);
	/*
	 * Dify's annotation reply (chat, agent-chat and chatflow apps; the
	 * app runners' query_app_annotations_to_reply / handle_annotation_
	 * reply): a query near enough an annotation's question is answered
	 * with its answer, streamed as one message, and nothing runs. The
	 * annotations are read only for an app whose record says the reply
	 * is on (annotations.c), not on every turn.
	 */
	if (r.chat && strcmp(mode, "completion") != 0 &&
	    json_is_true(json_object_get(app, "annotation_reply")) &&
	    (rc = annotation_match(e, r.app_id, o->query, o->invoke_from,
	    r.message_id, &r.annotation)) != 0)
		goto out;
	if (r.annotation != NULL) {
		const char *ans = var_str(r.annotation, "content");

		if ((r.answer = strdup(ans != NULL ? ans : "")) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		r.answer_len = strlen(r.answer);
		/* an agent app's agent_message has no from_variable_selector;
		 * the others' is null (the queue's text chunk names none) */
		run_emit_top(&r, "message", r.legacy != NULL && strcmp(r.legacy,
		    "agent-chat") == 0 ? json_pack("{s:s}", "answer", r.answer)
		    : json_pack("{s:s,s:n}", "answer", r.answer,
		    "from_variable_selector"));
		rc = 0;
	} else {
		if (o->on_event != NULL)  /* a blocking run builds no events */
			run_emit(&r, "workflow_started", json_pack("{s:s,s:s,"
			    "s:O,s:I,s:s}", "id", r.id, "workflow_id",
			    r.workflow_id, "inputs", inputs, "created_at",
			    (json_int_t)(r.started_ms / 1000), "reason",
			    "initial"));
		rc = run_scope(&r, NULL, r.pool, NULL, NULL, r.error);
	}
	if (rc == 0)
		status = r.exceptions > 0 ? "partial-succeeded" : "succeeded";
	else if (rc == ENGINE_ESTOPPED) {
		status = "stopped";
		if (r.error[0] == '\0' || strcmp(r.error, "stopped") == 0)
			snprintf(r.error, sizeof(r.error), "the run was "
			    "stopped");
	} else {
		status = "failed";
		r.failed = 1;
	}
	rc = 0;
	{
		char hex[STORE_HASH_HEX];

		/* the sandbox goes now, whatever happened */
		run_sandbox_end(&r, hex);
		if (hex[0] != '\0' && r.draft_user != NULL) {
			w.draft_user = r.draft_user;
			w.draft_ws = r.workspace_tar;
			w.draft_ws_len = r.workspace_len;
		} else if (hex[0] != '\0') {
			w.ws = r.workspace_tar;
			w.ws_len = r.workspace_len;
		}
	}
	end_ms = run_now_ms();
	data = finished_data(&r, status, end_ms);
	if (r.chat) {
		usage = run_usage(&r, end_ms);
		/* a stopped chat ends as Dify's does: its message as far as
		 * it got, then message_end */
		if ((meta = run_metadata(&r, usage)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		cvars = pool_get_node(r.pool, "conversation");
		/* a new conversation's name: the model's, made once the
		 * turn is stored (below), the query until then; Dify's "New
		 * conversation" when the request asks for none */
		if (conv == NULL && strcmp(mode, "completion") != 0 &&
		    e->conf->conversation_auto_name)
			autoname = o->no_auto_name ? 0 : 1;
		w.conv = json_pack("{s:s,s:s,s:s,s:O,s:o,s:I,s:I,s:I,s:s?}",
		    "id", r.conversation_id, "app_id", r.app_id, "name",
		    conv && json_string_value(json_object_get(conv, "name")) ?
		    json_string_value(json_object_get(conv, "name")) :
		    conv == NULL && strcmp(mode, "completion") != 0 &&
		    e->conf->conversation_auto_name && o->no_auto_name ?
		    "New conversation" : o->query ? o->query : "", "inputs",
		    conv &&
		    json_object_get(conv, "inputs") ? json_object_get(conv,
		    "inputs") : inputs,
		    "variables", cvars, "dialogue_count", (json_int_t)
		    (json_integer_value(json_object_get(conv,
		    "dialogue_count")) + 1), "created_at", conv ?
		    json_integer_value(json_object_get(conv, "created_at")) :
		    (json_int_t)(r.started_ms / 1000), "updated_at",
		    (json_int_t)(end_ms / 1000), "from_end_user_id", o->user);
		w.msg = json_pack("{s:s,s:s,s:s?,s:s,s:s,s:s,s:O,s:s,s:s,s:s?,"
		    "s:I,s:s?,s:O}",
		    "id", r.message_id, "conversation_id", r.conversation_id,
		    "parent_message_id", o->parent_message_id == NULL ?
		    ENGINE_UUID_NIL : *o->parent_message_id == '\0' ? NULL :
		    o->parent_message_id,
		    "app_id", r.app_id, "query", o->query ? o->query : "",
		    "answer",
		    r.answer ? r.answer : "", "inputs", inputs,
		    "workflow_run_id", r.id, "status", status, "error",
		    strcmp(status, "succeeded") ? r.error : NULL,
		    "created_at", (json_int_t)(r.started_ms / 1000),
		    "from_end_user_id", o->user, "usage", usage);
		/* the files tools gave the answer, for GET /v1/messages */
		if (w.msg != NULL && r.message_files != NULL &&
		    json_object_set(w.msg, "message_files", r.message_files)
		    != 0) {
			json_decref(w.msg);
			w.msg = NULL;
		}
		/* the answer's citations, for GET /v1/messages */
		if (w.msg != NULL && r.resources != NULL &&
		    json_object_set(w.msg, "retriever_resources", r.resources)
		    != 0) {
			json_decref(w.msg);
			w.msg = NULL;
		}
		/* an agent app's tool calls, for GET /v1/messages */
		if (w.msg != NULL && r.thought_log != NULL &&
		    json_object_set(w.msg, "agent_thoughts", r.thought_log)
		    != 0) {
			json_decref(w.msg);
			w.msg = NULL;
		}
	}
	/* The final record and every node execution, in one transaction. */
	if ((w.rec = json_copy(r.start_rec)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if (json_object_update(w.rec, data) != 0 ||
	    (atomic_load(&r.stop_flag) && json_object_set_new(w.rec,
	    "stop_requested", json_true()) != 0) ||
	    json_object_set_new(w.rec, "status", json_string(status)) != 0 ||
	    json_object_set_new(w.rec, "error", r.error[0] && strcmp(status,
	    "succeeded") ? json_string(r.error) : json_null()) != 0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	w.nodes = r.node_runs;	/* scrubbed as each node finished */
	/* What is stored holds no secret of the DSL, whatever the answer. */
	had_conv = w.conv != NULL;
	had_msg = w.msg != NULL;
	w.rec = secrets_scrub(r.secrets, w.rec);
	w.conv = secrets_scrub(r.secrets, w.conv);
	w.msg = secrets_scrub(r.secrets, w.msg);
	if (w.rec == NULL || (had_conv && w.conv == NULL) ||
	    (had_msg && w.msg == NULL)) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((w.rec_text = store_json_text(w.rec, &w.rec_len)) == NULL ||
	    (w.nodes_text = store_json_text(w.nodes, &w.nodes_len)) == NULL ||
	    (w.msg != NULL && (w.msg_text = store_json_text(w.msg,
	    &w.msg_len)) == NULL)) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	w.stored = live_final(&r);
	rc = store_write(e->store, run_write_fn, &w);
	if (rc == STORE_ENEEDED)
		rc = 0;		/* the app is gone: nothing stored */
	if ((rc = engine_from_store(rc)) != 0)
		goto out;
	/*
	 * The closing events go out once the run is stored, as Dify's task
	 * pipeline saves the message before it yields message_end: a client
	 * that has message_end (or workflow_finished) and asks for the
	 * message or the run finds it whole. A write that fails ends the
	 * stream with the caller's error event instead.
	 */
	if (o->on_event != NULL && r.annotation == NULL)
		run_emit(&r, "workflow_finished", json_deep_copy(data));
	/* MessageEndStreamResponse.files: a chatflow's recorded files
	 * ([]), an app's message files or null */
	if (r.chat && strcmp(status, "failed") != 0)
		run_emit_top(&r, "message_end", json_pack("{s:s,s:O,s:o}", "id",
		    r.message_id, "metadata", meta, "files", r.legacy == NULL ?
		    json_array() : r.message_files != NULL ?
		    json_incref(r.message_files) : json_null()));
	else if (r.chat)
		run_emit_top(&r, "error", json_pack("{s:i,s:s,s:s}", "status",
		    500, "code", "workflow_failed", "message", r.error));
	/*
	 * Dify names a new conversation with a model once its first turn is
	 * in (MessageCycleManager.generate_conversation_name, joined before
	 * the answer ends): so does this, with the app's model, before the
	 * run returns. A model that fails leaves the query as the name.
	 */
	if (autoname) {
		json_t *named = NULL;

		if (engine_conversation_autoname(e, r.app_id, o->user,
		    r.conversation_id, &named) != 0)
			log_warn("run %s: the conversation was not named", r.id);
		json_decref(named);
	}
	if (o->status != NULL)
		snprintf(o->status, 32, "%s", status);
	if (o->error != NULL)
		snprintf(o->error, ENGINE_ERRMAX, "%s", strcmp(status,
		    "succeeded") != 0 && strcmp(status, "partial-succeeded") !=
		    0 ? r.error : "");
	/* Dify's ChatbotAppBlockingResponse.Data as its converter gives it
	 * (convert_blocking_full_response): no run id, status or error; a
	 * failed run is the caller's error (run_failed) */
	if (r.chat)
		*out = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:O,s:I}",
		    "event", "message", "task_id", r.task_id, "id",
		    r.message_id, "message_id", r.message_id,
		    "conversation_id", r.conversation_id, "mode", mode,
		    "answer", r.answer ? r.answer : "", "metadata", meta,
		    "created_at", (json_int_t)(r.started_ms / 1000));
	else {
		/* Dify's WorkflowAppBlockingResponse.Data: created_by,
		 * exceptions_count and files are the stream's only
		 * (WorkflowFinishedStreamResponse) */
		json_object_del(data, "created_by");
		json_object_del(data, "exceptions_count");
		json_object_del(data, "files");
		*out = json_pack("{s:s,s:s,s:O}", "task_id", r.task_id,
		    "workflow_run_id", r.id, "data", data);
	}
	if (*out == NULL)
		rc = ENGINE_ENOMEM;
out:
	run_observe_end(&r, status, w.rec);
	if (live)
		live_remove(&r);
	json_decref(usage);
	json_decref(meta);
	json_decref(r.annotation);
	json_decref(r.resources);
	json_decref(r.message_files);
	json_decref(r.start_rec);
	json_decref(data);
	json_decref(w.rec);
	json_decref(w.conv);
	json_decref(w.msg);
	free(w.rec_text);
	free(w.nodes_text);
	free(w.msg_text);
	json_decref(conv);
	json_decref(legacy);
	json_decref(sys);
	json_decref(inputs);
	json_decref(files);
	json_decref(app);
	json_decref(r.node_runs);
	json_decref(r.secrets);
	json_decref(r.outputs);
	json_decref(r.streamed);
	json_decref(r.history);
	json_decref(r.thought_log);
	json_decref(r.skills);
	json_decref(r.skill_tools);
	if (r.sb != NULL) {
		char hex[STORE_HASH_HEX];

		run_sandbox_end(&r, hex);
	}
	free(r.workspace_tar);
	free(r.sb_note);
	pthread_mutex_destroy(&r.sb_mu);
	free(r.answer);
	pool_free(r.pool);
	graph_free(r.g);
	pthread_mutex_destroy(&r.mu);
	return rc;
}

/* ====== Stop and records ====== */

struct stop_req {
	const char	*app_id;	/* NULL: any app (the CLI, tests) */
	const char	*user;		/* NULL: any end user */
	const char	*task_id;
};

static int
stop_fn(struct store_txn *t, void *arg)
{
	struct stop_req	*s = arg;
	json_t		*rec = NULL;
	int		 rc;

	if ((rc = store_get_json(t, STORE_DB_RUNS, s->task_id, &rec)) != 0)
		return rc;
	if (!record_owned(rec, s->app_id, "created_by_end_user", s->user)) {
		rc = STORE_ENOTFOUND;
		goto out;
	}
	if (strcmp(var_str(rec, "status"), "running") == 0)
		rc = json_object_set_new(rec, "stop_requested", json_true()) ?
		    STORE_ENOMEM : store_put_json(t, STORE_DB_RUNS,
		    s->task_id, rec, 0);
out:
	json_decref(rec);
	return rc;
}

/*
 * A run of another process is stored run.publish_after ms after its start
 * (live.c), so a stop that comes sooner to a host that does not run it
 * finds no record yet. The client has the id from the run's first event:
 * if it is a run's, its record is stored within publish_after. Until then
 * (and STOP_FIND_SLACK_MS more for the publisher's write) the stop looks
 * again every STOP_FIND_EVERY_MS; after that it is 404 as any unknown id.
 * Costs an unknown id that long (the caller holds the app's key); a record
 * of another app or end user is 404 at once. The looks are reads: a write
 * that reads a key nobody stored takes a lock (postgres: a predicate lock
 * on the newest runs) that would make the runs being stored retry.
 */
#define STOP_FIND_EVERY_MS	50
#define STOP_FIND_SLACK_MS	150

/* 0 when run task_id has a record, whoever's, or STORE_ENOTFOUND. */
static int
stop_seen(struct engine *e, const char *task_id)
{
	struct store_txn	*t = NULL;
	const void		*v;
	size_t			 vlen;
	int			 rc;

	if ((rc = store_read_begin(e->store, &t)) != 0)
		return rc;
	rc = store_get(t, STORE_DB_RUNS, task_id, strlen(task_id), &v, &vlen);
	store_read_end(t);
	return rc;
}

int
engine_run_stop(struct engine *e, const char *app_id, const char *user,
    const char *task_id)
{
	struct stop_req	s = { app_id, user, task_id };
	int64_t		until;
	int		rc;

	if (engine_uuid_check(task_id) != 0)
		return ENGINE_ENOTFOUND;
	until = live_now_ms() + e->conf->run_publish_after +
	    STOP_FIND_SLACK_MS;
	for (;;) {
		if (live_stop(e, app_id, user, task_id) == 0)
			return 0;	/* a run of this process */
		if ((rc = stop_seen(e, task_id)) == 0)
			return engine_from_store(store_write(e->store,
			    stop_fn, &s));
		if (rc != STORE_ENOTFOUND || e->conf->run_publish_after == 0 ||
		    live_now_ms() >= until)
			return engine_from_store(rc);
		usleep(STOP_FIND_EVERY_MS * 1000);
	}
}

int
engine_run_get(struct engine *e, const char *run_id, json_t **out)
{
	struct store_txn	*t = NULL;
	int			 rc;

	if (engine_uuid_check(run_id) != 0)
		return ENGINE_ENOTFOUND;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = store_get_json(t, STORE_DB_RUNS, run_id, out);
	store_read_end(t);
	/* not stored yet: a run of this process still in its first moments */
	if (rc == STORE_ENOTFOUND && (*out = live_get(e, run_id)) != NULL)
		rc = 0;
	return engine_from_store(rc);
}

/* 1 when run record rec is one engine_run_logs lists for q. */
static int
log_match(const json_t *rec, const struct run_log_query *q)
{
	json_int_t	 at = json_integer_value(json_object_get(rec,
			    "created_at"));
	const char	*user = var_str(rec, "created_by_end_user");
	char		*text;
	int		 hit;

	/* Dify logs the runs of the API and the web app, not debug runs */
	if (!record_field_is(rec, "invoke_from", "service-api") ||
	    !record_field_is(rec, "mode", "workflow") ||
	    (q->status != NULL && !record_field_is(rec, "status", q->status)) ||
	    (q->after > 0 && at < q->after) ||
	    (q->before > 0 && at > q->before) ||
	    (q->user != NULL && (user == NULL || strcmp(user, q->user) != 0)))
		return 0;
	if (q->keyword == NULL || *q->keyword == '\0')
		return 1;
	if (user != NULL && strstr(user, q->keyword) != NULL)
		return 1;
	hit = 0;
	if ((text = json_dumps(json_object_get(rec, "inputs"),
	    JSON_ENCODE_ANY)) != NULL) {
		hit = strstr(text, q->keyword) != NULL;
		free(text);
	}
	if (!hit && (text = json_dumps(json_object_get(rec, "outputs"),
	    JSON_ENCODE_ANY)) != NULL) {
		hit = strstr(text, q->keyword) != NULL;
		free(text);
	}
	return hit;
}

/* One entry of Dify's workflow app log for run record rec. */
static json_t *
log_entry(const json_t *rec)
{
	json_t *nul = json_null();

#define F(k) (json_object_get(rec, (k)) ? json_object_get(rec, (k)) : nul)
	return json_pack("{s:O,s:{s:O,s:s,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,"
	    "s:O},s:s,s:s,s:n,s:{s:O,s:s,s:b,s:O},s:O}", "id", F("id"),
	    "workflow_run", "id", F("id"), "version", var_str(rec,
	    "version") ? var_str(rec, "version") : var_str(rec,
	    "workflow_id") && *var_str(rec, "workflow_id") ? "published" :
	    "draft", "status", F("status"), "triggered_from", F("invoke_from"),
	    "error", F("error"), "elapsed_time", F("elapsed_time"),
	    "total_tokens", F("total_tokens"), "total_steps", F("total_steps"),
	    "created_at", F("created_at"), "finished_at", F("finished_at"),
	    "exceptions_count", F("exceptions_count"), "created_from",
	    "service-api", "created_by_role", "end_user",
	    "created_by_account", "created_by_end_user", "id",
	    F("created_by_end_user"), "type", "service_api", "is_anonymous", 0,
	    "session_id", F("created_by_end_user"), "created_at",
	    F("created_at"));
#undef F
}

/*
 * A page of an app's runs, newest first: with q NULL every run as stored
 * (only the page's records are read), else the runs Dify's workflow log
 * shows for q, as log entries (every record is read to filter).
 */
static int
runs_page(struct engine *e, const char *app_id, int page, int limit,
    const struct run_log_query *q, json_t **out)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*data = NULL, *rec;
	char			 prefix[64], id[37], hi[64];
	size_t			 plen;
	int64_t			 total = 0, first, last;
	int			 rc, in;

	if (engine_uuid_check(app_id) != 0)
		return ENGINE_ENOTFOUND;
	first = (int64_t)(page - 1) * limit;
	last = first + limit;
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s/", app_id);
	snprintf(hi, sizeof(hi), "%s0", app_id);	/* '0' follows '/' */
	if ((data = json_array()) == NULL)
		return ENGINE_ENOMEM;
	if ((rc = store_read_begin(e->store, &t)) != 0 ||
	    (rc = store_get_json(t, STORE_DB_APPS, app_id, &rec)) != 0)
		goto out;
	json_decref(rec);
	if ((rc = store_cursor_open(t, STORE_DB_RUNS_BY_APP, &c)) != 0)
		goto out;
	/* Newest first: start past the app's last key and walk back. */
	rc = store_cursor_seek(c, hi, strlen(hi), &kv);
	rc = rc == 0 ? store_cursor_prev(c, &kv) : store_cursor_last(c, &kv);
	for (; rc == 0; rc = store_cursor_prev(c, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0)
			break;
		in = total >= first && total < last;
		if (kv.vlen != 36 || (q == NULL && !in)) {
			total += q == NULL;
			continue;
		}
		memcpy(id, kv.v, 36);
		id[36] = '\0';
		if (store_get_json(t, STORE_DB_RUNS, id, &rec) != 0) {
			total += q == NULL;
			continue;
		}
		if (q == NULL) {
			total++;
			if (json_array_append_new(data, rec) != 0) {
				rc = STORE_ENOMEM;
				break;
			}
			continue;
		}
		if (log_match(rec, q)) {
			if (in && json_array_append_new(data,
			    log_entry(rec)) != 0) {
				json_decref(rec);
				rc = STORE_ENOMEM;
				break;
			}
			total++;
		}
		json_decref(rec);
	}
	rc = rc == STORE_ENOTFOUND ? 0 : rc;
out:
	store_cursor_close(c);
	store_read_end(t);
	if (rc != 0) {
		json_decref(data);
		return engine_from_store(rc);
	}
	*out = json_pack("{s:i,s:i,s:I,s:b,s:o}", "page", page, "limit",
	    limit, "total", (json_int_t)total, "has_more", total > last,
	    "data", data);
	return *out != NULL ? 0 : ENGINE_ENOMEM;
}

int
engine_run_list(struct engine *e, const char *app_id, int page, int limit,
    json_t **out)
{
	return runs_page(e, app_id, page, limit, NULL, out);
}

int
engine_run_logs(struct engine *e, const char *app_id,
    const struct run_log_query *q, json_t **out)
{
	return runs_page(e, app_id, q->page, q->limit, q, out);
}

int
engine_run_nodes(struct engine *e, const char *run_id, json_t **out)
{
	struct store_txn	*t = NULL;
	json_t			*all = NULL, *data = NULL, *rec;
	const char		*k;
	char			 prefix[64];
	size_t			 i;
	int			 rc;

	if (engine_uuid_check(run_id) != 0)
		return ENGINE_ENOTFOUND;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = store_get_json(t, STORE_DB_NODE_RUNS, run_id, &data)) ==
	    STORE_ENOTFOUND) {
		/* before schema 3: one record per execution */
		snprintf(prefix, sizeof(prefix), "%s/", run_id);
		rc = records_collect(t, STORE_DB_NODE_RUNS, prefix, NULL, 0,
		    &all);
	}
	store_read_end(t);
	if (rc != 0)
		return engine_from_store(rc);
	rc = ENGINE_ENOMEM;
	if (data == NULL && (data = json_array()) == NULL)
		goto out;
	json_object_foreach(all, k, rec)
		if (!json_is_null(rec) && json_array_append(data, rec) != 0)
			goto out;
	json_array_foreach(data, i, rec)
		if (json_is_array(rec) &&
		    json_array_set_new(data, i, trace_unpack(rec)) != 0)
			goto out;
	if ((*out = json_pack("{s:O}", "data", data)) != NULL)
		rc = 0;
out:
	json_decref(all);
	json_decref(data);
	return rc;
}
