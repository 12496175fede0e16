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
 * file store. What makes and decodes such files without a node
 * (file_from_bytes, file_ext, file_b64_*) is declared in engine/internal.h
 * for the tools too; it lives in files.c.
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

#endif
