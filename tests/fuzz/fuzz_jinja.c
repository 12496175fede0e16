/*
 * fuzz_jinja.c — the Jinja2 engine on arbitrary templates: the input is
 * the template, rendered against a fixed set of variables with small
 * limits. Any result must be 0 with output within the output limit, or
 * one of ENGINE_EINVAL / ENGINE_ELIMIT / ENGINE_ENOMEM with a message;
 * abort() otherwise. Crashes and leaks are the sanitizers' to report.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char vars_json[] =
    "{\"s\": \"Hello World\", \"n\": null, \"i\": 7, \"f\": 2.5,"
    " \"b\": true, \"l\": [3, 1, 2], \"e\": [], \"d\": {},"
    " \"u\": \"Dify 工作流 <b>&amp;</b>\","
    " \"users\": [{\"name\": \"Ann\", \"age\": 31, \"tags\": [\"a\"]},"
    " {\"name\": \"bob\", \"age\": 25, \"tags\": []}],"
    " \"obj\": {\"k\": \"v\", \"items\": [1, 2], \"x\": {\"y\": [null]}},"
    " \"arg1\": [\"p\", \"q\"], \"text\": \"t\"}";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t		*vars;
	struct jinja_limits	 lim;
	char			 err[ENGINE_ERRMAX];
	char			*out = NULL;
	size_t			 len = 0, i, chars = 0;
	int			 rc;

	if (vars == NULL && (vars = json_loads(vars_json, 0, NULL)) == NULL)
		abort();
	jinja_limits_default(&lim);
	lim.max_template = 1 << 16;
	lim.max_output = 20000;
	lim.max_loop = 2000;
	lim.max_value = 1 << 18;
	lim.max_steps = 200000;
	err[0] = '\0';
	rc = jinja_render((const char *)data, size, vars, &lim, err, &out,
	    &len);
	if (rc == 0) {
		if (out == NULL)
			abort();
		for (i = 0; i < len; i++)
			chars += ((unsigned char)out[i] & 0xC0) != 0x80;
		if (chars > lim.max_output || out[len] != '\0')
			abort();
	} else {
		if (rc != ENGINE_EINVAL && rc != ENGINE_ELIMIT &&
		    rc != ENGINE_ENOMEM)
			abort();
		if (out != NULL || err[0] == '\0')
			abort();
	}
	free(out);
	return 0;
}
