/*
 * tool.c — the tool node, after Dify's nodes/tool/tool_node.py.
 *
 * Parameters: each tool_parameters entry {type, value}: mixed is a
 * {{#..#}} template rendered as text, variable a selector (a missing
 * value drops the parameter), constant the value as written; entries
 * whose value is null are dropped. tool_configurations (plain values, or
 * the {type, value} form of newer exports; null ones dropped) are merged
 * over them, as Dify's runtime parameters are. The call goes to the
 * provider engine/tools/ finds for provider_id / provider_type
 * (provider_name names custom api and mcp providers).
 *
 * Outputs, Dify's shapes: text (the text messages joined), files (an
 * array of file objects), json (the json messages; [{"data": []}] when
 * there are none) and any variables the tool set. A tool flowcgi does not
 * have fails the node with "tool '<provider>/<tool>' is not available in
 * flowcgi".
 */
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"
#include "engine/tools/tools.h"

/* The value of one {type, value} input, or NULL to drop it. New ref. */
static int
input_value(struct node_ctx *c, const char *name, const json_t *in,
    json_t **out)
{
	const char	*type = json_string_value(json_object_get(in, "type"));
	const json_t	*v = json_object_get(in, "value");
	char		*s = NULL;
	int		 rc = 0;

	*out = NULL;
	if (v == NULL || json_is_null(v))
		goto out;
	if (type != NULL && strcmp(type, "variable") == 0) {
		if (json_is_array(v))
			*out = node_resolve(c, v);
		goto out;
	}
	if (type != NULL && strcmp(type, "mixed") == 0 && json_is_string(v)) {
		if ((rc = node_render(c, json_string_value(v), TPL_TEXT,
		    &s)) != 0)
			goto out;
		if ((*out = json_string(s)) == NULL)
			rc = node_fail(c, "out of memory");
		goto out;
	}
	*out = json_deep_copy(v);
	if (*out == NULL)
		rc = node_fail(c, "parameter %s: out of memory", name);
out:
	free(s);
	return rc;
}

static int
tool_run(struct node_ctx *c)
{
	struct tool_call	 call;
	struct tool_result	 res;
	json_t			*params = NULL, *v, *in, *json = NULL;
	json_t			*text = NULL;
	const char		*k;
	char			 err[ENGINE_ERRMAX] = "";
	int			 rc = -1, irc;

	memset(&call, 0, sizeof(call));
	memset(&res, 0, sizeof(res));
	call.provider = node_str(c->node, "provider_id");
	call.provider_type = node_str(c->node, "provider_type");
	call.provider_name = node_str(c->node, "provider_name");
	call.tool = node_str(c->node, "tool_name");
	call.node = c->node->data;
	if (call.provider_type != NULL && strcmp(call.provider_type, "mcp") ==
	    0)
		call.mcp = run_mcp(c->run);
	if (call.provider == NULL)
		call.provider = call.provider_name;
	if (call.provider == NULL || call.tool == NULL) {
		node_fail(c, "provider_id and tool_name are required");
		goto out;
	}
	if (tool_provider_lookup(c->run->e, call.provider,
	    call.provider_type) == NULL) {
		/* it cannot appear by trying again */
		c->no_retry = 1;
		node_fail(c, "tool '%s/%s' is not available in flowcgi",
		    call.provider, call.tool);
		goto out;
	}
	if ((params = json_object()) == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	json_object_foreach(json_object_get(c->node->data, "tool_parameters"),
	    k, in) {
		if (input_value(c, k, in, &v) != 0)
			goto out;
		if (v == NULL || json_is_null(v))
			json_decref(v);
		else if (json_object_set_new(params, k, v) != 0) {
			node_fail(c, "out of memory");
			goto out;
		}
	}
	json_object_foreach(json_object_get(c->node->data,
	    "tool_configurations"), k, in) {
		if (json_is_object(in) && json_object_get(in, "value") !=
		    NULL && json_object_get(in, "type") != NULL) {
			if (input_value(c, k, in, &v) != 0)
				goto out;
		} else if (json_is_null(in))
			v = NULL;
		else if ((v = json_deep_copy(in)) == NULL) {
			node_fail(c, "out of memory");
			goto out;
		}
		if (v == NULL || json_is_null(v))
			json_decref(v);
		else if (json_object_set_new(params, k, v) != 0) {
			node_fail(c, "out of memory");
			goto out;
		}
	}
	if (json_object_update(c->inputs, params) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	call.params = params;
	if ((irc = tool_invoke(c->run->e, &call, err, &res)) != 0) {
		c->error_type = "ToolInvokeError";
		/* a missing tool, parameter or credential stays missing */
		if (irc == ENGINE_ENOTFOUND || res.final)
			c->no_retry = 1;
		node_fail(c, "%s", err[0] ? err : "the tool failed");
		goto out;
	}
	json = res.json ? json_incref(res.json) : json_pack("[{s:[]}]",
	    "data");
	if ((text = json_string(res.text.p ? res.text.p : "")) == NULL) {
		node_fail(c, "the tool's text is not valid UTF-8");
		goto out;
	}
	if (json == NULL || json_object_set(c->outputs, "text", text) != 0 ||
	    json_object_set_new(c->outputs, "files", res.files ?
	    json_incref(res.files) : json_array()) != 0 ||
	    json_object_set(c->outputs, "json", json) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (res.variables != NULL &&
	    json_object_update(c->outputs, res.variables) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	rc = 0;
out:
	tool_result_release(&res);
	json_decref(params);
	json_decref(json);
	json_decref(text);
	return rc;
}

const struct node_type node_tool = { "tool", tool_run, 0 };
