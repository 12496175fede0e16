/*
 * fuzz_mcp_stream.c — what flowcgi reads from an MCP server's event
 * stream: the reader fed in pieces of every size the input's first byte
 * chooses must keep the same messages and endpoint as when fed at once;
 * the endpoint it found is resolved against a fixed stream URL (and must
 * stay on its origin); the second byte picks an id to take out, and the
 * same bytes go through mcp_body_response as JSON and as a stream.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tools/tools.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE	"http://mcp.example:8080/a/sse"

/* Feeds n bytes in pieces of step; *dump gets msgs + endpoint as text. */
static int
feed(const uint8_t *p, size_t n, size_t step, json_int_t id, char **dump)
{
	struct mcp_reader	 r;
	json_t			*j, *all;
	size_t			 i;
	int			 rc = 0;

	*dump = NULL;
	if (mcp_reader_init(&r, 4096) != 0)
		goto out;
	for (i = 0; i < n && rc == 0; i += step)
		rc = mcp_reader_feed(&r, (const char *)p + i, n - i < step ?
		    n - i : step);
	if (rc == 0)
		rc = mcp_reader_finish(&r);
	j = mcp_reader_take(&r, id);
	json_decref(mcp_reader_take_request(&r));
	all = json_pack("{s:O,s:s?,s:i,s:o*}", "msgs", r.msgs, "endpoint",
	    r.endpoint, "rc", rc, "taken", j);
	if (all != NULL)
		*dump = json_dumps(all, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(all);
	if (rc == 0 && r.endpoint != NULL) {
		char err[ENGINE_ERRMAX], *u = NULL;

		if (mcp_endpoint_url(BASE, r.endpoint, err, &u) == 0 &&
		    strncmp(u, "http://mcp.example:8080/", 24) != 0)
			abort();	/* another origin got through */
		free(u);
	}
out:
	mcp_reader_release(&r);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*a = NULL, *b = NULL;
	json_int_t	 id;
	size_t		 step;
	int		 ra, rb;

	if (size < 2)
		return 0;
	step = (size_t)data[0] % 17 + 1;
	id = data[1] % 8;
	ra = feed(data + 2, size - 2, size, id, &a);
	rb = feed(data + 2, size - 2, step, id, &b);
	/* the same messages, whatever the splitting (unless a limit hit) */
	if (ra == 0 && rb == 0 && (a == NULL) == (b == NULL) && a != NULL &&
	    strcmp(a, b) != 0)
		abort();
	free(a);
	free(b);
	json_decref(mcp_body_response((const char *)data + 2, size - 2, 0,
	    4096, id));
	json_decref(mcp_body_response((const char *)data + 2, size - 2, 1,
	    4096, id));
	return 0;
}
