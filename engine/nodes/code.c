/*
 * code.c — the code node: main(...) in python3 or javascript, run in the
 * local sandbox (engine/sandbox/), on a warm runner of the code pool when
 * there is one, with its result checked against the declared outputs and
 * Dify's limits (dify-dsl.md §4.2), each a setting named after Dify's:
 * strings up to code.max_string_length (400,000 characters), nesting up
 * to code.max_depth (5), string and object arrays up to
 * code.max_string_array_length and code.max_object_array_length (30
 * items), number arrays up to code.max_number_array_length (1000); numbers
 * within ±(2^63-1). A message that trips one names it. Only declared
 * outputs are kept; a missing one is an error; a boolean in a number
 * output becomes 0 or 1. The result as a whole is capped on its way out of
 * the sandbox by sandbox.max_output (engine/sandbox/code.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"
#include "engine/sandbox/sandbox.h"

#define CODE_CONF(c)	((c)->run->e->conf)

static int check_value(struct node_ctx *c, const char *name,
    const char *type, json_t **v, int depth);

static int
check_depth(struct node_ctx *c, const char *name, const json_t *v, int depth)
{
	const char	*k;
	json_t		*x;
	size_t		 i;

	const struct conf *cf = CODE_CONF(c);

	if (depth > cf->code_max_depth)
		return node_fail(c, "output '%s' nests deeper than %d levels "
		    "(code.max_depth)", name, cf->code_max_depth);
	if (json_is_string(v) && engine_utf8_len(json_string_value(v)) >
	    (size_t)cf->code_max_string_length)
		return node_fail(c, "a string in output '%s' is longer than "
		    "%d characters (code.max_string_length)", name,
		    cf->code_max_string_length);
	if (json_is_object(v))
		json_object_foreach((json_t *)v, k, x)
			if (check_depth(c, name, x, depth + 1) != 0)
				return -1;
	if (json_is_array(v))
		json_array_foreach(v, i, x)
			if (check_depth(c, name, x, depth + 1) != 0)
				return -1;
	return 0;
}

/* Checks (and, for booleans in numbers, converts) *v against type. */
static int
check_value(struct node_ctx *c, const char *name, const char *type,
    json_t **v, int depth)
{
	json_t		*x, *conv;
	size_t		 i, max;
	const char	*elem, *setting;

	if (json_is_null(*v))
		return 0;
	if (strcmp(type, "string") == 0) {
		if (!json_is_string(*v))
			return node_fail(c, "output '%s' must be a string",
			    name);
		return check_depth(c, name, *v, depth);
	}
	if (strcmp(type, "number") == 0) {
		if (json_is_boolean(*v)) {
			conv = json_integer(json_is_true(*v));
			json_decref(*v);
			*v = conv;
		}
		if (!json_is_number(*v))
			return node_fail(c, "output '%s' must be a number",
			    name);
		if (json_is_real(*v) && !isfinite(json_real_value(*v)))
			return node_fail(c, "output '%s' is not a finite "
			    "number", name);
		return 0;
	}
	if (strcmp(type, "boolean") == 0) {
		if (!json_is_boolean(*v))
			return node_fail(c, "output '%s' must be a boolean",
			    name);
		return 0;
	}
	if (strcmp(type, "object") == 0) {
		if (!json_is_object(*v))
			return node_fail(c, "output '%s' must be an object",
			    name);
		return check_depth(c, name, *v, depth);
	}
	if (strncmp(type, "array[", 6) == 0) {
		if (!json_is_array(*v))
			return node_fail(c, "output '%s' must be an array",
			    name);
		elem = type + 6;
		setting = strncmp(elem, "number", 6) == 0 ?
		    "code.max_number_array_length" : strncmp(elem, "string",
		    6) == 0 ? "code.max_string_array_length" :
		    "code.max_object_array_length";
		max = (size_t)(strncmp(elem, "number", 6) == 0 ?
		    CODE_CONF(c)->code_max_number_array_length :
		    strncmp(elem, "string", 6) == 0 ?
		    CODE_CONF(c)->code_max_string_array_length :
		    CODE_CONF(c)->code_max_object_array_length);
		if (json_array_size(*v) > max)
			return node_fail(c, "output '%s' has %zu items, more "
			    "than %zu (%s)", name, json_array_size(*v), max,
			    setting);
		json_array_foreach(*v, i, x) {
			char et[16];
			json_t *item = json_incref(x);
			size_t n = strcspn(elem, "]");

			snprintf(et, sizeof(et), "%.*s", (int)n, elem);
			if (check_value(c, name, et, &item, depth + 1) != 0) {
				json_decref(item);
				return -1;
			}
			json_array_set_new(*v, i, item);
		}
		return 0;
	}
	/* any other declared type: keep as is, within the depth limit */
	return check_depth(c, name, *v, depth);
}

static int
code_run(struct node_ctx *c)
{
	struct sandbox_config	 cfg;
	struct sandbox_code_req	 req;
	struct sandbox_code_result res;
	struct sandbox_cancel	 cancel = { node_stop_asked, c->run };
	json_t			*vars, *decl, *v;
	const char		*k, *type;
	int			 rc;

	memset(&req, 0, sizeof(req));
	memset(&res, 0, sizeof(res));
	if ((vars = node_variables(c)) == NULL ||
	    json_object_update(c->inputs, vars) != 0) {
		json_decref(vars);
		return node_fail(c, "out of memory");
	}
	req.language = node_str(c->node, "code_language");
	req.code = node_str(c->node, "code");
	req.inputs = vars;
	req.cancel = &cancel;	/* a stop kills the code at once */
	if (req.language == NULL || req.code == NULL) {
		json_decref(vars);
		return node_fail(c, "code_language and code are required");
	}
	sandbox_config_init(&cfg, c->run->e->conf);
	rc = sandbox_code_pool_run(c->run->e->code_pool, &cfg, &req, c->err,
	    &res);
	json_decref(vars);
	if (rc != 0) {
		c->error_type = "CodeNodeError";
		if (res.log != NULL && *res.log != '\0')
			c->process_data = json_pack("{s:s}", "log", res.log);
		sandbox_code_result_release(&res);
		return -1;
	}
	decl = json_object_get(c->node->data, "outputs");
	if (!json_is_object(decl) || json_object_size(decl) == 0) {
		if (json_object_update(c->outputs, res.outputs) != 0)
			rc = node_fail(c, "out of memory");
		goto done;
	}
	json_object_foreach(decl, k, v) {
		json_t *val = json_object_get(res.outputs, k);

		type = json_string_value(json_object_get(v, "type"));
		if (val == NULL) {
			rc = node_fail(c, "Output %s is missing.", k);
			goto done;
		}
		val = json_incref(val);
		if (type != NULL && check_value(c, k, type, &val, 1) != 0) {
			json_decref(val);
			rc = -1;
			goto done;
		}
		if (json_object_set_new(c->outputs, k, val) != 0) {
			rc = node_fail(c, "out of memory");
			goto done;
		}
	}
done:
	if (res.log != NULL && *res.log != '\0' && c->process_data == NULL)
		c->process_data = json_pack("{s:s}", "log", res.log);
	sandbox_code_result_release(&res);
	return rc;
}

const struct node_type node_code = { "code", code_run, 0 };
