/*
 * agent_sandbox.c — the sandboxed runtime's Agent: an llm node with
 * computer_use on. The model gets a `bash` tool that runs commands in the
 * run's sandbox (engine/run_sandbox.c), with the app's files and skills
 * under skills/; it may call it until it answers, at most max_iterations
 * times. Files it leaves under output/ become the node's files.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/exec.h"
#include "engine/llm/llm.h"
#include "engine/nodes/files.h"
#include "engine/nodes/llm.h"
#include "engine/sandbox/sandbox.h"

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

int
agent_sandbox_run(struct node_ctx *c, struct prompt *p, const json_t *model,
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
				tc[k].id = (char *)prompt_keep(p,
				    strdup(rs.tool_calls[k].id));
				tc[k].name = (char *)prompt_keep(p,
				    strdup(rs.tool_calls[k].name));
				tc[k].arguments = (char *)prompt_keep(p,
				    strdup(rs.tool_calls[k].arguments));
			}
			/* the calls array lives as long as the prompt */
			p->allocs[p->nallocs++] = tc;
			prompt_add(c, p, LLM_ASSISTANT, prompt_keep(p,
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
				prompt_add(c, p, LLM_TOOL, prompt_keep(p, out));
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
