/*
 * t_llm_fake.h — shared by the t_llm_* tests: an engine in a temporary
 * data directory with short retry waits, and tests/fakes/fake_llm.py run
 * as a child process, scripted and read back over HTTP.
 *
 * Run from the repository root (tests/run-all.sh does), or set
 * FLOWCGI_SRC to it.
 */
#ifndef FLOWCGI_T_LLM_FAKE_H
#define FLOWCGI_T_LLM_FAKE_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/llm/llm.h"
#include "tests/unit/fake_proc.h"
#include "tests/unit/tap.h"

static struct conf	 fk_conf;
static struct engine	*fk_eng;
static char		 fk_dir[64];
static pid_t		 fk_pid = -1;
static int		 fk_port;

/* Environment variables that would configure built-in providers. */
static const char *const fk_env[] = {
	"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY",
	"ANTHROPIC_BASE_URL", "OLLAMA_API_KEY", "OLLAMA_BASE_URL",
	"DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "SILICONFLOW_API_KEY",
	"SILICONFLOW_BASE_URL", "GROQ_API_KEY", "GROQ_BASE_URL",
	"OPENROUTER_API_KEY", "OPENROUTER_BASE_URL", "MOONSHOT_API_KEY",
	"MOONSHOT_BASE_URL", "GEMINI_API_KEY", "GEMINI_BASE_URL", NULL,
};

/* Opens an engine in a fresh directory; retries wait 10 ms, at most 50. */
static int
fk_engine_open(void)
{
	char	err[ENGINE_ERRMAX];
	size_t	i;

	for (i = 0; fk_env[i] != NULL; i++)
		unsetenv(fk_env[i]);
	conf_defaults(&fk_conf);
	fk_conf.llm_backoff_ms = 10;
	fk_conf.llm_max_backoff_ms = 50;
	fk_conf.llm_retries = 3;
	fk_conf.sync = 0;
	snprintf(fk_dir, sizeof(fk_dir), "/tmp/t_llm.XXXXXX");
	if (mkdtemp(fk_dir) == NULL)
		return -1;
	snprintf(fk_conf.data_dir, sizeof(fk_conf.data_dir), "%s", fk_dir);
	log_init(CONF_LOG_WARN, NULL);
	if (engine_open(&fk_conf, err, &fk_eng) != 0) {
		printf("# engine_open: %s\n", err);
		return -1;
	}
	return 0;
}

/* Starts the fake; sets fk_port. Returns 0 or -1. */
static int
fk_start(void)
{
	fk_pid = fake_proc_start("llm", &fk_port);
	return fk_pid > 0 ? 0 : -1;
}

static void
fk_stop(void)
{
	fake_proc_stop(&fk_pid);
}

/* One plain HTTP exchange with the fake; *body malloc'd or NULL. */
static long
fk_http(const char *method, const char *path, const char *body, char **out)
{
	struct outbound_req	rq;
	struct outbound_resp	rs;
	char			url[256], err[ENGINE_ERRMAX];
	long			status = -1;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", fk_port, path);
	memset(&rq, 0, sizeof(rq));
	rq.method = method;
	rq.url = url;
	rq.body = body;
	rq.body_len = body != NULL ? strlen(body) : 0;
	rq.trusted = 1;
	if (outbound_fetch(fk_eng, &rq, err, &rs) != 0) {
		printf("# fake %s %s: %s\n", method, path, err);
		return -1;
	}
	status = rs.status;
	if (out != NULL) {
		*out = rs.body;
		rs.body = NULL;
	}
	outbound_resp_release(&rs);
	return status;
}

/* Replaces the fake's script (JSON text) and forgets its requests. */
static void
fk_script(const char *json)
{
	if (fk_http("POST", "/_script", json, NULL) != 200)
		printf("# fake: the script was not taken\n");
}

/* Every request the fake received since the last script (new ref). */
static json_t *
fk_requests(void)
{
	char	*b = NULL;
	json_t	*j = NULL;

	if (fk_http("GET", "/_requests", NULL, &b) == 200)
		j = json_loads(b, 0, NULL);
	free(b);
	return j != NULL ? j : json_array();
}

/* The body of recorded request i (borrowed from reqs). */
static json_t *
fk_body(json_t *reqs, size_t i)
{
	return json_object_get(json_array_get(reqs, i), "body");
}

static const char *
fk_header(json_t *reqs, size_t i, const char *name)
{
	return json_string_value(json_object_get(json_object_get(
	    json_array_get(reqs, i), "headers"), name));
}

/* Stores provider entry name at the fake. */
static int
fk_provider(const char *name, const char *protocol, const char *key)
{
	char	 url[128], err[ENGINE_ERRMAX];
	json_t	*in, *out = NULL;
	int	 rc;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", fk_port,
	    strcmp(protocol, "openai") == 0 ? "/v1" : "");
	in = json_pack("{s:s, s:s, s:s}", "protocol", protocol, "base_url",
	    url, "api_key", key);
	rc = engine_model_provider_set(fk_eng, name, in, err, &out);
	if (rc != 0)
		printf("# provider %s: %s\n", name, err);
	json_decref(in);
	json_decref(out);
	return rc;
}

/*
 * Opens the engine and starts the fake, then, unless name is NULL, stores
 * provider entry name at it. Each step is a check; 0 when all passed.
 */
static int
fk_setup(const char *name, const char *protocol, const char *key)
{
	if (!CHECK(fk_engine_open() == 0) || !CHECK(fk_start() == 0))
		return -1;
	if (name != NULL && !CHECK(fk_provider(name, protocol, key) == 0))
		return -1;
	return 0;
}

/* Collects streamed deltas: text pieces in order, reasoning apart. */
struct fk_deltas {
	char	text[4096];
	char	reasoning[1024];
	int	ntext;
	int	nreasoning;
	int	stop_after;	/* >0: stop after this many text deltas */
	double	first;		/* llm_clock() of the first delta */
};

static __attribute__((unused)) int
fk_on_delta(void *arg, enum llm_delta kind, const char *s, size_t n)
{
	struct fk_deltas	*d = arg;
	char			*buf = kind == LLM_DELTA_TEXT ? d->text :
				    d->reasoning;
	size_t			 cap = kind == LLM_DELTA_TEXT ?
				    sizeof(d->text) : sizeof(d->reasoning);
	size_t			 l = strlen(buf);

	if (d->first == 0)
		d->first = llm_clock();
	if (l + n + 2 < cap) {
		if (kind == LLM_DELTA_TEXT && l > 0)
			buf[l++] = '|';	/* show the piece boundaries */
		memcpy(buf + l, s, n);
		buf[l + n] = '\0';
	}
	if (kind == LLM_DELTA_TEXT)
		d->ntext++;
	else
		d->nreasoning++;
	return d->stop_after > 0 && d->ntext >= d->stop_after;
}

/* Makes rq a streamed request whose deltas d collects (zeroed). */
static __attribute__((unused)) void
fk_stream(struct llm_request *rq, struct fk_deltas *d)
{
	memset(d, 0, sizeof(*d));
	rq->stream = 1;
	rq->on_delta = fk_on_delta;
	rq->arg = d;
}

/*
 * Offers rq the two tools the fake's tool-call scripts name: get_weather
 * (described, with parameters) and get_time (neither).
 */
static __attribute__((unused)) void
fk_tools(struct llm_request *rq, struct llm_tool tools[2],
    const json_t *parameters)
{
	memset(tools, 0, 2 * sizeof(*tools));
	tools[0].name = "get_weather";
	tools[0].description = "Weather of a city";
	tools[0].parameters = parameters;
	tools[1].name = "get_time";
	rq->tools = tools;
	rq->ntools = 2;
}

static void
fk_cleanup(void)
{
	char cmd[128];

	fk_stop();
	engine_close(fk_eng);
	fk_eng = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fk_dir);
	if (fk_dir[0] != '\0' && system(cmd) != 0)
		printf("# could not remove %s\n", fk_dir);
}

#endif
