/*
 * t_engine_corpus_run.c — every corpus app whose nodes flowcgi implements
 * runs with inputs made from its start node and ends succeeded, partial or
 * failed with a message; apps that need what flowcgi lacks (LLM, tools)
 * are refused up front with a message naming the node types. Nothing
 * crashes or hangs (each run has a short time limit).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "tap.h"

static json_t *
read_yaml(const char *path, char **text, size_t *len)
{
	FILE	*f = fopen(path, "rb");
	long	 n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	*text = malloc((size_t)n + 1);
	*len = fread(*text, 1, (size_t)n, f);
	(*text)[*len] = '\0';
	fclose(f);
	return json_true();
}

/* Inputs for the start node's variables: text, first option, 1. */
static json_t *
derive_inputs(struct engine *e, const char *app_id)
{
	json_t		*app = NULL, *inputs = json_object(), *n, *v, *opts;
	const char	*type, *name;
	size_t		 i, j;

	if (engine_app_get_full(e, app_id, &app) != 0)
		return inputs;
	json_array_foreach(json_object_get(json_object_get(json_object_get(
	    json_object_get(app, "dsl"), "workflow"), "graph"), "nodes"), i,
	    n) {
		type = json_string_value(json_object_get(json_object_get(n,
		    "data"), "type"));
		if (type == NULL || strcmp(type, "start") != 0)
			continue;
		json_array_foreach(json_object_get(json_object_get(n, "data"),
		    "variables"), j, v) {
			name = json_string_value(json_object_get(v,
			    "variable"));
			type = json_string_value(json_object_get(v, "type"));
			if (name == NULL)
				continue;
			opts = json_object_get(v, "options");
			if (type != NULL && strcmp(type, "number") == 0)
				json_object_set_new(inputs, name,
				    json_integer(1));
			else if (type != NULL && strcmp(type, "select") == 0 &&
			    json_array_size(opts) > 0)
				json_object_set(inputs, name,
				    json_array_get(opts, 0));
			else if (type == NULL || strcmp(type, "text-input") ==
			    0 || strcmp(type, "paragraph") == 0)
				json_object_set_new(inputs, name,
				    json_string("test"));
		}
	}
	json_decref(app);
	return inputs;
}

int
main(void)
{
	static struct conf	 c;
	struct engine		*e = NULL;
	struct import_opts	 io;
	struct run_opts		 ro;
	struct dirent		*de;
	DIR			*d;
	const char		*dir = getenv("FLOWCGI_CORPUS");
	char			 err[ENGINE_ERRMAX], path[4096], tmp[] =
				    "/tmp/t_corpus_run.XXXXXX", *text;
	const char		*status, *app_id, *mode;
	FILE			*fake;
	char			 port[32];
	size_t			 len;
	json_t			*imp, *res, *inputs, *data;
	int			 nrun = 0, nok = 0, nfail = 0, nrefused = 0, rc;

	if (dir == NULL)
		dir = "../shared/dsl-corpus/files";
	if ((d = opendir(dir)) == NULL) {
		SKIP("the DSL corpus (../shared/dsl-corpus/files, or "
		    "FLOWCGI_CORPUS) is not here");
		return tap_done();
	}
	closedir(d);
	conf_defaults(&c);
	CHECK(mkdtemp(tmp) != NULL);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", tmp);
	c.sync = 0;
	c.workflow_max_time = 20;
	c.http_connect_timeout = 2;
	c.http_timeout = 5;
	/* Models: every provider name reaches the fake OpenAI server, which
	 * echoes the last user message (tests/fakes/fake_llm.py). */
	if ((fake = popen("exec python3 tests/fakes/fake_llm.py", "r")) !=
	    NULL && fgets(port, sizeof(port), fake) != NULL) {
		port[strcspn(port, "\n")] = '\0';
		snprintf(c.llm_base_url, sizeof(c.llm_base_url),
		    "http://127.0.0.1:%s/v1", port);
	}
	CHECK(c.llm_base_url[0] != '\0');
	CHECK(engine_open(&c, err, &e) == 0);
	if (!CHECK((d = opendir(dir)) != NULL))
		return tap_done();
	while ((de = readdir(d)) != NULL) {
		if (strstr(de->d_name, ".yml") == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		text = NULL;
		len = 0;
		if (read_yaml(path, &text, &len) == NULL) {
			CHECK(!"corpus file readable");
			continue;
		}
		memset(&io, 0, sizeof(io));
		imp = NULL;
		rc = engine_import(e, text, len, &io, err, &imp);
		free(text);
		if (rc != 0 || json_string_value(json_object_get(imp,
		    "app_id")) == NULL) {
			json_decref(imp);
			continue;	/* import is t_engine_dsl_corpus's job */
		}
		app_id = json_string_value(json_object_get(imp, "app_id"));
		mode = json_string_value(json_object_get(imp, "app_mode"));
		(void)mode;	/* every mode runs, graph or model config */
		inputs = derive_inputs(e, app_id);
		memset(&ro, 0, sizeof(ro));
		ro.app_id = app_id;
		ro.inputs = inputs;
		ro.user = "corpus";
		ro.query = "hello";
		res = NULL;
		err[0] = '\0';
		rc = engine_run(e, &ro, err, &res);
		if (rc != 0) {
			/* refused before running: it must say why */
			nrefused++;
			if (!CHECK(rc == ENGINE_EINVAL && err[0] != '\0'))
				printf("# %s: rc %d\n", de->d_name, rc);
			else
				printf("# refused %s: %.120s\n", de->d_name,
				    err);
		} else {
			nrun++;
			data = json_object_get(res, "data") ?
			    json_object_get(res, "data") : res;
			status = json_string_value(json_object_get(data,
			    "status"));
			if (status != NULL && (strcmp(status, "succeeded") ==
			    0 || strcmp(status, "partial-succeeded") == 0)) {
				nok++;
				CHECK(status != NULL);
			} else {
				nfail++;
				/* a failed run explains itself */
				CHECK(status != NULL &&
				    strcmp(status, "failed") == 0 &&
				    json_string_length(json_object_get(data,
				    "error")) > 0);
				printf("# failed %s: %.160s\n", de->d_name,
				    json_string_value(json_object_get(data,
				    "error")));
			}
		}
		json_decref(res);
		json_decref(inputs);
		json_decref(imp);
	}
	closedir(d);
	printf("# ran %d (succeeded %d, failed with a reason %d), refused "
	    "%d\n", nrun, nok, nfail, nrefused);
	CHECK(nrun > 0);
	engine_close(e);
	if (fake != NULL) {
		/* the fake runs until its stdout closes... kill it */
		FILE *k = popen("pkill -f 'tests/fakes/fake_llm.py'", "r");

		if (k != NULL)
			pclose(k);
		pclose(fake);
	}
	return tap_done();
}
