/*
 * email.c — mail over SMTP, for Dify's `email` plugin (langgenius/email:
 * tools send_mail, send_mail_batch) and the plugin
 * wjdsg/163-smtp-send-mail (tool 163-smtp-send-mail).
 *
 * email's credentials (engine/tools/providers/email.yml): smtp_server,
 * smtp_port, email_account, email_password (secret), encrypt_method
 * (SSL: TLS from the first byte; TLS: STARTTLS, required; NONE: none) and
 * sender_address (the From and the envelope sender when it is not
 * email_account). The tools answer as the plugin does: a text message,
 * the JSON of {recipient: "send email success"} indented by two, or the
 * plugin's message for a bad parameter ("please input email subject",
 * "Invalid parameter receiver email, ..."), or "Failed to send email:
 * <why>" when the server would not take the mail.
 *
 * 163-smtp-send-mail takes its account from its parameters
 * (username_send, authorization_code, username_recv, subject, content)
 * and sends through smtp.163.com:465 over SSL; credentials of the same
 * names as email's (smtp_server, smtp_port, encrypt_method) replace that
 * server, as for a test.
 *
 * The message is built here: multipart/mixed of a multipart/alternative
 * (text/plain; text/html too with convert_to_html, the markdown turned
 * into HTML) and the attachments, every part UTF-8 in base64, a
 * non-ASCII subject as RFC 2047 encoded-words. No header takes a CR or
 * LF from a parameter: addresses must match the plugin's pattern, CR and
 * LF in the subject become spaces, a reply_to with one is refused.
 * Limits: each attachment tools.max_file_size, the whole message
 * EMAIL_MAX_MESSAGE, EMAIL_MAX_RCPT recipients; the exchange takes at
 * most tools.timeout seconds. libcurl speaks SMTP; the server is one the
 * admin configured, so no SSRF guard applies to it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "engine/tools/tools.h"

#define EMAIL_MAX_MESSAGE	(32 * 1024 * 1024)	/* bytes sent */
#define EMAIL_MAX_RCPT		100			/* to + cc + bcc */
#define EMAIL_163_SERVER	"smtp.163.com"
#define EMAIL_163_PORT		"465"

/* ====== Tools ====== */

static const struct tool_param p_send[] = {
	{ "send_to", "string", 1, "Recipient email account (comma-separated "
	    "or a JSON list)" },
	{ "reply_to", "string", 0, "Reply-to email address" },
	{ "cc", "string", 0, "Carbon copy email account(json list)" },
	{ "bcc", "string", 0, "Blind carbon copy email account(json list)" },
	{ "subject", "string", 1, "email subject" },
	{ "email_content", "string", 1, "email content" },
	{ "convert_to_html", "boolean", 0, "Whether to convert the email "
	    "content from markdown to HTML format" },
	{ "attachments", "array", 0, "Files to attach to the email" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_batch[] = {
	{ "send_to", "string", 1, "A list of recipient email account(json "
	    "format)" },
	{ "reply_to", "string", 0, "Reply-to email address" },
	{ "cc", "string", 0, "Carbon copy email account(json list)" },
	{ "bcc", "string", 0, "Blind carbon copy email account(json list)" },
	{ "subject", "string", 1, "email subject" },
	{ "email_content", "string", 1, "email content" },
	{ "convert_to_html", "boolean", 0, "Whether to convert the email "
	    "content from markdown to HTML format" },
	{ "attachments", "array", 0, "Files to attach to the email" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_def defs[] = {
	{ "send_mail", "A tool for sending email", p_send },
	{ "send_mail_batch", "A tool for sending email to multiple "
	    "recipients", p_batch },
	{ NULL, NULL, NULL },
};

static const struct tool_param p_163[] = {
	{ "username_send", "string", 1, "The sender's 163 mailbox" },
	{ "authorization_code", "string", 1, "The mailbox's SMTP "
	    "authorization code" },
	{ "username_recv", "string", 1, "The recipient's mailbox (several "
	    "comma-separated)" },
	{ "subject", "string", 1, "email subject" },
	{ "content", "string", 1, "email content" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_def defs_163[] = {
	{ "163-smtp-send-mail", "Send an email through a 163 mailbox over "
	    "SMTP", p_163 },
	{ NULL, NULL, NULL },
};

/* ====== Addresses ====== */

/* The plugin's pattern: ^[a-zA-Z0-9._-]+@[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)+$ */
static int
addr_ok(const char *s)
{
	const char	*p = s;
	int		 n = 0, labels = 0;

	if (s == NULL)
		return 0;
	while (isalnum((unsigned char)*p) || *p == '.' || *p == '_' ||
	    *p == '-')
		p++, n++;
	if (n == 0 || *p++ != '@')
		return 0;
	for (;;) {
		for (n = 0; isalnum((unsigned char)*p) || *p == '_' ||
		    *p == '-'; p++)
			n++;
		if (n == 0)
			return 0;
		labels++;
		if (*p == '\0')
			break;
		if (*p++ != '.')
			return 0;
	}
	return labels >= 2;
}

/*
 * The addresses of parameter text s into list (appended): a JSON list
 * when s starts with '[' (or always with json_only), else comma-separated.
 * Returns 0, 1 when it is not JSON (the caller answers), -1 when out of
 * memory.
 */
static int
addr_split(const char *s, int json_only, json_t *list)
{
	json_t		*arr, *v;
	const char	*p, *end;
	size_t		 i, n;
	char		*one;
	int		 rc = 0;

	if (json_only || *s == '[') {
		if ((arr = json_loads(s, JSON_DECODE_ANY, NULL)) == NULL ||
		    !json_is_array(arr)) {
			json_decref(arr);
			return 1;
		}
		json_array_foreach(arr, i, v) {
			/* a non-string fails the pattern, as in Python */
			if (json_array_append_new(list, json_is_string(v) ?
			    json_copy(v) : json_string("")) != 0) {
				rc = -1;
				break;
			}
		}
		json_decref(arr);
		return rc;
	}
	for (p = s; *p != '\0'; p = *end ? end + 1 : end) {
		end = p + strcspn(p, ",");
		while (p < end && isspace((unsigned char)*p))
			p++;
		n = (size_t)(end - p);
		while (n > 0 && isspace((unsigned char)p[n - 1]))
			n--;
		if (n == 0)
			continue;
		if ((one = strndup(p, n)) == NULL ||
		    json_array_append_new(list, json_string(one)) != 0) {
			free(one);
			return -1;
		}
		free(one);
	}
	return 0;
}

/* ====== The message ====== */

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* base64 of n bytes into b, lines of 76 with CRLF when wrap. */
static void
add_b64(struct dbuf *b, const unsigned char *p, size_t n, int wrap)
{
	char	q[4];
	size_t	i, col = 0;

	for (i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;

		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		q[0] = b64chars[(v >> 18) & 63];
		q[1] = b64chars[(v >> 12) & 63];
		q[2] = i + 1 < n ? b64chars[(v >> 6) & 63] : '=';
		q[3] = i + 2 < n ? b64chars[v & 63] : '=';
		dbuf_add(b, q, 4);
		if (wrap && (col += 4) == 76 && i + 3 < n) {
			dbuf_add(b, "\r\n", 2);
			col = 0;
		}
	}
	if (wrap)
		dbuf_add(b, "\r\n", 2);
}

/*
 * A header value of free text (the subject): CR and LF become spaces;
 * as it is when printable ASCII (and short), else RFC 2047 encoded-words
 * of at most 45 bytes each, cut between UTF-8 characters, one per folded
 * line.
 */
static void
add_text_header(struct dbuf *b, const char *name, const char *s)
{
	size_t	n = strlen(s), i, start, len;
	int	plain = n < 900;
	char	*t;

	for (i = 0; i < n && plain; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			plain = 0;
	dbuf_addf(b, "%s: ", name);
	if (plain) {
		dbuf_add(b, s, n);
		dbuf_add(b, "\r\n", 2);
		return;
	}
	if ((t = strdup(s)) == NULL) {
		b->err = DBUF_ENOMEM;
		return;
	}
	for (i = 0; i < n; i++)
		if (t[i] == '\r' || t[i] == '\n')
			t[i] = ' ';
	for (start = 0; start < n; start += len) {
		len = n - start > 45 ? 45 : n - start;
		/* back off a continuation byte so a character stays whole */
		while (start + len < n && len > 1 &&
		    ((unsigned char)t[start + len] & 0xc0) == 0x80)
			len--;
		if (start > 0)
			dbuf_add(b, "\r\n ", 3);
		dbuf_addstr(b, "=?utf-8?b?");
		add_b64(b, (const unsigned char *)t + start, len, 0);
		dbuf_addstr(b, "?=");
	}
	dbuf_add(b, "\r\n", 2);
	free(t);
}

/* Joined addresses of list as a header, or nothing when it is empty. */
static void
add_addr_header(struct dbuf *b, const char *name, const json_t *list)
{
	const json_t	*v;
	size_t		 i;

	if (json_array_size(list) == 0)
		return;
	dbuf_addf(b, "%s: ", name);
	json_array_foreach(list, i, v)
		dbuf_addf(b, "%s%s", i ? ", " : "", json_string_value(v));
	dbuf_add(b, "\r\n", 2);
}

static void
add_text_part(struct dbuf *b, const char *boundary, const char *subtype,
    const char *text)
{
	dbuf_addf(b, "--%s\r\nContent-Type: text/%s; charset=\"utf-8\"\r\n"
	    "MIME-Version: 1.0\r\nContent-Transfer-Encoding: base64\r\n\r\n",
	    boundary, subtype);
	add_b64(b, (const unsigned char *)text, strlen(text), 1);
}

/* filename="x" for a plain ASCII name, else RFC 2231's filename*=. */
static void
add_filename(struct dbuf *b, const char *name)
{
	const unsigned char	*p;
	int			 plain = 1;

	for (p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
			plain = 0;
	if (plain) {
		dbuf_addf(b, "filename=\"%s\"", name);
		return;
	}
	dbuf_addstr(b, "filename*=utf-8''");
	for (p = (const unsigned char *)name; *p; p++)
		if (isalnum(*p) || strchr("!#$&+-.^_`|~", *p) != NULL)
			dbuf_addc(b, (char)*p);
		else
			dbuf_addf(b, "%%%02X", *p);
}

/* ====== Markdown to HTML (convert_to_html) ====== */

static void
add_html_esc(struct dbuf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		switch (s[i]) {
		case '<': dbuf_addstr(b, "&lt;"); break;
		case '>': dbuf_addstr(b, "&gt;"); break;
		case '&': dbuf_addstr(b, "&amp;"); break;
		case '"': dbuf_addstr(b, "&quot;"); break;
		default: dbuf_addc(b, s[i]); break;
		}
}

/* One line's inline marks: **bold**, *italic*, `code`, escaped. */
static void
add_inline(struct dbuf *b, const char *s, size_t n)
{
	size_t		 i = 0, j;
	const char	*close;
	size_t		 mark;

	while (i < n) {
		mark = s[i] == '`' ? 1 : (s[i] == '*' && i + 1 < n &&
		    s[i + 1] == '*') ? 2 : s[i] == '*' ? 1 : 0;
		if (mark == 0)
			goto plain;
		for (j = i + mark; j + mark <= n; j++)
			if (memcmp(s + j, s + i, mark) == 0)
				break;
		if (j + mark > n || j == i + mark)
			goto plain;
		close = s[i] == '`' ? "code" : mark == 2 ? "strong" : "em";
		dbuf_addf(b, "<%s>", close);
		add_html_esc(b, s + i + mark, j - i - mark);
		dbuf_addf(b, "</%s>", close);
		i = j + mark;
		continue;
plain:
		add_html_esc(b, s + i, 1);
		i++;
	}
}

/*
 * The plugin's convert_markdown_to_html, in its main forms: # headings,
 * ``` code blocks, - / * / 1. lists, paragraphs (lines joined by <br>),
 * inline bold, italic and code; everything else escaped as text.
 */
static char *
markdown_html(const char *md)
{
	struct dbuf	 b;
	const char	*line, *end;
	size_t		 n, h;
	int		 code = 0, list = 0, para = 0;

	dbuf_init(&b, 0);
	dbuf_addstr(&b, "<html><body>\n");
	for (line = md; *line != '\0' || line == md; line = *end ? end + 1 :
	    end) {
		end = line + strcspn(line, "\n");
		n = (size_t)(end - line);
		if (n > 0 && line[n - 1] == '\r')
			n--;
		if (n >= 3 && strncmp(line, "```", 3) == 0) {
			if (para)
				dbuf_addstr(&b, "</p>\n"), para = 0;
			dbuf_addstr(&b, code ? "</code></pre>\n" :
			    "<pre><code>");
			code = !code;
		} else if (code) {
			add_html_esc(&b, line, n);
			dbuf_addc(&b, '\n');
		} else if (n >= 2 && (line[0] == '-' || line[0] == '*') &&
		    line[1] == ' ') {
			if (para)
				dbuf_addstr(&b, "</p>\n"), para = 0;
			if (!list)
				dbuf_addstr(&b, "<ul>\n"), list = 1;
			dbuf_addstr(&b, "<li>");
			add_inline(&b, line + 2, n - 2);
			dbuf_addstr(&b, "</li>\n");
		} else {
			if (list)
				dbuf_addstr(&b, "</ul>\n"), list = 0;
			for (h = 0; h < n && h < 7 && line[h] == '#'; h++)
				;
			if (h >= 1 && h <= 6 && h < n && line[h] == ' ') {
				if (para)
					dbuf_addstr(&b, "</p>\n"), para = 0;
				dbuf_addf(&b, "<h%zu>", h);
				add_inline(&b, line + h + 1, n - h - 1);
				dbuf_addf(&b, "</h%zu>\n", h);
			} else if (n == 0) {
				if (para)
					dbuf_addstr(&b, "</p>\n"), para = 0;
			} else {
				dbuf_addstr(&b, para ? "<br>\n" : "<p>");
				para = 1;
				add_inline(&b, line, n);
			}
		}
		if (*end == '\0')
			break;
	}
	if (para)
		dbuf_addstr(&b, "</p>\n");
	if (list)
		dbuf_addstr(&b, "</ul>\n");
	if (code)
		dbuf_addstr(&b, "</code></pre>\n");
	dbuf_addstr(&b, "</body></html>\n");
	if (b.err != DBUF_OK) {
		dbuf_free(&b);
		return NULL;
	}
	return dbuf_take(&b, NULL);
}

/* ====== Sending ====== */

struct mail {
	const char	*server;
	const char	*port;
	const char	*method;	/* SSL, TLS, NONE */
	const char	*user;
	const char	*password;
	const char	*from;
	const char	*reply_to;	/* or NULL */
	const char	*subject;
	const char	*text;		/* text/plain */
	const char	*html;		/* text/html, or NULL */
	json_t		*to, *cc, *bcc;	/* arrays of address strings */
	const json_t	*files;		/* array of file objects, or NULL */
};

struct upload {
	const char	*p;
	size_t		 left;
};

static size_t
upload_read(char *buf, size_t size, size_t nitems, void *arg)
{
	struct upload	*u = arg;
	size_t		 n = size * nitems;

	if (n > u->left)
		n = u->left;
	memcpy(buf, u->p, n);
	u->p += n;
	u->left -= n;
	return n;
}

/* The whole message of m into b. Returns 0 or an ENGINE_E* code. */
static int
mail_build(struct engine *e, const struct mail *m, char *err,
    struct dbuf *b)
{
	unsigned char	 rnd[12];
	char		 outer[64], alt[64], date[64], *data = NULL, mime[128];
	const char	*name, *domain, *mt;
	const json_t	*f;
	struct tm	 tm;
	time_t		 now = time(NULL);
	size_t		 i, len;
	int		 rc = 0;

	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		return engine_invalid(err, "no random bytes for the MIME "
		    "boundary");
	snprintf(outer, sizeof(outer), "===============%02x%02x%02x%02x%02x"
	    "%02x==", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	snprintf(alt, sizeof(alt), "===============%02x%02x%02x%02x%02x%02x"
	    "==", rnd[6], rnd[7], rnd[8], rnd[9], rnd[10], rnd[11]);
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
	domain = strchr(m->from, '@');
	dbuf_addf(b, "Content-Type: multipart/mixed; boundary=\"%s\"\r\n"
	    "MIME-Version: 1.0\r\nDate: %s\r\nMessage-ID: <%02x%02x%02x%02x"
	    "%02x%02x%02x%02x.%lld@%s>\r\nFrom: %s\r\n", outer, date, rnd[0],
	    rnd[1], rnd[2], rnd[3], rnd[8], rnd[9], rnd[10], rnd[11],
	    (long long)now, domain ? domain + 1 : "flowcgi", m->from);
	if (m->reply_to != NULL && *m->reply_to != '\0')
		dbuf_addf(b, "Reply-To: %s\r\n", m->reply_to);
	add_addr_header(b, "To", m->to);
	add_addr_header(b, "CC", m->cc);
	add_text_header(b, "Subject", m->subject);
	dbuf_addf(b, "\r\n--%s\r\nContent-Type: multipart/alternative; "
	    "boundary=\"%s\"\r\nMIME-Version: 1.0\r\n\r\n", outer, alt);
	add_text_part(b, alt, "plain", m->text);
	if (m->html != NULL)
		add_text_part(b, alt, "html", m->html);
	dbuf_addf(b, "--%s--\r\n", alt);
	json_array_foreach(m->files, i, f) {
		if (!json_is_object(f))
			continue;
		if ((rc = tool_file_bytes(e, f, "attachment", err, &data,
		    &len)) != 0)
			goto out;
		name = json_string_value(json_object_get(f, "filename"));
		if (name == NULL || *name == '\0')
			name = "attachment";
		mt = json_string_value(json_object_get(f, "mime_type"));
		/* a MIME type of token characters only, or the default */
		if (mt == NULL || strlen(mt) >= sizeof(mime) || strspn(mt,
		    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789!#$&^_.+-/") != strlen(mt) ||
		    strchr(mt, '/') == NULL)
			mt = "application/octet-stream";
		snprintf(mime, sizeof(mime), "%s", mt);
		dbuf_addf(b, "--%s\r\nContent-Type: %s\r\nMIME-Version: 1.0\r\n"
		    "Content-Transfer-Encoding: base64\r\nContent-Disposition: "
		    "attachment; ", outer, mime);
		add_filename(b, name);
		dbuf_addstr(b, "\r\n\r\n");
		add_b64(b, (const unsigned char *)data, len, 1);
		free(data);
		data = NULL;
		if (b->err != DBUF_OK)
			break;
	}
	dbuf_addf(b, "--%s--\r\n", outer);
	if (b->err == DBUF_ETOOBIG)
		rc = engine_invalid(err, "the message is larger than %d bytes",
		    EMAIL_MAX_MESSAGE);
	else if (b->err != DBUF_OK)
		rc = ENGINE_ENOMEM;
out:
	free(data);
	return rc;
}

/*
 * Sends m. Returns 0 (sent), 1 with why (bufsz bytes) when the server
 * or the connection failed (the tool answers with it), or an ENGINE_E*
 * code with err.
 */
static int
mail_send(struct engine *e, const struct mail *m, char *err, char *why,
    size_t bufsz)
{
	struct curl_slist	*rcpt = NULL, *nl;
	struct upload		 up;
	struct dbuf		 msg;
	char			 url[1200], cerr[CURL_ERROR_SIZE] = "";
	const json_t		*lists[3] = { m->to, m->cc, m->bcc }, *v;
	CURL			*c = NULL;
	CURLcode		 cc;
	long			 code = 0;
	size_t			 i, k;
	int			 rc = 0, ssl = strcasecmp(m->method, "SSL") == 0;

	dbuf_init(&msg, EMAIL_MAX_MESSAGE);
	if ((rc = mail_build(e, m, err, &msg)) != 0)
		goto out;
	for (k = 0; k < 3; k++)
		json_array_foreach(lists[k], i, v) {
			if ((nl = curl_slist_append(rcpt,
			    json_string_value(v))) == NULL) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
			rcpt = nl;
		}
	/* a host of [A-Za-z0-9.-:] only (an IPv6 address in brackets) */
	if (strspn(m->server, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
	    "VWXYZ0123456789.-:[]") != strlen(m->server) ||
	    *m->server == '\0') {
		rc = engine_invalid(err, "smtp_server '%s' is not a host name",
		    m->server);
		goto out;
	}
	snprintf(url, sizeof(url), "%s://%s:%s", ssl ? "smtps" : "smtp",
	    m->server, m->port);
	if ((c = curl_easy_init()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	up.p = msg.p;
	up.left = msg.len;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)e->conf->tools_timeout);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT,
	    (long)e->conf->http_connect_timeout);
	if (strcasecmp(m->method, "TLS") == 0)
		curl_easy_setopt(c, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
	curl_easy_setopt(c, CURLOPT_USERNAME, m->user);
	curl_easy_setopt(c, CURLOPT_PASSWORD, m->password);
	curl_easy_setopt(c, CURLOPT_MAIL_FROM, m->from);
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)msg.len);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, upload_read);
	curl_easy_setopt(c, CURLOPT_READDATA, &up);
	if ((cc = curl_easy_perform(c)) != CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		if (code >= 400)	/* the server's refusal */
			snprintf(why, bufsz, "%ld %s", code, cerr[0] ? cerr :
			    curl_easy_strerror(cc));
		else
			snprintf(why, bufsz, "%s", cerr[0] ? cerr :
			    curl_easy_strerror(cc));
		/* no credential's value in what the tool answers */
		llm_scrub(why, m->password);
		llm_scrub(why, m->user);
		llm_scrub(why, m->server);
		rc = 1;
	}
out:
	if (c != NULL)
		curl_easy_cleanup(c);
	curl_slist_free_all(rcpt);
	if (msg.p != NULL)
		OPENSSL_cleanse(msg.p, msg.len);
	dbuf_free(&msg);
	return rc;
}

/* ====== The tools ====== */

static int
say(struct tool_result *out, const char *s)
{
	return tool_result_text(out, s, strlen(s));
}

/* A credential as text ("" when missing or not a string). */
static const char *
cred(const json_t *creds, const char *key)
{
	const char *s = json_string_value(json_object_get(creds, key));

	return s ? s : "";
}

/* A port of 1 to 65535 as text, or NULL. */
static const char *
port_ok(const char *s)
{
	char	*end;
	long	 v;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return NULL;
	v = strtol(s, &end, 10);
	while (isspace((unsigned char)*end))
		end++;
	return *end == '\0' && v >= 1 && v <= 65535 ? s : NULL;
}

/*
 * The answer of a sent mail: {recipient: "send email success"} as Python's
 * json.dumps(msg, indent=2) writes it, each recipient once.
 */
static int
answer(struct tool_result *out, const struct mail *m, size_t nfiles)
{
	const json_t	*lists[3] = { m->to, m->cc, m->bcc }, *v;
	json_t		*seen = json_object();
	struct dbuf	 b;
	const char	*a;
	size_t		 i, k, n = 0;
	int		 rc;

	dbuf_init(&b, TOOL_MAX_TEXT);
	if (nfiles > 0)
		dbuf_addf(&b, "Email sent with %zu attachment(s). Details: ",
		    nfiles);
	dbuf_addc(&b, '{');
	for (k = 0; k < 3; k++)
		json_array_foreach(lists[k], i, v) {
			a = json_string_value(v);
			if (seen == NULL || json_object_get(seen, a) != NULL)
				continue;
			json_object_set_new(seen, a, json_true());
			dbuf_addstr(&b, n++ ? ",\n  " : "\n  ");
			tpl_add_json_str(&b, a, strlen(a), 1);
			dbuf_addstr(&b, ": \"send email success\"");
		}
	dbuf_addstr(&b, n ? "\n}" : "}");
	json_decref(seen);
	rc = b.err == DBUF_OK ? tool_result_text(out, b.p, b.len) :
	    ENGINE_ENOMEM;
	dbuf_free(&b);
	return rc;
}

/* Checks every address of list; NULL when all pass, else the first bad. */
static const char *
bad_addr(const json_t *list)
{
	const json_t	*v;
	size_t		 i;

	json_array_foreach(list, i, v)
		if (!addr_ok(json_string_value(v)))
			return json_is_string(v) ? json_string_value(v) : "";
	return NULL;
}

/* The plugin's send_mail and send_mail_batch (batch: send_to is JSON). */
static int
email_send_tool(struct engine *e, const struct tool_call *call, int batch,
    char *err, struct tool_result *out)
{
	const json_t	*creds = call->credentials, *att;
	struct mail	 m;
	json_t		*one = NULL, *files = NULL;
	const char	*sender, *raw_sender, *bad, *s, *cc, *bcc;
	char		*b[6] = { NULL }, *html = NULL, msg[ENGINE_ERRMAX + 200];
	char		 why[ENGINE_ERRMAX];
	size_t		 nrcpt;
	int		 rc = 0, r, k;

	memset(&m, 0, sizeof(m));
	why[0] = '\0';
	if ((m.to = json_array()) == NULL || (m.cc = json_array()) == NULL ||
	    (m.bcc = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	sender = cred(creds, "email_account");
	raw_sender = cred(creds, "sender_address");
	m.from = *raw_sender ? raw_sender : sender;
	m.user = sender;
	m.password = cred(creds, "email_password");
	m.server = cred(creds, "smtp_server");
	m.method = cred(creds, "encrypt_method");
	if (*m.server == '\0') {
		rc = say(out, "please input smtp server");
		goto out;
	}
	if ((m.port = port_ok(cred(creds, "smtp_port"))) == NULL) {
		rc = say(out, "Invalid parameter smtp_port(should be int)");
		goto out;
	}
	if (*raw_sender && !addr_ok(raw_sender)) {
		rc = say(out, "Invalid parameter sender_address(not a valid "
		    "mailbox address)");
		goto out;
	}
	if (!*raw_sender && !addr_ok(sender)) {
		rc = say(out, "Invalid parameter email_account(not a valid "
		    "mailbox address) to skip this validation, configure "
		    "sender_address");
		goto out;
	}
	s = tool_param_str(call->params, "send_to", &b[0]);
	if (s == NULL || *s == '\0') {
		rc = say(out, "please input receiver email");
		goto out;
	}
	if ((r = addr_split(s, batch, m.to)) != 0) {
		rc = r < 0 ? ENGINE_ENOMEM : say(out, batch ? "Invalid JSON "
		    "format for receivers list" : "Invalid JSON format for "
		    "'send_to' list");
		goto out;
	}
	if ((bad = bad_addr(m.to)) != NULL) {
		snprintf(msg, sizeof(msg), "Invalid parameter receiver email, "
		    "the receiver email(%s) is not a mailbox", bad);
		rc = say(out, msg);
		goto out;
	}
	m.text = tool_param_str(call->params, "email_content", &b[1]);
	if (m.text == NULL || *m.text == '\0') {
		rc = say(out, "please input email content");
		goto out;
	}
	m.subject = tool_param_str(call->params, "subject", &b[2]);
	if (m.subject == NULL || *m.subject == '\0') {
		rc = say(out, "please input email subject");
		goto out;
	}
	if (*m.method == '\0') {
		rc = say(out, "please input encrypt method");
		goto out;
	}
	if (strcasecmp(m.method, "SSL") != 0 && strcasecmp(m.method, "TLS") !=
	    0 && strcasecmp(m.method, "NONE") != 0) {
		rc = say(out, "Invalid parameter encrypt_method(should be SSL, "
		    "TLS or NONE)");
		goto out;
	}
	m.reply_to = tool_param_str(call->params, "reply_to", &b[3]);
	if (m.reply_to != NULL && strpbrk(m.reply_to, "\r\n") != NULL) {
		rc = say(out, "Invalid parameter reply_to(a header value "
		    "cannot hold a line break)");
		goto out;
	}
	cc = tool_param_str(call->params, "cc", &b[4]);
	bcc = tool_param_str(call->params, "bcc", &b[5]);
	for (k = 0; k < 2; k++) {
		s = k == 0 ? cc : bcc;
		if (s == NULL || *s == '\0')
			continue;
		if ((r = addr_split(s, batch, k == 0 ? m.cc : m.bcc)) != 0) {
			rc = r < 0 ? ENGINE_ENOMEM : say(out, k == 0 ?
			    "Invalid JSON format for CC list" :
			    "Invalid JSON format for BCC list");
			goto out;
		}
		if ((bad = bad_addr(k == 0 ? m.cc : m.bcc)) != NULL) {
			snprintf(msg, sizeof(msg), "Invalid parameter %s email, "
			    "the %s email(%s) is not a mailbox", k ? "bcc" :
			    "cc", k ? "bcc" : "cc", bad);
			rc = say(out, msg);
			goto out;
		}
	}
	nrcpt = json_array_size(m.to) + json_array_size(m.cc) +
	    json_array_size(m.bcc);
	if (nrcpt == 0) {
		rc = say(out, "please input receiver email");
		goto out;
	}
	if (nrcpt > EMAIL_MAX_RCPT) {
		out->final = 1;
		rc = engine_invalid(err, "more than %d recipients in one mail",
		    EMAIL_MAX_RCPT);
		goto out;
	}
	if (tool_param_bool(call->params, "convert_to_html", 0)) {
		if ((html = markdown_html(m.text)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		m.html = html;
	}
	att = json_object_get(call->params, "attachments");
	if (json_is_object(att)) {
		if ((one = json_array()) == NULL ||
		    json_array_append(one, (json_t *)att) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		att = one;
	}
	if (json_is_array(att) && json_array_size(att) > 0) {
		if ((files = json_array()) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		json_array_extend(files, (json_t *)att);
		m.files = files;
	}
	if ((rc = mail_send(e, &m, err, why, sizeof(why))) < 0)
		goto out;
	if (rc == 1) {
		/* libcurl sends nothing when a recipient is refused: as
		 * smtplib's SMTPRecipientsRefused, the whole mail failed */
		snprintf(msg, sizeof(msg), "Failed to send email: %s", why);
		rc = say(out, msg);
		goto out;
	}
	rc = answer(out, &m, json_array_size(m.files));
out:
	for (k = 0; k < 6; k++)
		free(b[k]);
	free(html);
	json_decref(one);
	json_decref(files);
	json_decref(m.to);
	json_decref(m.cc);
	json_decref(m.bcc);
	return rc;
}

/* wjdsg/163-smtp-send-mail: the account in the parameters. */
static int
send_163(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	const json_t	*creds = call->credentials;
	struct mail	 m;
	const char	*bad, *s;
	char		*b[5] = { NULL }, msg[ENGINE_ERRMAX + 200];
	char		 why[ENGINE_ERRMAX];
	int		 rc, r, k;

	memset(&m, 0, sizeof(m));
	if ((m.to = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	m.user = m.from = tool_param_str(call->params, "username_send", &b[0]);
	m.password = tool_param_str(call->params, "authorization_code",
	    &b[1]);
	s = tool_param_str(call->params, "username_recv", &b[2]);
	m.subject = tool_param_str(call->params, "subject", &b[3]);
	m.text = tool_param_str(call->params, "content", &b[4]);
	if (m.from == NULL || m.password == NULL || s == NULL ||
	    m.subject == NULL || m.text == NULL) {
		out->final = 1;
		rc = engine_invalid(err, "163-smtp-send-mail needs "
		    "username_send, authorization_code, username_recv, "
		    "subject and content");
		goto out;
	}
	if (!addr_ok(m.from)) {
		rc = say(out, "Invalid parameter username_send(not a valid "
		    "mailbox address)");
		goto out;
	}
	if ((r = addr_split(s, 0, m.to)) != 0) {
		rc = r < 0 ? ENGINE_ENOMEM : say(out, "Invalid JSON format "
		    "for username_recv");
		goto out;
	}
	if ((bad = bad_addr(m.to)) != NULL || json_array_size(m.to) == 0 ||
	    json_array_size(m.to) > EMAIL_MAX_RCPT) {
		snprintf(msg, sizeof(msg), "Invalid parameter username_recv, "
		    "the receiver email(%s) is not a mailbox", bad ? bad : s);
		rc = say(out, msg);
		goto out;
	}
	m.server = *cred(creds, "smtp_server") ? cred(creds, "smtp_server") :
	    EMAIL_163_SERVER;
	m.method = *cred(creds, "encrypt_method") ? cred(creds,
	    "encrypt_method") : "SSL";
	if ((m.port = port_ok(*cred(creds, "smtp_port") ? cred(creds,
	    "smtp_port") : EMAIL_163_PORT)) == NULL) {
		rc = say(out, "Invalid parameter smtp_port(should be int)");
		goto out;
	}
	if ((rc = mail_send(e, &m, err, why, sizeof(why))) < 0)
		goto out;
	if (rc == 1) {
		snprintf(msg, sizeof(msg), "Failed to send email: %s", why);
		rc = say(out, msg);
		goto out;
	}
	rc = say(out, "send email success");
out:
	for (k = 0; k < 5; k++)
		free(b[k]);
	json_decref(m.to);
	return rc;
}

static int
email_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
email_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	if (strcmp(call->tool, "send_mail") == 0)
		return email_send_tool(e, call, 0, err, out);
	if (strcmp(call->tool, "send_mail_batch") == 0)
		return email_send_tool(e, call, 1, err, out);
	engine_invalid(err, "tool '%s/%s' is not available in flowcgi",
	    call->provider, call->tool);
	return ENGINE_ENOTFOUND;
}

static int
email163_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(defs_163);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
email163_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	if (strcmp(call->tool, "163-smtp-send-mail") == 0)
		return send_163(e, call, err, out);
	engine_invalid(err, "tool '%s/%s' is not available in flowcgi",
	    call->provider, call->tool);
	return ENGINE_ENOTFOUND;
}

const struct tool_provider tool_provider_email = {
	"email", email_list, email_invoke, 1,
};

const struct tool_provider tool_provider_email163 = {
	"163-smtp-send-mail", email163_list, email163_invoke, 1,
};
