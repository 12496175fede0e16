/*
 * document_extractor.c — the document-extractor node: the text of a file,
 * or of each file of an array (then `text` is an array of strings), after
 * Dify's nodes/document_extractor/node.py. The readers are in
 * engine/documents/ (docs/documents.md); this node picks the format by the
 * file's extension (else its MIME type), fetches the bytes and hands them
 * over with the documents.* limits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/documents/documents.h"
#include "engine/nodes/nodes.h"

/* The documents.* settings of the run's engine. */
static void
doc_limits_conf(const struct node_ctx *c, struct doc_limits *lim)
{
	const struct conf *cf = c->run->e->conf;

	doc_limits_default(lim);
	if (cf == NULL)
		return;
	lim->max_file_size = (size_t)cf->documents_max_file_size;
	lim->max_pages = (size_t)cf->documents_max_pages;
	lim->max_unpacked = (size_t)cf->documents_max_unpacked;
	lim->max_ratio = (size_t)cf->documents_max_ratio;
	lim->max_cells = (size_t)cf->documents_max_cells;
	lim->timeout_ms = (long)cf->documents_timeout * 1000;
}

/* ====== The node ====== */

static int
extract_one(struct node_ctx *c, const json_t *file, char **out)
{
	struct doc_limits	 lim;
	struct doc		 d = { 0 };
	char			 ext[32], *data = NULL, err[ENGINE_ERRMAX];
	const char		*name = json_string_value(json_object_get(file,
				    "filename"));
	size_t			 len;
	int			 rc = -1;

	file_ext(file, ext, sizeof(ext));
	if (ext[0] == '\0') {
		c->error_type = "UnsupportedFileTypeError";
		node_fail(c, "Unable to determine file type of '%s': file "
		    "extension or MIME type is missing", name ? name : "");
		goto out;
	}
	if (!doc_supported(ext)) {
		c->error_type = "UnsupportedFileTypeError";
		node_fail(c, "cannot read '%s': .%s files are not supported "
		    "(the document extractor reads %s)", name ? name : "", ext,
		    doc_formats());
		goto out;
	}
	if (file_bytes(c, file, &data, &len) != 0) {
		c->error_type = "FileDownloadError";
		goto out;
	}
	doc_limits_conf(c, &lim);
	lim.stop = node_stop_asked;	/* asked between pages */
	lim.stop_arg = c->run;
	if (doc_extract(ext, data, len, &lim, &d, err, sizeof(err)) != 0) {
		c->error_type = "TextExtractionError";
		node_fail(c, "cannot extract text from '%s': %s", name ? name :
		    "", err);
		goto out;
	}
	*out = d.text;
	d.text = NULL;
	rc = 0;
out:
	doc_release(&d);
	free(data);
	return rc;
}

static int
docx_node_run(struct node_ctx *c)
{
	json_t		*sel = json_object_get(c->node->data,
			    "variable_selector");
	json_t		*v = node_resolve(c, sel), *f, *list = NULL;
	json_t		*res = NULL;
	char		*text = NULL;
	size_t		 i;
	int		 rc = -1;

	if (json_object_set_new(c->inputs, "variable_selector", sel ?
	    json_incref(sel) : json_null()) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (v == NULL) {
		node_fail(c, "File variable not found for selector: %s",
		    node_selector_tail(sel));
		goto out;
	}
	if (json_is_array(v)) {
		if ((list = json_array()) == NULL) {
			node_fail(c, "out of memory");
			goto out;
		}
		json_array_foreach(v, i, f) {
			if (!tpl_is_file(f)) {
				node_fail(c, "item %zu of the variable is not "
				    "a file", i + 1);
				goto out;
			}
			if (extract_one(c, f, &text) != 0)
				goto out;
			if (json_array_append_new(list, json_string(text))
			    != 0) {
				node_fail(c, "out of memory");
				goto out;
			}
			free(text);
			text = NULL;
		}
		res = json_incref(list);
	} else if (tpl_is_file(v)) {
		if (extract_one(c, v, &text) != 0)
			goto out;
		res = json_string(text);
	} else {
		node_fail(c, "the document extractor reads a file or an array "
		    "of files; the variable holds neither");
		goto out;
	}
	if (res == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	c->process_data = json_pack("{s:O}", "documents", res);
	if (json_object_set(c->outputs, "text", res) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	rc = 0;
out:
	json_decref(res);
	json_decref(list);
	json_decref(v);
	free(text);
	return rc;
}

const struct node_type node_document_extractor = {
	"document-extractor", docx_node_run, 0
};
