/*
 * graph.c — a workflow's graph as the executor walks it: nodes with their
 * types and containers, edges with their source handles.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/exec.h"

void
graph_free(struct graph *g)
{
	size_t i;

	if (g == NULL)
		return;
	for (i = 0; i < g->nnodes; i++) {
		free(g->nodes[i].in);
		free(g->nodes[i].out);
	}
	free(g->nodes);
	free(g->edges);
	json_decref(g->index);
	json_decref(g->doc);
	free(g);
}

long
graph_find(const struct graph *g, const char *id)
{
	json_t *v = json_object_get(g->index, id);

	return v != NULL ? (long)json_integer_value(v) : -1;
}

static const char *
str_of(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static int
add_idx(size_t **arr, size_t *n, size_t v)
{
	size_t *na;

	if ((na = realloc(*arr, (*n + 1) * sizeof(**arr))) == NULL)
		return -1;
	na[(*n)++] = v;
	*arr = na;
	return 0;
}

int
graph_build(const json_t *workflow, char *err, struct graph **out)
{
	struct graph	*g = NULL;
	json_t		*nodes, *edges, *n, *e, *data;
	const char	*src, *dst, *ntype, *parent;
	size_t		 i, k;
	long		 si, di;
	int		 rc = ENGINE_ENOMEM;

	nodes = json_object_get(json_object_get(workflow, "graph"), "nodes");
	edges = json_object_get(json_object_get(workflow, "graph"), "edges");
	if (!json_is_array(nodes))
		return engine_invalid(err, "the workflow has no graph.nodes");
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return ENGINE_ENOMEM;
	g->doc = json_incref((json_t *)workflow);
	if ((g->index = json_object()) == NULL ||
	    (g->nodes = calloc(json_array_size(nodes) + 1,
	    sizeof(*g->nodes))) == NULL ||
	    (g->edges = calloc(json_array_size(edges) + 1,
	    sizeof(*g->edges))) == NULL)
		goto fail;
	json_array_foreach(nodes, i, n) {
		data = json_object_get(n, "data");
		ntype = str_of(n, "type");
		/* Canvas notes do not run. */
		if ((ntype != NULL && strcmp(ntype, "custom-note") == 0) ||
		    !json_is_object(data) || str_of(n, "id") == NULL)
			continue;
		k = g->nnodes++;
		g->nodes[k].id = str_of(n, "id");
		g->nodes[k].data = data;
		g->nodes[k].type = str_of(data, "type");
		if (g->nodes[k].type == NULL)
			g->nodes[k].type = "";
		g->nodes[k].title = str_of(data, "title");
		if (g->nodes[k].title == NULL)
			g->nodes[k].title = g->nodes[k].id;
		parent = str_of(n, "parentId");
		if (parent == NULL)
			parent = str_of(data, "iteration_id");
		if (parent == NULL)
			parent = str_of(data, "loop_id");
		g->nodes[k].parent = parent;
		g->nodes[k].nt = node_type_find(g->nodes[k].type);
		json_object_set_new(g->index, g->nodes[k].id,
		    json_integer((json_int_t)k));
	}
	json_array_foreach(edges, i, e) {
		src = str_of(e, "source");
		dst = str_of(e, "target");
		if (src == NULL || dst == NULL ||
		    (si = graph_find(g, src)) < 0 ||
		    (di = graph_find(g, dst)) < 0)
			continue;
		k = g->nedges++;
		g->edges[k].id = str_of(e, "id");
		g->edges[k].source_handle = str_of(e, "sourceHandle");
		if (g->edges[k].source_handle == NULL)
			g->edges[k].source_handle = "source";
		g->edges[k].src = (size_t)si;
		g->edges[k].dst = (size_t)di;
		if (add_idx(&g->nodes[si].out, &g->nodes[si].nout, k) != 0 ||
		    add_idx(&g->nodes[di].in, &g->nodes[di].nin, k) != 0)
			goto fail;
	}
	*out = g;
	return 0;
fail:
	graph_free(g);
	return rc;
}

static int
in_scope(const struct gnode *n, const char *container)
{
	if (container == NULL)
		return n->parent == NULL;
	return n->parent != NULL && strcmp(n->parent, container) == 0;
}

static int
is_start_type(const char *t)
{
	return strcmp(t, "start") == 0 || strcmp(t, "datasource") == 0 ||
	    strncmp(t, "trigger-", 8) == 0;
}

long
graph_root(const struct graph *g, const char *container)
{
	const char	*sid;
	long		 i, first = -1;

	if (container != NULL) {
		i = graph_find(g, container);
		sid = i >= 0 ? str_of(g->nodes[i].data, "start_node_id") : NULL;
		if (sid != NULL && (i = graph_find(g, sid)) >= 0)
			return i;
	}
	for (i = 0; i < (long)g->nnodes; i++) {
		if (!in_scope(&g->nodes[i], container))
			continue;
		if (container == NULL && is_start_type(g->nodes[i].type))
			return i;
		if (g->nodes[i].nin == 0 && first < 0)
			first = i;
	}
	return first;
}
