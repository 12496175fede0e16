/*
 * answer.c — the answer node of a chatflow: renders its template in the
 * markdown form and streams it as the answer.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"

/*
 * How much of the rendered text went out already: an LLM node whose text
 * this template starts with streamed it as it was generated ({{#id.text#}},
 * or the sandboxed Agent's {{#id.generation.content#}}).
 */
static size_t
already_sent(struct node_ctx *c, const char *tpl, const char *text)
{
	static const char *const fields[] = { "text", "generation.content",
	    NULL };
	const char	*dot, *end, *parts[3];
	char		 key[192], *val = NULL;
	json_t		*v;
	size_t		 n = 0, np, i, flen;
	char		 id[128];

	if (tpl == NULL || strncmp(tpl, "{{#", 3) != 0 ||
	    (end = strstr(tpl, "#}}")) == NULL ||
	    (dot = memchr(tpl + 3, '.', (size_t)(end - tpl - 3))) == NULL ||
	    (size_t)(dot - tpl - 3) >= sizeof(id))
		return 0;
	for (i = 0; fields[i] != NULL; i++) {
		flen = strlen(fields[i]);
		if ((size_t)(end - dot - 1) == flen &&
		    strncmp(dot + 1, fields[i], flen) == 0)
			break;
	}
	if (fields[i] == NULL)
		return 0;
	memcpy(id, tpl + 3, (size_t)(dot - tpl - 3));
	id[dot - tpl - 3] = '\0';
	snprintf(key, sizeof(key), "%s.%s", id, fields[i]);
	pthread_mutex_lock(&c->run->mu);
	v = json_object_get(c->run->streamed, key);
	pthread_mutex_unlock(&c->run->mu);
	if (v == NULL)
		return 0;
	parts[0] = id;
	if (i == 0) {
		parts[1] = "text";
		np = 2;
	} else {
		parts[1] = "generation";
		parts[2] = "content";
		np = 3;
	}
	if ((v = pool_get_parts(c->pool, parts, np)) != NULL &&
	    tpl_value_text(v, TPL_MARKDOWN, &val) == 0 &&
	    strncmp(text, val, strlen(val)) == 0)
		n = strlen(val);
	free(val);
	json_decref(v);
	return n;
}

/*
 * The run's outputs.answer: every answer node's text, in the order they
 * ran, as Dify's graph engine collects it for workflow_finished
 * (graph_engine event_handlers: _update_response_outputs). 0, or 1 when
 * out of memory.
 */
static int
answer_collect(struct run *r, const char *text)
{
	const char	*had;
	char		*both = NULL;
	size_t		 n, m;
	int		 bad;

	pthread_mutex_lock(&r->mu);
	had = json_string_value(json_object_get(r->outputs, "answer"));
	if (had == NULL)
		bad = json_object_set_new(r->outputs, "answer",
		    json_string(text)) != 0;
	else {
		n = strlen(had);
		m = strlen(text);
		if ((both = malloc(n + m + 1)) != NULL) {
			memcpy(both, had, n);
			memcpy(both + n, text, m + 1);
		}
		bad = both == NULL || json_object_set_new(r->outputs,
		    "answer", json_string(both)) != 0;
	}
	pthread_mutex_unlock(&r->mu);
	free(both);
	return bad;
}

static int
answer_run(struct node_ctx *c)
{
	const char	*tpl = node_str(c->node, "answer");
	char		*text = NULL;
	json_t		*sels = NULL;
	int		 bad = 0;

	if (node_render(c, tpl, TPL_MARKDOWN, &text) != 0)
		return -1;
	if (tpl_selectors(tpl ? tpl : "", &sels) == 0)
		bad |= json_object_set_new(c->inputs, "variable_selectors",
		    sels);
	run_stream_text(c->run, c->node->id, "answer", text + already_sent(c,
	    tpl, text), strlen(text) - already_sent(c, tpl, text));
	bad |= json_object_set_new(c->outputs, "answer", json_string(text));
	bad |= answer_collect(c->run, text);
	bad |= json_object_set_new(c->outputs, "files", json_array());
	free(text);
	return bad ? node_fail(c, "out of memory") : 0;
}

const struct node_type node_answer = { "answer", answer_run, 0 };
