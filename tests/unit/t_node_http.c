/*
 * t_node_http.c — the http-request node through the real executor against
 * a loopback HTTP server: methods, params and headers with references,
 * every authorization and body type (the bytes the server received
 * checked), timeouts, the response size caps, binary responses as files,
 * status handling with and without an error strategy, the SSRF guard.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tap.h"
#include "t_node_run.h"

/* ====== A loopback server: one canned answer, the last request kept == */

static struct {
	int		 fd, port, stop;
	pthread_t	 tid;
	pthread_mutex_t	 mu;
	/* the answer */
	int		 status;
	char		 ctype[128];
	char		*body;
	size_t		 body_len;
	int		 delay;		/* seconds before answering */
	/* what came in */
	char		*req;
	size_t		 req_len;
	int		 hits;
} srv = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void
srv_answer(int status, const char *ctype, const void *body, size_t len)
{
	pthread_mutex_lock(&srv.mu);
	srv.status = status;
	snprintf(srv.ctype, sizeof(srv.ctype), "%s", ctype);
	free(srv.body);
	srv.body = malloc(len + 1);
	memcpy(srv.body, body, len);
	srv.body_len = len;
	srv.delay = 0;
	free(srv.req);
	srv.req = NULL;
	srv.req_len = 0;
	pthread_mutex_unlock(&srv.mu);
}

static void *
srv_main(void *arg)
{
	char	 buf[65536], head[512], *he, *cl, *req;
	size_t	 n, want;
	ssize_t	 k;
	int	 c, hl, head_only;

	(void)arg;
	while (!srv.stop) {
		if ((c = accept(srv.fd, NULL, NULL)) < 0)
			break;
		n = 0;
		req = NULL;
		want = 0;
		for (;;) {
			if ((k = read(c, buf, sizeof(buf))) <= 0)
				break;
			req = realloc(req, n + (size_t)k + 1);
			memcpy(req + n, buf, (size_t)k);
			n += (size_t)k;
			req[n] = '\0';
			if ((he = strstr(req, "\r\n\r\n")) == NULL)
				continue;
			cl = strcasestr(req, "\r\nContent-Length:");
			want = (size_t)(he + 4 - req) + (cl && cl < he ?
			    strtoul(cl + 17, NULL, 10) : 0);
			if (n >= want)
				break;
		}
		pthread_mutex_lock(&srv.mu);
		free(srv.req);
		srv.req = req;
		srv.req_len = n;
		srv.hits++;
		head_only = req != NULL && strncmp(req, "HEAD ", 5) == 0;
		if (srv.delay > 0)
			sleep((unsigned)srv.delay);
		hl = snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\n"
		    "Content-Type: %s\r\nContent-Length: %zu\r\n"
		    "Connection: close\r\n\r\n", srv.status, srv.ctype,
		    head_only ? 0 : srv.body_len);
		if (write(c, head, (size_t)hl) < 0 || (!head_only &&
		    write(c, srv.body, srv.body_len) < 0))
			printf("# server write failed\n");
		pthread_mutex_unlock(&srv.mu);
		close(c);
	}
	return NULL;
}

static void
srv_start(void)
{
	struct sockaddr_in	a;
	socklen_t		len = sizeof(a);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	srv.fd = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(srv.fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(srv.fd, 16) != 0)
		abort();
	getsockname(srv.fd, (struct sockaddr *)&a, &len);
	srv.port = ntohs(a.sin_port);
	pthread_create(&srv.tid, NULL, srv_main, NULL);
}

static void
srv_stop(void)
{
	srv.stop = 1;
	shutdown(srv.fd, SHUT_RDWR);
	close(srv.fd);
	pthread_join(srv.tid, NULL);
	free(srv.body);
	free(srv.req);
}

/* The request the server saw last (NUL-terminated; "" if none). */
static const char *
srv_req(void)
{
	return srv.req ? srv.req : "";
}

/* The body of the last request. */
static const char *
srv_req_body(size_t *len)
{
	const char *he = strstr(srv_req(), "\r\n\r\n");

	if (he == NULL) {
		*len = 0;
		return "";
	}
	*len = srv.req_len - (size_t)(he + 4 - srv.req);
	return he + 4;
}

static int
req_has(const char *s)
{
	int ok = strstr(srv_req(), s) != NULL;

	if (!ok)
		printf("# request lacks '%s':\n# %s\n", s, srv_req());
	return ok;
}

/* ====== Node data ====== */

static char url_base[64];

static const char *
url(const char *path)
{
	static char buf[8][256];
	static int  i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s%s", url_base, path);
	return buf[i];
}

static json_t *
http_node(const char *method, const char *u)
{
	return json_pack("{s:s,s:s,s:s,s:{s:s},s:s,s:s,s:{s:s,s:[]}}",
	    "type", "http-request", "method", method, "url", u,
	    "authorization", "type", "no-auth", "headers", "", "params", "",
	    "body", "type", "none", "data");
}

static json_t *
outs_std(void)
{
	return json_pack("{s:[s,s],s:[s,s],s:[s,s],s:[s,s]}", "status",
	    "n1", "status_code", "body", "n1", "body", "headers", "n1",
	    "headers", "files", "n1", "files");
}

static void
set_body(json_t *n, const char *type, json_t *items)
{
	json_object_set_new(n, "body", json_pack("{s:s,s:o}", "type", type,
	    "data", items));
}

static void
set_auth(json_t *n, const char *type, const char *key, const char *header)
{
	json_object_set_new(n, "authorization", json_pack(
	    "{s:s,s:{s:s,s:s,s:s?}}", "type", "api-key", "config", "type",
	    type, "api_key", key, "header", header));
}

/* ====== Tests ====== */

static void
test_get(void)
{
	struct tn_run	 r;
	json_t		*n;

	srv_answer(200, "application/json; charset=utf-8", "{\"ok\":1}", 8);
	n = http_node("get", url("/p/{{#start.q#}}"));
	json_object_set_new(n, "params", json_string("q: {{#start.q#}} x\n"
	    "\n n:1\nempty"));
	json_object_set_new(n, "headers", json_string("X-Test: v1\n"
	    "X-Ref:{{#start.q#}}\nX-Empty:"));
	CHECK(tn_run1(n, outs_std(), json_pack("{s:s}", "q", "hello"), &r) ==
	    0);
	CHECK_STR(r.status, "succeeded");
	CHECK(req_has("GET /p/hello?q=hello+x&n=1&empty= HTTP/1.1\r\n"));
	CHECK(req_has("\r\nX-Test: v1\r\n"));
	CHECK(req_has("\r\nX-Ref: hello\r\n"));
	CHECK(req_has("\r\nX-Empty:\r\n"));
	CHECK_INT(json_integer_value(json_object_get(r.outputs, "status")),
	    200);
	CHECK_STR(tn_out_str(&r, "body"), "{\"ok\":1}");
	CHECK_STR(json_string_value(json_object_get(json_object_get(r.outputs,
	    "headers"), "content-type")), "application/json; charset=utf-8");
	/* every response header, names lower-cased */
	CHECK_STR(json_string_value(json_object_get(json_object_get(r.outputs,
	    "headers"), "content-length")), "8");
	CHECK_INT(json_array_size(json_object_get(r.outputs, "files")), 0);
	CHECK(strstr(json_string_value(json_object_get(json_object_get(
	    r.node, "process_data"), "request")), "GET /p/hello?q=hello+x") !=
	    NULL);
	CHECK_STR(json_string_value(json_object_get(r.node, "status")),
	    "succeeded");
	tn_release(&r);
}

static void
test_methods(void)
{
	static const char *const m[][2] = { { "Delete", "DELETE /m " },
		{ "PUT", "PUT /m " }, { "patch", "PATCH /m " },
		{ "options", "OPTIONS /m " }, { "post", "POST /m " },
		{ "HEAD", "HEAD /m " } };
	struct tn_run	r;
	size_t		i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		srv_answer(200, "text/plain", "done", 4);
		CHECK(tn_run1(http_node(m[i][0], url("/m")), outs_std(), NULL,
		    &r) == 0);
		CHECK_STR(r.status, "succeeded");
		CHECK(strncmp(srv_req(), m[i][1], strlen(m[i][1])) == 0);
		CHECK_STR(tn_out_str(&r, "body"), i == 5 ? "" : "done");
		tn_release(&r);
	}
	/* POST without a body says so with Content-Length: 0 */
	srv_answer(200, "text/plain", "", 0);
	CHECK(tn_run1(http_node("post", url("/m")), outs_std(), NULL, &r) ==
	    0);
	CHECK(req_has("\r\nContent-Length: 0\r\n"));
	CHECK(strcasestr(srv_req(), "Content-Type") == NULL);
	tn_release(&r);
	/* an unknown method fails the node */
	CHECK(tn_run1(http_node("fetch", url("/m")), outs_std(), NULL, &r) ==
	    0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "Invalid http method fetch"));
	tn_release(&r);
	/* so does a URL that is not http(s) */
	CHECK(tn_run1(http_node("get", "ftp://example.com/"), outs_std(),
	    NULL, &r) == 0);
	CHECK(r.error && strstr(r.error, "url should start with http://"));
	tn_release(&r);
}

static void
test_auth(void)
{
	struct tn_run	 r;
	json_t		*n;

	srv_answer(200, "text/plain", "ok", 2);
	n = http_node("get", url("/a"));
	set_auth(n, "bearer", "tok-{{#start.q#}}", NULL);
	CHECK(tn_run1(n, outs_std(), json_pack("{s:s}", "q", "1"), &r) == 0);
	CHECK(req_has("\r\nAuthorization: Bearer tok-1\r\n"));
	/* the key is masked in the trace */
	CHECK(strstr(json_string_value(json_object_get(json_object_get(
	    r.node, "process_data"), "request")), "tok-1") == NULL);
	tn_release(&r);

	n = http_node("get", url("/a"));
	set_auth(n, "basic", "user:pass", NULL);
	CHECK(tn_run1(n, outs_std(), NULL, &r) == 0);
	CHECK(req_has("\r\nAuthorization: Basic dXNlcjpwYXNz\r\n"));
	tn_release(&r);

	n = http_node("get", url("/a"));
	set_auth(n, "basic", "QWxhZGRpbjpvcGVu", NULL);	/* pre-encoded */
	CHECK(tn_run1(n, outs_std(), NULL, &r) == 0);
	CHECK(req_has("\r\nAuthorization: Basic QWxhZGRpbjpvcGVu\r\n"));
	tn_release(&r);

	n = http_node("get", url("/a"));
	set_auth(n, "custom", "k-42", "X-Api-Key");
	CHECK(tn_run1(n, outs_std(), NULL, &r) == 0);
	CHECK(req_has("\r\nX-Api-Key: k-42\r\n"));
	tn_release(&r);

	n = http_node("get", url("/a"));
	set_auth(n, "custom", "raw-key", "");
	CHECK(tn_run1(n, outs_std(), NULL, &r) == 0);
	CHECK(req_has("\r\nAuthorization: raw-key\r\n"));
	tn_release(&r);

	n = http_node("get", url("/a"));
	json_object_set_new(n, "authorization", json_pack("{s:s}", "type",
	    "api-key"));
	CHECK(tn_run1(n, outs_std(), NULL, &r) == 0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "authorization config is required"));
	CHECK_STR(json_string_value(json_object_get(r.node, "error")) ?
	    "has error" : "", "has error");
	tn_release(&r);
}

static void
test_bodies(void)
{
	static const unsigned char bin[] = { 0, 1, 2, 0xff, 0xfe, '\r', '\n',
		'x' };
	struct tn_run	 r;
	json_t		*n;
	const char	*b;
	size_t		 bl;

	/* json: references expanded, sent as written */
	srv_answer(200, "application/json", "{}", 2);
	n = http_node("POST", url("/j"));
	set_body(n, "json", json_pack("[{s:s,s:s,s:s}]", "key", "", "type",
	    "text", "value", "{\"a\": \"{{#start.q#}}\", \"n\": 1}"));
	CHECK(tn_run1(n, outs_std(), json_pack("{s:s}", "q", "hi"), &r) == 0);
	CHECK(req_has("\r\nContent-Type: application/json\r\n"));
	b = srv_req_body(&bl);
	CHECK_STR(b, "{\"a\": \"hi\", \"n\": 1}");
	CHECK(strcasestr(srv_req(), "Expect:") == NULL);
	tn_release(&r);

	/* the legacy string form of body.data */
	n = http_node("POST", url("/j"));
	json_object_set_new(n, "body", json_pack("{s:s,s:s}", "type", "json",
	    "data", "[1, 2]"));
	CHECK(tn_run1(n, outs_std(), NULL, &r) == 0);
	CHECK_STR(srv_req_body(&bl), "[1, 2]");
	tn_release(&r);

	/* raw text, with a Content-Type of our own kept */
	n = http_node("put", url("/t"));
	json_object_set_new(n, "headers", json_string("content-type: "
	    "text/csv"));
	set_body(n, "raw-text", json_pack("[{s:s,s:s}]", "type", "text",
	    "value", "a,b\n{{#start.q#}},2"));
	CHECK(tn_run1(n, outs_std(), json_pack("{s:s}", "q", "x"), &r) == 0);
	CHECK(req_has("\r\ncontent-type: text/csv\r\n"));
	CHECK(strstr(srv_req(), "text/plain") == NULL);
	CHECK_STR(srv_req_body(&bl), "a,b\nx,2");
	tn_release(&r);

	/* raw-text needs exactly one item */
	n = http_node("post", url("/t"));
	set_body(n, "raw-text", json_array());
	CHECK(tn_run1(n, outs_std(), NULL, &r) == 0);
	CHECK(r.error && strstr(r.error, "exactly one item"));
	tn_release(&r);

	/* x-www-form-urlencoded: a repeated key keeps its place */
	n = http_node("post", url("/f"));
	set_body(n, "x-www-form-urlencoded", json_pack("[{s:s,s:s},{s:s,s:s},"
	    "{s:s,s:s}]", "key", "a", "value", "1", "key", "b", "value",
	    "x y&{{#start.q#}}", "key", "a", "value", "3"));
	CHECK(tn_run1(n, outs_std(), json_pack("{s:s}", "q", "é"), &r) == 0);
	CHECK(req_has("\r\nContent-Type: application/x-www-form-urlencoded"
	    "\r\n"));
	CHECK_STR(srv_req_body(&bl), "a=3&b=x+y%26%C3%A9");
	tn_release(&r);

	/* form-data: text fields, then a file from the start inputs */
	n = http_node("post", url("/m"));
	json_object_set_new(n, "headers", json_string("Content-Type: bogus"));
	set_body(n, "form-data", json_pack("[{s:s,s:s,s:s},{s:s,s:s,s:[s,s]},"
	    "{s:s,s:s,s:s}]", "key", "name", "type", "text", "value",
	    "{{#start.q#}}", "key", "doc", "type", "file", "file", "start",
	    "f", "key", "q\"x", "type", "text", "value", "2"));
	CHECK(tn_run1(n, outs_std(), json_pack("{s:s,s:o}", "q", "val", "f",
	    tn_file("a.txt", "text/plain", "file body", 9)), &r) == 0);
	CHECK_STR(r.status, "succeeded");
	CHECK(req_has("\r\nContent-Type: multipart/form-data; "
	    "boundary=----flowcgi"));
	CHECK(strstr(srv_req(), "bogus") == NULL);
	b = srv_req_body(&bl);
	CHECK(strstr(b, "Content-Disposition: form-data; name=\"name\"\r\n"
	    "\r\nval\r\n") != NULL);
	CHECK(strstr(b, "Content-Disposition: form-data; name=\"q%22x\"\r\n"
	    "\r\n2\r\n") != NULL);
	CHECK(strstr(b, "Content-Disposition: form-data; name=\"doc\"; "
	    "filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nfile body"
	    "\r\n") != NULL);
	CHECK(strstr(b, "name=\"name\"") < strstr(b, "name=\"doc\""));
	CHECK(bl > 10 && strncmp(b + bl - 4, "--\r\n", 4) == 0);
	tn_release(&r);

	/* form-data with a file whose bytes are out of reach */
	n = http_node("post", url("/m"));
	set_body(n, "form-data", json_pack("[{s:s,s:s,s:[s,s]}]", "key", "doc",
	    "type", "file", "file", "start", "f"));
	CHECK(tn_run1(n, outs_std(), json_pack("{s:{s:s,s:s,s:s}}", "f",
	    "type", "document", "transfer_method", "remote_url", "url",
	    "http://127.0.0.1:1/up.pdf"), &r) == 0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "cannot download the file"));
	tn_release(&r);

	/* binary: the file's bytes exactly, its type as Content-Type */
	n = http_node("post", url("/b"));
	set_body(n, "binary", json_pack("[{s:s,s:[s,s]}]", "type", "file",
	    "file", "start", "f"));
	CHECK(tn_run1(n, outs_std(), json_pack("{s:o}", "f", tn_file("x.bin",
	    "application/x-thing", bin, sizeof(bin))), &r) == 0);
	CHECK_STR(r.status, "succeeded");
	b = srv_req_body(&bl);
	CHECK_INT(bl, sizeof(bin));
	CHECK(bl == sizeof(bin) && memcmp(b, bin, bl) == 0);
	CHECK(req_has("\r\nContent-Type: application/x-thing\r\n"));
	tn_release(&r);
}

static void
test_responses(void)
{
	static unsigned char	png[3000];
	struct tn_run		r;
	json_t			*f, *n;
	char			*big, *data = NULL;
	size_t			 i, len = 0;

	for (i = 0; i < sizeof(png); i++)
		png[i] = (unsigned char)(i * 7);
	srv_answer(200, "image/png", png, sizeof(png));
	CHECK(tn_run1(http_node("get", url("/img/pic.png?x=1")), outs_std(),
	    NULL, &r) == 0);
	CHECK_STR(r.status, "succeeded");
	CHECK_STR(tn_out_str(&r, "body"), "");
	f = json_array_get(json_object_get(r.outputs, "files"), 0);
	CHECK(tpl_is_file(f));
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "pic.png");
	CHECK_STR(json_string_value(json_object_get(f, "mime_type")),
	    "image/png");
	CHECK_STR(json_string_value(json_object_get(f, "extension")), ".png");
	CHECK_STR(json_string_value(json_object_get(f, "type")), "image");
	CHECK_INT(json_integer_value(json_object_get(f, "size")), sizeof(png));
	CHECK(strncmp(json_string_value(json_object_get(f, "url")),
	    "data:image/png;base64,", 22) == 0);
	CHECK(file_b64_decode(json_string_value(json_object_get(f, "url")) +
	    22, strlen(json_string_value(json_object_get(f, "url"))) - 22,
	    &data, &len) == 0);
	CHECK(len == sizeof(png) && memcmp(data, png, len) == 0);
	free(data);
	tn_release(&r);

	/* latin-1 text becomes UTF-8; malformed UTF-8 becomes U+FFFD */
	srv_answer(200, "text/plain; charset=ISO-8859-1", "caf\xe9", 4);
	CHECK(tn_run1(http_node("get", url("/t")), outs_std(), NULL, &r) == 0);
	CHECK_STR(tn_out_str(&r, "body"), "caf\xc3\xa9");
	tn_release(&r);
	srv_answer(200, "text/plain", "a\xff" "b", 3);
	CHECK(tn_run1(http_node("get", url("/t")), outs_std(), NULL, &r) == 0);
	CHECK_STR(tn_out_str(&r, "body"), "a\xef\xbf\xbd" "b");
	tn_release(&r);

	/* size caps, each naming its setting */
	tn_conf.http_max_text_response = 1024;
	tn_conf.http_max_binary_response = 2048;
	big = malloc(1500);
	memset(big, 'y', 1500);
	srv_answer(200, "text/plain", big, 1500);
	CHECK(tn_run1(http_node("get", url("/big")), outs_std(), NULL, &r) ==
	    0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "http.max_text_response"));
	tn_release(&r);
	srv_answer(200, "application/octet-stream", png, sizeof(png));
	CHECK(tn_run1(http_node("get", url("/big")), outs_std(), NULL, &r) ==
	    0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "http.max_binary_response"));
	tn_release(&r);
	srv_answer(200, "application/octet-stream", big, 1500);
	CHECK(tn_run1(http_node("get", url("/ok.bin")), outs_std(), NULL, &r)
	    == 0);
	CHECK_STR(r.status, "succeeded");	/* a file may exceed text cap */
	tn_release(&r);
	free(big);
	tn_conf.http_max_text_response = 1 << 20;
	tn_conf.http_max_binary_response = 10 << 20;

	/* a 404 is an answer, not a failure... */
	srv_answer(404, "text/plain", "nope", 4);
	CHECK(tn_run1(http_node("get", url("/x")), outs_std(), NULL, &r) == 0);
	CHECK_STR(r.status, "succeeded");
	CHECK_INT(json_integer_value(json_object_get(r.outputs, "status")),
	    404);
	CHECK_STR(tn_out_str(&r, "body"), "nope");
	tn_release(&r);
	/* ...unless retries are on: then it fails after them */
	n = http_node("get", url("/x"));
	json_object_set_new(n, "retry_config", json_pack("{s:b,s:i,s:i}",
	    "retry_enabled", 1, "max_retries", 2, "retry_interval", 1));
	srv.hits = 0;
	CHECK(tn_run1(n, outs_std(), NULL, &r) == 0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "Request failed with status code "
	    "404"));
	CHECK_INT(srv.hits, 3);
	tn_release(&r);
	/* ...or an error strategy: default-value continues */
	n = http_node("get", url("/x"));
	json_object_set_new(n, "error_strategy", json_string("default-value"));
	json_object_set_new(n, "default_value", json_pack("[{s:s,s:s,s:s}]",
	    "key", "body", "type", "string", "value", "fallback"));
	CHECK(tn_run1(n, json_pack("{s:[s,s],s:[s,s]}", "body", "n1", "body",
	    "et", "n1", "error_type"), NULL, &r) == 0);
	CHECK_STR(r.status, "partial-succeeded");
	CHECK_STR(tn_out_str(&r, "body"), "fallback");
	CHECK_STR(tn_out_str(&r, "et"), "HTTPResponseCodeError");
	CHECK_STR(json_string_value(json_object_get(r.node, "status")),
	    "exception");
	tn_release(&r);
}

static void
test_timeout(void)
{
	struct tn_run	 r;
	json_t		*n;

	srv_answer(200, "text/plain", "late", 4);
	srv.delay = 3;
	n = http_node("get", url("/slow"));
	json_object_set_new(n, "timeout", json_pack("{s:i,s:i,s:i}",
	    "connect", 1, "read", 1, "write", 1));
	CHECK(tn_run1(n, outs_std(), NULL, &r) == 0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strcasestr(r.error, "timed out"));
	tn_release(&r);
	/* let the server finish the slow answer */
	pthread_mutex_lock(&srv.mu);
	srv.delay = 0;
	pthread_mutex_unlock(&srv.mu);
}

static void
test_ssrf(void)
{
	struct tn_run r;

	tn_conf.http_allow_private = 0;
	srv_answer(200, "text/plain", "secret", 6);
	srv.hits = 0;
	CHECK(tn_run1(http_node("get", url("/meta")), outs_std(), NULL, &r) ==
	    0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "refused to connect to 127.0.0.1"));
	CHECK(r.error && strstr(r.error, "http.allow_private"));
	CHECK_INT(srv.hits, 0);
	tn_release(&r);
	tn_conf.http_allow_private = 1;
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);	/* a client gone before the answer */
	tn_open();
	tn_conf.http_allow_private = 1;
	srv_start();
	snprintf(url_base, sizeof(url_base), "http://127.0.0.1:%d", srv.port);
	test_get();
	test_methods();
	test_auth();
	test_bodies();
	test_responses();
	test_timeout();
	test_ssrf();
	srv_stop();
	tn_close();
	return tap_done();
}
