/*
 * fuzz_skill.c — the skill compiler (engine/records/skill.c) on any text: it
 * compiles within the limit, the result is NUL-terminated at the length
 * it reports, a text without "§" comes back unchanged, every reference
 * skill_refs lists is well-formed (no "]" in a part, none empty), and a
 * relative path between two of the input's lines never has an empty
 * part; abort() otherwise.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/records/records.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *
file_cb(void *arg, const char *id)
{
	(void)arg;
	/* a path that itself looks like a tool token now and then */
	if (id[0] == 't')
		return strdup("\xC2\xA7[tool].[p].[n].[u]\xC2\xA7");
	return id[0] == 'm' ? NULL : strdup("./x.md");
}

static char *
tool_cb(void *arg, const char *prov, const char *name, const char *uuid)
{
	(void)arg;
	(void)prov;
	if (uuid[0] == 'd')
		return strdup("");
	if (uuid[0] == 'm')
		return NULL;
	return strdup(name);
}

static void
check_part(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	if (s == NULL || *s == '\0' || strchr(s, ']') != NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct skill_resolver r = { file_cb, tool_cb, NULL };
	const size_t	 max = 1 << 20;
	json_t		*tools, *files, *o;
	char		*out = NULL, *text, *nl, *p;
	size_t		 n = 0, i;
	int		 rc;

	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	rc = skill_compile(text, size, &r, max, &out, &n);
	if (rc == 0) {
		if (out == NULL || n > max || out[n] != '\0')
			abort();
		if (memchr(text, 0xC2, size) == NULL && (n != size ||
		    memcmp(out, text, size) != 0))
			abort();
	} else if (rc != ENGINE_ELIMIT && rc != ENGINE_ENOMEM)
		abort();
	free(out);
	tools = json_array();
	files = json_array();
	if (tools != NULL && files != NULL && skill_refs(text, size, tools,
	    files) == 0) {
		json_array_foreach(tools, i, o) {
			check_part(o, "provider");
			check_part(o, "tool_name");
			check_part(o, "uuid");
		}
		json_array_foreach(files, i, o) {
			check_part(o, "source");
			check_part(o, "asset_id");
		}
	}
	json_decref(tools);
	json_decref(files);
	/* two paths: the first line and the rest */
	if ((nl = strchr(text, '\n')) != NULL) {
		*nl = '\0';
		if ((p = skill_relpath(text, nl + 1)) != NULL) {
			if (strstr(p, "//") != NULL)
				abort();
			free(p);
		}
	}
	free(text);
	return 0;
}
