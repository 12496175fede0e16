/*
 * dsl_files.h — the DSL files the corpus tests go through, in this order:
 *
 *   tests/e2e/apps       the project's own apps (hand-written, flowcgi's own
 *                        exports, .zip bundles in both layouts)
 *   tests/e2e/apps/dify  real Dify exports kept with the tests: every DSL
 *                        version, app mode and legacy form of Dify's files
 *   the shared corpus    93 real Dify exports, when it is here:
 *                        $FLOWCGI_CORPUS, or ../shared/dsl-corpus/files
 *                        beside the checkout; without it, one counted skip
 *
 * The first two are always here, so a clone with nothing beside it tests
 * every node type and DSL form all the same. Paths are relative to the
 * repository root (tests/run-all.sh runs there), or to $FLOWCGI_SRC.
 */
#ifndef FLOWCGI_DSL_FILES_H
#define FLOWCGI_DSL_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/tap.h"

#define DSL_FILES_YML	0x1	/* *.yml */
#define DSL_FILES_ZIP	0x2	/* *.zip bundles */

struct dsl_files {
	char	**paths;	/* malloc'd; sorted within each folder */
	size_t	  n;
	size_t	  nproject;	/* the first nproject are the project's own */
	int	  corpus;	/* whether the shared corpus is here */
};

static inline int
dsl_files_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static inline int
dsl_files_ends(const char *name, const char *ext)
{
	size_t	n = strlen(name), e = strlen(ext);

	return n > e && strcmp(name + n - e, ext) == 0;
}

/*
 * Adds the files of dir of the kinds asked for (DSL_FILES_*), sorted by
 * name. Returns how many, or -1 when dir cannot be opened.
 */
static inline int
dsl_files_dir(struct dsl_files *f, const char *dir, int kinds)
{
	struct dirent	*de;
	DIR		*d;
	char		**pp, path[4096];
	size_t		 first = f->n;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (!((kinds & DSL_FILES_YML) && dsl_files_ends(de->d_name,
		    ".yml")) && !((kinds & DSL_FILES_ZIP) &&
		    dsl_files_ends(de->d_name, ".zip")))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    de->d_name) >= sizeof(path))
			continue;
		if ((pp = realloc(f->paths, (f->n + 1) * sizeof(*pp))) ==
		    NULL)
			break;
		f->paths = pp;
		if ((f->paths[f->n] = strdup(path)) == NULL)
			break;
		f->n++;
	}
	closedir(d);
	qsort(f->paths + first, f->n - first, sizeof(*f->paths),
	    dsl_files_cmp);
	return (int)(f->n - first);
}

/*
 * Fills f with the project's files and the corpus's (see the top); a
 * missing corpus is one SKIP line. The project's folders must have files:
 * a CHECK each.
 */
static inline void
dsl_files_collect(struct dsl_files *f, int kinds)
{
	static const char *const own[] = {
		"tests/e2e/apps", "tests/e2e/apps/dify", NULL,
	};
	const char	*src = getenv("FLOWCGI_SRC"), *dir;
	char		 path[4096];
	size_t		 i;

	memset(f, 0, sizeof(*f));
	for (i = 0; own[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/%s", src != NULL ? src : ".",
		    own[i]);
		if (!tap_check(dsl_files_dir(f, path, kinds) > 0, __FILE__,
		    __LINE__, own[i]))
			printf("#   no DSL files in %s\n", path);
	}
	f->nproject = f->n;
	dir = getenv("FLOWCGI_CORPUS");
	if (dir == NULL || *dir == '\0') {
		snprintf(path, sizeof(path), "%s/../shared/dsl-corpus/files",
		    src != NULL ? src : ".");
		dir = path;
	}
	if (dsl_files_dir(f, dir, kinds) >= 0)
		f->corpus = 1;
	else
		SKIP("the shared DSL corpus (../shared/dsl-corpus/files, or "
		    "FLOWCGI_CORPUS) is not here: the project's own files "
		    "only");
}

static inline void
dsl_files_free(struct dsl_files *f)
{
	size_t	i;

	for (i = 0; i < f->n; i++)
		free(f->paths[i]);
	free(f->paths);
	memset(f, 0, sizeof(*f));
}

/* The bytes of path, NUL-terminated, in *len; malloc'd, or NULL. */
static inline char *
dsl_files_slurp(const char *path, size_t *len)
{
	FILE	*fp;
	char	*buf = NULL;
	long	 n;

	*len = 0;
	if ((fp = fopen(path, "rb")) == NULL)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 &&
	    fseek(fp, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) != NULL) {
		*len = fread(buf, 1, (size_t)n, fp);
		buf[*len] = '\0';
	}
	fclose(fp);
	return buf;
}

#endif
