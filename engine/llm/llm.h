/*
 * llm.h — model provider clients (private to engine/).
 *
 * One request and response model for every wire protocol. A protocol
 * (OpenAI-compatible chat completions, Anthropic Messages) is one file
 * that fills one struct llm_protocol with the hooks where protocols
 * differ. The chat driver (chat.c) finds the configured provider entry for
 * a DSL's model.provider (providers.c), runs the exchange through the
 * protocol's hooks and retries 429 / 5xx answers with exponential backoff.
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
	size_t			 text_cap;	/* private to chat.c */
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
 * with OLLAMA_*), else the catch-all entry "*" (stored, or llm.base_url). An
 * entry with a models list serves only those. Without a catch-all,
 * ollama is its local default address. Returns 0 with *out filled
 * (llm_endpoint_release), or ENGINE_EINVAL with err saying what to
 * configure, ENGINE_ESTORE, ENGINE_ENOMEM.
 */
int	llm_provider_resolve(struct engine *e, const char *dsl_provider,
	    const char *model, char *err, struct llm_endpoint *out);

/*
 * The entry named exactly name (stored, built-in or "*"), whatever it
 * serves. ENGINE_ENOTFOUND when there is none.
 */
/*
 * The first model listed for the stored provider name into buf ("" when
 * it lists none or is not stored). Returns 0 or the store's error.
 */
int	llm_provider_first_model(struct engine *e, const char *name,
	    char *buf, size_t bufsz);
int	llm_provider_lookup(struct engine *e, const char *name, char *err,
	    struct llm_endpoint *out);

/* ====== Protocols ====== */

/* What one attempt learned, for the retry loop in chat.c. */
struct llm_attempt {
	long	status;		/* HTTP status; 0 when none came */
	int	retry_after_ms;	/* from Retry-After; -1 when absent */
	int	delivered;	/* deltas reached on_delta: never retry */
	int	transient;	/* a provider error worth retrying */
	double	t0;		/* llm_clock() when the call began */
};

/*
 * A tool call (or another content block) being assembled from the pieces
 * of a stream, at the index the provider gives it.
 */
struct llm_slot {
	int		 tool;	/* a tool call: taken into the response */
	struct dbuf	 id, name, args;
};

struct llm_protocol;

/*
 * One exchange under way (chat.c): what a protocol's hooks read and fill.
 * All but slots is borrowed for the exchange; err has ENGINE_ERRMAX
 * bytes.
 */
struct llm_chat {
	const struct llm_protocol	*proto;
	const struct llm_endpoint	*ep;
	const struct llm_request	*rq;
	struct llm_attempt		*at;
	struct llm_response		*out;
	char				*err;
	/* A tool whose input is the answer's text (structured output asked
	 * for with a forced tool), or NULL; the body hook sets it. */
	const char			*answer_tool;
	struct llm_slot			*slots;
	size_t				 nslots;
	char				 finish[32];	/* stop reason */
	int				 done;		/* end marker came */
};

/*
 * A wire protocol is one file that fills this table with what differs
 * between protocols; the driver in chat.c does the rest. It POSTs the
 * body hook's JSON to base_url/path with Content-Type, Accept, header and
 * the key (auth followed by it), and then either feeds each event of a
 * streamed answer to event or gives an answer that came whole to whole.
 * After a stream it checks that done or finish was set, takes the slots
 * marked tool as the response's tool calls (llm_chat_call), lets end
 * settle finish and maps finish to Dify's name. Hooks return 0 or a
 * negative ENGINE_E* code with c->err set.
 */
struct llm_protocol {
	const char	*name;
	const char	*auth;		/* the key's header up to the key */
	const char	*header;	/* one more fixed header, or NULL */
	json_int_t	 max_slots;	/* per answer; more is ENGINE_ELIMIT */
	const char	*slots;		/* what a slot is, for that error */
	/* The path after base_url: "chat/completions". */
	const char	*(*path)(const struct llm_endpoint *ep);
	/* The request body, a new reference; NULL when out of memory. */
	json_t		*(*body)(struct llm_chat *c);
	/* One event of a streamed answer, as struct llm_sse passes it. */
	int		(*event)(struct llm_chat *c, const char *event,
			    const char *data, size_t len);
	/* An answer that came whole; fills c->out's finish_reason too. */
	int		(*whole)(struct llm_chat *c, const json_t *j);
	/* A complete stream, its calls taken: settles c->finish; or NULL. */
	void		(*end)(struct llm_chat *c);
	/* 1 when an error object in a stream is worth a retry; or NULL. */
	int		(*transient)(const json_t *error);
};

extern const struct llm_protocol llm_protocol_openai;
extern const struct llm_protocol llm_protocol_anthropic;

/* The protocol called name, or NULL. */
const struct llm_protocol *llm_protocol_find(const char *name);

/* ====== Chat (chat.c) ====== */

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
	struct dbuf	 line;
	struct dbuf	 data;
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

/* Dify's finish reason for a provider's stop reason (into out). */
void	llm_finish_reason(const char *raw, char *out, size_t outsz);

/*
 * A tool's parameters: its JSON schema, or {"type": "object",
 * "properties": {}} when it has none. A new reference; NULL when out of
 * memory.
 */
json_t	*llm_tool_schema(const struct llm_tool *tl);

/*
 * The stop sequences in params ("stop": a string or an array) as an
 * array, a new reference; NULL when there are none.
 */
json_t	*llm_stop_list(const json_t *params);

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

/* ====== For the hooks (chat.c) ====== */

/*
 * Appends text to the response's text or reasoning and passes it to
 * on_delta when streaming. Returns 0, ENGINE_ENOMEM or ENGINE_ESTOPPED.
 */
int	llm_chat_emit(struct llm_chat *c, enum llm_delta kind,
	    const char *text, size_t len);

/*
 * Adds a tool call to the response (the strings are copied; args NULL
 * is "{}"), or, for c->answer_tool, emits args as the answer's text.
 * Returns 0, ENGINE_ENOMEM or ENGINE_ESTOPPED.
 */
int	llm_chat_call(struct llm_chat *c, const char *id, const char *name,
	    const char *args);

/*
 * The slot at idx, zeroed when new; NULL with c->err set when idx is
 * negative or not below the protocol's max_slots (or out of memory): the
 * hook returns ENGINE_ELIMIT.
 */
struct llm_slot *llm_chat_slot(struct llm_chat *c, json_int_t idx);

/*
 * A streamed event's data read as JSON (a new reference), or NULL with
 * c->err set: the hook returns ENGINE_EFETCH.
 */
json_t	*llm_chat_json(struct llm_chat *c, const char *data, size_t len);

/*
 * An error the provider sent inside a stream (data, with its error
 * object): words c->err from it, asks the protocol's transient hook
 * whether a retry may help, and returns ENGINE_EFETCH.
 */
int	llm_chat_error(struct llm_chat *c, const char *data, size_t len,
	    const json_t *error);

/* Frees the slots. */
void	llm_chat_release(struct llm_chat *c);

/*
 * POSTs len bytes of body (Content-Type ctype) to path of ep, an
 * OpenAI-compatible provider's audio API (/audio/speech,
 * /audio/transcriptions), at most max bytes of answer: *resp filled on 0
 * (outbound_resp_release). A non-2xx status is ENGINE_EFETCH with the
 * provider's message; the key is never in err.
 */
struct outbound_resp;
int	llm_audio_post(struct engine *e, const struct llm_endpoint *ep,
	    const char *path, const char *ctype, const void *body, size_t len,
	    int64_t max, char *err, struct outbound_resp *resp);

/*
 * Speech to text on ep: POSTs model and len bytes of audio (type mime
 * when it is an audio/ type, else audio/mpeg; named temp.mp3, as Dify)
 * as multipart/form-data to /audio/transcriptions. On 0 *text is the
 * answer's text (free); otherwise err says why (never with the key).
 */
int	llm_audio_transcription(struct engine *e,
	    const struct llm_endpoint *ep, const char *model, const char *mime,
	    const void *audio, size_t len, char *err, char **text);

#endif
