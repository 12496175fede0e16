/*
 * executor.c — runs a workflow graph by Dify's rules.
 *
 * Edges are UNKNOWN, TAKEN or SKIPPED. A node is ready once none of its
 * incoming edges is UNKNOWN and at least one is TAKEN; when all are
 * SKIPPED it is skipped too and the skip propagates. A node that sets a
 * handle (if-else, question-classifier, or any node with the fail-branch
 * strategy) takes only the edges leaving by that handle; every other node
 * takes all of them. Ready nodes run in the calling thread when they are
 * the only work; parallel branches get threads, at most
 * run_limits.max_parallel at a time, and join by the same rule.
 *
 * A graph with problems (graph.c: a node id used twice, an edge to a
 * missing node, a self-loop or a cycle) would stop short with nodes that
 * never become ready and no error; the top scope refuses it instead, so
 * the run fails at once with the problems named.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/run/run.h"

enum { E_UNKNOWN, E_TAKEN, E_SKIPPED };
enum { N_PENDING, N_READY, N_RUNNING, N_DONE, N_SKIPPED };

int64_t
run_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
run_usage_add(struct run *r, int64_t prompt, int64_t completion,
    int64_t total)
{
	if (total <= 0)
		total = prompt + completion;
	atomic_fetch_add(&r->prompt_tokens, prompt);
	atomic_fetch_add(&r->completion_tokens, completion);
	atomic_fetch_add(&r->total_tokens, total);
}

/* ====== Events ====== */

/*
 * Apps without a graph speak only Dify's chat events: nothing about their
 * nodes goes out (their agent sends its agent_thought events itself).
 */
static void
legacy_emit(struct run *r, const char *event, json_t *data)
{
	json_decref(data);
}

void
run_emit(struct run *r, const char *event, json_t *data)
{
	json_t *ev;

	if (r->opts->on_event == NULL) {
		json_decref(data);
		return;
	}
	if (r->legacy != NULL) {
		legacy_emit(r, event, data);
		return;
	}
	ev = json_pack("{s:s,s:s,s:s,s:o}", "event", event, "task_id",
	    r->task_id, "workflow_run_id", r->id, "data",
	    data ? data : json_object());
	if (ev == NULL) {
		atomic_store(&r->nomem, 1);
		return;
	}
	if (r->chat && (json_object_set_new(ev, "conversation_id",
	    json_string(r->conversation_id)) != 0 ||
	    json_object_set_new(ev, "message_id",
	    json_string(r->message_id)) != 0 ||
	    json_object_set_new(ev, "created_at",
	    json_integer(r->started_ms / 1000)) != 0)) {
		atomic_store(&r->nomem, 1);
		json_decref(ev);
		return;
	}
	pthread_mutex_lock(&r->mu);
	r->opts->on_event(r->opts->arg, ev);
	live_log_add(r, event, ev);
	pthread_mutex_unlock(&r->mu);
	json_decref(ev);
}

void
run_answer_add(struct run *r, const char *text, size_t len)
{
	char *na;

	pthread_mutex_lock(&r->mu);
	if ((na = realloc(r->answer, r->answer_len + len + 1)) != NULL) {
		memcpy(na + r->answer_len, text, len);
		r->answer_len += len;
		na[r->answer_len] = '\0';
		r->answer = na;
	}
	pthread_mutex_unlock(&r->mu);
}

void
run_stream_text(struct run *r, const char *node_id, const char *field,
    const char *text, size_t len)
{
	if (len == 0)
		return;
	run_answer_add(r, text, len);
	/* Dify's chat pipelines turn a chunk into a message event only; a
	 * chatflow's names where it came from (advanced_chat's
	 * generate_task_pipeline, MessageStreamResponse), a chat app's is
	 * null, an agent app's agent_message has none */
	if (r->chat && r->legacy != NULL && strcmp(r->legacy, "agent-chat")
	    == 0)
		run_emit_top(r, "message", json_pack("{s:s%}", "answer", text,
		    len));
	else if (r->chat && r->legacy != NULL)
		run_emit_top(r, "message", json_pack("{s:s%,s:n}", "answer",
		    text, len, "from_variable_selector"));
	else if (r->chat)
		run_emit_top(r, "message", json_pack("{s:s%,s:[s,s]}",
		    "answer", text, len, "from_variable_selector", node_id,
		    field));
	else
		run_emit(r, "text_chunk", json_pack("{s:s%,s:[s,s]}", "text",
		    text, len, "from_variable_selector", node_id, field));
}

int
run_message_file(struct run *r, const json_t *file, char *err, char id[37])
{
	const char	*mime = json_string_value(json_object_get(file,
			    "mime_type"));
	const char	*type = json_string_value(json_object_get(file, "type"));
	json_t		*up = NULL, *mf = NULL;
	char		*data = NULL, url[128];
	size_t		 len;
	int		 rc;

	id[0] = '\0';
	if (!r->chat || r->legacy == NULL)
		return 1;
	if ((rc = tool_file_bytes(r->e, file, "tool file", err, &data, &len))
	    != 0 || (rc = engine_upload_put(r->e, r->app_id, r->opts->user,
	    json_string_value(json_object_get(file, "filename")), mime, data,
	    len, err, &up)) != 0)
		goto out;
	snprintf(id, 37, "%s", json_string_value(json_object_get(up, "id")) ?
	    json_string_value(json_object_get(up, "id")) : "");
	snprintf(url, sizeof(url), "/v1/files/%s/preview", id);
	if (type == NULL)
		type = mime != NULL && strncmp(mime, "image/", 6) == 0 ?
		    "image" : "custom";
	/* Dify's MessageFileStreamResponse: id, type, belongs_to, url */
	run_emit_top(r, "message_file", json_pack("{s:s,s:s,s:s,s:s}", "id",
	    id, "type", type, "belongs_to", "assistant", "url", url));
	/* and fields/message_fields.py message_file_fields */
	rc = ENGINE_ENOMEM;
	if ((mf = json_pack("{s:s,s:O,s:s,s:s,s:O,s:I,s:s,s:s,s:s}", "id", id,
	    "filename", json_object_get(up, "name"), "type", type, "url", url,
	    "mime_type", json_object_get(up, "mime_type"), "size",
	    (json_int_t)len, "transfer_method", "tool_file", "belongs_to",
	    "assistant", "upload_file_id", id)) == NULL)
		goto out;
	pthread_mutex_lock(&r->mu);
	if (r->message_files == NULL)
		r->message_files = json_array();
	rc = r->message_files != NULL && json_array_append(r->message_files,
	    mf) == 0 ? 0 : ENGINE_ENOMEM;
	pthread_mutex_unlock(&r->mu);
out:
	json_decref(mf);
	json_decref(up);
	free(data);
	return rc;
}

void
run_resources_add(struct run *r, const json_t *items)
{
	const json_t	*it, *m;
	json_t		*src;
	size_t		 i;

	if (!r->show_sources || !json_is_array(items))
		return;
	pthread_mutex_lock(&r->mu);
	if (r->resources == NULL && (r->resources = json_array()) == NULL)
		goto oom;
	json_array_foreach(items, i, it) {
		m = json_object_get(it, "metadata");
		if (!record_field_is(m, "_source", "knowledge"))
			continue;
		/* the LLM node's _convert_to_original_retriever_resource */
#define F(k)	(json_object_get(m, k) ? json_incref(json_object_get(m, k)) : \
		    json_null())
		src = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,"
		    "s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "position", F("position"),
		    "dataset_id", F("dataset_id"), "dataset_name",
		    F("dataset_name"), "document_id", F("document_id"),
		    "document_name", F("document_name"), "data_source_type",
		    F("data_source_type"), "segment_id", F("segment_id"),
		    "retriever_from", F("retriever_from"), "score", F("score"),
		    "hit_count", F("segment_hit_count"), "word_count",
		    F("segment_word_count"), "segment_position",
		    F("segment_position"), "index_node_hash",
		    F("segment_index_node_hash"), "content", json_object_get(it,
		    "content") ? json_incref(json_object_get(it, "content")) :
		    json_null(), "page", F("page"), "doc_metadata",
		    F("doc_metadata"), "title", json_object_get(it, "title") ?
		    json_incref(json_object_get(it, "title")) : json_null(),
		    "files", json_object_get(it, "files") ? json_incref(
		    json_object_get(it, "files")) : json_null());
#undef F
		if (src == NULL || json_array_append_new(r->resources, src) != 0)
			goto oom;
	}
	pthread_mutex_unlock(&r->mu);
	return;
oom:
	pthread_mutex_unlock(&r->mu);
	log_warn("run %s: out of memory noting retriever_resources", r->id);
}

void
run_emit_top(struct run *r, const char *event, json_t *fields)
{
	json_t *ev;

	if (r->opts->on_event == NULL || fields == NULL) {
		json_decref(fields);
		return;
	}
	/* agent apps stream their answer as agent_message */
	if (r->legacy != NULL && strcmp(r->legacy, "agent-chat") == 0 &&
	    strcmp(event, "message") == 0)
		event = "agent_message";
	/* Dify's chat events have no workflow_run_id; their id is the
	 * message's unless the fields name another (an agent_thought's) */
	ev = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "event", event, "task_id",
	    r->task_id, "id", r->message_id, "conversation_id",
	    r->conversation_id, "message_id", r->message_id, "created_at",
	    (json_int_t)(r->started_ms / 1000));
	if (ev == NULL) {
		json_decref(fields);
		return;
	}
	json_object_update(ev, fields);
	json_decref(fields);
	pthread_mutex_lock(&r->mu);
	r->opts->on_event(r->opts->arg, ev);
	live_log_add(r, event, ev);
	pthread_mutex_unlock(&r->mu);
	json_decref(ev);
}

/* ====== One node ====== */

/* The default-value outputs of a node whose strategy is default-value. */
static json_t *
default_outputs(const struct gnode *n, const char *msg, const char *type)
{
	json_t		*out = json_object(), *d, *v, *parsed;
	const char	*k, *vt;
	size_t		 i;
	int		 bad = out == NULL;

	json_array_foreach(json_object_get(n->data, "default_value"), i, d) {
		k = json_string_value(json_object_get(d, "key"));
		v = json_object_get(d, "value");
		vt = json_string_value(json_object_get(d, "type"));
		if (k == NULL || v == NULL)
			continue;
		/* string values are JSON for the non-string types */
		if (json_is_string(v) && vt != NULL &&
		    strcmp(vt, "string") != 0 && (parsed = json_loads(
		    json_string_value(v), JSON_DECODE_ANY, NULL)) != NULL)
			bad |= json_object_set_new(out, k, parsed);
		else
			bad |= json_object_set(out, k, v);
	}
	bad |= json_object_set_new(out, "error_message", json_string(msg));
	bad |= json_object_set_new(out, "error_type", json_string(type));
	if (bad) {
		json_decref(out);
		return NULL;
	}
	return out;
}

static json_t *
node_event_base(struct run *r, const struct gnode *n, const char *exec_id,
    int index, const char *pred, const char *iter, const char *loop,
    int64_t created)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:i,s:s?,s:n,s:b,s:I,s:{},"
	    "s:s?,s:s?}",
	    "id", exec_id, "node_id", n->id, "node_type", n->type, "title",
	    n->title, "index", index, "predecessor_node_id", pred, "inputs",
	    "inputs_truncated", 0, "created_at", (json_int_t)(created / 1000),
	    "extras", "iteration_id", iter, "loop_id", loop);
}

/*
 * Runs node n once (with retries and its error strategy). Returns 0 with
 * *handle set (NULL: take every edge), -1 when the node failed the scope
 * (err says why), or -2 when a stop ended it (its model call, command or
 * code was cut short): the run is stopped, not failed, and no error
 * strategy applies.
 */
static int
exec_node(struct run *r, const struct gnode *n, struct pool *p,
    const char *pred, const char *iter, const char *loop,
    const char **handle, char *handle_buf, size_t hbsz, char *err)
{
	struct node_ctx	 c;
	struct node_obs	 ob;
	json_t		*ev = NULL, *retry, *rec, *outputs = NULL;
	const char	*strategy, *status = "succeeded";
	char		 exec_id[37];
	int64_t		 t0 = run_now_ms(), t1;
	int		 rc, index, tries = 0, max_retries = 0, interval = 0;
	int		 listen, stopped = 0;
	const struct tool_run *prev_run;

	*handle = NULL;
	engine_uuid(exec_id);
	index = atomic_fetch_add(&r->node_index, 1) + 1;
	if (atomic_fetch_add(&r->steps, 1) >= r->lim.max_steps) {
		engine_invalid(err, "the run took more than %d steps "
		    "(workflow.max_steps)", r->lim.max_steps);
		return -1;
	}
	node_observe_start(&ob, r, n, exec_id, index, iter, loop);
	/* events are made only for a listener (an app without a graph has
	 * none for nodes); the trace is kept in the compact form of run.c */
	listen = r->opts->on_event != NULL && r->legacy == NULL;
	if (listen) {
		ev = node_event_base(r, n, exec_id, index, pred, iter, loop,
		    t0);
		run_emit(r, "node_started", json_deep_copy(ev));
	}
	retry = json_object_get(n->data, "retry_config");
	if (json_is_true(json_object_get(retry, "retry_enabled"))) {
		max_retries = (int)json_integer_value(json_object_get(retry,
		    "max_retries"));
		interval = (int)json_integer_value(json_object_get(retry,
		    "retry_interval"));
		if (max_retries > 10)
			max_retries = 10;
		if (interval < 0 || interval > 5000)
			interval = interval < 0 ? 0 : 5000;
	}
	for (;;) {
		memset(&c, 0, sizeof(c));
		c.run = r;
		c.node = n;
		c.pool = p;
		c.iteration_id = iter;
		c.loop_id = loop;
		c.inputs = json_object();
		c.outputs = json_object();
		c.error_type = "NodeRunError";
		/* a tool the node calls sees the run (tool_run_current) */
		prev_run = tool_run_set(&r->tool_run);
		rc = n->nt->run(&c);
		tool_run_set(prev_run);
		/* a node cut short by a stop failed because of it */
		if (rc != 0 && (atomic_load(&r->stopping) ||
		    run_stop_requested(r))) {
			atomic_store(&r->stopping, 1);
			stopped = 1;
			break;
		}
		if (rc == 0 || tries >= max_retries || c.no_retry)
			break;
		tries++;
		if (listen) {
			json_t *rv = json_deep_copy(ev);

			if (rv == NULL || json_object_set_new(rv, "status",
			    json_string("retry")) != 0 ||
			    json_object_set_new(rv, "error",
			    json_string(c.err)) != 0 ||
			    json_object_set_new(rv, "retry_index",
			    json_integer(tries)) != 0) {
				atomic_store(&r->nomem, 1);
				json_decref(rv);
			} else
				run_emit(r, "node_retry", secrets_scrub(
				    r->secrets, rv));
		}
		json_decref(c.inputs);
		json_decref(c.outputs);
		json_decref(c.process_data);
		json_decref(c.metadata);
		if (interval > 0)
			usleep((useconds_t)interval * 1000);
	}
	strategy = node_str(n, "error_strategy");
	if (stopped)
		status = "stopped";
	else if (rc == 0) {
		outputs = json_incref(c.outputs);
		if (c.handle != NULL) {
			snprintf(handle_buf, hbsz, "%s", c.handle);
			*handle = handle_buf;
		} else if (strategy != NULL &&
		    strcmp(strategy, "fail-branch") == 0)
			*handle = "source";
	} else if (strategy != NULL && strcmp(strategy, "fail-branch") == 0) {
		status = "exception";
		outputs = json_pack("{s:s,s:s}", "error_message", c.err,
		    "error_type", c.error_type);
		*handle = "fail-branch";
	} else if (strategy != NULL && strcmp(strategy, "default-value") == 0) {
		status = "exception";
		outputs = default_outputs(n, c.err, c.error_type);
	} else
		status = "failed";
	if (outputs == NULL && status != NULL &&
	    strcmp(status, "exception") == 0)
		atomic_store(&r->nomem, 1);	/* its outputs are not whole */
	/* outputs the pool cannot hold would read as missing: a failure */
	if (outputs != NULL && pool_set_all(p, n->id, outputs) != 0) {
		snprintf(c.err, sizeof(c.err), "out of memory");
		status = "failed";
	}
	if (strcmp(status, "exception") == 0) {
		pthread_mutex_lock(&r->mu);
		r->exceptions++;
		pthread_mutex_unlock(&r->mu);
	}
	t1 = run_now_ms();
	rec = trace_pack(exec_id, n, index, pred, c.inputs, c.process_data,
	    outputs, status, strcmp(status, "succeeded") == 0 ? NULL : c.err,
	    t0, t1, c.metadata, iter, loop);
	rec = secrets_scrub(r->secrets, rec);	/* traces never hold one */
	node_observe_end(&ob, r, n, status, c.err, c.metadata, rec);
	if (listen) {
		/* node_finished is the trace in object form, less its id key */
		json_t *done = rec != NULL ? trace_unpack(rec) : NULL;

		json_object_del(done, "node_execution_id");
		run_emit(r, "node_finished", done);
		json_decref(ev);
	}
	if (rec != NULL) {
		pthread_mutex_lock(&r->mu);
		if (json_array_append_new(r->node_runs, rec) != 0)
			atomic_store(&r->nomem, 1);
		pthread_mutex_unlock(&r->mu);
	} else
		atomic_store(&r->nomem, 1);
	json_decref(outputs);
	json_decref(c.inputs);
	json_decref(c.outputs);
	json_decref(c.process_data);
	json_decref(c.metadata);
	if (stopped) {
		engine_invalid(err, "stopped");
		return -2;
	}
	if (strcmp(status, "failed") == 0) {
		engine_invalid(err, "node '%s' (%s) failed: %s", n->title,
		    n->id, c.err);
		return -1;
	}
	return 0;
}

int
run_node_exec(struct run *r, const struct gnode *n, struct pool *p,
    char *err)
{
	const char	*handle;
	char		 hb[128];

	return exec_node(r, n, p, NULL, NULL, NULL, &handle, hb,
	    sizeof(hb), err);
}

/* ====== A scope ====== */

struct scope {
	struct run		*r;
	const char		*container;
	struct pool		*pool;
	const char		*iter, *loop;
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	unsigned char		*estate, *nstate;
	const char		**pred;		/* predecessor per node */
	size_t			*ready;
	size_t			 nready;
	int			 nrunning;
	int			 failed;
	char			 err[ENGINE_ERRMAX];
	struct span		*span;		/* parent of the nodes' */
};

static int
node_in_scope(const struct scope *s, const struct gnode *n)
{
	if (s->container == NULL)
		return n->parent == NULL;
	return n->parent != NULL && strcmp(n->parent, s->container) == 0;
}

static void mark_skipped(struct scope *s, size_t ni);

/* Decides node ni once all its incoming edges are decided (lock held). */
static void
check_node(struct scope *s, size_t ni)
{
	const struct gnode	*n = &s->r->g->nodes[ni];
	size_t			 i;
	int			 taken = 0;

	if (s->nstate[ni] != N_PENDING || !node_in_scope(s, n))
		return;
	for (i = 0; i < n->nin; i++) {
		if (s->estate[n->in[i]] == E_UNKNOWN)
			return;
		if (s->estate[n->in[i]] == E_TAKEN)
			taken = 1;
	}
	if (taken) {
		s->nstate[ni] = N_READY;
		s->ready[s->nready++] = ni;
	} else
		mark_skipped(s, ni);
}

static void
mark_skipped(struct scope *s, size_t ni)
{
	const struct gnode	*n = &s->r->g->nodes[ni];
	size_t			 i;

	s->nstate[ni] = N_SKIPPED;
	for (i = 0; i < n->nout; i++) {
		s->estate[n->out[i]] = E_SKIPPED;
		check_node(s, s->r->g->edges[n->out[i]].dst);
	}
}

/* Records node ni's end and decides its edges (lock held). */
static void
finish_node(struct scope *s, size_t ni, const char *handle)
{
	const struct gnode	*n = &s->r->g->nodes[ni];
	const struct gedge	*e;
	size_t			 i;

	s->nstate[ni] = N_DONE;
	for (i = 0; i < n->nout; i++) {
		e = &s->r->g->edges[n->out[i]];
		s->estate[n->out[i]] = handle == NULL ||
		    strcmp(e->source_handle, handle) == 0 ? E_TAKEN :
		    E_SKIPPED;
		if (s->estate[n->out[i]] == E_TAKEN && s->pred[e->dst] == NULL)
			s->pred[e->dst] = n->id;
	}
	for (i = 0; i < n->nout; i++)
		check_node(s, s->r->g->edges[n->out[i]].dst);
}

struct job {
	struct scope	*s;
	size_t		 ni;
	pthread_t	 tid;
};

/* Runs node ni and settles it; called without the lock. */
static void
run_one(struct scope *s, size_t ni)
{
	const struct gnode	*n = &s->r->g->nodes[ni];
	const char		*handle = NULL;
	char			 hbuf[128], err[ENGINE_ERRMAX] = "";
	int			 rc;

	if (atomic_load(&s->r->stopping))
		rc = -1;
	else if (atomic_load(&s->r->nomem)) {
		engine_invalid(err, "out of memory");
		rc = -1;
	} else if (run_stop_requested(s->r)) {
		atomic_store(&s->r->stopping, 1);
		engine_invalid(err, "stopped");
		rc = -2;
	} else if (s->r->lim.max_seconds > 0 && run_now_ms() -
	    s->r->started_ms > (int64_t)s->r->lim.max_seconds * 1000) {
		engine_invalid(err, "the run took longer than %d seconds "
		    "(workflow.max_time)", s->r->lim.max_seconds);
		rc = -1;
	} else
		rc = exec_node(s->r, n, s->pool, s->pred[ni], s->iter,
		    s->loop, &handle, hbuf, sizeof(hbuf), err);
	pthread_mutex_lock(&s->mu);
	if (rc != 0) {
		if (!s->failed && err[0] != '\0')
			snprintf(s->err, sizeof(s->err), "%s", err);
		s->failed = rc == -2 || s->failed == 2 ? 2 : 1;
		s->nstate[ni] = N_DONE;
	} else
		finish_node(s, ni, handle);
	s->nrunning--;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void *
job_main(void *arg)
{
	struct job *j = arg;

	span_set_current(j->s->span);
	run_one(j->s, j->ni);
	run_thread_give(j->s->r);
	return NULL;
}

int
run_thread_take(struct run *r)
{
	int n = atomic_load(&r->threads);

	do {
		if (n >= r->lim.max_threads - 1)
			return 0;
	} while (!atomic_compare_exchange_weak(&r->threads, &n, n + 1));
	return 1;
}

void
run_thread_give(struct run *r)
{
	atomic_fetch_sub(&r->threads, 1);
}

int
run_scope(struct run *r, const char *container, struct pool *p,
    const char *iter, const char *loop, char *err)
{
	struct scope	 s;
	struct job	*jobs = NULL;
	size_t		 njobs = 0, nn = r->g->nnodes, ni, i;
	long		 root;
	int		 rc = 0;

	memset(&s, 0, sizeof(s));
	s.r = r;
	s.container = container;
	s.pool = p;
	s.iter = iter;
	s.loop = loop;
	s.span = span_current();
	/* A graph that cannot run fails whole, before its first node. */
	if (container == NULL && (rc = graph_refuse(r->g, err)) != 0)
		return rc;
	if ((root = graph_root(r->g, container)) < 0)
		return engine_invalid(err, container ? "container '%s' has no "
		    "start node" : "the workflow has no start node%s",
		    container ? container : "");
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	s.estate = calloc(r->g->nedges + 1, 1);
	s.nstate = calloc(nn + 1, 1);
	s.pred = calloc(nn + 1, sizeof(*s.pred));
	s.ready = calloc(nn + 1, sizeof(*s.ready));
	jobs = calloc(nn + 1, sizeof(*jobs));
	if (s.estate == NULL || s.nstate == NULL || s.pred == NULL ||
	    s.ready == NULL || jobs == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	s.nstate[root] = N_READY;
	s.ready[s.nready++] = (size_t)root;
	pthread_mutex_lock(&s.mu);
	for (;;) {
		while (s.nready == 0 && s.nrunning > 0)
			pthread_cond_wait(&s.cv, &s.mu);
		if (s.nready == 0 || s.failed)
			break;
		if (s.nrunning >= r->lim.max_parallel) {
			pthread_cond_wait(&s.cv, &s.mu);
			continue;
		}
		ni = s.ready[--s.nready];
		s.nstate[ni] = N_RUNNING;
		s.nrunning++;
		/* the only work, or no thread left in the run's budget:
		 * run it here */
		if ((s.nrunning == 1 && s.nready == 0) ||
		    !run_thread_take(r)) {
			pthread_mutex_unlock(&s.mu);
			run_one(&s, ni);
			pthread_mutex_lock(&s.mu);
			continue;
		}
		jobs[njobs].s = &s;
		jobs[njobs].ni = ni;
		if (pthread_create(&jobs[njobs].tid, NULL, job_main,
		    &jobs[njobs]) != 0) {
			run_thread_give(r);
			pthread_mutex_unlock(&s.mu);
			run_one(&s, ni);
			pthread_mutex_lock(&s.mu);
			continue;
		}
		njobs++;
	}
	while (s.nrunning > 0)
		pthread_cond_wait(&s.cv, &s.mu);
	pthread_mutex_unlock(&s.mu);
	for (i = 0; i < njobs; i++)
		pthread_join(jobs[i].tid, NULL);
	if (s.failed) {
		snprintf(err, ENGINE_ERRMAX, "%s", s.err[0] ? s.err :
		    "the run was stopped");
		/* A failure ends this scope; a stop ends every scope. */
		rc = s.failed == 2 || atomic_load(&r->stopping) ?
		    ENGINE_ESTOPPED : ENGINE_EINVAL;
	}
out:
	free(s.estate);
	free(s.nstate);
	free(s.pred);
	free(s.ready);
	free(jobs);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	return rc;
}
