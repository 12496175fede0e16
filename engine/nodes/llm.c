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

#include "engine/exec.h"
#include "engine/llm/llm.h"
#include "engine/nodes/files.h"
#include "engine/sandbox/sandbox.h"

#define LLM_MAX_MESSAGES 256

/* ====== Prompt ====== */

struct prompt {
	struct llm_message	 msgs[LLM_MAX_MESSAGES];
	size_t			 n;
	json_t			*keep;		/* strings the messages point to */
	struct llm_part		*parts;
	size_t			 nparts;
	void			*allocs[LLM_MAX_MESSAGES];	/* tool calls */
	size_t			 nallocs;
};

static const char *
keep_str(struct prompt *p, char *s)
{
	json_t *j = json_string(s ? s : "");

	free(s);
	if (j == NULL)
		return "";
	json_array_append_new(p->keep, j);
	return json_string_value(j);
}

static int
add_msg(struct node_ctx *c, struct prompt *p, enum llm_role role,
    const char *text)
{
	if (p->n == LLM_MAX_MESSAGES)
		return node_fail(c, "more than %d prompt messages",
		    LLM_MAX_MESSAGES);
	memset(&p->msgs[p->n], 0, sizeof(p->msgs[p->n]));
	p->msgs[p->n].role = role;
	p->msgs[p->n].content = text;
	p->n++;
	return 0;
}

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
	struct tpl_sb	 sb = { NULL, 0, 0, 0 };
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
		json_array_foreach(v, i, item) {
			const char *t = json_is_string(item) ?
			    json_string_value(item) : json_string_value(
			    json_object_get(item, "content"));

			if (t == NULL)
				continue;
			if (sb.len > 0)
				tpl_sb_str(&sb, "\n");
			tpl_sb_str(&sb, t);
		}
		s = tpl_sb_take(&sb);
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
			json_object_set_new(vars, name, val ? val :
			    json_null());
		}
		rc = jinja_render(j ? j : "", j ? strlen(j) : 0, vars, NULL,
		    c->err, out, &len);
		json_decref(vars);
		return rc == 0 ? 0 : -1;
	}
	if (node_render(c, text, TPL_TEXT, &tmp) != 0)
		return -1;
	/* {{#context#}} is not a variable: substitute the context */
	if (context != NULL && (hit = strstr(tmp, "{{#context#}}")) != NULL) {
		struct tpl_sb sb = { NULL, 0, 0, 0 };
		char *p = tmp;

		while ((hit = strstr(p, "{{#context#}}")) != NULL) {
			tpl_sb_add(&sb, p, (size_t)(hit - p));
			tpl_sb_str(&sb, context);
			p = hit + 13;
		}
		tpl_sb_str(&sb, p);
		free(tmp);
		tmp = tpl_sb_take(&sb);
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

		json_array_append_new(a, files);
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
				struct tpl_sb sb = { NULL, 0, 0, 0 };
				const char *mime = json_string_value(
				    json_object_get(f, "mime_type"));

				tpl_sb_str(&sb, "data:");
				tpl_sb_str(&sb, mime ? mime : "image/png");
				tpl_sb_str(&sb, ";base64,");
				tpl_sb_str(&sb, b64);
				free(b64);
				url = keep_str(p, tpl_sb_take(&sb));
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
		if (add_msg(c, p, LLM_USER, keep_str(p, text)) != 0)
			goto out;
	} else
		json_array_foreach(tpl, i, item) {
			if (render_text(c, item, ctx, &text) != 0)
				goto out;
			if (add_msg(c, p, role_of(json_string_value(
			    json_object_get(item, "role"))), keep_str(p,
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
			if (add_msg(c, p, LLM_USER, json_string_value(
			    json_object_get(h, "query"))) != 0 ||
			    add_msg(c, p, LLM_ASSISTANT, json_string_value(
			    json_object_get(h, "answer"))) != 0)
				goto out;
		}
		query = c->run->opts->query;
		qt = json_string_value(json_object_get(mem,
		    "query_prompt_template"));
		if (qt != NULL && *qt != '\0') {
			if (node_render(c, qt, TPL_TEXT, &text) != 0)
				goto out;
			query = keep_str(p, text);
		}
		if (query != NULL && *query != '\0' &&
		    add_msg(c, p, LLM_USER, query) != 0)
			goto out;
	}
	if (vision_parts(c, p) != 0)
		goto out;
	if (p->nparts > 0) {
		/* images go with the last user message */
		for (i = p->n; i > 0; i--)
			if (p->msgs[i - 1].role == LLM_USER)
				break;
		if (i == 0 && add_msg(c, p, LLM_USER, "") != 0)
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

/* ====== Streaming ====== */

/* Does a downstream answer start with {{#id.text#}}, or (workflows) an
 * end node output [id, text]? Then deltas stream as they come. */
static int
streams_text(struct node_ctx *c)
{
	const struct graph	*g = c->run->g;
	char			 want[128];
	const char		*t;
	json_t			*o;
	size_t			 i, j;

	snprintf(want, sizeof(want), "{{#%s.text#}}", c->node->id);
	for (i = 0; i < g->nnodes; i++) {
		if (strcmp(g->nodes[i].type, "answer") == 0 &&
		    (t = node_str(&g->nodes[i], "answer")) != NULL &&
		    strncmp(t, want, strlen(want)) == 0)
			return 1;
		if (!c->run->chat && strcmp(g->nodes[i].type, "end") == 0)
			json_array_foreach(json_object_get(g->nodes[i].data,
			    "outputs"), j, o) {
				json_t *s = json_object_get(o,
				    "value_selector");

				if (json_array_size(s) == 2 && strcmp(
				    json_string_value(json_array_get(s, 0)) ?
				    json_string_value(json_array_get(s, 0)) :
				    "", c->node->id) == 0 && strcmp(
				    json_string_value(json_array_get(s, 1)) ?
				    json_string_value(json_array_get(s, 1)) :
				    "", "text") == 0)
					return 1;
			}
	}
	return 0;
}

struct stream_ctx {
	struct node_ctx	*c;
	int		 in_think;	/* inside <think> ... </think> */
	int		 separated;
	double		 stop_checked;	/* llm_clock() of the last look */
};

static int
on_delta(void *arg, enum llm_delta kind, const char *text, size_t len)
{
	struct stream_ctx	*s = arg;
	double			 now;

	if (atomic_load(&s->c->run->stopping))
		return 1;
	/*
	 * A stop request is a flag in the run's record: a look is a store
	 * read and a JSON parse, a large part of a token's cost when made
	 * for each one. Once per run.stop_check_ms is soon enough.
	 */
	now = llm_clock();
	if (s->stop_checked == 0 || (now - s->stop_checked) * 1000 >=
	    s->c->run->e->conf->run_stop_check_ms) {
		s->stop_checked = now;
		if (run_stop_requested(s->c->run)) {
			/* the run ends "stopped", not failed by this node */
			atomic_store(&s->c->run->stopping, 1);
			return 1;
		}
	}
	if (kind == LLM_DELTA_TEXT && len > 0)
		run_stream_text(s->c->run, s->c->node->id, text, len);
	return 0;
}

/* ====== Computer use: the sandboxed runtime's Agent ====== */

#define CU_DEFAULT_ITERATIONS	10

static const char cu_bash_doc[] =
    "Run a bash command in the workspace of a Linux sandbox and get its "
    "output (stdout and stderr). The app's files and skills are under "
    "skills/. Save any file you want to return to the user under output/ "
    "(create it with mkdir -p output).";

/* The byte offset of character n of well-formed UTF-8 s (len bytes). */
static size_t
cu_offset(const char *s, size_t len, size_t n)
{
	size_t i = 0, k;

	while (n-- > 0 && i < len) {
		k = engine_utf8_seq((const unsigned char *)s + i, len - i);
		i += k > 0 ? k : 1;
	}
	return i;
}

/*
 * What the model sees of a command's output (s, len bytes, any bytes):
 * made well-formed UTF-8, and when longer than agent.output_max characters
 * cut to agent.output_keep characters of its head and of its tail.
 */
static char *
cu_cut(const struct conf *cf, const char *raw, size_t rawlen)
{
	struct tpl_sb	 sb = { NULL, 0, 0, 0 };
	char		 mid[96], *s;
	size_t		 len, chars, keep, head, tail;

	if ((s = engine_utf8_clean(raw, rawlen, 1, &len)) == NULL)
		return NULL;
	for (chars = 0, head = 0; head < len; chars++)
		head += engine_utf8_seq((const unsigned char *)s + head,
		    len - head);
	if (chars <= (size_t)cf->agent_output_max)
		return s;
	keep = (size_t)cf->agent_output_keep;
	if (keep * 2 > (size_t)cf->agent_output_max)
		keep = (size_t)cf->agent_output_max / 2;
	head = cu_offset(s, len, keep);
	tail = cu_offset(s, len, chars - keep);
	tpl_sb_add(&sb, s, head);
	snprintf(mid, sizeof(mid), "\n... [%zu characters cut] ...\n",
	    chars - 2 * keep);
	tpl_sb_str(&sb, mid);
	tpl_sb_add(&sb, s + tail, len - tail);
	free(s);
	return tpl_sb_take(&sb);
}

static void
cu_log(struct node_ctx *c, const char *label, const char *status,
    json_t *data)
{
	char id[37];

	engine_uuid(id);
	run_emit(c->run, "agent_log", json_pack("{s:s,s:s,s:s,s:n,s:n,s:s,"
	    "s:o,s:{},s:s}", "node_execution_id", c->node->id, "id", id,
	    "label", label, "parent_id", "error", "status", status, "data",
	    data ? data : json_object(), "metadata", "node_id",
	    c->node->id));
}

/* Runs one bash command; *out is what the model sees. */
static int
cu_bash(struct node_ctx *c, struct sandbox *sb, const char *cmd, char **out,
    int *exit_code)
{
	struct sandbox_exec_req		 rq;
	struct sandbox_exec_result	 res;
	struct sandbox_cancel		 cancel = { node_stop_asked, c->run };
	struct tpl_sb			 all = { NULL, 0, 0, 0 };
	char				 tail[64];
	int				 left;

	memset(&rq, 0, sizeof(rq));
	memset(&res, 0, sizeof(res));
	rq.argv = (const char *const[]){ "bash", "-c", cmd, NULL };
	left = c->run->lim.max_seconds - (int)((run_now_ms() -
	    c->run->started_ms) / 1000);
	if (left > c->run->e->conf->agent_command_timeout)
		left = c->run->e->conf->agent_command_timeout;
	rq.timeout_ms = (left > 1 ? left : 1) * 1000;
	rq.cancel = &cancel;	/* a stop kills the command at once */
	if (sandbox_exec(sb, &rq, c->err, &res) != 0)
		return -1;
	tpl_sb_add(&all, res.out ? res.out : "", res.out_len);
	tpl_sb_add(&all, res.err ? res.err : "", res.err_len);
	if (res.timed_out) {
		snprintf(tail, sizeof(tail), "\n[the command was stopped after "
		    "%d s]", rq.timeout_ms / 1000);
		tpl_sb_str(&all, tail);
	} else if (res.exit_code != 0) {
		snprintf(tail, sizeof(tail), "\n[exit code %d]", res.exit_code);
		tpl_sb_str(&all, tail);
	}
	*exit_code = res.exit_code;
	*out = cu_cut(c->run->e->conf, all.p ? all.p : "", all.len);
	tpl_sb_release(&all);
	sandbox_exec_result_release(&res);
	return *out != NULL ? 0 : node_fail(c, "out of memory");
}

/* Files the agent left under output/, as file objects. */
static json_t *
cu_output_files(struct node_ctx *c, struct sandbox *sb)
{
	const struct conf	*cf = c->run->e->conf;
	struct sandbox_file	*files = NULL;
	json_t			*out = json_array(), *f;
	char			 err[ENGINE_ERRMAX], *data;
	const char		*slash;
	size_t			 n = 0, i, len;

	if (sandbox_list(sb, "output", (size_t)cf->agent_max_files * 4 + 16,
	    err, &files, &n) != 0)
		return out;
	for (i = 0; i < n && json_array_size(out) <
	    (size_t)cf->agent_max_files; i++) {
		if (files[i].is_dir || files[i].size > cf->agent_max_file_size)
			continue;
		if (sandbox_download(sb, files[i].path,
		    (size_t)cf->agent_max_file_size, err, &data,
		    &len) != 0)
			continue;
		slash = strrchr(files[i].path, '/');
		if ((f = file_from_bytes(slash ? slash + 1 : files[i].path,
		    NULL, data, len)) != NULL)
			json_array_append_new(out, f);
		free(data);
	}
	sandbox_files_free(files, n);
	return out;
}

/* The skills, for the system prompt: "- name: description (path)". */
static char *
cu_skills_text(struct run *r)
{
	struct tpl_sb	 sb = { NULL, 0, 0, 0 };
	json_t		*s;
	size_t		 i;

	if (json_array_size(r->skills) == 0)
		return NULL;
	tpl_sb_str(&sb, "\n\nSkills are available in the workspace; read a "
	    "skill's SKILL.md before using it:\n");
	json_array_foreach(r->skills, i, s) {
		tpl_sb_str(&sb, "- ");
		tpl_sb_str(&sb, json_string_value(json_object_get(s, "name")));
		tpl_sb_str(&sb, ": ");
		tpl_sb_str(&sb, json_string_value(json_object_get(s,
		    "description")));
		tpl_sb_str(&sb, " (");
		tpl_sb_str(&sb, json_string_value(json_object_get(s, "path")));
		tpl_sb_str(&sb, ")\n");
	}
	return tpl_sb_take(&sb);
}

/*
 * The agent loop: the model may call bash until it answers, at most
 * max_iterations times. Fills rs with the final answer's response and
 * *calls with the tool calls made ({id, name, arguments, output, status,
 * elapsed_time}).
 */
static int
computer_use(struct node_ctx *c, struct prompt *p, const json_t *model,
    struct llm_response *final, json_t *calls, json_t **files)
{
	struct sandbox		*sb;
	struct llm_request	 rq;
	struct llm_response	 rs;
	struct llm_tool		 bash;
	json_t			*schema = json_pack("{s:s,s:{s:{s:s,s:s}},s:[s]}",
				    "type", "object", "properties", "bash",
				    "type", "string", "description",
				    "the command", "required", "bash");
	const char		*provider = json_string_value(json_object_get(
				    model, "provider"));
	char			*skills, *out, *sys;
	json_t			*args;
	int			 iter, max_iter, rc = -1, code;
	size_t			 i, k;
	int64_t			 t0;

	max_iter = (int)json_integer_value(json_object_get(c->node->data,
	    "max_iterations"));
	if (max_iter <= 0 || max_iter > 99)
		max_iter = max_iter <= 0 ? CU_DEFAULT_ITERATIONS : 99;
	if (run_sandbox(c->run, c->err, &sb) != 0)
		goto out;
	/* tell the model about the skills, after the first system message */
	if ((skills = cu_skills_text(c->run)) != NULL) {
		for (i = 0; i < p->n && p->msgs[i].role != LLM_SYSTEM; i++)
			;
		if (i < p->n) {
			size_t n = strlen(p->msgs[i].content) + strlen(skills) +
			    1;

			if ((sys = malloc(n)) != NULL) {
				snprintf(sys, n, "%s%s", p->msgs[i].content,
				    skills);
				p->msgs[i].content = keep_str(p, sys);
			}
		} else if (add_msg(c, p, LLM_SYSTEM, keep_str(p,
		    strdup(skills))) == 0) {
			/* a system message goes first */
			struct llm_message m = p->msgs[p->n - 1];

			memmove(p->msgs + 1, p->msgs, (p->n - 1) *
			    sizeof(p->msgs[0]));
			p->msgs[0] = m;
		}
		free(skills);
	}
	memset(&bash, 0, sizeof(bash));
	bash.name = "bash";
	bash.description = cu_bash_doc;
	bash.parameters = schema;
	for (iter = 0; iter < max_iter; iter++) {
		if (run_stop_requested(c->run)) {
			atomic_store(&c->run->stopping, 1);
			node_fail(c, "stopped");
			goto out;
		}
		memset(&rq, 0, sizeof(rq));
		memset(&rs, 0, sizeof(rs));
		rq.model = json_string_value(json_object_get(model, "name"));
		rq.messages = p->msgs;
		rq.nmessages = p->n;
		rq.params = json_object_get(model, "completion_params");
		rq.tools = &bash;
		rq.ntools = 1;
		if (llm_chat(c->run->e, provider, &rq, c->err, &rs) != 0) {
			llm_response_release(&rs);
			c->error_type = "LLMNodeError";
			goto out;
		}
		run_usage_add(c->run, rs.usage.prompt_tokens,
		    rs.usage.completion_tokens, rs.usage.total_tokens);
		if (rs.ntool_calls == 0) {
			*final = rs;
			rc = 0;
			break;
		}
		if (p->n + rs.ntool_calls + 1 >= LLM_MAX_MESSAGES ||
		    p->nallocs == LLM_MAX_MESSAGES) {
			llm_response_release(&rs);
			node_fail(c, "the agent's conversation is too long");
			goto out;
		}
		{
			struct llm_tool_call *tc = calloc(rs.ntool_calls,
			    sizeof(*tc));
			json_t *hold = json_array();

			if (tc == NULL || hold == NULL) {
				free(tc);
				json_decref(hold);
				llm_response_release(&rs);
				node_fail(c, "out of memory");
				goto out;
			}
			for (k = 0; k < rs.ntool_calls; k++) {
				tc[k].id = (char *)keep_str(p,
				    strdup(rs.tool_calls[k].id));
				tc[k].name = (char *)keep_str(p,
				    strdup(rs.tool_calls[k].name));
				tc[k].arguments = (char *)keep_str(p,
				    strdup(rs.tool_calls[k].arguments));
			}
			/* the calls array lives as long as the prompt */
			p->allocs[p->nallocs++] = tc;
			add_msg(c, p, LLM_ASSISTANT, keep_str(p,
			    strdup(rs.text ? rs.text : "")));
			p->msgs[p->n - 1].tool_calls = tc;
			p->msgs[p->n - 1].ntool_calls = rs.ntool_calls;
			for (k = 0; k < rs.ntool_calls; k++) {
				const char *cmd;

				args = json_loads(tc[k].arguments, 0, NULL);
				cmd = json_string_value(json_object_get(args,
				    "bash"));
				if (cmd == NULL)
					cmd = json_string_value(json_object_get(
					    args, "command"));
				cu_log(c, "bash", "start", json_pack("{s:s,s:s}",
				    "tool_name", "bash", "tool_input", cmd ?
				    cmd : ""));
				t0 = run_now_ms();
				code = 0;
				if (strcmp(tc[k].name, "bash") != 0 ||
				    cmd == NULL)
					out = strdup("call the bash tool with "
					    "{\"bash\": \"<command>\"}");
				else if (cu_bash(c, sb, cmd, &out, &code) !=
				    0) {
					json_decref(args);
					json_decref(hold);
					llm_response_release(&rs);
					goto out;
				}
				cu_log(c, "bash", "success", json_pack("{s:s,"
				    "s:s}", "tool_name", "bash", "output",
				    out ? out : ""));
				json_array_append_new(calls, json_pack("{s:s,"
				    "s:s,s:s,s:s,s:[],s:s,s:f}", "id", tc[k].id,
				    "name", tc[k].name, "arguments",
				    tc[k].arguments, "output", out ? out : "",
				    "files", "status", code == 0 ? "success" :
				    "error", "elapsed_time", (double)(
				    run_now_ms() - t0) / 1000.0));
				add_msg(c, p, LLM_TOOL, keep_str(p, out));
				p->msgs[p->n - 1].tool_call_id = tc[k].id;
				p->msgs[p->n - 1].name = "bash";
				json_decref(args);
			}
			json_decref(hold);
		}
		llm_response_release(&rs);
	}
	if (rc != 0) {
		node_fail(c, "the agent did not answer within %d iterations "
		    "(max_iterations)", max_iter);
		goto out;
	}
	*files = cu_output_files(c, sb);
out:
	json_decref(schema);
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
	json_t			*so, *msgs, *parsed;
	const char		*provider, *name, *rf;
	char			*text = NULL, *reasoning = NULL, key[128];
	json_t			*calls = NULL, *files = NULL;
	size_t			 i;
	int			 rc = -1;

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
	    c->node->data, "computer_use")) && streams_text(c)) {
		rq.stream = 1;
		rq.on_delta = on_delta;
		rq.arg = &sc;
		snprintf(key, sizeof(key), "%s.text", c->node->id);
	}
	/* the trace: the messages as sent */
	if ((msgs = json_array()) != NULL) {
		for (i = 0; i < p.n; i++)
			json_array_append_new(msgs, json_pack("{s:s,s:s}",
			    "role", p.msgs[i].role == LLM_SYSTEM ? "system" :
			    p.msgs[i].role == LLM_ASSISTANT ? "assistant" :
			    "user", "text", p.msgs[i].content ?
			    p.msgs[i].content : ""));
		c->process_data = json_pack("{s:o,s:O,s:s}", "prompts", msgs,
		    "model_mode", json_object_get(model, "mode") ?
		    json_object_get(model, "mode") : json_string("chat"),
		    "model_provider", provider);
	}
	if (json_is_true(json_object_get(c->node->data, "computer_use"))) {
		/* the sandboxed runtime's Agent: bash in the run's sandbox */
		if ((calls = json_array()) == NULL ||
		    computer_use(c, &p, model, &rs, calls, &files) != 0)
			goto out;
	} else if (llm_chat(c->run->e, provider, &rq, c->err, &rs) != 0) {
		c->error_type = "LLMNodeError";
		goto out;
	}
	if (rq.stream) {
		pthread_mutex_lock(&c->run->mu);
		json_object_set_new(c->run->streamed, key, json_true());
		pthread_mutex_unlock(&c->run->mu);
	}
	text = strdup(rs.text ? rs.text : "");
	reasoning = rs.reasoning_len ? strdup(rs.reasoning) : NULL;
	rf = node_str(c->node, "reasoning_format");
	if (rf != NULL && strcmp(rf, "separated") == 0 && reasoning == NULL &&
	    text != NULL)
		split_think(&text, &reasoning);
	if (text == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	json_object_set_new(c->outputs, "text", json_string(text));
	json_object_set_new(c->outputs, "reasoning_content",
	    json_string(reasoning ? reasoning : ""));
	json_object_set_new(c->outputs, "usage", llm_usage_json(&rs));
	json_object_set_new(c->outputs, "finish_reason",
	    json_string(rs.finish_reason));
	/* the sandboxed runtime's view of the same answer */
	json_object_set_new(c->outputs, "generation", json_pack("{s:s,s:[s],"
	    "s:o,s:[]}", "content", text, "reasoning_content", reasoning ?
	    reasoning : "", "tool_calls", calls ? json_incref(calls) :
	    json_array(), "sequence"));
	json_object_set_new(c->outputs, "files", files ? json_incref(files) :
	    json_array());
	if (rq.response_schema != NULL) {
		parsed = json_loads(text, 0, NULL);
		json_object_set_new(c->outputs, "structured_output", parsed ?
		    parsed : json_object());
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
	json_decref(calls);
	json_decref(files);
	return rc;
}

const struct node_type node_llm = { "llm", llm_run, 0 };
