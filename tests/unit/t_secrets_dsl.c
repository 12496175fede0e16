/*
 * t_secrets_dsl.c — the secrets an app's DSL carries (dsl_secrets): which
 * fields are secrets, seal / open / mask / blank, a reference left alone,
 * aad binding, values stored before sealing, the basic key's base64 form;
 * engine_dsl_mask_secrets; dsl_secrets_keep (a draft saved with masked
 * secrets); and secrets_scrub over traces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "tests/unit/tap.h"
#include "tests/unit/tmp_engine.h"

#define ENV_AT(wf, i)	json_object_get(json_array_get(json_object_get(wf, \
			    "environment_variables"), i), "value")
#define NODE_AT(wf, i)	json_object_get(json_array_get(json_object_get( \
			    json_object_get(wf, "graph"), "nodes"), i), "data")
#define KEY_AT(wf, i)	json_object_get(json_object_get(json_object_get( \
			    NODE_AT(wf, i), "authorization"), "config"), \
			    "api_key")
#define HDR_AT(wf, i, h) json_object_get(json_object_get(NODE_AT(wf, i), \
			    "headers"), h)

static const char doc_text[] =
    "{\"environment_variables\": ["
    " {\"name\": \"k\", \"value_type\": \"secret\", \"value\": \"sk-env-1\"},"
    " {\"name\": \"plain\", \"value_type\": \"string\", \"value\": \"hi\"},"
    " {\"name\": \"empty\", \"value_type\": \"secret\", \"value\": \"\"},"
    " {\"name\": \"num\", \"value_type\": \"secret\", \"value\": 5}],"
    " \"graph\": {\"nodes\": ["
    "  {\"id\": \"h1\", \"data\": {\"type\": \"http-request\","
    "   \"authorization\": {\"type\": \"api-key\", \"config\": {\"type\":"
    "   \"bearer\", \"api_key\": \"key-bearer\"}}}},"
    "  {\"id\": \"h2\", \"data\": {\"type\": \"http-request\","
    "   \"authorization\": {\"type\": \"api-key\", \"config\": {\"type\":"
    "   \"basic\", \"api_key\": \"bob:pw-basic\"}}}},"
    "  {\"id\": \"h3\", \"data\": {\"type\": \"http-request\","
    "   \"authorization\": {\"type\": \"api-key\", \"config\": {\"type\":"
    "   \"custom\", \"header\": \"X-Key\", \"api_key\": \" {{#env.k#}} \"}}}},"
    "  {\"id\": \"h4\", \"data\": {\"type\": \"http-request\","
    "   \"authorization\": {\"type\": \"no-auth\", \"config\": null}}},"
    "  {\"id\": \"t1\", \"data\": {\"type\": \"tool\", \"headers\":"
    "   {\"Authorization\": \"Bearer mcp-tok\"}}},"
    "  {\"id\": \"x\", \"data\": {\"type\": \"code\", \"headers\":"
    "   {\"A\": \"not-a-secret\"}, \"api_key\": \"nor-this\"}},"
    "  {\"id\": \"h5\", \"data\": {\"type\": \"http-request\","
    "   \"authorization\": {\"type\": \"api-key\", \"config\": {\"type\":"
    "   \"bearer\", \"api_key\": \"a {{#env.k#}} b\"}}}}"
    " ]}}";

static int
sealed(const json_t *v)
{
	return json_is_string(v) && strncmp(json_string_value(v), "v1:", 3) ==
	    0;
}

static void
test_fields(struct engine *e)
{
	json_t	*wf = json_loads(doc_text, 0, NULL), *orig, *found, *w2;
	char	 err[ENGINE_ERRMAX], *dump;

	orig = json_deep_copy(wf);
	CHECK(dsl_secrets(e, wf, DSL_SECRET_SEAL, NULL, err) == 0);
	/* Secrets are sealed, everything else is as it was. */
	CHECK(sealed(ENV_AT(wf, 0)));
	CHECK_STR(json_string_value(ENV_AT(wf, 1)), "hi");
	CHECK_STR(json_string_value(ENV_AT(wf, 2)), "");
	CHECK(json_integer_value(ENV_AT(wf, 3)) == 5);
	CHECK(sealed(KEY_AT(wf, 0)));
	CHECK(sealed(KEY_AT(wf, 1)));
	CHECK_STR(json_string_value(KEY_AT(wf, 2)), " {{#env.k#}} ");
	CHECK(sealed(HDR_AT(wf, 4, "Authorization")));
	CHECK_STR(json_string_value(HDR_AT(wf, 5, "A")), "not-a-secret");
	CHECK(sealed(KEY_AT(wf, 6)));	/* text around a reference */
	dump = json_dumps(wf, 0);
	CHECK(dump != NULL && strstr(dump, "sk-env-1") == NULL &&
	    strstr(dump, "key-bearer") == NULL &&
	    strstr(dump, "pw-basic") == NULL &&
	    strstr(dump, "mcp-tok") == NULL);
	free(dump);

	/* Open: back to the original, each secret listed, longest first. */
	w2 = json_deep_copy(wf);
	found = json_array();
	CHECK(dsl_secrets(e, wf, DSL_SECRET_OPEN, found, err) == 0);
	CHECK(json_equal(wf, orig));
	/* "bob:pw-basic" also as base64 "Ym9iOnB3LWJhc2lj" */
	CHECK_INT((int)json_array_size(found), 6);
	CHECK_STR(json_string_value(json_array_get(found, 0)),
	    "Ym9iOnB3LWJhc2lj");
	CHECK_STR(json_string_value(json_array_get(found, 5)), "sk-env-1");
	json_decref(found);

	/* Mask and blank; an empty secret stays empty. */
	CHECK(dsl_secrets(e, w2, DSL_SECRET_MASK, NULL, err) == 0);
	CHECK_STR(json_string_value(ENV_AT(w2, 0)), ENGINE_SECRET_MASK);
	CHECK_STR(json_string_value(ENV_AT(w2, 2)), "");
	CHECK_STR(json_string_value(KEY_AT(w2, 1)), ENGINE_SECRET_MASK);
	CHECK_STR(json_string_value(KEY_AT(w2, 2)), " {{#env.k#}} ");
	CHECK_STR(json_string_value(HDR_AT(w2, 4, "Authorization")),
	    ENGINE_SECRET_MASK);
	CHECK(dsl_secrets(e, wf, DSL_SECRET_BLANK, NULL, err) == 0);
	CHECK_STR(json_string_value(ENV_AT(wf, 0)), "");
	CHECK_STR(json_string_value(KEY_AT(wf, 0)), "");
	CHECK_STR(json_string_value(KEY_AT(wf, 2)), " {{#env.k#}} ");
	CHECK_STR(json_string_value(HDR_AT(wf, 4, "Authorization")), "");
	CHECK_STR(json_string_value(ENV_AT(wf, 1)), "hi");
	json_decref(w2);
	json_decref(wf);
	json_decref(orig);
}

static void
test_binding(struct engine *e)
{
	json_t	*wf = json_loads(doc_text, 0, NULL), *found = json_array();
	json_t	*v;
	char	 err[ENGINE_ERRMAX];

	/* Stored before sealing: open takes the plain value as it is. */
	CHECK(dsl_secrets(e, wf, DSL_SECRET_OPEN, found, err) == 0);
	CHECK_STR(json_string_value(ENV_AT(wf, 0)), "sk-env-1");
	CHECK_INT((int)json_array_size(found), 6);

	/* A sealed value moved to another variable does not open. */
	CHECK(dsl_secrets(e, wf, DSL_SECRET_SEAL, NULL, err) == 0);
	v = json_array_get(json_object_get(wf, "environment_variables"), 0);
	json_object_set_new(v, "name", json_string("renamed"));
	CHECK_INT(dsl_secrets(e, wf, DSL_SECRET_OPEN, NULL, err),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "does not decrypt") != NULL);
	CHECK(strstr(err, "sk-env-1") == NULL);

	/* Not a workflow: nothing to do. */
	CHECK(dsl_secrets(e, NULL, DSL_SECRET_SEAL, NULL, err) == 0);
	CHECK(dsl_secrets(e, json_array_get(found, 0), DSL_SECRET_MASK, NULL,
	    err) == 0);
	json_decref(found);
	json_decref(wf);
}

static void
test_mask_public(void)
{
	json_t	*doc = json_pack("{s:s,s:o}", "version", "0.6.0", "workflow",
		    json_loads(doc_text, 0, NULL));

	CHECK(engine_dsl_mask_secrets(doc) == 0);
	CHECK_STR(json_string_value(ENV_AT(json_object_get(doc, "workflow"),
	    0)), ENGINE_SECRET_MASK);
	CHECK(engine_dsl_mask_secrets(NULL) == 0);	/* chat apps: no wf */
	json_decref(doc);
}

/*
 * A workflow sent back masked: each mask takes the stored value at the
 * same place (by variable name, by node id), a new value stays, a mask
 * with nothing stored at its place becomes "".
 */
static void
test_keep(void)
{
	json_t	*old = json_loads(doc_text, 0, NULL);
	json_t	*wf = json_loads(doc_text, 0, NULL);
	json_t	*doc = json_pack("{s:O}", "workflow", wf);
	json_t	*env;

	CHECK(engine_dsl_mask_secrets(doc) == 0);
	CHECK_STR(json_string_value(KEY_AT(wf, 0)), ENGINE_SECRET_MASK);
	json_object_set_new(json_object_get(json_object_get(NODE_AT(wf, 1),
	    "authorization"), "config"), "api_key", json_string("new:pw"));
	env = json_array_get(json_object_get(wf, "environment_variables"), 0);
	json_object_set_new(env, "name", json_string("renamed"));
	CHECK(dsl_secrets_keep(wf, old) == 0);
	CHECK_STR(json_string_value(ENV_AT(wf, 0)), "");
	CHECK_STR(json_string_value(KEY_AT(wf, 0)), "key-bearer");
	CHECK_STR(json_string_value(KEY_AT(wf, 1)), "new:pw");
	CHECK_STR(json_string_value(KEY_AT(wf, 2)), " {{#env.k#}} ");
	CHECK_STR(json_string_value(HDR_AT(wf, 4, "Authorization")),
	    "Bearer mcp-tok");
	CHECK_STR(json_string_value(HDR_AT(wf, 5, "A")), "not-a-secret");
	json_decref(doc);
	json_decref(wf);
	json_decref(old);
}

static void
test_scrub(void)
{
	json_t	*secrets = json_pack("[s,s,s]", "sk-secret-long", "sk-secret",
		    "abc");
	json_t	*v, *out, *shared;

	/* Nothing to mask: v itself comes back. */
	v = json_pack("{s:s,s:[i,s]}", "a", "hello", "b", 1, "world");
	out = secrets_scrub(secrets, json_incref(v));
	CHECK(out == v);
	json_decref(out);
	json_decref(v);

	/* Every occurrence, the longest first, deep inside; a short secret
	 * (under 4 bytes) is not looked for; the original is untouched. */
	shared = json_string("x sk-secret-long y sk-secret abc");
	v = json_pack("{s:{s:[O]},s:s,s:i}", "outputs", "body", shared,
	    "t", "sk-secretsk-secret", "n", 7);
	out = secrets_scrub(secrets, json_incref(v));
	CHECK(out != NULL && out != v);
	CHECK_STR(json_string_value(json_array_get(json_object_get(
	    json_object_get(out, "outputs"), "body"), 0)),
	    "x [__HIDDEN__] y [__HIDDEN__] abc");
	CHECK_STR(json_string_value(json_object_get(out, "t")),
	    "[__HIDDEN__][__HIDDEN__]");
	CHECK(json_integer_value(json_object_get(out, "n")) == 7);
	CHECK_STR(json_string_value(shared),
	    "x sk-secret-long y sk-secret abc");
	json_decref(out);
	json_decref(v);
	json_decref(shared);

	/* No secrets, or NULL: as given. */
	v = json_string("sk-secret");
	CHECK(secrets_scrub(NULL, v) == v);
	json_decref(v);
	CHECK(secrets_scrub(secrets, NULL) == NULL);
	json_decref(secrets);
}

int
main(void)
{
	static struct conf	 c;
	struct engine		*e = NULL;
	char			 dir[256];

	conf_defaults(&c);
	log_init(CONF_LOG_ERROR, NULL);
	if (tmp_engine_open("t_secrets_dsl", &c, dir, sizeof(dir), &e) != 0)
		return tap_done();
	test_fields(e);
	test_binding(e);
	test_mask_public();
	test_keep();
	test_scrub();
	tmp_engine_close(e, dir);
	return tap_done();
}
