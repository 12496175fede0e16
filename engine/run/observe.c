/*
 * observe.c — what a run and its nodes tell the metrics (conf/metrics.c),
 * the trace (trace.c) and the log context, kept in one place so that
 * run.c and the executor carry one call at each end.
 *
 * Span attributes carry Dify's names under "dify." (app, workflow run id,
 * node type and title, status, error, tokens); content (inputs, outputs,
 * a node's process data with its prompts) goes in only with
 * tracing.include_content, taken from the records as stored, so a secret
 * of the DSL never reaches a collector either.
 */
#include <stdio.h>
#include <string.h>

#include "engine/run/run.h"

/* ====== A run ====== */

void
run_observe_start(struct run *r, const json_t *app, const char *mode)
{
	const struct run_opts	*o = r->opts;
	const char		*name;
	struct span		*s;

	r->obs_mode = mode;
	r->obs_t0 = metric_clock();
	r->observed = 1;
	if (o->request_id != NULL && r->start_rec != NULL &&
	    json_object_set_new(r->start_rec, "request_id",
	    json_string(o->request_id)) != 0)
		atomic_store(&r->nomem, 1);
	log_context_run(r->app_id, r->id);
	metric_add(METRIC_RUNS_STARTED, METRIC_LABELS(r->app_id, mode), 1);
	metric_add(METRIC_RUNS_ACTIVE, NULL, 1);
	name = json_string_value(json_object_get(app, "name"));
	if ((s = span_start(name != NULL ? name : mode, NULL,
	    SPAN_INTERNAL)) == NULL)
		return;
	r->span = s;
	span_attr_str(s, "dify.app.id", r->app_id);
	span_attr_str(s, "dify.app.name", name);
	span_attr_str(s, "dify.app.mode", mode);
	span_attr_str(s, "dify.workflow.id", r->workflow_id);
	span_attr_str(s, "dify.workflow_run.id", r->id);
	span_attr_str(s, "dify.task_id", r->task_id);
	span_attr_str(s, "dify.invoke_from", o->invoke_from);
	span_attr_str(s, "dify.request_id", o->request_id);
	span_attr_str(s, "enduser.id", o->user);
	if (r->chat) {
		span_attr_str(s, "dify.conversation_id", r->conversation_id);
		span_attr_str(s, "dify.message_id", r->message_id);
		span_attr_str(s, "session.id", r->conversation_id);
	}
	span_attr_content(s, "input.value", o->query);
	r->obs_prev = span_set_current(s);
}

void
run_observe_end(struct run *r, const char *status, const json_t *rec)
{
	const char	*st = status != NULL ? status : "failed";
	struct span	*s = r->span;
	double		 secs;

	if (!r->observed)
		return;
	r->observed = 0;
	secs = metric_clock() - r->obs_t0;
	metric_add(METRIC_RUNS_ACTIVE, NULL, -1);
	metric_add(METRIC_RUNS_FINISHED, METRIC_LABELS(r->app_id, r->obs_mode,
	    st), 1);
	metric_observe(METRIC_RUN_DURATION, METRIC_LABELS(r->app_id,
	    r->obs_mode), secs);
	if (s == NULL)
		return;
	span_set_current(r->obs_prev);
	r->span = NULL;
	span_attr_str(s, "dify.status", st);
	span_attr_int(s, "dify.total_tokens", atomic_load(&r->total_tokens));
	span_attr_int(s, "gen_ai.usage.input_tokens",
	    atomic_load(&r->prompt_tokens));
	span_attr_int(s, "gen_ai.usage.output_tokens",
	    atomic_load(&r->completion_tokens));
	span_attr_int(s, "dify.total_steps", atomic_load(&r->steps));
	span_attr_int(s, "dify.exceptions_count", r->exceptions);
	span_attr_double(s, "dify.elapsed_time", secs);
	if (strcmp(st, "succeeded") != 0 && strcmp(st,
	    "partial-succeeded") != 0) {
		span_attr_str(s, "dify.error", r->error);
		span_error(s, r->error[0] != '\0' ? r->error : st);
	}
	if (trace_content() && rec != NULL) {
		span_attr_content_json(s, "dify.inputs", json_object_get(rec,
		    "inputs"));
		span_attr_content_json(s, "output.value", json_object_get(rec,
		    "outputs"));
		if (r->chat)
			span_attr_content(s, "dify.answer", r->answer);
	}
	span_end(s);
}

/* ====== A node ====== */

void
node_observe_start(struct node_obs *ob, struct run *r, const struct gnode *n,
    const char *exec_id, int index, const char *iter, const char *loop)
{
	struct span *s, *parent = span_current();

	memset(ob, 0, sizeof(*ob));
	ob->t0 = metric_clock();
	/* a thread without a current span (a branch's worker): the run */
	if ((s = span_start(n->title, parent != NULL ? parent : r->span,
	    SPAN_INTERNAL)) == NULL)
		return;
	ob->span = s;
	span_attr_str(s, "dify.node.id", n->id);
	span_attr_str(s, "dify.node.type", n->type);
	span_attr_str(s, "dify.node.title", n->title);
	span_attr_int(s, "dify.node.index", index);
	span_attr_str(s, "dify.node_execution.id", exec_id);
	span_attr_str(s, "dify.workflow_run.id", r->id);
	span_attr_str(s, "dify.iteration_id", iter);
	span_attr_str(s, "dify.loop_id", loop);
	ob->prev = span_set_current(s);
}

void
node_observe_end(struct node_obs *ob, struct run *r, const struct gnode *n,
    const char *status, const char *error, const json_t *metadata,
    json_t *rec)
{
	struct span	*s = ob->span;
	json_t		*t, *pd, *tok;
	const char	*model;

	(void)r;
	metric_observe(METRIC_NODE_DURATION, METRIC_LABELS(n->type, status),
	    metric_clock() - ob->t0);
	if (s == NULL)
		return;
	span_set_current(ob->prev);
	span_attr_str(s, "dify.status", status);
	if ((tok = json_object_get(metadata, "total_tokens")) != NULL &&
	    json_is_integer(tok))
		span_attr_int(s, "dify.total_tokens", json_integer_value(tok));
	if (error != NULL && strcmp(status, "succeeded") != 0) {
		span_attr_str(s, "dify.error", error);
		if (strcmp(status, "exception") != 0)
			span_error(s, error);
	}
	/* the stored trace: scrubbed of the DSL's secrets */
	t = trace_content() && rec != NULL ? trace_unpack(rec) : NULL;
	pd = json_object_get(t, "process_data");
	if ((model = json_string_value(json_object_get(pd, "model_name"))) !=
	    NULL)
		span_attr_str(s, "gen_ai.request.model", model);
	span_attr_content_json(s, "input.value", json_object_get(t, "inputs"));
	span_attr_content_json(s, "output.value", json_object_get(t,
	    "outputs"));
	if (pd != NULL && !json_is_null(pd))
		span_attr_content_json(s, "dify.process_data", pd);
	json_decref(t);
	span_end(s);
}

/* ====== An agent's iterations ====== */

struct span *
agent_iteration_next(struct span *prev, struct span *node, int iter)
{
	struct span	*s;
	char		 name[48];

	span_end(prev);
	if (node == NULL) {
		span_set_current(NULL);
		return NULL;
	}
	snprintf(name, sizeof(name), "agent iteration %d", iter + 1);
	if ((s = span_start(name, node, SPAN_INTERNAL)) != NULL)
		span_attr_int(s, "dify.agent.iteration", iter + 1);
	span_set_current(s != NULL ? s : node);
	return s;
}

void
agent_iteration_end(struct span *last, struct span *node)
{
	span_end(last);
	span_set_current(node);
}
