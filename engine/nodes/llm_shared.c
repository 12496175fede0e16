/*
 * llm_shared.c — what the LLM node (llm.c) shares with the sandboxed
 * runtime's agent (agent_sandbox.c), which the LLM node hands a sandboxed
 * app's turn to: a prompt's messages and the strings they point at, the
 * trace of a prompt, and streaming the model's text as it arrives (with
 * the run's stop flag looked at every run.stop_check_ms). It calls
 * neither of them.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"
#include "engine/llm/llm.h"
#include "engine/nodes/nodes.h"

/* ====== Prompt ====== */

const char *
prompt_keep(struct prompt *p, char *s)
{
	json_t *j = json_string(s ? s : "");

	free(s);
	if (json_array_append_new(p->keep, j) != 0) {
		p->nomem = 1;
		return "";
	}
	return json_string_value(j);
}

int
prompt_add(struct node_ctx *c, struct prompt *p, enum llm_role role,
    const char *text)
{
	if (p->n == LLM_MAX_MESSAGES)
		return node_fail(c, "more than %d prompt messages",
		    LLM_MAX_MESSAGES);
	memset(&p->msgs[p->n], 0, sizeof(p->msgs[p->n]));
	p->msgs[p->n].role = role;
	p->msgs[p->n].content = text;
	p->n++;
	return 0;
}

/* ====== Streaming ====== */

/* 1 when selector s is [id, the parts of field ("a.b")]. */
static int
selector_is(const json_t *s, const char *id, const char *field)
{
	struct dbuf	 sb = { 0 };
	const char	*part;
	size_t		 i;
	int		 yes;

	if (json_array_size(s) < 2 || (part = json_string_value(
	    json_array_get(s, 0))) == NULL || strcmp(part, id) != 0)
		return 0;
	for (i = 1; i < json_array_size(s); i++) {
		if ((part = json_string_value(json_array_get(s, i))) == NULL)
			part = "";
		if (i > 1)
			dbuf_addstr(&sb, ".");
		dbuf_addstr(&sb, part);
	}
	yes = !sb.err && sb.p != NULL && strcmp(sb.p, field) == 0;
	dbuf_free(&sb);
	return yes;
}

int
llm_streams_field(struct node_ctx *c, const char *field)
{
	const struct graph	*g = c->run->g;
	char			 want[192];
	const char		*t;
	json_t			*o;
	size_t			 i, j;

	snprintf(want, sizeof(want), "{{#%s.%s#}}", c->node->id, field);
	for (i = 0; i < g->nnodes; i++) {
		if (strcmp(g->nodes[i].type, "answer") == 0 &&
		    (t = node_str(&g->nodes[i], "answer")) != NULL &&
		    strncmp(t, want, strlen(want)) == 0)
			return 1;
		if (!c->run->chat && strcmp(g->nodes[i].type, "end") == 0)
			json_array_foreach(json_object_get(g->nodes[i].data,
			    "outputs"), j, o)
				if (selector_is(json_object_get(o,
				    "value_selector"), c->node->id, field))
					return 1;
	}
	return 0;
}

int
llm_trace(struct node_ctx *c, const struct prompt *p, const json_t *model)
{
	json_t	*msgs;
	size_t	 i;

	if ((msgs = json_array()) == NULL)
		return -1;
	for (i = 0; i < p->n; i++)
		if (json_array_append_new(msgs, json_pack("{s:s,s:s}", "role",
		    p->msgs[i].role == LLM_SYSTEM ? "system" :
		    p->msgs[i].role == LLM_ASSISTANT ? "assistant" : "user",
		    "text", p->msgs[i].content ? p->msgs[i].content : ""))
		    != 0) {
			json_decref(msgs);
			return -1;
		}
	json_decref(c->process_data);
	c->process_data = json_pack("{s:o,s:O,s:s}", "prompts", msgs,
	    "model_mode", json_object_get(model, "mode") ?
	    json_object_get(model, "mode") : json_string("chat"),
	    "model_provider", json_string_value(json_object_get(model,
	    "provider")) ? json_string_value(json_object_get(model,
	    "provider")) : "");
	return c->process_data != NULL ? 0 : -1;
}

int
llm_stream_stopped(struct stream_ctx *s)
{
	double now;

	if (atomic_load(&s->c->run->stopping))
		return 1;
	/*
	 * A stop request is a flag in the run's record: a look is a store
	 * read and a JSON parse, a large part of a token's cost when made
	 * for each one. Once per run.stop_check_ms is soon enough.
	 */
	now = llm_clock();
	if (s->stop_checked == 0 || (now - s->stop_checked) * 1000 >=
	    s->c->run->e->conf->run_stop_check_ms) {
		s->stop_checked = now;
		if (run_stop_requested(s->c->run)) {
			/* the run ends "stopped", not failed by this node */
			atomic_store(&s->c->run->stopping, 1);
			return 1;
		}
	}
	return 0;
}

int
llm_on_delta(void *arg, enum llm_delta kind, const char *text, size_t len)
{
	struct stream_ctx *s = arg;

	if (llm_stream_stopped(s))
		return 1;
	if (kind == LLM_DELTA_TEXT && len > 0)
		run_stream_text(s->c->run, s->c->node->id, "text", text,
		    len);
	return 0;
}
