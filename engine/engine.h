/*
 * engine — everything about apps and runs, with no knowledge of FastCGI.
 *
 * The front (fcgi/), the CLI and the tests drive the engine through this
 * header. Records travel as jansson objects: a json_t returned through an
 * **out argument is a new reference the caller must json_decref.
 */
#ifndef FLOWCGI_ENGINE_H
#define FLOWCGI_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "conf/conf.h"
#include "storage/storage.h"

enum engine_err {
	ENGINE_OK = 0,
	ENGINE_EINVAL = -200,	/* bad input; err says which field and why */
	ENGINE_ENOTFOUND = -201,
	ENGINE_ECONFLICT = -202,	/* If-Match revision is stale */
	ENGINE_ESTORE = -203,	/* storage failed; see the log */
	ENGINE_ENOMEM = -204,
	ENGINE_EFULL = -205,	/* storage reached its size limit */
	ENGINE_EEXIST = -206,	/* a name is taken; err says which */
	ENGINE_ELIMIT = -207,	/* a configured limit; err names it */
	ENGINE_EFETCH = -208,	/* outbound HTTP failed; err says how */
	ENGINE_ESANDBOX = -209,	/* the sandbox failed (not the command) */
	ENGINE_ESTOPPED = -210,	/* a stop request or a cancel ended it */
	ENGINE_EUNAVAIL = -211,	/* the database cannot be reached now */
};

/* Room for a message that explains an ENGINE_EINVAL. */
#define ENGINE_ERRMAX 256

struct engine;

/*
 * Opens the data directory named by c (created 0700 if missing) and its
 * storage. c must outlive the engine. *out is freed with engine_close.
 * On failure err says why.
 */
int	engine_open(const struct conf *c, char *err, struct engine **out);
void	engine_close(struct engine *e);
const char *engine_strerror(int rc);

/*
 * Checks that the local sandbox (bubblewrap) can run a command here.
 * Returns 0, or an error with err saying what is wrong and what to do.
 */
int	engine_sandbox_probe(struct engine *e, char *err);

/*
 * Kills the engine's warm code runners and removes their sandboxes, for a
 * process about to exit without engine_close (runs still going; a code
 * node running on a warm runner ends with it). Code nodes that start
 * afterwards start cold. engine_close does it too.
 */
void	engine_sandbox_stop(struct engine *e);

/* 0 while storage can be read, else an ENGINE_E* code. */
int	engine_health(struct engine *e);

/* The storage under the engine, for modules that keep their own records. */
struct store *engine_store(struct engine *e);

/*
 * app.max_active_requests: takes one of the n slots of app app_id that
 * every process on the same data shares (store_slot_take; a process that
 * dies frees its slots). 0 with *slot held until engine_app_slot_give, 1
 * when all n are held, or ENGINE_EUNAVAIL / ENGINE_ESTORE.
 */
int	engine_app_slot_take(struct engine *e, const char *app_id, int n,
	    int64_t *slot);
void	engine_app_slot_give(struct engine *e, int64_t slot);

/* ====== Identifiers and time ====== */

/* A new RFC 9562 version-7 UUID (time-ordered) in buf[37]. */
void	engine_uuid(char buf[37]);

/* Seconds since the epoch. */
int64_t	engine_now(void);

/* 0 when s is a UUID in canonical lowercase 8-4-4-4-12 form. */
int	engine_uuid_check(const char *s);

/* Dify's UUID_NIL: a message's parent_message_id that means "the one
 * before it" (messages of the service API and of before the tree). */
#define ENGINE_UUID_NIL	"00000000-0000-0000-0000-000000000000"

/* ====== Text ====== */

/*
 * A NUL-terminated copy of s (len bytes) that is well-formed UTF-8: what
 * is not (stray continuation bytes, overlong forms, surrogates, past
 * U+10FFFF, a sequence cut short) becomes U+FFFD, one for each maximal
 * ill-formed part, as Python's errors="replace" decodes it; with nul_too,
 * NUL bytes too. Its length goes to *outlen. NULL when out of memory.
 */
char	*engine_utf8_clean(const char *s, size_t len, int nul_too,
	    size_t *outlen);

/* The length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
size_t	 engine_utf8_seq(const unsigned char *s, size_t n);

/* ====== Apps ====== */

/* The app modes Dify knows. */
int	engine_app_mode_valid(const char *mode);

struct app_query {
	int		 page;		/* 1-based */
	int		 limit;		/* 1..100 */
	const char	*mode;		/* NULL or "all": any */
	const char	*name;		/* NULL: any; else a substring */
};

/*
 * Lists apps newest first. *out = {page, limit, total, has_more, data:[app
 * record, ...]}.
 */
int	engine_app_list(struct engine *e, const struct app_query *q,
	    json_t **out);

/*
 * Creates an app from Dify's create fields {name, description, mode,
 * icon_type, icon, icon_background}. *out is the stored record.
 */
int	engine_app_create(struct engine *e, const json_t *in, char *err,
	    json_t **out);

/*
 * The stored record of app id, without its draft (cheap): the record has
 * sandboxed and, for chat modes, model_config.
 */
int	engine_app_get(struct engine *e, const char *id, json_t **out);

/*
 * One request on this thread, from begin to end: on PostgreSQL the caches
 * of API keys and parsed apps check the configuration generation once per
 * request rather than once per lookup (app_cache.c), so a request sees the
 * apps and keys as they were when it first looked one up. begin forgets
 * what an earlier request read; outside a request every lookup checks.
 */
void	engine_request_begin(struct engine *e);
void	engine_request_end(struct engine *e);

/*
 * The mode of app id ("workflow", "advanced-chat", ...) into mode (len
 * bytes), from the parsed apps the runs share (run.app_cache): what a run
 * request checks first costs no parse.
 */
int	engine_app_mode(struct engine *e, const char *id, char *mode,
	    size_t len);

/*
 * The same with the whole draft DSL document under "dsl". Its secrets
 * (secret environment variables, http-request API keys, a tool or agent
 * node's inline headers) are as stored, sealed: an answer that shows the
 * draft masks them with engine_dsl_mask_secrets first.
 */
int	engine_app_get_full(struct engine *e, const char *id, json_t **out);

/*
 * The same with the DSL the service API runs: the latest published
 * version, or the draft of an app never published. Shared with the runs:
 * the caller must not change it. Its secrets are sealed.
 */
int	engine_app_get_live(struct engine *e, const char *id, json_t **out);

/*
 * Replaces every secret that the DSL document dsl carries (see
 * engine_app_get_full) by ENGINE_SECRET_MASK, in place; empty values stay
 * empty. Returns 0 or ENGINE_ENOMEM.
 */
int	engine_dsl_mask_secrets(json_t *dsl);

/*
 * Updates name (required), description, icon fields,
 * use_icon_as_answer_icon and max_active_requests. When if_revision is
 * not negative and the stored revision differs, nothing changes and
 * ENGINE_ECONFLICT is returned. *out is the updated record.
 */
int	engine_app_update(struct engine *e, const char *id, const json_t *in,
	    int64_t if_revision, char *err, json_t **out);

/* Deletes app id and everything that belongs to it, in one transaction. */
int	engine_app_delete(struct engine *e, const char *id);

/*
 * Copies app id with its draft into a new app; in may override name,
 * description and the icon fields. *out is the new record.
 */
int	engine_app_copy(struct engine *e, const char *id, const json_t *in,
	    char *err, json_t **out);

/* ====== Draft and published versions (versions.c) ====== */

/*
 * A workflow or advanced-chat app has a draft, which the console edits,
 * and published versions; the service API runs the latest published one,
 * or the draft of an app never published. Views are Dify's Workflow
 * objects: {id, graph, features, hash, version ("draft" or the time of
 * publishing), marked_name, marked_comment, created_by, created_at,
 * updated_by, updated_at, tool_published, environment_variables,
 * conversation_variables, rag_pipeline_variables}, secrets masked.
 */

/* The draft's view, with app_mode and runtime_type. ENGINE_EINVAL: the
 * app has no workflow (a chat, agent-chat or completion app). */
int	engine_draft_view(struct engine *e, const char *app_id, json_t **out);

/*
 * Saves the draft from Dify's sync body {graph, features,
 * environment_variables, conversation_variables, hash}: hash must be the
 * stored draft's (else ENGINE_ECONFLICT, nothing changes); the document
 * is checked and normalised as an import is (variables that can never be
 * valid are ENGINE_EINVAL, nothing kept; graph problems are kept and
 * listed); a secret sent back as ENGINE_SECRET_MASK keeps its stored
 * value. *out = {result, hash, updated_at, warnings (as an import's)}.
 */
int	engine_draft_save(struct engine *e, const char *app_id,
	    const json_t *in, char *err, json_t **out);

/*
 * Publishes the draft as a new version (name and comment may be NULL).
 * *out = {id, app_id, version, marked_name, marked_comment, created_at,
 * created_by}. The draft must pass the checks an import makes, graph
 * problems included (engine_draft_save's warnings): else ENGINE_EINVAL,
 * err the first problem's message and *out the array of all of them
 * ({node_id, edge_id?, field, message}; the caller frees it), nothing
 * published. Any other failure leaves *out NULL.
 */
int	engine_publish(struct engine *e, const char *app_id, const char *name,
	    const char *comment, char *err, json_t **out);

/* A page of the versions, newest first: {items, page, limit, has_more}. */
int	engine_versions_list(struct engine *e, const char *app_id, int page,
	    int limit, int named_only, json_t **out);

/* The view of version vid (NULL: the latest); ENGINE_ENOTFOUND: none. */
int	engine_version_view(struct engine *e, const char *app_id,
	    const char *vid, json_t **out);

/* Copies version vid into the draft. *out = {result, hash, updated_at}. */
int	engine_version_restore(struct engine *e, const char *app_id,
	    const char *vid, char *err, json_t **out);

/*
 * Replaces the model config of a chat, agent-chat or completion app with
 * mc (Dify's model-config body, whole); the app runs it from then on.
 */
int	engine_model_config_set(struct engine *e, const char *app_id,
	    const json_t *mc, char *err);

/* ====== App file system ====== */

/*
 * Each workflow or advanced-chat app has a tree of folders and files (Dify's
 * "app assets"). A node is {id, node_type: "file"|"folder", name,
 * parent_id, order, extension, size, checksum (sha256 hex)}; views add
 * path ("/a/b"), children and, for a folder holding SKILL.md, skill:
 * {name, description} from its YAML front matter. File contents are
 * content-addressed blobs shared between apps.
 */

/* {children: [view, ...]} for app_id, siblings in their order. */
int	engine_asset_tree(struct engine *e, const char *app_id, char *err,
	    json_t **out);

/* Creates folder name under parent_id (NULL: the root). *out = node view. */
int	engine_asset_mkdir(struct engine *e, const char *app_id,
	    const char *parent_id, const char *name, char *err, json_t **out);

/*
 * Creates file name under parent_id with data[0..len); when replace is set
 * and a file of that name exists there, its contents are replaced instead
 * of answering ENGINE_EEXIST. *out = node view.
 */
int	engine_asset_create(struct engine *e, const char *app_id,
	    const char *parent_id, const char *name, const void *data,
	    size_t len, int replace, char *err, json_t **out);

/* Replaces the contents of file node_id. *out = node view. */
int	engine_asset_write(struct engine *e, const char *app_id,
	    const char *node_id, const void *data, size_t len, char *err,
	    json_t **out);

/*
 * Reads file node_id: *data (malloc'd, NUL-terminated for convenience,
 * caller frees), *len, and *node (its view; may be NULL if not wanted).
 */
int	engine_asset_read(struct engine *e, const char *app_id,
	    const char *node_id, char *err, char **data, size_t *len,
	    json_t **node);

/*
 * What a download of file node_id needs without its bytes: *node (its
 * view), its checksum (sum; "" for an empty file) and its size in bytes,
 * for engine_blob_send.
 */
int	engine_asset_open(struct engine *e, const char *app_id,
	    const char *node_id, char *err, json_t **node,
	    char sum[65], uint64_t *size);

/*
 * Sends bytes [off, off + len) of blob sum to out, a chunk
 * (STORE_BLOB_CHUNK) at a time, each read in a transaction of its own:
 * memory stays one chunk and no transaction waits on a slow client. out
 * returns 0 to go on. ENGINE_ENOTFOUND when the blob went away (its last
 * holder let go) or ends before; 1 when out failed. len 0 sends nothing.
 */
typedef int (*engine_out_fn)(void *ctx, const void *buf, size_t n);
int	engine_blob_send(struct engine *e, const char *sum, uint64_t off,
	    uint64_t len, engine_out_fn out, void *ctx);

/* The view of node_id (a file or a folder) alone, without reading data. */
int	engine_asset_get(struct engine *e, const char *app_id,
	    const char *node_id, char *err, json_t **out);

/* Renames node_id. *out = node view. */
int	engine_asset_rename(struct engine *e, const char *app_id,
	    const char *node_id, const char *name, char *err, json_t **out);

/* Moves node_id under parent_id (NULL: the root). *out = node view. */
int	engine_asset_move(struct engine *e, const char *app_id,
	    const char *node_id, const char *parent_id, char *err,
	    json_t **out);

/* Deletes node_id, and everything under it for a folder. */
int	engine_asset_delete(struct engine *e, const char *app_id,
	    const char *node_id, char *err);

/*
 * Places node_id among its siblings right after after_id (NULL: first),
 * as Dify's reorder does: the siblings are numbered 0, 1, ... in their new
 * order, all in one transaction. after_id must be another node of the same
 * folder (ENGINE_ENOTFOUND otherwise, as for an unknown node_id). *out =
 * node view.
 */
int	engine_asset_reorder(struct engine *e, const char *app_id,
	    const char *node_id, const char *after_id, char *err,
	    json_t **out);

/*
 * Creates an empty file for an upload to follow (Dify's upload URL
 * request): name under parent_id, made unique among its siblings as Dify
 * does ("report.txt" -> "report 1.txt"). size is what the client means to
 * send: over assets.max_file_size, or past assets.max_app_size with the
 * app's other files, it is ENGINE_ELIMIT and nothing is made. *out = node
 * view.
 */
int	engine_asset_reserve(struct engine *e, const char *app_id,
	    const char *parent_id, const char *name, int64_t size, char *err,
	    json_t **out);

/*
 * Creates a tree of folders and empty files under parent_id (NULL: the
 * root) in one transaction (Dify's batch-upload): children is an array of
 * {name, node_type: "file" | "folder", size (files: bytes to come),
 * children (folders)}. Names are made unique among their siblings as
 * engine_asset_reserve does. Nothing is made when any entry is refused:
 * ENGINE_EINVAL (a field, a name; err names the entry), ENGINE_ELIMIT
 * (assets.batch_max_files, assets.max_files, assets.max_file_size,
 * assets.max_app_size). *out = the same tree as it was made: each entry
 * {id, name, node_type, size, path, children}.
 */
int	engine_asset_batch(struct engine *e, const char *app_id,
	    const char *parent_id, const json_t *children, char *err,
	    json_t **out);

/* ====== Import and export ====== */

/*
 * Overrides for an import; NULL fields come from the DSL's app header.
 * app_id names a workflow or advanced-chat app whose draft (and, for a
 * bundle, files) the import replaces.
 */
struct import_opts {
	const char	*name;
	const char	*description;
	const char	*icon_type;
	const char	*icon;
	const char	*icon_background;
	const char	*app_id;
	int		 draft_only;	/* do not publish what is imported */
};

/*
 * Imports DSL text as Dify does; a workflow or advanced-chat app is then
 * published (the service API runs what was imported) unless draft_only.
 * *out is always an Import object {id, status, app_id, app_mode,
 * current_dsl_version, imported_dsl_version, error}: status completed or completed-with-warnings (app made, and
 * then also warnings: the graph problems of dsl_check's report, each
 * {node_id, edge_id?, field, message}; a graph with some of them is kept
 * as a draft but refused at run time), pending (another version: confirm
 * within 10 minutes), or failed (error says why). Returns 0, or
 * ENGINE_ENOMEM / ENGINE_ESTORE / ENGINE_EFULL.
 */
int	engine_import(struct engine *e, const char *yaml, size_t len,
	    const struct import_opts *o, char *err, json_t **out);

/* The same, fetching the DSL from url through the outbound HTTP guard
 * (GitHub /blob/ pages are read from their raw form). */
int	engine_import_url(struct engine *e, const char *url,
	    const struct import_opts *o, char *err, json_t **out);

/* The same for a .zip bundle; its files come along. */
int	engine_import_bundle(struct engine *e, const void *zip, size_t len,
	    const struct import_opts *o, char *err, json_t **out);

/* Finishes a pending import (any process may). *out as above. */
int	engine_import_confirm(struct engine *e, const char *import_id,
	    char *err, json_t **out);

/*
 * Dify's bundle import in three steps: prepare, an upload of the .zip (to
 * a signed link), confirm. A prepared import waits bundle.import_ttl
 * seconds in the imports database (any process may take the next step);
 * the pruner removes it after that, with its upload.
 *
 * engine_bundle_prepare: a new prepared import, its id (32 hex digits)
 * into id and its expiry into *expires_at. ENGINE_ELIMIT when
 * bundle.max_pending of them wait already.
 *
 * engine_bundle_upload: keeps zip (len bytes, at most bundle.max_size:
 * else ENGINE_ELIMIT) as import id's bundle, replacing one uploaded
 * before. ENGINE_ENOTFOUND when id is unknown, expired or confirmed.
 *
 * engine_bundle_confirm: imports the uploaded bundle as
 * engine_import_bundle does (o->app_id is not used) and answers with the
 * same Import object. The app, its files and the end of the prepared
 * import are one transaction; a bundle that fails (damaged, a bomb, a bad
 * DSL) ends the prepared import too, as in Dify. ENGINE_ENOTFOUND (id
 * unknown, expired or confirmed already), ENGINE_EINVAL (nothing uploaded
 * yet: the prepared import stays).
 */
#define ENGINE_BUNDLE_ID_LEN	32
int	engine_bundle_prepare(struct engine *e,
	    char id[ENGINE_BUNDLE_ID_LEN + 1], int64_t *expires_at);
int	engine_bundle_upload(struct engine *e, const char *id, const void *zip,
	    size_t len, char *err);
int	engine_bundle_confirm(struct engine *e, const char *id,
	    const struct import_opts *o, char *err, json_t **out);

/*
 * The DSL of app_id as YAML (*yaml malloc'd, caller frees). With
 * include_secret its secrets (see engine_app_get_full) come in the clear;
 * without, they are blanked and credential ids dropped.
 */
int	engine_export(struct engine *e, const char *app_id, int include_secret,
	    char *err, char **yaml, size_t *len);

/* The same for published version vid of the app (ENGINE_ENOTFOUND: no
 * such version). */
int	engine_export_version(struct engine *e, const char *app_id,
	    const char *vid, int include_secret, char *err, char **yaml,
	    size_t *len);

/*
 * The app as a .zip bundle: <name>.yml, manifest.json, <name>/files.
 * *zip and *filename are malloc'd; the caller frees both.
 */
int	engine_export_bundle(struct engine *e, const char *app_id,
	    int include_secret, char *err, char **zip, size_t *len,
	    char **filename);

/* "<safe app name>.zip" for record rec, in buf. */
void	engine_bundle_filename(const json_t *rec, char *buf, size_t bufsz);

/* 1 when record rec is a sandboxed app (workflow.features.sandbox). */
int	engine_app_is_sandboxed(const json_t *rec);

/* ====== Signed links ====== */

/*
 * Links that work without a token until they expire
 * (engine/records/links.c), for a browser that uploads or downloads one
 * file: a request method and path (as routed, without the mount prefix) plus
 * the query parameters expires_at, nonce and sign, an HMAC-SHA256 keyed by
 * the data directory's link.key. A link whose method, path, expiry or nonce
 * was changed does not verify.
 */
#define ENGINE_LINK_QUERY_MAX	160

/*
 * The query "expires_at=...&nonce=...&sign=..." of a link to method and
 * path living ttl seconds, into query (ENGINE_LINK_QUERY_MAX bytes);
 * *expires_at (may be NULL) gets the expiry. Returns 0, or ENGINE_ESTORE
 * (the key file) / ENGINE_ENOMEM with err saying why.
 */
int	engine_link_sign(struct engine *e, const char *method,
	    const char *path, int64_t ttl, char *query, int64_t *expires_at,
	    char *err);

/*
 * A 32-byte key for one purpose (label, such as "flowcgi web passport"):
 * HMAC-SHA256 of label keyed by the link key, so it is shared by every
 * host that shares the link key, and removing link.key revokes it too.
 * Returns 0, or ENGINE_ESTORE with err saying why. The caller cleanses
 * out when done.
 */
int	engine_key_derive(struct engine *e, const char *label,
	    unsigned char out[32], char *err);

/*
 * Checks a link's query values (any may be NULL) for method and path.
 * Returns 0, or ENGINE_EINVAL with err saying why: values missing or
 * malformed, a signature that does not match, an expired link, or one
 * that would live longer than max_ttl seconds from now (no link made
 * under the current settings does). ENGINE_ESTORE: the key file.
 */
int	engine_link_verify(struct engine *e, const char *method,
	    const char *path, const char *expires_at, const char *nonce,
	    const char *sign, int64_t max_ttl, char *err);

/*
 * Spends the link of expires_at and nonce (one engine_link_verify passed):
 * an upload link works once. The check and the mark are one write, so of
 * two uses at once (any threads, processes or hosts) exactly one gets 0.
 * Returns 0, ENGINE_EEXIST with err when it was used already,
 * ENGINE_EINVAL (malformed values), or a storage error.
 */
int	engine_link_use(struct engine *e, const char *expires_at,
	    const char *nonce, char *err);

/* ====== API keys ====== */

/*
 * Service API keys of an app ("app-" and 24 random characters). Only a
 * key's SHA-256 is stored, so a key is shown once, when it is made.
 * *out = {id, type: "app", token, last_used_at, created_at}.
 */
int	engine_key_create(struct engine *e, const char *app_id, json_t **out);

/* {data: [{id, type, token (masked), last_used_at, created_at}]}. */
int	engine_key_list(struct engine *e, const char *app_id, json_t **out);

int	engine_key_delete(struct engine *e, const char *app_id,
	    const char *key_id);

/* The app a key belongs to, into app_id[37]. ENGINE_ENOTFOUND if none. */
int	engine_key_resolve(struct engine *e, const char *token,
	    char app_id[37]);

/* ====== Uploaded files ====== */

/*
 * Stores a file uploaded for app_id's runs (bytes as a blob). *out is
 * Dify's answer {id, name, size, extension, mime_type, created_by,
 * created_at, preview_url (null)}. ENGINE_ELIMIT past
 * uploads.max_file_size.
 */
int	engine_upload_put(struct engine *e, const char *app_id,
	    const char *user, const char *name, const char *mime,
	    const void *data, size_t len, char *err, json_t **out);

/*
 * Fetches the file at url (http or https, through the outbound guard,
 * redirects followed, at most uploads.max_file_size) and stores it as
 * engine_upload_put does, named after the URL's last path segment with
 * the type the server gave. ENGINE_EINVAL for a URL that is not http(s),
 * ENGINE_ELIMIT for too large a file, ENGINE_EFETCH (err says why) when it cannot be
 * fetched, a private address refused or a status other than 2xx.
 */
int	engine_upload_fetch(struct engine *e, const char *app_id,
	    const char *user, const char *url, char *err, json_t **out);

/*
 * What the file at url is, without fetching it (Dify's RemoteFileInfoApi):
 * a HEAD through the outbound guard (redirects followed), and when that
 * answers other than 200 a GET whose body is not read. *out (new
 * reference) is {file_type: the Content-Type or
 * "application/octet-stream", file_length: the Content-Length or -1}.
 * ENGINE_EINVAL for a URL that is not http(s), ENGINE_EFETCH (err says
 * why) when it cannot be reached, a private address is refused or the
 * status is not 2xx.
 */
int	engine_upload_probe(struct engine *e, const char *url, char *err,
	    json_t **out);

/*
 * The bytes of upload id of app_id: *data malloc'd and NUL-terminated
 * (caller frees; data NULL: only the record), *meta its record (new
 * reference; meta may be NULL).
 */
int	engine_upload_get(struct engine *e, const char *app_id, const char *id,
	    char **data, size_t *len, json_t **meta);

/*
 * What sending upload id of app_id needs without its bytes: *meta its
 * record (new reference), its checksum (sum) and its size, for
 * engine_blob_send. ENGINE_ENOTFOUND for another app's upload too.
 */
int	engine_upload_open(struct engine *e, const char *app_id,
	    const char *id, json_t **meta, char sum[65], uint64_t *size);

/* ====== Upgrade to the sandboxed runtime ====== */

/*
 * The skill references of the draft's llm nodes, as Dify's SkillService
 * answers: {"nodes": [{node_id, tool_dependencies: [{type, provider,
 * tool_name, enabled}]}]} for every llm node with a skill prompt, or with
 * node_id that node's {node_id, tool_dependencies} (empty when it has
 * none). Tools come from the skill prompts' tokens their metadata
 * describes and from the tokens of the .md assets they reference.
 * ENGINE_ENOTFOUND for an unknown app or one without a workflow draft.
 */
int	engine_app_skills(struct engine *e, const char *app_id,
	    const char *node_id, char *err, json_t **out);

/*
 * Dify's "Upgrade to sandboxed runtime": a copy of app_id named "<name>
 * (Sandboxed)" whose agent nodes become llm nodes (computer_use when they
 * had tools), whose references to LLM text become generation.content, and
 * whose features.sandbox.enabled is true; the original is untouched.
 * *out = {result: "success", new_app_id, converted_agents, skipped_agents}
 * or {result: "no_draft"} / {result: "already_sandboxed"}.
 */
int	engine_app_upgrade(struct engine *e, const char *app_id, char *err,
	    json_t **out);

/* ====== Knowledge bases (External Knowledge API) ====== */

/*
 * Sets dataset_id's external knowledge API: in = {endpoint, api_key,
 * knowledge_id (default: the dataset id)}; api_key is encrypted at rest,
 * ENGINE_SECRET_MASK keeps the stored one.
 */
int	engine_knowledge_set(struct engine *e, const char *dataset_id,
	    const json_t *in, char *err);
int	engine_knowledge_delete(struct engine *e, const char *dataset_id,
	    char *err);
/* {data: [{dataset_id, endpoint, knowledge_id, api_key (masked)}]}. */
int	engine_knowledge_list(struct engine *e, json_t **out);

/* ====== Knowledge bases (local datasets, engine/knowledge/) ====== */

/*
 * Dify's Knowledge API over datasets this server holds (docs/knowledge.md).
 * Records come back in Dify's shapes as new references the caller owns;
 * err (ENGINE_ERRMAX) says which field for ENGINE_EINVAL. ENGINE_ENOTFOUND:
 * no such dataset, document or segment (err names which).
 *
 * Dataset keys ("dataset-" and 24 characters) are stored as their SHA-256
 * only: key_create answers the token once; key_check is 0 for a key that
 * exists, ENGINE_ENOTFOUND for one that does not.
 */
int	engine_kb_key_create(struct engine *e, json_t **out);
int	engine_kb_key_list(struct engine *e, json_t **out);
int	engine_kb_key_delete(struct engine *e, const char *id);
int	engine_kb_key_check(struct engine *e, const char *token);

/* Datasets: in = the request body of POST/PATCH /v1/datasets. list:
 * {data, has_more, limit, total, page}. */
int	engine_kb_dataset_create(struct engine *e, const json_t *in,
	    char *err, json_t **out);
int	engine_kb_dataset_list(struct engine *e, int page, int limit,
	    const char *keyword, json_t **out);
int	engine_kb_dataset_get(struct engine *e, const char *id, char *err,
	    json_t **out);
int	engine_kb_dataset_update(struct engine *e, const char *id,
	    const json_t *in, char *err, json_t **out);
int	engine_kb_dataset_delete(struct engine *e, const char *id, char *err);

/*
 * create-by-text: in = {name, text, process_rule, indexing_technique,
 * doc_form}; the text is stored and the answer {document, batch} comes
 * before indexing, which a thread of this process does in the background
 * (indexing_status waiting -> indexing -> completed | error). A document
 * left half indexed by a process that died is indexed again by the next
 * one to use the datasets.
 */
int	engine_kb_document_create_text(struct engine *e, const char *ds_id,
	    const json_t *in, char *err, json_t **out);
/*
 * create-by-file: the text of the file's bytes (the document readers of
 * engine/documents/, limited by the documents.* settings) stored as
 * create-by-text stores text, named filename; data = the form's "data"
 * (process_rule, indexing_technique, ...; NULL: none).
 * engine_kb_file_type_ok: 1 when filename's extension has a reader.
 * ENGINE_EINVAL "File type not allowed.", or the reader's error in err.
 */
int	engine_kb_document_create_file(struct engine *e, const char *ds_id,
	    const json_t *data, const char *filename, const char *bytes,
	    size_t len, char *err, json_t **out);
int	engine_kb_file_type_ok(const char *filename);
/*
 * Dify's update-by-text and update-by-file: in = {name, text,
 * process_rule} (each optional; text needs name: "Both text and name
 * must be strings."), a file (NULL: none) giving name and text as
 * create-by-file; the document, which must be available (else
 * ENGINE_EINVAL "Document is not available"), is indexed again ->
 * {document, batch}.
 */
int	engine_kb_document_update_text(struct engine *e, const char *ds_id,
	    const char *doc_id, const json_t *in, char *err, json_t **out);
int	engine_kb_document_update_file(struct engine *e, const char *ds_id,
	    const char *doc_id, const json_t *data, const char *filename,
	    const char *bytes, size_t len, char *err, json_t **out);
int	engine_kb_document_list(struct engine *e, const char *ds_id,
	    int page, int limit, const char *keyword, char *err,
	    json_t **out);
int	engine_kb_document_get(struct engine *e, const char *ds_id,
	    const char *doc_id, char *err, json_t **out);
int	engine_kb_document_delete(struct engine *e, const char *ds_id,
	    const char *doc_id, char *err);
/* {data: [{id, indexing_status, ..., completed_segments,
 * total_segments}]} of the documents of batch. */
int	engine_kb_indexing_status(struct engine *e, const char *ds_id,
	    const char *batch, char *err, json_t **out);

/* Segments: list {data, doc_form, total, has_more, limit, page}; add in =
 * {segments: [{content, answer, keywords}]} -> {data, doc_form}; update
 * in = {segment: {content, answer, keywords, enabled,
 * regenerate_child_chunks}} -> {data, doc_form}. A parent-child
 * document's segments are its parents, each with child_chunks. */
int	engine_kb_segment_list(struct engine *e, const char *ds_id,
	    const char *doc_id, int page, int limit, const char *keyword,
	    char *err, json_t **out);
int	engine_kb_segment_add(struct engine *e, const char *ds_id,
	    const char *doc_id, const json_t *in, char *err, json_t **out);
int	engine_kb_segment_update(struct engine *e, const char *ds_id,
	    const char *doc_id, const char *seg_id, const json_t *in,
	    char *err, json_t **out);
int	engine_kb_segment_delete(struct engine *e, const char *ds_id,
	    const char *doc_id, const char *seg_id, char *err);

/*
 * Child chunks of a parent segment of a parent-child document (Dify's
 * .../segments/{id}/child_chunks): list {data, total, total_pages, page,
 * limit} (keyword: a part of the content); create in = {content} ->
 * {data: child} after the last; update in = {content} -> {data: child};
 * delete. A segment of a document of another form: ENGINE_EINVAL; no
 * such child: ENGINE_ENOTFOUND ("Child chunk not found.").
 */
int	engine_kb_child_list(struct engine *e, const char *ds_id,
	    const char *doc_id, const char *seg_id, int page, int limit,
	    const char *keyword, char *err, json_t **out);
int	engine_kb_child_create(struct engine *e, const char *ds_id,
	    const char *doc_id, const char *seg_id, const json_t *in,
	    char *err, json_t **out);
int	engine_kb_child_update(struct engine *e, const char *ds_id,
	    const char *doc_id, const char *seg_id, const char *child_id,
	    const json_t *in, char *err, json_t **out);
int	engine_kb_child_delete(struct engine *e, const char *ds_id,
	    const char *doc_id, const char *seg_id, const char *child_id,
	    char *err);

/*
 * Dify's knowledge tags (engine/knowledge/tags.c): create in = {name} (1
 * to 50 characters, unique: else ENGINE_EINVAL) -> {id, name, type,
 * binding_count}; list -> [that]; update in = {tag_id, name}; delete in
 * = {tag_id} (its bindings too); bind (unbind 0) or unbind in =
 * {tag_ids, target_id} (unbind also {tag_id, target_id}); a dataset's
 * tags -> {data: [{id, name}], total}. No such tag: ENGINE_ENOTFOUND
 * "Tag not found"; no such dataset: "Dataset not found".
 */
int	engine_kb_tag_create(struct engine *e, const json_t *in, char *err,
	    json_t **out);
int	engine_kb_tag_list(struct engine *e, json_t **out);
int	engine_kb_tag_update(struct engine *e, const json_t *in, char *err,
	    json_t **out);
int	engine_kb_tag_delete(struct engine *e, const json_t *in, char *err);
int	engine_kb_tag_bind(struct engine *e, const json_t *in, int unbind,
	    char *err);
int	engine_kb_dataset_tags(struct engine *e, const char *ds_id,
	    char *err, json_t **out);

/*
 * A local dataset as an agent's tool (Dify's DatasetRetrieverTool), cfg
 * an agent tool entry of type dataset-retrieval {dataset_id, top_k,
 * score_threshold}: kb_tool_describe gives the name the model sees
 * ("dataset_<id, _ for ->"), *description (malloc'd) and the parameters'
 * *schema ({query}, new); ENGINE_ENOTFOUND when the dataset is not here.
 * kb_tool_run searches it for the query of args (JSON text), cfg's top_k
 * and threshold or the dataset's: *out (malloc'd) the segments' contents
 * one a line, or "tool error: ..." the model reads. 0 or ENGINE_ENOMEM.
 */
int	kb_tool_describe(struct engine *e, const json_t *cfg, char name[65],
	    char **description, json_t **schema);
int	kb_tool_run(struct engine *e, const json_t *cfg, const char *args,
	    char **out);

/* POST /v1/datasets/{id}/retrieve: in = {query, retrieval_model} ->
 * {query: {content}, records: [{segment, child_chunks, score, ...}]}. */
int	engine_kb_retrieve(struct engine *e, const char *ds_id,
	    const json_t *in, char *err, json_t **out);

/*
 * Dify's metadata routes of a dataset: create {type: string|number|time,
 * name} -> {id, type, name} (ENGINE_EEXIST: the name is taken; ELIMIT:
 * knowledge.max_metadata_fields); list -> {doc_metadata: [{id, name,
 * type, count}], built_in_field_enabled}; update {name} (the documents'
 * values renamed too); delete (their values go); builtin with action NULL
 * -> {fields: [{name, type}]}, "enable"/"disable" -> {result: success};
 * documents_metadata {operation_data: [{document_id, metadata_list: [{id,
 * value}]}]} replaces each document's values (doc_metadata: [{id, name,
 * type, value}]), a value checked against its field's type.
 */
int	engine_kb_metadata_create(struct engine *e, const char *ds_id,
	    const json_t *in, char *err, json_t **out);
int	engine_kb_metadata_list(struct engine *e, const char *ds_id,
	    char *err, json_t **out);
int	engine_kb_metadata_update(struct engine *e, const char *ds_id,
	    const char *mid, const json_t *in, char *err, json_t **out);
int	engine_kb_metadata_delete(struct engine *e, const char *ds_id,
	    const char *mid, char *err);
int	engine_kb_metadata_builtin(struct engine *e, const char *ds_id,
	    const char *action, char *err, json_t **out);
int	engine_kb_documents_metadata(struct engine *e, const char *ds_id,
	    const json_t *in, char *err, json_t **out);

/* ====== Runs ====== */

/* What one run of an app gets. */
struct run_opts {
	const char	*app_id;
	const json_t	*inputs;	/* object of start inputs */
	const char	*user;		/* sys.user_id */
	const char	*query;		/* chatflow: sys.query */
	const json_t	*files;		/* sys.files (array) or NULL */
	const char	*conversation_id; /* chatflow: continue this one */
	const char	*invoke_from;	/* "service-api", "console", "cli" */
	const char	*request_id;	/* the HTTP request's, or NULL: kept
					 * in the run's record and trace */
	const char	*workflow_id;	/* a published version to run, or
					 * NULL: the latest (ENGINE_ENOTFOUND:
					 * the app has no such version) */
	/*
	 * Optional, chat, agent-chat and completion apps: keys set over
	 * the model's completion_params for this run only (Dify's more
	 * like this runs at {"temperature": 0.9}); borrowed.
	 */
	const json_t	*model_params;
	/*
	 * Chat apps: the message this one follows (Dify's parent_message_id;
	 * a regenerated answer names the parent of the one it stands
	 * beside). NULL: not given, the conversation's newest (stored as
	 * UUID_NIL); "": none, the first of a thread (stored as null); else
	 * a message of the conversation (ENGINE_ENOTFOUND otherwise). The
	 * model's memory is the thread it ends.
	 */
	const char	*parent_message_id;
	int		 no_auto_name;	/* Dify's auto_generate_name: false:
					 * a new conversation is not named
					 * by the model ("New conversation") */
	/*
	 * Called for every event, in order, one call at a time, from the
	 * run's threads: ev is {event, task_id, workflow_run_id, data, ...}
	 * shaped as Dify's SSE events (borrowed: copy to keep).
	 */
	void		(*on_event)(void *arg, const json_t *ev);
	void		*arg;
	/* Called once the run has its ids, before anything runs. */
	void		(*on_start)(void *arg, const char *task_id,
			    const char *run_id);
	/*
	 * Optional: polled where a stop is checked (between nodes, agent
	 * iterations, model tokens, commands); a non-zero answer stops the
	 * run as a stop request does (status "stopped"). From any of the
	 * run's threads, so it must be thread-safe.
	 */
	int		(*cancelled)(void *cancel_arg);
	void		*cancel_arg;
	/*
	 * Optional: the run that started this one as a workflow tool
	 * (engine/tools/workflow_tool.c): its id goes into this run's
	 * record as parent_run_id. Borrowed; it outlives this run.
	 */
	const struct run *parent;
	/*
	 * Optional: how the run ended, filled before engine_run returns 0:
	 * status ("succeeded", "partial-succeeded", "failed", "stopped";
	 * 32 bytes) and error ("" when it succeeded; ENGINE_ERRMAX bytes).
	 * A chat's answer does not say (Dify's blocking chat answer has
	 * neither); a workflow's data does too.
	 */
	char		*status;
	char		*error;
};

/*
 * Runs app o->app_id to its end in the calling thread (parallel branches
 * use more threads). *out is Dify's blocking answer: for workflow apps
 * {task_id, workflow_run_id, data: {id, workflow_id, status, outputs,
 * error, elapsed_time, total_tokens, total_steps, created_at,
 * finished_at}}. A run that fails still returns 0 with status failed;
 * errors are for runs that cannot start (ENGINE_EINVAL with err: bad
 * inputs, unsupported nodes; ENGINE_ENOTFOUND).
 */
int	engine_run(struct engine *e, const struct run_opts *o, char *err,
	    json_t **out);

/*
 * Asks running task task_id to stop (from any process). A task of another
 * app than app_id, or started by another end user than user, is
 * ENGINE_ENOTFOUND exactly as an unknown one (NULL: any app, any user).
 * Stopping a finished task of theirs succeeds and changes nothing.
 */
int	engine_run_stop(struct engine *e, const char *app_id, const char *user,
	    const char *task_id);

/* How engine_run_events hands out a run's events. */
struct run_follow {
	void	(*on_start)(void *arg);	/* the run is found: the stream
					 * may begin (before any event) */
	/* one event as JSON text (borrowed); non-zero: stop following */
	int	(*on_event)(void *arg, const char *json, size_t len);
	/* polled while no event comes; non-zero: stop following */
	int	(*gone)(void *arg);
	void	*arg;
};

/*
 * Dify's GET /api/workflow/{task_id}/events: the events of workflow or
 * chatflow run task_id of app_id, started by end user user, for a page
 * that comes back to it. A run in progress in this process: every event
 * its stream sent so far that its event log (run.event_log) still holds,
 * in order, then each new one, until the run is over. A run in progress
 * in another process or host: its workflow_started, then, once its record
 * says it ended (read every run.stop_check_ms), its workflow_finished. A
 * run that is over: its workflow_finished, from its record, as Dify.
 * Calls f->on_start first and returns when the run is over or f says to
 * stop. Another app's or end user's run, or none, is ENGINE_ENOTFOUND; a
 * run of another kind of app ENGINE_EINVAL; both before on_start, with
 * err.
 */
int	engine_run_events(struct engine *e, const char *app_id,
	    const char *user, const char *task_id, const struct run_follow *f,
	    char *err);

/* The record of run id (Dify's workflow run detail). */
int	engine_run_get(struct engine *e, const char *run_id, json_t **out);

/* Runs of app id, newest first: {page, limit, total, has_more, data}. */
int	engine_run_list(struct engine *e, const char *app_id, int page,
	    int limit, json_t **out);

/* Which runs engine_run_logs lists. */
struct run_log_query {
	int		 page;		/* 1-based */
	int		 limit;		/* 1..100 */
	const char	*status;	/* NULL: any; succeeded, failed,
					 * stopped */
	const char	*keyword;	/* NULL: any; in the inputs, outputs
					 * or end user */
	int64_t		 after;		/* created at or after (s); 0: any */
	int64_t		 before;	/* created at or before (s); 0: any */
	const char	*user;		/* NULL: any end user */
};

/*
 * Dify's workflow app logs: the runs of app id started through the
 * service API, newest first: {page, limit, total, has_more, data: [{id,
 * workflow_run: {id, version, status, error, elapsed_time, total_tokens,
 * total_steps, created_at, finished_at, exceptions_count}, created_from,
 * created_by_role, created_by_account, created_by_end_user: {id, type,
 * is_anonymous, session_id}, created_at}]}.
 */
int	engine_run_logs(struct engine *e, const char *app_id,
	    const struct run_log_query *q, json_t **out);

/* The node executions of run id, in order: {data: [...]}. */
int	engine_run_nodes(struct engine *e, const char *run_id, json_t **out);

/*
 * Dify's single-step run (engine/run/single.c): node node_id of the draft
 * of o->app_id alone, o->inputs keyed as Dify's variable mapping keys them
 * ("arg1", "#node.var#", "#context#", "query", each also as
 * "<node_id>.<key>"), as console user o->user, stopped as o->cancelled
 * says (events are not sent). Stored as a run of the app. *out (new reference)
 * is the execution in Dify's workflow_run_node_execution_fields shape; a
 * node that fails is status "failed" with its error, rc 0. ENGINE_EINVAL
 * with err: an input missing, a node type Dify runs no single step of;
 * ENGINE_ENOTFOUND: no such app or node.
 */
int	engine_node_run(struct engine *e, const struct run_opts *o,
	    const char *node_id, char *err, json_t **out);

/*
 * The last execution of node node_id in app_id's draft runs and single
 * steps (workflow.last_run_scan of them, newest first), in the shape
 * engine_node_run answers: new reference, or ENGINE_ENOTFOUND.
 */
int	engine_node_last_run(struct engine *e, const char *app_id,
	    const char *node_id, json_t **out);

/* ====== Run history ====== */

/*
 * Run history does not grow forever (engine/records/prune.c). A pass removes
 * runs older than run.history_max_age and, per app, those past its newest
 * run.history_max_count, each with its node executions; a run whose status
 * is still "running" stays until it ends. It also removes the messages of
 * conversations that no longer exist, pending imports past their ten
 * minutes, prepared bundle imports past bundle.import_ttl (with their
 * uploads) and blobs that nothing references (no reference count). It
 * deletes run.prune_batch records per write transaction and pauses between
 * them, so runs that write are never held up for long. One process of those
 * sharing the data directory prunes at a time (a lock file there).
 */

/* What a pass removed. */
struct prune_stats {
	int64_t	runs;		/* run records */
	int64_t	node_runs;	/* their node traces: one record per run
				 * (one per execution before schema 3) */
	int64_t	messages;	/* messages of conversations that are gone */
	int64_t	imports;	/* expired pending and prepared imports */
	int64_t	blobs;		/* unreferenced blobs */
	int64_t	running;	/* runs past a limit kept because running */
	int	busy;		/* another process was pruning: nothing done */
};

/* engine_prune flag: wait for another process's pass, then prune. */
#define PRUNE_WAIT	0x1

/*
 * One pass with the limits of the engine's configuration. *st (zeroed
 * first) says what was removed, even when an error stopped the pass early;
 * without PRUNE_WAIT a pass already under way elsewhere makes this one
 * return 0 at once with st->busy set. Returns 0 or an ENGINE_E* code.
 */
int	engine_prune(struct engine *e, unsigned flags, struct prune_stats *st);

/*
 * The background pruner of `flowcgi serve`: a thread that runs a pass
 * every run.prune_interval seconds. *out is NULL when the interval is 0
 * (nothing started). engine_pruner_stop ends a pass under way after its
 * current transaction, joins the thread and frees p (NULL: nothing).
 */
struct pruner;
int	engine_pruner_start(struct engine *e, struct pruner **out);
void	engine_pruner_stop(struct pruner *p);

/*
 * This process serves (flowcgi serve): from now on it also looks, every
 * half run.host_lease, for the processes sharing its data whose lease ran
 * out (killed, their host lost) and fails their runs still "running"
 * with the error "host lost: ...". engine_close ends it.
 */
void	engine_serve(struct engine *e);

/* One such look now; *failed (may be NULL) counts the runs it failed. */
int	engine_sweep_lost(struct engine *e, int *failed);

/* ====== Conversations (chatflow apps) ====== */

/*
 * Conversations and messages as Dify's service API shows them; each
 * belongs to an app and the end user ("user") who started it. One of
 * another app, or of another end user than user (NULL: any), is
 * ENGINE_ENOTFOUND exactly as one that does not exist. Where err is taken
 * it holds Dify's message for ENGINE_ENOTFOUND and ENGINE_EINVAL.
 */

/* Which page of conversations engine_conversation_list gives. */
struct conv_page {
	const char	*last_id;	/* NULL or "": the first page; else
					 * those after this one */
	int		 limit;		/* 1..100 */
	const char	*sort_by;	/* [-]created_at, [-]updated_at;
					 * NULL: -updated_at */
};

/*
 * A page of the conversations of app_id started by user: {limit,
 * has_more, data: [{id, name, inputs, status, introduction, created_at,
 * updated_at}]}. ENGINE_EINVAL for another sort_by, ENGINE_ENOTFOUND
 * ("Last Conversation Not Exists.") for an unknown last_id.
 */
int	engine_conversation_list(struct engine *e, const char *app_id,
	    const char *user, const struct conv_page *pg, char *err,
	    json_t **out);

/* The stored record of a conversation (new reference). */
int	engine_conversation_get(struct engine *e, const char *app_id,
	    const char *user, const char *conv_id, json_t **out);

/*
 * A page of the messages of conversation conv_id, as Dify pages them: the
 * newest limit first, then (first_id set) the limit before first_id; the
 * page itself oldest first. {limit, has_more (older ones remain), data:
 * [{id, conversation_id, inputs, query, answer, feedback, created_at,
 * status, error, ...}]}. ENGINE_ENOTFOUND with "Conversation Not
 * Exists." or "First Message Not Exists.".
 */
int	engine_message_list(struct engine *e, const char *app_id,
	    const char *user, const char *conv_id, const char *first_id,
	    int limit, char *err, json_t **out);

/*
 * The messages a new message of conversation conv_id (app_id's and
 * user's: NULL, anyone's) follows, for the model's memory: *out is
 * [{query, answer}] oldest first, the newest max of them (new reference).
 * parent is as run_opts.parent_message_id says: NULL the conversation's
 * newest and its thread, "" none, else that message and its thread.
 * A parent that is no message of the conversation (or a conversation
 * that is none of theirs) is ENGINE_ENOTFOUND with "Message Not
 * Exists."; without parent it is no error, only no messages.
 */
int	engine_message_thread(struct engine *e, const char *app_id,
	    const char *user, const char *conv_id, const char *parent,
	    size_t max, char *err, json_t **out);

/* The stored record of message msg_id (new reference). */
int	engine_message_get(struct engine *e, const char *app_id,
	    const char *user, const char *msg_id, json_t **out);

/*
 * Deletes a conversation and its messages; ENGINE_ENOTFOUND for one of
 * another app or end user, as engine_message_list.
 */
int	engine_conversation_delete(struct engine *e, const char *app_id,
	    const char *user, const char *conv_id);

/*
 * Names a conversation (name NULL: leaves it as it is). *out is its view
 * as engine_conversation_list lists it.
 */
int	engine_conversation_rename(struct engine *e, const char *app_id,
	    const char *user, const char *conv_id, const char *name,
	    json_t **out);

/*
 * The conversation variables of a chatflow's conversation, in the order
 * the app declares them, with the values its last message left: {limit,
 * has_more, data: [{id, name, value_type, value (text: JSON for what is
 * not a string), description, created_at, updated_at}]}; after variable
 * id last_id, only names holding name (ASCII case folded; NULL: all).
 * ENGINE_EINVAL for a name with other characters than letters, digits,
 * "-", "_", "."; ENGINE_ENOTFOUND for an unknown last_id.
 */
int	engine_conversation_variables(struct engine *e, const char *app_id,
	    const char *user, const char *conv_id, const char *last_id,
	    int limit, const char *name, char *err, json_t **out);

/*
 * Sets conversation variable var_id (an id the app declares) of
 * conversation conv_id to value, which must be of the variable's
 * value_type as Dify's SegmentType checks it. *out (new reference) is the
 * variable as engine_conversation_variables lists it. ENGINE_ENOTFOUND
 * ("Conversation Not Exists." / "Conversation Variable Not Exists." in
 * err), ENGINE_EINVAL for a value of another type (err: Dify's "Type
 * mismatch: ..." message).
 */
int	engine_conversation_variable_set(struct engine *e, const char *app_id,
	    const char *user, const char *conv_id, const char *var_id,
	    const json_t *value, char *err, json_t **out);

/*
 * The end user's rating of message msg_id: "like" or "dislike" (content:
 * an optional text), NULL to take an earlier one back (ENGINE_EINVAL when
 * there is none). ENGINE_ENOTFOUND ("Message Not Exists.").
 */
int	engine_message_feedback(struct engine *e, const char *app_id,
	    const char *user, const char *msg_id, const char *rating,
	    const char *content, char *err);

/*
 * Every rating given to messages of app_id, newest first, page (1-based)
 * of limit: {data: [{id, app_id, conversation_id, message_id, rating,
 * content, from_source, from_end_user_id, from_account_id, created_at,
 * updated_at (ISO 8601, UTC)}]}.
 */
int	engine_app_feedbacks(struct engine *e, const char *app_id, int page,
	    int limit, json_t **out);

/*
 * Names conversation conv_id after its first message through the app's
 * model (the chat app's model_config.model, else the first model a node
 * of the graph names). An app without a model, or a model that fails,
 * leaves the name as it is, as in Dify. *out as engine_conversation_rename.
 */
int	engine_conversation_autoname(struct engine *e, const char *app_id,
	    const char *user, const char *conv_id, json_t **out);

/*
 * Dify's suggested questions after message msg_id: *out = {result:
 * "success", data: [questions]} made by the app's model (as above) from
 * the conversation's last messages; [] when the app has no model or the
 * model fails. ENGINE_EINVAL when the app's
 * suggested_questions_after_answer feature is off (err says so),
 * ENGINE_ENOTFOUND ("Message Not Exists.").
 */
int	engine_message_suggested(struct engine *e, const char *app_id,
	    const char *user, const char *msg_id, char *err, json_t **out);

/* ====== Annotations (engine/knowledge/annotations.c) ====== */

/*
 * Dify's annotation list of app_id, newest first: *out = {data: [{id,
 * question, answer, hit_count, created_at}], has_more, limit, total,
 * page}; keyword (may be NULL) keeps the pairs whose question or answer
 * holds it, in any case. ENGINE_ENOTFOUND: no such app.
 */
int	engine_annotation_list(struct engine *e, const char *app_id,
	    int page, int limit, const char *keyword, json_t **out);

/*
 * Creates (id NULL) or rewrites annotation id of app_id: *out is it, as
 * listed. ENGINE_EINVAL (no question), ENGINE_ELIMIT (annotations.max_text,
 * annotations.max_per_app), ENGINE_ENOTFOUND ("Annotation not found"), or
 * the embedding model's error when the reply is on. err says which.
 */
int	engine_annotation_put(struct engine *e, const char *app_id,
	    const char *id, const char *question, const char *answer,
	    char *err, json_t **out);

/* Deletes annotation id of app_id; ENGINE_ENOTFOUND as above. */
int	engine_annotation_delete(struct engine *e, const char *app_id,
	    const char *id, char *err);

/*
 * Annotates message msg_id of app_id (Dify's console POST annotations with
 * message_id): its annotation rewritten if it has one, else a new one
 * holding message_id and conversation_id; question NULL or "" is the
 * message's query. *out as engine_annotation_put. ENGINE_ENOTFOUND
 * ("Message Not Exists.", also for another app's message), ENGINE_EINVAL
 * (answer NULL), and engine_annotation_put's errors.
 */
int	engine_annotation_from_message(struct engine *e, const char *app_id,
	    const char *msg_id, const char *question, const char *answer,
	    char *err, json_t **out);

/*
 * Dify's hit histories of annotation id of app_id, newest first: *out =
 * {data: [{id, source, score, question, created_at, match, response}],
 * has_more, limit, total, page}. ENGINE_ENOTFOUND ("Annotation not
 * found"). An app keeps annotations.max_hit_histories of them.
 */
int	engine_annotation_hits(struct engine *e, const char *app_id,
	    const char *id, int page, int limit, char *err, json_t **out);

/* Dify's export: *out = {data: [annotations as listed]}, newest first,
 * each question and answer CSV-sanitized (a leading =, +, -, @ quoted). */
int	engine_annotation_export(struct engine *e, const char *app_id,
	    json_t **out);

/*
 * Imports Dify's annotation CSV data[0..len) (a header row, then question
 * and answer in the first two columns; rows missing either skipped): *out
 * = {job_id, job_status: "completed" | "error", record_count}. With the
 * reply on the questions are embedded first; a model that fails is the
 * job's error and nothing is imported. ENGINE_EINVAL (not such a CSV),
 * ENGINE_ELIMIT (annotations.max_text, annotations.max_per_app); err says
 * which. The job's status: engine_annotation_job with "batch-import".
 */
int	engine_annotation_import(struct engine *e, const char *app_id,
	    const char *data, size_t len, char *err, json_t **out);

/*
 * Turns app_id's annotation reply on ("enable": every question embedded
 * by model of provider, matched at threshold) or off ("disable"): *out =
 * {job_id, job_status: "completed" | "error"}; an embedding that fails is
 * the job's error_msg (engine_annotation_job). ENGINE_EINVAL: another
 * action.
 */
int	engine_annotation_reply(struct engine *e, const char *app_id,
	    const char *action, double threshold, const char *provider,
	    const char *model, char *err, json_t **out);

/* {job_id, job_status, error_msg} of job_id of action; ENGINE_ENOTFOUND
 * ("The job does not exist."). */
int	engine_annotation_job(struct engine *e, const char *app_id,
	    const char *action, const char *job_id, char *err, json_t **out);

/*
 * Dify's annotation setting of app_id ({enabled: false}, or {id, enabled,
 * score_threshold, embedding_model: {embedding_provider_name,
 * embedding_model_name}}); with setting_id, its threshold set first
 * (ENGINE_ENOTFOUND "App annotation not found" for another id).
 */
int	engine_annotation_setting(struct engine *e, const char *app_id,
	    const char *setting_id, double threshold, char *err, json_t **out);

/* ====== Audio (engine/llm/audio.c) ====== */

/*
 * The transcript of audio[0..len) (of type mime) by model spec
 * "provider#model" on its provider's OpenAI-compatible
 * /audio/transcriptions: *out malloc'd. ENGINE_EINVAL (a spec that is no
 * "provider#model", a provider not configured or without that API),
 * ENGINE_EFETCH (the provider refused: err has its message), ENGINE_ENOMEM.
 */
int	llm_audio_transcribe(struct engine *e, const char *spec,
	    const char *audio, size_t len, const char *mime, char *err,
	    char **out);

/*
 * text spoken by model spec in voice (NULL or "": "alloy") through
 * /audio/speech: *out (malloc'd) *outlen bytes of type mime (the
 * provider's audio type, else audio/mpeg). Codes as llm_audio_transcribe.
 */
int	llm_audio_speech(struct engine *e, const char *spec, const char *text,
	    const char *voice, char *err, char **out, size_t *outlen,
	    char mime[64]);

/* ====== Saved sandbox workspaces (workspace.c) ====== */

/*
 * Which saved workspace: a conversation's (conversation_id set; with
 * user, only when that end user started it), else the draft workspace
 * console user user keeps for the app (draft test runs share it until it
 * is reset). Another app's or user's is ENGINE_ENOTFOUND.
 */
struct workspace_ref {
	const char	*app_id;
	const char	*user;
	const char	*conversation_id;
};

/*
 * Lists the saved workspace under path (relative; "" or NULL: its root;
 * no "..", not absolute: ENGINE_EINVAL), one level or recursive, as
 * Dify's SandboxFileNode list sorted by path: [{path, is_dir, size,
 * mtime, extension}]. A file path lists itself. ENGINE_ENOTFOUND (err
 * says what) when the workspace or path is missing; ENGINE_ELIMIT past
 * sandbox.workspace_list_max entries. *out is a new reference.
 */
int	engine_workspace_list(struct engine *e, const struct workspace_ref *w,
	    const char *path, int recursive, char *err, json_t **out);

/*
 * The bytes of file path of the saved workspace: *data (malloc'd, caller
 * frees), *len. ENGINE_EINVAL for a bad path or a folder,
 * ENGINE_ENOTFOUND (err says what) when missing.
 */
int	engine_workspace_read(struct engine *e, const struct workspace_ref *w,
	    const char *path, char *err, char **data, size_t *len);

/*
 * Path in (workspace-relative) cleaned into out as the functions below
 * read it: "" for the root. Returns 0, or -1 when it is absolute, holds
 * "..", or does not fit.
 */
int	engine_workspace_path(const char *in, char *out, size_t outsz);

/*
 * What Dify's download gives for path: a file's bytes (*archive 0), or a
 * folder (the root: "" or ".") as a .tar.gz of its entries named as in
 * the workspace (*archive 1). *data is malloc'd (caller frees).
 * ENGINE_EINVAL for a bad path, ENGINE_ENOTFOUND (err says what) when
 * missing.
 */
int	engine_workspace_download(struct engine *e,
	    const struct workspace_ref *w, const char *path, char *err,
	    char **data, size_t *len, int *archive);

/*
 * Forgets user's draft workspace of app_id (the next draft run starts
 * empty). *had (may be NULL) says whether there was one. Returns 0, or
 * ENGINE_ENOTFOUND for an unknown app.
 */
int	engine_workspace_reset(struct engine *e, const char *app_id,
	    const char *user, int *had);

/* ====== DSL ====== */

/*
 * Dify app DSL: YAML <-> jansson (engine/dsl/dsl.c) and the import checks and
 * export transform (engine/dsl/dsl_check.c). Scalars are typed as PyYAML's
 * yaml.safe_load types them (YAML 1.1), because Dify loads DSL with it.
 */

/* The DSL version exports carry and imports are compared with. */
#define DSL_VERSION_CURRENT	"0.6.0"

/* Room for an imported version string, NUL included. */
#define DSL_VERSION_MAX		64

/*
 * Limits on one YAML document. When one trips, dsl_parse fails with
 * ENGINE_EINVAL and err names the limit and the line.
 */
struct dsl_limits {
	size_t	max_bytes;	/* document size, and scalar text after alias
				   expansion; 10 MB */
	size_t	max_depth;	/* nested mappings and sequences; 64 */
	size_t	max_nodes;	/* nodes after alias expansion; 1,000,000 */
	size_t	max_aliases;	/* alias uses; 10,000 */
};

/* Fills lim with the defaults above. */
void	dsl_limits_default(struct dsl_limits *lim);

/*
 * Parses one YAML document of len bytes (no NUL needed) into *out, a new
 * reference the caller must json_decref. lim NULL means the defaults.
 * Mapping keys are always strings (the scalar's text), in file order; a
 * repeated key keeps its first position and its last value; merge keys
 * (<<) are applied. An alias shares the anchored json_t (as PyYAML shares
 * the object): copy before changing one place only. Integers beyond 64
 * bits and .inf/.nan, which JSON cannot hold, stay strings holding their
 * text, as do timestamps and !!binary. An empty stream gives json null.
 * Returns 0, ENGINE_EINVAL (err says what and at which line) or
 * ENGINE_ENOMEM. err holds ENGINE_ERRMAX bytes.
 */
int	dsl_parse(const char *buf, size_t len, const struct dsl_limits *lim,
	    char *err, json_t **out);

/*
 * Writes doc as YAML in the style of Dify's export (PyYAML yaml.dump with
 * allow_unicode): block style, keys sorted at every level, multi-line
 * strings as literal blocks where YAML allows it, strings quoted when
 * plain text would read back as another type, UTF-8 as is.
 * dsl_parse(dsl_emit(doc)) equals doc. On success *out is a NUL-terminated
 * buffer of *outlen bytes that the caller frees with free(). Returns 0,
 * ENGINE_EINVAL (err says why: too deep, too large) or ENGINE_ENOMEM.
 */
int	dsl_emit(const json_t *doc, char *err, char **out, size_t *outlen);

/* Import status, as Dify names it (dsl_status_name). */
enum dsl_status {
	DSL_COMPLETED,
	DSL_COMPLETED_WITH_WARNINGS,	/* older minor version */
	DSL_PENDING,		/* newer version or older major: confirm */
	DSL_FAILED,
};

/* "completed", "completed-with-warnings", "pending" or "failed". */
const char *dsl_status_name(enum dsl_status st);

/*
 * What dsl_check found. problems is a JSON array of
 * {node_id, field, message} objects, plus edge_id for an edge; node_id is
 * "" for a problem outside the graph. Problems do not fail the import (a
 * draft may be unfinished); the executor refuses what it cannot run.
 * Release with dsl_report_release.
 */
struct dsl_report {
	enum dsl_status	 status;
	char		 imported_version[DSL_VERSION_MAX];
	const char	*current_version;	/* DSL_VERSION_CURRENT */
	json_t		*problems;
};

/* dsl_check flag: the user confirmed a pending import; check it fully. */
#define DSL_CHECK_CONFIRM	0x1

/*
 * Checks a parsed DSL document as Dify's import does and normalises it:
 * missing or empty version becomes "0.1.0", kind becomes "app", ids
 * written as numbers become strings, and the legacy forms of
 * reference/dify-dsl.md §7 are rewritten to the current ones (listed in
 * engine/dsl/dsl_check.c). Fields it does not interpret are kept unchanged.
 * A pending document (newer version) is only checked for its envelope
 * unless flags has DSL_CHECK_CONFIRM; confirmed, its status becomes
 * completed. On 0, *out is a new normalised copy (json_decref) and rep
 * says the status, the versions and the graph problems. On ENGINE_EINVAL
 * rep->status is DSL_FAILED, err says why and *out is NULL. doc is not
 * changed. rep must be released even on failure.
 */
int	dsl_check(const json_t *doc, unsigned flags, char *err,
	    struct dsl_report *rep, json_t **out);

/* Frees what rep holds; rep itself belongs to the caller. */
void	dsl_report_release(struct dsl_report *rep);

/*
 * dsl_check flag: also list as problems what keeps the executor from
 * running the workflow: node types flowcgi does not run and nodes
 * without a field their type requires. Draft saves, publishing and
 * imports set it; the problems still do not fail the check.
 */
#define DSL_CHECK_RUNNABLE	0x2

/* Limits dsl_check_limits applies (conf: workflow.max_variable_size). */
struct dsl_check_limits {
	size_t	max_variable_size;	/* bytes of one variable's value as
					   JSON; DSL_VARIABLE_SIZE_MAX */
};

/* Dify's MAX_VARIABLE_SIZE, what dsl_check applies. */
#define DSL_VARIABLE_SIZE_MAX	(200 * 1024)

/*
 * dsl_check with limits (NULL: the defaults). Environment and
 * conversation variables that can never be valid (a name that is not an
 * identifier, a value type outside Dify's list, a value of another type
 * or too large) fail the check with ENGINE_EINVAL, as they fail Dify's
 * import and draft sync; err names the variable and rep->problems holds
 * that one problem too, its field the variable's place
 * ("environment_variables[2].name").
 */
int	dsl_check_limits(const json_t *doc, unsigned flags,
	    const struct dsl_check_limits *lim, char *err,
	    struct dsl_report *rep, json_t **out);

/*
 * The export form of a stored (checked) document, as Dify's export_dsl
 * makes it: version DSL_VERSION_CURRENT, kind app, the app header fields
 * with their defaults, dependencies; without include_secret, secret
 * environment variables get value "" and credential_id is removed from
 * tool nodes and agent tools; credential_id is always removed from
 * model_config.agent_mode.tools; trigger webhook URLs and plugin
 * subscriptions are blanked. *out is a new document (json_decref); doc is
 * not changed. Returns 0, ENGINE_EINVAL (doc is not a mapping) or
 * ENGINE_ENOMEM.
 */
int	dsl_export(const json_t *doc, int include_secret, char *err,
	    json_t **out);

/* ====== Custom tool providers ====== */

/*
 * Tool providers the admin adds, for tool nodes and agents: Dify's custom
 * tools (provider type "api", an OpenAPI 3 schema) and MCP servers
 * (provider type "mcp", Streamable HTTP or HTTP+SSE). Each is kept in the
 * settings database under "tool_provider/<name>". A tool node finds one
 * by its provider_name, then by its provider_id as a name, then by id or
 * (mcp) server_identifier.
 *
 * in for engine_tool_provider_put:
 *   {name (1-128 bytes, no control characters), type: "api" | "mcp",
 *    id (optional: Dify's provider id, so that exported DSL that names it
 *    finds it; a new UUID when absent), description,
 *    api: schema (OpenAPI 3.x as JSON or YAML text, at most 1 MiB),
 *         credentials {auth_type: none | api_key_header | api_key_query,
 *         api_key_header (default Authorization), api_key_value,
 *         api_key_header_prefix: bearer | basic | custom (default
 *         custom: the value as given), api_key_query_param (default key)},
 *    mcp: the fields of engine_mcp_provider_create; server_identifier
 *         defaults to the name}.
 * api credentials are stored as given (encryption is to come); an mcp
 * server's URL, headers and OAuth client are sealed (secret_encrypt).
 * Putting a name that exists replaces it, keeping its id unless in gives
 * one.
 *
 * A view (what put and list answer) is the record without credentials,
 * headers and schema text: {id, name, type, description, tools: [{name,
 * description, method, path}], created_at, updated_at} for api; an mcp
 * server's view is engine_mcp_provider_get's.
 */

/* Checks and stores a provider. *out = its view. ENGINE_EINVAL with err
 * naming the field (an unparsable schema, no operations, a bad URL). */
int	engine_tool_provider_put(struct engine *e, const json_t *in,
	    char *err, json_t **out);

/* The whole stored record of provider name, credentials included (for
 * the engine and the admin only). ENGINE_ENOTFOUND if none. */
int	engine_tool_provider_get(struct engine *e, const char *name,
	    json_t **out);

/* {data: [view, ...]} in name order. */
int	engine_tool_provider_list(struct engine *e, json_t **out);

/* Removes provider name. ENGINE_ENOTFOUND if none. */
int	engine_tool_provider_delete(struct engine *e, const char *name);

/* ====== Built-in tool providers (Dify's Settings > Tools) ====== */

/*
 * The published workflow apps of this server as tools (provider_type
 * workflow, engine/tools/workflow_tool.c): Dify's ToolProviderApiEntity
 * of type "workflow" each, its one tool's parameters the app's start
 * variables. *out a new array.
 */
int	engine_tool_workflow_list(struct engine *e, json_t **out);

/*
 * The built-in providers: the native ones and those declared as data
 * (engine/tools/providers/ and tools.providers_dir), in Dify's
 * ToolProviderApiEntity shape {id, author, name, label, description,
 * icon, type: "builtin", team_credentials (masked),
 * is_team_authorization, allow_delete, tools (with_tools: Dify's
 * ToolApiEntity each), labels, credentials_schema, unsupported?}.
 * engine_tool_builtin_get: the one id names (a name, an alias or a
 * plugin id), ENGINE_ENOTFOUND when none. New references.
 */
int	engine_tool_builtin_list(struct engine *e, int with_tools,
	    json_t **out);
int	engine_tool_builtin_get(struct engine *e, const char *id,
	    json_t **out);

/*
 * A provider's credentials, Dify's credentials_for_provider: get answers
 * {key: value} with each secret as ENGINE_SECRET_MASK ({} when none are
 * set); put replaces them with in ({key: value}; a secret sent as
 * ENGINE_SECRET_MASK keeps the stored one; `base_url` may be set for any
 * provider and makes its requests trusted), refusing an unknown key, a
 * required one missing or a value over 64 KiB (ENGINE_EINVAL, err says
 * which); delete forgets them. ENGINE_ENOTFOUND: no such provider.
 * engine_tool_credentials_set: 1 when some are stored.
 */
int	engine_tool_credentials_get(struct engine *e, const char *id,
	    json_t **out);
int	engine_tool_credentials_put(struct engine *e, const char *id,
	    const json_t *in, char *err);
int	engine_tool_credentials_delete(struct engine *e, const char *id);
int	engine_tool_credentials_set(struct engine *e, const char *id);

/*
 * Runs the provider's test call (its manifest's `test`: a tool and its
 * parameters) with the credentials in (over the stored ones; NULL: the
 * stored ones). 0 when it answers, else tool_invoke's code with err
 * saying what the provider answered (never a secret).
 */
int	engine_tool_credentials_test(struct engine *e, const char *id,
	    const json_t *in, char *err);

/*
 * Which apps' drafts name which built-in provider: *out = {provider name:
 * [{id, name}, ...]} over every app (a walk of all drafts: for the
 * settings page, not for runs).
 */
int	engine_tool_usage(struct engine *e, json_t **out);

/* engine_tool_deps of app id's draft DSL. ENGINE_ENOTFOUND: no such app. */
int	engine_app_tool_deps(struct engine *e, const char *id, json_t **out);

/*
 * What the DSL dsl (the whole document as JSON) names that will not run
 * here, Dify's leaked_dependencies: one entry per tool provider {type
 * ("marketplace" etc. from the DSL's dependencies, else "tool"), value,
 * current_identifier, provider, reason ("not_served", "unsupported",
 * "needs_credentials"), message, tools [names], nodes [ids]}. Custom
 * (api, mcp) and workflow tools are not listed. *out a new array.
 */
int	engine_tool_deps(struct engine *e, const json_t *dsl, json_t **out);

/* ====== MCP servers (Dify's tool-provider/mcp) ====== */

/*
 * MCP servers the admin registers, in Dify's console shapes
 * (api/controllers/console/workspace/tool_providers.py): custom tool
 * providers of type "mcp". A registered server is trusted like a model
 * provider (it may be on loopback); its URL, header values and OAuth
 * client are sealed at rest and never shown: the URL's path and query
 * are masked (each becomes six asterisks), every secret is
 * ENGINE_SECRET_MASK,
 * and that mask sent back in an update keeps the value it stands for.
 *
 * in for create: {name, server_url (http or https), server_identifier
 * (what exported DSL names the server by: a tool's provider_id), icon,
 * icon_type ("emoji": icon is one, with icon_background), headers {name:
 * value}, configuration {timeout: 30, sse_read_timeout: 300} (seconds),
 * authentication {client_id, client_secret} (kept sealed; flowcgi runs no
 * OAuth flow)}. Names, URLs and identifiers are unique (ENGINE_EINVAL
 * "MCP tool ... already exists", as Dify). Create then lists the
 * server's tools, best effort; *out is the view: Dify's
 * ToolProviderApiEntity {id, author, name, description, icon, label,
 * type: "mcp", is_team_authorization (the tools could be listed), tools
 * [Dify's ToolApiEntity], server_url (masked), server_identifier,
 * configuration, masked_headers, updated_at, ...}.
 *
 * Update takes in's fields plus provider_id: absent headers clear them
 * (Dify's rule); a server_url holding the mask, or equal to the masked
 * one, keeps the URL; a new URL is tried first and refused with
 * "Failed to re-connect MCP server: ..." when it does not answer (a
 * server that asks for authorization is stored, unauthorized).
 *
 * refresh (Dify's update/{id} and, with auth, auth) lists the server's
 * tools now and stores them; auth stores the failure too. A failure is
 * ENGINE_EINVAL with "Failed to connect to MCP server: ..." (a server
 * that wants authorization says so: flowcgi has no OAuth flow).
 *
 * Each returns 0, ENGINE_EINVAL with err, ENGINE_ENOTFOUND (no server of
 * that provider_id) or a storage code.
 */
int	engine_mcp_provider_create(struct engine *e, const json_t *in,
	    char *err, json_t **out);
int	engine_mcp_provider_update(struct engine *e, const json_t *in,
	    char *err);
int	engine_mcp_provider_delete(struct engine *e, const char *provider_id);
int	engine_mcp_provider_get(struct engine *e, const char *provider_id,
	    json_t **out);
/* Every registered server's view, in name order: *out a new array. */
int	engine_mcp_provider_list(struct engine *e, json_t **out);
/* *out (may be NULL) gets the view with the tools just read. */
int	engine_mcp_provider_refresh(struct engine *e, const char *provider_id,
	    int auth, char *err, json_t **out);

/* ====== Model providers ====== */

/*
 * Where LLM nodes send requests (engine/llm/): entries {name, protocol
 * ("openai" | "anthropic"), base_url, api_key, models} stored in the
 * settings database with the key encrypted, plus built-in entries the
 * environment configures (OPENAI_API_KEY / OPENAI_BASE_URL, ANTHROPIC_*,
 * DEEPSEEK_*, ...; ollama on 127.0.0.1:11434) and the catch-all "*"
 * (llm.base_url). A DSL's model.provider names an entry after Dify's
 * plugin prefix is dropped ("langgenius/openai/openai" -> "openai").
 */

/* What an API key reads as in a listing (Dify's HIDDEN_VALUE). Sent back
 * in an update, it keeps the key the entry has. */
#define ENGINE_SECRET_MASK	"[__HIDDEN__]"

/*
 * Every entry: {data: [{name, protocol, base_url, api_key (the mask, or ""
 * when the entry has none), models, source: settings | environment |
 * config | default, configured (it can serve requests), builtin}]}, stored
 * entries first, by name. Keys are never returned.
 */
int	engine_model_provider_list(struct engine *e, json_t **out);

/*
 * Creates or replaces entry name ([A-Za-z0-9._-]{1,64}, or "*" for the
 * catch-all) from in = {protocol (default "openai"), base_url (http or
 * https, required), api_key (absent or ENGINE_SECRET_MASK: keep the
 * current key; "": none), models (array of names; empty: any)}. *out is
 * the entry as listed. ENGINE_EINVAL with err naming the field.
 */
int	engine_model_provider_set(struct engine *e, const char *name,
	    const json_t *in, char *err, json_t **out);

/* Deletes stored entry name (ENGINE_ENOTFOUND when it is not stored). */
int	engine_model_provider_delete(struct engine *e, const char *name);

/*
 * Tries entry name with a tiny chat request to in.model (or the entry's
 * first listed model). *out = {result: "success", model, text, latency,
 * usage}. ENGINE_ENOTFOUND (no such entry), ENGINE_EFETCH with err
 * carrying the provider's message (never the key), ENGINE_EINVAL (no
 * model to test with).
 */
int	engine_model_provider_test(struct engine *e, const char *name,
	    const json_t *in, char *err, json_t **out);

/* ====== Sandbox providers ====== */

/*
 * Sandbox provider settings (engine/sandbox/settings.c), Dify's
 * /workspaces/current/sandbox-providers. Types: local (default, no
 * config), ssh, e2b (when compiled in).
 *
 * list: *out = [{provider_type, is_system_configured, is_tenant_configured,
 * is_active, config (secrets as ENGINE_SECRET_MASK), config_schema:[{type,
 * name, required, default, label}]}], a new reference.
 * set: in = {"config":{...}} (or the bare config); merged over the stored
 * config (a secret equal to ENGINE_SECRET_MASK keeps its value), validated
 * by connecting (create, exec true, destroy), then stored with secrets
 * encrypted. ENGINE_ENOTFOUND (unknown type), ENGINE_EINVAL (a field; err
 * names it), ENGINE_ESANDBOX (connecting failed; err is the provider's
 * message, never a secret).
 * test: the same check without saving (in may be {} to test the stored
 * config); an ssh host key pinned by it is stored with an existing
 * config. *out = {result:"success"[, ssh_host_key]}.
 * delete: ENGINE_ENOTFOUND when nothing is stored; the active provider
 * falls back to local. activate: ENGINE_EINVAL when not configured.
 */
int	engine_sandbox_provider_list(struct engine *e, json_t **out);
int	engine_sandbox_provider_set(struct engine *e, const char *type,
	    const json_t *in, char *err);
int	engine_sandbox_provider_test(struct engine *e, const char *type,
	    const json_t *in, char *err, json_t **out);
int	engine_sandbox_provider_delete(struct engine *e, const char *type);
int	engine_sandbox_provider_activate(struct engine *e, const char *type,
	    char *err);

#endif
