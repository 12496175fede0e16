/*
 * t_engine_corpus_run.c — every app of tests/unit/dsl_files.h (the
 * project's own DSL files, then the shared corpus when it is here) runs
 * with inputs made from its start node against the fake model server and
 * ends succeeded, partial or failed with a message; apps that need what
 * flowcgi lacks are refused up front with a message naming the node
 * types. Nothing crashes or hangs (each run has a short time limit).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/engine.h"
#include "tests/unit/dsl_files.h"
#include "tests/unit/tap.h"

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

/*
 * Starts tests/fakes/fake_llm.py as a child and reads the port it prints;
 * *pid is the child's (killed by fake_stop). Returns the port or 0.
 */
static int
fake_start(pid_t *pid)
{
	char	buf[32];
	int	pfd[2];
	ssize_t	n;
	size_t	got = 0;

	*pid = -1;
	if (pipe(pfd) != 0)
		return 0;
	if ((*pid = fork()) < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return 0;
	}
	if (*pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execlp("python3", "python3", "tests/fakes/fake_llm.py",
		    (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while (got < sizeof(buf) - 1 && (n = read(pfd[0], buf + got,
	    sizeof(buf) - 1 - got)) > 0) {
		got += (size_t)n;
		if (memchr(buf, '\n', got) != NULL)
			break;
	}
	close(pfd[0]);
	buf[got] = '\0';
	return (int)strtol(buf, NULL, 10);
}

/* Stops the fake that fake_start started (this one only). */
static void
fake_stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

int
main(void)
{
	static struct conf	 c;
	struct engine		*e = NULL;
	struct import_opts	 io;
	struct run_opts		 ro;
	struct dsl_files	 f;
	char			 err[ENGINE_ERRMAX], tmp[] =
				    "/tmp/t_corpus_run.XXXXXX", *text;
	const char		*status, *app_id, *name;
	size_t			 i, len;
	json_t			*imp, *res, *inputs, *data;
	pid_t			 fake;
	int			 nrun = 0, nok = 0, nfail = 0, nrefused = 0;
	int			 rc, port;

	dsl_files_collect(&f, DSL_FILES_YML);
	conf_defaults(&c);
	CHECK(mkdtemp(tmp) != NULL);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", tmp);
	c.sync = 0;
	c.workflow_max_time = 20;
	c.http_connect_timeout = 2;
	c.http_timeout = 5;
	/* Models: every provider name reaches the fake OpenAI server, which
	 * echoes the last user message (tests/fakes/fake_llm.py). */
	if ((port = fake_start(&fake)) > 0)
		snprintf(c.llm_base_url, sizeof(c.llm_base_url),
		    "http://127.0.0.1:%d/v1", port);
	CHECK(c.llm_base_url[0] != '\0');
	CHECK(engine_open(&c, err, &e) == 0);
	for (i = 0; e != NULL && i < f.n; i++) {
		name = f.paths[i];
		if ((text = dsl_files_slurp(name, &len)) == NULL) {
			CHECK(!"DSL file readable");
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
		/* every mode runs, graph or model config */
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
				printf("# %s: rc %d\n", name, rc);
			else
				printf("# refused %s: %.120s\n", name, err);
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
				printf("# failed %s: %.160s\n", name,
				    json_string_value(json_object_get(data,
				    "error")));
			}
		}
		json_decref(res);
		json_decref(inputs);
		json_decref(imp);
	}
	printf("# ran %d (succeeded %d, failed with a reason %d), refused "
	    "%d; %zu of the project's files, %zu of the shared corpus\n",
	    nrun, nok, nfail, nrefused, f.nproject, f.n - f.nproject);
	CHECK(nrun > 0 && nok > 0);
	if (e != NULL)
		engine_close(e);
	fake_stop(fake);
	dsl_files_free(&f);
	return tap_done();
}
