/*
 * fuzz_feed.c — the feed reader of engine/tools/rss.c (RSS 2.0, RSS 1.0,
 * Atom) on arbitrary bytes: nothing may crash or leak; a feed read gives
 * a json object of the documented shape whose strings are valid UTF-8
 * (jansson holds no other), at most RSS_MAX_ITEMS items and fields of at
 * most RSS_MAX_FIELD bytes; a refusal always says why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/tools/rss.c"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_str(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_string(v) || json_string_length(v) > RSS_MAX_FIELD)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "title", "link", "published",
	    "author", "summary", NULL };
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*feed = NULL, *it;
	size_t		 i, k;
	int		 rc;

	rc = tool_feed_parse((const char *)data, size, RSS_MAX_ITEMS, err, &feed);
	if (rc != 0) {
		if (feed != NULL || (rc == ENGINE_EINVAL && err[0] == '\0'))
			abort();
		return 0;
	}
	check_str(feed, "title");
	check_str(feed, "link");
	check_str(feed, "description");
	check_str(feed, "format");
	if (json_array_size(json_object_get(feed, "items")) > RSS_MAX_ITEMS)
		abort();
	json_array_foreach(json_object_get(feed, "items"), i, it)
		for (k = 0; keys[k] != NULL; k++)
			check_str(it, keys[k]);
	{
		struct dbuf sb = { 0 };

		feed_text(feed, &sb);	/* the listing of any feed */
		dbuf_free(&sb);
	}
	json_decref(feed);
	return 0;
}
