/*
 * t_fcgi_multipart.c — multipart/form-data parsing.
 */
#include <string.h>

#include "fcgi/internal.h"
#include "tap.h"

static int
parse(struct arena *a, const char *ct, const char *body, struct mp_part **p,
    size_t *n, char *err)
{
	return multipart_parse(a, ct, body, strlen(body), 4, p, n, err, 256);
}

int
main(void)
{
	struct arena	*a = arena_new();
	struct mp_part	*p;
	size_t		 n;
	char		 err[256];
	const char	*ct = "multipart/form-data; boundary=XyZ";

	/* Two parts, a file and a field; data excludes the CRLF before the
	 * delimiter. */
	CHECK(parse(a, ct, "--XyZ\r\nContent-Disposition: form-data; "
	    "name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n"
	    "\r\nhello\r\nworld\r\n--XyZ\r\nContent-Disposition: form-data; "
	    "name=\"parent_id\"\r\n\r\nabc\r\n--XyZ--\r\n", &p, &n, err) == 0);
	CHECK_INT(n, 2);
	CHECK_STR(p[0].name, "file");
	CHECK_STR(p[0].filename, "a.txt");
	CHECK_STR(p[0].content_type, "text/plain");
	CHECK(p[0].len == 12 && memcmp(p[0].data, "hello\r\nworld", 12) == 0);
	CHECK_STR(p[1].name, "parent_id");
	CHECK(p[1].filename == NULL);
	CHECK(p[1].len == 3 && memcmp(p[1].data, "abc", 3) == 0);

	/* Preamble, quoted boundary, RFC 5987 file name wins. */
	CHECK(parse(a, "Multipart/Form-Data; boundary=\"a b\"", "junk\r\n--a b"
	    "\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x\"; "
	    "filename*=UTF-8''%E6%B5%8B.md\r\n\r\n\r\n--a b--", &p, &n,
	    err) == 0);
	CHECK_INT(n, 1);
	CHECK_STR(p[0].filename, "\xe6\xb5\x8b.md");
	CHECK_INT(p[0].len, 0);

	/* Escaped quote in a quoted file name. */
	CHECK(parse(a, ct, "--XyZ\r\nContent-Disposition: form-data; "
	    "name=\"f\"; filename=\"a\\\"b\"\r\n\r\nx\r\n--XyZ--", &p, &n,
	    err) == 0);
	CHECK_STR(p[0].filename, "a\"b");

	/* Refusals, each with a message. */
	CHECK(parse(a, "text/plain", "x", &p, &n, err) != 0);
	CHECK(strstr(err, "boundary") != NULL);
	CHECK(parse(a, "multipart/form-data", "x", &p, &n, err) != 0);
	CHECK(parse(a, ct, "no delimiter here", &p, &n, err) != 0);
	CHECK(strstr(err, "no boundary") != NULL);
	CHECK(parse(a, ct, "--XyZ\r\nContent-Disposition: form-data; "
	    "name=\"x\"\r\n\r\nunterminated", &p, &n, err) != 0);
	CHECK(strstr(err, "ends inside part 'x'") != NULL);
	CHECK(parse(a, ct, "--XyZ\r\nContent-Disposition: form-data\r\n\r\n"
	    "x\r\n--XyZ--", &p, &n, err) != 0);
	CHECK(strstr(err, "no Content-Disposition name") != NULL);
	CHECK(parse(a, ct, "--XyZ\r\nContent-Disposition: form-data; "
	    "name=\"x\"\r\n", &p, &n, err) != 0);
	/* More parts than allowed. */
	CHECK(parse(a, ct, "--XyZ\r\nContent-Disposition: form-data; name=a"
	    "\r\n\r\n1\r\n--XyZ\r\nContent-Disposition: form-data; name=b\r\n"
	    "\r\n2\r\n--XyZ\r\nContent-Disposition: form-data; name=c\r\n\r\n"
	    "3\r\n--XyZ\r\nContent-Disposition: form-data; name=d\r\n\r\n4\r\n"
	    "--XyZ\r\nContent-Disposition: form-data; name=e\r\n\r\n5\r\n"
	    "--XyZ--", &p, &n, err) != 0);
	CHECK(strstr(err, "more than 4") != NULL);
	/* A boundary longer than RFC 2046 allows. */
	CHECK(parse(a, "multipart/form-data; boundary=0123456789012345678901"
	    "234567890123456789012345678901234567890123456789", "x", &p, &n,
	    err) != 0);
	arena_free(a);
	return tap_done();
}
