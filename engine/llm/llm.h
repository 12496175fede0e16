/*
 * llm.h — model provider clients (private to engine/).
 *
 * One request and response model for every wire protocol. A protocol
 * (OpenAI-compatible chat completions, Anthropic Messages) is one file
 * that fills one struct llm_protocol; llm.c finds the configured provider
 * entry for a DSL's model.provider (providers.c), dispatches to its
 * protocol and retries 429 / 5xx answers with exponential backoff.
 *
 * Errors: every fallible call returns 0 or a negative ENGINE_E* code and
 * writes a message into err (ENGINE_ERRMAX bytes). A provider's refusal
 * reads "<entry>: <status> <the provider's message>", e.g. "openai: 401
 * Incorrect API key provided"; an API key never appears in a message or
 * a log line.
 */
#ifndef FLOWCGI_ENGINE_LLM_H
#define FLOWCGI_ENGINE_LLM_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "engine/internal.h"

/* ====== Requests ====== */

enum llm_role {
	LLM_SYSTEM,
	LLM_USER,
	LLM_ASSISTANT,
	LLM_TOOL,	/* a tool's result; tool_call_id says which call */
};

enum llm_part_type {
	LLM_PART_TEXT,
	LLM_PART_IMAGE,	/* text is a data: URL or an http(s) URL */
};

/* One piece of a multi-part message (text and images, for vision). */
struct llm_part {
	enum llm_part_type	 type;
	const char		*text;	/* the text, or the image URL */
	const char		*detail; /* image: low|high|auto or NULL */
};

/*
 * A tool call: in a response every string is malloc'd and freed by
 * llm_response_release; in a request (an assistant message that made
 * calls) they are borrowed, so a response's calls can be passed back as
 * they are. arguments is JSON text ("{}" when the model gave none).
 */
struct llm_tool_call {
	char	*id;
	char	*name;
	char	*arguments;
};

/* One message. content or parts (parts win when nparts > 0). */
struct llm_message {
	enum llm_role			 role;
	const char			*content;
	const struct llm_part		*parts;
	size_t				 nparts;
	/* LLM_ASSISTANT: the calls it made */
	const struct llm_tool_call	*tool_calls;
	size_t				 ntool_calls;
	/* LLM_TOOL: the call answered, and the tool's name (optional) */
	const char			*tool_call_id;
	const char			*name;
};

/* A tool the model may call; parameters is a JSON-schema object. */
struct llm_tool {
	const char	*name;
	const char	*description;
	const json_t	*parameters;	/* NULL: {"type":"object"} */
};

/* What a streamed delta carries. */
enum llm_delta {
	LLM_DELTA_TEXT,
	LLM_DELTA_REASONING,	/* DeepSeek reasoning_content, thinking */
};

/*
 * One chat request. Everything is borrowed for the duration of llm_chat.
 *
 * params are the DSL's model.completion_params passed through: the known
 * ones (temperature, top_p, max_tokens, stop, presence_penalty,
 * frequency_penalty, seed, ...) are translated to the protocol's names;
 * Dify's response_format ("json_object") and json_schema (text) are
 * honoured; other keys go to OpenAI-compatible servers that are not
 * api.openai.com unchanged.
 */
struct llm_request {
	const char			*model;
	const struct llm_message	*messages;
	size_t				 nmessages;
	const struct llm_tool		*tools;
	size_t				 ntools;
	/* NULL or "auto", "none", "required", or a tool's name */
	const char			*tool_choice;
	const json_t			*params;	/* object or NULL */
	/* Structured output: the answer is JSON that fits this schema. */
	const json_t			*response_schema;
	const char			*response_schema_name; /* "output" */
	/*
	 * Streaming: when stream is set, each piece of text (or reasoning)
	 * is passed to on_delta in order as it arrives, from the calling
	 * thread; text is not NUL-terminated. A non-zero return aborts the
	 * request (ENGINE_ESTOPPED, "stopped"). Whether or not it streams,
	 * the response holds the whole text at the end.
	 */
	int				 stream;
	int				 (*on_delta)(void *arg,
					    enum llm_delta kind,
					    const char *text, size_t len);
	void				*arg;
	int				 timeout; /* s; 0: llm.timeout */
};

/* ====== Responses ====== */

struct llm_usage {
	int64_t	prompt_tokens;
	int64_t	completion_tokens;
	int64_t	total_tokens;
};

/*
 * What a model answered. Start it zeroed; free what it holds with
 * llm_response_release. text and reasoning are NUL-terminated (empty
 * when nothing came).
 */
struct llm_response {
	char			*text;
	size_t			 text_len;
	char			*reasoning;
	size_t			 reasoning_len;
	struct llm_tool_call	*tool_calls;
	size_t			 ntool_calls;
	struct llm_usage	 usage;
	/* Dify's names: stop, length, tool_calls, content_filter, or what
	 * the provider said when it has no equivalent. */
	char			 finish_reason[32];
	char			 model[128];	/* as the provider says */
	double			 latency;	/* s, retries included */
	double			 first_token;	/* s to the first delta */
	int			 attempts;	/* HTTP requests made */
	size_t			 text_cap;	/* private to llm.c */
	size_t			 reasoning_cap;
};

void	llm_response_release(struct llm_response *r);

/*
 * Dify's usage object for r: {prompt_tokens, prompt_unit_price,
 * prompt_price_unit, prompt_price, completion_tokens, ..., total_tokens,
 * total_price, currency, latency} with zero prices. New reference, or
 * NULL when out of memory.
 */
json_t	*llm_usage_json(const struct llm_response *r);

/* ====== Provider entries (providers.c) ====== */

/* A resolved provider entry: where and how to send a request. */
struct llm_endpoint {
	char	 name[65];	/* the entry: "openai", "my-vllm", "*" */
	char	 protocol[16];	/* "openai" | "anthropic" */
	char	 base_url[1024];
	char	*api_key;	/* malloc'd, "" for none; wiped */
	char	 source[16];	/* settings|environment|config|default */
};

void	llm_endpoint_release(struct llm_endpoint *ep);

/*
 * The entry name a DSL's model.provider maps to: Dify's plugin prefix is
 * dropped ("langgenius/openai/openai" -> "openai"). Writes into buf.
 */
const char *llm_provider_name(const char *dsl_provider, char *buf,
	    size_t bufsz);

/*
 * Finds the entry that serves model of dsl_provider: a stored entry of
 * that name, else a built-in default the environment configures (openai
 * with OPENAI_API_KEY or OPENAI_BASE_URL, anthropic, deepseek, ...; ollama
 * always), else the catch-all entry "*" (stored, or llm.base_url). An
 * entry with a models list serves only those. Returns 0 with *out filled
 * (llm_endpoint_release), or ENGINE_EINVAL with err saying what to
 * configure, ENGINE_ESTORE, ENGINE_ENOMEM.
 */
int	llm_provider_resolve(struct engine *e, const char *dsl_provider,
	    const char *model, char *err, struct llm_endpoint *out);

/*
 * The entry named exactly name (stored, built-in or "*"), whatever it
 * serves. ENGINE_ENOTFOUND when there is none.
 */
int	llm_provider_lookup(struct engine *e, const char *name, char *err,
	    struct llm_endpoint *out);

/* ====== Protocols ====== */

/* What one attempt learned, for the retry loop in llm.c. */
struct llm_attempt {
	long	status;		/* HTTP status; 0 when none came */
	int	retry_after_ms;	/* from Retry-After; -1 when absent */
	int	delivered;	/* deltas reached on_delta: never retry */
	int	transient;	/* a provider error worth retrying */
	double	t0;		/* llm_clock() when the call began */
};

struct llm_protocol {
	const char	*name;
	/*
	 * One HTTP exchange with endpoint ep. Returns 0 with out filled, or
	 * a negative ENGINE_E* code with err ("<entry>: <status> <message>")
	 * and at saying whether a retry may help. out may hold partial
	 * results on failure; the caller releases it either way.
	 */
	int		(*chat)(struct engine *e,
			    const struct llm_endpoint *ep,
			    const struct llm_request *rq,
			    struct llm_attempt *at, char *err,
			    struct llm_response *out);
};

extern const struct llm_protocol llm_protocol_openai;
extern const struct llm_protocol llm_protocol_anthropic;

/* The protocol called name, or NULL. */
const struct llm_protocol *llm_protocol_find(const char *name);

/*
 * Resolves dsl_provider (llm_provider_resolve) and runs rq through its
 * protocol, retrying a 429, 408 or 5xx answer up to llm.retries times
 * after llm.backoff_ms, doubling each time, or what Retry-After asks,
 * never longer than llm.max_backoff_ms; nothing is retried once a delta
 * was streamed. *out must be zeroed; it is filled on 0 and released on
 * failure. Returns 0, ENGINE_EINVAL (no provider serves the model; bad
 * request), ENGINE_EFETCH (the provider refused or could not be reached;
 * err carries its message), ENGINE_ESTOPPED (on_delta stopped it),
 * ENGINE_ELIMIT, ENGINE_ENOMEM or ENGINE_ESTORE.
 */
int	llm_chat(struct engine *e, const char *dsl_provider,
	    const struct llm_request *rq, char *err, struct llm_response *out);

/* The same against an endpoint already resolved. */
int	llm_chat_endpoint(struct engine *e, const struct llm_endpoint *ep,
	    const struct llm_request *rq, char *err, struct llm_response *out);

/* ====== Helpers for protocol files (llm.c) ====== */

/*
 * An incremental text/event-stream parser: feed bytes as they come;
 * on_event gets each event's type ("" when none was named) and its data
 * lines joined by "\n", NUL-terminated. A non-zero return from on_event
 * stops the parse and is returned by llm_sse_feed from then on.
 */
struct llm_sse {
	int		(*on_event)(void *arg, const char *event,
			    const char *data, size_t len);
	void		*arg;
	struct tpl_sb	 line;
	struct tpl_sb	 data;
	char		 event[64];
	int		 have_data;
	int		 rc;
};

/* Feeds n bytes. Returns 0 or the first non-zero on_event result. */
int	llm_sse_feed(struct llm_sse *s, const char *p, size_t n);
/* Delivers a last event not followed by a blank line; frees buffers. */
int	llm_sse_finish(struct llm_sse *s);

/*
 * The message in a provider's error body (OpenAI {error: {message}},
 * Anthropic {error: {type, message}}, Ollama {error: "..."}, {message},
 * {detail}), or its first line of text; key is removed from it wherever
 * it appears. Writes "<name>: <status> <message>" into err.
 */
void	llm_error_from_body(const char *name, long status, const char *body,
	    size_t len, const char *key, char *err);

/* Removes every occurrence of key (when at least 4 bytes) from msg. */
void	llm_scrub(char *msg, const char *key);

/* Appends text to a response's text or reasoning, and to the stream. */
int	llm_emit(const struct llm_request *rq, struct llm_attempt *at,
	    struct llm_response *out, enum llm_delta kind, const char *text,
	    size_t len);

/* Dify's finish reason for a provider's stop reason (into out). */
void	llm_finish_reason(const char *raw, char *out, size_t outsz);

/* base_url with path appended, one slash between them (malloc'd). */
char	*llm_url(const char *base_url, const char *path);

/* Seconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
double	llm_clock(void);

/* 1 when a status is worth retrying: 408, 409, 429, 5xx. */
int	llm_status_transient(long status);

/*
 * Fills at's status, transient and retry_after_ms from an HTTP answer
 * (Retry-After once outbound_resp carries it; see llm.c).
 */
void	llm_attempt_status(struct llm_attempt *at,
	    const struct outbound_resp *resp);

/* ====== One exchange (post.c) ====== */

/* What a protocol file sends, and where a streamed answer goes. */
struct llm_post {
	const char	*path;		/* after base_url: "chat/completions" */
	const char	*header;	/* one more fixed header, or NULL */
	const char	*auth;		/* the key's header up to the key */
	const json_t	*body;
	/* Each event of a streamed answer, as struct llm_sse passes it. */
	int		(*on_event)(void *arg, const char *event,
			    const char *data, size_t len);
	void		*arg;
};

/*
 * POSTs po->body to ep with Content-Type, po->header, Accept (SSE when
 * rq->stream), the key (po->auth followed by it, when ep has one) and
 * rq's timeout. Fills at from the HTTP status. Returns 0 with *whole NULL
 * when a stream of events was read (the protocol checks it was
 * complete), 0 with *whole the answer's JSON (a new reference) when it
 * came whole — not streamed, or a server that ignored "stream" — or a
 * negative ENGINE_E* code with err set: ENGINE_EFETCH (unreachable, a
 * refusal, an answer that is not JSON), ENGINE_ESTOPPED ("stopped"),
 * ENGINE_ENOMEM, or what on_event returned.
 */
int	llm_post(struct engine *e, const struct llm_endpoint *ep,
	    const struct llm_request *rq, const struct llm_post *po,
	    struct llm_attempt *at, char *err, json_t **whole);

#endif
