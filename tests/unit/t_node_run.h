/*
 * t_node_run.h — what the node tests share: an engine in a temporary data
 * directory, a workflow made of start -> the nodes under test -> end,
 * imported and run through the real executor, and helpers to look at the
 * run's outputs and a node's execution record. Include after tap.h.
 */
#ifndef FLOWCGI_T_NODE_RUN_H
#define FLOWCGI_T_NODE_RUN_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/nodes/nodes.h"

#define TN_UNUSED __attribute__((unused))

static struct conf	 tn_conf;
static struct engine	*tn_engine;
static char		 tn_dir[] = "/tmp/t_node.XXXXXX";

static TN_UNUSED void
tn_open(void)
{
	char err[ENGINE_ERRMAX];

	conf_defaults(&tn_conf);
	if (mkdtemp(tn_dir) == NULL)
		abort();
	snprintf(tn_conf.data_dir, sizeof(tn_conf.data_dir), "%s", tn_dir);
	tn_conf.sync = 0;
	if (engine_open(&tn_conf, err, &tn_engine) != 0) {
		printf("# engine_open: %s\n", err);
		abort();
	}
}

static TN_UNUSED void
tn_close(void)
{
	char cmd[128];

	engine_close(tn_engine);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tn_dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tn_dir);
}

/*
 * The result of one run: res is Dify's blocking answer, outputs its
 * data.outputs, node the execution record of node "n1" (the first node
 * under test), status data.status, error data.error.
 */
struct tn_run {
	json_t		*res;
	json_t		*nodes;
	json_t		*outputs;
	json_t		*node;
	const char	*status;
	const char	*error;
};

static TN_UNUSED void
tn_release(struct tn_run *r)
{
	json_decref(r->res);
	json_decref(r->nodes);
	memset(r, 0, sizeof(*r));
}

/* The execution record of node id in r (borrowed), or NULL. */
static TN_UNUSED json_t *
tn_node(const struct tn_run *r, const char *id)
{
	json_t	*n;
	size_t	 i;

	json_array_foreach(json_object_get(r->nodes, "data"), i, n) {
		const char *nid = json_string_value(json_object_get(n,
		    "node_id"));

		if (nid != NULL && strcmp(nid, id) == 0)
			return n;
	}
	return NULL;
}

static TN_UNUSED const char *
tn_var_type(const json_t *v)
{
	if (json_is_string(v))
		return "paragraph";
	if (json_is_number(v))
		return "number";
	if (json_is_array(v))
		return tpl_is_file(json_array_get(v, 0)) ? "file-list" :
		    "json_object";
	return tpl_is_file(v) || json_object_get(v, "transfer_method") ?
	    "file" : "json_object";
}

/*
 * A file input for app: a file object made by tn_file (bytes in a data:
 * URL) is uploaded and given as {type, transfer_method: local_file,
 * upload_file_id}, as an API caller would; anything else is kept. New
 * reference.
 */
static TN_UNUSED json_t *
tn_upload(const char *app, json_t *v)
{
	json_t		*res = NULL, *up = NULL;
	const char	*url = json_string_value(json_object_get(v, "url"));
	const char	*comma;
	char		*data = NULL, err[ENGINE_ERRMAX];
	size_t		 len;

	if (!tpl_is_file(v) || url == NULL || strncmp(url, "data:", 5) != 0 ||
	    (comma = strchr(url, ',')) == NULL)
		return json_incref(v);
	if (file_b64_decode(comma + 1, strlen(comma + 1), &data, &len) != 0 ||
	    engine_upload_put(tn_engine, app, "tester", json_string_value(
	    json_object_get(v, "filename")), json_string_value(json_object_get(
	    v, "mime_type")), data, len, err, &up) != 0)
		printf("# upload failed: %s\n", err);
	else
		res = json_pack("{s:O,s:s,s:O}", "type", json_object_get(v,
		    "type"), "transfer_method", "local_file", "upload_file_id",
		    json_object_get(up, "id"));
	free(data);
	json_decref(up);
	return res ? res : json_incref(v);
}

/*
 * Runs start -> nodes[0] ("n1") -> nodes[1] ("n2") ... -> end. nodes is
 * an array of node data objects (stolen); end_outputs an object
 * {variable: selector} (stolen); inputs the start inputs (stolen, may be
 * NULL); conv the workflow's conversation_variables (stolen, may be
 * NULL). Returns 0 with r filled (tn_release), -1 when the import or the
 * start failed (printed).
 */
static TN_UNUSED int
tn_run_wf(json_t *nodes, json_t *end_outputs, json_t *inputs, json_t *conv,
    struct tn_run *r)
{
	json_t		*sysfiles = json_array();
	json_t		*gn = json_array(), *ge = json_array(), *vars =
			    json_array(), *outs = json_array(), *doc = NULL,
			    *imp = NULL, *d, *v;
	struct run_opts	 o;
	struct import_opts io;
	char		 err[ENGINE_ERRMAX] = "", id[32], prev[32], eid[80];
	char		*yaml = NULL;
	const char	*k, *app;
	size_t		 i, len;
	int		 rc = -1;

	memset(r, 0, sizeof(*r));
	if (conv == NULL)
		conv = json_array();
	if (inputs == NULL)
		inputs = json_object();
	json_object_foreach(inputs, k, v)
		json_array_append_new(vars, json_pack("{s:s,s:s,s:s,s:b}",
		    "variable", k, "label", k, "type", tn_var_type(v),
		    "required", 0));
	json_array_append_new(gn, json_pack("{s:s,s:s,s:{s:s,s:s,s:O}}",
	    "id", "start", "type", "custom", "data", "type", "start", "title",
	    "Start", "variables", vars));
	snprintf(prev, sizeof(prev), "start");
	json_array_foreach(nodes, i, d) {
		snprintf(id, sizeof(id), "n%zu", i + 1);
		if (json_object_get(d, "title") == NULL)
			json_object_set_new(d, "title", json_string(id));
		json_array_append_new(gn, json_pack("{s:s,s:s,s:O}", "id", id,
		    "type", "custom", "data", d));
		snprintf(eid, sizeof(eid), "%s-%s", prev, id);
		json_array_append_new(ge, json_pack("{s:s,s:s,s:s,s:s,s:s}",
		    "id", eid, "source", prev, "sourceHandle", "source",
		    "target", id, "targetHandle", "target"));
		snprintf(prev, sizeof(prev), "%s", id);
	}
	json_object_foreach(end_outputs, k, v)
		json_array_append_new(outs, json_pack("{s:s,s:O}", "variable",
		    k, "value_selector", v));
	json_array_append_new(gn, json_pack("{s:s,s:s,s:{s:s,s:s,s:O}}",
	    "id", "end", "type", "custom", "data", "type", "end", "title",
	    "End", "outputs", outs));
	snprintf(eid, sizeof(eid), "%s-end", prev);
	json_array_append_new(ge, json_pack("{s:s,s:s,s:s,s:s,s:s}", "id", eid,
	    "source", prev, "sourceHandle", "source", "target", "end",
	    "targetHandle", "target"));
	doc = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{s:O,s:O},s:[],s:O}}",
	    "version", "0.1.5", "kind", "app", "app", "name", "node test",
	    "mode", "workflow", "workflow", "graph", "nodes", gn, "edges", ge,
	    "environment_variables", "conversation_variables",
	    conv);
	if (doc == NULL || dsl_emit(doc, err, &yaml, &len) != 0) {
		printf("# building the DSL failed: %s\n", err);
		goto out;
	}
	memset(&io, 0, sizeof(io));
	if (engine_import(tn_engine, yaml, len, &io, err, &imp) != 0 ||
	    (app = json_string_value(json_object_get(imp, "app_id"))) ==
	    NULL) {
		printf("# import failed: %s %s\n", err, json_string_value(
		    json_object_get(imp, "error")));
		goto out;
	}
	json_object_foreach(inputs, k, v) {
		if (json_is_array(v)) {
			json_t *arr = json_array(), *e;

			json_array_foreach(v, i, e)
				json_array_append_new(arr, tn_upload(app, e));
			json_object_set_new(inputs, k, arr);
		} else
			json_object_set_new(inputs, k, tn_upload(app, v));
	}
	memset(&o, 0, sizeof(o));
	o.app_id = app;
	o.inputs = inputs;
	o.invoke_from = "console";
	/* given, so that engine_run's json_array() default (leaked by its
	 * "s:O") is not taken */
	o.files = sysfiles;
	if (engine_run(tn_engine, &o, err, &r->res) != 0) {
		printf("# run failed to start: %s\n", err);
		goto out;
	}
	d = json_object_get(r->res, "data");
	r->outputs = json_object_get(d, "outputs");
	r->status = json_string_value(json_object_get(d, "status"));
	r->error = json_string_value(json_object_get(d, "error"));
	if (engine_run_nodes(tn_engine, json_string_value(json_object_get(
	    r->res, "workflow_run_id")), &r->nodes) != 0) {
		printf("# no node records\n");
		goto out;
	}
	r->node = tn_node(r, "n1");
	if (r->error != NULL)
		printf("# run error: %s\n", r->error);
	rc = 0;
out:
	free(yaml);
	json_decref(doc);
	json_decref(imp);
	json_decref(gn);
	json_decref(ge);
	json_decref(vars);
	json_decref(outs);
	json_decref(nodes);
	json_decref(end_outputs);
	json_decref(inputs);
	json_decref(conv);
	json_decref(sysfiles);
	return rc;
}

/* Runs one node (data) with end outputs; see tn_run_wf. */
static TN_UNUSED int
tn_run1(json_t *data, json_t *end_outputs, json_t *inputs, struct tn_run *r)
{
	return tn_run_wf(json_pack("[o]", data), end_outputs, inputs, NULL, r);
}

/* A string output of a run ("" when missing). */
static TN_UNUSED const char *
tn_out_str(const struct tn_run *r, const char *k)
{
	const char *s = json_string_value(json_object_get(r->outputs, k));

	return s ? s : "";
}

/* A file object carrying data as a data: URL. New reference. */
static TN_UNUSED json_t *
tn_file(const char *name, const char *mime, const void *data, size_t len)
{
	return file_from_bytes(name, mime, data, len);
}

/* JSON text of v for comparisons (malloc'd in a static ring). */
static TN_UNUSED const char *
tn_dump(const json_t *v)
{
	static char	*ring[8];
	static int	 next;
	char		*s;

	if (v == NULL)
		return "(missing)";
	s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
	free(ring[next]);
	ring[next] = s;
	next = (next + 1) % 8;
	return s ? s : "(oom)";
}

#endif
