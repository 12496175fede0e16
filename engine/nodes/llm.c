/*
 * llm.c — the classic runtime's LLM node: prompt messages from the chat
 * template (basic {{#..#}} or jinja2 edition), {{#context#}}, memory (the
 * conversation's last messages and query_prompt_template), vision (image
 * files as parts of the last user message), completion params and
 * structured output, through the provider layer (engine/llm/). Outputs
 * text, reasoning_content (<think> split off when reasoning_format is
 * "separated"), usage, finish_reason and structured_output.
 *
 * Streaming: when an answer node's template starts with this node's text,
 * or (workflows) an end node outputs it, each delta goes out as it arrives
 * (message / text_chunk) and the answer node does not send it again.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"
#include "engine/llm/llm.h"
#include "engine/nodes/nodes.h"

/* ====== Prompt ====== */

static enum llm_role
role_of(const char *r)
{
	if (r != NULL && strcmp(r, "system") == 0)
		return LLM_SYSTEM;
	if (r != NULL && strcmp(r, "assistant") == 0)
		return LLM_ASSISTANT;
	return LLM_USER;
}

/* The text of the context variable: strings as they are, retrieval
 * results ([{content}]) joined. */
static char *
context_text(struct node_ctx *c)
{
	json_t		*ctxcfg = json_object_get(c->node->data, "context");
	json_t		*v, *item;
	struct dbuf	 sb = { 0 };
	size_t		 i;
	char		*s = NULL;

	if (!json_is_true(json_object_get(ctxcfg, "enabled")))
		return NULL;
	if ((v = node_resolve(c, json_object_get(ctxcfg,
	    "variable_selector"))) == NULL)
		return strdup("");
	if (json_is_string(v))
		s = strdup(json_string_value(v));
	else if (json_is_array(v)) {
		/* knowledge items are the answer's citations (Dify's
		 * RunRetrieverResourceEvent) */
		run_resources_add(c->run, v);
		json_array_foreach(v, i, item) {
			const char *t = json_is_string(item) ?
			    json_string_value(item) : json_string_value(
			    json_object_get(item, "content"));

			if (t == NULL)
				continue;
			if (sb.len > 0)
				dbuf_addstr(&sb, "\n");
			dbuf_addstr(&sb, t);
		}
		s = dbuf_take(&sb, NULL);
	} else
		tpl_value_text(v, TPL_TEXT, &s);
	json_decref(v);
	return s ? s : strdup("");
}

/* A prompt text: basic edition with {{#..#}} (and {{#context#}}), or the
 * jinja2 edition over prompt_config.jinja2_variables. */
static int
render_text(struct node_ctx *c, const json_t *item, const char *context,
    char **out)
{
	const char	*ed = json_string_value(json_object_get(item,
			    "edition_type"));
	const char	*text = json_string_value(json_object_get(item, "text"));
	json_t		*vars, *v, *val;
	const char	*name;
	size_t		 i, len;
	char		*tmp = NULL, *hit;
	int		 rc;

	if (ed != NULL && strcmp(ed, "jinja2") == 0) {
		const char *j = json_string_value(json_object_get(item,
		    "jinja2_text"));

		vars = json_object();
		json_array_foreach(json_object_get(json_object_get(
		    c->node->data, "prompt_config"), "jinja2_variables"), i,
		    v) {
			if ((name = json_string_value(json_object_get(v,
			    "variable"))) == NULL)
				continue;
			val = node_resolve(c, json_object_get(v,
			    "value_selector"));
			if (json_object_set_new(vars, name, val ? val :
			    json_null()) != 0) {
				json_decref(vars);
				return node_fail(c, "out of memory");
			}
		}
		if (vars == NULL)
			return node_fail(c, "out of memory");
		rc = jinja_render(j ? j : "", j ? strlen(j) : 0, vars, NULL,
		    c->err, out, &len);
		json_decref(vars);
		return rc == 0 ? 0 : -1;
	}
	if (node_render(c, text, TPL_TEXT, &tmp) != 0)
		return -1;
	/* {{#context#}} is not a variable: substitute the context */
	if (context != NULL && (hit = strstr(tmp, "{{#context#}}")) != NULL) {
		struct dbuf sb = { 0 };
		char *p = tmp;

		while ((hit = strstr(p, "{{#context#}}")) != NULL) {
			dbuf_add(&sb, p, (size_t)(hit - p));
			dbuf_addstr(&sb, context);
			p = hit + 13;
		}
		dbuf_addstr(&sb, p);
		free(tmp);
		tmp = dbuf_take(&sb, NULL);
		if (tmp == NULL)
			return node_fail(c, "out of memory");
	}
	*out = tmp;
	return 0;
}

/* Image files of the vision variable as message parts. */
static int
vision_parts(struct node_ctx *c, struct prompt *p)
{
	json_t		*vis = json_object_get(c->node->data, "vision");
	json_t		*sel, *files, *f;
	const char	*detail, *url;
	char		*data = NULL, *b64;
	size_t		 len, i, n;

	if (!json_is_true(json_object_get(vis, "enabled")))
		return 0;
	sel = json_object_get(json_object_get(vis, "configs"),
	    "variable_selector");
	detail = json_string_value(json_object_get(json_object_get(vis,
	    "configs"), "detail"));
	files = sel ? node_resolve(c, sel) : pool_get_parts(c->pool,
	    (const char *const[]){ "sys", "files" }, 2);
	if (files == NULL)
		return 0;
	if (json_is_object(files)) {
		json_t *a = json_array();

		if (json_array_append_new(a, files) != 0) {
			json_decref(a);
			return node_fail(c, "out of memory");
		}
		files = a;
	}
	n = json_array_size(files);
	if ((p->parts = calloc(n + 1, sizeof(*p->parts))) == NULL) {
		json_decref(files);
		return node_fail(c, "out of memory");
	}
	json_array_foreach(files, i, f) {
		const char *type = json_string_value(json_object_get(f, "type"));

		if (type == NULL || strcmp(type, "image") != 0)
			continue;
		url = json_string_value(json_object_get(f, "url"));
		if (url == NULL || strncmp(url, "data:", 5) != 0) {
			/* make a data: URL from whatever holds the bytes */
			if (file_bytes(c, f, &data, &len) != 0) {
				json_decref(files);
				return -1;
			}
			b64 = file_b64_encode(data, len);
			free(data);
			data = NULL;
			if (b64 == NULL) {
				json_decref(files);
				return node_fail(c, "out of memory");
			}
			{
				struct dbuf sb = { 0 };
				const char *mime = json_string_value(
				    json_object_get(f, "mime_type"));

				dbuf_addstr(&sb, "data:");
				dbuf_addstr(&sb, mime ? mime : "image/png");
				dbuf_addstr(&sb, ";base64,");
				dbuf_addstr(&sb, b64);
				free(b64);
				url = prompt_keep(p, dbuf_take(&sb, NULL));
			}
		}
		p->parts[p->nparts].type = LLM_PART_IMAGE;
		p->parts[p->nparts].text = url;
		p->parts[p->nparts].detail = detail;
		p->nparts++;
	}
	json_decref(files);
	return 0;
}

static int
build_prompt(struct node_ctx *c, struct prompt *p)
{
	json_t		*tpl = json_object_get(c->node->data, "prompt_template");
	json_t		*mem = json_object_get(c->node->data, "memory");
	json_t		*item, *h;
	char		*ctx = context_text(c), *text;
	const char	*qt, *query;
	size_t		 i, start, win;
	int		 rc = -1;

	if (json_is_object(tpl)) {	/* completion mode: one text */
		if (render_text(c, tpl, ctx, &text) != 0)
			goto out;
		if (prompt_add(c, p, LLM_USER, prompt_keep(p, text)) != 0)
			goto out;
	} else
		json_array_foreach(tpl, i, item) {
			if (render_text(c, item, ctx, &text) != 0)
				goto out;
			if (prompt_add(c, p, role_of(json_string_value(
			    json_object_get(item, "role"))), prompt_keep(p,
			    text)) != 0)
				goto out;
		}
	if (json_is_object(mem)) {
		/* the conversation so far, then the user's query */
		win = json_array_size(c->run->history);
		if (json_is_true(json_object_get(json_object_get(mem, "window"),
		    "enabled"))) {
			size_t size = (size_t)json_integer_value(
			    json_object_get(json_object_get(mem, "window"),
			    "size"));

			if (size > 0 && size < win)
				win = size;
		}
		start = json_array_size(c->run->history) - win;
		for (i = start; i < json_array_size(c->run->history); i++) {
			h = json_array_get(c->run->history, i);
			if (prompt_add(c, p, LLM_USER, json_string_value(
			    json_object_get(h, "query"))) != 0 ||
			    prompt_add(c, p, LLM_ASSISTANT, json_string_value(
			    json_object_get(h, "answer"))) != 0)
				goto out;
		}
		query = c->run->opts->query;
		qt = json_string_value(json_object_get(mem,
		    "query_prompt_template"));
		if (qt != NULL && *qt != '\0') {
			if (node_render(c, qt, TPL_TEXT, &text) != 0)
				goto out;
			query = prompt_keep(p, text);
		}
		if (query != NULL && *query != '\0' &&
		    prompt_add(c, p, LLM_USER, query) != 0)
			goto out;
	}
	if (vision_parts(c, p) != 0)
		goto out;
	if (p->nparts > 0) {
		/* images go with the last user message */
		for (i = p->n; i > 0; i--)
			if (p->msgs[i - 1].role == LLM_USER)
				break;
		if (i == 0 && prompt_add(c, p, LLM_USER, "") != 0)
			goto out;
		if (i == 0)
			i = p->n;
		{
			struct llm_part *all = calloc(p->nparts + 1,
			    sizeof(*all));

			if (all == NULL) {
				node_fail(c, "out of memory");
				goto out;
			}
			all[0].type = LLM_PART_TEXT;
			all[0].text = p->msgs[i - 1].content ?
			    p->msgs[i - 1].content : "";
			memcpy(all + 1, p->parts, p->nparts * sizeof(*all));
			free(p->parts);
			p->parts = all;
			p->nparts++;
			p->msgs[i - 1].parts = p->parts;
			p->msgs[i - 1].nparts = p->nparts;
		}
	}
	rc = 0;
out:
	free(ctx);
	return rc;
}

/* ====== The node ====== */

/* Moves <think>...</think> at the start of text into *reasoning. */
static void
split_think(char **text, char **reasoning)
{
	char	*t = *text, *open, *close, *rest;
	size_t	 lead = strspn(t, " \n\r\t");

	open = strncmp(t + lead, "<think>", 7) == 0 ? t + lead : NULL;
	if (open == NULL || (close = strstr(open, "</think>")) == NULL)
		return;
	*reasoning = strndup(open + 7, (size_t)(close - open - 7));
	rest = close + 8;
	rest += strspn(rest, " \n\r\t");
	memmove(t, rest, strlen(rest) + 1);
}

static int
llm_run(struct node_ctx *c)
{
	struct prompt		 p;
	struct llm_request	 rq;
	struct llm_response	 rs;
	struct stream_ctx	 sc;
	json_t			*model = json_object_get(c->node->data, "model");
	json_t			*so, *parsed, *gen = NULL;
	const char		*provider, *name, *rf;
	char			*text = NULL, *reasoning = NULL, key[128];
	json_t			*files = NULL;
	size_t			 i;
	int			 rc = -1, bad = 0;

	memset(&p, 0, sizeof(p));
	memset(&rq, 0, sizeof(rq));
	memset(&rs, 0, sizeof(rs));
	provider = json_string_value(json_object_get(model, "provider"));
	name = json_string_value(json_object_get(model, "name"));
	if (provider == NULL || name == NULL)
		return node_fail(c, "the node has no model (model.provider "
		    "and model.name)");
	if ((p.keep = json_array()) == NULL)
		return node_fail(c, "out of memory");
	if (build_prompt(c, &p) != 0)
		goto out;
	if (p.nomem) {
		node_fail(c, "out of memory");
		goto out;
	}
	rq.model = name;
	rq.messages = p.msgs;
	rq.nmessages = p.n;
	rq.params = json_object_get(model, "completion_params");
	so = json_object_get(json_object_get(c->node->data,
	    "structured_output"), "schema");
	if ((json_is_true(json_object_get(c->node->data,
	    "structured_output_enabled")) || json_is_true(json_object_get(
	    c->node->data, "structured_output_switch_on"))) &&
	    json_is_object(so))
		rq.response_schema = so;
	memset(&sc, 0, sizeof(sc));
	sc.c = c;
	if (rq.response_schema == NULL && !json_is_true(json_object_get(
	    c->node->data, "computer_use")) && llm_streams_field(c, "text")) {
		rq.stream = 1;
		rq.on_delta = llm_on_delta;
		rq.arg = &sc;
		snprintf(key, sizeof(key), "%s.text", c->node->id);
	}
	if (json_is_true(json_object_get(c->node->data, "computer_use"))) {
		/* the sandboxed runtime's Agent: bash and the node's tools */
		if ((gen = json_pack("{s:s,s:[],s:[],s:[]}", "content", "",
		    "reasoning_content", "tool_calls", "sequence")) == NULL ||
		    agent_sandbox_run(c, &p, model, &rs, gen, &files) != 0)
			goto out;
		text = strdup(json_string_value(json_object_get(gen,
		    "content")));
	} else {
		if (llm_trace(c, &p, model) != 0) {
			node_fail(c, "out of memory");
			goto out;
		}
		if (llm_chat(c->run->e, provider, &rq, c->err, &rs) != 0) {
			c->error_type = "LLMNodeError";
			goto out;
		}
		text = strdup(rs.text ? rs.text : "");
	}
	if (rq.stream) {
		pthread_mutex_lock(&c->run->mu);
		bad = json_object_set_new(c->run->streamed, key, json_true());
		pthread_mutex_unlock(&c->run->mu);
		if (bad) {
			node_fail(c, "out of memory");
			goto out;
		}
	}
	reasoning = rs.reasoning_len ? strdup(rs.reasoning) : NULL;
	rf = node_str(c->node, "reasoning_format");
	if (rf != NULL && strcmp(rf, "separated") == 0 && reasoning == NULL &&
	    text != NULL && gen == NULL)
		split_think(&text, &reasoning);
	if (text == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	bad |= json_object_set_new(c->outputs, "text", json_string(text));
	bad |= json_object_set_new(c->outputs, "reasoning_content",
	    json_string(reasoning ? reasoning : ""));
	bad |= json_object_set_new(c->outputs, "usage", llm_usage_json(&rs));
	bad |= json_object_set_new(c->outputs, "finish_reason",
	    json_string(rs.finish_reason));
	/* the sandboxed runtime's view of the same answer */
	if (gen == NULL)
		gen = json_pack("{s:s,s:[s],s:[],s:[]}", "content", text,
		    "reasoning_content", reasoning ? reasoning : "",
		    "tool_calls", "sequence");
	bad |= json_object_set(c->outputs, "generation", gen);
	bad |= json_object_set_new(c->outputs, "files", files ?
	    json_incref(files) : json_array());
	if (rq.response_schema != NULL) {
		parsed = json_loads(text, 0, NULL);
		bad |= json_object_set_new(c->outputs, "structured_output",
		    parsed ? parsed : json_object());
	}
	if (bad) {
		node_fail(c, "out of memory");
		goto out;
	}
	c->metadata = json_pack("{s:I,s:o}", "total_tokens",
	    (json_int_t)rs.usage.total_tokens, "usage", llm_usage_json(&rs));
	run_usage_add(c->run, rs.usage.prompt_tokens,
	    rs.usage.completion_tokens, rs.usage.total_tokens);
	rc = 0;
out:
	free(text);
	free(reasoning);
	llm_response_release(&rs);
	free(p.parts);
	for (i = 0; i < p.nallocs; i++)
		free(p.allocs[i]);
	json_decref(p.keep);
	json_decref(gen);
	json_decref(files);
	return rc;
}

const struct node_type node_llm = { "llm", llm_run, 0 };
