/*
 * fuzz_engine.h — the engine of the fuzz targets that need one: it lives
 * in a fresh /tmp/<name>.XXXXXX, without fsync, and goes with the process.
 *
 *	if (eng == NULL) {
 *		conf_defaults(&conf);
 *		conf.map_size = 8 << 20;	(any other setting)
 *		fuzz_engine_open("fuzz_foo");
 *	}
 */
#ifndef FLOWCGI_FUZZ_ENGINE_H
#define FLOWCGI_FUZZ_ENGINE_H

#include <stdio.h>
#include <stdlib.h>

#include "engine/engine.h"

static struct conf	 conf;
static struct engine	*eng;
static char		 fuzz_dir[64];

static void
fuzz_engine_cleanup(void)
{
	char cmd[128];

	engine_close(eng);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fuzz_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", fuzz_dir);
}

/*
 * fuzz_engine_open(name): opens eng on a fresh /tmp/<name>.XXXXXX with the
 * settings in conf (conf_defaults and the caller's) and conf.sync off,
 * removed at exit; aborts when it cannot.
 */
static inline void
fuzz_engine_open(const char *name)
{
	char err[ENGINE_ERRMAX];

	snprintf(fuzz_dir, sizeof(fuzz_dir), "/tmp/%s.XXXXXX", name);
	if (mkdtemp(fuzz_dir) == NULL)
		abort();
	conf.sync = 0;
	snprintf(conf.data_dir, sizeof(conf.data_dir), "%s", fuzz_dir);
	log_init(CONF_LOG_ERROR, NULL);
	if (engine_open(&conf, err, &eng) != 0)
		abort();
	atexit(fuzz_engine_cleanup);
}

/*
 * fuzz_app_fresh(mode, app): deletes the app whose id is in app (if any)
 * and creates a fresh one of that mode, its id into app[37]; aborts when
 * it cannot.
 */
static inline void
fuzz_app_fresh(const char *mode, char app[37])
{
	char	 err[ENGINE_ERRMAX];
	json_t	*in, *out = NULL;

	if (app[0] != '\0')
		engine_app_delete(eng, app);
	in = json_pack("{s:s,s:s}", "name", "fuzz", "mode", mode);
	if (in == NULL || engine_app_create(eng, in, err, &out) != 0)
		abort();
	snprintf(app, 37, "%s", json_string_value(json_object_get(out,
	    "id")));
	json_decref(in);
	json_decref(out);
}

#endif
