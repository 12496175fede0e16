/*
 * eml.c — a mail message (RFC 5322, MIME) read with GMime: its headers
 * (Subject, From, To, Cc, Date; encoded words decoded), then the text of
 * its body parts in order (text/plain; text/html read as the html reader
 * reads HTML when the message has no text/plain part, as a mail client
 * shows the alternative it can), then a line naming each attachment.
 * Transfer encodings (base64, quoted-printable) and charsets are GMime's.
 * Attachments' contents and attached messages' bodies are not read.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmime/gmime.h>

#include "engine/documents/internal.h"

#define EML_MAX_PARTS	1000

struct eml_walk {
	struct dbuf	*body;
	struct dbuf	*attach;
	int		 html;		/* 1: take text/html parts */
	int		 has_plain;
	size_t		 parts;
	int		 rc;
	char		*err;
	size_t		 errsz;
};

static pthread_once_t eml_once = PTHREAD_ONCE_INIT;

static void
eml_init(void)
{
	g_mime_init();
}

static void
eml_part(GMimeObject *parent, GMimeObject *part, gpointer arg)
{
	struct eml_walk		*w = arg;
	GMimeContentType	*ct;
	const char		*name;
	char			*text, *t;

	if (w->rc != 0 || ++w->parts > EML_MAX_PARTS)
		return;
	if (GMIME_IS_MESSAGE_PART(part)) {
		GMimeMessage *m = g_mime_message_part_get_message(
		    (GMimeMessagePart *)part);
		const char *s = m != NULL ? g_mime_message_get_subject(m) :
		    NULL;

		dbuf_addf(w->attach, "Attachment: %s (message)\n", s != NULL &&
		    *s != '\0' ? s : "message.eml");
		return;
	}
	if (!GMIME_IS_PART(part))
		return;
	name = g_mime_part_get_filename((GMimePart *)part);
	if (g_mime_part_is_attachment((GMimePart *)part) || name != NULL) {
		dbuf_addf(w->attach, "Attachment: %s\n", name != NULL ? name :
		    "(unnamed)");
		return;
	}
	ct = g_mime_object_get_content_type(part);
	if (!GMIME_IS_TEXT_PART(part) || ct == NULL)
		return;
	if (g_mime_content_type_is_type(ct, "text", "plain"))
		w->has_plain = 1;
	if (!(g_mime_content_type_is_type(ct, "text", "plain") ||
	    (w->html && g_mime_content_type_is_type(ct, "text", "html"))))
		return;
	if ((text = g_mime_text_part_get_text((GMimeTextPart *)part)) == NULL)
		return;
	if (g_mime_content_type_is_type(ct, "text", "html")) {
		if ((w->rc = doc_html_text(text, strlen(text), 1, w->err,
		    w->errsz, &t)) == 0) {
			dbuf_addstr(w->body, t);
			free(t);
		}
	} else
		dbuf_addstr(w->body, text);
	dbuf_addstr(w->body, "\n\n");
	g_free(text);
}

static void
eml_addrs(struct dbuf *sb, const char *name, InternetAddressList *l)
{
	char *s;

	if (l == NULL || internet_address_list_length(l) == 0)
		return;
	if ((s = internet_address_list_to_string(l, NULL, FALSE)) != NULL)
		dbuf_addf(sb, "%s: %s\n", name, s);
	g_free(s);
}

/* How many times "boundary=" occurs in the n bytes: a bound on the
 * multiparts GMime's parser would nest before it is handed the bytes. */
static size_t
eml_boundaries(const char *p, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i + 9 <= n; i++)
		if ((p[i] == 'b' || p[i] == 'B') && strncasecmp(p + i,
		    "boundary=", 9) == 0)
			k++;
	return k;
}

int
doc_read_eml(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	GMimeStream	*st = NULL;
	GMimeParser	*p = NULL;
	GMimeMessage	*m = NULL;
	struct dbuf	 sb, body, attach;
	struct eml_walk	 w;
	const char	*s;
	int		 rc = DOC_EDAMAGED;

	dbuf_init(&sb, lim->max_unpacked);
	dbuf_init(&body, lim->max_unpacked);
	dbuf_init(&attach, lim->max_unpacked);
	if (eml_boundaries(data, len) > EML_MAX_PARTS) {
		snprintf(err, errsz, "the message has more than %d multipart "
		    "boundaries", EML_MAX_PARTS);
		rc = DOC_ELIMIT;
		goto out;
	}
	pthread_once(&eml_once, eml_init);
	if ((st = g_mime_stream_mem_new_with_buffer(data, len)) == NULL ||
	    (p = g_mime_parser_new_with_stream(st)) == NULL) {
		snprintf(err, errsz, "out of memory");
		rc = DOC_ENOMEM;
		goto out;
	}
	g_mime_parser_set_format(p, GMIME_FORMAT_MESSAGE);
	if ((m = g_mime_parser_construct_message(p, NULL)) == NULL ||
	    g_mime_message_get_mime_part(m) == NULL) {
		snprintf(err, errsz, "the file is not a mail message");
		goto out;
	}
	if ((s = g_mime_message_get_subject(m)) != NULL)
		dbuf_addf(&sb, "Subject: %s\n", s);
	eml_addrs(&sb, "From", g_mime_message_get_from(m));
	eml_addrs(&sb, "To", g_mime_message_get_to(m));
	eml_addrs(&sb, "Cc", g_mime_message_get_cc(m));
	if ((s = g_mime_object_get_header((GMimeObject *)m, "Date")) != NULL)
		dbuf_addf(&sb, "Date: %s\n", s);
	memset(&w, 0, sizeof(w));
	w.body = &body;
	w.attach = &attach;
	w.err = err;
	w.errsz = errsz;
	g_mime_message_foreach(m, eml_part, &w);
	if (w.rc == 0 && !w.has_plain) {
		/* no text/plain alternative: read the HTML ones */
		dbuf_free(&body);
		dbuf_free(&attach);
		w.html = 1;
		w.parts = 0;
		g_mime_message_foreach(m, eml_part, &w);
	}
	if ((rc = w.rc) != 0)
		goto out;
	if (w.parts > EML_MAX_PARTS) {
		snprintf(err, errsz, "the message has more than %d parts",
		    EML_MAX_PARTS);
		rc = DOC_ELIMIT;
		goto out;
	}
	dbuf_addstr(&sb, "\n");
	if (body.p != NULL)
		dbuf_add(&sb, body.p, body.len);
	dbuf_addstr(&sb, "\n");
	if (attach.p != NULL)
		dbuf_add(&sb, attach.p, attach.len);
	if (body.err == DBUF_ETOOBIG || attach.err == DBUF_ETOOBIG)
		sb.err = DBUF_ETOOBIG;
	rc = doc_take_tidy(&sb, err, errsz, &d->text);
out:
	dbuf_free(&sb);
	dbuf_free(&body);
	dbuf_free(&attach);
	if (m != NULL)
		g_object_unref(m);
	if (p != NULL)
		g_object_unref(p);
	if (st != NULL)
		g_object_unref(st);
	return rc;
}
