/*
 * msg.c — Outlook's .msg (an OLE compound file, read with libgsf's
 * GsfInfileMSOle): the message's properties stored as streams
 * (__substg1.0_<tag><type>): Subject, From (sender name and address), To,
 * Cc, then the plain-text body, then a line naming each attachment
 * (__attach_version1.0_#N's long or short file name). Unicode properties
 * (type 001F) are UTF-16LE; 8-bit ones (001E) are taken as UTF-8 when
 * they are, else as Windows-1252. Without a plain body, the HTML one
 * (PidTagHtml) read as html is, else the compressed RTF one
 * (PidTagRtfCompressed: LZFu unpacked by libpst, its text by rtf.c). The
 * submit time as a Date line. Attachments' contents are not read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


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

/* The bytes of binary property tag (type 0102) of storage in, at most max:
 * g_malloc'd copy in *out, or NULL when it is not there. */
static guint8 *
msg_bin(GsfInfile *in, const char *tag, size_t max, size_t *outlen)
{
	char		 name[64];
	GsfInput	*s;
	gsf_off_t	 n;
	guint8		*p = NULL;

	*outlen = 0;
	snprintf(name, sizeof(name), "__substg1.0_%s0102", tag);
	if ((s = gsf_infile_child_by_name(in, name)) == NULL)
		return NULL;
	n = gsf_input_size(s);
	if (n > 0 && (size_t)n <= max && (p = g_try_malloc((gsize)n)) !=
	    NULL && gsf_input_read(s, (size_t)n, p) == NULL) {
		g_free(p);
		p = NULL;
	}
	if (p != NULL)
		*outlen = (size_t)n;
	g_object_unref(s);
	return p;
}

/* "Date: ..." from the message's submit (or delivery) time, a PT_SYSTIME
 * in the fixed-size property stream (32-byte header, 16-byte entries). */
static void
msg_date(GsfInfile *in, struct dbuf *sb)
{
	static const char *const wd[] = { "Sun", "Mon", "Tue", "Wed", "Thu",
		"Fri", "Sat" };
	static const char *const mon[] = { "Jan", "Feb", "Mar", "Apr", "May",
		"Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	static const guint32 tags[] = { 0x00390040, 0x0e060040 };
	GsfInput	*s;
	const guint8	*p;
	gsf_off_t	 n;
	size_t		 off, t;
	guint64		 ft = 0;
	guint32		 tag;
	time_t		 secs;
	struct tm	 tm;

	if ((s = gsf_infile_child_by_name(in, "__properties_version1.0")) ==
	    NULL)
		return;
	n = gsf_input_size(s);
	if (n > 32 && n <= (1 << 20) && (p = gsf_input_read(s, (size_t)n,
	    NULL)) != NULL)
		for (t = 0; t < 2 && ft == 0; t++)
			for (off = 32; off + 16 <= (size_t)n; off += 16) {
				tag = GSF_LE_GET_GUINT32(p + off);
				if (tag == tags[t]) {
					ft = GSF_LE_GET_GUINT64(p + off + 8);
					break;
				}
			}
	g_object_unref(s);
	/* 100 ns since 1601-01-01; 11644473600 s to 1970 */
	if (ft / 10000000ULL < 11644473600ULL || ft / 10000000ULL >
	    11644473600ULL + 253402300799ULL)
		return;
	secs = (time_t)(ft / 10000000ULL - 11644473600ULL);
	if (gmtime_r(&secs, &tm) == NULL)
		return;
	dbuf_addf(sb, "Date: %s, %02d %s %04d %02d:%02d:%02d +0000\n",
	    wd[tm.tm_wday % 7], tm.tm_mday, mon[tm.tm_mon % 12],
	    tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* The body when there is no plain one: PidTagHtml (binary or string) read
 * as html is, else PidTagRtfCompressed (LZFu, MS-OXRTFCP) unpacked by
 * libpst and its text taken (rtf.c). 0, or a DOC_E* code with err. */
static int
msg_alt_body(GsfInfile *in, const struct doc_limits *lim, struct dbuf *sb,
    char *err, size_t errsz)
{
	struct dbuf	 h = { 0 };
	guint8		*bin;
	char		*text = NULL;
	size_t		 n;
	int		 rc = 0;

	if ((bin = msg_bin(in, "1013", lim->max_unpacked, &n)) == NULL &&
	    msg_prop(in, "1013", &h, lim->max_unpacked) && h.len > 0) {
		bin = g_memdup2(h.p, h.len);
		n = h.len;
	}
	dbuf_free(&h);
	if (bin != NULL) {
		rc = doc_html_text((const char *)bin, n, 1, err, errsz, &text);
		g_free(bin);
		if (rc == 0)
			dbuf_addstr(sb, text);
		free(text);
		return rc;
	}
	if ((bin = msg_bin(in, "1009", lim->max_unpacked, &n)) == NULL)
		return 0;
	rc = doc_rtf_compressed_text((const char *)bin, n, lim, sb, err,
	    errsz);
	g_free(bin);
	return rc;
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

static int
msg_read_here(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	GsfInput	*src = NULL, *child;
	GsfInfile	*ole = NULL;
	GError		*gerr = NULL;
	struct dbuf	 sb, att = { 0 };
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
	msg_date(ole, &sb);
	dbuf_addstr(&sb, "\n");
	{
		size_t before = sb.len;

		msg_prop(ole, "1000", &sb, lim->max_unpacked);
		if (sb.len == before && (rc = msg_alt_body(ole, lim, &sb, err,
		    errsz)) != 0)
			goto out;
		rc = DOC_EDAMAGED;
	}
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
	rc = doc_take_tidy(&sb, err, errsz, &d->text);
out:
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

/*
 * libgsf's OLE directory reader leaks on some damaged compound files: the
 * message is read in a child process (child.c).
 */
int
doc_read_msg(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	return doc_read_in_child(msg_read_here, "Outlook message", NULL,
	    data, len, lim, d, err, errsz);
}
