/*
 * t_storage_json.c — store_json_text writes what
 * json_dumps(JSON_COMPACT | JSON_ENCODE_ANY) writes, byte for byte: every
 * escape, UTF-8, NUL inside strings, integers at their edges, reals (left
 * to jansson), nesting past its own depth (the whole value left to
 * jansson), large values, and a run's node trace. fuzz_json_text compares
 * the two on any input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/storage.h"
#include "tap.h"

/* 1 when store_json_text gives what json_dumps gives; releases j. */
static int
same_as_jansson(json_t *j)
{
	char	*got, *want;
	size_t	 len = 0;
	int	 same;

	got = store_json_text(j, &len);
	want = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	same = got != NULL && want != NULL && strlen(want) == len &&
	    memcmp(got, want, len) == 0 && got[len] == '\0';
	if (!same)
		printf("#   got:  %s\n#   want: %s\n", got ? got : "(null)",
		    want ? want : "(null)");
	free(got);
	free(want);
	json_decref(j);
	return same;
}

int
main(void)
{
	char	 ctl[33], *big;
	json_t	*deep, *trace, *node;
	size_t	 len;
	int	 i;

	CHECK(same_as_jansson(json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:s}",
	    "event", "message", "task_id", "t", "workflow_run_id", "w",
	    "conversation_id", "c", "message_id", "m", "created_at",
	    (json_int_t)1700000000, "answer", "t1 ")));
	/* every control character, quotes, backslash, slash, DEL, UTF-8 */
	for (i = 0; i < 31; i++)
		ctl[i] = (char)(i + 1);
	ctl[31] = '"';
	ctl[32] = '\\';
	CHECK(same_as_jansson(json_pack("{s:s#,s:s#,s:s}", "ctl", ctl,
	    (int)sizeof(ctl), "nul", "a\0b", (int)3, "more",
	    "/ \x7f caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80 \"q\" \\")));
	CHECK(same_as_jansson(json_pack("{s:s}", "k\"\n\\y", "v")));
	/* nesting, arrays, every other type, integers at the edges */
	CHECK(same_as_jansson(json_pack("{s:[s,s],s:{s:{}, s:[]},s:b,s:b,"
	    "s:n,s:I,s:I,s:[i,{s:[[]]}],s:I}", "from_variable_selector", "llm",
	    "text", "data", "o", "a", "t", 1, "f", 0, "z", "min",
	    (json_int_t)INT64_MIN, "max", (json_int_t)INT64_MAX, "arr", -1,
	    "x", "zero", (json_int_t)0)));
	CHECK(same_as_jansson(json_object()));
	CHECK(same_as_jansson(json_array()));
	CHECK(same_as_jansson(json_string("")));
	CHECK(same_as_jansson(json_null()));
	CHECK(same_as_jansson(json_integer(-7)));
	/* reals: jansson's own digits, inside and alone */
	CHECK(same_as_jansson(json_pack("{s:s,s:{s:f,s:f,s:f,s:f}}", "event",
	    "node_finished", "data", "elapsed_time", 0.25, "third", 1.0 / 3,
	    "big", 1e300, "neg", -0.0)));
	CHECK(same_as_jansson(json_real(3.5)));
	/* deeper than the writer goes: the whole value is jansson's */
	deep = json_string("x");
	for (i = 0; i < 600; i++)
		deep = json_pack("[o]", deep);
	CHECK(same_as_jansson(deep));
	/* large: the buffer grows */
	big = malloc(200000);
	memset(big, 'a', 199999);
	big[199999] = '\0';
	big[1000] = '\n';
	CHECK(same_as_jansson(json_pack("{s:s,s:[s,s]}", "answer", big, "two",
	    big, big)));
	free(big);
	/* a run's node trace (engine/run/run.c's arrays) */
	trace = json_array();
	for (i = 0; i < 50; i++) {
		node = json_pack("[s,s,s,s,i,n,{s:s},n,{s:s,s:i},s,n,i,n,I,I,n,"
		    "n]", "0190a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d", "n1",
		    "template-transform", "T \u00e9", i + 1, "x", "hello",
		    "output", "hello!", "n", i, "succeeded", 3,
		    (json_int_t)1700000000, (json_int_t)1700000001);
		json_array_append_new(trace, node);
	}
	CHECK(same_as_jansson(trace));
	/* the length it reports is the text's */
	trace = json_pack("{s:s}", "a", "b");
	big = store_json_text(trace, &len);
	CHECK(big != NULL && len == strlen(big) && strcmp(big, "{\"a\":\"b\"}")
	    == 0);
	free(big);
	json_decref(trace);
	return tap_done();
}
