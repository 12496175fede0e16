/*
 * graph.c — a workflow's graph as the executor walks it: nodes with their
 * types and containers, edges with their source handles.
 *
 * A graph that cannot run still builds (a draft may be unfinished), but
 * its problems are listed: a node id used twice, an edge without a source
 * or target or to a node that does not exist, an edge from a node to
 * itself, edges that form a cycle, and a node without a field its type
 * needs (dsl_node_missing). Dify repeats nodes only through a
 * loop or iteration node running its children, never through edges, so a
 * cycle is never legal, inside a container or outside. The executor
 * refuses a graph with problems before any node runs (graph_refuse).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dsl/dsl.h"

#define GRAPH_PROBLEMS_MAX	100	/* problems listed; the rest counted */
#define GRAPH_ID_SHOWN		64	/* bytes of an id in a message */
#define GRAPH_PATH_SHOWN	6	/* nodes of a cycle in its message */

void
graph_free(struct graph *g)
{
	size_t i;

	if (g == NULL || atomic_fetch_sub(&g->refs, 1) > 1)
		return;
	for (i = 0; i < g->nnodes; i++) {
		free(g->nodes[i].in);
		free(g->nodes[i].out);
		json_decref(g->nodes[i].jid);
		json_decref(g->nodes[i].jtype);
		json_decref(g->nodes[i].jtitle);
	}
	free(g->nodes);
	free(g->edges);
	json_decref(g->problems);
	json_decref(g->index);
	json_decref(g->doc);
	free(g);
}

struct graph *
graph_ref(struct graph *g)
{
	atomic_fetch_add(&g->refs, 1);
	return g;
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

/* ====== Problems ====== */

/*
 * Appends {node_id, [edge_id,] field, message} to problems, the shape of
 * dsl_check's report. Past GRAPH_PROBLEMS_MAX only the count grows.
 * Returns 0 or ENGINE_ENOMEM.
 */
static int
problem(json_t *problems, size_t *count, const char *node_id,
    const char *edge_id, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int
problem(json_t *problems, size_t *count, const char *node_id,
    const char *edge_id, const char *field, const char *fmt, ...)
{
	char	 msg[512];
	json_t	*p = NULL;
	va_list	 ap;
	int	 rc = ENGINE_ENOMEM;

	if ((*count)++ >= GRAPH_PROBLEMS_MAX)
		return 0;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((p = json_pack("{s:s,s:s,s:s}", "node_id", node_id ? node_id : "",
	    "field", field, "message", msg)) == NULL)
		goto out;
	if (edge_id != NULL && json_object_set_new(p, "edge_id",
	    json_string(edge_id)) != 0)
		goto out;
	if (json_array_append(problems, p) != 0)
		goto out;
	rc = 0;
out:
	json_decref(p);
	return rc;
}

/*
 * Writes the nodes of the cycle that the edge path[from..top] closes
 * into buf: "a -> b -> c -> a", the middle elided past GRAPH_PATH_SHOWN.
 */
static void
cycle_text(const struct graph *g, const size_t *path, size_t from,
    size_t top, char *buf, size_t bufsz)
{
	size_t	i, len = 0, n = top - from + 1;
	int	w;

	buf[0] = '\0';
	for (i = from; i <= top && len < bufsz; i++) {
		if (n > GRAPH_PATH_SHOWN && i == from + GRAPH_PATH_SHOWN - 1 &&
		    i != top) {
			w = snprintf(buf + len, bufsz - len, "... -> ");
			i = top - 1;	/* the loop goes on at the last */
		} else
			w = snprintf(buf + len, bufsz - len, "'%.*s' -> ",
			    GRAPH_ID_SHOWN, g->nodes[path[i]].id);
		len += w > 0 ? (size_t)w : 0;
	}
	if (len < bufsz)
		snprintf(buf + len, bufsz - len, "'%.*s'", GRAPH_ID_SHOWN,
		    g->nodes[path[from]].id);
}

int
graph_cycles(const struct graph *g, json_t *problems, size_t *count)
{
	unsigned char	*color = NULL;	/* 0 new, 1 on the path, 2 done */
	size_t		*path = NULL, *next = NULL, *at = NULL;
	size_t		 nn = g->nnodes, root, top, u, k, i;
	const struct gedge *e;
	char		 text[400];
	int		 rc = ENGINE_ENOMEM;

	if ((color = calloc(nn + 1, 1)) == NULL ||
	    (path = calloc(nn + 1, sizeof(*path))) == NULL ||
	    (next = calloc(nn + 1, sizeof(*next))) == NULL ||
	    (at = calloc(nn + 1, sizeof(*at))) == NULL)
		goto out;
	rc = 0;
	/* Depth first, without recursion: path[0..top] is the walk. */
	for (root = 0; rc == 0 && root < nn; root++) {
		if (color[root] != 0)
			continue;
		top = 0;
		path[0] = root;
		at[root] = 0;
		color[root] = 1;
		for (;;) {
			u = path[top];
			if (next[u] >= g->nodes[u].nout) {
				color[u] = 2;
				if (top-- == 0)
					break;
				continue;
			}
			k = g->nodes[u].out[next[u]++];
			e = &g->edges[k];
			if (e->dst == e->src)
				continue;	/* reported as a self-loop */
			if (color[e->dst] == 0) {
				color[e->dst] = 1;
				path[++top] = e->dst;
				at[e->dst] = top;
				continue;
			}
			if (color[e->dst] != 1)
				continue;
			i = at[e->dst];
			cycle_text(g, path, i, top, text, sizeof(text));
			if ((rc = problem(problems, count,
			    g->nodes[e->dst].id, e->id, "graph.edges",
			    "edges form a cycle: %s; only a loop or iteration "
			    "node repeats nodes", text)) != 0)
				break;
		}
	}
out:
	free(color);
	free(path);
	free(next);
	free(at);
	return rc;
}

int
graph_refuse(const struct graph *g, char *err)
{
	const json_t	*p;
	char		 buf[ENGINE_ERRMAX] = "";
	size_t		 i, len = 0, n = json_array_size(g->problems);
	int		 w;

	if (n == 0 && g->nproblems == 0)
		return 0;
	for (i = 0; i < n && len < sizeof(buf); i++) {
		p = json_array_get(g->problems, i);
		w = snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "; " :
		    "", json_string_value(json_object_get(p, "message")));
		len += w > 0 ? (size_t)w : 0;
	}
	return engine_invalid(err, "this workflow cannot run (%zu problem%s "
	    "in its graph): %s", g->nproblems, g->nproblems == 1 ? "" : "s",
	    buf);
}

/* ====== Building ====== */

/*
 * The node indexes of edge e's ends in *si and *di; -1 (and a problem
 * listed) for an end that is missing or names no node. Returns 0 or
 * ENGINE_ENOMEM.
 */
static int
edge_ends(struct graph *g, const json_t *e, const char *eid, long *si,
    long *di)
{
	static const char *const keys[] = { "source", "target" };
	const char	*id;
	long		*idx[2] = { si, di };
	size_t		 k;

	for (k = 0; k < 2; k++) {
		id = str_of(e, keys[k]);
		*idx[k] = id != NULL && *id != '\0' ? graph_find(g, id) : -1;
		if (*idx[k] >= 0)
			continue;
		if (id == NULL || *id == '\0') {
			if (problem(g->problems, &g->nproblems, "", eid, keys[k],
			    "edge '%.*s' has no %s", GRAPH_ID_SHOWN, eid,
			    keys[k]) != 0)
				return ENGINE_ENOMEM;
		} else if (problem(g->problems, &g->nproblems, id, eid,
		    keys[k], "edge '%.*s' %s missing node '%.*s'",
		    GRAPH_ID_SHOWN, eid, k == 0 ? "starts at" : "ends at",
		    GRAPH_ID_SHOWN, id) != 0)
			return ENGINE_ENOMEM;
	}
	return 0;
}

int
graph_build(const json_t *workflow, char *err, struct graph **out)
{
	struct graph	*g = NULL;
	json_t		*nodes, *edges, *n, *e, *data;
	const char	*ntype, *parent, *eid, *miss;
	char		 field[80];
	size_t		 i, k;
	long		 si = -1, di = -1;
	int		 rc;

	nodes = json_object_get(json_object_get(workflow, "graph"), "nodes");
	edges = json_object_get(json_object_get(workflow, "graph"), "edges");
	if (!json_is_array(nodes))
		return engine_invalid(err, "the workflow has no graph.nodes");
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return ENGINE_ENOMEM;
	atomic_init(&g->refs, 1);
	g->doc = json_incref((json_t *)workflow);
	if ((g->index = json_object()) == NULL ||
	    (g->problems = json_array()) == NULL ||
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
		if (graph_find(g, str_of(n, "id")) >= 0) {
			/* the first keeps the id; the run is refused */
			if (problem(g->problems, &g->nproblems, str_of(n, "id"),
			    NULL, "id", "node id '%.*s' is used by more than "
			    "one node", GRAPH_ID_SHOWN, str_of(n, "id")) != 0)
				goto fail;
			continue;
		}
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
		/* a node its type cannot run without is refused up front */
		if (g->nodes[k].nt != NULL && (miss = dsl_node_missing(data)) !=
		    NULL) {
			snprintf(field, sizeof(field), "data.%.*s",
			    (int)strcspn(miss, "|"), miss);
			if (problem(g->problems, &g->nproblems, g->nodes[k].id,
			    NULL, field, "node '%.*s' (%s) has no %s, which "
			    "it needs to run", GRAPH_ID_SHOWN, g->nodes[k].id,
			    g->nodes[k].type, miss) != 0)
				goto fail;
		}
		if ((g->nodes[k].jid = json_string(g->nodes[k].id)) == NULL ||
		    (g->nodes[k].jtype = json_string(g->nodes[k].type)) ==
		    NULL || (g->nodes[k].jtitle = json_string(
		    g->nodes[k].title)) == NULL ||
		    json_object_set_new(g->index, g->nodes[k].id,
		    json_integer((json_int_t)k)) != 0)
			goto fail;
	}
	json_array_foreach(edges, i, e) {
		eid = str_of(e, "id") ? str_of(e, "id") : "";
		if ((rc = edge_ends(g, e, eid, &si, &di)) != 0)
			goto fail;
		if (si < 0 || di < 0)
			continue;
		if (si == di && problem(g->problems, &g->nproblems,
		    g->nodes[si].id, eid, "target", "edge '%.*s' leads node "
		    "'%.*s' back to itself", GRAPH_ID_SHOWN, eid,
		    GRAPH_ID_SHOWN, g->nodes[si].id) != 0)
			goto fail;
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
	if (graph_cycles(g, g->problems, &g->nproblems) != 0)
		goto fail;
	*out = g;
	return 0;
fail:
	graph_free(g);
	return ENGINE_ENOMEM;
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
