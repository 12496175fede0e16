/*
 * t_engine_upload_head.c — the header reader of the remote-files probe
 * and fetch (engine/records/uploads.c upload_head_line): Content-Type,
 * Content-Length (missing, not a number, negative, too large: -1),
 * Content-Disposition's filename (quoted with escapes, a token) and
 * RFC 5987's filename*= (UTF-8 and ISO-8859-1, preferred whatever the
 * order), names cut to their last path segment, names refused (control
 * characters, bytes that are no UTF-8, only dots), and a redirect's head
 * forgotten at the next status line.
 */
#include <string.h>

#include "engine/engine.h"
#include "engine/records/records.h"
#include "tests/unit/tap.h"

/* Reads the lines of text (separated by "\n") into a new head. */
static struct upload_head
head_of(const char *text)
{
	struct upload_head	 h;
	const char		*p = text, *nl;

	upload_head_init(&h);
	for (; *p != '\0'; p = *nl ? nl + 1 : nl) {
		nl = strchr(p, '\n');
		if (nl == NULL)
			nl = p + strlen(p);
		upload_head_line(&h, p, (size_t)(nl - p));
	}
	return h;
}

int
main(void)
{
	struct upload_head h;

	h = head_of("HTTP/1.1 200 OK\nContent-Type: text/plain; "
	    "charset=utf-8\ncontent-length:  1234 ");
	CHECK_STR(h.type, "text/plain; charset=utf-8");
	CHECK_INT(h.length, 1234);
	CHECK_STR(h.name, "");

	h = head_of("Content-Type: image/png");
	CHECK_INT(h.length, -1);	/* no Content-Length */
	h = head_of("Content-Length: 12abc");
	CHECK_INT(h.length, -1);
	h = head_of("Content-Length: -5");
	CHECK_INT(h.length, -1);
	h = head_of("Content-Length: +5");
	CHECK_INT(h.length, -1);
	h = head_of("Content-Length: 99999999999999999999999");
	CHECK_INT(h.length, -1);
	h = head_of("Content-Length:");
	CHECK_INT(h.length, -1);

	h = head_of("Content-Disposition: attachment; filename=\"report "
	    "2024.pdf\"");
	CHECK_STR(h.name, "report 2024.pdf");
	h = head_of("Content-Disposition: attachment; filename=\"a\\\"b; "
	    "c.txt\"; size=3");
	CHECK_STR(h.name, "a\"b; c.txt");	/* escapes, ; inside quotes */
	h = head_of("Content-Disposition: attachment;filename=plain.csv ;x=1");
	CHECK_STR(h.name, "plain.csv");
	h = head_of("CONTENT-DISPOSITION: inline; FILENAME=upper.txt");
	CHECK_STR(h.name, "upper.txt");
	/* RFC 5987, before or after filename=, wins */
	h = head_of("Content-Disposition: attachment; filename=\"fallback.txt\""
	    "; filename*=UTF-8''na%C3%AFve%20file.txt");
	CHECK_STR(h.name, "na\xc3\xafve file.txt");
	CHECK(h.name_star);
	h = head_of("Content-Disposition: attachment; filename*=utf-8'en'"
	    "%E2%82%AC%20rates.pdf; filename=\"EUR rates.pdf\"");
	CHECK_STR(h.name, "\xe2\x82\xac rates.pdf");
	h = head_of("Content-Disposition: inline; filename*=iso-8859-1'en'"
	    "caf%E9.txt");
	CHECK_STR(h.name, "caf\xc3\xa9.txt");	/* made UTF-8 */
	/* a filename* that is not charset'lang'value leaves filename */
	h = head_of("Content-Disposition: attachment; filename*=broken.txt; "
	    "filename=kept.txt");
	CHECK_STR(h.name, "kept.txt");
	/* bytes that are no UTF-8 in a UTF-8 filename*: refused */
	h = head_of("Content-Disposition: attachment; filename*=UTF-8''%FF%FE"
	    "; filename=ok.txt");
	CHECK_STR(h.name, "ok.txt");
	CHECK(!h.name_star);
	/* the last path segment only */
	h = head_of("Content-Disposition: attachment; filename=\"../../etc/"
	    "passwd\"");
	CHECK_STR(h.name, "passwd");
	h = head_of("Content-Disposition: attachment; filename*=UTF-8''"
	    "..%5C..%5Cwin.ini");
	CHECK_STR(h.name, "win.ini");
	/* control characters, only dots, empty: no name */
	h = head_of("Content-Disposition: attachment; filename=evil%0a.txt");
	CHECK_STR(h.name, "");
	h = head_of("Content-Disposition: attachment; filename=\"..\"");
	CHECK_STR(h.name, "");
	h = head_of("Content-Disposition: attachment; filename=\"\"");
	CHECK_STR(h.name, "");
	h = head_of("Content-Disposition: attachment; filename=\"dir/\"");
	CHECK_STR(h.name, "");
	h = head_of("Content-Disposition: attachment; filename=\"unterminated");
	CHECK_STR(h.name, "unterminated");
	/* a redirect's head is forgotten */
	h = head_of("HTTP/1.1 302 Found\nContent-Length: 5\nContent-Type: "
	    "text/html\nContent-Disposition: attachment; filename=r.html\n"
	    "HTTP/1.1 200 OK\nContent-Type: image/png");
	CHECK_STR(h.type, "image/png");
	CHECK_INT(h.length, -1);
	CHECK_STR(h.name, "");
	/* a name past 255 bytes is refused, not cut */
	{
		char line[400] = "Content-Disposition: attachment; filename=";

		memset(line + strlen(line), 'a', 300);
		h = head_of(line);
		CHECK_STR(h.name, "");
	}
	return tap_done();
}
