/*
 * t_tools_email.c — the email provider (send_mail, send_mail_batch) and
 * 163-smtp-send-mail against a real SMTP exchange on loopback
 * (tests/fakes/fake_smtp.py, RFC 5321 with AUTH PLAIN/LOGIN): the
 * envelope (MAIL FROM, every RCPT), the login, the headers and the
 * decoded body parts as received; the plugin's messages for bad
 * parameters, a refused recipient, a wrong password (never echoed), no
 * header injection through the subject or reply_to; STARTTLS required in
 * TLS mode, negotiated, and the server's certificate checked (SSL too).
 */
#include "tap.h"
#include "t_node_run.h"

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/tools/tools.h"

static pid_t	 smtp_pid = -1;
static int	 smtp_port;
static char	 smtp_log[300];
static json_t	*creds;

/*
 * Starts a fake logging to log, with TLS (the certificate cert.pem and
 * key.pem of tn_dir) when tls is "starttls" or "ssl"; *pid and *port
 * set. 0, or -1 when it would not start.
 */
static int
fake_start(const char *log, const char *tls, pid_t *pid, int *port)
{
	char	 line[64], cert[300], key[300];
	int	 fds[2];
	FILE	*f;

	snprintf(cert, sizeof(cert), "%s/cert.pem", tn_dir);
	snprintf(key, sizeof(key), "%s/key.pem", tn_dir);
	if (pipe(fds) != 0)
		return -1;
	if ((*pid = fork()) == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		if (tls == NULL)
			execlp("python3", "python3", "tests/fakes/fake_smtp.py",
			    "--log", log, (char *)NULL);
		else
			execlp("python3", "python3", "tests/fakes/fake_smtp.py",
			    "--log", log, "--cert", cert, "--key", key,
			    strcmp(tls, "ssl") == 0 ? "--ssl" : (char *)NULL,
			    (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (*pid < 0 || (f = fdopen(fds[0], "r")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) == NULL ||
	    sscanf(line, "PORT %d", port) != 1) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

static int
smtp_start(void)
{
	snprintf(smtp_log, sizeof(smtp_log), "%s/smtp.log", tn_dir);
	return fake_start(smtp_log, NULL, &smtp_pid, &smtp_port);
}

/* 1 when file path holds text s. */
static int
file_has(const char *path, const char *s)
{
	char	 buf[1 << 16];
	size_t	 n;
	FILE	*f = fopen(path, "r");

	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strstr(buf, s) != NULL;
}

/* The messages the fake took, in order (new array). */
static json_t *
smtp_seen(void)
{
	json_t	*all = json_array(), *v;
	char	 line[1 << 16];
	FILE	*f = fopen(smtp_log, "r");

	if (f == NULL)
		return all;
	while (fgets(line, sizeof(line), f) != NULL)
		if ((v = json_loads(line, 0, NULL)) != NULL)
			json_array_append_new(all, v);
	fclose(f);
	return all;
}

static size_t
smtp_count(void)
{
	json_t	*a = smtp_seen();
	size_t	 n = json_array_size(a);

	json_decref(a);
	return n;
}

/* The last message taken (new reference) or NULL. */
static json_t *
smtp_last(void)
{
	json_t	*a = smtp_seen(), *v;

	v = json_array_size(a) ? json_incref(json_array_get(a,
	    json_array_size(a) - 1)) : NULL;
	json_decref(a);
	return v;
}

static int
call(const char *provider, const char *tool, const json_t *cr, json_t *p,
    struct tool_result *r, char *err)
{
	struct tool_call	c;
	int			rc;

	memset(&c, 0, sizeof(c));
	memset(r, 0, sizeof(*r));
	c.provider = provider;
	c.provider_type = "builtin";
	c.tool = tool;
	c.params = p;
	c.credentials = cr;
	err[0] = '\0';
	rc = tool_invoke(tn_engine, &c, err, r);
	json_decref(p);
	return rc;
}

static const char *
text_of(const struct tool_result *r)
{
	return r->text.p ? r->text.p : "";
}

/*
 * The decoded body of the part of data whose header block holds ctype
 * (malloc'd, "" when none).
 */
static char *
part(const char *data, const char *ctype)
{
	const char	*p = strstr(data, ctype), *body, *end;
	char		*b64, *out = NULL, *q;
	size_t		 n, olen;

	if (p == NULL || (body = strstr(p, "\r\n\r\n")) == NULL)
		return strdup("");
	body += 4;
	if ((end = strstr(body, "\r\n--")) == NULL)
		end = body + strlen(body);
	b64 = strndup(body, (size_t)(end - body));
	for (p = q = b64; *p; p++)
		if (*p != '\r' && *p != '\n')
			*q++ = *p;
	*q = '\0';
	n = strlen(b64);
	if (file_b64_decode(b64, n, &out, &olen) != 0)
		out = strdup("(bad base64)");
	free(b64);
	return out;
}

/* 1 when the header block of data has a line starting with name. */
static int
has_header_line(const char *data, const char *line)
{
	const char	*end = strstr(data, "\r\n\r\n"), *p = data;
	size_t		 n = strlen(line);

	while (p != NULL && p < end) {
		if (strncmp(p, line, n) == 0)
			return 1;
		if ((p = strstr(p, "\r\n")) != NULL)
			p += 2;
	}
	return 0;
}

static void
test_send(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], *t;
	json_t			*m, *rcpt;
	const char		*data;

	CHECK(call("langgenius/email/email", "send_mail", creds, json_pack(
	    "{s:s,s:s,s:s,s:s,s:s,s:s}", "send_to", "a@example.com, "
	    "b@example.org", "cc", "[\"c@example.com\"]", "bcc",
	    "d@example.net", "reply_to", "boss@example.com", "subject",
	    "周报 weekly report", "email_content", "第一行\nline two ✓"), &r,
	    err) == 0);
	CHECK_STR(text_of(&r), "{\n  \"a@example.com\": \"send email "
	    "success\",\n  \"b@example.org\": \"send email success\",\n  "
	    "\"c@example.com\": \"send email success\",\n  \"d@example.net\": "
	    "\"send email success\"\n}");
	tool_result_release(&r);
	if (!CHECK((m = smtp_last()) != NULL))
		return;
	CHECK_STR(json_string_value(json_object_get(m, "mail_from")),
	    "sender@example.com");
	rcpt = json_object_get(m, "rcpt");
	CHECK_INT(json_array_size(rcpt), 4);
	CHECK_STR(json_string_value(json_array_get(rcpt, 0)), "a@example.com");
	CHECK_STR(json_string_value(json_array_get(rcpt, 3)), "d@example.net");
	CHECK_STR(json_string_value(json_object_get(json_object_get(m,
	    "auth"), "user")), "sender@example.com");
	CHECK_STR(json_string_value(json_object_get(json_object_get(m,
	    "auth"), "password")), "s3cret-pass");
	data = json_string_value(json_object_get(m, "data"));
	CHECK(data != NULL && has_header_line(data, "From: sender@example.com"
	    "\r\n"));
	CHECK(data != NULL && has_header_line(data, "To: a@example.com, "
	    "b@example.org\r\n"));
	CHECK(data != NULL && has_header_line(data, "CC: c@example.com\r\n"));
	CHECK(data != NULL && has_header_line(data, "Reply-To: "
	    "boss@example.com\r\n"));
	CHECK(data != NULL && !has_header_line(data, "Bcc"));
	CHECK(data != NULL && !has_header_line(data, "BCC"));
	/* base64 of "周报 weekly report" */
	CHECK(data != NULL && has_header_line(data, "Subject: =?utf-8?b?"
	    "5ZGo5oqlIHdlZWtseSByZXBvcnQ=?=\r\n"));
	CHECK(data != NULL && has_header_line(data, "MIME-Version: 1.0\r\n"));
	CHECK(data != NULL && has_header_line(data, "Content-Type: "
	    "multipart/mixed; boundary="));
	CHECK(data != NULL && strstr(data, "multipart/alternative") != NULL);
	t = part(data ? data : "", "text/plain; charset=\"utf-8\"");
	CHECK_STR(t, "第一行\nline two ✓");
	free(t);
	CHECK(data != NULL && strstr(data, "text/html") == NULL);
	json_decref(m);
}

static void
test_html_and_files(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], *t;
	json_t			*m, *file;
	const char		*data;

	file = file_from_bytes("报告 1.txt", "text/plain", "attached\n", 9);
	CHECK(call("email", "send_mail", creds, json_pack(
	    "{s:s,s:s,s:s,s:b,s:[o]}", "send_to", "a@example.com", "subject",
	    "Hello", "email_content", "# Title\n\nSome **bold** <b>text</b>\n"
	    "- one\n- two", "convert_to_html", 1, "attachments", file), &r,
	    err) == 0);
	CHECK_STR(text_of(&r), "Email sent with 1 attachment(s). Details: {\n"
	    "  \"a@example.com\": \"send email success\"\n}");
	tool_result_release(&r);
	if (!CHECK((m = smtp_last()) != NULL))
		return;
	data = json_string_value(json_object_get(m, "data"));
	CHECK(data != NULL && has_header_line(data, "Subject: Hello\r\n"));
	t = part(data ? data : "", "text/plain; charset=\"utf-8\"");
	CHECK_STR(t, "# Title\n\nSome **bold** <b>text</b>\n- one\n- two");
	free(t);
	t = part(data ? data : "", "text/html; charset=\"utf-8\"");
	CHECK(strstr(t, "<h1>Title</h1>") != NULL);
	CHECK(strstr(t, "<p>Some <strong>bold</strong> &lt;b&gt;text&lt;/b&gt;"
	    "</p>") != NULL);
	CHECK(strstr(t, "<ul>\n<li>one</li>\n<li>two</li>\n</ul>") != NULL);
	free(t);
	CHECK(data != NULL && strstr(data, "Content-Disposition: attachment; "
	    "filename*=utf-8''%E6%8A%A5%E5%91%8A%201.txt\r\n") != NULL);
	t = part(data ? data : "", "filename*=");
	CHECK_STR(t, "attached\n");
	free(t);
	json_decref(m);
}

static void
test_refusals(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX];
	json_t			*m, *bad;
	size_t			 n = smtp_count();
	const char		*data;

	/* a line break in the subject cannot start a header */
	CHECK(call("email", "send_mail", creds, json_pack("{s:s,s:s,s:s}",
	    "send_to", "a@example.com", "subject", "Hi\r\nBcc: evil@example.com",
	    "email_content", "x"), &r, err) == 0);
	tool_result_release(&r);
	if (CHECK((m = smtp_last()) != NULL)) {
		data = json_string_value(json_object_get(m, "data"));
		CHECK(data != NULL && !has_header_line(data, "Bcc"));
		CHECK_INT(json_array_size(json_object_get(m, "rcpt")), 1);
		json_decref(m);
	}
	n = smtp_count();
	CHECK(call("email", "send_mail", creds, json_pack("{s:s,s:s,s:s,s:s}",
	    "send_to", "a@example.com", "subject", "x", "email_content", "x",
	    "reply_to", "a@example.com\r\nBcc: evil@example.com"), &r,
	    err) == 0);
	CHECK_STR(text_of(&r), "Invalid parameter reply_to(a header value "
	    "cannot hold a line break)");
	tool_result_release(&r);
	CHECK(call("email", "send_mail", creds, json_pack("{s:s,s:s,s:s}",
	    "send_to", "a@example.com, not an address\r\nRCPT TO:<x@y.z>",
	    "subject", "x", "email_content", "x"), &r, err) == 0);
	CHECK_STR(text_of(&r), "Invalid parameter receiver email, the "
	    "receiver email(not an address\r\nRCPT TO:<x@y.z>) is not a "
	    "mailbox");
	tool_result_release(&r);
	CHECK(call("email", "send_mail", creds, json_pack("{s:s,s:s}",
	    "send_to", "a@example.com", "email_content", "x"), &r, err) == 0);
	CHECK_STR(text_of(&r), "please input email subject");
	tool_result_release(&r);
	CHECK(call("email", "send_mail_batch", creds, json_pack("{s:s,s:s,"
	    "s:s}", "send_to", "a@example.com", "subject", "x",
	    "email_content", "x"), &r, err) == 0);
	CHECK_STR(text_of(&r), "Invalid JSON format for receivers list");
	tool_result_release(&r);
	CHECK(call("email", "send_mail", creds, json_pack("{s:s,s:s,s:s,s:s}",
	    "send_to", "a@example.com", "cc", "[\"bad\"]", "subject", "x",
	    "email_content", "x"), &r, err) == 0);
	CHECK_STR(text_of(&r), "Invalid parameter cc email, the cc email(bad) "
	    "is not a mailbox");
	tool_result_release(&r);
	CHECK_INT(smtp_count(), n);	/* none of those sent anything */

	/* the server refuses a recipient: nothing is sent */
	CHECK(call("email", "send_mail_batch", creds, json_pack("{s:s,s:s,"
	    "s:s}", "send_to", "[\"a@example.com\", \"reject@example.com\"]",
	    "subject", "x", "email_content", "x"), &r, err) == 0);
	CHECK(strncmp(text_of(&r), "Failed to send email: 550", 25) == 0);
	tool_result_release(&r);
	CHECK_INT(smtp_count(), n);

	/* a wrong password: the server's answer, never the password */
	bad = json_deep_copy(creds);
	json_object_set_new(bad, "email_password", json_string("wrong-pw-42"));
	CHECK(call("email", "send_mail", bad, json_pack("{s:s,s:s,s:s}",
	    "send_to", "a@example.com", "subject", "x", "email_content", "x"),
	    &r, err) == 0);
	CHECK(strncmp(text_of(&r), "Failed to send email: ", 22) == 0);
	CHECK(strstr(text_of(&r), "wrong-pw-42") == NULL);
	printf("# %s\n", text_of(&r));
	tool_result_release(&r);
	/* STARTTLS is required: a server without it gets nothing, not
	 * even the login */
	json_object_set_new(bad, "email_password", json_string("s3cret-pass"));
	json_object_set_new(bad, "encrypt_method", json_string("TLS"));
	CHECK(call("email", "send_mail", bad, json_pack("{s:s,s:s,s:s}",
	    "send_to", "a@example.com", "subject", "x", "email_content", "x"),
	    &r, err) == 0);
	CHECK(strncmp(text_of(&r), "Failed to send email: ", 22) == 0);
	printf("# %s\n", text_of(&r));
	tool_result_release(&r);
	/* a server that is not there: its address is masked */
	json_object_set_new(bad, "encrypt_method", json_string("NONE"));
	json_object_set_new(bad, "smtp_port", json_string("1"));
	CHECK(call("email", "send_mail", bad, json_pack("{s:s,s:s,s:s}",
	    "send_to", "a@example.com", "subject", "x", "email_content", "x"),
	    &r, err) == 0);
	CHECK(strncmp(text_of(&r), "Failed to send email: ", 22) == 0 &&
	    strstr(text_of(&r), "127.0.0.1") == NULL);
	printf("# %s\n", text_of(&r));
	tool_result_release(&r);
	json_object_set_new(bad, "encrypt_method", json_string("ROT13"));
	CHECK(call("email", "send_mail", bad, json_pack("{s:s,s:s,s:s}",
	    "send_to", "a@example.com", "subject", "x", "email_content", "x"),
	    &r, err) == 0);
	CHECK_STR(text_of(&r), "Invalid parameter encrypt_method(should be "
	    "SSL, TLS or NONE)");
	tool_result_release(&r);
	json_object_del(bad, "smtp_server");
	CHECK(call("email", "send_mail", bad, json_pack("{s:s,s:s,s:s}",
	    "send_to", "a@example.com", "subject", "x", "email_content", "x"),
	    &r, err) == 0);
	CHECK_STR(text_of(&r), "please input smtp server");
	tool_result_release(&r);
	json_decref(bad);
	CHECK_INT(smtp_count(), n);
}

static void
test_163(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], port[16], *t;
	json_t			*cr, *m;
	const char		*data;

	CHECK(tool_provider_find("wjdsg/163-smtp-send-mail/163-smtp-send-mail",
	    "builtin") == &tool_provider_email163);
	snprintf(port, sizeof(port), "%d", smtp_port);
	cr = json_pack("{s:s,s:s,s:s}", "smtp_server", "127.0.0.1",
	    "smtp_port", port, "encrypt_method", "NONE");
	CHECK(call("wjdsg/163-smtp-send-mail/163-smtp-send-mail",
	    "163-smtp-send-mail", cr, json_pack("{s:s,s:s,s:s,s:s,s:s}",
	    "username_send", "sender@example.com", "authorization_code",
	    "s3cret-pass", "username_recv", "r@example.com", "subject",
	    "PaperEssence-1", "content", "日报"), &r, err) == 0);
	CHECK_STR(text_of(&r), "send email success");
	tool_result_release(&r);
	if (CHECK((m = smtp_last()) != NULL)) {
		CHECK_STR(json_string_value(json_array_get(json_object_get(m,
		    "rcpt"), 0)), "r@example.com");
		data = json_string_value(json_object_get(m, "data"));
		t = part(data ? data : "", "text/plain");
		CHECK_STR(t, "日报");
		free(t);
		json_decref(m);
	}
	/* a missing parameter is final */
	CHECK(call("163-smtp-send-mail", "163-smtp-send-mail", cr, json_pack(
	    "{s:s}", "username_send", "sender@example.com"), &r, err) ==
	    ENGINE_EINVAL);
	CHECK(r.final == 1);
	tool_result_release(&r);
	json_decref(cr);
}

/*
 * TLS: STARTTLS negotiated and the server's certificate checked (the
 * fake's is self-signed, so the mail is refused before the login), the
 * same for TLS from the first byte; NONE sends in the clear even when
 * the server offers STARTTLS.
 */
static void
test_tls(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], cmd[700], log[300];
	char			 port[16];
	json_t			*cr;
	pid_t			 pid;
	int			 p, k;

	snprintf(cmd, sizeof(cmd), "openssl req -x509 -newkey rsa:2048 "
	    "-nodes -keyout '%s/key.pem' -out '%s/cert.pem' -days 1 -subj "
	    "/CN=127.0.0.1 >/dev/null 2>&1", tn_dir, tn_dir);
	if (system(cmd) != 0) {
		tap_skip("openssl could not make a certificate: the TLS cases "
		    "did not run");
		return;
	}
	for (k = 0; k < 2; k++) {
		snprintf(log, sizeof(log), "%s/tls%d.log", tn_dir, k);
		if (!CHECK(fake_start(log, k ? "ssl" : "starttls", &pid, &p) ==
		    0))
			return;
		snprintf(port, sizeof(port), "%d", p);
		cr = json_deep_copy(creds);
		json_object_set_new(cr, "smtp_port", json_string(port));
		json_object_set_new(cr, "encrypt_method", json_string(k ?
		    "SSL" : "TLS"));
		CHECK(call("email", "send_mail", cr, json_pack("{s:s,s:s,s:s}",
		    "send_to", "a@example.com", "subject", "x",
		    "email_content", "x"), &r, err) == 0);
		printf("# %s\n", text_of(&r));
		CHECK(strncmp(text_of(&r), "Failed to send email: ", 22) == 0 &&
		    strstr(text_of(&r), "certificate") != NULL);
		tool_result_release(&r);
		/* neither the login nor the mail went out */
		CHECK(!file_has(log, "s3cret-pass") && !file_has(log,
		    "mail_from"));
		if (k == 0) {
			CHECK(file_has(log, "\"starttls\""));
			json_object_set_new(cr, "encrypt_method",
			    json_string("NONE"));
			CHECK(call("email", "send_mail", cr, json_pack(
			    "{s:s,s:s,s:s}", "send_to", "a@example.com",
			    "subject", "clear", "email_content", "x"), &r,
			    err) == 0);
			CHECK_STR(text_of(&r), "{\n  \"a@example.com\": \"send "
			    "email success\"\n}");
			tool_result_release(&r);
		}
		CHECK(k == 1 || file_has(log, "Subject: clear"));
		json_decref(cr);
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

int
main(void)
{
	char port[16];

	tn_open();
	if (system("command -v python3 >/dev/null 2>&1") != 0) {
		tap_skip("python3 is not installed: tests/fakes/fake_smtp.py "
		    "did not run");
		tn_close();
		return tap_done();
	}
	if (!CHECK(smtp_start() == 0)) {
		tn_close();
		return tap_done();
	}
	snprintf(port, sizeof(port), "%d", smtp_port);
	creds = json_pack("{s:s,s:s,s:s,s:s,s:s}", "smtp_server", "127.0.0.1",
	    "smtp_port", port, "email_account", "sender@example.com",
	    "email_password", "s3cret-pass", "encrypt_method", "NONE");
	test_send();
	test_html_and_files();
	test_refusals();
	test_163();
	test_tls();
	json_decref(creds);
	kill(smtp_pid, SIGTERM);
	waitpid(smtp_pid, NULL, 0);
	tn_close();
	return tap_done();
}
