/*
 * tools.c — the registry of tool providers, tool results, and the
 * helpers every provider uses.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tools/tools.h"

#define TOOL_MAX_DEPTH	512

static const struct tool_provider *const builtins[] = {
	&tool_provider_time,
	&tool_provider_webscraper,
	&tool_provider_json_process,
	&tool_provider_code,
	NULL,
};

/* ====== Registry ====== */

const struct tool_provider *
tool_provider_find(const char *id, const char *provider_type)
{
	const struct tool_provider	*p = NULL;
	const char			*name, *slash;
	char				 buf[128];
	size_t				 i, n;

	if (provider_type != NULL && strcmp(provider_type, "api") == 0)
		return &tool_provider_api;
	if (provider_type != NULL && strcmp(provider_type, "mcp") == 0)
		return &tool_provider_mcp;
	if (id == NULL || (provider_type != NULL &&
	    strcmp(provider_type, "workflow") == 0))
		return NULL;
	/* "langgenius/time/time" -> "time"; "langgenius/time" -> "time" */
	name = id;
	if ((slash = strchr(id, '/')) != NULL) {
		name = slash + 1;
		n = strcspn(name, "/:@");
		if (n == 0 || n >= sizeof(buf))
			return NULL;
		memcpy(buf, name, n);
		buf[n] = '\0';
		name = buf;
	}
	for (i = 0; builtins[i] != NULL; i++)
		if (strcmp(builtins[i]->name, name) == 0) {
			p = builtins[i];
			break;
		}
	return p;
}

int
tool_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	const struct tool_provider	*p;
	int				 rc;

	p = tool_provider_find(call->provider, call->provider_type);
	if (p == NULL || call->tool == NULL) {
		rc = ENGINE_ENOTFOUND;
		engine_invalid(err, "tool '%s/%s' is not available in flowcgi",
		    call->provider ? call->provider : "",
		    call->tool ? call->tool : "");
		goto out;
	}
	rc = p->invoke(e, call, err, out);
out:
	return rc;
}

int
tool_describe(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	const struct tool_provider	*p;
	struct tool_call		 c = *call;
	json_t				*all = NULL, *t, *one = NULL;
	const char			*name;
	size_t				 i;
	int				 rc = ENGINE_ENOTFOUND;

	*out = NULL;
	if ((p = tool_provider_find(call->provider,
	    call->provider_type)) == NULL) {
		engine_invalid(err, "tool provider '%s' is not available in "
		    "flowcgi", call->provider ? call->provider : "");
		goto out;
	}
	c.tool = NULL;
	if ((rc = p->list(e, &c, err, &all)) != 0)
		goto out;
	if (call->tool == NULL) {
		*out = all;
		all = NULL;
		goto out;
	}
	json_array_foreach(all, i, t) {
		name = json_string_value(json_object_get(t, "name"));
		if (name != NULL && strcmp(name, call->tool) == 0) {
			one = json_array();
			json_array_append(one, t);
			break;
		}
	}
	if (one == NULL) {
		rc = ENGINE_ENOTFOUND;
		engine_invalid(err, "tool '%s/%s' is not available in flowcgi",
		    call->provider ? call->provider : "", call->tool);
		goto out;
	}
	*out = one;
	rc = 0;
out:
	json_decref(all);
	return rc;
}

/* ====== Results ====== */

int
tool_result_text(struct tool_result *r, const char *s, size_t n)
{
	if (r->text.len + n > TOOL_MAX_TEXT)
		return ENGINE_ELIMIT;
	tpl_sb_add(&r->text, s, n);
	return r->text.oom ? ENGINE_ENOMEM : 0;
}

static int
append_new(json_t **arr, json_t *v)
{
	if (v == NULL)
		return ENGINE_ENOMEM;
	if (*arr == NULL && (*arr = json_array()) == NULL) {
		json_decref(v);
		return ENGINE_ENOMEM;
	}
	return json_array_append_new(*arr, v) == 0 ? 0 : ENGINE_ENOMEM;
}

int
tool_result_json(struct tool_result *r, json_t *obj)
{
	return append_new(&r->json, obj);
}

int
tool_result_file(struct tool_result *r, json_t *file)
{
	return append_new(&r->files, file);
}

int
tool_result_var(struct tool_result *r, const char *name, json_t *v)
{
	if (v == NULL)
		return ENGINE_ENOMEM;
	if (r->variables == NULL && (r->variables = json_object()) == NULL) {
		json_decref(v);
		return ENGINE_ENOMEM;
	}
	return json_object_set_new(r->variables, name, v) == 0 ? 0 :
	    ENGINE_ENOMEM;
}

void
tool_result_release(struct tool_result *r)
{
	tpl_sb_release(&r->text);
	json_decref(r->json);
	json_decref(r->files);
	json_decref(r->variables);
	memset(r, 0, sizeof(*r));
}

/* ====== Builtin tool tables ====== */

json_t *
tool_defs_json(const struct tool_def *defs)
{
	json_t			*arr = json_array(), *props, *req, *t;
	const struct tool_param	*p;
	size_t			 i;

	for (i = 0; arr != NULL && defs[i].name != NULL; i++) {
		props = json_object();
		req = json_array();
		for (p = defs[i].params; p != NULL && p->name != NULL; p++) {
			json_object_set_new(props, p->name, json_pack(
			    "{s:s,s:s}", "type", p->type, "description",
			    p->description));
			if (p->required)
				json_array_append_new(req,
				    json_string(p->name));
		}
		t = json_pack("{s:s,s:s,s:{s:s,s:o,s:o}}", "name",
		    defs[i].name, "description", defs[i].description,
		    "parameters", "type", "object", "properties", props,
		    "required", req);
		if (t == NULL || json_array_append_new(arr, t) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

int
tool_defs_has(const struct tool_def *defs, const char *name)
{
	size_t i;

	for (i = 0; name != NULL && defs[i].name != NULL; i++)
		if (strcmp(defs[i].name, name) == 0)
			return 1;
	return 0;
}

/* ====== Parameters ====== */

const char *
tool_param_str(const json_t *params, const char *name, char **buf)
{
	const json_t	*v = json_object_get(params, name);
	const char	*s = NULL;

	*buf = NULL;
	if (v == NULL || json_is_null(v))
		goto out;
	if (json_is_string(v)) {
		s = json_string_value(v);
		goto out;
	}
	if (json_is_number(v) || json_is_boolean(v)) {
		if (tpl_py_repr(v, buf) == 0)
			s = *buf;
		goto out;
	}
	if ((*buf = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)) != NULL)
		s = *buf;
out:
	return s;
}

int
tool_param_bool(const json_t *params, const char *name, int dflt)
{
	const json_t	*v = json_object_get(params, name);
	const char	*s;

	if (v == NULL || json_is_null(v))
		return dflt;
	if (json_is_boolean(v))
		return json_is_true(v);
	if (json_is_number(v))
		return json_number_value(v) != 0;
	if ((s = json_string_value(v)) != NULL)
		return strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0 ||
		    strcasecmp(s, "yes") == 0;
	return dflt;
}

int
tool_param_int(const json_t *params, const char *name, int64_t *out)
{
	const json_t	*v = json_object_get(params, name);
	const char	*s;
	char		*end;
	double		 d;
	long long	 ll;

	if (v == NULL || json_is_null(v))
		return 1;
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_real(v)) {
		d = json_real_value(v);
		if (d != (double)(int64_t)d)
			return -1;
		*out = (int64_t)d;
		return 0;
	}
	if ((s = json_string_value(v)) == NULL)
		return -1;
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '\0')
		return 1;
	errno = 0;
	ll = strtoll(s, &end, 10);
	while (isspace((unsigned char)*end))
		end++;
	if (errno != 0 || *end != '\0')
		return -1;
	*out = ll;
	return 0;
}

/* ====== json.dumps ====== */

static int
dumps(struct tpl_sb *sb, const json_t *v, int ascii, int depth)
{
	const char	*k;
	json_t		*x;
	size_t		 i;
	int		 first = 1;

	if (depth > TOOL_MAX_DEPTH)
		return ENGINE_EINVAL;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		tpl_sb_str(sb, "{");
		json_object_foreach((json_t *)v, k, x) {
			if (!first)
				tpl_sb_str(sb, ", ");
			first = 0;
			tpl_sb_json_str(sb, k, strlen(k), ascii);
			tpl_sb_str(sb, ": ");
			if (dumps(sb, x, ascii, depth + 1) != 0)
				return ENGINE_EINVAL;
		}
		tpl_sb_str(sb, "}");
		break;
	case JSON_ARRAY:
		tpl_sb_str(sb, "[");
		json_array_foreach(v, i, x) {
			if (i > 0)
				tpl_sb_str(sb, ", ");
			if (dumps(sb, x, ascii, depth + 1) != 0)
				return ENGINE_EINVAL;
		}
		tpl_sb_str(sb, "]");
		break;
	case JSON_STRING:
		tpl_sb_json_str(sb, json_string_value(v), json_string_length(v),
		    ascii);
		break;
	case JSON_INTEGER:
		tpl_sb_py_int(sb, json_integer_value(v));
		break;
	case JSON_REAL:
		tpl_sb_py_float(sb, json_real_value(v));
		break;
	case JSON_TRUE:
		tpl_sb_str(sb, "true");
		break;
	case JSON_FALSE:
		tpl_sb_str(sb, "false");
		break;
	default:
		tpl_sb_str(sb, "null");
		break;
	}
	return 0;
}

int
tool_json_dumps(const json_t *v, int ascii, char **out)
{
	struct tpl_sb	sb = { 0 };
	int		rc;

	*out = NULL;
	if ((rc = dumps(&sb, v, ascii, 0)) != 0) {
		tpl_sb_release(&sb);
		return rc;
	}
	if ((*out = tpl_sb_take(&sb)) == NULL)
		return ENGINE_ENOMEM;
	return 0;
}
