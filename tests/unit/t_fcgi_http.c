/*
 * t_fcgi_http.c — reading a request and writing answers: the body (read
 * in one buffer of its declared length, grown when the length is not
 * given, 413 over the limit, 400 when it ends short), JSON bodies (type,
 * syntax, depth), the query string, the base URL, the response head,
 * each engine error mapped to its HTTP answer, and Range headers.
 */
#include <malloc.h>

#include "fcgi/http.c"
#include "tap.h"
#include "fcgi_fake.h"

static struct conf conf;

/* ====== The body ====== */

static void
test_body(void)
{
	static char	 big[100000];
	struct fake	 f;

	memset(big, 'x', sizeof(big));
	/* a declared length: its buffer holds it and the NUL, not twice as
	 * much, and no read is made past it */
	fake_init(&f, &conf, NULL);
	fake_body(&f, big, sizeof(big), sizeof(big));
	CHECK_INT(req_read_body(&f.r, 1 << 20), 0);
	CHECK_INT(f.r.body_len, sizeof(big));
	CHECK_INT(f.r.body[sizeof(big)], '\0');
	CHECK_INT(f.reads, 1);
	CHECK(malloc_usable_size(f.r.body) < sizeof(big) + 4096);
	/* read twice: the same body */
	CHECK_INT(req_read_body(&f.r, 1 << 20), 0);
	CHECK_INT(f.reads, 1);
	fake_release(&f);

	/* in pieces */
	fake_init(&f, &conf, NULL);
	fake_body(&f, big, 10000, 10000);
	f.chunk = 999;
	CHECK_INT(req_read_body(&f.r, 1 << 20), 0);
	CHECK_INT(f.r.body_len, 10000);
	CHECK_INT(f.reads, 11);
	fake_release(&f);

	/* no length given: grown as it comes */
	fake_init(&f, &conf, NULL);
	fake_body(&f, big, sizeof(big), -1);
	f.chunk = 4096;
	CHECK_INT(req_read_body(&f.r, 1 << 20), 0);
	CHECK_INT(f.r.body_len, sizeof(big));
	CHECK(memcmp(f.r.body, big, sizeof(big)) == 0);
	fake_release(&f);

	/* an empty body */
	fake_init(&f, &conf, NULL);
	fake_body(&f, "", 0, 0);
	CHECK_INT(req_read_body(&f.r, 100), 0);
	CHECK_INT(f.r.body_len, 0);
	CHECK_STR(f.r.body, "");
	fake_release(&f);

	/* over the limit: declared, or found while reading */
	fake_init(&f, &conf, NULL);
	fake_body(&f, big, 200, 200);
	CHECK_INT(req_read_body(&f.r, 100), 413);
	CHECK_INT(fake_status(&f), 413);
	CHECK(strstr(fake_answer(&f), "limit of 100 bytes") != NULL);
	CHECK_INT(f.reads, 0);
	fake_release(&f);
	fake_init(&f, &conf, NULL);
	fake_body(&f, big, 200, -1);
	CHECK_INT(req_read_body(&f.r, 100), 413);
	CHECK_INT(fake_status(&f), 413);
	fake_release(&f);

	/* shorter than declared */
	fake_init(&f, &conf, NULL);
	fake_body(&f, big, 50, 80);
	CHECK_INT(req_read_body(&f.r, 100), 400);
	CHECK(strstr(fake_answer(&f), "after 50 of 80 bytes") != NULL);
	fake_release(&f);
}

static void
test_json(void)
{
	struct fake	 f;
	const char	*s;
	char		 deep[200];
	int		 i;

	fake_init(&f, &conf, "CONTENT_TYPE", "application/json; charset=utf-8",
	    NULL);
	fake_body(&f, "{\"a\":\"x\",\"n\":1}", 15, 15);
	CHECK_INT(req_read_json(&f.r), 0);
	CHECK_INT(req_json_string(&f.r, "a", 1, &s), 0);
	CHECK_STR(s, "x");
	CHECK_INT(req_json_string(&f.r, "missing", 0, &s), 0);
	CHECK(s == NULL);
	CHECK_INT(req_json_string(&f.r, "n", 0, &s), -1);
	CHECK_INT(fake_status(&f), 400);
	CHECK(strstr(fake_answer(&f), "n must be a string") != NULL);
	fake_release(&f);

	fake_init(&f, &conf, "CONTENT_TYPE", "application/json", NULL);
	fake_body(&f, "", 0, 0);
	CHECK_INT(req_read_json(&f.r), 0);
	CHECK(json_is_object(f.r.json) && json_object_size(f.r.json) == 0);
	CHECK_INT(req_json_string(&f.r, "k", 1, &s), -1);
	CHECK(strstr(fake_answer(&f), "k is required") != NULL);
	fake_release(&f);

	/* another type is refused before its body is read */
	fake_init(&f, &conf, "CONTENT_TYPE", "text/plain", NULL);
	fake_body(&f, "{}", 2, 2);
	CHECK_INT(req_read_json(&f.r), 415);
	CHECK_INT(fake_status(&f), 415);
	CHECK_INT(f.reads, 0);
	fake_release(&f);

	fake_init(&f, &conf, "CONTENT_TYPE", "application/json", NULL);
	fake_body(&f, "{\"a\":1,\"a\":2}", 13, 13);
	CHECK_INT(req_read_json(&f.r), 400);
	CHECK(strstr(fake_answer(&f), "invalid_json") != NULL);
	fake_release(&f);

	/* a body of another JSON type than an object: 400, never 500 */
	{
		static const char *const other[] = { "[]", "[1]", "\"s\"",
		    "1", "true", "null", "[{}]", NULL };

		for (i = 0; other[i] != NULL; i++) {
			fake_init(&f, &conf, "CONTENT_TYPE",
			    "application/json", NULL);
			fake_body(&f, other[i], (int64_t)strlen(other[i]),
			    (int64_t)strlen(other[i]));
			CHECK_INT(req_read_json(&f.r), 400);
			CHECK_INT(fake_status(&f), 400);
			CHECK(strstr(fake_answer(&f), "\"status\":400") !=
			    NULL);
			CHECK(f.r.json == NULL);
			fake_release(&f);
		}
	}
	/* "\u0000" in a string is refused by the parser: no field can be
	 * cut short at a NUL */
	fake_init(&f, &conf, "CONTENT_TYPE", "application/json", NULL);
	s = "{\"user\":\"admin\\u0000x\"}";
	fake_body(&f, s, strlen(s), (int64_t)strlen(s));
	CHECK_INT(req_read_json(&f.r), 400);
	CHECK(strstr(fake_answer(&f), "invalid_json") != NULL);
	fake_release(&f);
	/* and a string holding one from elsewhere is refused by the reader
	 * of string fields */
	fake_init(&f, &conf, NULL);
	f.r.json = json_pack("{s:s#}", "user", "admin\0x", (int)7);
	CHECK_INT(req_json_string(&f.r, "user", 1, &s), -1);
	CHECK_INT(fake_status(&f), 400);
	CHECK(strstr(fake_answer(&f), "NUL byte") != NULL);
	json_decref(f.r.json);
	f.r.json = NULL;
	fake_release(&f);

	/* nesting past limits.max_json_depth: {"a":[[...]]}, 41 deep */
	memcpy(deep, "{\"a\":", 5);
	for (i = 0; i < 40; i++) {
		deep[5 + i] = '[';
		deep[5 + 80 - 1 - i] = ']';
	}
	memcpy(deep + 85, "}", 2);
	fake_init(&f, &conf, "CONTENT_TYPE", "application/json", NULL);
	fake_body(&f, deep, 86, 86);
	CHECK_INT(req_read_json(&f.r), conf.max_json_depth < 41 ? 400 : 0);
	if (conf.max_json_depth < 41)
		CHECK(strstr(fake_answer(&f), "limits.max_json_depth") !=
		    NULL);
	fake_release(&f);
}

/* ====== The query, the base URL ====== */

static void
test_query(void)
{
	struct fake	 f;
	int		 v;

	fake_init(&f, &conf, "QUERY_STRING",
	    "a=1&b=x%20y+z&c&limit=20&page=0x&e=", NULL);
	CHECK_INT(req_query_check(&f.r), 0);
	CHECK_INT(fake_status(&f), 0);
	CHECK_STR(req_query(&f.r, "a"), "1");
	CHECK_STR(req_query(&f.r, "b"), "x y z");
	CHECK_STR(req_query(&f.r, "c"), "");
	CHECK_STR(req_query(&f.r, "e"), "");
	CHECK(req_query(&f.r, "d") == NULL);
	CHECK(req_query(&f.r, "lim") == NULL);	/* whole names only */
	CHECK_INT(req_query_int(&f.r, "limit", 5, 1, 100, &v), 0);
	CHECK_INT(v, 20);
	CHECK_INT(req_query_int(&f.r, "none", 5, 1, 100, &v), 0);
	CHECK_INT(v, 5);
	CHECK_INT(req_query_int(&f.r, "limit", 5, 1, 10, &v), -1);
	CHECK_INT(fake_status(&f), 400);
	CHECK(strstr(fake_answer(&f), "limit must be an integer from 1 to "
	    "10") != NULL);
	fake_release(&f);
	fake_init(&f, &conf, "QUERY_STRING", "page=0x", NULL);
	CHECK_INT(req_query_int(&f.r, "page", 1, 0, 99, &v), -1);
	fake_release(&f);
}

/* A NUL never cuts a value short: the decoder says so, and a query
 * that holds one anywhere is refused whole. */
static void
test_query_nul(void)
{
	static const char *const bad[] = {
		"user=admin%00x", "path=%00", "a=1&user=%00", "us%00er=admin",
		"a=%2500&b=x%00", NULL,
	};
	struct fake	 f;
	struct arena	*a;
	char		*out;
	size_t		 i;

	CHECK((a = arena_new()) != NULL);
	CHECK_INT(http_form_decode(a, "admin%00x", 9, &out), HTTP_ENUL);
	CHECK(out == NULL);
	CHECK_INT(http_form_decode(a, "%00", 3, &out), HTTP_ENUL);
	CHECK_INT(http_form_decode(a, "a%2500b", 7, &out), 0);
	CHECK_STR(out, "a%00b");	/* an encoded "%00" is three bytes */
	CHECK_INT(http_form_decode(a, "a+b%2B", 6, &out), 0);
	CHECK_STR(out, "a b+");
	CHECK_INT(http_form_decode(a, "", 0, &out), 0);
	CHECK_STR(out, "");
	arena_free(a);

	for (i = 0; bad[i] != NULL; i++) {
		fake_init(&f, &conf, "QUERY_STRING", bad[i], NULL);
		CHECK_INT(req_query_check(&f.r), -1);
		CHECK_INT(fake_status(&f), 400);
		CHECK(strstr(fake_answer(&f), "NUL byte") != NULL);
		fake_release(&f);
	}
	/* req_query itself answers 400 and gives no value */
	fake_init(&f, &conf, "QUERY_STRING", "user=admin%00x", NULL);
	CHECK(req_query(&f.r, "user") == NULL);
	CHECK_INT(fake_status(&f), 400);
	CHECK(strstr(fake_answer(&f), "invalid_param") != NULL);
	fake_release(&f);
}

static void
test_base_url(void)
{
	struct conf	 c = conf;
	struct fake	 f;

	fake_init(&f, &c, NULL);
	f.r.prefix = "/flow";
	CHECK_STR(req_base_url(&f.r), "/flow");
	snprintf(c.public_url, sizeof(c.public_url), "https://h.example/");
	CHECK_STR(req_base_url(&f.r), "https://h.example/flow");
	/* a public_url with a path names the mount point itself */
	snprintf(c.public_url, sizeof(c.public_url),
	    "https://h.example/x/flow//");
	CHECK_STR(req_base_url(&f.r), "https://h.example/x/flow");
	fake_release(&f);
}

/* ====== Answers ====== */

static void
test_head(void)
{
	struct fake	 f;
	json_t		*j;

	fake_init(&f, &conf, NULL);
	resp_header(&f.r, "ETag", "\"r1\"");
	resp_json(&f.r, 201, json_pack("{s:s}", "k", "v"));
	CHECK(strncmp(f.out, "Status: 201 Created\r\n", 21) == 0);
	CHECK(strstr(f.out, "Content-Type: application/json\r\n") != NULL);
	CHECK(strstr(f.out, "Content-Length: 9\r\n") != NULL);
	CHECK(strstr(f.out, "Cache-Control: no-store\r\n") != NULL);
	CHECK(strstr(f.out, "X-Content-Type-Options: nosniff\r\n") != NULL);
	CHECK(strstr(f.out, "ETag: \"r1\"\r\n") != NULL);
	CHECK_STR(fake_answer(&f), "{\"k\":\"v\"}");
	/* one answer per request: a second is dropped */
	resp_error(&f.r, 500, "x", "late");
	CHECK(strstr(f.out, "late") == NULL);
	fake_release(&f);

	/* a handler's own Cache-Control replaces the default */
	fake_init(&f, &conf, NULL);
	resp_header(&f.r, "Cache-Control", "max-age=60");
	resp_bytes(&f.r, 200, "text/plain", "hi", 2);
	CHECK(strstr(f.out, "no-store") == NULL);
	CHECK(strstr(f.out, "Cache-Control: max-age=60\r\n") != NULL);
	CHECK_STR(fake_answer(&f), "hi");
	fake_release(&f);

	/* a message cut inside a character is still JSON */
	fake_init(&f, &conf, NULL);
	resp_error(&f.r, 400, "bad", "%s", "\xc3");
	CHECK_INT(fake_status(&f), 400);
	CHECK((j = json_loads(fake_answer(&f), 0, NULL)) != NULL);
	json_decref(j);
	fake_release(&f);

	/* every status flowcgi sends has its reason phrase */
	{
		static const struct { int code; const char *line; } st[] = {
			{ 206, "Status: 206 Partial Content\r\n" },
			{ 409, "Status: 409 Conflict\r\n" },
			{ 410, "Status: 410 Gone\r\n" },
			{ 413, "Status: 413 Content Too Large\r\n" },
			{ 415, "Status: 415 Unsupported Media Type\r\n" },
			{ 416, "Status: 416 Range Not Satisfiable\r\n" },
			{ 422, "Status: 422 Unprocessable Content\r\n" },
			{ 429, "Status: 429 Too Many Requests\r\n" },
			{ 503, "Status: 503 Service Unavailable\r\n" },
			{ 507, "Status: 507 Insufficient Storage\r\n" },
		};
		size_t i, n;

		for (i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
			fake_init(&f, &conf, NULL);
			resp_empty(&f.r, st[i].code);
			CHECK(strncmp(f.out, st[i].line, strlen(st[i].line))
			    == 0);
			fake_release(&f);
		}
		for (n = 0, i = 200; i < 600; i++)
			n += strcmp(http_status_text((int)i), "Unknown") == 0;
		CHECK_INT(n, 0);
		CHECK_STR(http_status_text(418), "Client Error");
	}

	CHECK_STR(resp_mime_of("a/b.MD"), "text/markdown; charset=utf-8");
	CHECK_STR(resp_mime_of("a.b/c"), "application/octet-stream");
	CHECK_STR(resp_mime_of("x.zip"), "application/zip");
}

/* Each engine error: its status and code for a client. */
static void
test_engine_errors(void)
{
	static const struct {
		int		 rc;
		int		 status;
		const char	*code;
	} map[] = {
		{ ENGINE_EINVAL, 400, "invalid_param" },
		{ ENGINE_ENOTFOUND, 404, "not_found" },
		{ ENGINE_ECONFLICT, 412, "precondition_failed" },
		{ ENGINE_EEXIST, 409, "conflict" },
		{ ENGINE_ESTOPPED, 409, "stopped" },
		{ ENGINE_ELIMIT, 413, "limit_exceeded" },
		{ ENGINE_EFETCH, 502, "upstream_error" },
		{ ENGINE_EFULL, 507, "insufficient_storage" },
		{ ENGINE_ENOMEM, 500, "internal_server_error" },
		{ ENGINE_ESTORE, 500, "internal_server_error" },
		{ ENGINE_ESANDBOX, 500, "internal_server_error" },
	};
	struct fake	 f;
	json_t		*j;
	size_t		 i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		fake_init(&f, &conf, NULL);
		f.r.path = "/t";
		resp_engine_error(&f.r, map[i].rc, "why", "app");
		j = json_loads(fake_answer(&f), 0, NULL);
		CHECK_INT(fake_status(&f), map[i].status);
		CHECK_STR(json_string_value(json_object_get(j, "code")),
		    map[i].code);
		CHECK_INT(json_integer_value(json_object_get(j, "status")),
		    map[i].status);
		json_decref(j);
		fake_release(&f);
	}
	/* a stale If-Match names the record, not the engine's word */
	fake_init(&f, &conf, NULL);
	resp_engine_error(&f.r, ENGINE_ECONFLICT, "", "app");
	CHECK(strstr(fake_answer(&f), "app changed since the revision given "
	    "in If-Match") != NULL);
	fake_release(&f);
	CHECK_STR(engine_strerror(ENGINE_ESTOPPED), "stopped");
	CHECK(ENGINE_ESTOPPED != ENGINE_ECONFLICT);
}

/* ====== Range ====== */

/* http_range's answer as "rc off len" for header h and a size. */
static const char *
range(const char *h, uint64_t size)
{
	static char	buf[80];
	uint64_t	off = 7777, len = 7777;
	int		rc;

	rc = http_range(h, size, &off, &len);
	if (rc == 1)
		snprintf(buf, sizeof(buf), "1 %llu %llu",
		    (unsigned long long)off, (unsigned long long)len);
	else
		snprintf(buf, sizeof(buf), "%d", rc);
	return buf;
}

static void
test_range(void)
{
	/* one range, as RFC 9110 14.1.2 writes them */
	CHECK_STR(range("bytes=0-499", 10000), "1 0 500");
	CHECK_STR(range("bytes=500-999", 10000), "1 500 500");
	CHECK_STR(range("bytes=9500-", 10000), "1 9500 500");
	CHECK_STR(range("bytes=-500", 10000), "1 9500 500");
	CHECK_STR(range("bytes=0-0", 10000), "1 0 1");
	CHECK_STR(range("bytes=-1", 10000), "1 9999 1");
	CHECK_STR(range("BYTES = 1-2 ", 10), "1 1 2");
	/* past the end: cut to it; a suffix longer than the body: all */
	CHECK_STR(range("bytes=9000-20000", 10000), "1 9000 1000");
	CHECK_STR(range("bytes=-20000", 10000), "1 0 10000");
	CHECK_STR(range("bytes=0-9999999999999999999", 10), "1 0 10");
	/* nothing of it in the body: 416 */
	CHECK_STR(range("bytes=10000-", 10000), "-1");
	CHECK_STR(range("bytes=10000-10001", 10000), "-1");
	CHECK_STR(range("bytes=-0", 10000), "-1");
	CHECK_STR(range("bytes=0-", 0), "-1");
	CHECK_STR(range("bytes=-5", 0), "-1");
	/* what a server may ignore: the whole body */
	CHECK_STR(range(NULL, 10), "0");
	CHECK_STR(range("", 10), "0");
	CHECK_STR(range("items=0-1", 10), "0");
	CHECK_STR(range("bytes=0-1,3-4", 10), "0");
	CHECK_STR(range("bytes=5-1", 10), "0");
	CHECK_STR(range("bytes=-", 10), "0");
	CHECK_STR(range("bytes=a-1", 10), "0");
	CHECK_STR(range("bytes 0-1", 10), "0");
	CHECK_STR(range("bytes=0-1x", 10), "0");
	CHECK_STR(range("bytes=+1-2", 10), "0");
	CHECK_STR(range("bytes=99999999999999999999-", 10), "0");
}

int
main(void)
{
	conf_defaults(&conf);
	log_init(CONF_LOG_ERROR, "/dev/null");	/* the 500s log an error */
	test_body();
	test_json();
	test_query();
	test_query_nul();
	test_base_url();
	test_head();
	test_engine_errors();
	test_range();
	return tap_done();
}
