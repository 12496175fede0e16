/*
 * template_transform.c — the template-transform node: its variables into
 * a Jinja2 template, rendered by flowcgi's own Jinja2 engine (engine/jinja/)
 * rather than a Python sandbox. Output: `output`, at most 400,000
 * characters as in Dify.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"

static int
template_run(struct node_ctx *c)
{
	const char	*tpl = node_str(c->node, "template");
	json_t		*vars;
	char		*out = NULL;
	size_t		 len = 0;
	int		 rc;

	if ((vars = node_variables(c)) == NULL ||
	    json_object_update(c->inputs, vars) != 0) {
		json_decref(vars);
		return node_fail(c, "out of memory");
	}
	rc = jinja_render(tpl ? tpl : "", tpl ? strlen(tpl) : 0, vars, NULL,
	    c->err, &out, &len);
	json_decref(vars);
	if (rc != 0) {
		c->error_type = "TemplateTransformError";
		return -1;
	}
	rc = json_object_set_new(c->outputs, "output", json_stringn(out,
	    len));
	free(out);
	return rc != 0 ? node_fail(c, "out of memory") : 0;
}

const struct node_type node_template_transform = {
	"template-transform", template_run, 0
};
