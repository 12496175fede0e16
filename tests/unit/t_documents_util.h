/*
 * t_documents_util.h — what the tests of engine/documents/ share: the
 * committed fixtures of tests/documents/ read whole, a document read from
 * one of them, and a zip made in memory (libarchive) for the zip formats'
 * hand-made cases.
 */
#ifndef FLOWCGI_T_DOCUMENTS_UTIL_H
#define FLOWCGI_T_DOCUMENTS_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "engine/documents/documents.h"

/* The bytes of tests/documents/<name>, malloc'd (*len bytes), or NULL. */
static inline char *
slurp(const char *name, size_t *len)
{
	char	 path[256], *p = NULL;
	FILE	*f;
	long	 n;

	snprintf(path, sizeof(path), "tests/documents/%s", name);
	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)n + 1)) !=
	    NULL && fread(p, 1, (size_t)n, f) == (size_t)n) {
		p[n] = '\0';	/* a text fixture reads as a string */
		*len = (size_t)n;
	} else {
		free(p);
		p = NULL;
	}
	fclose(f);
	return p;
}

/* doc_extract on the fixture <name> as extension ext; -1 with err when
 * the fixture is missing. */
static inline int
read_fixture(const char *name, const char *ext,
    const struct doc_limits *lim, struct doc *d, char *err, size_t errsz)
{
	char	*data;
	size_t	 len = 0;
	int	 rc;

	if ((data = slurp(name, &len)) == NULL) {
		snprintf(err, errsz, "fixture %s missing", name);
		memset(d, 0, sizeof(*d));
		return -1;
	}
	rc = doc_extract(ext, data, len, lim, d, err, errsz);
	free(data);
	return rc;
}

/* A deflated zip of n (name, bytes, length) triples into out (cap bytes);
 * its length. */
static inline size_t
make_zip(const char *const *names, const char *const *bodies,
    const size_t *lens, size_t n, char *out, size_t cap)
{
	struct archive		*a = archive_write_new();
	struct archive_entry	*e;
	size_t			 used = 0, i;

	archive_write_set_format_zip(a);
	archive_write_set_options(a, "zip:compression=deflate");
	archive_write_open_memory(a, out, cap, &used);
	for (i = 0; i < n; i++) {
		e = archive_entry_new();
		archive_entry_set_pathname(e, names[i]);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_size(e, (la_int64_t)lens[i]);
		archive_write_header(a, e);
		archive_write_data(a, bodies[i], lens[i]);
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
	return used;
}

#endif
