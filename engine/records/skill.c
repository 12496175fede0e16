/*
 * skill.c — the skill compiler: Dify's §[…]§ placeholders in skill files
 * (the app's Markdown assets) and in prompts, with the rules of Dify's
 * SkillCompiler and assembler/replacers.py, applied in Dify's order:
 *
 *  1. files:  §[file].[source].[asset_id]§ (each part one or more bytes
 *     other than "]") becomes the path of that asset: relative to the
 *     file being compiled ("./x.md", "../a/b.py"), or for a prompt
 *     "skills/<path>"; "[File not found]" for an unknown id;
 *  2. tool groups: "[" tok ("," tok)* "]" with optional white space
 *     around tokens and commas, where tok is a well-formed tool token
 *     (four parts of one or more bytes other than "]"), becomes
 *     "[r1, r2]" of the enabled tools' renderings (missing ones render
 *     "[Tool not found or disabled: <uuid>]", disabled ones are left out,
 *     and a group of none becomes "");
 *  3. single tools: §[tool].[p].[n].[uuid]§ with Python's lazy ".*?" parts
 *     (no newline; the uuid is what lies between the third "].[" and the
 *     first "]§" after it), rendered the same way.
 *
 * Python's \s is Unicode white space; here it is the ASCII one (space, \t,
 * \n, \v, \f, \r): a group with another space in it stays separate tokens,
 * each still compiled by step 3. A part never holds a NUL byte (it becomes
 * a C string), where Python's [^\]] and "." would take one.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/records/records.h"

static const char sect[] = "\xC2\xA7";	/* U+00A7, § */
static const char tool_open[] = "\xC2\xA7[tool].[";
static const char file_open[] = "\xC2\xA7[file].[";

#define SECT_LEN	2

/* The first n bytes of s as a string (malloc'd), or NULL. */
static char *
span_dup(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p != NULL) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/* The first occurrence of needle (nlen bytes) in [s, end), or NULL. */
static const char *
find(const char *s, const char *end, const char *needle, size_t nlen)
{
	if (nlen == 0)
		return s;
	while (s != NULL && (size_t)(end - s) >= nlen) {
		s = memchr(s, (unsigned char)needle[0],
		    (size_t)(end - s) - nlen + 1);
		if (s == NULL)
			return NULL;
		if (memcmp(s, needle, nlen) == 0)
			return s;
		s++;
	}
	return NULL;
}

/* Length of a "[^\]]+" part at s, 0 when there is none. */
static size_t
name_len(const char *s, const char *end)
{
	const char *p = s;

	while (p < end && *p != ']' && *p != '\0')
		p++;
	return (size_t)(p - s);
}

/*
 * A well-formed token at s: open ("§[tool].[" or "§[file].["), then
 * nparts parts of [^\]]+ joined by "].[", then "]§". Fills part starts and
 * lengths; returns the token's length, or 0.
 */
static size_t
token_at(const char *s, const char *end, const char *open, int nparts,
    const char **ps, size_t *pl)
{
	const char	*p = s;
	size_t		 olen = strlen(open);
	int		 i;

	if ((size_t)(end - p) < olen || memcmp(p, open, olen) != 0)
		return 0;
	p += olen;
	for (i = 0; i < nparts; i++) {
		ps[i] = p;
		if ((pl[i] = name_len(p, end)) == 0)
			return 0;
		p += pl[i];
		if (i + 1 < nparts) {
			if ((size_t)(end - p) < 3 || memcmp(p, "].[", 3) != 0)
				return 0;
			p += 3;
		}
	}
	if ((size_t)(end - p) < 1 + SECT_LEN || p[0] != ']' ||
	    memcmp(p + 1, sect, SECT_LEN) != 0)
		return 0;
	return (size_t)(p + 1 + SECT_LEN - s);
}

/*
 * Python's §\[tool\]\.\[.*?\]\.\[.*?\]\.\[(.*?)\]§ at s: each lazy part
 * ends at the first delimiter that lets the rest match, which (the rest
 * needing only later delimiters) is simply the first one, all on one
 * line. Fills the three parts; returns the match's length, or 0.
 */
static size_t
lazy_tool_at(const char *s, const char *end, const char **ps, size_t *pl)
{
	const char	*p, *d1, *d2, *d3, *nl;
	size_t		 olen = sizeof(tool_open) - 1;

	if ((size_t)(end - s) < olen || memcmp(s, tool_open, olen) != 0)
		return 0;
	p = s + olen;
	/* "." is not a newline; nor, here, a NUL (parts become C strings) */
	nl = memchr(p, '\n', (size_t)(end - p));
	if (nl == NULL)
		nl = end;
	if ((d1 = memchr(p, '\0', (size_t)(nl - p))) != NULL)
		nl = d1;
	if ((d1 = find(p, nl, "].[", 3)) == NULL ||
	    (d2 = find(d1 + 3, nl, "].[", 3)) == NULL ||
	    (d3 = find(d2 + 3, nl, "]\xC2\xA7", 1 + SECT_LEN)) == NULL)
		return 0;
	ps[0] = p;
	pl[0] = (size_t)(d1 - p);
	ps[1] = d1 + 3;
	pl[1] = (size_t)(d2 - d1 - 3);
	ps[2] = d2 + 3;
	pl[2] = (size_t)(d3 - d2 - 3);
	return (size_t)(d3 + 1 + SECT_LEN - s);
}

/* Appends the rendering of one tool; *any set when it rendered text. */
static int
render_tool(const struct skill_resolver *r, const char *const *ps,
    const size_t *pl, struct dbuf *sb, int *any, const char *sep)
{
	char	*prov, *name, *uuid, *txt = NULL;
	int	 rc = 0;

	prov = span_dup(ps[0], pl[0]);
	name = span_dup(ps[1], pl[1]);
	uuid = span_dup(ps[2], pl[2]);
	if (prov == NULL || name == NULL || uuid == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	txt = r->tool != NULL ? r->tool(r->arg, prov, name, uuid) : NULL;
	if (txt != NULL && *txt == '\0')	/* disabled: left out */
		goto out;
	if (*any && sep != NULL)
		dbuf_addstr(sb, sep);
	*any = 1;
	if (txt != NULL)
		dbuf_addstr(sb, txt);
	else {
		dbuf_addstr(sb, "[Tool not found or disabled: ");
		dbuf_addstr(sb, uuid);
		dbuf_addstr(sb, "]");
	}
out:
	free(prov);
	free(name);
	free(uuid);
	free(txt);
	return rc;
}

static int
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
	    c == '\r';
}

/* A tool group at s ("[" tok ("," tok)* "]"): its length, or 0. */
static size_t
group_at(const char *s, const char *end)
{
	const char	*p = s, *ps[4];
	size_t		 pl[4], n;

	if (p >= end || *p != '[')
		return 0;
	p++;
	for (;;) {
		while (p < end && is_ws(*p))
			p++;
		if ((n = token_at(p, end, tool_open, 3, ps + 0, pl + 0)) == 0)
			return 0;
		p += n;
		while (p < end && is_ws(*p))
			p++;
		if (p < end && *p == ']')
			return (size_t)(p + 1 - s);
		if (p >= end || *p != ',')
			return 0;
		p++;
	}
}

enum pass { PASS_FILE, PASS_GROUP, PASS_TOOL };

/* One of Dify's three substitutions over in (len bytes) into sb. */
static int
pass_run(enum pass which, const char *in, size_t len,
    const struct skill_resolver *r, struct dbuf *sb)
{
	const char	*p = in, *end = in + len, *hit, *ps[4];
	size_t		 pl[4], n;
	int		 rc, any;

	while (p < end) {
		if (which == PASS_GROUP)
			hit = memchr(p, '[', (size_t)(end - p));
		else
			hit = find(p, end, which == PASS_FILE ? file_open :
			    tool_open, which == PASS_FILE ?
			    sizeof(file_open) - 1 : sizeof(tool_open) - 1);
		if (hit == NULL)
			break;
		dbuf_add(sb, p, (size_t)(hit - p));
		p = hit;
		if (which == PASS_FILE) {
			if ((n = token_at(p, end, file_open, 2, ps, pl)) ==
			    0) {
				dbuf_add(sb, p, 1);
				p++;
				continue;
			}
			{
				char *id = span_dup(ps[1], pl[1]), *txt;

				if (id == NULL)
					return ENGINE_ENOMEM;
				txt = r->file != NULL ? r->file(r->arg, id) :
				    NULL;
				dbuf_addstr(sb, txt ? txt : "[File not found]");
				free(txt);
				free(id);
			}
		} else if (which == PASS_GROUP) {
			const char *q, *qe;

			if ((n = group_at(p, end)) == 0) {
				dbuf_add(sb, p, 1);
				p++;
				continue;
			}
			/* the group's tokens, as Dify's finditer finds them */
			dbuf_addstr(sb, "[");
			any = 0;
			for (q = p, qe = p + n; (q = find(q, qe, tool_open,
			    sizeof(tool_open) - 1)) != NULL;) {
				size_t m = lazy_tool_at(q, qe, ps, pl);

				if (m == 0)
					break;
				if ((rc = render_tool(r, ps, pl, sb, &any,
				    ", ")) != 0)
					return rc;
				q += m;
			}
			if (any)
				dbuf_addstr(sb, "]");
			else	/* nothing enabled: the group goes */
				sb->len--;
		} else {
			if ((n = lazy_tool_at(p, end, ps, pl)) == 0) {
				dbuf_add(sb, p, 1);
				p++;
				continue;
			}
			any = 0;
			if ((rc = render_tool(r, ps, pl, sb, &any, NULL)) != 0)
				return rc;
		}
		p += n;
	}
	dbuf_add(sb, p, (size_t)(end - p));
	return 0;
}

int
skill_compile(const char *text, size_t len, const struct skill_resolver *r,
    size_t max, char **out, size_t *outlen)
{
	struct dbuf	 a = { 0 }, b = { 0 };
	int		 rc;

	*out = NULL;
	if (find(text, text + len, sect, SECT_LEN) == NULL) {
		/* nothing to compile: the common case, one copy */
		dbuf_add(&b, text, len);
		goto done;
	}
	if ((rc = pass_run(PASS_FILE, text, len, r, &a)) != 0)
		goto fail;
	if (a.len > max)
		goto limit;
	if ((rc = pass_run(PASS_GROUP, a.p ? a.p : "", a.len, r, &b)) != 0)
		goto fail;
	dbuf_free(&a);
	if (b.len > max)
		goto limit;
	a = b;
	memset(&b, 0, sizeof(b));
	if ((rc = pass_run(PASS_TOOL, a.p ? a.p : "", a.len, r, &b)) != 0)
		goto fail;
	dbuf_free(&a);
done:
	if (b.len > max)
		goto limit;
	if (b.err) {
		rc = ENGINE_ENOMEM;
		goto fail;
	}
	if (outlen != NULL)
		*outlen = b.len;
	dbuf_addstr(&b, "");
	if ((*out = dbuf_take(&b, NULL)) == NULL)
		return ENGINE_ENOMEM;
	return 0;
limit:
	rc = ENGINE_ELIMIT;
fail:
	dbuf_free(&a);
	dbuf_free(&b);
	return rc;
}

int
skill_refs(const char *text, size_t len, json_t *tools, json_t *files)
{
	const char	*p = text, *end = text + len, *ps[4];
	size_t		 pl[4], n;
	json_t		*v;

	while ((p = find(p, end, sect, SECT_LEN)) != NULL) {
		v = NULL;
		if (tools != NULL && (n = token_at(p, end, tool_open, 3, ps,
		    pl)) != 0)
			v = json_pack("{s:s%,s:s%,s:s%}", "provider", ps[0],
			    pl[0], "tool_name", ps[1], pl[1], "uuid", ps[2],
			    pl[2]);
		else if (files != NULL && (n = token_at(p, end, file_open, 2,
		    ps, pl)) != 0)
			v = json_pack("{s:s%,s:s%}", "source", ps[0], pl[0],
			    "asset_id", ps[1], pl[1]);
		else {
			p += SECT_LEN;
			continue;
		}
		if (v == NULL || json_array_append_new(json_object_get(v,
		    "uuid") != NULL ? tools : files, v) != 0)
			return ENGINE_ENOMEM;
		p += n;
	}
	return 0;
}

/* Splits path s at "/" into at most max parts (pointers into s, with
 * lengths; empty parts skipped); the number of parts. */
static size_t
split_path(const char *s, const char **ps, size_t *pl, size_t max)
{
	const char	*slash;
	size_t		 n = 0;

	while (*s != '\0' && n < max) {
		while (*s == '/')
			s++;
		if (*s == '\0')
			break;
		slash = strchr(s, '/');
		ps[n] = s;
		pl[n] = slash ? (size_t)(slash - s) : strlen(s);
		n++;
		if (slash == NULL)
			break;
		s = slash + 1;
	}
	return n;
}

char *
skill_relpath(const char *from, const char *to)
{
	struct dbuf	 sb = { 0 };
	const char	*fs[SKILL_MAX_DEPTH], *ts[SKILL_MAX_DEPTH];
	size_t		 fl[SKILL_MAX_DEPTH], tl[SKILL_MAX_DEPTH];
	size_t		 nf, nt, k, up, i;

	nf = split_path(from, fs, fl, SKILL_MAX_DEPTH);
	nt = split_path(to, ts, tl, SKILL_MAX_DEPTH);
	if (nf > 0)
		nf--;		/* from's folder */
	/* the nearest folder both are in (to itself when it holds from) */
	for (k = 0; k < nf && k < nt && fl[k] == tl[k] && memcmp(fs[k], ts[k],
	    fl[k]) == 0; k++)
		;
	up = nf - k;
	if (up == 0)
		dbuf_addstr(&sb, "./");
	for (i = 0; i < up; i++)
		dbuf_addstr(&sb, i + 1 < up || k < nt ? "../" : "..");
	for (i = k; i < nt; i++) {
		dbuf_add(&sb, ts[i], tl[i]);
		if (i + 1 < nt)
			dbuf_addstr(&sb, "/");
	}
	dbuf_addstr(&sb, "");
	return dbuf_take(&sb, NULL);
}

void
skill_tool_name(const char *provider, const char *tool, char *buf,
    size_t size)
{
	size_t j;

	if (provider != NULL)
		snprintf(buf, size, "%.30s_%.30s", provider, tool);
	else
		snprintf(buf, size, "%.60s", tool);
	for (j = 0; buf[j] != '\0'; j++)
		if (!(buf[j] == '_' || buf[j] == '-' ||
		    (buf[j] >= 'a' && buf[j] <= 'z') ||
		    (buf[j] >= 'A' && buf[j] <= 'Z') ||
		    (buf[j] >= '0' && buf[j] <= '9')))
			buf[j] = '_';
}

char *
skill_tool_text(const char *name)
{
	size_t	 n = strlen(name) + 32;
	char	*s = malloc(n);

	if (s != NULL)
		snprintf(s, n, "[Tool: %s]", name);
	return s;
}

/* ====== The draft's skill references (Dify's SkillService) ====== */

/* skill files one node's prompts reach, at most */
#define SKILL_MAX_FILES	64

/*
 * Adds {type, provider, tool_name, enabled} to deps unless it is there.
 * 0, or -1 when out of memory.
 */
static int
dep_add(json_t *deps, const char *type, const char *provider,
    const char *tool)
{
	json_t	*d;
	size_t	 i;

	json_array_foreach(deps, i, d)
		if (strcmp(json_string_value(json_object_get(d, "provider")),
		    provider) == 0 && strcmp(json_string_value(
		    json_object_get(d, "tool_name")), tool) == 0)
			return 0;
	return json_array_append_new(deps, json_pack("{s:s,s:s,s:s,s:b}",
	    "type", type ? type : "builtin", "provider", provider, "tool_name",
	    tool, "enabled", 1));
}

/*
 * The tools text references: with meta (a prompt's metadata.tools) only
 * tokens it describes, as Dify's _parse_metadata; without (a skill file,
 * which flowcgi stores without metadata) every token. Skill files the
 * text references (.md assets) are followed, each once. 0, or
 * ENGINE_ENOMEM.
 */
static int
deps_of(struct engine *e, const char *app_id, const char *text,
    const json_t *meta, json_t *deps, json_t *seen)
{
	json_t		*tools = json_array(), *files = json_array();
	json_t		*t, *m;
	json_t		*node;
	char		 err[ENGINE_ERRMAX], *data;
	const char	*id, *name;
	size_t		 i, len;
	int		 rc = ENGINE_ENOMEM, r;

	if (tools == NULL || files == NULL ||
	    skill_refs(text, strlen(text), tools, files) != 0)
		goto out;
	json_array_foreach(tools, i, t) {
		m = json_object_get(meta, json_string_value(json_object_get(t,
		    "uuid")));
		if (meta != NULL && m == NULL)
			continue;
		if (dep_add(deps, json_string_value(json_object_get(m,
		    "type")), json_string_value(json_object_get(t,
		    "provider")), json_string_value(json_object_get(t,
		    "tool_name"))) != 0)
			goto out;
	}
	json_array_foreach(files, i, t) {
		id = json_string_value(json_object_get(t, "asset_id"));
		if (json_object_get(seen, id) != NULL ||
		    json_object_size(seen) >= SKILL_MAX_FILES)
			continue;
		if (json_object_set_new(seen, id, json_true()) != 0)
			goto out;
		node = NULL;
		data = NULL;
		r = engine_asset_read(e, app_id, id, err, &data, &len, &node);
		if (r == 0 && (name = json_string_value(json_object_get(node,
		    "name"))) != NULL && strlen(name) > 3 &&
		    strcmp(name + strlen(name) - 3, ".md") == 0 &&
		    strlen(data) == len)
			r = deps_of(e, app_id, data, NULL, deps, seen);
		free(data);
		json_decref(node);
		if (r == ENGINE_ENOMEM)
			goto out;
	}
	rc = 0;
out:
	json_decref(tools);
	json_decref(files);
	return rc;
}

/*
 * {node_id, tool_dependencies} of llm node n into *out, NULL without
 * skills. 0 or ENGINE_ENOMEM.
 */
static int
node_skills(struct engine *e, const char *app_id, const json_t *n,
    json_t **out)
{
	const json_t	*data = json_object_get(n, "data"), *m;
	json_t		*deps = NULL, *seen = NULL;
	size_t		 i;
	int		 any = 0, rc = ENGINE_ENOMEM;

	*out = NULL;
	json_array_foreach(json_object_get(data, "prompt_template"), i, m)
		any |= json_is_true(json_object_get(m, "skill"));
	if (!any)
		return 0;
	if ((deps = json_array()) == NULL || (seen = json_object()) == NULL)
		goto out;
	json_array_foreach(json_object_get(data, "prompt_template"), i, m) {
		const json_t *meta = json_object_get(json_object_get(m,
		    "metadata"), "tools");

		if (json_is_true(json_object_get(m, "skill")) &&
		    json_is_string(json_object_get(m, "text")) &&
		    deps_of(e, app_id, json_string_value(json_object_get(m,
		    "text")), json_is_object(meta) ? meta : json_null(),
		    deps, seen) != 0)
			goto out;
	}
	if ((*out = json_pack("{s:O,s:O}", "node_id", json_object_get(n,
	    "id"), "tool_dependencies", deps)) != NULL)
		rc = 0;
out:
	json_decref(seen);
	json_decref(deps);
	return rc;
}

int
engine_app_skills(struct engine *e, const char *app_id, const char *node_id,
    char *err, json_t **out)
{
	json_t		*app = NULL, *wf, *nodes, *n, *list = NULL, *one;
	const char	*type, *id;
	size_t		 i;
	int		 rc;

	*out = NULL;
	if ((rc = engine_app_get_full(e, app_id, &app)) != 0)
		return rc;
	wf = json_object_get(json_object_get(app, "dsl"), "workflow");
	nodes = json_object_get(json_object_get(wf, "graph"), "nodes");
	if (!json_is_array(nodes)) {
		engine_invalid(err, "the app has no workflow draft");
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	if ((list = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_array_foreach(nodes, i, n) {
		type = json_string_value(json_object_get(json_object_get(n,
		    "data"), "type"));
		id = json_string_value(json_object_get(n, "id"));
		if (type == NULL || id == NULL || strcmp(type, "llm") != 0 ||
		    (node_id != NULL && strcmp(id, node_id) != 0))
			continue;
		if ((rc = node_skills(e, app_id, n, &one)) != 0)
			goto out;
		if (one != NULL && json_array_append_new(list, one) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	if (node_id != NULL)	/* Dify's NodeSkillInfo.empty when none */
		*out = json_array_size(list) > 0 ? json_incref(json_array_get(
		    list, 0)) : json_pack("{s:s,s:[]}", "node_id", node_id,
		    "tool_dependencies");
	else
		*out = json_pack("{s:O}", "nodes", list);
	rc = *out != NULL ? 0 : ENGINE_ENOMEM;
out:
	json_decref(list);
	json_decref(app);
	return rc;
}
