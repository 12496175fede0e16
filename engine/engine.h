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

/* 0 while storage can be read, else an ENGINE_E* code. */
int	engine_health(struct engine *e);

/* The storage under the engine, for modules that keep their own records. */
struct store *engine_store(struct engine *e);

/* ====== Identifiers and time ====== */

/* A new RFC 9562 version-7 UUID (time-ordered) in buf[37]. */
void	engine_uuid(char buf[37]);

/* Seconds since the epoch. */
int64_t	engine_now(void);

/* 0 when s is a UUID in canonical lowercase 8-4-4-4-12 form. */
int	engine_uuid_check(const char *s);

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

/* The stored record of app id. */
int	engine_app_get(struct engine *e, const char *id, json_t **out);

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

#endif
