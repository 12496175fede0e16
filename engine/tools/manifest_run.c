/*
 * manifest_run.c — the provider that runs every manifest's tools
 * (docs/tools.md says the format).
 *
 * A call: the tool's parameters get their defaults and Dify's types
 * (number, boolean); a required parameter or credential that is missing
 * fails at once (ENGINE_EINVAL, never worth a retry). The request's
 * strings are Jinja2 templates over {params, credentials, base_url}; a
 * string that is one reference alone ("{{ params.max_results }}") keeps
 * the value's JSON type, and drops its entry when the value is missing or
 * null. It goes out through the outbound client (SSRF guard, limits):
 * trusted only when the admin set the provider's base_url. An answer of
 * 429 or 5xx, or a failed connection, is tried again tools.max_retries
 * times; any other status outside 2xx fails with the provider's words
 * (response.errors, or the body's message/error/detail). Then the
 * response mapping makes Dify's tool messages: text from a template over
 * {body, status, params}, json messages from a path into the body, and
 * files fetched from URLs or decoded from base64 in the body.
 *
 * Steps (the provider's, then the tool's) are requests of the same form
 * sent first, each answer kept as steps.<name> for what follows (a tenant
 * token, a search whose ids the next request takes); `each` sends one
 * per element of a list.
 *
 * Credentials are never in an answer or an error: every error message
 * has each credential's value masked before it leaves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "engine/tools/tools.h"

#define MF_MAX_FILES	16	/* files one answer may give */
#define MF_MAX_DEPTH	32

/* ====== Values and templates ====== */

/* The value at a dotted path ("params.query", "body.data.0.url") of v,
 * borrowed, or NULL. */
const json_t *
tool_path_get(const json_t *v, const char *path)
{
	char		 seg[128], *end;
	const char	*p = path;
	size_t		 n;
	unsigned long	 idx;

	while (v != NULL && *p != '\0') {
		n = strcspn(p, ".");
		if (n == 0 || n >= sizeof(seg))
			return NULL;
		memcpy(seg, p, n);
		seg[n] = '\0';
		p += n;
		if (*p == '.')
			p++;
		if (json_is_array(v)) {
			idx = strtoul(seg, &end, 10);
			v = *end == '\0' ? json_array_get(v, idx) : NULL;
		} else
			v = json_object_get(v, seg);
	}
	return v;
}

/* The path of a template that is one reference alone ("{{ a.b }}"), into
 * buf; 0 when s is anything else. */
static int
lone_ref(const char *s, char *buf, size_t bufsz)
{
	const char	*p, *q;
	size_t		 n;

	if (strncmp(s, "{{", 2) != 0)
		return 0;
	for (p = s + 2; *p == ' '; p++)
		;
	for (q = p; (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
	    (*q >= '0' && *q <= '9') || *q == '_' || *q == '.'; q++)
		;
	n = (size_t)(q - p);
	while (*q == ' ')
		q++;
	if (n == 0 || n >= bufsz || strcmp(q, "}}") != 0)
		return 0;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return 1;
}

/*
 * The value of template v over vars: strings rendered (a lone reference
 * keeps its type), mappings and lists walked. *out is a new reference, or
 * NULL when the value is to be dropped.
 */
static int
render_value(const json_t *v, const json_t *vars, char *err, int depth,
    json_t **out)
{
	const json_t	*ref;
	json_t		*x, *r = NULL;
	const char	*k, *s;
	char		 path[256], *text = NULL;
	size_t		 i;
	int		 rc = 0;

	*out = NULL;
	if (v == NULL)
		return 0;
	if (depth > MF_MAX_DEPTH)
		return engine_invalid(err, "the request is nested too deeply");
	if (json_is_object(v) && json_object_size(v) == 1 &&
	    json_is_string(json_object_get(v, "$json"))) {
		/* {$json: template}: the JSON text it renders to, as a value
		 * (a list or mapping built by the template); nothing drops */
		s = json_string_value(json_object_get(v, "$json"));
		if ((rc = jinja_render(s, strlen(s), vars, NULL, err, &text,
		    NULL)) != 0)
			goto out;
		if (text[strspn(text, " \n\t")] != '\0' && (r = json_loads(text,
		    JSON_DECODE_ANY, NULL)) == NULL)
			rc = engine_invalid(err, "the request's $json did not "
			    "render to JSON: %.100s", text);
	} else if (json_is_object(v)) {
		if ((r = json_object()) == NULL)
			return ENGINE_ENOMEM;
		json_object_foreach((json_t *)v, k, x) {
			json_t *rv;

			if ((rc = render_value(x, vars, err, depth + 1,
			    &rv)) != 0)
				goto out;
			if (rv != NULL && json_object_set_new(r, k, rv) != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		}
	} else if (json_is_array(v)) {
		if ((r = json_array()) == NULL)
			return ENGINE_ENOMEM;
		json_array_foreach(v, i, x) {
			json_t *rv;

			if ((rc = render_value(x, vars, err, depth + 1,
			    &rv)) != 0)
				goto out;
			if (rv != NULL && json_array_append_new(r, rv) != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		}
	} else if ((s = json_string_value(v)) != NULL && lone_ref(s, path,
	    sizeof(path))) {
		ref = tool_path_get(vars, path);
		if (ref != NULL && !json_is_null(ref) &&
		    (r = json_deep_copy(ref)) == NULL)
			rc = ENGINE_ENOMEM;
	} else if (s != NULL && (strstr(s, "{{") != NULL ||
	    strstr(s, "{%") != NULL)) {
		if ((rc = jinja_render(s, strlen(s), vars, NULL, err, &text,
		    NULL)) != 0)
			goto out;
		if ((r = json_string(text)) == NULL)
			rc = ENGINE_ENOMEM;
	} else if ((r = json_deep_copy(v)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	free(text);
	if (rc != 0) {
		json_decref(r);
		r = NULL;
	}
	*out = r;
	return rc;
}

/* A rendered scalar as text (strings as they are, numbers and booleans as
 * Python's str() gives them). *buf holds what must be freed. */
static const char *
scalar_text(const json_t *v, char **buf)
{
	json_t		*o;
	const char	*s;

	*buf = NULL;
	if (json_is_string(v))
		return json_string_value(v);
	if ((o = json_pack("{s:O}", "v", v)) == NULL)
		return NULL;
	s = tool_param_str(o, "v", buf);
	if (s != NULL && *buf == NULL)
		*buf = strdup(s);
	json_decref(o);
	return *buf;
}

/* Every credential value in err replaced by the mask. */
static void
scrub(char *err, const json_t *creds)
{
	const char	*k, *s;
	json_t		*v;
	char		*p, tmp[ENGINE_ERRMAX];
	size_t		 n, ml = strlen(ENGINE_SECRET_MASK);

	json_object_foreach((json_t *)creds, k, v) {
		if ((s = json_string_value(v)) == NULL || (n = strlen(s)) < 4 ||
		    strcmp(k, "base_url") == 0)
			continue;
		while ((p = strstr(err, s)) != NULL) {
			snprintf(tmp, sizeof(tmp), "%.*s%s%s", (int)(p - err),
			    err, ENGINE_SECRET_MASK, p + n);
			memcpy(err, tmp, ENGINE_ERRMAX);
			if (ml >= n && strstr(err, s) == p)
				break;
		}
	}
}

/* ====== Parameters ====== */

/*
 * call's parameters as the tool declares them: defaults filled, numbers
 * and booleans typed as Dify's ToolParameter.cast does. ENGINE_EINVAL
 * for a missing required one or a number that is not.
 */
static int
params_of(const json_t *tool, const json_t *in, char *err, json_t **out)
{
	const json_t	*p, *v, *dflt;
	json_t		*ps, *nv;
	const char	*name, *type, *s;
	char		*end;
	double		 d;
	size_t		 i;
	int		 rc = 0;

	*out = NULL;
	if ((ps = in ? json_deep_copy(in) : json_object()) == NULL)
		return ENGINE_ENOMEM;
	json_array_foreach(json_object_get(tool, "parameters"), i, p) {
		name = json_string_value(json_object_get(p, "name"));
		type = json_string_value(json_object_get(p, "type"));
		v = json_object_get(ps, name);
		if ((v == NULL || json_is_null(v) || (json_is_string(v) &&
		    json_string_length(v) == 0)) && (dflt = json_object_get(p,
		    "default")) != NULL && !json_is_null(dflt)) {
			if (json_object_set(ps, name, (json_t *)dflt) != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
			v = dflt;
		}
		if (v == NULL || json_is_null(v) || (json_is_string(v) &&
		    json_string_length(v) == 0)) {
			if (json_is_true(json_object_get(p, "required"))) {
				rc = engine_invalid(err, "parameter '%s' is "
				    "required", name);
				goto out;
			}
			json_object_del(ps, name);
			continue;
		}
		nv = NULL;
		if (strcmp(type, "number") == 0 && json_is_string(v)) {
			s = json_string_value(v);
			d = strtod(s, &end);
			if (end == s || *end != '\0') {
				rc = engine_invalid(err, "parameter '%s' must "
				    "be a number", name);
				goto out;
			}
			nv = d == (double)(json_int_t)d ? json_integer(
			    (json_int_t)d) : json_real(d);
		} else if (strcmp(type, "number") == 0 && json_is_real(v) &&
		    json_real_value(v) == (double)(json_int_t)json_real_value(
		    v))
			nv = json_integer((json_int_t)json_real_value(v));
		else if (strcmp(type, "boolean") == 0 && !json_is_boolean(v))
			nv = json_boolean(tool_param_bool(ps, name, 0));
		if (nv != NULL && json_object_set_new(ps, name, nv) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	*out = ps;
	ps = NULL;
out:
	json_decref(ps);
	return rc;
}

/* Each required credential of m is set, or ENGINE_EINVAL naming it and
 * where to set it. */
static int
creds_check(const struct tool_manifest *m, const json_t *creds, char *err)
{
	const char	*k, *label = tool_manifest_label(json_object_get(
			    json_object_get(m->doc, "identity"), "label"),
			    m->name);
	json_t		*c, *v;

	json_object_foreach(json_object_get(m->doc,
	    "credentials_for_provider"), k, c) {
		if (!json_is_true(json_object_get(c, "required")))
			continue;
		v = json_object_get(creds, k);
		if (v == NULL || (json_is_string(v) &&
		    json_string_length(v) == 0))
			return engine_invalid(err, "tool provider '%s' needs "
			    "the credential '%s' (%s): set it in Settings > "
			    "Tools > %s", m->name, k, tool_manifest_label(
			    json_object_get(c, "label"), k), label);
	}
	return 0;
}

/* ====== The request ====== */

struct mreq {
	struct curl_slist	*headers;
	char			*url;
	char			*body;
	size_t			 body_len;
	const char		*method;
	int			 timeout;
};

static void
mreq_release(struct mreq *q)
{
	curl_slist_free_all(q->headers);
	free(q->url);
	free(q->body);
}

static int
add_header(struct mreq *q, const char *name, const char *value)
{
	struct curl_slist	*l;
	struct dbuf		 b = { 0 };

	dbuf_addf(&b, "%s: %s", name, value);
	if (b.err || strpbrk(b.p, "\r\n") != NULL) {
		dbuf_free(&b);
		return ENGINE_EINVAL;
	}
	l = curl_slist_append(q->headers, b.p);
	dbuf_free(&b);
	if (l == NULL)
		return ENGINE_ENOMEM;
	q->headers = l;
	return 0;
}

/* name=value pairs of the rendered mapping m, escaped, into b. */
static int
add_pairs(struct dbuf *b, const json_t *m, int first)
{
	const char	*k, *s;
	json_t		*v;
	char		*ek, *ev, *buf;

	json_object_foreach((json_t *)m, k, v) {
		if ((s = scalar_text(v, &buf)) == NULL)
			return ENGINE_ENOMEM;
		ek = curl_easy_escape(NULL, k, 0);
		ev = curl_easy_escape(NULL, s, 0);
		if (ek != NULL && ev != NULL)
			dbuf_addf(b, "%s%s=%s", first ? "" : "&", ek, ev);
		curl_free(ek);
		curl_free(ev);
		free(buf);
		if (ek == NULL || ev == NULL)
			return ENGINE_ENOMEM;
		first = 0;
	}
	return b->err ? ENGINE_ENOMEM : 0;
}

static int
build_request(struct engine *e, const json_t *req, const json_t *vars,
    char *err, struct mreq *q)
{
	json_t		*url = NULL, *query = NULL, *hdrs = NULL, *body = NULL;
	const char	*k, *s;
	json_t		*v;
	struct dbuf	 b = { 0 };
	char		*buf;
	int		 rc;

	memset(q, 0, sizeof(*q));
	if ((s = json_string_value(json_object_get(req, "error_if"))) !=
	    NULL) {
		/* input the API would refuse, said before anything is sent */
		if ((rc = jinja_render(s, strlen(s), vars, NULL, err, &buf,
		    NULL)) != 0)
			goto out;
		for (s = buf; *s == ' ' || *s == '\n' || *s == '\t'; s++)
			;
		if (*s != '\0')
			engine_invalid(err, "%.300s", s);
		rc = *s != '\0' ? ENGINE_EINVAL : 0;
		free(buf);
		if (rc != 0)
			goto out;
	}
	q->method = json_string_value(json_object_get(req, "method"));
	if (q->method == NULL)
		q->method = "GET";
	q->timeout = json_object_get(req, "timeout") ? (int)
	    json_integer_value(json_object_get(req, "timeout")) :
	    e->conf->tools_timeout;
	if ((rc = render_value(json_object_get(req, "url"), vars, err, 0,
	    &url)) != 0)
		goto out;
	if (!json_is_string(url) || (strncmp(json_string_value(url),
	    "https://", 8) != 0 && strncmp(json_string_value(url), "http://",
	    7) != 0)) {
		rc = engine_invalid(err, "the request's url is not an http(s) "
		    "URL (is base_url set?)");
		goto out;
	}
	dbuf_addstr(&b, json_string_value(url));
	if ((rc = render_value(json_object_get(req, "query"), vars, err, 0,
	    &query)) != 0)
		goto out;
	if (json_object_size(query) > 0) {
		dbuf_addc(&b, strchr(json_string_value(url), '?') ? '&' : '?');
		if ((rc = add_pairs(&b, query, 1)) != 0)
			goto out;
	}
	if (b.err) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	q->url = dbuf_take(&b, NULL);
	if ((rc = render_value(json_object_get(req, "headers"), vars, err, 0,
	    &hdrs)) != 0)
		goto out;
	json_object_foreach(hdrs, k, v) {
		if ((s = scalar_text(v, &buf)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if (*s != '\0')
			rc = add_header(q, k, s);
		free(buf);
		if (rc == ENGINE_EINVAL) {
			rc = engine_invalid(err, "header %s holds a line "
			    "break", k);
			goto out;
		}
		if (rc != 0)
			goto out;
	}
	if (json_object_get(req, "json") != NULL) {
		if ((rc = render_value(json_object_get(req, "json"), vars, err,
		    0, &body)) != 0)
			goto out;
		if ((q->body = json_dumps(body ? body : json_null(),
		    JSON_COMPACT | JSON_ENCODE_ANY)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		q->body_len = strlen(q->body);
		rc = add_header(q, "Content-Type", "application/json");
	} else if (json_object_get(req, "form") != NULL) {
		if ((rc = render_value(json_object_get(req, "form"), vars, err,
		    0, &body)) != 0 || (rc = add_pairs(&b, body, 1)) != 0)
			goto out;
		q->body = dbuf_take(&b, &q->body_len);
		if (q->body == NULL && (q->body = strdup("")) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		rc = add_header(q, "Content-Type",
		    "application/x-www-form-urlencoded");
	} else if (json_object_get(req, "body") != NULL) {
		if ((rc = render_value(json_object_get(req, "body"), vars, err,
		    0, &body)) != 0)
			goto out;
		if ((s = scalar_text(body ? body : json_string(""), &buf)) ==
		    NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		q->body = buf ? buf : strdup(s);
		q->body_len = q->body ? strlen(q->body) : 0;
		if (q->body == NULL)
			rc = ENGINE_ENOMEM;
	}
out:
	dbuf_free(&b);
	json_decref(url);
	json_decref(query);
	json_decref(hdrs);
	json_decref(body);
	return rc;
}

/* ====== Sending, with retries ====== */

static int
retryable(long status)
{
	return status == 429 || status == 500 || status == 502 ||
	    status == 503 || status == 504;
}

static void
backoff(int attempt, long retry_after)
{
	struct timespec	ts;
	long		ms = retry_after >= 0 ? retry_after * 1000 :
			    500L << (attempt < 4 ? attempt : 4);

	if (ms > 5000)
		ms = 5000;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

static int
send_request(struct engine *e, const struct mreq *q, int trusted, char *err,
    struct outbound_resp *resp)
{
	struct outbound_req	r;
	int			attempt, rc = 0;

	memset(&r, 0, sizeof(r));
	r.method = q->method;
	r.url = q->url;
	r.headers = q->headers;
	r.body = q->body;
	r.body_len = q->body_len;
	r.trusted = trusted;
	r.follow = 1;
	r.timeout = q->timeout;
	for (attempt = 0;; attempt++) {
		memset(resp, 0, sizeof(*resp));
		rc = outbound_fetch(e, &r, err, resp);
		if (attempt >= e->conf->tools_max_retries)
			break;
		if (rc == ENGINE_EFETCH && strstr(err, "refused to connect") ==
		    NULL) {
			backoff(attempt, -1);
			continue;
		}
		if (rc != 0 || !retryable(resp->status))
			break;
		backoff(attempt, resp->retry_after);
		outbound_resp_release(resp);
	}
	return rc;
}

/* ====== The answer ====== */

/* The error of a status outside 2xx, in the provider's words. */
static int
status_error(const struct tool_manifest *m, const json_t *tool,
    const json_t *vars, const struct outbound_resp *resp, char *err)
{
	const json_t	*errors = json_object_get(json_object_get(tool,
			    "response"), "errors"), *body, *tpl;
	const char	*msg = NULL, *k, *label;
	char		 code[8], jerr[ENGINE_ERRMAX], *text = NULL;
	struct dbuf	 keys = { 0 };
	json_t		*c;

	snprintf(code, sizeof(code), "%ld", resp->status);
	body = json_object_get(vars, "body");
	tpl = json_object_get(errors, code);
	if (tpl == NULL)
		tpl = json_object_get(errors, "default");
	if (json_is_string(tpl) && jinja_render(json_string_value(tpl),
	    json_string_length(tpl), vars, NULL, jerr, &text, NULL) == 0)
		msg = text;
	if (msg == NULL && json_is_object(body)) {
		const char *const keys_[] = { "message", "error", "detail",
			"error_message", "msg", NULL };
		size_t i;

		for (i = 0; keys_[i] != NULL && msg == NULL; i++) {
			const json_t *x = json_object_get(body, keys_[i]);

			msg = json_string_value(x);
			if (msg == NULL && json_is_object(x))
				msg = json_string_value(json_object_get(x,
				    "message")) ? json_string_value(
				    json_object_get(x, "message")) :
				    json_string_value(json_object_get(x,
				    "error"));
		}
	}
	if (msg == NULL && json_is_string(body))
		msg = json_string_value(body);
	if (resp->status == 401 || resp->status == 403) {
		json_object_foreach(json_object_get(m->doc,
		    "credentials_for_provider"), k, c)
			dbuf_addf(&keys, "%s'%s'", keys.len ? ", " : "", k);
		label = tool_manifest_label(json_object_get(json_object_get(
		    m->doc, "identity"), "label"), m->name);
		engine_invalid(err, "%s answered %ld (%.120s): check the "
		    "credentials %s in Settings > Tools > %s", m->name,
		    resp->status, msg ? msg : "not authorised",
		    keys.len ? keys.p : "", label);
	} else if (resp->status == 429)
		engine_invalid(err, "%s answered 429: rate limited%s%.150s",
		    m->name, msg ? ": " : "", msg ? msg : "");
	else
		engine_invalid(err, "%s answered %ld%s%.180s", m->name,
		    resp->status, msg ? ": " : "", msg ? msg : "");
	dbuf_free(&keys);
	free(text);
	return ENGINE_EFETCH;
}

/* One file of a files entry, for item (the element of `each`). */
static int
one_file(struct engine *e, const json_t *spec, json_t *vars,
    const json_t *item, const char *dflt_mime, char *err,
    struct tool_result *out)
{
	struct outbound_req	 r;
	struct outbound_resp	 resp;
	json_t			*url = NULL, *b64 = NULL, *name = NULL, *f;
	const char		*mime = json_string_value(json_object_get(spec,
				    "mime"));
	char			*bytes = NULL;
	size_t			 len = 0;
	int			 rc;

	memset(&resp, 0, sizeof(resp));
	if (item != NULL && json_object_set(vars, "item", (json_t *)item) !=
	    0)
		return ENGINE_ENOMEM;
	if ((rc = render_value(json_object_get(spec, "url"), vars, err, 0,
	    &url)) != 0 || (rc = render_value(json_object_get(spec, "b64"),
	    vars, err, 0, &b64)) != 0 || (rc = render_value(json_object_get(
	    spec, "name"), vars, err, 0, &name)) != 0)
		goto out;
	if (json_is_string(b64) && json_string_length(b64) > 0) {
		if (file_b64_decode(json_string_value(b64),
		    json_string_length(b64), &bytes, &len) != 0) {
			rc = engine_invalid(err, "the answer's file is not "
			    "valid base64");
			goto out;
		}
	} else if (json_is_string(url) && json_string_length(url) > 0) {
		/* a URL from the answer: untrusted, as any app content */
		memset(&r, 0, sizeof(r));
		r.url = json_string_value(url);
		r.follow = 1;
		r.timeout = e->conf->tools_timeout;
		r.max_bytes = e->conf->tools_max_file;
		if ((rc = outbound_fetch(e, &r, err, &resp)) != 0)
			goto out;
		if (resp.status < 200 || resp.status > 299) {
			rc = engine_invalid(err, "the answer's file could not "
			    "be fetched: %ld", resp.status);
			rc = ENGINE_EFETCH;
			goto out;
		}
		bytes = resp.body;
		len = resp.len;
		resp.body = NULL;
		if (mime == NULL && resp.content_type != NULL)
			mime = resp.content_type;
	} else
		goto out;	/* this item has none */
	if ((f = file_from_bytes(json_string_value(name), mime ? mime :
	    dflt_mime, bytes, len)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = tool_result_file(out, f);
out:
	free(bytes);
	outbound_resp_release(&resp);
	json_decref(url);
	json_decref(b64);
	json_decref(name);
	json_object_del(vars, "item");
	return rc;
}

static int
map_response(struct engine *e, const json_t *tool, json_t *vars,
    const struct outbound_resp *resp, char *err, struct tool_result *out)
{
	const json_t	*map = json_object_get(tool, "response"), *j, *x;
	const json_t	*files, *spec, *each;
	const char	*text = json_string_value(json_object_get(map, "text"));
	const char	*path = json_string_value(json_object_get(map, "json"));
	char		*s = NULL;
	size_t		 i, k, n = 0;
	int		 rc = 0;

	if (text != NULL) {
		if ((rc = jinja_render(text, strlen(text), vars, NULL, err, &s,
		    NULL)) != 0)
			goto out;
		if ((rc = tool_result_text(out, s, strlen(s))) != 0)
			goto out;
	}
	if (path != NULL) {
		j = tool_path_get(vars, path);
		if (json_is_object(j))
			rc = tool_result_json(out, json_deep_copy(j));
		else if (json_is_array(j))
			json_array_foreach(j, i, x) {
				if (json_is_object(x))
					rc = tool_result_json(out,
					    json_deep_copy(x));
				else
					rc = tool_result_json(out, json_pack(
					    "{s:O}", "value", x));
				if (rc != 0)
					goto out;
			}
		else if (j != NULL && !json_is_null(j))
			rc = tool_result_json(out, json_pack("{s:O}", "value",
			    j));
		if (rc != 0)
			goto out;
	}
	files = json_object_get(map, "files");
	json_array_foreach(files, i, spec) {
		each = json_is_string(json_object_get(spec, "each")) ?
		    tool_path_get(vars, json_string_value(json_object_get(spec,
		    "each"))) : NULL;
		if (json_is_array(each)) {
			json_array_foreach(each, k, x) {
				if (n++ >= MF_MAX_FILES)
					break;
				if ((rc = one_file(e, spec, vars, x,
				    resp->content_type, err, out)) != 0)
					goto out;
			}
		} else if (json_object_get(spec, "each") == NULL ||
		    each != NULL) {
			if (n++ >= MF_MAX_FILES)
				break;
			if ((rc = one_file(e, spec, vars, each,
			    resp->content_type, err, out)) != 0)
				goto out;
		}
	}
	/* no mapping: the answer as Dify's default tools give it */
	if (map == NULL || (text == NULL && path == NULL && files == NULL)) {
		j = json_object_get(vars, "body");
		if (json_is_object(j))
			rc = tool_result_json(out, json_deep_copy(j));
		else if (json_is_string(j))
			rc = tool_result_text(out, json_string_value(j),
			    json_string_length(j));
		else if (j != NULL && (s = json_dumps(j, JSON_COMPACT |
		    JSON_ENCODE_ANY)) != NULL)
			rc = tool_result_text(out, s, strlen(s));
	}
out:
	free(s);
	return rc;
}

/*
 * An answer of 2xx that says it failed (a webhook's {"errcode": 93000}):
 * response.error_if, a template that renders to the error's text, or to
 * nothing when the answer is good. ENGINE_EFETCH with that text.
 */
static int
answer_error(const struct tool_manifest *m, const char *tpl,
    const json_t *vars, char *err)
{
	char		*text = NULL, *p;
	int		 rc;

	if (tpl == NULL)
		return 0;
	if ((rc = jinja_render(tpl, strlen(tpl), vars, NULL, err, &text,
	    NULL)) != 0)
		return rc;
	for (p = text; *p == ' ' || *p == '\n' || *p == '\t'; p++)
		;
	if (*p != '\0')
		engine_invalid(err, "%s: %.200s", m->name, p);
	rc = *p != '\0' ? ENGINE_EFETCH : 0;
	free(text);
	return rc;
}

/*
 * 1 when url is on an endpoint the admin configured: it starts with the
 * credentials' base_url, or with a credential the manifest marks
 * `endpoint: true` (a self-hosted searxng's address). Such a request is
 * trusted as a model provider's is (it may be on the local network);
 * any other meets the SSRF guard.
 */
static int
endpoint_trusted(const struct tool_manifest *m, const json_t *creds,
    const char *url)
{
	const json_t	*schema = json_object_get(m->doc,
			    "credentials_for_provider"), *c;
	const char	*k, *v;
	size_t		 n;

	json_object_foreach((json_t *)creds, k, c) {
		if (strcmp(k, "base_url") != 0 && !json_is_true(json_object_get(
		    json_object_get(schema, k), "endpoint")))
			continue;
		if ((v = json_string_value(c)) == NULL || (n = strlen(v)) < 8)
			continue;
		while (n > 0 && v[n - 1] == '/')
			n--;
		if (strncmp(url, v, n) == 0 && (url[n] == '\0' ||
		    url[n] == '/' || url[n] == '?'))
			return 1;
	}
	return 0;
}

/*
 * vars.parsed: each string parameter that holds JSON text of an object or
 * a list, parsed (Dify's tools take records, ids and filters as JSON
 * text: `{% for r in parsed.records %}`). One that does not parse is left
 * out, so a template can say `parsed.records is not defined`.
 */
static int
parsed_of(const json_t *params, json_t *vars)
{
	const char	*k, *s;
	json_t		*v, *all, *x;

	if ((all = json_object()) == NULL || json_object_set_new(vars,
	    "parsed", all) != 0)
		return ENGINE_ENOMEM;
	json_object_foreach((json_t *)params, k, v) {
		if ((s = json_string_value(v)) == NULL)
			continue;
		s += strspn(s, " \t\r\n");
		if (*s != '[' && *s != '{')
			continue;
		if ((x = json_loads(s, 0, NULL)) != NULL &&
		    json_object_set_new(all, k, x) != 0)
			return ENGINE_ENOMEM;
	}
	return 0;
}

/* ====== One exchange, and the steps before the tool's request ====== */

/*
 * Sends the request req renders to over vars and reads its answer as fmt
 * says (json, the default: parsed when it parses; text; feed). *resp
 * holds the raw answer (the caller releases it), *body a new reference.
 * A status outside 2xx is ENGINE_EFETCH in the provider's words (the
 * tool's response.errors); a transport failure as outbound_fetch's.
 */
static int
exchange(struct engine *e, const struct tool_manifest *m, const json_t *tool,
    const json_t *req, const char *fmt, json_t *vars, const json_t *creds,
    char *err, struct outbound_resp *resp, json_t **body)
{
	struct mreq	 q;
	json_t		*b = NULL;
	int		 rc;

	*body = NULL;
	memset(resp, 0, sizeof(*resp));
	if ((rc = build_request(e, req, vars, err, &q)) != 0)
		goto out;
	if ((rc = send_request(e, &q, endpoint_trusted(m, creds, q.url), err,
	    resp)) != 0)
		goto out;
	if (fmt != NULL && strcmp(fmt, "feed") == 0 && resp->status >= 200 &&
	    resp->status <= 299) {
		/* an Atom or RSS answer (arXiv's API) read as the rss tool
		 * reads feeds: {title, items: [...]} */
		if ((rc = tool_feed_parse(resp->body ? resp->body : "",
		    resp->len, 100, err, &b)) != 0) {
			if (rc == ENGINE_EINVAL)
				rc = ENGINE_EFETCH;
			goto out;
		}
	} else if (fmt == NULL || strcmp(fmt, "json") == 0)
		b = json_loadb(resp->body ? resp->body : "", resp->len,
		    JSON_DECODE_ANY, NULL);
	if (b == NULL && fmt != NULL && strcmp(fmt, "json") == 0 &&
	    resp->status >= 200 && resp->status <= 299) {
		engine_invalid(err, "%s answered something that is not JSON",
		    m->name);
		rc = ENGINE_EFETCH;
		goto out;
	}
	if (b == NULL)	/* text; not UTF-8 reads as nothing */
		b = json_stringn(resp->body ? resp->body : "", resp->len);
	if (b == NULL)
		b = json_string("");
	if (b == NULL || json_object_set(vars, "body", b) != 0 ||
	    json_object_set_new(vars, "status", json_integer(resp->status)) !=
	    0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if (resp->status < 200 || resp->status > 299) {
		rc = status_error(m, tool, vars, resp, err);
		goto out;
	}
	*body = b;
	b = NULL;
out:
	json_decref(b);
	mreq_release(&q);
	return rc;
}

/*
 * Runs steps (the provider's, then the tool's) in order. Each step's
 * answer is vars.steps.<name> for the steps after it and for the tool's
 * request and response (with `each`, a list: one request per element of
 * the list at that path, the element as `item`, at most
 * TOOL_STEP_EACH_MAX). A step's error_if renders over its answer as
 * `body`. The last answer is also vars.body, for a tool of steps alone.
 */
static int
run_steps(struct engine *e, const struct tool_manifest *m, const json_t *tool,
    const json_t *steps, json_t *vars, const json_t *creds, char *err)
{
	const json_t		*st, *each, *x;
	struct outbound_resp	 resp;
	const char		*name, *fmt, *tpl;
	json_t			*all = json_object_get(vars, "steps"), *body;
	json_t			*list = NULL;
	size_t			 i, k;
	int			 rc = 0;

	json_array_foreach(steps, i, st) {
		name = json_string_value(json_object_get(st, "name"));
		fmt = json_string_value(json_object_get(st, "format"));
		tpl = json_string_value(json_object_get(st, "error_if"));
		each = NULL;
		if (json_is_string(json_object_get(st, "each"))) {
			each = tool_path_get(vars, json_string_value(
			    json_object_get(st, "each")));
			if (!json_is_array(each)) {
				rc = engine_invalid(err, "%s: step %s: %s is "
				    "not a list", m->name, name,
				    json_string_value(json_object_get(st,
				    "each")));
				rc = ENGINE_EFETCH;
				goto out;
			}
			if ((list = json_array()) == NULL) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		}
		for (k = 0; each == NULL ? k < 1 : k < json_array_size(each) &&
		    k < TOOL_STEP_EACH_MAX; k++) {
			x = each ? json_array_get(each, k) : NULL;
			if (x != NULL && json_object_set(vars, "item",
			    (json_t *)x) != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
			rc = exchange(e, m, tool, json_object_get(st,
			    "request"), fmt, vars, creds, err, &resp, &body);
			outbound_resp_release(&resp);
			if (rc == 0)
				rc = answer_error(m, tpl, vars, err);
			if (rc != 0) {
				json_decref(body);
				goto out;
			}
			if (list != NULL)
				rc = json_array_append_new(list, body);
			else
				rc = json_object_set_new(all, name, body);
			if (rc != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		}
		json_object_del(vars, "item");
		if (list != NULL) {
			if (json_object_set_new(all, name, list) != 0 ||
			    json_object_set(vars, "body", list) != 0) {
				list = NULL;
				rc = ENGINE_ENOMEM;
				goto out;
			}
			list = NULL;
		}
	}
out:
	json_object_del(vars, "item");
	json_decref(list);
	return rc;
}

/* ====== The provider ====== */

static int
mf_find(struct engine *e, const struct tool_call *call, char *err,
    const struct tool_manifest **m)
{
	*m = tool_manifest_find(e, call->provider);
	if (*m == NULL && call->provider_name != NULL)
		*m = tool_manifest_find(e, call->provider_name);
	if (*m == NULL)
		return engine_invalid(err, "tool provider '%s' is not "
		    "available in flowcgi", call->provider ? call->provider :
		    ""), ENGINE_ENOTFOUND;
	if (json_is_string(json_object_get((*m)->doc, "unsupported"))) {
		engine_invalid(err, "tool provider '%s' is not supported by "
		    "flowcgi: %s", (*m)->name, json_string_value(
		    json_object_get((*m)->doc, "unsupported")));
		return ENGINE_ENOTFOUND;
	}
	return 0;
}

static int
mf_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	const struct tool_manifest	*m;
	const json_t			*t, *d;
	const char			*desc;
	json_t				*arr = NULL, *one;
	size_t				 i;
	int				 rc;

	*out = NULL;
	if ((rc = mf_find(e, call, err, &m)) != 0)
		return rc;
	if ((arr = json_array()) == NULL)
		return ENGINE_ENOMEM;
	json_array_foreach(json_object_get(m->doc, "tools"), i, t) {
		d = json_object_get(t, "description");
		desc = json_string_value(json_object_get(d, "llm"));
		if (desc == NULL)
			desc = tool_manifest_label(json_object_get(d, "human"),
			    "");
		one = json_pack("{s:O,s:s,s:o*}", "name", json_object_get(
		    json_object_get(t, "identity"), "name"), "description",
		    desc, "parameters", tool_manifest_schema(t, 1));
		if (one == NULL || json_object_get(one, "parameters") == NULL ||
		    json_array_append_new(arr, one) != 0) {
			json_decref(arr);
			return ENGINE_ENOMEM;
		}
	}
	*out = arr;
	return 0;
}

static int
mf_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	const struct tool_manifest	*m;
	const json_t			*tool, *creds = call->credentials;
	struct outbound_resp		 resp;
	json_t				*params = NULL, *vars = NULL, *body;
	const char			*base, *override, *fmt;
	int				 rc;

	memset(&resp, 0, sizeof(resp));
	if ((rc = mf_find(e, call, err, &m)) != 0)
		return rc;
	if ((tool = tool_manifest_tool(m, call->tool)) == NULL) {
		engine_invalid(err, "tool '%s/%s' is not available in flowcgi",
		    m->name, call->tool ? call->tool : "");
		return ENGINE_ENOTFOUND;
	}
	if ((rc = creds_check(m, creds, err)) != 0 ||
	    (rc = params_of(tool, call->params, err, &params)) != 0) {
		out->final = 1;
		goto out;
	}
	/* base_url: the admin's (override), else the manifest's */
	override = json_string_value(json_object_get(creds, "base_url"));
	if (override == NULL)
		override = "";
	base = *override ? override : json_string_value(json_object_get(
	    m->doc, "base_url"));
	if ((vars = json_pack("{s:O,s:o,s:s,s:s,s:{}}", "params", params,
	    "credentials", creds ? json_incref((json_t *)creds) :
	    json_object(), "base_url", base ? base : "", "override",
	    override, "steps")) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = parsed_of(params, vars)) != 0)
		goto out;
	if ((rc = run_steps(e, m, tool, json_object_get(m->doc, "steps"),
	    vars, creds, err)) != 0 || (rc = run_steps(e, m, tool,
	    json_object_get(tool, "steps"), vars, creds, err)) != 0)
		goto out;
	fmt = json_string_value(json_object_get(json_object_get(tool,
	    "response"), "format"));
	if (json_object_get(tool, "request") != NULL) {
		if ((rc = exchange(e, m, tool, json_object_get(tool,
		    "request"), fmt, vars, creds, err, &resp, &body)) != 0)
			goto out;
		if (json_object_set_new(vars, "body", body) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	/* with steps alone, the last step's answer is the body */
	/* the answer's templates never see the credentials */
	json_object_del(vars, "credentials");
	if ((rc = answer_error(m, json_string_value(json_object_get(
	    json_object_get(tool, "response"), "error_if")), vars, err)) != 0)
		goto out;
	rc = map_response(e, tool, vars, &resp, err, out);
out:
	if (rc == ENGINE_EINVAL)
		out->final = 1;	/* bad input: no retry helps */
	if (rc != 0)
		scrub(err, creds);
	outbound_resp_release(&resp);
	json_decref(params);
	json_decref(vars);
	return rc;
}

/*
 * Runs the provider-level steps of m alone with creds (Settings > Tools'
 * Test for a manifest whose `test` is `{steps: true}`: the token request
 * shows whether the app's id and secret are good). 0 when every step
 * answered and none said it failed; else as a call's error, credentials
 * masked.
 */
int
tool_manifest_test_steps(struct engine *e, const struct tool_manifest *m,
    const json_t *creds, char *err)
{
	const char	*override, *base;
	json_t		*vars;
	int		 rc;

	override = json_string_value(json_object_get(creds, "base_url"));
	if (override == NULL)
		override = "";
	base = *override ? override : json_string_value(json_object_get(
	    m->doc, "base_url"));
	if ((rc = creds_check(m, creds, err)) != 0)
		return rc;
	if ((vars = json_pack("{s:{},s:{},s:O,s:s,s:s,s:{}}", "params",
	    "parsed", "credentials", creds, "base_url", base ? base : "",
	    "override", override, "steps")) == NULL)
		return ENGINE_ENOMEM;
	rc = run_steps(e, m, NULL, json_object_get(m->doc, "steps"), vars,
	    creds, err);
	if (rc != 0)
		scrub(err, creds);
	json_decref(vars);
	return rc;
}

const struct tool_provider tool_provider_manifest = {
	"manifest", mf_list, mf_invoke, 1,
};
