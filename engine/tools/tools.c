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
	&tool_provider_rss,
	&tool_provider_rookie_rss,
	&tool_provider_duckduckgo,
	&tool_provider_base64_codec,
	&tool_provider_md_exporter,
	&tool_provider_chart,
	&tool_provider_qrcode,
	&tool_provider_echarts,
	&tool_provider_pdf_process,
	&tool_provider_dingtalk,
	&tool_provider_mcp_sse,
	&tool_provider_mcp_config_during_use,
	&tool_provider_email,
	&tool_provider_email163,
	&tool_provider_database,
	&tool_provider_audio,
	NULL,
};

const struct tool_provider *
tool_builtin_at(size_t i)
{
	return i < sizeof(builtins) / sizeof(*builtins) - 1 ? builtins[i] :
	    NULL;
}

/* ====== The calling run ====== */

static __thread const struct tool_run *cur_run;

const struct tool_run *
tool_run_current(void)
{
	return cur_run;
}

const struct tool_run *
tool_run_set(const struct tool_run *r)
{
	const struct tool_run *prev = cur_run;

	cur_run = r;
	return prev;
}

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
	if (provider_type != NULL && strcmp(provider_type, "workflow") == 0)
		return &tool_provider_workflow;
	if (id == NULL)
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

const struct tool_provider *
tool_provider_lookup(struct engine *e, const char *id,
    const char *provider_type)
{
	const struct tool_provider *p = tool_provider_find(id, provider_type);

	if (p != NULL || id == NULL || (provider_type != NULL &&
	    (strcmp(provider_type, "workflow") == 0 ||
	    strcmp(provider_type, "api") == 0 ||
	    strcmp(provider_type, "mcp") == 0)))
		return p;
	return tool_manifest_find(e, id) != NULL ? &tool_provider_manifest :
	    NULL;
}

int
tool_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	const struct tool_provider	*p;
	const struct tool_manifest	*m;
	struct tool_call		 c = *call;
	struct span			*s = NULL;
	json_t				*creds = NULL;
	char				 name[160];
	int				 rc;

	if (span_current() != NULL) {	/* within a run's trace */
		snprintf(name, sizeof(name), "execute_tool %s", call->tool ?
		    call->tool : "");
		s = span_start(name, span_current(), SPAN_INTERNAL);
		span_attr_str(s, "gen_ai.operation.name", "execute_tool");
		span_attr_str(s, "gen_ai.tool.name", call->tool);
		span_attr_str(s, "dify.tool.provider", call->provider);
		span_attr_str(s, "dify.tool.provider_type",
		    call->provider_type);
		span_attr_content_json(s, "gen_ai.tool.call.arguments",
		    call->params);
	}
	p = tool_provider_lookup(e, call->provider, call->provider_type);
	if (p == NULL || call->tool == NULL) {
		rc = ENGINE_ENOTFOUND;
		engine_invalid(err, "tool '%s/%s' is not available in flowcgi",
		    call->provider ? call->provider : "",
		    call->tool ? call->tool : "");
		goto out;
	}
	/* a built-in provider's credentials, from Settings > Tools */
	if (c.credentials == NULL && p->credentials) {
		/* a native provider may have a manifest for its
		 * credentials' schema (native: true) */
		m = tool_manifest_find(e, call->provider);
		if ((rc = tool_credentials_open(e, m ? m->name : p->name, err,
		    &creds)) != 0)
			goto out;
		c.credentials = creds;
	}
	rc = p->invoke(e, &c, err, out);
out:
	if (rc != 0)
		span_error(s, err);
	span_end(s);
	json_decref(creds);
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
	if ((p = tool_provider_lookup(e, call->provider,
	    call->provider_type)) == NULL) {
		engine_invalid(err, "tool provider '%s' is not available in "
		    "flowcgi", call->provider ? call->provider : "");
		goto out;
	}
	/* a workflow tool answers to the name its caller gives it */
	c.tool = p == &tool_provider_workflow ? call->tool : NULL;
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
			if ((one = json_array()) == NULL ||
			    json_array_append(one, t) != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
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

/* ====== Tools an agent configured ====== */

/* The provider an agent's tool entry names: provider_name, or for a
 * workflow tool the app id in provider_id when it has one. */
static const char *
cfg_provider(const json_t *cfg, const char *type)
{
	const char *id = json_string_value(json_object_get(cfg,
	    "provider_id"));

	if (type != NULL && strcmp(type, "workflow") == 0 && id != NULL &&
	    *id != '\0')
		return id;
	return json_string_value(json_object_get(cfg, "provider_name"));
}

int
tool_configured(struct engine *e, const json_t *cfg, const json_t *node,
    struct mcp_pool *mcp, char *err, char **description, json_t **schema,
    json_t **fixed)
{
	struct tool_call	 call;
	json_t			*defs = NULL, *d, *props, *pv, *sch = NULL;
	json_t			*fx = NULL;
	const char		*k, *desc;
	void			*tmp;
	int			 rc, bad = 0;

	*description = NULL;
	*schema = *fixed = NULL;
	memset(&call, 0, sizeof(call));
	call.provider_type = json_string_value(json_object_get(cfg, "type"));
	call.provider = cfg_provider(cfg, call.provider_type);
	call.tool = json_string_value(json_object_get(cfg, "tool_name"));
	call.node = node;
	if (call.provider_type != NULL && strcmp(call.provider_type, "mcp") ==
	    0)
		call.mcp = mcp;
	err[0] = '\0';
	if (call.provider == NULL || call.tool == NULL)
		return engine_invalid(err, "the tool has no provider_name or "
		    "tool_name");
	if ((rc = tool_describe(e, &call, err, &defs)) != 0)
		return rc;
	d = json_array_get(defs, 0);
	desc = json_string_value(json_object_get(d, "description"));
	sch = json_deep_copy(json_object_get(d, "parameters"));
	if (!json_is_object(sch)) {
		json_decref(sch);
		sch = json_pack("{s:s,s:{}}", "type", "object", "properties");
	}
	/* settings and non-auto parameters are fixed by the node */
	fx = json_object();
	json_object_foreach((json_t *)json_object_get(cfg, "settings"), k, pv)
		if (json_object_get(pv, "value") != NULL &&
		    !json_is_null(json_object_get(pv, "value")) &&
		    json_object_set(fx, k, json_object_get(pv, "value")) != 0)
			bad = 1;
	json_object_foreach_safe((json_t *)json_object_get(cfg, "parameters"),
	    tmp, k, pv)
		if (json_integer_value(json_object_get(pv, "auto")) == 0 &&
		    json_object_get(pv, "value") != NULL &&
		    !json_is_null(json_object_get(pv, "value")) &&
		    json_object_set(fx, k, json_object_get(pv, "value")) != 0)
			bad = 1;
	props = json_object_get(sch, "properties");
	json_object_foreach_safe(props, tmp, k, pv)
		if (json_object_get(fx, k) != NULL)
			json_object_del(props, k);
	*description = strdup(desc ? desc : call.tool);
	json_decref(defs);
	if (bad || sch == NULL || fx == NULL || *description == NULL) {
		free(*description);
		*description = NULL;
		json_decref(sch);
		json_decref(fx);
		return ENGINE_ENOMEM;
	}
	*schema = sch;
	*fixed = fx;
	return 0;
}

int
tool_run_configured(struct engine *e, const json_t *cfg, const json_t *fixed,
    const char *args, const json_t *node, struct mcp_pool *mcp, char **out,
    json_t **files)
{
	struct tool_call	 call;
	struct tool_result	 res;
	json_t			*params;
	char			 err[ENGINE_ERRMAX] = "";
	int			 rc;

	*out = NULL;
	params = json_loads(args && *args ? args : "{}", 0, NULL);
	if (!json_is_object(params)) {
		json_decref(params);
		params = json_object();
	}
	if (params == NULL || (fixed != NULL &&
	    json_object_update(params, (json_t *)fixed) != 0)) {
		json_decref(params);
		return ENGINE_ENOMEM;
	}
	memset(&res, 0, sizeof(res));
	memset(&call, 0, sizeof(call));
	call.provider_type = json_string_value(json_object_get(cfg, "type"));
	call.provider = cfg_provider(cfg, call.provider_type);
	call.tool = json_string_value(json_object_get(cfg, "tool_name"));
	call.params = params;
	call.node = node;
	if (call.provider_type != NULL && strcmp(call.provider_type, "mcp") ==
	    0)
		call.mcp = mcp;
	rc = tool_invoke(e, &call, err, &res);
	json_decref(params);
	if (rc != 0) {
		/* the model sees the failure and may try otherwise */
		size_t n = strlen(err) + 32;

		if ((*out = malloc(n)) != NULL)
			snprintf(*out, n, "tool error: %s", err);
		tool_result_release(&res);
		return *out != NULL ? 0 : ENGINE_ENOMEM;
	}
	if (res.text.len > 0 || res.json == NULL)
		*out = strdup(res.text.p ? res.text.p : "");
	else
		tool_json_dumps(res.json, 0, out);
	if (files != NULL)
		*files = res.files ? json_incref(res.files) : NULL;
	tool_result_release(&res);
	return *out != NULL ? 0 : ENGINE_ENOMEM;
}

/* ====== Results ====== */

int
tool_result_text(struct tool_result *r, const char *s, size_t n)
{
	if (r->text.len + n > TOOL_MAX_TEXT)
		return ENGINE_ELIMIT;
	dbuf_add(&r->text, s, n);
	return r->text.err ? ENGINE_ENOMEM : 0;
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
	dbuf_free(&r->text);
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
	int			 bad;

	for (i = 0; arr != NULL && defs[i].name != NULL; i++) {
		props = json_object();
		req = json_array();
		bad = 0;
		for (p = defs[i].params; p != NULL && p->name != NULL; p++) {
			bad |= json_object_set_new(props, p->name, json_pack(
			    "{s:s,s:s}", "type", p->type, "description",
			    p->description));
			if (p->required)
				bad |= json_array_append_new(req,
				    json_string(p->name));
		}
		t = json_pack("{s:s,s:s,s:{s:s,s:o,s:o}}", "name",
		    defs[i].name, "description", defs[i].description,
		    "parameters", "type", "object", "properties", props,
		    "required", req);
		if (bad) {
			json_decref(t);
			t = NULL;
		}
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
dumps(struct dbuf *sb, const json_t *v, int ascii, int depth)
{
	const char	*k;
	json_t		*x;
	size_t		 i;
	int		 first = 1;

	if (depth > TOOL_MAX_DEPTH)
		return ENGINE_EINVAL;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		dbuf_addstr(sb, "{");
		json_object_foreach((json_t *)v, k, x) {
			if (!first)
				dbuf_addstr(sb, ", ");
			first = 0;
			tpl_add_json_str(sb, k, strlen(k), ascii);
			dbuf_addstr(sb, ": ");
			if (dumps(sb, x, ascii, depth + 1) != 0)
				return ENGINE_EINVAL;
		}
		dbuf_addstr(sb, "}");
		break;
	case JSON_ARRAY:
		dbuf_addstr(sb, "[");
		json_array_foreach(v, i, x) {
			if (i > 0)
				dbuf_addstr(sb, ", ");
			if (dumps(sb, x, ascii, depth + 1) != 0)
				return ENGINE_EINVAL;
		}
		dbuf_addstr(sb, "]");
		break;
	case JSON_STRING:
		tpl_add_json_str(sb, json_string_value(v), json_string_length(v),
		    ascii);
		break;
	case JSON_INTEGER:
		tpl_add_py_int(sb, json_integer_value(v));
		break;
	case JSON_REAL:
		tpl_add_py_float(sb, json_real_value(v));
		break;
	case JSON_TRUE:
		dbuf_addstr(sb, "true");
		break;
	case JSON_FALSE:
		dbuf_addstr(sb, "false");
		break;
	default:
		dbuf_addstr(sb, "null");
		break;
	}
	return 0;
}

int
tool_json_dumps(const json_t *v, int ascii, char **out)
{
	struct dbuf	sb = { 0 };
	int		rc;

	*out = NULL;
	if ((rc = dumps(&sb, v, ascii, 0)) != 0) {
		dbuf_free(&sb);
		return rc;
	}
	if ((*out = dbuf_take(&sb, NULL)) == NULL)
		return ENGINE_ENOMEM;
	return 0;
}

/* ====== Files a tool is given ====== */

int
tool_file_bytes(struct engine *e, const json_t *f, const char *what,
    char *err, char **data, size_t *len)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	const char		*url, *comma, *name;
	int			 rc;

	*data = NULL;
	*len = 0;
	name = json_string_value(json_object_get(f, "filename"));
	url = json_string_value(json_object_get(f, "url"));
	if (url == NULL || *url == '\0')
		url = json_string_value(json_object_get(f, "remote_url"));
	if (url == NULL)
		return engine_invalid(err, "the %s '%s' has no URL to "
		    "read it from", what, name ? name : "");
	if (strncmp(url, "data:", 5) == 0 && (comma = strchr(url, ',')) !=
	    NULL) {
		if (comma - url >= 7 && strncmp(comma - 7, ";base64", 7) == 0) {
			if (file_b64_decode(comma + 1, strlen(comma + 1), data,
			    len) != 0)
				return engine_invalid(err, "the %s "
				    "'%s' is not valid base64", what, name ?
				    name : "");
		} else if ((*data = strdup(comma + 1)) != NULL)
			*len = strlen(*data);
		else
			return ENGINE_ENOMEM;
		if ((int64_t)*len > e->conf->tools_max_file) {
			free(*data);
			*data = NULL;
			return engine_invalid(err, "the %s '%s' is "
			    "larger than tools.max_file_size", what, name ?
			    name : "");
		}
		return 0;
	}
	if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url,
	    "https://", 8) != 0)
		return engine_invalid(err, "the %s '%s' has no data: "
		    "or http(s) URL", what, name ? name : "");
	memset(&req, 0, sizeof(req));
	req.url = url;
	req.follow = 1;
	req.timeout = e->conf->tools_timeout;
	req.max_bytes = e->conf->tools_max_file;
	if ((rc = outbound_fetch(e, &req, err, &resp)) != 0)
		return rc;
	if (resp.status < 200 || resp.status >= 300) {
		rc = engine_invalid(err, "the %s '%s': its URL "
		    "answered status %ld", what, name ? name : "",
		    resp.status);
		outbound_resp_release(&resp);
		return rc;
	}
	*data = resp.body;
	*len = resp.len;
	resp.body = NULL;
	outbound_resp_release(&resp);
	return 0;
}
