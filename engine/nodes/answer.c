/*
 * answer.c — the answer node of a chatflow: renders its template in the
 * markdown form and streams it as the answer.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/exec.h"

/*
 * How much of the rendered text went out already: an LLM node whose text
 * this template starts with streamed it as it was generated.
 */
static size_t
already_sent(struct node_ctx *c, const char *tpl, const char *text)
{
	const char	*dot, *end;
	char		 key[160], *val = NULL;
	json_t		*v;
	size_t		 n = 0;
	const char	*parts[2];
	char		 id[128];

	if (tpl == NULL || strncmp(tpl, "{{#", 3) != 0 ||
	    (end = strstr(tpl, "#}}")) == NULL ||
	    (dot = memchr(tpl + 3, '.', (size_t)(end - tpl - 3))) == NULL ||
	    strncmp(dot, ".text#}}", 8) != 0 ||
	    (size_t)(dot - tpl - 3) >= sizeof(id))
		return 0;
	memcpy(id, tpl + 3, (size_t)(dot - tpl - 3));
	id[dot - tpl - 3] = '\0';
	snprintf(key, sizeof(key), "%s.text", id);
	pthread_mutex_lock(&c->run->mu);
	v = json_object_get(c->run->streamed, key);
	pthread_mutex_unlock(&c->run->mu);
	if (v == NULL)
		return 0;
	parts[0] = id;
	parts[1] = "text";
	if ((v = pool_get_parts(c->pool, parts, 2)) != NULL &&
	    tpl_value_text(v, TPL_MARKDOWN, &val) == 0 &&
	    strncmp(text, val, strlen(val)) == 0)
		n = strlen(val);
	free(val);
	json_decref(v);
	return n;
}

static int
answer_run(struct node_ctx *c)
{
	const char	*tpl = node_str(c->node, "answer");
	char		*text = NULL;
	json_t		*sels = NULL;

	if (node_render(c, tpl, TPL_MARKDOWN, &text) != 0)
		return -1;
	if (tpl_selectors(tpl ? tpl : "", &sels) == 0) {
		json_object_set_new(c->inputs, "variable_selectors", sels);
	}
	run_stream_text(c->run, c->node->id, text + already_sent(c, tpl,
	    text), strlen(text) - already_sent(c, tpl, text));
	json_object_set_new(c->outputs, "answer", json_string(text));
	json_object_set_new(c->outputs, "files", json_array());
	free(text);
	return 0;
}

const struct node_type node_answer = { "answer", answer_run, 0 };
