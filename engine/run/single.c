/*
 * single.c — Dify's single-step run: one node of an app's draft run alone
 * with inputs the console gives (WorkflowEntry.single_step_run), and the
 * last execution of a node (DraftWorkflowNodeLastRunApi).
 *
 * The inputs are keyed as Dify's extract_variable_selector_to_variable_
 * mapping keys them: a code or template node's own variable names
 * ("arg1"), a reference of a prompt or a field as "#<node>.<var>#", an
 * LLM's context "#context#" and vision files "#files#", a classifier's,
 * extractor's or retrieval's query "query"; each may also be prefixed with
 * the node's id ("<node>.arg1"). The values go into the pool at the
 * selectors they stand for, then the executor runs the node as it runs one
 * in a run (exec_node: retries, error strategy, trace).
 *
 * A single step is stored as a run of the app (invoke_from "debugger",
 * single_step: the node id) with its one execution, so the app's record
 * lists, prunes and deletes it with its other runs; last-run walks the
 * app's newest debugger runs (draft runs and single steps) for the node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"

/* Dify's canRunBySingle (web/app/components/workflow/utils): the node
 * types whose panel offers a single run. */
static const char *const single_types[] = {
	"llm", "knowledge-retrieval", "code", "template-transform",
	"question-classifier", "http-request", "tool", "parameter-extractor",
	"iteration", "agent", "document-extractor", "loop", "start",
	"if-else", "variable-aggregator", "assigner", NULL
};

static int
single_allowed(const struct gnode *n)
{
	size_t i;

	/* an assigner inside a container would set the container's
	 * variables, which a lone step does not have (Dify's comment) */
	if (n->parent != NULL && strcmp(n->type, "assigner") == 0)
		return 0;
	for (i = 0; single_types[i] != NULL; i++)
		if (strcmp(n->type, single_types[i]) == 0)
			return 1;
	return 0;
}

/* ====== The variable mapping ====== */

/* 1 when v is a selector: an array of at least two strings. */
static int
is_selector(const json_t *v)
{
	size_t	 i;
	json_t	*s;

	if (!json_is_array(v) || json_array_size(v) < 2)
		return 0;
	json_array_foreach(v, i, s)
		if (!json_is_string(s))
			return 0;
	return 1;
}

/* Adds key -> sel to map unless key is there; 0 or ENGINE_ENOMEM. */
static int
map_add(json_t *map, const char *key, const json_t *sel)
{
	if (json_object_get(map, key) != NULL)
		return 0;
	return json_object_set_new(map, key, json_deep_copy(sel)) != 0 ?
	    ENGINE_ENOMEM : 0;
}

/* Adds "#a.b#" -> sel. */
static int
map_add_ref(json_t *map, const json_t *sel)
{
	char	 key[512];
	size_t	 i, off = 0;
	json_t	*s;

	key[off++] = '#';
	json_array_foreach(sel, i, s) {
		int n = snprintf(key + off, sizeof(key) - off, "%s%s",
		    i ? "." : "", json_string_value(s));

		if (n < 0 || (size_t)n >= sizeof(key) - off - 1)
			return 0;	/* no key of that length: not mapped */
		off += (size_t)n;
	}
	key[off++] = '#';
	key[off] = '\0';
	return map_add(map, key, sel);
}

/*
 * Walks node data v and adds what it references to map, key k being the
 * key v sits under in its object (NULL in an array).
 */
static int
map_walk(json_t *map, const char *k, const json_t *v, int depth)
{
	json_t		*sels = NULL, *x, *vs;
	const char	*kk, *name;
	size_t		 i;
	int		 rc = 0;

	if (depth > 32)
		return 0;
	if (json_is_string(v)) {
		if (tpl_selectors(json_string_value(v), &sels) != 0)
			return ENGINE_ENOMEM;
		json_array_foreach(sels, i, x)
			if (is_selector(x) && (rc = map_add_ref(map, x)) != 0)
				break;
		json_decref(sels);
		return rc;
	}
	if (is_selector(v)) {
		if (k != NULL && (strcmp(k, "query") == 0 ||
		    strcmp(k, "query_variable_selector") == 0))
			return map_add(map, "query", v);
		return map_add_ref(map, v);
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if ((rc = map_walk(map, NULL, x, depth + 1)) != 0)
				return rc;
		return 0;
	}
	if (!json_is_object(v))
		return 0;
	/* {variable, value_selector}: a code, template or jinja2 variable */
	name = json_string_value(json_object_get(v, "variable"));
	vs = json_object_get(v, "value_selector");
	if (name != NULL && is_selector(vs))
		return map_add(map, name, vs);
	if (k != NULL && strcmp(k, "context") == 0 &&
	    is_selector(json_object_get(v, "variable_selector")))
		return json_is_true(json_object_get(v, "enabled")) ? map_add(map,
		    "#context#", json_object_get(v, "variable_selector")) : 0;
	if (k != NULL && strcmp(k, "vision") == 0) {
		x = json_object_get(json_object_get(v, "configs"),
		    "variable_selector");
		return json_is_true(json_object_get(v, "enabled")) &&
		    is_selector(x) ? map_add(map, "#files#", x) : 0;
	}
	json_object_foreach((json_t *)v, kk, x) {
		/* what the node writes, not what it reads */
		if (strcmp(kk, "outputs") == 0 || strcmp(kk, "default_value")
		    == 0 || strcmp(kk, "output_selector") == 0)
			continue;
		if ((rc = map_walk(map, kk, x, depth + 1)) != 0)
			return rc;
	}
	return 0;
}

/* Sets sel (at least 2 parts) to v in p; a longer path nests v. */
static int
pool_set_selector(struct pool *p, const json_t *sel, json_t *v)
{
	json_t	*cur = json_incref(v), *o;
	size_t	 i;
	int	 rc;

	for (i = json_array_size(sel) - 1; i >= 2; i--) {
		if ((o = json_object()) == NULL) {
			json_decref(cur);
			return ENGINE_ENOMEM;
		}
		if (json_object_set_new(o, json_string_value(json_array_get(
		    sel, i)), cur) != 0) {
			json_decref(o);	/* json_object_set_new took cur */
			return ENGINE_ENOMEM;
		}
		cur = o;
	}
	/* pool_set takes a reference of its own */
	rc = pool_set(p, json_string_value(json_array_get(sel, 0)),
	    json_string_value(json_array_get(sel, 1)), cur) == 0 ? 0 :
	    ENGINE_ENOMEM;
	json_decref(cur);
	return rc;
}

/*
 * Puts the user's inputs into p at the selectors of n's mapping, as
 * Dify's mapping_user_inputs_to_variable_pool: a key missing from the
 * inputs is an error unless the pool has the value already (sys, env).
 */
static int
single_inputs(const struct gnode *n, const json_t *in, struct pool *p,
    char *err)
{
	json_t		*map = NULL, *sel, *v, *have, *var;
	const char	*key, *name;
	char		 full[640];
	size_t		 i;
	int		 rc = ENGINE_ENOMEM;

	if (strcmp(n->type, "start") == 0) {
		/* a start node reports the inputs of the run: set them */
		json_array_foreach(json_object_get(n->data, "variables"), i,
		    var) {
			if ((name = json_string_value(json_object_get(var,
			    "variable"))) == NULL ||
			    (v = json_object_get(in, name)) == NULL)
				continue;
			if (pool_set(p, n->id, name, v) != 0)
				return ENGINE_ENOMEM;
		}
		return 0;
	}
	if ((map = json_object()) == NULL ||
	    (rc = map_walk(map, NULL, n->data, 0)) != 0)
		goto out;
	json_object_foreach(map, key, sel) {
		snprintf(full, sizeof(full), "%s.%s", n->id, key);
		if ((v = json_object_get(in, full)) == NULL)
			v = json_object_get(in, key);
		if (v == NULL) {
			have = pool_get(p, sel);
			json_decref(have);
			if (have != NULL)
				continue;
			rc = engine_invalid(err, "Variable key %s not found in "
			    "user inputs.", full);
			goto out;
		}
		/* the environment is the app's, not the caller's */
		if (strcmp(json_string_value(json_array_get(sel, 0)), "env")
		    == 0)
			continue;
		if ((rc = pool_set_selector(p, sel, v)) != 0)
			goto out;
	}
	rc = 0;
out:
	json_decref(map);
	return rc;
}

/* ====== The run ====== */

/* struct tool_run's calls for a single step (as engine_run's). */
static struct mcp_pool *
single_mcp(void *arg)
{
	return run_mcp(arg);
}

static int
single_stopped(void *arg)
{
	struct run *r = arg;

	return atomic_load(&r->stopping) || run_stop_requested(r);
}

/* Stores the single step's run record and its one node execution. */
struct single_write {
	const json_t	*rec;
	const json_t	*nodes;
};

static int
single_write_fn(struct store_txn *t, void *arg)
{
	struct single_write	*w = arg;
	const char		*id = json_string_value(json_object_get(w->rec,
				    "id"));
	const char		*app = json_string_value(json_object_get(w->rec,
				    "app_id"));
	int			 rc;

	if ((rc = store_need(t, STORE_DB_APPS, app, strlen(app))) != 0 ||
	    (rc = run_record_put(t, w->rec)) != 0)
		return rc;
	return store_put_json(t, STORE_DB_NODE_RUNS, id, w->nodes, 0);
}

/*
 * The last execution of node_id in nodes (a run's traces: packed arrays,
 * [id, node id, ...], or objects in older data), borrowed; or NULL. A
 * container's own comes after those of the nodes inside it.
 */
static json_t *
trace_of(const json_t *nodes, const char *node_id)
{
	json_t		*x;
	const char	*id;
	size_t		 i;

	for (i = json_array_size(nodes); i-- > 0;) {
		x = json_array_get(nodes, i);
		id = json_string_value(json_is_array(x) ? json_array_get(x, 1) :
		    json_object_get(x, "node_id"));
		if (id != NULL && strcmp(id, node_id) == 0)
			return x;
	}
	return NULL;
}

/* The execution as Dify's workflow_run_node_execution_fields. */
static json_t *
single_answer(json_t *trace)
{
	json_t *o = trace_unpack(trace);

	if (o == NULL)
		return NULL;
	json_object_del(o, "node_execution_id");
	if (json_object_set_new(o, "created_by_role",
	    json_string("account")) != 0 ||
	    json_object_set_new(o, "created_by_account", json_null()) != 0 ||
	    json_object_set_new(o, "created_by_end_user", json_null()) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int
engine_node_run(struct engine *e, const struct run_opts *ro,
    const char *node_id, char *err, json_t **out)
{
	struct run		 r;
	struct run_opts		 o = *ro;
	struct single_write	 w;
	const char		*app_id = ro->app_id, *user = ro->user;
	const json_t		*inputs = ro->inputs;
	json_t			*app = NULL, *wf, *sys = NULL, *rec = NULL;
	json_t			*trace, *v, *env;
	const struct gnode	*n;
	const char		*name;
	long			 ni;
	size_t			 i;
	int64_t			 end_ms;
	int			 rc, sealed, nrc;
	char			 nerr[ENGINE_ERRMAX] = "";

	memset(&r, 0, sizeof(r));
	pthread_mutex_init(&r.mu, NULL);
	pthread_mutex_init(&r.sb_mu, NULL);
	/* no events: the answer is the one execution */
	o.on_event = NULL;
	o.on_start = NULL;
	o.invoke_from = "debugger";
	r.e = e;
	r.opts = &o;
	r.tool_run.id = r.id;
	r.tool_run.app_id = r.app_id;
	r.tool_run.user = user;
	r.tool_run.invoke_from = o.invoke_from;
	r.tool_run.run = &r;
	r.tool_run.mcp = single_mcp;
	r.tool_run.stopped = single_stopped;
	r.lim.max_steps = e->conf->workflow_max_steps;
	r.lim.max_seconds = e->conf->workflow_max_time;
	r.lim.max_parallel = e->conf->workflow_max_parallel;
	r.lim.max_loop = e->conf->workflow_max_loop;
	r.lim.max_threads = e->conf->workflow_max_threads;
	if (engine_uuid_check(app_id) != 0) {
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	if ((rc = app_cache_get(e, app_id, 1, &app, &sealed)) != 0)
		goto out;
	/* its secrets are opened below: this step's own copy */
	if ((v = json_deep_copy(app)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_decref(app);
	app = v;
	wf = json_object_get(json_object_get(app, "dsl"), "workflow");
	if (!json_is_object(wf)) {
		rc = engine_invalid(err, "this app has no workflow to run a "
		    "node of");
		goto out;
	}
	r.sandboxed = json_is_true(json_object_get(json_object_get(
	    json_object_get(wf, "features"), "sandbox"), "enabled"));
	if ((r.secrets = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = dsl_secrets(e, wf, DSL_SECRET_OPEN, r.secrets, err)) != 0 ||
	    (rc = graph_build(wf, err, &r.g)) != 0)
		goto out;
	if ((ni = graph_find(r.g, node_id)) < 0) {
		rc = ENGINE_ENOTFOUND;
		snprintf(err, ENGINE_ERRMAX, "Node %.64s not found", node_id);
		goto out;
	}
	n = &r.g->nodes[ni];
	if (!single_allowed(n) || n->nt == NULL) {
		rc = engine_invalid(err, "Node type %s not supported",
		    n->type);
		goto out;
	}
	engine_uuid(r.id);
	memcpy(r.task_id, r.id, sizeof(r.id));
	snprintf(r.app_id, sizeof(r.app_id), "%s", app_id);
	r.started_ms = run_now_ms();
	if ((r.pool = pool_new(NULL)) == NULL ||
	    (r.node_runs = json_array()) == NULL ||
	    (r.outputs = json_object()) == NULL ||
	    (r.streamed = json_object()) == NULL ||
	    (r.history = json_array()) == NULL ||
	    (r.skills = json_array()) == NULL ||
	    (r.skill_tools = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	/* what the pool of a draft run has before any node: sys, env */
	sys = json_pack("{s:s,s:[],s:s,s:s,s:s,s:s,s:I}", "query", "",
	    "files", "user_id", user ? user : "", "app_id", r.app_id,
	    "workflow_id", "", "workflow_run_id", r.id, "timestamp",
	    (json_int_t)(r.started_ms / 1000));
	if (sys == NULL || pool_set_all(r.pool, "sys", sys) != 0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	env = json_object_get(wf, "environment_variables");
	json_array_foreach(env, i, v)
		if ((name = json_string_value(json_object_get(v, "name"))) !=
		    NULL && json_object_get(v, "value") != NULL &&
		    pool_set(r.pool, "env", name, json_object_get(v, "value"))
		    != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	if ((rc = single_inputs(n, inputs, r.pool, err)) != 0)
		goto out;
	/* a node that fails is an answer (status failed), not an error */
	nrc = run_node_exec(&r, n, r.pool, nerr);
	{
		char hex[STORE_HASH_HEX];

		/* its MCP sessions and sandbox go now (the workspace of a
		 * lone step is not kept: draft_user is not set) */
		run_sandbox_end(&r, hex);
	}
	end_ms = run_now_ms();
	if ((trace = trace_of(r.node_runs, n->id)) == NULL) {
		/* no trace: the step limit, or memory */
		rc = nrc != 0 && nerr[0] ? engine_invalid(err, "%s", nerr) :
		    ENGINE_ENOMEM;
		goto out;
	}
	rec = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:O,s:s,s:s?,s:I,s:I,"
	    "s:f,s:i,s:I,s:s,s:s,s:s?}",
	    "id", r.id, "task_id", r.task_id, "app_id", r.app_id,
	    "workflow_id", "", "version", "draft", "mode",
	    json_string_value(json_object_get(app, "mode")) ?
	    json_string_value(json_object_get(app, "mode")) : "workflow",
	    "inputs", inputs, "status", nrc == 0 ? "succeeded" : nrc == -2 ?
	    "stopped" : "failed", "error", nrc != 0 ? nerr : NULL,
	    "created_at", (json_int_t)(r.started_ms / 1000), "finished_at",
	    (json_int_t)(end_ms / 1000), "elapsed_time",
	    (double)(end_ms - r.started_ms) / 1000.0, "total_steps", 1,
	    "total_tokens", (json_int_t)atomic_load(&r.total_tokens),
	    "invoke_from", "debugger", "single_step", n->id,
	    "created_by_end_user", user);
	if ((rec = secrets_scrub(r.secrets, rec)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	w.rec = rec;
	w.nodes = r.node_runs;	/* scrubbed as the node finished */
	rc = store_write(e->store, single_write_fn, &w);
	if (rc == STORE_ENEEDED)
		rc = STORE_ENOTFOUND;	/* the app went while it ran */
	if ((rc = engine_from_store(rc)) != 0)
		goto out;
	if ((*out = single_answer(trace)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	if (r.sb != NULL || r.mcp != NULL) {
		char hex[STORE_HASH_HEX];

		run_sandbox_end(&r, hex);
	}
	json_decref(rec);
	json_decref(sys);
	json_decref(app);
	json_decref(r.node_runs);
	json_decref(r.secrets);
	json_decref(r.outputs);
	json_decref(r.streamed);
	json_decref(r.history);
	json_decref(r.thought_log);
	json_decref(r.skills);
	json_decref(r.skill_tools);
	json_decref(r.resources);
	json_decref(r.message_files);
	free(r.workspace_tar);
	free(r.sb_note);
	free(r.answer);
	pool_free(r.pool);
	graph_free(r.g);
	pthread_mutex_destroy(&r.sb_mu);
	pthread_mutex_destroy(&r.mu);
	return rc;
}

/* ====== The last execution of a node ====== */

/* The last execution of node_id in run id's trace, unpacked, or NULL. */
static json_t *
last_in_run(struct store_txn *t, const char *id, const char *node_id)
{
	json_t	*nodes = NULL, *x, *o = NULL;

	if (store_get_json(t, STORE_DB_NODE_RUNS, id, &nodes) != 0)
		return NULL;
	if ((x = trace_of(nodes, node_id)) != NULL)
		o = single_answer(x);
	json_decref(nodes);
	return o;
}

int
engine_node_last_run(struct engine *e, const char *app_id,
    const char *node_id, json_t **out)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*rec = NULL, *found = NULL;
	char			 prefix[64], hi[64], id[37];
	size_t			 plen;
	int			 rc, seen = 0;

	if (engine_uuid_check(app_id) != 0)
		return ENGINE_ENOTFOUND;
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s/", app_id);
	snprintf(hi, sizeof(hi), "%s0", app_id);	/* '0' follows '/' */
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = store_get_json(t, STORE_DB_APPS, app_id, &rec)) != 0)
		goto out;
	json_decref(rec);
	rec = NULL;
	if ((rc = store_cursor_open(t, STORE_DB_RUNS_BY_APP, &c)) != 0)
		goto out;
	/* newest first, the app's debugger runs only, a bounded walk */
	rc = store_cursor_seek(c, hi, strlen(hi), &kv);
	rc = rc == 0 ? store_cursor_prev(c, &kv) : store_cursor_last(c, &kv);
	for (; rc == 0 && found == NULL; rc = store_cursor_prev(c, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0 ||
		    seen++ >= e->conf->workflow_last_run_scan)
			break;
		if (kv.vlen != 36)
			continue;
		memcpy(id, kv.v, 36);
		id[36] = '\0';
		if (store_get_json(t, STORE_DB_RUNS, id, &rec) != 0)
			continue;
		if (record_field_is(rec, "invoke_from", "debugger"))
			found = last_in_run(t, id, node_id);
		json_decref(rec);
		rec = NULL;
	}
	rc = found != NULL ? 0 : rc == 0 || rc == STORE_ENOTFOUND ?
	    STORE_ENOTFOUND : rc;
out:
	store_cursor_close(c);
	store_read_end(t);
	if (rc != 0) {
		json_decref(found);
		return engine_from_store(rc);
	}
	*out = found;
	return 0;
}
