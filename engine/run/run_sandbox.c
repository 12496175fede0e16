/*
 * run_sandbox.c — the sandboxed runtime's sandbox for one run: created
 * lazily from the active provider when a node first needs it, the app's
 * file system laid into skills/, a conversation's workspace restored from
 * the blob its last turn left (a draft test run's: the user's draft
 * workspace, workspace.c); saved back and destroyed when the run ends,
 * whatever happened. The run's MCP sessions (made by run_mcp) end there
 * too: both are what a run holds outside itself until its nodes are done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"
#include "engine/sandbox/sandbox.h"
#include "engine/tools/tools.h"

#define WORKSPACE_TAR	".flowcgi-workspace.tar"
#define WORKSPACE_MAX	((int64_t)256 << 20)

/* ====== Skill files: compiled as they are laid (skill.c) ====== */

struct skill_lay {
	struct run	*r;
	const char	*from;	/* the compiled file's "/path" */
	json_t		*paths;		/* asset id -> "/path" */
};

static char *
skill_lay_file(void *arg, const char *asset_id)
{
	struct skill_lay	*sl = arg;
	const char		*to = json_string_value(json_object_get(
				    sl->paths, asset_id));

	return to != NULL ? skill_relpath(sl->from, to) : NULL;
}

/* A tool flowcgi has, named as the Agent offers it (agent_sandbox.c). */
static char *
skill_lay_tool(void *arg, const char *provider, const char *name,
    const char *uuid)
{
	struct skill_lay	*sl = arg;
	struct tool_call	 call;
	json_t			*defs = NULL;
	char			 err[ENGINE_ERRMAX], fn[64];

	memset(&call, 0, sizeof(call));
	call.provider = provider;
	call.tool = name;
	if (tool_describe(sl->r->e, &call, err, &defs) != 0)
		return NULL;
	json_decref(defs);
	if (json_array_append_new(sl->r->skill_tools, json_pack(
	    "{s:s,s:s,s:s}", "provider", provider, "tool_name", name, "uuid",
	    uuid)) != 0) {
		atomic_store(&sl->r->nomem, 1);
		return NULL;
	}
	skill_tool_name(NULL, name, fn, sizeof(fn));
	return skill_tool_text(fn);
}

/*
 * Compiles the app's Markdown files in place before they are laid, as
 * Dify's SkillBuilder compiles every .md asset: file references become
 * paths relative to the file, tool references name the Agent's function
 * tools (which r->skill_tools lists). A file that cannot be compiled is
 * laid as it is.
 */
static void
skills_compile(struct run *r, const json_t *nodes, struct bundle_file *files,
    size_t nfiles)
{
	struct skill_lay	 sl = { r, NULL, NULL };
	struct skill_resolver	 res = { skill_lay_file, skill_lay_tool,
				    &sl };
	const json_t		*n;
	const char		*name;
	char			*out;
	size_t			 i, len;

	if ((sl.paths = json_object()) == NULL) {
		atomic_store(&r->nomem, 1);
		return;
	}
	json_array_foreach(nodes, i, n)
		if (json_is_string(json_object_get(n, "id")) &&
		    json_object_set(sl.paths, json_string_value(
		    json_object_get(n, "id")), json_object_get(n, "path")) !=
		    0)
			atomic_store(&r->nomem, 1);
	for (i = 0; i < nfiles && i < json_array_size(nodes); i++) {
		n = json_array_get(nodes, i);
		name = json_string_value(json_object_get(n, "name"));
		if (files[i].is_dir || name == NULL || strlen(name) < 3 ||
		    strcmp(name + strlen(name) - 3, ".md") != 0 ||
		    files[i].len == 0 || memmem(files[i].data, files[i].len,
		    "\xC2\xA7", 2) == NULL)
			continue;
		sl.from = json_string_value(json_object_get(n, "path"));
		if (sl.from == NULL || skill_compile((const char *)
		    files[i].data, files[i].len, &res,
		    (size_t)r->e->conf->asset_max_file, &out, &len) != 0)
			continue;
		free(files[i].data);
		files[i].data = (unsigned char *)out;
		files[i].len = len;
	}
	json_decref(sl.paths);
}

/* Uploads every asset of the app under skills/; lists the skills. */
static int
lay_assets(struct run *r, struct sandbox *sb, char *err)
{
	struct store_txn	*t = NULL;
	struct bundle_file	*files = NULL;
	json_t			*nodes = NULL, *n, *skill;
	size_t			 nfiles = 0, i;
	char			 path[4200];
	const char		*p;
	int			 rc;

	if ((rc = store_read_begin(r->e->store, &t)) != 0)
		return engine_invalid(err, "storage: %s", store_strerror(rc));
	rc = assets_export(t, r->app_id, &nodes, &files, &nfiles);
	store_read_end(t);
	if (rc == ENGINE_EINVAL) {	/* a chatflow without files */
		rc = 0;
		goto out;
	}
	if (rc != 0) {
		engine_invalid(err, "reading the app's files failed");
		goto out;
	}
	skills_compile(r, nodes, files, nfiles);
	for (i = 0; i < nfiles; i++) {
		if (files[i].is_dir)
			continue;
		snprintf(path, sizeof(path), "skills/%s", files[i].path);
		if ((rc = sandbox_upload(sb, path, files[i].data ?
		    (const void *)files[i].data : "", files[i].len, err)) != 0)
			goto out;
	}
	/* skills: folders holding a SKILL.md, with its front matter */
	json_array_foreach(nodes, i, n) {
		p = json_string_value(json_object_get(n, "path"));
		if (p == NULL || strcmp(json_string_value(json_object_get(n,
		    "name")), "SKILL.md") != 0)
			continue;
		skill = json_pack("{s:s,s:s,s:s+}", "name", "", "description",
		    "", "path", "skills", p);
		if (json_array_append_new(r->skills, skill) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(nodes);
	bundle_files_free(files, nfiles);
	return rc;
}

/* Front matter of the skills, read back from the sandbox's files. */
static void
skills_describe(struct run *r)
{
	json_t	*tree = NULL, *s;
	char	 err[ENGINE_ERRMAX];
	size_t	 i;

	if (engine_asset_tree(r->e, r->app_id, err, &tree) != 0)
		return;
	/* the tree view carries skill {name, description} on the folder */
	json_array_foreach(r->skills, i, s) {
		const char	*path = json_string_value(json_object_get(s,
				    "path"));
		json_t		*stack[64], *node, *kids;
		size_t		 top = 0, j;

		stack[top++] = json_object_get(tree, "children");
		while (top > 0) {
			kids = stack[--top];
			json_array_foreach(kids, j, node) {
				const char *np = json_string_value(
				    json_object_get(node, "path"));
				json_t *sk = json_object_get(node, "skill");

				if (sk != NULL && np != NULL &&
				    strncmp(path + 6, np, strlen(np)) == 0 &&
				    strcmp(path + 6 + strlen(np),
				    "/SKILL.md") == 0) {
					json_t *d = json_object_get(sk,
					    "description");

					if (json_object_set(s, "name",
					    json_object_get(sk, "name") ?
					    json_object_get(sk, "name") :
					    json_object_get(node, "name")) !=
					    0 || json_object_set_new(s,
					    "description", d != NULL ?
					    json_incref(d) : json_string(""))
					    != 0)
						atomic_store(&r->nomem, 1);
				}
				if (top < 64 && json_array_size(
				    json_object_get(node, "children")) > 0)
					stack[top++] = json_object_get(node,
					    "children");
			}
		}
	}
	json_decref(tree);
}

/* Unpacks a saved workspace tar (copy, len bytes) into the sandbox. */
static int
workspace_untar(struct sandbox *sb, const char *copy, size_t len,
    const char *what, char *err)
{
	struct sandbox_exec_req		 rq;
	struct sandbox_exec_result	 res;
	int				 rc;

	if ((rc = sandbox_upload(sb, WORKSPACE_TAR, copy, len, err)) != 0)
		return rc;
	memset(&rq, 0, sizeof(rq));
	memset(&res, 0, sizeof(res));
	/* as root, tar would restore setuid / setgid / sticky bits
	 * and owners: the saved workspace never brings those back */
	rq.shell = "tar --no-same-owner --no-same-permissions -xf "
	    WORKSPACE_TAR " && rm -f " WORKSPACE_TAR;
	rc = sandbox_exec(sb, &rq, err, &res);
	if (rc == 0 && res.exit_code != 0)
		rc = engine_invalid(err, "restoring the %s workspace failed: "
		    "%.200s", what, res.err ? res.err : "");
	sandbox_exec_result_release(&res);
	return rc;
}

/* Restores the workspace a conversation's last turn saved. */
static int
restore_workspace(struct run *r, struct sandbox *sb, char *err)
{
	struct store_txn		*t = NULL;
	size_t				 len = 0;
	json_t				*conv = NULL;
	const char			*sum;
	char				*copy = NULL;
	int				 rc = 0;

	if (!r->chat || store_read_begin(r->e->store, &t) != 0)
		return 0;
	if (store_get_json(t, STORE_DB_CONVERSATIONS, r->conversation_id,
	    &conv) == 0 && (sum = json_string_value(json_object_get(conv,
	    "workspace"))) != NULL)
		(void)store_blob_load(t, sum, &copy, &len);	/* none: empty */
	store_read_end(t);
	json_decref(conv);
	if (copy == NULL)
		return 0;
	rc = workspace_untar(sb, copy, len, "conversation's", err);
	free(copy);
	return rc;
}

/*
 * A draft test run: restores the draft workspace of (app, console user)
 * that the user's last draft run left, unless it was reset.
 */
static int
restore_draft_workspace(struct run *r, struct sandbox *sb, char *err)
{
	struct workspace_ref	 w = { r->app_id, r->draft_user, NULL };
	char			*copy = NULL;
	size_t			 len = 0;
	int			 rc;

	if ((rc = workspace_load(r->e, &w, &copy, &len)) == ENGINE_ENOTFOUND)
		return 0;	/* the first run, or just reset */
	if (rc != 0)
		return engine_invalid(err, "reading the draft workspace "
		    "failed: %s", engine_strerror(rc));
	rc = workspace_untar(sb, copy, len, "draft", err);
	free(copy);
	return rc;
}

int
run_sandbox(struct run *r, char *err, struct sandbox **out)
{
	struct sandbox_config	 cfg;
	struct sandbox		*sb = NULL;
	int			 rc = 0;

	pthread_mutex_lock(&r->sb_mu);
	if (r->sb != NULL) {
		*out = r->sb;
		goto out;
	}
	{
		const struct sandbox_provider *p = NULL;

		/* the provider active now, read per run: a change in the
		 * settings applies to the next run in every process */
		if ((rc = sandbox_active(r->e, err, &p, &cfg)) != 0)
			goto out;
		rc = sandbox_create(p, &cfg, err, &sb);
		/* what the bash tool tells the model about this sandbox */
		if (rc == 0 && r->sb_note == NULL)
			r->sb_note = sandbox_tool_note(p, &cfg);
		sandbox_config_release(&cfg);
		if (rc != 0)
			goto out;
	}
	if ((rc = lay_assets(r, sb, err)) != 0 ||
	    (rc = r->draft_user != NULL ? restore_draft_workspace(r, sb, err) :
	    restore_workspace(r, sb, err)) != 0) {
		sandbox_free(sb);
		goto out;
	}
	skills_describe(r);
	r->sb = sb;
	*out = sb;
out:
	pthread_mutex_unlock(&r->sb_mu);
	return rc == 0 ? 0 : -1;
}

struct mcp_pool *
run_mcp(struct run *r)
{
	struct mcp_pool *p;

	pthread_mutex_lock(&r->sb_mu);
	if (r->mcp == NULL)
		r->mcp = mcp_pool_new();
	p = r->mcp;
	pthread_mutex_unlock(&r->sb_mu);
	return p;
}

/*
 * Closes the run's MCP sessions; saves a chatflow's workspace (without
 * skills/) as a blob for its next turn, or a draft run's for the user's
 * next draft run, then destroys the sandbox.
 * Returns the blob's hash in hex (empty when nothing was saved).
 */
void
run_sandbox_end(struct run *r, char hex[STORE_HASH_HEX])
{
	struct sandbox_exec_req		 rq;
	struct sandbox_exec_result	 res;
	char				 err[ENGINE_ERRMAX], *tar = NULL;
	size_t				 len = 0;

	hex[0] = '\0';
	/* the run's other outside resource: its MCP sessions end too */
	mcp_pool_free(r->e, r->mcp);
	r->mcp = NULL;
	if (r->sb == NULL)
		return;
	if (r->chat || r->draft_user != NULL) {
		memset(&rq, 0, sizeof(rq));
		memset(&res, 0, sizeof(res));
		rq.shell = "tar --exclude=./skills --exclude=./" WORKSPACE_TAR
		    " -cf " WORKSPACE_TAR " .";
		if (sandbox_exec(r->sb, &rq, err, &res) == 0 &&
		    res.exit_code == 0 && sandbox_download(r->sb,
		    WORKSPACE_TAR, WORKSPACE_MAX, err, &tar, &len) == 0)
			store_hash(tar, len, hex);
		sandbox_exec_result_release(&res);
		if (hex[0] != '\0') {
			/* the bytes go in with the run's final transaction */
			free(r->workspace_tar);
			r->workspace_tar = tar;
			r->workspace_len = len;
			tar = NULL;
		}
		free(tar);
	}
	sandbox_destroy(r->sb, err);
	sandbox_free(r->sb);
	r->sb = NULL;
}
