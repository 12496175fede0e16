/*
 * catalog.c — what the console shows of the built-in tool providers
 * (Dify's ToolProviderApiEntity and ToolApiEntity shapes), and what an
 * imported DSL names that this server cannot run (Dify's
 * leaked_dependencies).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tools/tools.h"

/* ====== Dify's shapes ====== */

static json_t *
i18n(const json_t *v, const char *dflt)
{
	if (json_is_object(v))
		return json_deep_copy(v);
	return json_pack("{s:s,s:s}", "en_US", json_is_string(v) ?
	    json_string_value(v) : dflt, "zh_Hans", json_is_string(v) ?
	    json_string_value(v) : dflt);
}

/* A manifest tool as Dify's ToolApiEntity. */
static json_t *
tool_entity(const struct tool_manifest *m, const json_t *t)
{
	const json_t	*id = json_object_get(t, "identity"), *p;
	const json_t	*d = json_object_get(t, "description");
	const char	*name = json_string_value(json_object_get(id, "name"));
	json_t		*params = json_array(), *out;
	size_t		 i;

	json_array_foreach(json_object_get(t, "parameters"), i, p)
		if (params != NULL && json_array_append(params, (json_t *)p) !=
		    0) {
			json_decref(params);
			params = NULL;
		}
	out = json_pack("{s:s,s:s,s:o,s:o,s:o*,s:[],s:n}", "author",
	    json_string_value(json_object_get(json_object_get(m->doc,
	    "identity"), "author")) ? json_string_value(json_object_get(
	    json_object_get(m->doc, "identity"), "author")) : "flowcgi",
	    "name", name, "label", i18n(json_object_get(id, "label"), name),
	    "description", i18n(json_object_get(d, "human"), ""),
	    "parameters", params, "labels", "output_schema");
	return out;
}

/* A native tool ({name, description, parameters: JSON schema}) as one. */
static json_t *
native_entity(const json_t *t)
{
	const json_t	*props = json_object_get(json_object_get(t,
			    "parameters"), "properties"), *req, *x, *r;
	const char	*name = json_string_value(json_object_get(t, "name"));
	const char	*k, *desc;
	json_t		*params = json_array();
	size_t		 i;
	int		 required, bad = params == NULL;

	req = json_object_get(json_object_get(t, "parameters"), "required");
	json_object_foreach((json_t *)props, k, x) {
		required = 0;
		json_array_foreach(req, i, r)
			if (json_is_string(r) && strcmp(json_string_value(r),
			    k) == 0)
				required = 1;
		desc = json_string_value(json_object_get(x, "description"));
		bad |= json_array_append_new(params, json_pack(
		    "{s:s,s:{s:s},s:{s:s},s:s,s:s,s:s,s:b}", "name", k,
		    "label", "en_US", k, "human_description", "en_US",
		    desc ? desc : "", "llm_description", desc ? desc : "",
		    "type", json_string_value(json_object_get(x, "type")) &&
		    strcmp(json_string_value(json_object_get(x, "type")),
		    "integer") != 0 ? json_string_value(json_object_get(x,
		    "type")) : "number", "form", "llm", "required", required));
	}
	desc = json_string_value(json_object_get(t, "description"));
	if (bad) {
		json_decref(params);
		return NULL;
	}
	return json_pack("{s:s,s:s,s:{s:s},s:{s:s},s:o,s:[],s:n}", "author",
	    "flowcgi", "name", name, "label", "en_US", name, "description",
	    "en_US", desc ? desc : "", "parameters", params, "labels",
	    "output_schema");
}

/* 1 when provider m needs no credential, or every required one is set. */
static int
authorized(struct engine *e, const struct tool_manifest *m)
{
	const json_t	*c;
	const char	*k;
	int		 needs = 0;

	json_object_foreach(json_object_get(m->doc,
	    "credentials_for_provider"), k, c)
		if (json_is_true(json_object_get(c, "required")))
			needs = 1;
	return !needs || engine_tool_credentials_set(e, m->name);
}

static json_t *
manifest_entity(struct engine *e, const struct tool_manifest *m,
    int with_tools)
{
	const json_t	*id = json_object_get(m->doc, "identity"), *t;
	json_t		*tools = json_array(), *out, *creds = NULL, *schema;
	const char	*k;
	json_t		*c;
	size_t		 i;
	int		 bad = tools == NULL;

	if (with_tools)
		json_array_foreach(json_object_get(m->doc, "tools"), i, t)
			bad |= json_array_append_new(tools, tool_entity(m, t));
	if (engine_tool_credentials_get(e, m->name, &creds) != 0)
		creds = NULL;
	/* Dify's credentials_schema: a list with each entry's name */
	schema = json_array();
	json_object_foreach(json_object_get(m->doc,
	    "credentials_for_provider"), k, c) {
		json_t *one = json_deep_copy(c);

		bad |= one == NULL || json_object_set_new(one, "name",
		    json_string(k)) != 0 || json_array_append_new(schema,
		    one) != 0;
	}
	out = json_pack("{s:s,s:s,s:s,s:o,s:o,s:s,s:s,s:o,s:b,s:b,s:o,s:o,"
	    "s:o}", "id", m->name, "author", json_string_value(json_object_get(
	    id, "author")) ? json_string_value(json_object_get(id, "author")) :
	    "flowcgi", "name", m->name, "description", i18n(json_object_get(id,
	    "description"), ""), "label", i18n(json_object_get(id, "label"),
	    m->name), "icon", json_string_value(json_object_get(id, "icon")) ?
	    json_string_value(json_object_get(id, "icon")) : "", "type",
	    "builtin", "team_credentials", creds ? creds : json_object(),
	    "is_team_authorization", authorized(e, m), "allow_delete",
	    engine_tool_credentials_set(e, m->name), "tools", tools, "labels",
	    json_object_get(id, "tags") ? json_incref(json_object_get(id,
	    "tags")) : json_array(), "credentials_schema", schema);
	if (out != NULL && json_is_string(json_object_get(m->doc,
	    "unsupported")))
		bad |= json_object_set(out, "unsupported", json_object_get(
		    m->doc, "unsupported"));
	if (out != NULL && json_object_get(id, "aliases") != NULL)
		bad |= json_object_set(out, "aliases", json_object_get(id,
		    "aliases"));
	if (bad) {
		json_decref(out);
		out = NULL;
	}
	return out;
}

static json_t *
native_provider_entity(struct engine *e, const char *name, int with_tools)
{
	struct tool_call	 call;
	json_t			*defs = NULL, *tools = json_array(), *t;
	char			 err[ENGINE_ERRMAX];
	size_t			 i;
	int			 bad = tools == NULL;

	memset(&call, 0, sizeof(call));
	call.provider = name;
	call.provider_type = "builtin";
	if (with_tools && tool_describe(e, &call, err, &defs) == 0)
		json_array_foreach(defs, i, t)
			bad |= json_array_append_new(tools, native_entity(t));
	json_decref(defs);
	if (bad) {
		json_decref(tools);
		return NULL;
	}
	return json_pack("{s:s,s:s,s:s,s:{s:s},s:{s:s},s:s,s:s,s:{},s:b,s:b,"
	    "s:o,s:[],s:[]}", "id", name, "author", "flowcgi", "name", name,
	    "description", "en_US", "", "label", "en_US", name, "icon", "",
	    "type", "builtin", "team_credentials", "is_team_authorization", 1,
	    "allow_delete", 0, "tools", tools, "labels",
	    "credentials_schema");
}

int
engine_tool_builtin_list(struct engine *e, int with_tools, json_t **out)
{
	const struct tool_provider	*p;
	json_t				*arr = json_array();
	size_t				 i;
	int				 bad = arr == NULL;

	*out = NULL;
	/* every native provider of the registry, unless a manifest
	 * (native: true) describes it below */
	for (i = 0; (p = tool_builtin_at(i)) != NULL; i++)
		if (tool_manifest_find(e, p->name) == NULL)
			bad |= json_array_append_new(arr,
			    native_provider_entity(e, p->name, with_tools));
	for (i = 0; i < tool_manifest_count(e); i++)
		bad |= json_array_append_new(arr, manifest_entity(e,
		    tool_manifest_at(e, i), with_tools));
	if (bad) {
		json_decref(arr);
		return ENGINE_ENOMEM;
	}
	*out = arr;
	return 0;
}

int
engine_tool_builtin_get(struct engine *e, const char *id, json_t **out)
{
	const struct tool_manifest	*m = tool_manifest_find(e, id);
	const struct tool_provider	*p;

	*out = NULL;
	if (m != NULL)
		*out = manifest_entity(e, m, 1);
	else if ((p = tool_provider_find(id, "builtin")) != NULL &&
	    p != &tool_provider_api && p != &tool_provider_mcp)
		*out = native_provider_entity(e, p->name, 1);
	else
		return ENGINE_ENOTFOUND;
	return *out ? 0 : ENGINE_ENOMEM;
}

/* ====== What a DSL names that will not run ====== */

struct deps {
	struct engine	*e;
	json_t		*seen;		/* provider -> entry */
	json_t		*out;		/* the entries, in order */
	int		 bad;
};

/* The plugin id of a dependency: "langgenius/tavily" of
 * "langgenius/tavily:0.0.5@abc". NULL when it has none. */
static int
dep_plugin(const json_t *dep, char *buf, size_t n)
{
	const json_t	*v = json_object_get(dep, "value");
	const char	*s;
	size_t		 l;

	s = json_string_value(json_object_get(v,
	    "marketplace_plugin_unique_identifier"));
	if (s == NULL)
		s = json_string_value(json_object_get(v,
		    "plugin_unique_identifier"));
	if (s == NULL)
		s = json_string_value(json_object_get(v,
		    "github_plugin_unique_identifier"));
	if (s == NULL)
		return 0;
	l = strcspn(s, ":@");
	if (l == 0 || l >= n)
		return 0;
	memcpy(buf, s, l);
	buf[l] = '\0';
	return 1;
}

/* Records one tool reference of node node_id. */
static void
note_tool(struct deps *d, const char *provider, const char *type,
    const char *tool, const char *node_id)
{
	const struct tool_manifest	*m;
	const struct tool_provider	*p;
	json_t				*ent;
	const char			*reason = NULL;
	char				 msg[512];

	if (provider == NULL || *provider == '\0')
		return;
	/* custom api / mcp tools are the console's to register */
	if (type != NULL && (strcmp(type, "api") == 0 ||
	    strcmp(type, "mcp") == 0 || strcmp(type, "app") == 0 ||
	    strcmp(type, "dataset-retrieval") == 0))
		return;
	/* a workflow tool is another published workflow app of this server */
	if (type != NULL && strcmp(type, "workflow") == 0) {
		char werr[ENGINE_ERRMAX];

		if (workflow_tool_app_ok(d->e, provider, werr) == 0)
			return;
		reason = "not_served";
		snprintf(msg, sizeof(msg), "%s", werr);
		goto note;
	}
	m = tool_manifest_find(d->e, provider);
	p = m ? NULL : tool_provider_find(provider, type);
	if (m != NULL && json_is_string(json_object_get(m->doc,
	    "unsupported"))) {
		reason = "unsupported";
		snprintf(msg, sizeof(msg), "tool provider '%s' is not supported "
		    "by flowcgi: %s", provider, json_string_value(
		    json_object_get(m->doc, "unsupported")));
	} else if (m == NULL && p == NULL) {
		reason = "not_served";
		snprintf(msg, sizeof(msg), "tool provider '%s' (tool '%s') is "
		    "not available in flowcgi", provider, tool ? tool : "");
	} else if (m != NULL && tool != NULL && tool_manifest_tool(m, tool) ==
	    NULL) {
		reason = "not_served";
		snprintf(msg, sizeof(msg), "tool '%s' of provider '%s' is not "
		    "available in flowcgi", tool, m->name);
	} else if (m != NULL && !authorized(d->e, m)) {
		reason = "needs_credentials";
		snprintf(msg, sizeof(msg), "tool provider '%s' needs its "
		    "credentials: set them in Settings > Tools", m->name);
	}
	if (reason == NULL)
		return;
note:
	if ((ent = json_object_get(d->seen, provider)) == NULL) {
		ent = json_pack("{s:s,s:{s:s},s:n,s:s,s:s,s:s,s:[],s:[]}",
		    "type", "tool", "value", "provider", provider,
		    "current_identifier", "provider", provider, "reason",
		    reason, "message", msg, "tools", "nodes");
		if (ent == NULL || json_object_set_new(d->seen, provider,
		    ent) != 0 || json_array_append(d->out, ent) != 0) {
			d->bad = 1;
			return;
		}
	}
	if (tool != NULL)
		d->bad |= json_array_append_new(json_object_get(ent, "tools"),
		    json_string(tool));
	if (node_id != NULL)
		d->bad |= json_array_append_new(json_object_get(ent, "nodes"),
		    json_string(node_id));
}

/* One tool reference of a DSL: provider, type, tool, node (or NULL). */
typedef void (*tool_ref_fn)(void *arg, const char *provider,
    const char *type, const char *tool, const char *node_id);

/* An agent's or llm's tool list [{type, provider_name, tool_name}]. */
static void
walk_list(const json_t *list, const char *node_id, tool_ref_fn fn, void *arg)
{
	const json_t	*t;
	size_t		 i;

	json_array_foreach(list, i, t) {
		if (json_is_false(json_object_get(t, "enabled")))
			continue;
		fn(arg, json_string_value(json_object_get(t,
		    "provider_name")) ? json_string_value(json_object_get(t,
		    "provider_name")) : json_string_value(json_object_get(t,
		    "provider_id")), json_string_value(json_object_get(t,
		    "type")) ? json_string_value(json_object_get(t, "type")) :
		    json_string_value(json_object_get(t, "provider_type")),
		    json_string_value(json_object_get(t, "tool_name")),
		    node_id);
	}
}

/* Every tool a DSL names: tool nodes, agent and llm nodes' tool lists,
 * a chat app's agent_mode (the nodes of containers are in the same list). */
static void
walk_tools(const json_t *dsl, tool_ref_fn fn, void *arg)
{
	const json_t	*n, *data;
	const char	*type, *id;
	size_t		 i;

	json_array_foreach(json_object_get(json_object_get(json_object_get(
	    dsl, "workflow"), "graph"), "nodes"), i, n) {
		data = json_object_get(n, "data");
		type = json_string_value(json_object_get(data, "type"));
		id = json_string_value(json_object_get(n, "id"));
		if (type == NULL)
			continue;
		if (strcmp(type, "tool") == 0)
			fn(arg, json_string_value(json_object_get(data,
			    "provider_id")) ? json_string_value(
			    json_object_get(data, "provider_id")) :
			    json_string_value(json_object_get(data,
			    "provider_name")), json_string_value(
			    json_object_get(data, "provider_type")),
			    json_string_value(json_object_get(data,
			    "tool_name")), id);
		else if (strcmp(type, "agent") == 0)
			walk_list(json_object_get(json_object_get(
			    json_object_get(data, "agent_parameters"), "tools"),
			    "value"), id, fn, arg);
		else if (strcmp(type, "llm") == 0)
			walk_list(json_object_get(data, "tools"), id, fn, arg);
	}
	walk_list(json_object_get(json_object_get(json_object_get(dsl,
	    "model_config"), "agent_mode"), "tools"), NULL, fn, arg);
}

static void
note_ref(void *arg, const char *provider, const char *type, const char *tool,
    const char *node_id)
{
	note_tool(arg, provider, type, tool, node_id);
}

int
engine_tool_deps(struct engine *e, const json_t *dsl, json_t **out)
{
	struct deps	 d;
	const json_t	*dep;
	char		 plugin[256];
	size_t		 i;

	*out = NULL;
	memset(&d, 0, sizeof(d));
	d.e = e;
	d.seen = json_object();
	d.out = json_array();
	if (d.seen == NULL || d.out == NULL) {
		json_decref(d.seen);
		json_decref(d.out);
		return ENGINE_ENOMEM;
	}
	walk_tools(dsl, note_ref, &d);
	/* plugins the DSL depends on that are tool providers flowcgi lacks:
	 * those its nodes name were noted above; a dependency no node names
	 * (a model provider, an agent strategy) is not a tool */
	json_array_foreach(json_object_get(dsl, "dependencies"), i, dep) {
		json_t	*ent;
		size_t	 j;

		if (!dep_plugin(dep, plugin, sizeof(plugin)))
			continue;
		json_array_foreach(d.out, j, ent) {
			const char *p = json_string_value(json_object_get(ent,
			    "provider"));

			if (p != NULL && strncmp(p, plugin, strlen(plugin)) ==
			    0 && (p[strlen(plugin)] == '\0' ||
			    p[strlen(plugin)] == '/')) {
				d.bad |= json_object_set(ent, "type",
				    json_object_get(dep, "type"));
				d.bad |= json_object_set(ent, "value",
				    json_object_get(dep, "value"));
			}
		}
	}
	json_decref(d.seen);
	if (d.bad) {
		json_decref(d.out);
		return ENGINE_ENOMEM;
	}
	*out = d.out;
	return 0;
}

int
engine_app_tool_deps(struct engine *e, const char *id, json_t **out)
{
	json_t	*rec = NULL;
	int	 rc;

	*out = NULL;
	if ((rc = engine_app_get_full(e, id, &rec)) != 0)
		return rc;
	rc = engine_tool_deps(e, json_object_get(rec, "dsl"), out);
	json_decref(rec);
	return rc;
}

/* ====== Which apps use which provider ====== */

struct usage {
	struct engine	*e;
	json_t		*names;		/* provider names seen in one app */
};

static void
usage_ref(void *arg, const char *provider, const char *type,
    const char *tool, const char *node_id)
{
	struct usage			*u = arg;
	const struct tool_manifest	*m;
	const struct tool_provider	*p;

	if (provider == NULL || (type != NULL && (strcmp(type, "api") == 0 ||
	    strcmp(type, "mcp") == 0 || strcmp(type, "workflow") == 0)))
		return;
	if ((m = tool_manifest_find(u->e, provider)) != NULL)
		json_object_set_new(u->names, m->name, json_true());
	else if ((p = tool_provider_find(provider, type)) != NULL)
		json_object_set_new(u->names, p->name, json_true());
}

int
engine_tool_usage(struct engine *e, json_t **out)
{
	struct app_query	 q;
	struct usage		 u;
	json_t			*page = NULL, *all = NULL, *rec, *full, *arr;
	const char		*k, *id;
	json_t			*v;
	size_t			 i;
	int			 rc = 0, pg;

	*out = NULL;
	if ((all = json_object()) == NULL)
		return ENGINE_ENOMEM;
	memset(&u, 0, sizeof(u));
	u.e = e;
	for (pg = 1; rc == 0; pg++) {
		memset(&q, 0, sizeof(q));
		q.page = pg;
		q.limit = 100;
		if ((rc = engine_app_list(e, &q, &page)) != 0)
			break;
		json_array_foreach(json_object_get(page, "data"), i, rec) {
			id = json_string_value(json_object_get(rec, "id"));
			full = NULL;
			if (id == NULL || engine_app_get_full(e, id, &full) != 0)
				continue;
			if ((u.names = json_object()) == NULL) {
				json_decref(full);
				rc = ENGINE_ENOMEM;
				break;
			}
			walk_tools(json_object_get(full, "dsl"), usage_ref, &u);
			json_object_foreach(u.names, k, v) {
				if ((arr = json_object_get(all, k)) == NULL &&
				    json_object_set_new(all, k, arr =
				    json_array()) != 0) {
					rc = ENGINE_ENOMEM;
					break;
				}
				if (json_array_append_new(arr, json_pack(
				    "{s:s,s:O}", "id", id, "name",
				    json_object_get(rec, "name"))) != 0)
					rc = ENGINE_ENOMEM;
			}
			json_decref(u.names);
			json_decref(full);
		}
		if (!json_is_true(json_object_get(page, "has_more"))) {
			json_decref(page);
			break;
		}
		json_decref(page);
		page = NULL;
	}
	if (rc != 0) {
		json_decref(all);
		return rc;
	}
	*out = all;
	return 0;
}
