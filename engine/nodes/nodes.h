/*
 * nodes.h — what the files of engine/nodes/ share among themselves (the
 * node-type table itself is engine/run/run.h's): the prompt the llm node
 * (llm.c) builds and the sandboxed runtime's Agent (agent_sandbox.c, the
 * llm node with computer_use on) uses, and the bytes of a file a node
 * reads (files.c). Private to engine/nodes/ (and its unit tests).
 */
#ifndef FLOWCGI_ENGINE_NODES_H
#define FLOWCGI_ENGINE_NODES_H

#include "engine/run/run.h"
#include "engine/llm/llm.h"

#define LLM_MAX_MESSAGES 256

/*
 * 1 when the n bytes at s are well-formed UTF-8: text JSON can hold, so
 * that a json_string of it fails only when out of memory.
 */
static inline int
node_utf8_ok(const char *s, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i += k)
		if ((k = engine_utf8_seq((const unsigned char *)s + i,
		    n - i)) == 0)
			return 0;
	return 1;
}

/* The messages of one model call, and what they point to. */
struct prompt {
	struct llm_message	 msgs[LLM_MAX_MESSAGES];
	size_t			 n;
	json_t			*keep;		/* strings the messages point to */
	struct llm_part		*parts;
	size_t			 nparts;
	void			*allocs[LLM_MAX_MESSAGES];	/* tool calls */
	size_t			 nallocs;
	int			 nomem;	/* a prompt_keep failed */
};

/* s (malloc'd, taken; NULL allowed) kept as long as p; "" when out of
 * memory, which sets p->nomem: look at it before the prompt is sent. */
const char	*prompt_keep(struct prompt *p, char *s);

/* Appends a message (text borrowed); -1 with the node failed when full. */
int	prompt_add(struct node_ctx *c, struct prompt *p, enum llm_role role,
	    const char *text);

/*
 * Does a downstream answer start with {{#id.<field>#}}, or (workflows) an
 * end node output [id, <field's parts>]? Then deltas stream as they come.
 * field: "text", or "generation.content" for the sandboxed Agent.
 */
int	llm_streams_field(struct node_ctx *c, const char *field);

/*
 * The node's trace (process_data): p's messages as sent, the model.
 * Returns 0, or -1 when out of memory (the node is not failed: a caller
 * failing for another reason keeps its own message).
 */
int	llm_trace(struct node_ctx *c, const struct prompt *p,
	    const json_t *model);

/* What llm_on_delta needs; zero it and set c. */
struct stream_ctx {
	struct node_ctx	*c;
	int		 in_think;	/* inside <think> ... </think> */
	int		 separated;
	double		 stop_checked;	/* llm_clock() of the last look */
};

/* The llm_request on_delta callback: text deltas to the run's stream,
 * 1 (stop) when the run is asked to stop. */
int	llm_on_delta(void *arg, enum llm_delta kind, const char *text,
	    size_t len);

/*
 * 1 when the run of s's node is to stop: it is stopping, or (looked at
 * once per run.stop_check_ms) a stop was asked for, which sets it
 * stopping. Between the tokens of a streamed answer.
 */
int	llm_stream_stopped(struct stream_ctx *s);

/*
 * The sandboxed runtime's Agent (agent_sandbox.c): p compiled (skill
 * references), the model may call bash in the run's sandbox and the
 * node's tools until it answers, at most max_iterations times. Fills
 * *final with the final answer's response (release it), gen (an object
 * with the arrays reasoning_content, tool_calls and sequence) as Dify's
 * generation output: content (the text of every turn), reasoning per
 * turn, tool calls ({id, name, arguments, output, files, status,
 * elapsed_time}) and the sequence of them; *files with the files left
 * under output/ (a new array). Returns 0, or -1 with the node failed.
 */
int	agent_sandbox_run(struct node_ctx *c, struct prompt *p,
	    const json_t *model, struct llm_response *final, json_t *gen,
	    json_t **files);

/* ====== ReAct's text as it streams (react_view.c) ====== */

/*
 * What of a ReAct answer shows as it streams, as Dify's
 * CotAgentOutputParser.handle_react_stream_output lets it through: not
 * what is between ``` fences, nor a {...} blob (the action), nor the
 * "Thought:" and "Action:" markers at the start of a word. Fed the text
 * piece by piece; what shows is added to out.
 */
struct react_view {
	int	ticks;		/* backticks in a row */
	int	in_code;
	int	depth;		/* {} nesting outside fences */
	const char *mark;	/* the marker being matched, or NULL */
	char	held[8];	/* its bytes matched so far */
	size_t	nheld;
	char	last;		/* the last byte shown or held */
};

/* Adds what of the n bytes at p shows to out (zero v to start). */
void	react_view(struct react_view *v, const char *p, size_t n,
	    struct dbuf *out);

/* ====== Files (files.c) ====== */

/*
 * A file value is Dify's File JSON: {"dify_model_identity":
 * "__dify__file__", id, tenant_id, type (image, document, audio, video,
 * custom), transfer_method, remote_url, related_id, filename, extension
 * (".pdf", with the dot), mime_type, size, url}. Files flowcgi makes carry
 * their bytes in `url` as a data: URL (base64), transfer_method
 * "tool_file", so any node (and the API answer) can read them without a
 * file store. What makes and decodes such files without a node
 * (file_from_bytes, file_ext, file_b64_*) is declared in engine/internal.h
 * for the tools too; it lives in files.c.
 */

/*
 * The bytes of file object file for node c:
 *  - a `url` (or `remote_url`) that is a data: URL: decoded (base64 or
 *    percent-encoded);
 *  - an http(s) `url` / `remote_url`: fetched through outbound_fetch with
 *    the SSRF guard, at most http.max_binary_response bytes, a non-2xx
 *    status is an error;
 *  - an uploaded file (transfer_method local_file, related_id or
 *    upload_file_id): the upload of the run's app (engine_upload_get);
 *  - a tool file without a data: URL (tool_file, related_id): not
 *    available, a clear error (flowcgi has no tool file store).
 * *data is malloc'd and NUL-terminated (caller frees), *len its length.
 * Returns 0, or -1 with the node failed (c->err says why).
 */
int	file_bytes(struct node_ctx *c, const json_t *file, char **data,
	    size_t *len);

#endif
