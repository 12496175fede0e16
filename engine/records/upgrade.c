/*
 * upgrade.c — "Upgrade to sandboxed runtime" (Dify's
 * AppRuntimeUpgradeService): a copy of a classic workflow app named
 * "<name> (Sandboxed)", the original untouched, in which
 *
 *  - every `agent` node becomes an `llm` node, with computer_use when it
 *    had tools, field by field as Dify's _agent_data_to_llm_data maps it
 *    (tool tokens in the system message, skill on each message); an
 *    agent without a usable model is left as it is, counted as skipped
 *    and listed in the answer's skipped_nodes with the reason;
 *  - every reference to an LLM node's text / reasoning_content, as a
 *    selector or inside a {{#...#}} template anywhere in the graph, is
 *    rewritten to generation.content / generation.reasoning_content;
 *  - features.sandbox.enabled is true.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/records/records.h"

/* A new reference to o[k] when it is an object, else a new {}. */
static json_t *
obj_or_empty(const json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_object(v) ? json_incref(v) : json_object();
}

static const char *
sval(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* agent_parameters.<name>.value, or NULL. */
static json_t *
agent_param(const json_t *data, const char *name)
{
	return json_object_get(json_object_get(json_object_get(data,
	    "agent_parameters"), name), "value");
}

/* A selector ["a", "b"] as the template {{#a.b#}}. */
static json_t *
selector_template(const json_t *sel)
{
	json_t	*part;
	size_t	 i;
	char	 buf[512];
	size_t	 n = 0;

	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "{{#");
	json_array_foreach(sel, i, part)
		n += (size_t)snprintf(buf + n, n < sizeof(buf) ? sizeof(buf) -
		    n : 0, "%s%s", i ? "." : "", json_string_value(part) ?
		    json_string_value(part) : "");
	if (n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, "#}}");
	return json_string(buf);
}

/*
 * The system text: the instruction, then a blank line and the tool
 * tokens, one group per provider in the order first seen (a group of one
 * is the bare token, of more "[tok,tok]"), groups joined by a space; as
 * Dify's _build_prompt_template writes it. *meta gets each token's
 * reference {type, configuration: {fields: []}, enabled[, credential_id]}
 * by uuid. NULL when out of memory.
 */
static char *
system_text(const char *ins, const json_t *tools, json_t *meta)
{
	struct dbuf	 sb = { 0 };
	json_t		*groups = json_object(), *order = json_array();
	json_t		*g, *t;
	json_t		*ref;
	const char	*prov, *cred;
	char		*text = NULL;
	char		 uuid[37];
	size_t		 i, j;
	int		 bad = 0;

	if (groups == NULL || order == NULL)
		goto out;
	json_array_foreach(tools, i, t) {
		if (!json_is_object(t))
			continue;
		engine_uuid(uuid);
		prov = sval(t, "provider_name") ? sval(t, "provider_name") : "";
		if ((g = json_object_get(groups, prov)) == NULL &&
		    (json_object_set_new(groups, prov, g = json_array()) != 0 ||
		    json_array_append_new(order, json_string(prov)) != 0))
			goto out;
		{
			struct dbuf tok = { 0 };

			dbuf_addstr(&tok, "\xC2\xA7[tool].[");
			dbuf_addstr(&tok, prov);
			dbuf_addstr(&tok, "].[");
			dbuf_addstr(&tok, sval(t, "tool_name") ? sval(t,
			    "tool_name") : "");
			dbuf_addstr(&tok, "].[");
			dbuf_addstr(&tok, uuid);
			dbuf_addstr(&tok, "]\xC2\xA7");
			bad |= tok.err == DBUF_ENOMEM;
			bad |= json_array_append_new(g, json_string(dbuf_str(
			    &tok)));
			dbuf_free(&tok);
		}
		ref = json_pack("{s:s,s:{s:[]},s:b}", "type", sval(t, "type") ?
		    sval(t, "type") : "builtin", "configuration", "fields",
		    "enabled", 1);
		if ((cred = sval(t, "credential_id")) != NULL && *cred != '\0')
			bad |= json_object_set_new(ref, "credential_id",
			    json_string(cred));
		bad |= json_object_set_new(meta, uuid, ref);
		if (bad)
			goto out;
	}
	dbuf_addstr(&sb, ins ? ins : "");
	json_array_foreach(order, i, t) {
		g = json_object_get(groups, json_string_value(t));
		if (i == 0 && sb.len > 0)
			dbuf_addstr(&sb, "\n\n");
		else if (i > 0)
			dbuf_addstr(&sb, " ");
		if (json_array_size(g) > 1)
			dbuf_addstr(&sb, "[");
		json_array_foreach(g, j, ref) {
			if (j > 0)
				dbuf_addstr(&sb, ",");
			dbuf_addstr(&sb, json_string_value(ref));
		}
		if (json_array_size(g) > 1)
			dbuf_addstr(&sb, "]");
	}
	dbuf_addstr(&sb, "");
	text = dbuf_take(&sb, NULL);
out:
	dbuf_free(&sb);
	json_decref(groups);
	json_decref(order);
	return text;
}

/*
 * default_value of an agent: the text entry also fills generation, as
 * the upgraded graph reads generation.content where it read text. NULL
 * when out of memory.
 */
static json_t *
default_values(const json_t *dv)
{
	json_t	*out = json_deep_copy(dv), *d;
	size_t	 i, n = json_array_size(dv);

	for (i = 0; i < n; i++) {
		d = json_array_get(dv, i);
		if (json_is_object(d) && sval(d, "key") != NULL &&
		    strcmp(sval(d, "key"), "text") == 0 &&
		    json_object_get(d, "value") != NULL &&
		    json_array_append_new(out, json_pack("{s:s,s:s,s:{s:O}}",
		    "key", "generation", "type", "object", "value", "content",
		    json_object_get(d, "value"))) != 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/*
 * The llm node data for agent data d, as Dify's _agent_data_to_llm_data
 * makes it, or NULL when it has no usable model (then the agent is
 * skipped and *why says so) or when out of memory (*why NULL).
 */
static json_t *
agent_to_llm(const json_t *d, const char **why)
{
	json_t		*model = agent_param(d, "model"), *tools, *t, *llm;
	json_t		*ntools, *tsettings, *msgs, *meta, *query, *v, *mi;
	const char	*name, *provider, *ins, *ttype, *tprov, *tname;
	char		*text;
	size_t		 i;
	int		 iters, skill, bad = 0;
	static const char *const pass[] = { "version", "error_strategy",
	    "retry_config", "parent_node_id", "isInLoop", "loop_id",
	    "isInIteration", "iteration_id", NULL };

	name = sval(model, "model");
	provider = sval(model, "provider");
	if (!json_is_object(model) || name == NULL || *name == '\0' ||
	    provider == NULL || *provider == '\0') {
		*why = "the agent has no model to convert "
		    "(agent_parameters.model needs provider and model)";
		return NULL;
	}
	*why = NULL;
	llm = json_pack("{s:s,s:s,s:s,s:{s:s,s:s,s:s,s:o}}", "type", "llm",
	    "title", sval(d, "title") ? sval(d, "title") : "LLM", "desc",
	    sval(d, "desc") ? sval(d, "desc") : "", "model", "provider",
	    provider, "name",
	    name, "mode", sval(model, "mode") ? sval(model, "mode") : "chat",
	    "completion_params", obj_or_empty(model, "completion_params"));
	if (llm == NULL)
		return NULL;
	ntools = json_array();
	tsettings = json_array();
	meta = json_object();
	tools = agent_param(d, "tools");
	if (!json_is_array(tools))
		tools = NULL;
	json_array_foreach(tools, i, t) {
		if (!json_is_object(t))
			continue;
		ttype = sval(t, "type") ? sval(t, "type") : "builtin";
		tprov = sval(t, "provider_name") ? sval(t, "provider_name") :
		    "";
		tname = sval(t, "tool_name") ? sval(t, "tool_name") : "";
		bad |= json_array_append_new(ntools, json_pack("{s:b,s:s,s:s,"
		    "s:s,s:O,s:O,s:o,s:o,s:o}", "enabled", 1, "type", ttype,
		    "provider_name", tprov, "tool_name", tname,
		    "plugin_unique_identifier", json_object_get(t,
		    "plugin_unique_identifier") ? json_object_get(t,
		    "plugin_unique_identifier") : json_null(), "credential_id",
		    json_object_get(t, "credential_id") ? json_object_get(t,
		    "credential_id") : json_null(), "parameters",
		    obj_or_empty(t, "parameters"), "settings", json_object_size(
		    json_object_get(t, "settings")) > 0 ? obj_or_empty(t,
		    "settings") : obj_or_empty(t, "tool_configuration"),
		    "extra", obj_or_empty(t, "extra")));
		bad |= json_array_append_new(tsettings, json_pack(
		    "{s:s,s:s,s:s,s:b}", "type", ttype, "provider", tprov,
		    "tool_name", tname, "enabled", 1));
	}
	skill = json_array_size(ntools) > 0;
	/* instruction and tool tokens -> the system message */
	ins = json_string_value(agent_param(d, "instruction"));
	text = system_text(ins, skill ? tools : NULL, meta);
	bad |= text == NULL;
	msgs = json_array();
	if (text != NULL && *text != '\0') {
		json_t *sys = json_pack("{s:s,s:s,s:b}", "role", "system",
		    "text", text, "skill", skill);

		if (json_object_size(meta) > 0)
			bad |= json_object_set_new(sys, "metadata", json_pack(
			    "{s:O,s:[]}", "tools", meta, "files"));
		bad |= json_array_append_new(msgs, sys);
	}
	free(text);
	query = agent_param(d, "query");
	if (json_is_array(query) && json_array_size(query) >= 2)
		bad |= json_array_append_new(msgs, json_pack("{s:s,s:o,s:b}",
		    "role", "user", "text", selector_template(query), "skill",
		    skill));
	else if (json_is_string(query) && *json_string_value(query) != '\0')
		bad |= json_array_append_new(msgs, json_pack("{s:s,s:O,s:b}",
		    "role", "user", "text", query, "skill", skill));
	if (json_array_size(msgs) == 0)
		bad |= json_array_append_new(msgs, json_pack("{s:s,s:s,s:b}",
		    "role", "user", "text", "", "skill", skill));
	bad |= json_object_set_new(llm, "prompt_template", msgs);
	bad |= json_object_set_new(llm, "prompt_config", json_pack("{s:[]}",
	    "jinja2_variables"));
	v = json_object_get(d, "memory");
	bad |= json_object_set(llm, "memory", v ? v : json_null());
	bad |= json_object_set_new(llm, "context", json_pack("{s:b}",
	    "enabled", 0));
	bad |= json_object_set_new(llm, "vision", json_pack("{s:b}",
	    "enabled", 0));
	bad |= json_object_set_new(llm, "computer_use", json_boolean(skill));
	bad |= json_object_set_new(llm, "structured_output_switch_on",
	    json_false());
	bad |= json_object_set_new(llm, "reasoning_format",
	    json_string("separated"));
	bad |= json_object_set_new(llm, "tools", ntools);
	bad |= json_object_set_new(llm, "tool_settings", tsettings);
	/* maximum_iterations.value as it is; 100 when not given */
	mi = json_object_get(json_object_get(json_object_get(d,
	    "agent_parameters"), "maximum_iterations"), "value");
	iters = 100;
	if (json_is_integer(mi))
		iters = (int)json_integer_value(mi);
	else if (json_is_string(mi))
		iters = (int)strtol(json_string_value(mi), NULL, 10);
	else if (json_is_real(mi))
		iters = (int)json_real_value(mi);
	bad |= json_object_set_new(llm, "max_iterations", json_integer(iters));
	for (i = 0; pass[i] != NULL; i++)
		if ((v = json_object_get(d, pass[i])) != NULL)
			bad |= json_object_set(llm, pass[i], v);
	if ((v = json_object_get(d, "default_value")) != NULL)
		bad |= json_object_set_new(llm, "default_value",
		    json_is_array(v) ? default_values(v) : json_incref(v));
	json_decref(meta);
	if (bad) {
		json_decref(llm);
		return NULL;
	}
	return llm;
}

/* ====== Rewriting references to LLM outputs ====== */

/* Rewrites [id, "text"|"reasoning_content", ...] in place: 0 or -1. */
static int
rewrite_selector(json_t *a, const json_t *llm_ids)
{
	const char	*id = json_string_value(json_array_get(a, 0));
	const char	*f = json_string_value(json_array_get(a, 1));

	if (id == NULL || f == NULL || json_object_get(llm_ids, id) == NULL)
		return 0;
	if (strcmp(f, "text") == 0)
		f = "content";
	else if (strcmp(f, "reasoning_content") == 0)
		f = "reasoning_content";
	else
		return 0;
	if (json_array_set_new(a, 1, json_string("generation")) != 0 ||
	    json_array_insert_new(a, 2, json_string(f)) != 0)
		return -1;
	return 0;
}

/* {{#id.text ...#}} -> {{#id.generation.content ...#}} in a string. */
static json_t *
rewrite_string(const char *s, const json_t *llm_ids)
{
	struct dbuf	 sb = { 0 };
	const char	*p = s, *open, *dot, *end;
	char		 id[64];
	size_t		 idlen;

	while ((open = strstr(p, "{{#")) != NULL) {
		dbuf_add(&sb, p, (size_t)(open - p) + 3);
		p = open + 3;
		dot = strchr(p, '.');
		end = strstr(p, "#}}");
		if (dot == NULL || end == NULL || dot > end ||
		    (idlen = (size_t)(dot - p)) >= sizeof(id))
			continue;
		memcpy(id, p, idlen);
		id[idlen] = '\0';
		if (json_object_get(llm_ids, id) == NULL)
			continue;
		if (strncmp(dot + 1, "text", 4) == 0 && (dot[5] == '#' ||
		    dot[5] == '.')) {
			dbuf_add(&sb, p, idlen + 1);
			dbuf_addstr(&sb, "generation.content");
			p = dot + 5;
		} else if (strncmp(dot + 1, "reasoning_content", 17) == 0 &&
		    (dot[18] == '#' || dot[18] == '.')) {
			dbuf_add(&sb, p, idlen + 1);
			dbuf_addstr(&sb, "generation.reasoning_content");
			p = dot + 18;
		}
	}
	dbuf_addstr(&sb, p);
	if (sb.err) {
		dbuf_free(&sb);
		return NULL;
	}
	{
		json_t *out = json_string(sb.p ? sb.p : "");

		dbuf_free(&sb);
		return out;
	}
}

/*
 * Walks v, rewriting selectors and template strings in place. 0, or -1
 * when out of memory.
 */
static int
rewrite_refs(json_t *v, const json_t *llm_ids, int depth)
{
	const char	*k;
	json_t		*x, *ns;
	size_t		 i;
	void		*tmp;

	if (depth > 64)
		return 0;
	if (json_is_array(v)) {
		if (json_array_size(v) >= 2 && json_is_string(json_array_get(v,
		    0)) && json_is_string(json_array_get(v, 1)) &&
		    rewrite_selector(v, llm_ids) != 0)
			return -1;
		json_array_foreach(v, i, x) {
			if (json_is_string(x) && strstr(json_string_value(x),
			    "{{#") != NULL) {
				ns = rewrite_string(json_string_value(x),
				    llm_ids);
				if (json_array_set_new(v, i, ns) != 0)
					return -1;
			} else if (rewrite_refs(x, llm_ids, depth + 1) != 0)
				return -1;
		}
	} else if (json_is_object(v)) {
		json_object_foreach_safe(v, tmp, k, x) {
			if (json_is_string(x) && strstr(json_string_value(x),
			    "{{#") != NULL) {
				ns = rewrite_string(json_string_value(x),
				    llm_ids);
				if (json_object_set_new(v, k, ns) != 0)
					return -1;
			} else if (rewrite_refs(x, llm_ids, depth + 1) != 0)
				return -1;
		}
	}
	return 0;
}

/* ====== The upgrade ====== */

struct upgrade_put {
	json_t		*rec;
	const char	*src;
};

static int
upgrade_put_fn(struct store_txn *t, void *arg)
{
	struct upgrade_put	*p = arg;
	int			 rc;

	if ((rc = app_store_put(t, p->rec, STORE_NOOVERWRITE)) != 0)
		return rc;
	return assets_copy_all(t, p->src, json_string_value(json_object_get(
	    p->rec, "id")));
}

int
engine_app_upgrade(struct engine *e, const char *app_id, char *err,
    json_t **out)
{
	struct upgrade_put	 up = { NULL, app_id };
	json_t			*src = NULL, *dsl, *wf, *nodes, *n, *data, *llm;
	json_t			*llm_ids = NULL, *fields = NULL, *features;
	json_t			*skipped_nodes = NULL;
	const char		*type, *why;
	char			 name[600];
	size_t			 i;
	int			 rc, converted = 0, skipped = 0;

	if ((rc = engine_app_get_full(e, app_id, &src)) != 0)
		return rc;
	dsl = json_deep_copy(json_object_get(src, "dsl"));
	if (dsl == NULL && json_object_get(src, "dsl") != NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	wf = json_object_get(dsl, "workflow");
	if (!json_is_object(wf) || !json_is_object(json_object_get(wf,
	    "graph"))) {
		*out = json_pack("{s:s}", "result", "no_draft");
		rc = *out ? 0 : ENGINE_ENOMEM;
		goto out;
	}
	features = json_object_get(wf, "features");
	if (json_is_true(json_object_get(json_object_get(features, "sandbox"),
	    "enabled"))) {
		*out = json_pack("{s:s}", "result", "already_sandboxed");
		rc = *out ? 0 : ENGINE_ENOMEM;
		goto out;
	}
	rc = ENGINE_ENOMEM;	/* until the record is made */
	if ((llm_ids = json_object()) == NULL ||
	    (skipped_nodes = json_array()) == NULL)
		goto out;
	nodes = json_object_get(json_object_get(wf, "graph"), "nodes");
	json_array_foreach(nodes, i, n) {
		data = json_object_get(n, "data");
		type = sval(data, "type");
		if (type == NULL || sval(n, "id") == NULL)
			continue;
		if (strcmp(type, "agent") == 0) {
			if ((llm = agent_to_llm(data, &why)) == NULL) {
				/* the answer says which and why */
				if (why == NULL || json_array_append_new(
				    skipped_nodes, json_pack("{s:s,s:s?,s:s}",
				    "node_id", sval(n, "id"), "title",
				    sval(data, "title"), "reason", why)) != 0)
					goto out;
				skipped++;
				continue;
			}
			if (json_object_set_new(n, "data", llm) != 0)
				goto out;
			converted++;
			type = "llm";
		}
		if (strcmp(type, "llm") == 0 && json_object_set_new(llm_ids,
		    sval(n, "id"), json_true()) != 0)
			goto out;
	}
	if (rewrite_refs(json_object_get(wf, "graph"), llm_ids, 0) != 0)
		goto out;
	if (!json_is_object(features)) {
		features = json_object();
		if (json_object_set_new(wf, "features", features) != 0)
			goto out;
	}
	if (json_object_set_new(features, "sandbox", json_pack("{s:b}",
	    "enabled", 1)) != 0)
		goto out;
	snprintf(name, sizeof(name), "%s (Sandboxed)",
	    sval(src, "name") ? sval(src, "name") : "app");
	fields = json_pack("{s:s,s:O,s:O,s:O,s:O}", "name", name,
	    "description", json_object_get(src, "description"), "icon_type",
	    json_object_get(src, "icon_type"), "icon", json_object_get(src,
	    "icon"), "icon_background", json_object_get(src,
	    "icon_background"));
	if (fields == NULL)
		goto out;
	if ((rc = app_new_record(fields, sval(src, "mode"), 1, err, &up.rec))
	    != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	/* upgraded_from: for the admin page's Overview, what was left out */
	if (json_object_set(up.rec, "dsl", dsl) != 0 ||
	    json_object_set_new(up.rec, "upgraded_from", json_pack(
	    "{s:s,s:O}", "app_id", app_id, "skipped_nodes",
	    skipped_nodes)) != 0)
		goto out;
	if ((rc = engine_from_store(store_write(e->store, upgrade_put_fn,
	    &up))) != 0)
		goto out;
	*out = json_pack("{s:s,s:O,s:i,s:i,s:O}", "result", "success",
	    "new_app_id", json_object_get(up.rec, "id"), "converted_agents",
	    converted, "skipped_agents", skipped, "skipped_nodes",
	    skipped_nodes);
	rc = *out ? 0 : ENGINE_ENOMEM;
out:
	json_decref(up.rec);
	json_decref(fields);
	json_decref(llm_ids);
	json_decref(skipped_nodes);
	json_decref(dsl);
	json_decref(src);
	return rc;
}
