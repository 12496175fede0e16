/*
 * api.c — Dify's `api` provider type: custom tools described by an
 * OpenAPI 3 schema (api/core/tools/custom_tool/tool.py and
 * api/core/tools/utils/parser.py).
 *
 * Each operation is a tool named by its operationId (without one:
 * "<path without / and other non [A-Za-z0-9_-]>_<method>", as Dify names
 * it). A call builds the request the way Dify's ApiTool does:
 *  - URL: servers[0].url + the path, {name} path parameters replaced
 *    (values percent-encoded);
 *  - parameters (path-level and operation-level, $ref resolved) in path,
 *    query (skipped when ""), header and cookie; a missing required one
 *    is an error, a missing optional one takes its schema default or "";
 *  - requestBody: the first content type becomes Content-Type; each
 *    property of its schema takes the parameter of that name (converted
 *    to the property's type), else its default, else null; a missing
 *    required property is an error; application/json bodies are
 *    json.dumps'd, application/x-www-form-urlencoded ones urlencoded;
 *  - auth from the provider's credentials: api_key_header (header
 *    api_key_header, default Authorization, value with "Bearer " or
 *    "Basic " in front for the bearer / basic prefixes — Dify does not
 *    base64-encode a basic key — or as given for custom) or
 *    api_key_query (query parameter api_key_query_param, default key).
 * The request goes through outbound_fetch with the SSRF guard (the URL
 * comes from app content). Answer: a status >= 400 fails the tool
 * ("Request failed with status code N and <body>"); an empty body answers
 * Dify's "Empty response from the tool, ..." text; a JSON object (with a
 * JSON content type) becomes a json message plus the raw text; anything
 * else is a text message (JSON that is not an object as json.dumps).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "engine/tools/tools.h"

#define API_MAX_OPS	1000
#define API_MAX_REF	16

static const char *const methods[] = { "get", "post", "put", "delete",
    "patch", "head", "options", "trace", NULL };

/* ====== Schema ====== */

/* Follows a local "$ref" (#/a/b) in doc, up to API_MAX_REF times. */
static const json_t *
deref(const json_t *doc, const json_t *v)
{
	const char	*ref, *p, *e;
	char		 part[256];
	const json_t	*cur;
	int		 n;

	for (n = 0; n < API_MAX_REF && json_is_object(v) &&
	    (ref = json_string_value(json_object_get(v, "$ref"))) != NULL;
	    n++) {
		if (strncmp(ref, "#/", 2) != 0)
			return v;
		cur = doc;
		for (p = ref + 2; cur != NULL && *p != '\0'; p = *e ? e + 1 :
		    e) {
			e = p + strcspn(p, "/");
			snprintf(part, sizeof(part), "%.*s", (int)(e - p), p);
			cur = json_object_get(cur, part);
		}
		if (cur == NULL)
			return v;
		v = cur;
	}
	return v;
}

/* Dify's operation id for an operation without one. */
static void
op_name(const char *path, const char *method, const json_t *op, char *buf,
    size_t bufsz)
{
	const char	*id = json_string_value(json_object_get(op,
			    "operationId"));
	size_t		 n = 0;

	if (id != NULL) {
		snprintf(buf, bufsz, "%s", id);
		return;
	}
	for (; *path != '\0' && n + 1 < bufsz; path++)
		if (isalnum((unsigned char)*path) || *path == '_' ||
		    *path == '-')
			buf[n++] = *path;
	buf[n] = '\0';
	snprintf(buf + n, bufsz - n, "_%s", method);
}

int
api_schema_check(const char *text, char *err, json_t **doc, json_t **tools)
{
	json_t		*d = NULL, *list = NULL, *paths, *item, *op;
	const char	*ver, *path, *desc;
	char		 name[256];
	int		 i, rc;

	*doc = *tools = NULL;
	if ((rc = dsl_parse(text, strlen(text), NULL, err, &d)) != 0) {
		rc = ENGINE_EINVAL;
		goto out;
	}
	if (!json_is_object(d) || (ver = json_string_value(json_object_get(d,
	    "openapi"))) == NULL || ver[0] != '3') {
		rc = engine_invalid(err, "schema: not an OpenAPI 3 document "
		    "(openapi: 3.x is required)");
		goto out;
	}
	if (json_string_value(json_object_get(json_array_get(
	    json_object_get(d, "servers"), 0), "url")) == NULL) {
		rc = engine_invalid(err, "schema: No server found in the "
		    "openapi yaml.");
		goto out;
	}
	if (!json_is_object(paths = json_object_get(d, "paths"))) {
		rc = engine_invalid(err, "schema: paths is required");
		goto out;
	}
	if ((list = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_object_foreach(paths, path, item) {
		item = (json_t *)deref(d, item);
		for (i = 0; methods[i] != NULL; i++) {
			if (!json_is_object(op = json_object_get(item,
			    methods[i])))
				continue;
			if (json_array_size(list) >= API_MAX_OPS) {
				rc = engine_invalid(err, "schema: more than "
				    "%d operations", API_MAX_OPS);
				goto out;
			}
			op_name(path, methods[i], op, name, sizeof(name));
			desc = json_string_value(json_object_get(op,
			    "summary"));
			if (desc == NULL)
				desc = json_string_value(json_object_get(op,
				    "description"));
			if (json_array_append_new(list, json_pack("{s:s,s:s,"
			    "s:s,s:s}", "name", name, "description", desc ?
			    desc : "", "method", methods[i], "path", path)) !=
			    0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		}
	}
	if (json_array_size(list) == 0) {
		rc = engine_invalid(err, "schema: no operations found");
		goto out;
	}
	*doc = d;
	*tools = list;
	d = list = NULL;
	rc = 0;
out:
	json_decref(d);
	json_decref(list);
	return rc;
}

/* The operation called name: its path item, path and method. */
static const json_t *
find_op(const json_t *doc, const char *name, const json_t **item,
    const char **path, const char **method)
{
	const json_t	*paths = json_object_get(doc, "paths"), *op;
	json_t		*it;
	const char	*p;
	char		 buf[256];
	int		 i;

	json_object_foreach((json_t *)paths, p, it) {
		const json_t *pi = deref(doc, it);

		for (i = 0; methods[i] != NULL; i++) {
			if (!json_is_object(op = json_object_get(pi,
			    methods[i])))
				continue;
			op_name(p, methods[i], op, buf, sizeof(buf));
			if (strcmp(buf, name) == 0) {
				*item = pi;
				*path = p;
				*method = methods[i];
				return op;
			}
		}
	}
	return NULL;
}

/*
 * Every parameter object of an operation, path-level first. New array;
 * NULL when out of memory.
 */
static json_t *
op_params(const json_t *doc, const json_t *item, const json_t *op)
{
	json_t		*all = json_array(), *p;
	const json_t	*lists[2] = { json_object_get(item, "parameters"),
			    json_object_get(op, "parameters") };
	size_t		 i, k;

	for (k = 0; k < 2 && all != NULL; k++)
		json_array_foreach(lists[k], i, p) {
			const json_t *r = deref(doc, p);

			if (json_string_value(json_object_get(r, "name")) &&
			    json_array_append(all, (json_t *)r) != 0) {
				json_decref(all);
				return NULL;
			}
		}
	return all;
}

/* The first content type of the request body and its schema. */
static const json_t *
body_schema(const json_t *doc, const json_t *op, const char **ctype)
{
	const json_t	*rb = deref(doc, json_object_get(op, "requestBody"));
	json_t		*content = json_object_get(rb, "content"), *v;
	const char	*k;

	json_object_foreach(content, k, v) {
		*ctype = k;
		return deref(doc, json_object_get(v, "schema"));
	}
	return NULL;
}

/* ====== Describe ====== */

/* The function tool of operation t; NULL when out of memory. */
static json_t *
describe_op(const json_t *doc, const json_t *t)
{
	const json_t	*item, *op, *bs;
	const char	*path, *method, *ctype, *name, *k;
	json_t		*props = json_object(), *req = json_array(), *ps, *p;
	json_t		*v;
	size_t		 i;
	int		 bad = 0;

	name = json_string_value(json_object_get(t, "name"));
	if (name == NULL || (op = find_op(doc, name, &item, &path,
	    &method)) == NULL)
		goto done;
	bad |= (ps = op_params(doc, item, op)) == NULL;
	json_array_foreach(ps, i, p) {
		const json_t *sch = deref(doc, json_object_get(p, "schema"));
		const char *d = json_string_value(json_object_get(p,
		    "description"));

		bad |= json_object_set_new(props, json_string_value(
		    json_object_get(p, "name")), json_pack("{s:s,s:s}", "type",
		    json_string_value(json_object_get(sch, "type")) ?
		    json_string_value(json_object_get(sch, "type")) :
		    "string", "description", d ? d : ""));
		if (json_is_true(json_object_get(p, "required")))
			bad |= json_array_append(req, json_object_get(p,
			    "name"));
	}
	json_decref(ps);
	if ((bs = body_schema(doc, op, &ctype)) != NULL) {
		json_object_foreach(json_object_get(bs, "properties"), k, v) {
			const json_t *pv = deref(doc, v);
			const char *ty = json_string_value(json_object_get(pv,
			    "type"));
			const char *d = json_string_value(json_object_get(pv,
			    "description"));

			bad |= json_object_set_new(props, k, json_pack(
			    "{s:s,s:s}", "type", ty ? ty : "string",
			    "description", d ? d : ""));
		}
		json_array_foreach(json_object_get(bs, "required"), i, v)
			bad |= json_array_append(req, v);
	}
done:
	if (bad) {
		json_decref(props);
		json_decref(req);
		return NULL;
	}
	return json_pack("{s:O,s:O,s:{s:s,s:o,s:o}}", "name",
	    json_object_get(t, "name"), "description", json_object_get(t,
	    "description"), "parameters", "type", "object", "properties",
	    props, "required", req);
}

static int
api_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	json_t	*rec = NULL, *arr = NULL, *t, *doc;
	size_t	 i;
	int	 rc;

	*out = NULL;
	if ((rc = tool_provider_record(e, call, "api", err, &rec)) != 0)
		goto out;
	doc = json_object_get(rec, "openapi");
	if ((arr = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_array_foreach(json_object_get(rec, "tools"), i, t)
		if (json_array_append_new(arr, describe_op(doc, t)) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	*out = arr;
	arr = NULL;
out:
	json_decref(rec);
	json_decref(arr);
	return rc;
}

/* ====== Invoke ====== */

/* Appends s percent-encoded (RFC 3986 unreserved kept). */
static void
sb_escape(struct dbuf *sb, const char *s, int plus)
{
	static const char	hex[] = "0123456789ABCDEF";
	char			enc[3];
	unsigned char		c;

	for (; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
			dbuf_add(sb, s, 1);
		else if (plus && c == ' ')
			dbuf_add(sb, "+", 1);
		else {
			enc[0] = '%';
			enc[1] = hex[c >> 4];
			enc[2] = hex[c & 15];
			dbuf_add(sb, enc, 3);
		}
	}
}

/* A value as the text Python's str() and requests would send. */
static char *
value_text(const json_t *v)
{
	char	*s = NULL;

	if (v == NULL || json_is_null(v))
		return strdup("None");
	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (json_is_number(v) || json_is_boolean(v)) {
		if (tpl_py_repr(v, &s) == 0)
			return s;
		return NULL;
	}
	return json_dumps(v, JSON_COMPACT);
}

/* Dify's _convert_body_property_type, for the common types. */
static json_t *
convert(const json_t *prop, const json_t *v)
{
	const char	*ty = json_string_value(json_object_get(prop, "type"));
	const char	*s = json_string_value(v);
	char		*end;
	json_t		*d;

	if (ty == NULL || s == NULL)
		return json_incref((json_t *)v);
	if (strcmp(ty, "integer") == 0 || strcmp(ty, "number") == 0) {
		long long ll = strtoll(s, &end, 10);

		if (*s != '\0' && *end == '\0')
			return json_integer(ll);
		double dd = strtod(s, &end);

		/* JSON has no inf or nan: those stay the string given */
		if (*s != '\0' && *end == '\0' && isfinite(dd))
			return json_real(dd);
		return json_incref((json_t *)v);
	}
	if (strcmp(ty, "boolean") == 0)
		return json_boolean(strcasecmp(s, "true") == 0 ||
		    strcmp(s, "1") == 0);
	if ((strcmp(ty, "object") == 0 || strcmp(ty, "array") == 0) &&
	    (d = json_loads(s, JSON_DECODE_ANY, NULL)) != NULL)
		return d;
	return json_incref((json_t *)v);
}

struct api_req {
	struct dbuf		 url;
	struct dbuf		 query;
	struct dbuf		 cookies;
	struct dbuf		 body;
	struct curl_slist	*headers;
	int			 has_body;
};

static int
add_header(struct api_req *q, const char *name, const char *value)
{
	struct dbuf	 sb = { 0 };
	struct curl_slist *h;
	int		 rc = 0;

	if (strpbrk(name, "\r\n:") != NULL || strpbrk(value, "\r\n") != NULL)
		return -1;
	dbuf_addstr(&sb, name);
	dbuf_addstr(&sb, *value ? ": " : ";");
	dbuf_addstr(&sb, value);
	if (sb.err || (h = curl_slist_append(q->headers, sb.p)) == NULL)
		rc = -1;
	else
		q->headers = h;
	dbuf_free(&sb);
	return rc;
}

static void
add_query(struct dbuf *sb, const char *name, const char *value)
{
	if (sb->len > 0)
		dbuf_addstr(sb, "&");
	sb_escape(sb, name, 1);
	dbuf_addstr(sb, "=");
	sb_escape(sb, value, 1);
}

/* Auth from the credentials into q. */
static int
apply_auth(const json_t *cred, struct api_req *q, char *err)
{
	const char	*type = json_string_value(json_object_get(cred,
			    "auth_type"));
	const char	*hdr, *val, *prefix, *param;
	char		*full = NULL;
	size_t		 n;
	int		 rc = 0;

	if (type == NULL || strcmp(type, "none") == 0)
		goto out;
	val = json_string_value(json_object_get(cred, "api_key_value"));
	if (val == NULL || *val == '\0') {
		rc = engine_invalid(err, "api_key_value is missing");
		goto out;
	}
	if (strcmp(type, "api_key_header") == 0 ||
	    strcmp(type, "api_key") == 0) {
		hdr = json_string_value(json_object_get(cred,
		    "api_key_header"));
		if (hdr == NULL || *hdr == '\0')
			hdr = "Authorization";
		prefix = json_string_value(json_object_get(cred,
		    "api_key_header_prefix"));
		n = strlen(val) + 16;
		if ((full = malloc(n)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		snprintf(full, n, "%s%s", prefix == NULL ? "" :
		    strcmp(prefix, "bearer") == 0 ? "Bearer " :
		    strcmp(prefix, "basic") == 0 ? "Basic " : "", val);
		if (add_header(q, hdr, full) != 0)
			rc = engine_invalid(err, "the API key header is not "
			    "valid");
	} else if (strcmp(type, "api_key_query") == 0) {
		param = json_string_value(json_object_get(cred,
		    "api_key_query_param"));
		add_query(&q->query, param && *param ? param : "key", val);
	} else
		rc = engine_invalid(err, "auth_type '%s' is not supported",
		    type);
out:
	free(full);
	return rc;
}

/* 1 when the array of strings list holds s. */
static int
in_list(const json_t *list, const char *s)
{
	json_t	*r;
	size_t	 i;

	json_array_foreach(list, i, r)
		if (json_string_value(r) != NULL &&
		    strcmp(json_string_value(r), s) == 0)
			return 1;
	return 0;
}

/* Builds the request for op from params into q. */
static int
build(const json_t *doc, const json_t *item, const json_t *op,
    const char *path, const json_t *params, const char *opname,
    struct api_req *q, char *err)
{
	const json_t	*bs, *prop;
	json_t		*ps = NULL, *p, *body = NULL, *v, *cv;
	const char	*server, *name, *in, *ctype = NULL, *k, *brace;
	char		*val = NULL, *s = NULL;
	size_t		 i;
	int		 rc = ENGINE_EINVAL;

	server = json_string_value(json_object_get(json_array_get(
	    json_object_get(doc, "servers"), 0), "url"));
	dbuf_addstr(&q->url, server ? server : "");
	/* the path, each {name} replaced by its parameter */
	for (; *path != '\0'; path = brace) {
		if (*path != '{') {
			brace = path + strcspn(path, "{");
			dbuf_add(&q->url, path, (size_t)(brace - path));
			continue;
		}
		brace = path + strcspn(path, "}");
		{
			char pname[128];
			const json_t *pv;

			snprintf(pname, sizeof(pname), "%.*s",
			    (int)(brace - path - 1), path + 1);
			pv = json_object_get(params, pname);
			free(val);
			val = pv ? value_text(pv) : strdup("");
			if (val == NULL) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
			sb_escape(&q->url, val, 0);
		}
		if (*brace == '}')
			brace++;
	}
	if ((ps = op_params(doc, item, op)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_array_foreach(ps, i, p) {
		name = json_string_value(json_object_get(p, "name"));
		in = json_string_value(json_object_get(p, "in"));
		v = json_object_get(params, name);
		free(val);
		val = NULL;
		if (v != NULL)
			val = value_text(v);
		else if (json_is_true(json_object_get(p, "required"))) {
			engine_invalid(err, "Missing required parameter %s",
			    name);
			goto out;
		} else {
			const json_t *d = json_object_get(deref(doc,
			    json_object_get(p, "schema")), "default");

			val = d ? value_text(d) : strdup("");
		}
		if (val == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if (in == NULL || strcmp(in, "path") == 0)
			continue;
		if (strcmp(in, "query") == 0) {
			if (*val != '\0')
				add_query(&q->query, name, val);
		} else if (strcmp(in, "header") == 0) {
			if (add_header(q, name, val) != 0) {
				engine_invalid(err, "header parameter %s is "
				    "not valid", name);
				goto out;
			}
		} else if (strcmp(in, "cookie") == 0) {
			if (q->cookies.len > 0)
				dbuf_addstr(&q->cookies, "; ");
			dbuf_addstr(&q->cookies, name);
			dbuf_addstr(&q->cookies, "=");
			dbuf_addstr(&q->cookies, val);
		}
	}
	if ((bs = body_schema(doc, op, &ctype)) != NULL) {
		if ((body = json_object()) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		json_object_foreach(json_object_get(bs, "properties"), k,
		    v) {
			prop = deref(doc, v);
			if (json_object_get(params, k) != NULL)
				cv = convert(prop, json_object_get(params, k));
			else if (in_list(json_object_get(bs, "required"), k)) {
				engine_invalid(err, "Missing required "
				    "parameter %s in operation %s", k, opname);
				goto out;
			} else if (json_object_get(prop, "default") != NULL)
				cv = json_deep_copy(json_object_get(prop,
				    "default"));
			else
				cv = json_null();
			if (json_object_set_new(body, k, cv) != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		}
		if (add_header(q, "Content-Type", ctype) != 0) {
			engine_invalid(err, "content type %s is not valid",
			    ctype);
			goto out;
		}
		q->has_body = 1;
		if (strcmp(ctype, "application/x-www-form-urlencoded") == 0) {
			json_object_foreach(body, k, v) {
				free(s);
				if ((s = value_text(v)) == NULL) {
					rc = ENGINE_ENOMEM;
					goto out;
				}
				add_query(&q->body, k, s);
			}
		} else {
			free(s);
			if ((rc = tool_json_dumps(body, 1, &s)) != 0)
				goto out;
			dbuf_addstr(&q->body, s);
		}
	}
	if (q->cookies.len > 0 && add_header(q, "Cookie", q->cookies.p) != 0) {
		engine_invalid(err, "cookie parameters are not valid");
		goto out;
	}
	if (q->query.len > 0) {
		dbuf_addstr(&q->url, strchr(q->url.p ? q->url.p : "", '?') ?
		    "&" : "?");
		dbuf_add(&q->url, q->query.p, q->query.len);
	}
	rc = q->url.err || q->body.err || q->query.err ? ENGINE_ENOMEM : 0;
out:
	json_decref(ps);
	json_decref(body);
	free(val);
	free(s);
	return rc;
}

static int
answer(const struct outbound_resp *resp, char *err, struct tool_result *out)
{
	json_t	*j = NULL;
	char	*s = NULL;
	int	 rc, is_json;

	if (resp->status >= 400) {
		rc = engine_invalid(err, "Request failed with status code %ld "
		    "and %.150s", resp->status, resp->body ? resp->body : "");
		goto out;
	}
	if (resp->len == 0) {
		s = strdup("Empty response from the tool, please check your "
		    "parameters and try again.");
		rc = s ? tool_result_text(out, s, strlen(s)) : ENGINE_ENOMEM;
		goto out;
	}
	is_json = resp->content_type != NULL &&
	    strcasestr(resp->content_type, "application/json") != NULL;
	if (is_json)
		j = json_loadb(resp->body, resp->len, JSON_DECODE_ANY, NULL);
	if (j != NULL && json_is_object(j)) {
		if ((rc = tool_result_json(out, json_incref(j))) == 0)
			rc = tool_result_text(out, resp->body, resp->len);
	} else if (j != NULL) {
		if ((rc = tool_json_dumps(j, 0, &s)) == 0)
			rc = tool_result_text(out, s, strlen(s));
	} else
		rc = tool_result_text(out, resp->body, resp->len);
out:
	json_decref(j);
	free(s);
	return rc;
}

static int
api_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct api_req		 q;
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	json_t			*rec = NULL;
	const json_t		*doc, *op, *item = NULL;
	const char		*path = NULL, *method = NULL;
	char			 m[16];
	size_t			 i;
	int			 rc;

	memset(&q, 0, sizeof(q));
	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	if ((rc = tool_provider_record(e, call, "api", err, &rec)) != 0)
		goto out;
	doc = json_object_get(rec, "openapi");
	if ((op = find_op(doc, call->tool, &item, &path, &method)) == NULL) {
		rc = ENGINE_ENOTFOUND;
		engine_invalid(err, "tool '%s/%s' is not available in flowcgi: "
		    "the provider's schema has no such operation",
		    call->provider_name ? call->provider_name :
		    call->provider, call->tool);
		goto out;
	}
	if ((rc = apply_auth(json_object_get(rec, "credentials"), &q,
	    err)) != 0 || (rc = build(doc, item, op, path, call->params,
	    call->tool, &q, err)) != 0)
		goto out;
	for (i = 0; method[i] != '\0' && i + 1 < sizeof(m); i++)
		m[i] = (char)toupper((unsigned char)method[i]);
	m[i] = '\0';
	req.method = m;
	req.url = q.url.p;
	req.headers = q.headers;
	if (q.has_body) {
		req.body = q.body.p ? q.body.p : "";
		req.body_len = q.body.len;
	}
	req.follow = 1;
	if ((rc = outbound_fetch(e, &req, err, &resp)) != 0)
		goto out;
	rc = answer(&resp, err, out);
out:
	outbound_resp_release(&resp);
	dbuf_free(&q.url);
	dbuf_free(&q.query);
	dbuf_free(&q.cookies);
	dbuf_free(&q.body);
	curl_slist_free_all(q.headers);
	json_decref(rec);
	return rc;
}

const struct tool_provider tool_provider_api = {
	"api", api_list, api_invoke, 0,
};
