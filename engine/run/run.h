/*
 * run.h — the workflow executor's private interface: the graph, the
 * variable pool, a run, and the node-type table every engine/nodes/ file
 * fills. Included by engine files only.
 */
#ifndef FLOWCGI_ENGINE_EXEC_H
#define FLOWCGI_ENGINE_EXEC_H

#include <pthread.h>
#include <stdatomic.h>

#include "engine/records/records.h"
#include "engine/tools/tools.h"

/* ====== Variable pool (pool.c) ====== */

/*
 * Values keyed by [node id, name]: a selector adds a path into the value.
 * A pool may sit on a parent (an iteration round): names of the node ids
 * it owns live in it, everything else reads and writes through to the
 * parent. Thread-safe; values are immutable once set (copy to change).
 */
struct pool;

struct pool *pool_new(struct pool *parent);
void	pool_free(struct pool *p);

/*
 * Makes node id's values local to p (for an iteration round). Returns 0 or
 * ENGINE_ENOMEM.
 */
int	pool_own(struct pool *p, const char *node_id);

/*
 * Sets [node, name] to v (a reference is taken). Returns 0, or
 * ENGINE_ENOMEM when out of memory or v is NULL (its constructor failed):
 * the value is then not set, and a reader would see it missing.
 */
int	pool_set(struct pool *p, const char *node, const char *name,
	    json_t *v);
/* Sets every key of object obj under node; 0 or ENGINE_ENOMEM. */
int	pool_set_all(struct pool *p, const char *node, const json_t *obj);

/*
 * The value of a selector (JSON array of strings, at least 2), or NULL.
 * Returns a new reference (json_decref).
 */
json_t	*pool_get(struct pool *p, const json_t *selector);
json_t	*pool_get_parts(struct pool *p, const char *const *parts,
	    size_t nparts);

/* A copy of every value under node ({name: value}); new reference. */
json_t	*pool_get_node(struct pool *p, const char *node);

/*
 * The workflow an app without a graph (chat, agent-chat, completion) runs
 * as, made from its DSL's model_config (legacy.c). New reference, or NULL
 * when out of memory.
 */
json_t	*legacy_workflow(const json_t *dsl, const char *mode);

/*
 * Sets the keys of params over the completion_params of the model node of
 * wf, a graph legacy_workflow made (a new object: the app's own stays as
 * it is). 0 or ENGINE_ENOMEM.
 */
int	legacy_model_params(json_t *wf, const json_t *params);

/* ====== Runs (executor.c) ====== */

/* Limits a run is held to; from conf, with Dify's defaults. */
struct run_limits {
	int	max_steps;		/* node executions per run: 500 */
	int	max_seconds;		/* wall clock: 1200 */
	int	max_parallel;		/* concurrent branches: 10 */
	int	max_loop;		/* loop / iteration rounds: 100 */
	int	max_threads;		/* threads of the run at once: 32 */
};

struct run {
	struct engine		*e;
	struct tool_run		 tool_run;	/* what a tool sees of it:
						 * its ids, its parent (a
						 * workflow tool's caller) */
	struct graph		*g;
	struct pool		*pool;
	const struct run_opts	*opts;
	char			 id[37];	/* workflow_run_id */
	char			 task_id[37];
	char			 app_id[37];
	char			 workflow_id[37];
	struct run_limits	 lim;
	int64_t			 started_ms;
	atomic_int		 steps;
	atomic_int		 stopping;	/* stop requested or failed */
	atomic_int		 nomem;		/* an event or record could not
						 * be made whole: the run fails
						 * at its next node */
	atomic_int		 node_index;	/* numbering of executions */
	atomic_int		 threads;	/* started and not ended:
						 * run_thread_take */
	atomic_llong		 total_tokens;
	atomic_llong		 prompt_tokens;	/* of total_tokens (usage) */
	atomic_llong		 completion_tokens;
	pthread_mutex_t		 mu;		/* records, events, error */
	json_t			*node_runs;	/* execution records */
	json_t			*outputs;	/* end node / answer */
	json_t			*secrets;	/* the DSL's plain secrets,
						 * set before nodes run, masked
						 * in traces (secrets_scrub) */
	char			*answer;	/* chatflow answer so far */
	size_t			 answer_len;
	char			 error[ENGINE_ERRMAX];
	int			 failed;
	int			 exceptions;
	/* chatflow (advanced-chat) runs */
	int			 chat;
	const char		*legacy;	/* chat, agent-chat, completion:
						 * Dify's chat events only */
	int			 thoughts;	/* agent_thought positions */
	json_t			*thought_log;	/* the message's agent_thoughts */
	int			 show_sources;	/* features.retriever_resource */
	json_t			*message_files;	/* run_message_file's, or NULL */
	json_t			*resources;	/* retriever_resources: the
						 * citations of the answer, or
						 * NULL (run_resources_add) */
	json_t			*annotation;	/* the annotation that answered
						 * (annotation_match), or NULL */
	char			 conversation_id[37];
	char			 message_id[37];
	json_t			*history;	/* [{query, answer}], oldest
						 * first; the conversation's
						 * earlier messages */
	json_t			*streamed;	/* "<node>.text" already sent
						 * as it was generated */
	/* sandboxed runtime: one sandbox per run, made when first needed */
	int			 sandboxed;
	pthread_mutex_t		 sb_mu;
	struct sandbox		*sb;
	char			*sb_note;	/* sandbox_tool_note of sb */
	json_t			*skills;	/* [{name, description, path}] */
	json_t			*skill_tools;	/* [{provider, tool_name,
						 * uuid}] the skill files
						 * reference */
	char			*workspace_tar;	/* chatflow: saved at the end */
	size_t			 workspace_len;
	const char		*draft_user;	/* a draft test run: the
						 * console user whose draft
						 * workspace it keeps (not
						 * the conversation's) */
	/* MCP sessions, one per server, made when first needed (sb_mu) */
	struct mcp_pool		*mcp;
	/* in progress (live.c) */
	json_t			*start_rec;	/* the "running" record; never
						 * changed once registered */
	struct run		*live_next, *live_prev;
	int64_t			 live_due;	/* monotonic ms: store it then */
	int			 live_sent;	/* handed to the publisher */
	atomic_int		 published;	/* stored as running */
	atomic_int		 stop_flag;	/* a stop was asked for */
	atomic_llong		 stop_polled;	/* monotonic ms of the last
						 * read of its record */
	struct live_log		*log;		/* its events for a page that
						 * comes back, or NULL */
	/* metrics and trace (observe.c) */
	struct span		*span;		/* the run's, or NULL */
	struct span		*obs_prev;	/* the thread's before it */
	const char		*obs_mode;
	double			 obs_t0;
	int			 observed;
};

/* ====== Metrics and traces of runs and nodes (observe.c) ====== */

/*
 * Counts run r started (r's ids and start_rec set; the request id goes
 * into start_rec) and starts its span, current in the calling thread.
 * run_observe_end counts it finished with status (NULL: failed), ends
 * the span with rec (the stored record, for content; may be NULL); it
 * does nothing for a run not started.
 */
void	run_observe_start(struct run *r, const json_t *app,
	    const char *mode);
void	run_observe_end(struct run *r, const char *status,
	    const json_t *rec);

/* One node execution: its span (current while it runs) and duration. */
struct node_obs {
	struct span	*span;
	struct span	*prev;
	double		 t0;
};
void	node_observe_start(struct node_obs *ob, struct run *r,
	    const struct gnode *n, const char *exec_id, int index,
	    const char *iter, const char *loop);
/*
 * An agent's iterations: ends prev (NULL: none) and starts the span of
 * iteration iter under node (the agent node's span), current from then
 * on; agent_iteration_end ends the last and makes node current again.
 */
struct span *agent_iteration_next(struct span *prev, struct span *node,
	    int iter);
void	agent_iteration_end(struct span *last, struct span *node);
/* rec: the node's trace as stored (trace_pack, scrubbed), or NULL. */
void	node_observe_end(struct node_obs *ob, struct run *r,
	    const struct gnode *n, const char *status, const char *error,
	    const json_t *metadata, json_t *rec);

/*
 * The run's sandbox, created on first use from the active provider with
 * the app's files laid into skills/ and the workspace restored (a draft
 * run's: its user's draft workspace, else a chatflow conversation's).
 * Returns 0 with *out (owned by the run), or -1 with err set.
 * Thread-safe.
 */
struct sandbox;
int	run_sandbox(struct run *r, char *err, struct sandbox **out);

/*
 * The run's MCP sessions (engine/tools/mcp.c), made on first use; NULL
 * when memory ran out (each call then has a session of its own).
 * Thread-safe.
 */
struct mcp_pool;
struct mcp_pool *run_mcp(struct run *r);

/*
 * Ends what a run holds outside itself, once its nodes are done: closes
 * its MCP sessions, saves a draft run's or a chatflow's workspace
 * (run->workspace_tar) and destroys the sandbox; hex gets the saved
 * workspace's hash, or "".
 */
void	run_sandbox_end(struct run *r, char hex[STORE_HASH_HEX]);

/* Emits an SSE-shaped event {event, task_id, workflow_run_id, data}. */
void	run_emit(struct run *r, const char *event, json_t *data);

/*
 * Emits a chat event whose fields sit at the top level (message,
 * message_end): {event, task_id, message_id, conversation_id, created_at,
 * ...fields}. fields is stolen.
 */
void	run_emit_top(struct run *r, const char *event, json_t *fields);

/*
 * Notes the knowledge items of an LLM node's context (items of a
 * knowledge-retrieval result: metadata._source "knowledge") as the
 * answer's retriever_resources, in Dify's RetrievalSourceMetadata shape,
 * when the app shows them (features.retriever_resource). Thread-safe;
 * out of memory drops them (logged).
 */
void	run_resources_add(struct run *r, const json_t *items);

/*
 * A file a tool gave an agent app's answer (a file object with its
 * bytes) as Dify's message file: kept as an upload of the app (readable
 * at /v1/files/{id}/preview), announced by a message_file event, listed
 * in the message's message_files; its id into id. Chat apps only
 * (elsewhere the file stays in the node's outputs): 1 when not a chat,
 * 0, or an ENGINE_E* code (err says why).
 */
int	run_message_file(struct run *r, const json_t *file, char *err,
	    char id[37]);

/*
 * Streams answer text (chatflow "message" / workflow "text_chunk") from
 * the output field of node_id (Dify's from_variable_selector: an LLM's
 * "text", an answer's "answer").
 */
void	run_stream_text(struct run *r, const char *node_id, const char *field,
	    const char *text, size_t len);

/* Adds text to the answer so far (the message's) without sending it. */
void	run_answer_add(struct run *r, const char *text, size_t len);

/*
 * The run's thread budget (workflow.max_threads, its own thread counted):
 * 1 when one more thread may start, counted until run_thread_give; 0 when
 * the budget is spent, and the work is to be done in the calling thread.
 */
int	run_thread_take(struct run *r);
void	run_thread_give(struct run *r);

/*
 * Runs the nodes of a scope (container NULL: the top level; else the
 * children of a container) from its root until nothing more can run, in
 * pool p. Returns 0, or ENGINE_EINVAL when a node failed the scope (err
 * holds why) or, for the top level, when the graph has problems
 * (graph_refuse: nothing runs), ENGINE_ESTOPPED when stopped,
 * ENGINE_ELIMIT on a limit.
 */
int	run_scope(struct run *r, const char *container, struct pool *p,
	    const char *iteration_id, const char *loop_id, char *err);

/*
 * Runs node n alone in pool p, as the executor runs one node (retries,
 * error strategy, trace appended to r->node_runs): a single-step run
 * (single.c). Returns 0, -1 when the node failed (err says why), -2 when
 * stopped.
 */
int	run_node_exec(struct run *r, const struct gnode *n, struct pool *p,
	    char *err);

/* Milliseconds since the epoch. */
int64_t	run_now_ms(void);

/*
 * Counts the tokens of one model answer in the run's usage (thread-safe).
 * A provider that gave no total counts prompt + completion.
 */
void	run_usage_add(struct run *r, int64_t prompt, int64_t completion,
	    int64_t total);

/*
 * 1 once a stop was asked for this run: in this process (live_stop), by
 * the client going away (run_opts.cancelled), or through its stored record
 * from another process (read at most every few tens of ms) (live.c).
 */
int	run_stop_requested(struct run *r);

/* ====== Runs in progress (live.c) ====== */

/*
 * Registers run r (r->start_rec set) until live_remove; with
 * run.publish_after 0 its start record is stored first. Returns 0 or a
 * STORE_E* code.
 */
/* The monotonic clock in milliseconds. */
int64_t	live_now_ms(void);

int	live_add(struct run *r);
void	live_remove(struct run *r);

/*
 * Before r's final write: from now on the publisher does not store r's
 * start record. 1 when it was handed to it (a record may be stored: the
 * final write reads it for a stop and drops its lease key), 0 when no
 * record of r can exist.
 */
int	live_final(struct run *r);

/* Drops the key of run_id under e's lease (inside the run's final write;
 * nothing when it has none). */
int	live_lease_drop(struct store_txn *t, struct engine *e,
	    const char *run_id);

/*
 * Stops the run of this process with run or task id task_id, owned by
 * app_id and user as record_owned says: 0, or ENGINE_ENOTFOUND.
 */
int	live_stop(struct engine *e, const char *app_id, const char *user,
	    const char *task_id);

/* A copy of the start record of this process's run run_id, or NULL. */
json_t	*live_get(struct engine *e, const char *run_id);

/*
 * Keeps event ev of r (its name event) in r's event log, when r has one,
 * for engine_run_events; called where the event goes out, under r->mu.
 */
void	live_log_add(struct run *r, const char *event, const json_t *ev);

/*
 * A node execution as the run keeps and stores it (run.c): a JSON array
 * in a fixed order, new reference (NULL when out of memory). error is NULL
 * for a success; times are ms since the epoch. trace_unpack gives the
 * object the console's node-execution API answers with (a new reference;
 * a trace already in object form comes back as it is).
 */
json_t	*trace_pack(const char *exec_id, const struct gnode *n, int index,
	    const char *pred, json_t *inputs, json_t *process_data,
	    json_t *outputs, const char *status, const char *error,
	    int64_t created_ms, int64_t finished_ms, json_t *metadata,
	    const char *iter, const char *loop);
json_t	*trace_unpack(json_t *t);

/*
 * Puts run record rec under its id and in runs_by_app (run.c). Returns 0
 * or a STORE_E* code.
 */
int	run_record_put(struct store_txn *t, const json_t *rec);

/* ====== Node types (engine/nodes/) ====== */

/* What a node execution works with and gives back. */
struct node_ctx {
	struct run		*run;
	const struct gnode	*node;
	struct pool		*pool;
	const char		*iteration_id;	/* enclosing container */
	const char		*loop_id;
	/* filled by the node */
	json_t			*inputs;	/* object, for the trace */
	json_t			*process_data;	/* object or NULL */
	json_t			*outputs;	/* object */
	json_t			*metadata;	/* execution_metadata */
	const char		*handle;	/* branch taken; "source" */
	char			 handle_buf[128];
	char			 err[ENGINE_ERRMAX];
	const char		*error_type;	/* e.g. "NodeRunError" */
	int			 no_retry;	/* the failure is final: a
						 * retry_config does not apply */
};

struct node_type {
	const char	*type;		/* data.type */
	/*
	 * Runs the node: reads ctx->node->data and the pool, fills outputs
	 * (and inputs, process_data, handle). Returns 0, or non-zero with
	 * ctx->err saying why (then the node's error strategy applies).
	 */
	int		 (*run)(struct node_ctx *ctx);
	int		 container;	/* iteration, loop: runs a scope */
};

/* The i-th node type flowcgi runs (from 0), or NULL past the last. */
const struct node_type *node_type_at(size_t i);

/* Helpers for node files (nodes/common.c). */
const char *node_str(const struct gnode *n, const char *key);
/* run_stop_requested for a struct sandbox_cancel: arg is the struct run. */
int	node_stop_asked(void *run);
/* The last name of a selector, for a message; "(none)" when it has no
 * string there. Borrowed from sel. */
const char *node_selector_tail(const json_t *sel);
/* Fails the node with a message. Returns -1. */
int	node_fail(struct node_ctx *c, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* The value of a selector, or NULL (new reference). */
json_t	*node_resolve(struct node_ctx *c, const json_t *selector);

/*
 * Renders Dify's {{#a.b#}} template tpl against the node's pool in form
 * (TPL_TEXT, TPL_MARKDOWN). *out is malloc'd (caller frees). Returns 0,
 * or -1 with the node failed (ctx->err set).
 */
int	node_render(struct node_ctx *c, const char *tpl, enum tpl_form form,
	    char **out);

/*
 * Evaluates if-else style conditions joined by lop ("and" / "or") against
 * the node's pool. Returns 1 or 0, or -1 with the node failed.
 */
int	condition_eval(struct node_ctx *c, const json_t *conds,
	    const char *lop);

/*
 * The node's `variables` list ([{variable, value_selector}]) resolved
 * into an object {variable: value or null}. New reference; NULL when out
 * of memory.
 */
json_t	*node_variables(struct node_ctx *c);

#endif
