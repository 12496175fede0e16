/*
 * t_llm_providers.c — provider entries: Dify's provider names, resolution
 * (stored, environment, built-in, catch-all), the "cannot be served"
 * messages, model lists, the console's masked listing, mask-keeps-value
 * updates, validation, delete, test against tests/fakes/fake_llm.py, and
 * that no key is stored or listed in the clear.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/t_llm_fake.h"

static void
test_names(void)
{
	char buf[128];

	CHECK_STR(llm_provider_name("langgenius/openai/openai", buf,
	    sizeof(buf)), "openai");
	CHECK_STR(llm_provider_name("langgenius/ollama/ollama", buf,
	    sizeof(buf)), "ollama");
	CHECK_STR(llm_provider_name("openai_api_compatible", buf,
	    sizeof(buf)), "openai_api_compatible");
	CHECK_STR(llm_provider_name("langgenius/openai_api_compatible/"
	    "openai_api_compatible", buf, sizeof(buf)),
	    "openai_api_compatible");
	CHECK_STR(llm_provider_name(NULL, buf, sizeof(buf)), "");
}

static void
test_resolve(void)
{
	struct llm_endpoint	 ep;
	struct llm_response	 r;
	struct llm_request	 rq;
	char			 err[ENGINE_ERRMAX];

	memset(&ep, 0, sizeof(ep));
	/* Nothing configured. */
	CHECK_INT(llm_provider_resolve(fk_eng, "volcengine_maas", "m", err,
	    &ep), ENGINE_EINVAL);
	CHECK(strncmp(err, "no model provider 'volcengine_maas' is "
	    "configured: add it in Settings > Model Providers", 80) == 0);
	CHECK(strstr(err, "llm.base_url") != NULL);
	CHECK_INT(llm_provider_resolve(fk_eng, "langgenius/openai/openai",
	    "gpt-4o", err, &ep), ENGINE_EINVAL);
	CHECK(strstr(err, "'openai'") != NULL);
	CHECK(strstr(err, "OPENAI_API_KEY") != NULL);
	CHECK_INT(llm_provider_resolve(fk_eng, "", "m", err, &ep),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "model.provider") != NULL);

	/* llm_chat says the same, before any request. */
	memset(&rq, 0, sizeof(rq));
	memset(&r, 0, sizeof(r));
	rq.model = "doubao";
	CHECK_INT(llm_chat(fk_eng, "volcengine_maas", &rq, err, &r),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "volcengine_maas") != NULL);

	/* Ollama needs nothing. */
	CHECK(llm_provider_resolve(fk_eng, "langgenius/ollama/ollama",
	    "llama3", err, &ep) == 0);
	CHECK_STR(ep.base_url, "http://127.0.0.1:11434/v1");
	CHECK_STR(ep.protocol, "openai");
	CHECK_STR(ep.api_key, "");
	CHECK_STR(ep.source, "default");
	llm_endpoint_release(&ep);

	/* The environment configures built-in entries. */
	setenv("OPENAI_API_KEY", "sk-env-111111", 1);
	CHECK(llm_provider_resolve(fk_eng, "langgenius/openai/openai",
	    "gpt-4o", err, &ep) == 0);
	CHECK_STR(ep.name, "openai");
	CHECK_STR(ep.base_url, "https://api.openai.com/v1");
	CHECK_STR(ep.api_key, "sk-env-111111");
	CHECK_STR(ep.source, "environment");
	llm_endpoint_release(&ep);
	setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1", 1);
	CHECK(llm_provider_resolve(fk_eng, "openai", "m", err, &ep) == 0);
	CHECK_STR(ep.base_url, "http://127.0.0.1:8000/v1");
	llm_endpoint_release(&ep);
	setenv("ANTHROPIC_API_KEY", "sk-ant-env", 1);
	CHECK(llm_provider_resolve(fk_eng, "langgenius/anthropic/anthropic",
	    "claude", err, &ep) == 0);
	CHECK_STR(ep.protocol, "anthropic");
	CHECK_STR(ep.base_url, "https://api.anthropic.com");
	llm_endpoint_release(&ep);
	setenv("DEEPSEEK_API_KEY", "sk-ds", 1);
	CHECK(llm_provider_resolve(fk_eng, "deepseek", "deepseek-chat", err,
	    &ep) == 0);
	CHECK_STR(ep.base_url, "https://api.deepseek.com/v1");
	llm_endpoint_release(&ep);
	unsetenv("OPENAI_BASE_URL");
	unsetenv("ANTHROPIC_API_KEY");
	unsetenv("DEEPSEEK_API_KEY");

	/* The catch-all from the config file. */
	snprintf(fk_conf.llm_base_url, sizeof(fk_conf.llm_base_url),
	    "http://127.0.0.1:9/v1");
	snprintf(fk_conf.llm_api_key, sizeof(fk_conf.llm_api_key),
	    "sk-conf");
	CHECK(llm_provider_resolve(fk_eng, "volcengine_maas", "m", err,
	    &ep) == 0);
	CHECK_STR(ep.name, "*");
	CHECK_STR(ep.base_url, "http://127.0.0.1:9/v1");
	CHECK_STR(ep.api_key, "sk-conf");
	CHECK_STR(ep.source, "config");
	llm_endpoint_release(&ep);
	/* A configured built-in still wins over the catch-all. */
	CHECK(llm_provider_resolve(fk_eng, "openai", "m", err, &ep) == 0);
	CHECK_STR(ep.name, "openai");
	llm_endpoint_release(&ep);
}

static json_t *
find_entry(json_t *list, const char *name)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(json_object_get(list, "data"), i, v)
		if (strcmp(json_string_value(json_object_get(v, "name")),
		    name) == 0)
			return v;
	return NULL;
}

/* The stored settings record as raw bytes (malloc'd). */
static char *
raw_record(void)
{
	struct store_txn	*t = NULL;
	const void		*v;
	size_t			 n;
	char			*s = NULL;

	if (store_read_begin(engine_store(fk_eng), &t) != 0)
		return NULL;
	if (store_get(t, STORE_DB_SETTINGS, "model_providers", 15, &v, &n) ==
	    0 && (s = malloc(n + 1)) != NULL) {
		memcpy(s, v, n);
		s[n] = '\0';
	}
	store_read_end(t);
	return s;
}

static void
test_console(void)
{
	struct llm_endpoint	 ep;
	json_t			*in, *out = NULL, *list = NULL, *v;
	char			 err[ENGINE_ERRMAX], *raw, *dump;

	memset(&ep, 0, sizeof(ep));
	/* Create: the key is encrypted at rest and masked on read. */
	in = json_pack("{s:s, s:s, s:s, s:[s, s]}", "protocol", "openai",
	    "base_url", "http://127.0.0.1:8000/v1", "api_key",
	    "sk-vllm-secret-42", "models", "m1", "m2");
	CHECK(engine_model_provider_set(fk_eng, "my-vllm", in, err, &out) ==
	    0);
	CHECK_STR(json_string_value(json_object_get(out, "api_key")),
	    ENGINE_SECRET_MASK);
	CHECK_STR(json_string_value(json_object_get(out, "source")),
	    "settings");
	CHECK_INT(json_array_size(json_object_get(out, "models")), 2);
	json_decref(out);
	json_decref(in);
	raw = raw_record();
	CHECK(raw != NULL && strstr(raw, "sk-vllm-secret-42") == NULL);
	CHECK(raw != NULL && strstr(raw, "\"v1:") != NULL);
	free(raw);
	CHECK(engine_model_provider_list(fk_eng, &list) == 0);
	dump = json_dumps(list, 0);
	CHECK(dump != NULL && strstr(dump, "sk-vllm-secret-42") == NULL);
	CHECK(dump != NULL && strstr(dump, "sk-env-111111") == NULL);
	CHECK(dump != NULL && strstr(dump, "sk-conf") == NULL);
	free(dump);
	CHECK_STR(json_string_value(json_object_get(json_array_get(
	    json_object_get(list, "data"), 0), "name")), "my-vllm");
	v = find_entry(list, "openai");
	CHECK(v != NULL && json_is_true(json_object_get(v, "configured")));
	CHECK_STR(json_string_value(json_object_get(v, "api_key")),
	    ENGINE_SECRET_MASK);
	CHECK_STR(json_string_value(json_object_get(v, "source")),
	    "environment");
	v = find_entry(list, "anthropic");
	CHECK(v != NULL && json_is_false(json_object_get(v, "configured")));
	CHECK_STR(json_string_value(json_object_get(v, "api_key")), "");
	v = find_entry(list, "*");
	CHECK_STR(json_string_value(json_object_get(v, "source")), "config");
	json_decref(list);

	/* Resolution honours the model list. */
	CHECK(llm_provider_resolve(fk_eng, "my-vllm", "m2", err, &ep) == 0);
	CHECK_STR(ep.api_key, "sk-vllm-secret-42");
	llm_endpoint_release(&ep);
	CHECK_INT(llm_provider_resolve(fk_eng, "my-vllm", "m3", err, &ep),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "does not serve model 'm3'") != NULL);

	/* The mask sent back keeps the key; so does no api_key at all. */
	in = json_pack("{s:s, s:s}", "base_url", "http://127.0.0.1:8001/v1",
	    "api_key", ENGINE_SECRET_MASK);
	CHECK(engine_model_provider_set(fk_eng, "my-vllm", in, err, &out) ==
	    0);
	json_decref(out);
	json_decref(in);
	CHECK(llm_provider_lookup(fk_eng, "my-vllm", err, &ep) == 0);
	CHECK_STR(ep.api_key, "sk-vllm-secret-42");
	CHECK_STR(ep.base_url, "http://127.0.0.1:8001/v1");
	llm_endpoint_release(&ep);
	in = json_pack("{s:s}", "base_url", "http://127.0.0.1:8002/v1");
	CHECK(engine_model_provider_set(fk_eng, "my-vllm", in, err, &out) ==
	    0);
	json_decref(out);
	json_decref(in);
	CHECK(llm_provider_lookup(fk_eng, "my-vllm", err, &ep) == 0);
	CHECK_STR(ep.api_key, "sk-vllm-secret-42");
	llm_endpoint_release(&ep);
	/* "" removes it. */
	in = json_pack("{s:s, s:s}", "base_url", "http://127.0.0.1:8002/v1",
	    "api_key", "");
	CHECK(engine_model_provider_set(fk_eng, "my-vllm", in, err, &out) ==
	    0);
	CHECK_STR(json_string_value(json_object_get(out, "api_key")), "");
	json_decref(out);
	json_decref(in);
	CHECK(llm_provider_lookup(fk_eng, "my-vllm", err, &ep) == 0);
	CHECK_STR(ep.api_key, "");
	llm_endpoint_release(&ep);

	/* The mask on a built-in entry keeps the key the environment gave. */
	in = json_pack("{s:s, s:s}", "base_url", "https://api.openai.com/v1",
	    "api_key", ENGINE_SECRET_MASK);
	CHECK(engine_model_provider_set(fk_eng, "openai", in, err, &out) ==
	    0);
	json_decref(out);
	json_decref(in);
	unsetenv("OPENAI_API_KEY");
	CHECK(llm_provider_lookup(fk_eng, "openai", err, &ep) == 0);
	CHECK_STR(ep.source, "settings");
	CHECK_STR(ep.api_key, "sk-env-111111");
	llm_endpoint_release(&ep);

	/* A stored catch-all replaces the config file's. */
	in = json_pack("{s:s, s:s}", "base_url", "http://127.0.0.1:7/v1",
	    "api_key", "sk-star");
	CHECK(engine_model_provider_set(fk_eng, "*", in, err, &out) == 0);
	json_decref(out);
	json_decref(in);
	CHECK(llm_provider_resolve(fk_eng, "tongyi", "qwen", err, &ep) == 0);
	CHECK_STR(ep.base_url, "http://127.0.0.1:7/v1");
	CHECK_STR(ep.api_key, "sk-star");
	llm_endpoint_release(&ep);

	/* Validation. */
	in = json_pack("{s:s}", "base_url", "http://127.0.0.1:7/v1");
	CHECK_INT(engine_model_provider_set(fk_eng, "a/b", in, err, &out),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "name") != NULL);
	json_decref(in);
	in = json_pack("{s:s}", "base_url", "ftp://127.0.0.1/");
	CHECK_INT(engine_model_provider_set(fk_eng, "x", in, err, &out),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "base_url") != NULL);
	json_decref(in);
	in = json_pack("{s:s, s:s}", "base_url", "http://h/v1", "protocol",
	    "grpc");
	CHECK_INT(engine_model_provider_set(fk_eng, "x", in, err, &out),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "protocol") != NULL);
	json_decref(in);
	in = json_pack("{s:s, s:s}", "base_url", "http://h/v1", "models",
	    "m1");
	CHECK_INT(engine_model_provider_set(fk_eng, "x", in, err, &out),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "models") != NULL);
	json_decref(in);
	in = json_pack("{s:s, s:i}", "base_url", "http://h/v1", "api_key", 5);
	CHECK_INT(engine_model_provider_set(fk_eng, "x", in, err, &out),
	    ENGINE_EINVAL);
	json_decref(in);

	/* Delete. */
	CHECK(engine_model_provider_delete(fk_eng, "*") == 0);
	CHECK(engine_model_provider_delete(fk_eng, "my-vllm") == 0);
	CHECK_INT(engine_model_provider_delete(fk_eng, "my-vllm"),
	    ENGINE_ENOTFOUND);
	CHECK_INT(engine_model_provider_delete(fk_eng, "nope"),
	    ENGINE_ENOTFOUND);
	CHECK_INT(llm_provider_lookup(fk_eng, "my-vllm", err, &ep),
	    ENGINE_ENOTFOUND);
}

static void
test_provider_test(void)
{
	json_t	*in, *out = NULL, *reqs;
	char	 err[ENGINE_ERRMAX], url[128];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1", fk_port);
	in = json_pack("{s:s, s:s, s:[s]}", "base_url", url, "api_key",
	    "sk-fake-key-77", "models", "fake-model");
	CHECK(engine_model_provider_set(fk_eng, "fake", in, err, &out) == 0);
	json_decref(out);
	json_decref(in);
	fk_script("[]");
	in = json_object();
	CHECK(engine_model_provider_test(fk_eng, "fake", in, err, &out) == 0);
	CHECK_STR(json_string_value(json_object_get(out, "result")),
	    "success");
	CHECK_STR(json_string_value(json_object_get(out, "model")),
	    "fake-model");
	CHECK_STR(json_string_value(json_object_get(out, "text")),
	    "echo: Say OK.");
	json_decref(out);
	json_decref(in);
	reqs = fk_requests();
	CHECK_STR(fk_header(reqs, 0, "authorization"),
	    "Bearer sk-fake-key-77");
	CHECK_INT(json_integer_value(json_object_get(fk_body(reqs, 0),
	    "max_tokens")), 16);
	json_decref(reqs);

	/* The mask in an update, then a real request: the same key. */
	in = json_pack("{s:s, s:s, s:[s]}", "base_url", url, "api_key",
	    ENGINE_SECRET_MASK, "models", "fake-model");
	CHECK(engine_model_provider_set(fk_eng, "fake", in, err, &out) == 0);
	json_decref(out);
	json_decref(in);
	fk_script("{\"api_key\": \"sk-fake-key-77\", \"responses\": []}");
	in = json_pack("{s:s}", "model", "other-model");
	CHECK(engine_model_provider_test(fk_eng, "fake", in, err, &out) == 0);
	CHECK_STR(json_string_value(json_object_get(out, "model")),
	    "other-model");
	json_decref(out);
	json_decref(in);

	/* A wrong key: the provider's message, never the key. */
	fk_script("{\"api_key\": \"sk-something-else\", \"responses\": []}");
	in = json_object();
	CHECK_INT(engine_model_provider_test(fk_eng, "fake", in, err, &out),
	    ENGINE_EFETCH);
	CHECK_STR(err, "fake: 401 Incorrect API key provided");
	CHECK_INT(engine_model_provider_test(fk_eng, "nope", in, err, &out),
	    ENGINE_ENOTFOUND);
	json_decref(in);

	/* A loopback endpoint is reachable although app content may not
	 * reach private addresses (http.allow_private is false). */
	CHECK_INT(fk_conf.http_allow_private, 0);
}

int
main(void)
{
	if (fk_setup(NULL, NULL, NULL) == 0) {
		test_names();
		test_resolve();
		test_console();
		test_provider_test();
	}
	fk_cleanup();
	return tap_done();
}
