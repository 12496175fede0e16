/*
 * msg.c — Outlook's .msg (an OLE compound file, read with libgsf's
 * GsfInfileMSOle): the message's properties stored as streams
 * (__substg1.0_<tag><type>): Subject, From (sender name and address), To,
 * Cc, then the plain-text body, then a line naming each attachment
 * (__attach_version1.0_#N's long or short file name). Unicode properties
 * (type 001F) are UTF-16LE; 8-bit ones (001E) are taken as UTF-8 when
 * they are, else as Windows-1252. The RTF and HTML bodies, dates and the
 * attachments' contents are not read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsf/gsf-infile-msole.h>
#include <gsf/gsf-infile.h>
#include <gsf/gsf-input-memory.h>
#include <gsf/gsf-input.h>
#include <gsf/gsf-utils.h>

#include "engine/internal.h"
#include "engine/documents/internal.h"

#define MSG_MAX_ATTACH	1000

/* Appends bytes in charset cs as UTF-8. */
static void
msg_add_cs(struct dbuf *sb, const char *cs, const char *p, size_t n,
    size_t max)
{
	struct dbuf	u = { 0 };
	char		err[64];

	doc_to_utf8(cs, p, n, max, &u, err, sizeof(err));
	doc_add_utf8(sb, u.p ? u.p : "", u.len);
	dbuf_free(&u);
}

/* 1 when n bytes are valid UTF-8. */
static int
msg_is_utf8(const char *p, size_t n)
{
	size_t i = 0, l;

	while (i < n) {
		if ((unsigned char)p[i] < 0x80) {
			i++;
			continue;
		}
		if (tpl_utf8_next(p + i, n - i, &l) == 0xfffd && l <= 1)
			return 0;
		i += l;
	}
	return 1;
}

/* Appends property tag (4 hex digits) of storage in, Unicode or 8-bit;
 * 1 when it was there. Bounded by max bytes. */
static int
msg_prop(GsfInfile *in, const char *tag, struct dbuf *sb, size_t max)
{
	static const char *const types[] = { "001F", "001E" };
	char		 name[64];
	GsfInput	*s;
	const guint8	*p;
	gsf_off_t	 n;
	size_t		 i;

	for (i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "__substg1.0_%s%s", tag, types[i]);
		if ((s = gsf_infile_child_by_name(in, name)) == NULL)
			continue;
		n = gsf_input_size(s);
		if (n < 0 || (size_t)n > max)
			n = (gsf_off_t)max;
		p = n > 0 ? gsf_input_read(s, (size_t)n, NULL) : NULL;
		if (p != NULL) {
			size_t l = (size_t)n;

			if (i == 0) {
				while (l >= 2 && p[l - 1] == 0 && p[l - 2] ==
				    0)
					l -= 2;
				msg_add_cs(sb, "UTF-16LE", (const char *)p,
				    l & ~(size_t)1, max);
			} else {
				while (l > 0 && p[l - 1] == 0)
					l--;
				if (msg_is_utf8((const char *)p, l))
					doc_add_utf8(sb, (const char *)p, l);
				else
					msg_add_cs(sb, "WINDOWS-1252",
					    (const char *)p, l, max);
			}
		}
		g_object_unref(s);
		return p != NULL || n == 0;
	}
	return 0;
}

/* "Name: value\n" for a property that is there. */
static void
msg_header(GsfInfile *in, const char *name, const char *tag,
    struct dbuf *sb, size_t max)
{
	struct dbuf v = { 0 };

	if (msg_prop(in, tag, &v, max) && v.len > 0)
		dbuf_addf(sb, "%s: %.*s\n", name, (int)v.len, v.p);
	dbuf_free(&v);
}

int
doc_read_msg(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	GsfInput	*src = NULL, *child;
	GsfInfile	*ole = NULL;
	GError		*gerr = NULL;
	struct dbuf	 sb, att = { 0 };
	char		*raw = NULL;
	const char	*cname;
	int		 rc = DOC_EDAMAGED, i, n, natt = 0;

	dbuf_init(&sb, lim->max_unpacked);
	gsf_init();
	if ((src = gsf_input_memory_new((const guint8 *)data, (gsf_off_t)len,
	    FALSE)) == NULL) {
		snprintf(err, errsz, "out of memory");
		rc = DOC_ENOMEM;
		goto out;
	}
	if ((ole = gsf_infile_msole_new(src, &gerr)) == NULL) {
		snprintf(err, errsz, "the file is not an Outlook message (OLE "
		    "compound file): %s", gerr != NULL && gerr->message !=
		    NULL ? gerr->message : "unreadable");
		goto out;
	}
	if ((child = gsf_infile_child_by_name(ole,
	    "__properties_version1.0")) == NULL) {
		snprintf(err, errsz, "the file is an OLE compound file but no "
		    "Outlook message");
		goto out;
	}
	g_object_unref(child);
	msg_header(ole, "Subject", "0037", &sb, lim->max_unpacked);
	{
		struct dbuf name = { 0 }, addr = { 0 };

		msg_prop(ole, "0C1A", &name, lim->max_unpacked);
		if (!msg_prop(ole, "5D01", &addr, lim->max_unpacked))
			msg_prop(ole, "0C1F", &addr, lim->max_unpacked);
		if (name.len > 0 || addr.len > 0)
			dbuf_addf(&sb, "From: %.*s%s%.*s%s\n", (int)name.len,
			    name.p ? name.p : "", name.len && addr.len ? " <" :
			    "", (int)addr.len, addr.p ? addr.p : "", name.len &&
			    addr.len ? ">" : "");
		dbuf_free(&name);
		dbuf_free(&addr);
	}
	msg_header(ole, "To", "0E04", &sb, lim->max_unpacked);
	msg_header(ole, "Cc", "0E03", &sb, lim->max_unpacked);
	dbuf_addstr(&sb, "\n");
	msg_prop(ole, "1000", &sb, lim->max_unpacked);
	dbuf_addstr(&sb, "\n\n");
	n = gsf_infile_num_children(ole);
	for (i = 0; i < n; i++) {
		if ((child = gsf_infile_child_by_index(ole, i)) == NULL)
			continue;
		cname = gsf_input_name(child);
		if (cname != NULL && strncmp(cname, "__attach_version1.0_",
		    20) == 0 && GSF_IS_INFILE(child) && natt++ <
		    MSG_MAX_ATTACH) {
			dbuf_init(&att, lim->max_unpacked);
			if (!msg_prop(GSF_INFILE(child), "3707", &att,
			    lim->max_unpacked) || att.len == 0)
				msg_prop(GSF_INFILE(child), "3704", &att,
				    lim->max_unpacked);
			if (att.len > 0)
				dbuf_addf(&sb, "Attachment: %.*s\n",
				    (int)att.len, att.p);
			else
				dbuf_addstr(&sb, "Attachment: (unnamed)\n");
			dbuf_free(&att);
		}
		g_object_unref(child);
	}
	if ((rc = doc_take(&sb, err, errsz, &raw)) != 0)
		goto out;
	doc_tidy(raw);
	doc_add_utf8(&sb, raw, strlen(raw));
	rc = doc_take(&sb, err, errsz, &d->text);
out:
	free(raw);
	dbuf_free(&sb);
	dbuf_free(&att);
	if (gerr != NULL)
		g_error_free(gerr);
	if (ole != NULL)
		g_object_unref(ole);
	if (src != NULL)
		g_object_unref(src);
	return rc;
}
