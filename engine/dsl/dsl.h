/*
 * dsl.h — what engine/dsl/ gives the rest of the engine: a workflow's
 * graph as built from its DSL document, and .zip bundles. Documents only:
 * nothing here reads or writes storage. (The DSL codec and checks,
 * dsl.c and dsl_check.c, are reached through engine/engine.h.) Included
 * by engine files only.
 */
#ifndef FLOWCGI_ENGINE_DSL_H
#define FLOWCGI_ENGINE_DSL_H

#include <stdatomic.h>

#include "engine/internal.h"

/* ====== Graph (graph.c) ====== */

struct node_type;

struct gnode {
	const char		*id;
	const char		*type;		/* data.type */
	const char		*title;
	json_t			*data;		/* borrowed from the document */
	const char		*parent;	/* container id, or NULL */
	const struct node_type	*nt;		/* NULL: unsupported type */
	json_t			*jid, *jtype, *jtitle;	/* the same three
						 * as JSON strings, for traces */
	size_t			*in, nin;	/* edge indexes */
	size_t			*out, nout;
};

struct gedge {
	const char	*id;
	const char	*source_handle;	/* "source" when absent */
	size_t		 src, dst;	/* node indexes */
};

struct graph {
	json_t		*doc;		/* the workflow object (a reference) */
	struct gnode	*nodes;
	size_t		 nnodes;
	struct gedge	*edges;
	size_t		 nedges;
	json_t		*index;		/* node id -> integer index */
	json_t		*problems;	/* why it cannot run: [{node_id,
					 * edge_id?, field, message}] */
	size_t		 nproblems;	/* all of them, listed or not */
	atomic_int	 refs;		/* graph_ref / graph_free */
};

/*
 * Builds the graph of a workflow object {graph: {nodes, edges}, ...}:
 * canvas notes dropped, node types looked up. What would keep it from
 * running is listed in g->problems, not refused here: a node id used
 * twice (the first node keeps it), an edge without both ends or to a node
 * that does not exist (left out), an edge from a node to itself, a cycle,
 * a node without a field its type needs (dsl_node_missing).
 * Returns 0 with *out (graph_free), ENGINE_EINVAL with err (no
 * graph.nodes) or ENGINE_ENOMEM.
 */
int	graph_build(const json_t *workflow, char *err, struct graph **out);

/*
 * A graph never changes once built, so runs may share one: graph_ref takes
 * a reference, graph_free drops one and frees the graph with the last.
 */
struct graph *graph_ref(struct graph *g);
void	graph_free(struct graph *g);

/*
 * Appends to problems one {node_id, edge_id, field: "graph.edges",
 * message} per edge that closes a cycle of g's edges (self-loops are not
 * counted here), the message naming the nodes on it; *count grows by
 * each, listed or not. Returns 0 or ENGINE_ENOMEM.
 */
int	graph_cycles(const struct graph *g, json_t *problems, size_t *count);

/*
 * 0 when g has no problems; else ENGINE_EINVAL with err naming them
 * ("this workflow cannot run (N problems in its graph): ...").
 */
int	graph_refuse(const struct graph *g, char *err);

/* The index of node id, or -1. */
long	graph_find(const struct graph *g, const char *id);

/*
 * The node a scope starts from: for the top level (container NULL) the
 * start node (or the one node without incoming edges); for a container,
 * its data.start_node_id (or its first child without incoming edges).
 */
long	graph_root(const struct graph *g, const char *container);

/*
 * The table of a node type, or NULL when flowcgi cannot run it. The table
 * is engine/run/run.h's (the nodes fill it); a graph only keeps the
 * pointer.
 */
const struct node_type *node_type_find(const char *type);

/*
 * The first field a node's data lacks that its type needs to run, as its
 * path under data ("model.provider"; "a|b" when either would do), or NULL
 * when it has them all (or its type needs none). The string is static.
 * dsl_check lists it with DSL_CHECK_RUNNABLE; graph_build lists it for
 * the executor, so a run refuses such a node before any node runs.
 */
const char *dsl_node_missing(const json_t *data);

/* ====== Bundles (bundle.c) ====== */

struct bundle;
struct bundle_file;


/* One entry of a bundle's file tree, path relative to the assets root. */
struct bundle_file {
	char		*path;		/* "skills/report/SKILL.md" */
	int		 is_dir;
	unsigned char	*data;		/* NULL for a folder */
	size_t		 len;
};
void	bundle_files_free(struct bundle_file *files, size_t n);

/* A bundle read into memory and checked; nothing written anywhere. */
struct bundle {
	char			*dsl_name;	/* "My app.yml" */
	char			*dsl;		/* its bytes, NUL-terminated */
	size_t			 dsl_len;
	json_t			*manifest;	/* NULL for the older layout */
	struct bundle_file	*files;
	size_t			 nfiles;
};

/*
 * Reads a .zip bundle from memory and checks all of it before anything is
 * written: one root DSL file (^[^/]+\.ya?ml$), manifest.json when present
 * (and its file list against the entries), and every entry: no absolute or
 * ".." paths, backslashes, control characters, symlinks, hard links,
 * devices, encryption or duplicates; each file within assets.max_file_size;
 * the total within bundle.max_size and bundle.max_ratio times the bundle's
 * size. Entry modes (setuid, setgid, sticky, any) are not kept. Returns 0
 * with b filled (bundle_release), ENGINE_EINVAL or
 * ENGINE_ELIMIT with err saying which entry and which rule.
 */
int	bundle_read(const struct conf *c, const void *zip, size_t len,
	    char *err, struct bundle *b);
void	bundle_release(struct bundle *b);

/*
 * Writes a bundle: <name>.yml with dsl, manifest.json (if manifest is not
 * NULL) and each file under <name>/. *out (malloc'd, caller frees) holds
 * *outlen bytes of zip. Returns 0 or ENGINE_ENOMEM / ENGINE_EINVAL.
 */
int	bundle_write(const char *name, const char *dsl, size_t dsl_len,
	    const json_t *manifest, const struct bundle_file *files,
	    size_t nfiles, char *err, char **out, size_t *outlen);

/*
 * The file-name-safe form of an app name, as Dify's bundle export makes it:
 * <>:"/\|?* and control characters become _, leading and trailing dots and
 * spaces go, at most 100 characters, "app" when nothing is left. Writes a
 * NUL-terminated name into buf (at least 401 bytes).
 */
void	bundle_safe_name(const char *name, char *buf, size_t bufsz);

#endif
