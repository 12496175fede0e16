/*
 * tmp_engine.h — a throw-away engine for the unit tests that need one: a
 * fresh directory under $TMPDIR (or /tmp), the engine's data in <dir>/data
 * without fsync, and the directory removed again at the end.
 *
 *	static struct conf	 c;
 *	char			 dir[256];
 *
 *	conf_defaults(&c);
 *	c.map_size = 1 << 20;			(any other setting)
 *	if (tmp_engine_open("t_foo", &c, dir, sizeof(dir), &eng) != 0)
 *		return tap_done();
 *	...
 *	tmp_engine_close(eng, dir);
 */
#ifndef FLOWCGI_TMP_ENGINE_H
#define FLOWCGI_TMP_ENGINE_H

#include <stdio.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "tests/unit/tap.h"

/*
 * tmp_dir_make(name, dir, dirsz): makes "<$TMPDIR or /tmp>/<name>.XXXXXX"
 * and leaves its path in dir; one check. Returns 0 or -1.
 */
static inline int
tmp_dir_make(const char *name, char *dir, size_t dirsz)
{
	const char *t = getenv("TMPDIR");

	snprintf(dir, dirsz, "%s/%s.XXXXXX", t != NULL ? t : "/tmp", name);
	return CHECK(mkdtemp(dir) != NULL) ? 0 : -1;
}

/* tmp_dir_remove(dir): removes dir and all below it, saying so if not. */
static inline void
tmp_dir_remove(const char *dir)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

/*
 * tmp_engine_open(name, c, dir, dirsz, out): tmp_dir_make, then an engine
 * in *out on <dir>/data with c's other settings and c->sync off; two
 * checks, and the engine's message on a failure. Returns 0, or -1 with
 * *out NULL and the directory removed.
 */
static inline int
tmp_engine_open(const char *name, struct conf *c, char *dir, size_t dirsz,
    struct engine **out)
{
	char err[ENGINE_ERRMAX] = "";

	*out = NULL;
	if (tmp_dir_make(name, dir, dirsz) != 0)
		return -1;
	snprintf(c->data_dir, sizeof(c->data_dir), "%s/data", dir);
	c->sync = 0;
	if (!CHECK(engine_open(c, err, out) == 0)) {
		printf("# %s\n", err);
		*out = NULL;
		tmp_dir_remove(dir);
		return -1;
	}
	return 0;
}

/* tmp_engine_close(e, dir): closes e (NULL is fine) and removes dir. */
static inline void
tmp_engine_close(struct engine *e, const char *dir)
{
	if (e != NULL)
		engine_close(e);
	tmp_dir_remove(dir);
}

#endif
