/*
 * internal.h — declarations shared by the engine's own files only.
 */
#ifndef FLOWCGI_ENGINE_INTERNAL_H
#define FLOWCGI_ENGINE_INTERNAL_H

#include "engine/engine.h"

struct engine {
	const struct conf	*conf;
	struct store		*store;
};

/* Maps a STORE_E* code to the ENGINE_E* code the engine returns. */
int	engine_from_store(int rc);

/* Writes a message into err (ENGINE_ERRMAX bytes) and returns ENGINE_EINVAL. */
int	engine_invalid(char *err, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* The number of Unicode code points in the UTF-8 string s. */
size_t	engine_utf8_len(const char *s);

/* ====== Apps (app.c) ====== */

/*
 * A new app record of mode from Dify's create fields in (name required),
 * with a fresh default draft. imported: a copy or an import, where Dify
 * keeps descriptions of any length. *out is a new reference.
 */
int	app_new_record(const json_t *in, const char *mode, int imported,
	    char *err, json_t **out);

/* {id, created_at, updated_at} for a workflow-mode draft, else null. */
json_t	*app_workflow_meta(const char *mode, int64_t now);

/* ====== Assets (assets.c) ====== */

/* Removes every asset node of app_id, dropping blob references. */
int	assets_delete_all(struct store_txn *t, const char *app_id);

/* Copies every asset node of src to dst (same node ids, shared blobs). */
int	assets_copy_all(struct store_txn *t, const char *src, const char *dst);

/* ====== Bundles (bundle.c) ====== */

struct bundle;
struct bundle_file;

/*
 * Every asset node of app_id for a bundle: *nodes, a flat list of node
 * views with paths (no timestamps); *files, one entry per node with its
 * path relative to the root and, for files, a copy of the bytes. Free with
 * bundle_files_free.
 */
int	assets_export(struct store_txn *t, const char *app_id, json_t **nodes,
	    struct bundle_file **files, size_t *nfiles);
void	bundle_files_free(struct bundle_file *files, size_t n);

/*
 * Lays a checked bundle's files into app_id (which has none yet) inside t:
 * folders made as needed, node ids taken from the manifest where it gives
 * valid ones, every name and limit checked. Returns 0, or ENGINE_EINVAL /
 * ENGINE_ELIMIT with err naming the entry.
 */
int	assets_import(struct store_txn *t, const struct conf *c,
	    const char *app_id, const struct bundle *b, char *err);

/* One entry of a bundle's file tree, path relative to the assets root. */
struct bundle_file {
	char		*path;		/* "skills/report/SKILL.md" */
	int		 is_dir;
	unsigned char	*data;		/* NULL for a folder */
	size_t		 len;
};

/* A bundle read into memory and checked; nothing written anywhere. */
struct bundle {
	char			*dsl_name;	/* "My app.yml" */
	char			*dsl;		/* its bytes, NUL-terminated */
	size_t			 dsl_len;
	json_t			*manifest;	/* NULL for the older layout */
	struct bundle_file	*files;
	size_t			 nfiles;
};

/*
 * Reads a .zip bundle from memory and checks all of it before anything is
 * written: one root DSL file (^[^/]+\.ya?ml$), manifest.json when present
 * (and its file list against the entries), and every entry: no absolute or
 * ".." paths, backslashes, control characters, symlinks, hard links,
 * devices, encryption or duplicates; each file within assets.max_file_size;
 * the total within bundle.max_size and bundle.max_ratio times the bundle's
 * size. Returns 0 with b filled (bundle_release), ENGINE_EINVAL or
 * ENGINE_ELIMIT with err saying which entry and which rule.
 */
int	bundle_read(const struct conf *c, const void *zip, size_t len,
	    char *err, struct bundle *b);
void	bundle_release(struct bundle *b);

/*
 * Writes a bundle: <name>.yml with dsl, manifest.json (if manifest is not
 * NULL) and each file under <name>/. *out (malloc'd, caller frees) holds
 * *outlen bytes of zip. Returns 0 or ENGINE_ENOMEM / ENGINE_EINVAL.
 */
int	bundle_write(const char *name, const char *dsl, size_t dsl_len,
	    const json_t *manifest, const struct bundle_file *files,
	    size_t nfiles, char *err, char **out, size_t *outlen);

/*
 * The file-name-safe form of an app name, as Dify's bundle export makes it:
 * <>:"/\|?* and control characters become _, leading and trailing dots and
 * spaces go, at most 100 characters, "app" when nothing is left. Writes a
 * NUL-terminated name into buf (at least 401 bytes).
 */
void	bundle_safe_name(const char *name, char *buf, size_t bufsz);

/* ====== Outbound HTTP (outbound.c) ====== */

struct curl_slist;

struct outbound_req {
	const char		*method;	/* NULL: GET, or POST with body */
	const char		*url;
	const struct curl_slist	*headers;
	const void		*body;
	size_t			 body_len;
	int			 trusted;	/* admin-configured: no guard */
	int			 follow;	/* follow up to 5 redirects */
	int			 timeout;	/* 0: http.timeout */
	int64_t			 max_bytes;	/* 0: http.max_response */
	/* Streaming: when set, bytes go here instead of resp->body; return
	 * non-zero to abort. */
	int			 (*on_data)(const char *p, size_t n, void *arg);
	void			*arg;
};

struct outbound_resp {
	long	 status;
	char	*body;		/* NUL-terminated, malloc'd; caller frees */
	size_t	 len;
	char	*content_type;	/* malloc'd or NULL */
};

/*
 * Performs one HTTP exchange through libcurl with the http.* limits. Unless
 * req->trusted, every address connected to (after DNS, and on redirects)
 * must be public unless http.allow_private. Returns 0 with resp filled
 * (any HTTP status), or ENGINE_EFETCH / ENGINE_ELIMIT with err saying why.
 * Free resp with outbound_resp_release.
 */
int	outbound_fetch(struct engine *e, const struct outbound_req *req,
	    char *err, struct outbound_resp *resp);
void	outbound_resp_release(struct outbound_resp *resp);

/* 1 when addr (AF_INET or AF_INET6 sockaddr) is private, loopback,
 * link-local, multicast or otherwise not a public unicast address. */
struct sockaddr;
int	outbound_addr_private(const struct sockaddr *addr);

#endif
