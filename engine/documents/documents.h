/*
 * documents.h — the text of a document file, one reader per format
 * (docs/documents.md). The document-extractor node calls doc_extract; so
 * will knowledge indexing, which needs the parts (a PDF's pages) as well as
 * the whole text.
 *
 * Readers take the file's bytes in memory and never touch the network or
 * the disk. Every reader is held to the limits it is given; a file that
 * passes one fails with DOC_ELIMIT and an error that names the setting.
 */
#ifndef FLOWCGI_DOCUMENTS_H
#define FLOWCGI_DOCUMENTS_H

#include <stddef.h>

enum {
	DOC_EFORMAT = -400,	/* no reader for this extension */
	DOC_EDAMAGED = -401,	/* not a readable file of its format */
	DOC_EENCRYPTED = -402,	/* password-protected */
	DOC_ELIMIT = -403,	/* a limit of struct doc_limits tripped */
	DOC_ENOMEM = -404,
	DOC_ESTOPPED = -405	/* the run was stopped, or documents.timeout */
};

/* Limits, from the documents.* settings (conf/flowcgi.yml). */
struct doc_limits {
	size_t	max_file_size;	/* bytes of the file itself */
	size_t	max_pages;	/* pages of a PDF */
	size_t	max_unpacked;	/* bytes unpacked from one zip entry */
	size_t	max_ratio;	/* unpacked / packed of a zip entry */
	size_t	max_cells;	/* values of one sheet, shared strings */
	long	timeout_ms;	/* one file's reading; 0 = none */
	/* Asked between pages (sheets, slides, entries): non-zero stops the
	 * reader with DOC_ESTOPPED. NULL = never. */
	int	(*stop)(void *arg);
	void	*stop_arg;
	long long started_ms;	/* set by doc_extract */
};

/* One part of a document: a page of a PDF, a sheet of a workbook, a
 * slide, a chapter of an epub. */
struct doc_part {
	char	*text;		/* UTF-8, malloc'd */
};

/*
 * A document read. text is the node's `text` (Dify's output); parts, when
 * the format has them (nparts > 0), are its pages in order, named by unit
 * ("page", "sheet"). Released with doc_release.
 */
struct doc {
	char		*text;
	struct doc_part	*parts;
	size_t		 nparts;
	const char	*unit;	/* static; NULL without parts */
};

/* Defaults of every limit, as conf/conf.c has them. */
void	doc_limits_default(struct doc_limits *lim);

/* 1 when ext (lower case, no dot) has a reader, else 0. */
int	doc_supported(const char *ext);

/* The extensions read, comma-separated, for error messages. Static. */
const char *doc_formats(void);

/*
 * Reads len bytes of a document of extension ext (lower case, no dot).
 * Returns 0 with *d filled (doc_release frees it), or a DOC_E* code with
 * err (errsz bytes) saying what is wrong in words for the end user; *d is
 * then empty. The text is valid UTF-8 without NUL bytes.
 */
int	doc_extract(const char *ext, const char *data, size_t len,
	    const struct doc_limits *lim, struct doc *d, char *err,
	    size_t errsz);

/* Frees what *d holds and empties it. NULL-safe. */
void	doc_release(struct doc *d);

/* A word for a DOC_E* code. Static. */
const char *doc_strerror(int rc);

#endif
