/*
 * fuzz_mail_mime.c — the message engine/tools/email.c builds, on
 * arbitrary bytes as the subject, the text and the reply-to (split at the
 * first two NUL bytes), plain and with convert_to_html: nothing may
 * crash or leak, and no input may add a header: every line of the header
 * block is one of the headers the builder writes or a folded
 * continuation (starting with a space), the block ends at the first
 * blank line, and the message ends with the outer boundary.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/tools/email.c"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = { "Content-Type: ", "MIME-Version: ",
    "Date: ", "Message-ID: ", "From: ", "Reply-To: ", "To: ", "CC: ",
    "Subject: ", NULL };

static void
check_headers(const char *msg, size_t len)
{
	const char	*p = msg, *end, *eoh = strstr(msg, "\r\n\r\n");
	size_t		 i;

	if (eoh == NULL || strlen(msg) != len)
		abort();
	while (p < eoh + 2) {
		if ((end = strstr(p, "\r\n")) == NULL)
			abort();
		if (*p != ' ') {
			for (i = 0; names[i] != NULL; i++)
				if (strncmp(p, names[i], strlen(names[i])) == 0)
					break;
			if (names[i] == NULL)
				abort();
		}
		if (memchr(p, '\r', (size_t)(end - p)) != NULL ||
		    memchr(p, '\n', (size_t)(end - p)) != NULL)
			abort();
		p = end + 2;
	}
	if (len < 4 || memcmp(msg + len - 4, "--\r\n", 4) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mail	 m;
	struct dbuf	 b;
	char		*buf, *subject, *text, *reply, *html, err[ENGINE_ERRMAX];
	size_t		 n;
	int		 pass;

	if ((buf = malloc(size + 3)) == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = buf[size + 1] = buf[size + 2] = '\0';
	subject = buf;
	n = strlen(subject);
	text = subject + n + (n < size ? 1 : 0);
	n = strlen(text);
	reply = text + n + (text + n < buf + size ? 1 : 0);
	for (pass = 0; pass < 2; pass++) {
		memset(&m, 0, sizeof(m));
		m.from = "sender@example.com";
		m.subject = subject;
		m.text = text;
		/* what the tool lets through: no line break in reply_to */
		m.reply_to = strpbrk(reply, "\r\n") ? NULL : reply;
		html = NULL;
		if (pass == 1 && (html = markdown_html(text)) == NULL)
			abort();
		m.html = html;
		m.to = json_pack("[s]", "a@example.com");
		m.cc = json_array();
		m.bcc = json_array();
		dbuf_init(&b, EMAIL_MAX_MESSAGE);
		if (mail_build(NULL, &m, err, &b) == 0)
			check_headers(b.p, b.len);
		dbuf_free(&b);
		free(html);
		json_decref(m.to);
		json_decref(m.cc);
		json_decref(m.bcc);
	}
	free(buf);
	return 0;
}
