/*
 * records.h — what engine/records/ gives the rest of the engine: the
 * stored things of an app (its record, draft and versions, file system,
 * skills, keys, conversations, uploads, saved workspaces) and the imports
 * and upgrades that make apps. Included by engine files only.
 */
#ifndef FLOWCGI_ENGINE_RECORDS_H
#define FLOWCGI_ENGINE_RECORDS_H

#include "engine/dsl/dsl.h"

/* ====== Records of any database (records.c) ====== */

/* 1 when string member k of rec is present and equals want. */
int	record_field_is(const json_t *rec, const char *k, const char *want);

/*
 * The entries of db whose key starts with prefix (NULL: every entry), in
 * key order, at most max of them (0: no limit); with app_id, only records
 * whose "app_id" member is that string (records.c). *out is a new object, key
 * -> the value parsed as JSON (null when it is not JSON). As everything is
 * read before the call returns, the caller may then change or delete the
 * entries in the same transaction. Returns 0 or a STORE_E* code.
 */
int	records_collect(struct store_txn *t, enum store_db db,
	    const char *prefix, const char *app_id, size_t max, json_t **out);

/*
 * 1 when record rec belongs to app_id and its string member user_key is
 * user (records.c); NULL app_id or user: any. A record of another app or end
 * user is one that does not exist, as in Dify.
 */
int	record_owned(const json_t *rec, const char *app_id,
	    const char *user_key, const char *user);

/*
 * store_blob_read of blob sum in a read transaction of its own (a stored
 * blob never changes; one let go meanwhile is gone): what sends a stored
 * file to a slow reader does between reads (records.c). STORE_E* codes.
 */
int	blob_read_alone(struct engine *e, const char *sum, uint64_t off,
	    void *buf, size_t n, size_t *got);

/* ====== Apps parsed once (app_cache.c) ====== */

/*
 * The app's record with the DSL it runs as "dsl": with draft set its draft
 * (as engine_app_get_full), else its latest published version, or the
 * draft when it was never published (versions.c); a version also brings
 * "run_version": {id, version}. From
 * the cache of parsed apps (app_cache.c) while its stored bytes are
 * unchanged: shared, so the caller must not change it. *sealed is 1 when
 * the shared draft may hold sealed secrets (then dsl_secrets OPEN would
 * change it: work on a copy). init/fini go with the engine.
 */
int	app_cache_get(struct engine *e, const char *id, int draft,
	    json_t **out, int *sealed);
/* The same for published version vid (ENGINE_ENOTFOUND: no such one). */
int	app_cache_get_version(struct engine *e, const char *id,
	    const char *vid, json_t **out, int *sealed);
int	app_cache_init(struct engine *e);
void	app_cache_fini(struct engine *e);

/*
 * The storage's configuration generation (store_generation) for a cache
 * of apps or keys: read once per request between engine_request_begin
 * and engine_request_end on this thread, else at every call. 0 and *gen,
 * or nonzero when there is none (LMDB, or the read failed): then compare
 * the stored records themselves.
 */
int	app_cache_generation(struct engine *e, uint64_t *gen);

/*
 * The graph of the workflow of app, an app app_cache_get gave (and not a
 * copy of it): built once and kept with the cached app, new reference; or
 * NULL (not cached any more, or it does not build: graph_build says why).
 */
struct graph *app_cache_graph(struct engine *e, const json_t *app);

/* ====== Published versions (versions.c) ====== */

/*
 * The latest published version of app_id in t: its id into vid, its
 * stored record into *val (valid until t ends). STORE_ENOTFOUND: none.
 */
int	versions_latest(struct store_txn *t, const char *app_id, char vid[37],
	    const void **val, size_t *len);

/* Published version vid of app_id in t, as versions_latest; STORE_ENOTFOUND
 * for none (or a vid that is no UUID). */
int	versions_get(struct store_txn *t, const char *app_id, const char *vid,
	    const void **val, size_t *len);

/*
 * Publishes dsl (the stored draft, secrets sealed) as a new version of
 * app_id in t, dropping the oldest past workflow.max_versions. *out (may
 * be NULL) gets the version record without its dsl.
 */
int	versions_publish(struct store_txn *t, const struct conf *c,
	    const char *app_id, const json_t *dsl, const char *name,
	    const char *comment, json_t **out);

/* Deletes every version of app_id (the app goes). */
int	versions_delete_all(struct store_txn *t, const char *app_id);

/*
 * dsl_check_limits of doc as a draft save, a publish and an import run it:
 * confirmed, DSL_CHECK_RUNNABLE, workflow.max_variable_size. Same
 * contract as dsl_check.
 */
int	draft_check(struct engine *e, const json_t *doc, char *err,
	    struct dsl_report *rep, json_t **out);

/* The draft hash of a DSL document (versions.c says what it covers). */
void	draft_hash(const json_t *dsl, char hex[STORE_HASH_HEX]);

/* Version vid of app_id (NULL: the latest), as stored, with its dsl. */
int	version_get(struct engine *e, const char *app_id, const char *vid,
	    json_t **out);

/* ====== Saved workspaces (workspace.c) ====== */

/*
 * Keeps tar[0..len) as user's draft workspace of app_id in t, dropping
 * the one it replaces (run.c, with the run's final write). No user: 0,
 * nothing kept. Returns 0 or a STORE_E* code.
 */
int	workspace_draft_put(struct store_txn *t, const char *app_id,
	    const char *user, const void *tar, size_t len);

/* Deletes every draft workspace of app_id (app.c). 0 or STORE_E*. */
int	workspace_draft_delete_all(struct store_txn *t, const char *app_id);

/*
 * A copy of the saved workspace tar w names: *out (malloc'd, caller
 * frees), *len. 0, ENGINE_ENOTFOUND, or another ENGINE_E* code.
 */
struct workspace_ref;
int	workspace_load(struct engine *e, const struct workspace_ref *w,
	    char **out, size_t *len);

/*
 * Cleans a workspace-relative path into out: "." parts and repeated or
 * trailing "/" dropped, "" for the root. An absolute path or a ".." part
 * is ENGINE_EINVAL with err saying so.
 */
int	workspace_path_clean(const char *in, char *out, size_t outsz,
	    char *err);

/* ====== Apps (app.c) ====== */

/*
 * A new app record of mode from Dify's create fields in (name required),
 * with a fresh default draft. imported: a copy or an import, where Dify
 * keeps descriptions of any length. *out is a new reference.
 */
int	app_new_record(const json_t *in, const char *mode, int imported,
	    char *err, json_t **out);

/*
 * An app record in storage: app_store_put splits a "dsl" member off into
 * the drafts database; app_store_get puts it back when with_draft.
 */
int	app_store_put(struct store_txn *t, json_t *rec, unsigned flags);
/* rec as stored in the apps database: no dsl, with what it implies. */
json_t	*app_record_strip(const json_t *rec);
int	app_store_get(struct store_txn *t, const char *id, int with_draft,
	    json_t **out);

/* {id, created_at, updated_at} for a workflow-mode draft, else null. */
json_t	*app_workflow_meta(const char *mode, int64_t now);

/*
 * Asks dataset_id's External Knowledge API for query (knowledge.c). *out
 * is its records [{content, score, title, metadata}] (new reference).
 * ENGINE_EINVAL when the dataset is not configured (err says how to),
 * ENGINE_EFETCH when the endpoint fails.
 */
int	knowledge_retrieve(struct engine *e, const char *dataset_id,
	    const char *query, int top_k, double threshold, char *err,
	    json_t **out);

/* Removes an app's runs, node executions, conversations, messages and
 * uploads (conversations.c). */
int	runs_delete_all(struct store_txn *t, const char *app_id);

/*
 * Drops pending imports older than their 10 minutes and prepared bundle
 * imports past their expires_at, with their bundle blobs (import.c); *n
 * (may be NULL) gets how many.
 */
int	imports_purge_expired(struct store_txn *t, int64_t *n);

/* The settings key prefix of an app's annotations record (the record is
 * engine/knowledge/annotations.c's; it goes with the app, app.c). */
#define ANNOTATIONS_KEY_PREFIX "annotations/"

/* Removes every API key of app_id (keys.c). */
int	keys_delete_all(struct store_txn *t, const char *app_id);

/* ====== Assets (assets.c) ====== */

/* Removes every asset node of app_id, dropping blob references. */
int	assets_delete_all(struct store_txn *t, const char *app_id);

/* Copies every asset node of src to dst (same node ids, shared blobs). */
int	assets_copy_all(struct store_txn *t, const char *src, const char *dst);

/* ====== Skills: Dify's placeholders (skill.c) ====== */

#define SKILL_MAX_DEPTH	64	/* folders in an asset path */

/*
 * What the placeholders of a text stand for. Each callback returns a
 * malloc'd string (the compiler frees it):
 *  - file: the text for asset asset_id, NULL when there is none;
 *  - tool: the text for the tool a token names, "" when the tool is
 *    disabled (left out), NULL when it is not found.
 * A NULL callback finds nothing.
 */
struct skill_resolver {
	char	*(*file)(void *arg, const char *asset_id);
	char	*(*tool)(void *arg, const char *provider, const char *name,
		    const char *uuid);
	void	*arg;
};

/*
 * Compiles text (len bytes, any bytes) with Dify's rules (skill.c's
 * header): *out is malloc'd and NUL-terminated, *outlen (if not NULL) its
 * length. Returns 0, ENGINE_ENOMEM, or ENGINE_ELIMIT when the result
 * would pass max bytes.
 */
int	skill_compile(const char *text, size_t len,
	    const struct skill_resolver *r, size_t max, char **out,
	    size_t *outlen);

/*
 * Appends the well-formed references in text to tools ({provider,
 * tool_name, uuid}) and files ({source, asset_id}); either may be NULL.
 * Returns 0 or ENGINE_ENOMEM.
 */
int	skill_refs(const char *text, size_t len, json_t *tools, json_t *files);

/*
 * The path of asset to as a file at from refers to it (both "/a/b.md"
 * paths of the asset tree), as Dify's AppAssetFileTree.relative_path:
 * "./b.md", "./sub/b.md", "../b.md". Malloc'd; NULL when out of memory.
 */
char	*skill_relpath(const char *from, const char *to);

/*
 * The name a tool is offered to a model under (the sandboxed Agent's
 * function tools): tool_name, or with provider "<provider>_<tool_name>",
 * bytes outside [A-Za-z0-9_-] as "_", at most 61 bytes, into buf.
 */
void	skill_tool_name(const char *provider, const char *tool, char *buf,
	    size_t size);

/*
 * How a compiled text names a tool the model can call: "[Tool: <name>]"
 * (Dify's says "[Executable: <name>_<uuid> --help command]" for its CLI).
 * Malloc'd; NULL when out of memory.
 */
char	*skill_tool_text(const char *name);

/* ====== Assets in bundles (assets.c) ====== */

/*
 * Every asset node of app_id for a bundle: *nodes, a flat list of node
 * views with paths (no timestamps); *files, one entry per node with its
 * path relative to the root and, for files, a copy of the bytes. Free with
 * bundle_files_free.
 */
int	assets_export(struct store_txn *t, const char *app_id, json_t **nodes,
	    struct bundle_file **files, size_t *nfiles);

/*
 * Lays a checked bundle's files into app_id (which has none yet) inside t:
 * folders made as needed, node ids taken from the manifest where it gives
 * valid ones, every name and limit checked. Returns 0, or ENGINE_EINVAL /
 * ENGINE_ELIMIT with err naming the entry.
 */
int	assets_import(struct store_txn *t, const struct conf *c,
	    const char *app_id, const struct bundle *b, char *err);

/* ====== The head of a fetched file's response (uploads.c) ====== */

/*
 * What the remote-files probe and fetch read of a response's header lines:
 * Content-Type (parameters kept), Content-Length (-1: none or no number)
 * and the file name of Content-Disposition (filename*= as RFC 5987 says,
 * preferred over filename=; percent-decoded, its last path segment only,
 * valid UTF-8 without control characters, at most 255 bytes; "" none). A
 * status line ("HTTP/...") starts them over: a redirect's head is not the
 * file's.
 */
struct upload_head {
	char	 type[256];
	int64_t	 length;
	char	 name[256];
	int	 name_star;	/* name came from filename* */
};

/* Empties h (length -1). */
void	upload_head_init(struct upload_head *h);

/* Reads header line p[0..n) (CR/LF stripped, not NUL-terminated) into h. */
void	upload_head_line(struct upload_head *h, const char *p, size_t n);

#endif
