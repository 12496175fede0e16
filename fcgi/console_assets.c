/*
 * console_assets.c — /console/api/apps/{id}/assets/...: the app file
 * system in Dify's paths (tree, folders, files, nodes, reorder), plus
 * direct upload (multipart or raw body) and download of the raw bytes, and
 * Dify's signed-link flows: download-url, files/upload and batch-upload
 * answer links (fcgi/files.c) that the browser uses without a token.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "fcgi/internal.h"

#define UPLOAD_MAX_PARTS 16

/* ====== Helpers ====== */

/* "" and NULL both mean the root folder. */
static const char *
parent_or_root(const char *p)
{
	return p != NULL && *p != '\0' ? p : NULL;
}

static int
utf8_valid(const char *s, size_t len)
{
	const unsigned char	*u = (const unsigned char *)s;
	size_t			 i, k;

	for (i = 0; i < len; i += k)
		if ((k = engine_utf8_seq(u + i, len - i)) == 0)
			return 0;
	return 1;
}

/* ====== Handlers ====== */

static void
h_tree(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*tree = NULL;
	int	 rc;

	if ((rc = engine_asset_tree(r->eng, r->captures[0], err, &tree)) != 0) {
		resp_engine_error(r, rc, err, "app");
		return;
	}
	resp_json(r, 200, tree);
}

static void
h_mkdir(struct req *r)
{
	const char	*name, *parent;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*node = NULL;
	int		 rc;

	if (req_read_json(r) != 0 ||
	    req_json_string(r, "name", 0, &name) != 0 ||
	    req_json_string(r, "parent_id", 0, &parent) != 0)
		return;
	rc = engine_asset_mkdir(r->eng, r->captures[0], parent_or_root(parent),
	    name, err, &node);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "app or folder");
		return;
	}
	resp_json(r, 201, node);
}

/*
 * The file of an upload: the "file" part of a multipart body (with
 * optional "parent_id" and "name" parts), or the raw body with name and
 * parent_id in the query. Returns 0 or the status it answered with.
 */
static int
upload_source(struct req *r, const char **name, const char **parent,
    const char **data, size_t *len)
{
	struct mp_part	*parts;
	size_t		 n, i;
	char		 err[256];
	int		 rc, have = 0;

	if ((rc = req_read_body(r, r->conf->max_body)) != 0)
		return rc;
	*name = req_query(r, "name");
	*parent = req_query(r, "parent_id");
	if (!multipart_is_form(r->content_type)) {
		*data = r->body;
		*len = r->body_len;
		return 0;
	}
	if (multipart_parse(r->a, r->content_type, r->body, r->body_len,
	    UPLOAD_MAX_PARTS, &parts, &n, err, sizeof(err)) != 0) {
		resp_error(r, 400, "invalid_multipart", "%s", err);
		return 400;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(parts[i].name, "file") == 0 && !have) {
			*data = parts[i].data;
			*len = parts[i].len;
			if (*name == NULL)
				*name = parts[i].filename;
			have = 1;
		} else if (strcmp(parts[i].name, "parent_id") == 0) {
			if (req_part_text(r, &parts[i], parent) != 0)
				return 400;
		} else if (strcmp(parts[i].name, "name") == 0) {
			if (req_part_text(r, &parts[i], name) != 0)
				return 400;
		}
	}
	if (!have) {
		resp_error(r, 400, "invalid_param", "multipart body has no "
		    "'file' part");
		return 400;
	}
	return 0;
}

/* POST .../assets/files: create a file (or replace it with ?replace=1). */
static void
h_upload(struct req *r)
{
	const char	*name = NULL, *parent = NULL, *data = NULL, *rep;
	char		 err[ENGINE_ERRMAX] = "";
	size_t		 len = 0;
	json_t		*node = NULL;
	int		 rc;

	if (upload_source(r, &name, &parent, &data, &len) != 0)
		return;
	if (name == NULL || *name == '\0') {
		resp_error(r, 400, "invalid_param", "name is required (the "
		    "multipart file name, a 'name' part or ?name=)");
		return;
	}
	rep = req_query(r, "replace");
	rc = engine_asset_create(r->eng, r->captures[0],
	    parent_or_root(parent), name, data, len,
	    rep != NULL && (strcmp(rep, "1") == 0 || strcmp(rep, "true") == 0),
	    err, &node);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "app or folder");
		return;
	}
	resp_json(r, 201, node);
}

/* GET .../assets/files/{node}: {content} as Dify answers it. */
static void
h_file_get(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "", *data = NULL, *b64;
	size_t	 len = 0;
	json_t	*node = NULL, *res;
	int	 rc;

	rc = engine_asset_read(r->eng, r->captures[0], r->captures[1], err,
	    &data, &len, &node);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "file");
		return;
	}
	if (utf8_valid(data, len))
		res = json_pack("{s:s%,s:o}", "content", data, len, "node",
		    node);
	else {
		/* Not text: hand it over in base64 rather than mangle it. */
		b64 = malloc(4 * ((len + 2) / 3) + 1);
		if (b64 != NULL)
			EVP_EncodeBlock((unsigned char *)b64,
			    (const unsigned char *)data, (int)len);
		res = b64 ? json_pack("{s:s,s:s,s:o}", "content", b64,
		    "encoding", "base64", "node", node) : NULL;
		free(b64);
	}
	free(data);
	resp_json(r, 200, res);
}

/* GET .../assets/files/{node}/download: the raw bytes. */
static void
h_file_download(struct req *r)
{
	char		 err[ENGINE_ERRMAX] = "", sum[65];
	const char	*name;
	uint64_t	 len = 0;
	json_t		*node = NULL;
	int		 rc;

	rc = engine_asset_open(r->eng, r->captures[0], r->captures[1], err,
	    &node, sum, &len);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "file");
		return;
	}
	name = json_string_value(json_object_get(node, "name"));
	resp_attachment(r, name);
	resp_header(r, "ETag", arena_printf(r->a, "\"%s\"",
	    json_string_value(json_object_get(node, "checksum"))));
	resp_blob(r, resp_mime_of(name), sum, len);
	json_decref(node);
}

/* PUT .../assets/files/{node}: JSON {content}, multipart file or raw. */
static void
h_file_put(struct req *r)
{
	const char	*name = NULL, *parent = NULL, *data = NULL;
	char		 err[ENGINE_ERRMAX] = "";
	size_t		 len = 0;
	json_t		*node = NULL, *c;
	int		 rc;

	if (strncasecmp(r->content_type, "application/json", 16) == 0) {
		if (req_read_json(r) != 0)
			return;
		c = json_object_get(r->json, "content");
		if (!json_is_string(c)) {
			resp_error(r, 400, "invalid_param", "content must be a "
			    "string");
			return;
		}
		data = json_string_value(c);
		len = json_string_length(c);
	} else if (upload_source(r, &name, &parent, &data, &len) != 0)
		return;
	rc = engine_asset_write(r->eng, r->captures[0], r->captures[1], data,
	    len, err, &node);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "file");
		return;
	}
	resp_json(r, 200, node);
}

static void
h_node_delete(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if ((rc = engine_asset_delete(r->eng, r->captures[0],
	    r->captures[1], err)) != 0) {
		resp_engine_error(r, rc, err, "file or folder");
		return;
	}
	resp_empty(r, 204);
}

static void
h_node_rename(struct req *r)
{
	const char	*name;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*node = NULL;
	int		 rc;

	if (req_read_json(r) != 0 || req_json_string(r, "name", 0, &name) != 0)
		return;
	rc = engine_asset_rename(r->eng, r->captures[0], r->captures[1], name,
	    err, &node);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "file or folder");
		return;
	}
	resp_json(r, 200, node);
}

static void
h_node_move(struct req *r)
{
	const char	*parent;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*node = NULL;
	int		 rc;

	if (req_read_json(r) != 0 ||
	    req_json_string(r, "parent_id", 0, &parent) != 0)
		return;
	rc = engine_asset_move(r->eng, r->captures[0], r->captures[1],
	    parent_or_root(parent), err, &node);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "file or folder");
		return;
	}
	resp_json(r, 200, node);
}

/* POST .../nodes/{node}/reorder {after_node_id}: null or absent = first. */
static void
h_node_reorder(struct req *r)
{
	const char	*after;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*node = NULL;
	int		 rc;

	if (req_read_json(r) != 0 ||
	    req_json_string(r, "after_node_id", 0, &after) != 0)
		return;
	rc = engine_asset_reorder(r->eng, r->captures[0], r->captures[1],
	    parent_or_root(after), err, &node);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "file or folder");
		return;
	}
	resp_json(r, 200, node);
}

/* GET .../files/{node}/download-url: {download_url}, a signed link. */
static void
h_download_url(struct req *r)
{
	char		 err[ENGINE_ERRMAX] = "";
	const char	*url;
	json_t		*node = NULL;
	int		 rc;

	rc = engine_asset_get(r->eng, r->captures[0], r->captures[1], err,
	    &node);
	if (rc == 0 && strcmp(json_string_value(json_object_get(node,
	    "node_type")), "file") != 0)
		rc = ENGINE_ENOTFOUND;
	json_decref(node);
	if (rc != 0) {
		resp_engine_error(r, rc, rc == ENGINE_ENOTFOUND ? "" : err,
		    "file");
		return;
	}
	if ((url = asset_link(r, r->captures[0], r->captures[1],
	    "download")) == NULL)
		return;
	resp_json(r, 200, json_pack("{s:s}", "download_url", url));
}

/*
 * POST .../files/upload {name, size, parent_id}: an empty file made for
 * the upload to follow, {node, upload_url}; the client PUTs the bytes to
 * upload_url.
 */
static void
h_upload_url(struct req *r)
{
	const char	*name, *parent, *url;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*node = NULL, *size;
	int		 rc;

	if (req_read_json(r) != 0 ||
	    req_json_string(r, "name", 1, &name) != 0 ||
	    req_json_string(r, "parent_id", 0, &parent) != 0)
		return;
	size = json_object_get(r->json, "size");
	if (!json_is_integer(size) || json_integer_value(size) < 0) {
		resp_error(r, 400, "invalid_param", "size must be the number "
		    "of bytes to upload");
		return;
	}
	rc = engine_asset_reserve(r->eng, r->captures[0],
	    parent_or_root(parent), name, json_integer_value(size), err,
	    &node);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "app or folder");
		return;
	}
	arena_json(r->a, node);
	if ((url = asset_link(r, r->captures[0], json_string_value(
	    json_object_get(node, "id")), "upload")) == NULL)
		return;
	resp_json(r, 201, json_pack("{s:O,s:s}", "node", node, "upload_url",
	    url));
}

/*
 * Adds upload_url to every file of a made batch (null for folders). -1:
 * the answer (an error) is sent.
 */
static int
batch_links(struct req *r, json_t *nodes)
{
	const char	*type, *url;
	json_t		*n;
	size_t		 i;

	json_array_foreach(nodes, i, n) {
		type = json_string_value(json_object_get(n, "node_type"));
		if (strcmp(type, "file") == 0) {
			if ((url = asset_link(r, r->captures[0],
			    json_string_value(json_object_get(n, "id")),
			    "upload")) == NULL)
				return -1;
			if (json_object_set_new(n, "upload_url",
			    json_string(url)) != 0)
				goto nomem;
		} else {
			if (json_object_set_new(n, "upload_url",
			    json_null()) != 0)
				goto nomem;
			if (batch_links(r, json_object_get(n, "children")) != 0)
				return -1;
		}
	}
	return 0;
nomem:
	resp_engine_error(r, ENGINE_ENOMEM, "", "link");
	return -1;
}

/*
 * POST .../batch-upload {parent_id, children: [{name, node_type, size,
 * children}]}: the whole tree made at once, {children} with an id and an
 * upload_url for each file. Each file then is one PUT of its own: a failed
 * one leaves that file empty and the others as they are, as in Dify.
 */
static void
h_batch_upload(struct req *r)
{
	const char	*parent;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*made = NULL, *kids;
	int		 rc;

	if (req_read_json(r) != 0 ||
	    req_json_string(r, "parent_id", 0, &parent) != 0)
		return;
	kids = json_object_get(r->json, "children");
	if (!json_is_array(kids) || json_array_size(kids) == 0) {
		resp_error(r, 400, "invalid_param", "children must be a "
		    "non-empty array");
		return;
	}
	rc = engine_asset_batch(r->eng, r->captures[0], parent_or_root(parent),
	    kids, err, &made);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "app or folder");
		return;
	}
	arena_json(r->a, made);
	if (batch_links(r, made) != 0)
		return;
	resp_json(r, 201, json_pack("{s:O}", "children", made));
}

#define A "/console/api/apps/{}/assets"
const struct route console_asset_routes[] = {
	{ "GET", A "/tree", h_tree, AUTH_ADMIN },
	{ "POST", A "/folders", h_mkdir, AUTH_ADMIN },
	{ "POST", A "/files", h_upload, AUTH_ADMIN },
	{ "GET", A "/files/{}", h_file_get, AUTH_ADMIN },
	{ "PUT", A "/files/{}", h_file_put, AUTH_ADMIN },
	{ "GET", A "/files/{}/download", h_file_download, AUTH_ADMIN },
	{ "DELETE", A "/nodes/{}", h_node_delete, AUTH_ADMIN },
	{ "POST", A "/nodes/{}/rename", h_node_rename, AUTH_ADMIN },
	{ "POST", A "/nodes/{}/move", h_node_move, AUTH_ADMIN },
	{ "POST", A "/nodes/{}/reorder", h_node_reorder, AUTH_ADMIN },
	{ "GET", A "/files/{}/download-url", h_download_url, AUTH_ADMIN },
	{ "POST", A "/files/upload", h_upload_url, AUTH_ADMIN },
	{ "POST", A "/batch-upload", h_batch_upload, AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
#undef A
