/*
 * answer.c — the answer node of a chatflow: renders its template in the
 * markdown form and streams it as the answer.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/exec.h"

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
	run_stream_text(c->run, c->node->id, text, strlen(text));
	json_object_set_new(c->outputs, "answer", json_string(text));
	json_object_set_new(c->outputs, "files", json_array());
	free(text);
	return 0;
}

const struct node_type node_answer = { "answer", answer_run, 0 };
