/*
 * agent_sandbox.c — the sandboxed runtime's Agent: an llm node with
 * computer_use on. The model gets a `bash` tool that runs commands in the
 * run's sandbox (engine/run/run_sandbox.c), with the app's files and skills
 * under skills/; it may call it until it answers, at most max_iterations
 * times. Files it leaves under output/ become the node's files.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"
#include "engine/llm/llm.h"
#include "engine/nodes/nodes.h"
#include "engine/sandbox/sandbox.h"
#include "engine/tools/tools.h"

/*
 * max_iterations: Dify's LLM node has no default of its own (None runs
 * its agent strategy's, 100 when upgraded from an Agent); 100 caps it.
 */
#define CU_DEFAULT_ITERATIONS	100
#define CU_MAX_ITERATIONS	100

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
	struct dbuf	 sb = { 0 };
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
	dbuf_add(&sb, s, head);
	snprintf(mid, sizeof(mid), "\n... [%zu characters cut] ...\n",
	    chars - 2 * keep);
	dbuf_addstr(&sb, mid);
	dbuf_add(&sb, s + tail, len - tail);
	free(s);
	return dbuf_take(&sb, NULL);
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
	struct dbuf			 all = { 0 };
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
	rq.readonly = "skills";	/* the app's files: read, not write */
	if (sandbox_exec(sb, &rq, c->err, &res) != 0)
		return -1;
	dbuf_add(&all, res.out ? res.out : "", res.out_len);
	dbuf_add(&all, res.err ? res.err : "", res.err_len);
	if (res.timed_out) {
		snprintf(tail, sizeof(tail), "\n[the command was stopped after "
		    "%d s]", rq.timeout_ms / 1000);
		dbuf_addstr(&all, tail);
	} else if (res.exit_code != 0) {
		snprintf(tail, sizeof(tail), "\n[exit code %d]", res.exit_code);
		dbuf_addstr(&all, tail);
	}
	*exit_code = res.exit_code;
	*out = cu_cut(c->run->e->conf, all.p ? all.p : "", all.len);
	dbuf_free(&all);
	sandbox_exec_result_release(&res);
	return *out != NULL ? 0 : node_fail(c, "out of memory");
}

/*
 * Files the agent left under output/, as file objects; NULL when out of
 * memory.
 */
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
		    NULL, data, len)) != NULL &&
		    json_array_append_new(out, f) != 0) {
			json_decref(out);
			out = NULL;
		}
		free(data);
	}
	sandbox_files_free(files, n);
	return out;
}

/* The skills, for the system prompt: "- name: description (path)". */
static char *
cu_skills_text(struct run *r)
{
	struct dbuf	 sb = { 0 };
	json_t		*s;
	size_t		 i;

	if (json_array_size(r->skills) == 0)
		return NULL;
	dbuf_addstr(&sb, "\n\nSkills are available in the workspace; read a "
	    "skill's SKILL.md before using it:\n");
	json_array_foreach(r->skills, i, s) {
		dbuf_addstr(&sb, "- ");
		dbuf_addstr(&sb, json_string_value(json_object_get(s, "name")));
		dbuf_addstr(&sb, ": ");
		dbuf_addstr(&sb, json_string_value(json_object_get(s,
		    "description")));
		dbuf_addstr(&sb, " (");
		dbuf_addstr(&sb, json_string_value(json_object_get(s, "path")));
		dbuf_addstr(&sb, ")\n");
	}
	return dbuf_take(&sb, NULL);
}

/* ====== Function tools: the tools the classic Agent had ====== */

/*
 * Every tool the node names is offered to the model as a function tool
 * beside bash, run through the tool layer (engine/tools/) by flowcgi
 * itself: the tools of the node's `tools` list (what the upgrade mapped
 * from a classic Agent), those the prompt's skill metadata and tokens
 * reference, and those the app's skill files reference. A tool flowcgi
 * does not have is left out (its token reads "[Tool not found or
 * disabled: ...]").
 */
#define AS_MAX_TOOLS	64

struct as_tool {
	char		 name[64];	/* as the model calls it */
	json_t		*cfg;	/* {type, provider_name, tool_name,
				 * settings, parameters} */
	char		*description;
	json_t		*schema;
	json_t		*fixed;
	int		 disabled;	/* tool_settings says so */
};

struct as_state {
	struct node_ctx	*c;
	struct as_tool	 tools[AS_MAX_TOOLS];
	size_t		 ntools;
	struct llm_tool	 ltools[AS_MAX_TOOLS + 1];  /* bash first */
	json_t		*meta;		/* {uuid: {...}} of the prompt */
	json_t		*paths;		/* asset id -> "/path" */
	int		 nomem;		/* a tool or path was lost to it */
};

static void
as_state_release(struct as_state *st)
{
	size_t i;

	for (i = 0; i < st->ntools; i++) {
		json_decref(st->tools[i].cfg);
		free(st->tools[i].description);
		json_decref(st->tools[i].schema);
		json_decref(st->tools[i].fixed);
	}
	json_decref(st->meta);
	json_decref(st->paths);
}

static const char *
jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static struct as_tool *
as_find(struct as_state *st, const char *provider, const char *tool)
{
	size_t i;

	for (i = 0; i < st->ntools; i++)
		if (strcmp(jstr(st->tools[i].cfg, "provider_name"), provider) ==
		    0 && strcmp(jstr(st->tools[i].cfg, "tool_name"), tool) == 0)
			return &st->tools[i];
	return NULL;
}

/*
 * Adds the tool of entry cfg (a new reference, taken) unless known; a
 * NULL cfg (it could not be made) sets st->nomem.
 */
static void
as_add(struct as_state *st, json_t *cfg)
{
	struct as_tool	*t;
	char		 err[ENGINE_ERRMAX], name[64];
	const char	*prov = jstr(cfg, "provider_name");
	const char	*tool = jstr(cfg, "tool_name");
	size_t		 i;

	st->nomem |= cfg == NULL;
	if (cfg == NULL || *prov == '\0' || *tool == '\0' ||
	    as_find(st, prov, tool) != NULL || st->ntools == AS_MAX_TOOLS) {
		json_decref(cfg);
		return;
	}
	t = &st->tools[st->ntools];
	memset(t, 0, sizeof(*t));
	if (tool_configured(st->c->run->e, cfg, st->c->node->data,
	    run_mcp(st->c->run), err, &t->description, &t->schema,
	    &t->fixed) != 0) {
		json_decref(cfg);
		return;
	}
	t->cfg = cfg;
	/* the tool's name, else (taken) provider_tool */
	skill_tool_name(NULL, tool, name, sizeof(name));
	for (i = 0; i < st->ntools; i++)
		if (strcmp(st->tools[i].name, name) == 0)
			break;
	if (strcmp(name, "bash") == 0 || i < st->ntools)
		skill_tool_name(prov, tool, name, sizeof(name));
	snprintf(t->name, sizeof(t->name), "%s", name);
	json_array_foreach(json_object_get(st->c->node->data,
	    "tool_settings"), i, cfg)
		if (strcmp(jstr(cfg, "provider"), prov) == 0 &&
		    strcmp(jstr(cfg, "tool_name"), tool) == 0 &&
		    json_is_false(json_object_get(cfg, "enabled")))
			t->disabled = 1;
	st->ntools++;
}

/* An entry for a tool a token names: a builtin without settings. */
static json_t *
as_entry(const char *type, const char *provider, const char *tool)
{
	return json_pack("{s:s,s:s,s:s,s:{},s:{}}", "type", type ? type :
	    "builtin", "provider_name", provider, "tool_name", tool,
	    "settings", "parameters");
}

/* The tools of the node, of its prompt and of the app's skill files. */
static void
as_collect(struct as_state *st)
{
	const json_t	*data = st->c->node->data, *t, *m, *refs;
	json_t		*found, *r;
	const char	*uuid;
	size_t		 i, j;

	json_array_foreach(json_object_get(data, "tools"), i, t)
		if (!json_is_false(json_object_get(t, "enabled")))
			as_add(st, json_deep_copy(t));
	if ((st->meta = json_object()) == NULL) {
		st->nomem = 1;
		return;
	}
	json_array_foreach(json_object_get(data, "prompt_template"), i, m) {
		t = json_object_get(json_object_get(m, "metadata"), "tools");
		if ((json_is_object(t) && json_object_update(st->meta,
		    (json_t *)t) != 0) || (found = json_array()) == NULL) {
			st->nomem = 1;
			return;
		}
		if (skill_refs(jstr(m, "text"), strlen(jstr(m, "text")), found,
		    NULL) != 0)
			st->nomem = 1;
		json_array_foreach(found, j, r) {
			/* as Dify's _parse_metadata: described tokens only */
			uuid = jstr(r, "uuid");
			t = json_object_get(st->meta, uuid);
			if (t == NULL || json_is_false(json_object_get(t,
			    "enabled")))
				continue;
			as_add(st, as_entry(json_string_value(json_object_get(
			    t, "type")), jstr(r, "provider"), jstr(r,
			    "tool_name")));
		}
		json_decref(found);
	}
	refs = st->c->run->skill_tools;
	json_array_foreach(refs, i, r)
		as_add(st, as_entry(NULL, jstr(r, "provider"), jstr(r,
		    "tool_name")));
}

/* "skills/<path>" of an asset, for a prompt (Dify's base path). */
static char *
as_file_text(void *arg, const char *asset_id)
{
	struct as_state	*st = arg;
	const char	*path;
	size_t		 n;
	char		*s;

	if ((path = json_string_value(json_object_get(st->paths, asset_id))) ==
	    NULL)
		return NULL;
	n = strlen(path) + 8;
	if ((s = malloc(n)) != NULL)
		snprintf(s, n, "skills%s", path);
	return s;
}

static char *
as_tool_text(void *arg, const char *provider, const char *name,
    const char *uuid)
{
	struct as_state	*st = arg;
	struct as_tool	*t = as_find(st, provider, name);
	json_t		*m = json_object_get(st->meta, uuid);

	if (m == NULL)		/* Dify: "not found" without metadata */
		return NULL;
	if (json_is_false(json_object_get(m, "enabled")) ||
	    (t != NULL && t->disabled))
		return strdup("");
	return t != NULL ? skill_tool_text(t->name) : NULL;
}

/* Asset ids to paths, from the app's file tree. */
static void
as_paths(struct as_state *st)
{
	json_t		*tree = NULL, *stack[SKILL_MAX_DEPTH], *kids, *n;
	char		 err[ENGINE_ERRMAX];
	size_t		 top = 0, i;
	int		 rc;

	if ((st->paths = json_object()) == NULL) {
		st->nomem = 1;
		return;
	}
	if ((rc = engine_asset_tree(st->c->run->e, st->c->run->app_id, err,
	    &tree)) != 0) {
		st->nomem |= rc == ENGINE_ENOMEM;
		return;
	}
	stack[top++] = json_object_get(tree, "children");
	while (top > 0) {
		kids = stack[--top];
		json_array_foreach(kids, i, n) {
			if (json_string_value(json_object_get(n, "id")) !=
			    NULL && json_string_value(json_object_get(n,
			    "path")) != NULL && json_object_set(st->paths,
			    jstr(n, "id"), json_object_get(n, "path")) != 0)
				st->nomem = 1;
			if (top < SKILL_MAX_DEPTH && json_array_size(
			    json_object_get(n, "children")) > 0)
				stack[top++] = json_object_get(n, "children");
		}
	}
	json_decref(tree);
}

/* Compiles the prompt's messages (rendered already) with Dify's rules. */
static int
as_compile_prompt(struct as_state *st, struct prompt *p)
{
	struct skill_resolver	 r = { as_file_text, as_tool_text, st };
	const char		*old;
	char			*out;
	size_t			 i, k;
	int			 rc;

	for (i = 0; i < p->n; i++) {
		if ((old = p->msgs[i].content) == NULL ||
		    strstr(old, "\xC2\xA7") == NULL)
			continue;
		if (st->paths == NULL)
			as_paths(st);
		if ((rc = skill_compile(old, strlen(old), &r, TOOL_MAX_TEXT,
		    &out, NULL)) != 0)
			return node_fail(st->c, "compiling the prompt's "
			    "skill references: %s", rc == ENGINE_ELIMIT ?
			    "the result is too long" : "out of memory");
		p->msgs[i].content = prompt_keep(p, out);
		/* a vision message's text part is the same text */
		for (k = 0; p->msgs[i].parts == p->parts && k < p->nparts; k++)
			if (p->parts[k].type == LLM_PART_TEXT &&
			    p->parts[k].text == old)
				p->parts[k].text = p->msgs[i].content;
	}
	return 0;
}

/* ====== The loop ====== */

/* Characters (code points) in well-formed UTF-8 s, as Python's len. */
static size_t
as_chars(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

/* Runs one function tool call; *out is what the model sees. */
static int
as_call_tool(struct as_state *st, const char *name, const char *args,
    char **out, json_t **files, int *failed)
{
	size_t i;

	*failed = 0;
	for (i = 0; i < st->ntools; i++)
		if (strcmp(st->tools[i].name, name) == 0 &&
		    !st->tools[i].disabled)
			break;
	if (i == st->ntools) {
		*failed = 1;
		*out = strdup("there is no tool of that name");
		return *out ? 0 : node_fail(st->c, "out of memory");
	}
	if (tool_run_configured(st->c->run->e, st->tools[i].cfg,
	    st->tools[i].fixed, args, st->c->node->data, run_mcp(st->c->run),
	    out, files) != 0)
		return node_fail(st->c, "out of memory");
	*failed = strncmp(*out, "tool error: ", 12) == 0;
	return 0;
}

/* The agent_log data of a call: {tool_name, tool_input[, output,
 * exit_code]}; tool_input is the command for bash, else the arguments. */
static json_t *
as_log_data(const char *tool, const char *cmd, const char *args,
    const char *output, int exit_code)
{
	json_t *d, *in;

	if (cmd != NULL)
		in = json_string(cmd);
	else if (!json_is_object(in = json_loads(args ? args : "", 0,
	    NULL))) {
		json_decref(in);
		in = json_object();
	}
	d = json_pack("{s:s,s:o}", "tool_name", tool, "tool_input", in);
	if (d != NULL && output != NULL && (json_object_set_new(d, "output",
	    json_string(output)) != 0 || (cmd != NULL &&
	    json_object_set_new(d, "exit_code", json_integer(exit_code)) !=
	    0))) {
		json_decref(d);
		return NULL;
	}
	return d;
}

int
agent_sandbox_run(struct node_ctx *c, struct prompt *p, const json_t *model,
    struct llm_response *final, json_t *gen, json_t **files)
{
	struct as_state		 st;
	struct sandbox		*sb;
	struct llm_request	 rq;
	struct llm_response	 rs;
	struct stream_ctx	 sc;
	json_t			*schema = json_pack("{s:s,s:{s:{s:s,s:s}},s:[s]}",
				    "type", "object", "properties", "bash",
				    "type", "string", "description",
				    "the command", "required", "bash");
	json_t			*calls = json_object_get(gen, "tool_calls");
	json_t			*seq = json_object_get(gen, "sequence");
	json_t			*reasons = json_object_get(gen,
				    "reasoning_content");
	json_t			*tfiles;
	const char		*provider = json_string_value(json_object_get(
				    model, "provider"));
	struct dbuf		 content = { 0 };
	char			*skills, *out, *sys;
	struct dbuf		 doc = { 0 };
	json_t			*args;
	int			 iter, max_iter, rc = -1, code, failed, stream;
	int			 bad = 0;
	size_t			 i, k, pos = 0;
	int64_t			 t0;

	memset(&st, 0, sizeof(st));
	st.c = c;
	max_iter = (int)json_integer_value(json_object_get(c->node->data,
	    "max_iterations"));
	if (max_iter <= 0 || max_iter > CU_MAX_ITERATIONS)
		max_iter = max_iter <= 0 ? CU_DEFAULT_ITERATIONS :
		    CU_MAX_ITERATIONS;
	if (run_sandbox(c->run, c->err, &sb) != 0) {
		/* the node fails for the sandbox: a trace lost is not news */
		(void)llm_trace(c, p, model);
		goto out;
	}
	as_collect(&st);
	if (as_compile_prompt(&st, p) != 0)
		goto out;
	if (st.nomem) {
		node_fail(c, "out of memory");
		goto out;
	}
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
				p->msgs[i].content = prompt_keep(p, sys);
			}
		} else if (prompt_add(c, p, LLM_SYSTEM, prompt_keep(p,
		    strdup(skills))) == 0) {
			/* a system message goes first */
			struct llm_message m = p->msgs[p->n - 1];

			memmove(p->msgs + 1, p->msgs, (p->n - 1) *
			    sizeof(p->msgs[0]));
			p->msgs[0] = m;
		}
		free(skills);
	}
	if (llm_trace(c, p, model) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	st.ltools[0].name = "bash";
	st.ltools[0].description = cu_bash_doc;
	if (c->run->sb_note != NULL && *c->run->sb_note != '\0') {
		/* what this sandbox can reach and has (sandbox_tool_note) */
		dbuf_addstr(&doc, cu_bash_doc);
		dbuf_addstr(&doc, " ");
		dbuf_addstr(&doc, c->run->sb_note);
		if ((sys = dbuf_take(&doc, NULL)) != NULL)
			st.ltools[0].description = prompt_keep(p, sys);
	}
	st.ltools[0].parameters = schema;
	for (i = 0, k = 1; i < st.ntools; i++) {
		if (st.tools[i].disabled)
			continue;
		st.ltools[k].name = st.tools[i].name;
		st.ltools[k].description = st.tools[i].description;
		st.ltools[k].parameters = st.tools[i].schema;
		k++;
	}
	stream = llm_streams_field(c, "generation.content");
	memset(&sc, 0, sizeof(sc));
	sc.c = c;
	for (iter = 0; iter < max_iter; iter++) {
		if (run_stop_requested(c->run)) {
			atomic_store(&c->run->stopping, 1);
			node_fail(c, "stopped");
			goto out;
		}
		if (p->nomem) {	/* a message or call lost its text */
			node_fail(c, "out of memory");
			goto out;
		}
		memset(&rq, 0, sizeof(rq));
		memset(&rs, 0, sizeof(rs));
		rq.model = json_string_value(json_object_get(model, "name"));
		rq.messages = p->msgs;
		rq.nmessages = p->n;
		rq.params = json_object_get(model, "completion_params");
		rq.tools = st.ltools;
		rq.ntools = k;
		if (stream) {
			/* each turn's text goes out as it comes, as Dify's
			 * sandboxed LLM node streams its content */
			rq.stream = 1;
			rq.on_delta = llm_on_delta;
			rq.arg = &sc;
		}
		if (llm_chat(c->run->e, provider, &rq, c->err, &rs) != 0) {
			llm_response_release(&rs);
			c->error_type = "LLMNodeError";
			goto out;
		}
		run_usage_add(c->run, rs.usage.prompt_tokens,
		    rs.usage.completion_tokens, rs.usage.total_tokens);
		/* Dify's sequence: reasoning, content spans, tool calls */
		if (rs.reasoning_len > 0) {
			bad |= json_array_append_new(reasons, json_string(
			    rs.reasoning));
			bad |= json_array_append_new(seq, json_pack("{s:s,s:I}",
			    "type", "reasoning", "index", (json_int_t)(
			    json_array_size(reasons) - 1)));
		}
		if (rs.text != NULL && rs.text[0] != '\0') {
			size_t n = as_chars(rs.text);

			dbuf_addstr(&content, rs.text);
			bad |= json_array_append_new(seq, json_pack(
			    "{s:s,s:I,s:I}", "type", "content", "start",
			    (json_int_t)pos, "end", (json_int_t)(pos + n)));
			pos += n;
		}
		if (bad) {
			llm_response_release(&rs);
			node_fail(c, "out of memory");
			goto out;
		}
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

			if (tc == NULL) {
				llm_response_release(&rs);
				node_fail(c, "out of memory");
				goto out;
			}
			for (i = 0; i < rs.ntool_calls; i++) {
				tc[i].id = (char *)prompt_keep(p,
				    strdup(rs.tool_calls[i].id));
				tc[i].name = (char *)prompt_keep(p,
				    strdup(rs.tool_calls[i].name));
				tc[i].arguments = (char *)prompt_keep(p,
				    strdup(rs.tool_calls[i].arguments));
			}
			/* the calls array lives as long as the prompt */
			p->allocs[p->nallocs++] = tc;
			prompt_add(c, p, LLM_ASSISTANT, prompt_keep(p,
			    strdup(rs.text ? rs.text : "")));
			p->msgs[p->n - 1].tool_calls = tc;
			p->msgs[p->n - 1].ntool_calls = rs.ntool_calls;
			for (i = 0; i < rs.ntool_calls; i++) {
				const char	*cmd = NULL;
				int		 is_bash = strcmp(tc[i].name,
						    "bash") == 0;

				args = json_loads(tc[i].arguments, 0, NULL);
				if (is_bash && (cmd = json_string_value(
				    json_object_get(args, "bash"))) == NULL)
					cmd = json_string_value(json_object_get(
					    args, "command"));
				cu_log(c, tc[i].name, "start", as_log_data(
				    tc[i].name, is_bash ? (cmd ? cmd : "") :
				    NULL, tc[i].arguments, NULL, 0));
				t0 = run_now_ms();
				code = 0;
				failed = 0;
				tfiles = NULL;
				if (is_bash && cmd == NULL) {
					out = strdup("call the bash tool with "
					    "{\"bash\": \"<command>\"}");
					failed = 1;
				} else if (is_bash) {
					if (cu_bash(c, sb, cmd, &out, &code) !=
					    0) {
						json_decref(args);
						llm_response_release(&rs);
						goto out;
					}
					failed = code != 0;
				} else if (as_call_tool(&st, tc[i].name,
				    tc[i].arguments, &out, &tfiles,
				    &failed) != 0) {
					json_decref(args);
					llm_response_release(&rs);
					goto out;
				}
				cu_log(c, tc[i].name, failed ? "error" :
				    "success", as_log_data(tc[i].name, is_bash ?
				    (cmd ? cmd : "") : NULL, tc[i].arguments,
				    out ? out : "", code));
				bad |= json_array_append_new(calls, json_pack(
				    "{s:s,s:s,s:s,s:s,s:o,s:s,s:f}", "id",
				    tc[i].id, "name", tc[i].name, "arguments",
				    tc[i].arguments, "output", out ? out : "",
				    "files", tfiles ? tfiles : json_array(),
				    "status", failed ? "error" : "success",
				    "elapsed_time", (double)(run_now_ms() -
				    t0) / 1000.0));
				bad |= json_array_append_new(seq, json_pack(
				    "{s:s,s:I}", "type", "tool_call", "index",
				    (json_int_t)(json_array_size(calls) - 1)));
				prompt_add(c, p, LLM_TOOL, prompt_keep(p, out));
				p->msgs[p->n - 1].tool_call_id = tc[i].id;
				p->msgs[p->n - 1].name = tc[i].name;
				json_decref(args);
				if (bad) {
					llm_response_release(&rs);
					node_fail(c, "out of memory");
					goto out;
				}
			}
		}
		llm_response_release(&rs);
	}
	if (rc != 0) {
		node_fail(c, "the agent did not answer within %d iterations "
		    "(max_iterations)", max_iter);
		goto out;
	}
	if (content.err) {
		rc = node_fail(c, "out of memory");
		goto out;
	}
	bad = json_object_set_new(gen, "content", json_string(content.p ?
	    content.p : ""));
	if (stream) {
		char key[160];

		snprintf(key, sizeof(key), "%s.generation.content",
		    c->node->id);
		pthread_mutex_lock(&c->run->mu);
		bad |= json_object_set_new(c->run->streamed, key, json_true());
		pthread_mutex_unlock(&c->run->mu);
	}
	if (bad || (*files = cu_output_files(c, sb)) == NULL)
		rc = node_fail(c, "out of memory");
out:
	dbuf_free(&content);
	as_state_release(&st);
	json_decref(schema);
	return rc;
}
