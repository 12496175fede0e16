/*
 * files.h — Dify file objects for node files: where a file's bytes come
 * from, and how a node makes a new file. Private to engine/nodes/.
 *
 * A file value is Dify's File JSON: {"dify_model_identity":
 * "__dify__file__", id, tenant_id, type (image, document, audio, video,
 * custom), transfer_method, remote_url, related_id, filename, extension
 * (".pdf", with the dot), mime_type, size, url}. Files flowcgi makes carry
 * their bytes in `url` as a data: URL (base64), transfer_method
 * "tool_file", so any node (and the API answer) can read them without a
 * file store.
 */
#ifndef FLOWCGI_ENGINE_NODES_FILES_H
#define FLOWCGI_ENGINE_NODES_FILES_H

#include "engine/run/run.h"

/*
 * The bytes of file object file for node c:
 *  - a `url` (or `remote_url`) that is a data: URL: decoded (base64 or
 *    percent-encoded);
 *  - an http(s) `url` / `remote_url`: fetched through outbound_fetch with
 *    the SSRF guard, at most http.max_binary_response bytes, a non-2xx
 *    status is an error;
 *  - an uploaded file (transfer_method local_file, related_id or
 *    upload_file_id): the upload of the run's app (engine_upload_get);
 *  - a tool file without a data: URL (tool_file, related_id): not
 *    available, a clear error (flowcgi has no tool file store).
 * *data is malloc'd and NUL-terminated (caller frees), *len its length.
 * Returns 0, or -1 with the node failed (c->err says why).
 */
int	file_bytes(struct node_ctx *c, const json_t *file, char **data,
	    size_t *len);

/*
 * A new file object holding len bytes of data as a data: URL. name may be
 * NULL ("file" + an extension from mime); mime NULL is guessed from the
 * name's extension, else application/octet-stream. Returns a new reference, or NULL when out of
 * memory.
 */
json_t	*file_from_bytes(const char *name, const char *mime, const void *data,
	    size_t len);

/*
 * The file's extension without the dot, lower-cased, into buf: from
 * `extension`, else the name's suffix, else from mime_type. "" when none.
 * Returns buf.
 */
const char *file_ext(const json_t *file, char *buf, size_t bufsz);

/*
 * Decodes base64 (standard or URL-safe alphabet, padding optional,
 * whitespace skipped) of n bytes at s. *out is malloc'd and NUL-terminated
 * (caller frees). Returns 0, or -1 on a bad character or out of memory.
 */
int	file_b64_decode(const char *s, size_t n, char **out, size_t *outlen);

/* base64 of n bytes, malloc'd and NUL-terminated, or NULL. */
char	*file_b64_encode(const void *data, size_t n);

#endif
