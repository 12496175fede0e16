/*
 * t_engine_skill.c — the skill compiler (engine/records/skill.c) against what
 * Dify's SkillCompiler / assembler replacers make of the same text: file
 * references, tool groups, single tools (lazy parts), missing and
 * disabled tools, the order of the passes; the references it lists; and
 * relative paths as AppAssetFileTree.relative_path gives them.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/records/records.h"
#include "tests/unit/tap.h"

#define S "\xC2\xA7"	/* § */

/* Files: "a1" is /docs/guide.md, "a2" /skills/x/run.py; others missing. */
static char *
file_cb(void *arg, const char *id)
{
	(void)arg;
	if (strcmp(id, "a1") == 0)
		return strdup("skills/docs/guide.md");
	if (strcmp(id, "a2") == 0)
		return strdup("./run.py");
	return NULL;
}

/* Tools: uuid "off" disabled, "gone..." missing, others "[T:p/name]". */
static char *
tool_cb(void *arg, const char *prov, const char *name, const char *uuid)
{
	char buf[256];

	(void)arg;
	if (strcmp(uuid, "off") == 0)
		return strdup("");
	if (strncmp(uuid, "gone", 4) == 0)
		return NULL;
	snprintf(buf, sizeof(buf), "[T:%s/%s]", prov, name);
	return strdup(buf);
}

static const struct skill_resolver res = { file_cb, tool_cb, NULL };

static void
check(const char *in, const char *want)
{
	char	*out = NULL;
	size_t	 n = 0;
	int	 rc = skill_compile(in, strlen(in), &res, 1 << 20, &out, &n);

	CHECK_INT(rc, 0);
	CHECK_STR(out ? out : "(null)", want);
	CHECK(out == NULL || n == strlen(out));
	free(out);
}

static void
rel(const char *from, const char *to, const char *want)
{
	char *p = skill_relpath(from, to);

	CHECK_STR(p ? p : "(null)", want);
	free(p);
}

int
main(void)
{
	json_t	*tools, *files;
	char	*out;

	/* Text without placeholders is kept as it is. */
	check("", "");
	check("plain [text] with ] and [", "plain [text] with ] and [");
	check("a " S " b", "a " S " b");

	/* Files: the resolver's path; an unknown id "[File not found]". */
	check("see " S "[file].[app].[a1]" S ".", "see skills/docs/guide.md.");
	check(S "[file].[x].[a2]" S S "[file].[x].[nope]" S,
	    "./run.py[File not found]");
	/* empty parts are not a file reference */
	check(S "[file].[].[a1]" S, S "[file].[].[a1]" S);

	/* Single tools: rendered, missing, disabled. */
	check("use " S "[tool].[time].[current_time].[u1]" S " now",
	    "use [T:time/current_time] now");
	check(S "[tool].[p].[n].[gone]" S,
	    "[Tool not found or disabled: gone]");
	check("x" S "[tool].[p].[n].[off]" S "y", "xy");
	/* lazy parts: the uuid runs to the first "]§", across "]" */
	check(S "[tool].[p].[n].[a]b]" S, "[T:p/n]");
	check(S "[tool].[p].[n].[gone]x]" S, "[Tool not found or disabled: "
	    "gone]x]");
	/* a part never holds a NUL (C strings from here on) */
	{
		static const char in[] = S "[tool].[p].[n\0x].[u]" S;

		out = NULL;
		CHECK_INT(skill_compile(in, sizeof(in) - 1, &res, 1 << 20, &out,
		    NULL), 0);
		CHECK(out != NULL && memcmp(out, in, 3) == 0);
		free(out);
	}
	/* not on one line: no match */
	check(S "[tool].[p].[n\n].[u]" S, S "[tool].[p].[n\n].[u]" S);

	/* Groups: joined with ", ", disabled left out, empty group gone. */
	check("[" S "[tool].[time].[a].[u1]" S ", " S "[tool].[time].[b].[u2]"
	    S "]", "[[T:time/a], [T:time/b]]");
	check("[ " S "[tool].[t].[a].[u1]" S "," S "[tool].[t].[b].[off]" S
	    " ]", "[[T:t/a]]");
	check("x [" S "[tool].[t].[a].[off]" S "] y", "x  y");
	check("[" S "[tool].[t].[a].[gone]" S "]",
	    "[[Tool not found or disabled: gone]]");
	/* Dify's upgrade writes groups without a space after the comma */
	check("I\n\n[" S "[tool].[time].[a].[u1]" S "," S
	    "[tool].[time].[b].[u2]" S "] " S "[tool].[web].[c].[u3]" S,
	    "I\n\n[[T:time/a], [T:time/b]] [T:web/c]");
	/* a broken group: its tokens are still compiled one by one */
	check("[" S "[tool].[t].[a].[u1]" S ", x]", "[[T:t/a], x]");

	/* Files go first: a path the file pass puts in is not a tool. */
	check(S "[file].[app].[a1]" S " " S "[tool].[t].[a].[u]" S,
	    "skills/docs/guide.md [T:t/a]");

	/* The limit names itself. */
	out = NULL;
	CHECK_INT(skill_compile(S "[file].[a].[a1]" S, 12, &res, 5, &out,
	    NULL), ENGINE_ELIMIT);
	CHECK(out == NULL);

	/* References: well-formed tokens only, in order. */
	tools = json_array();
	files = json_array();
	CHECK_INT(skill_refs("a " S "[tool].[time].[now].[u1]" S " "
	    S "[file].[app].[f1]" S " " S "[tool].[x].[].[u2]" S,
	    strlen("a " S "[tool].[time].[now].[u1]" S " " S
	    "[file].[app].[f1]" S " " S "[tool].[x].[].[u2]" S), tools,
	    files), 0);
	CHECK_INT(json_array_size(tools), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(tools, 0),
	    "tool_name")), "now");
	CHECK_STR(json_string_value(json_object_get(json_array_get(tools, 0),
	    "uuid")), "u1");
	CHECK_INT(json_array_size(files), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(files, 0),
	    "asset_id")), "f1");
	json_decref(tools);
	json_decref(files);

	/* Relative paths: Dify's docstring examples and the edges. */
	rel("/foo/a.md", "/foo/b.md", "./b.md");
	rel("/foo/a.md", "/foo/sub/b.md", "./sub/b.md");
	rel("/foo/sub/a.md", "/foo/b.md", "../b.md");
	rel("/foo/sub/deep/a.md", "/foo/b.md", "../../b.md");
	rel("/a.md", "/x/y.md", "./x/y.md");
	rel("/foo/a.md", "/bar/b.md", "../bar/b.md");
	rel("/foo/sub/a.md", "/foo", "..");
	rel("/foo/a.md", "/foo", "./");
	rel("/foo//sub/a.md", "//foo/b.md", "../b.md");	/* empty parts */
	return tap_done();
}
