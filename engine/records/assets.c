/*
 * assets.c — the app file system: a tree of folders and files per app with
 * contents in content-addressed blobs.
 *
 * Records (assets database): key "<app id>/<node id>", value the node JSON
 * {id, node_type, name, parent_id, order, extension, size, checksum,
 * created_at, updated_at[, front_matter]}. Keys carry node ids rather than
 * paths (as in Dify's adjacency list), so a rename or a move rewrites one
 * record; paths are computed from the parents. Every change loads the app's
 * nodes (bounded by assets.max_files), checks names and limits, and writes
 * in one transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "engine/records/records.h"

#define KEY_MAX 80	/* 36 + 1 + 36, and room */

/* ====== Loading an app's nodes ====== */

struct tree {
	json_t	*nodes;		/* id -> node */
	int64_t	 bytes;		/* sum of file sizes */
};

static void
tree_release(struct tree *tr)
{
	json_decref(tr->nodes);
	tr->nodes = NULL;
}

static int
app_key(char *buf, const char *app_id, const char *node_id)
{
	return snprintf(buf, KEY_MAX, "%s/%s", app_id, node_id);
}

/*
 * Checks that app_id exists and has a file system, then loads its nodes.
 */
static int
tree_load(struct store_txn *t, const char *app_id, char *err,
    struct tree *tr)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*app = NULL, *n;
	char			 prefix[KEY_MAX];
	const char		*mode, *id;
	size_t			 plen;
	int			 rc;

	tr->nodes = NULL;
	tr->bytes = 0;
	if (engine_uuid_check(app_id) != 0)
		return ENGINE_ENOTFOUND;
	if ((rc = store_get_json(t, STORE_DB_APPS, app_id, &app)) != 0)
		return rc;
	mode = json_string_value(json_object_get(app, "mode"));
	if (mode == NULL || (strcmp(mode, "workflow") != 0 &&
	    strcmp(mode, "advanced-chat") != 0)) {
		rc = engine_invalid(err, "apps of mode '%s' have no file "
		    "system; only workflow and advanced-chat apps do",
		    mode ? mode : "?");
		goto out;
	}
	if ((tr->nodes = json_object()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s/", app_id);
	if ((rc = store_cursor_open(t, STORE_DB_ASSETS, &c)) != 0)
		goto out;
	for (rc = store_cursor_seek(c, prefix, plen, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0)
			break;
		if ((n = json_loadb(kv.v, kv.vlen, 0, NULL)) == NULL) {
			rc = STORE_EINVAL;
			goto out;
		}
		if (strcmp(json_string_value(json_object_get(n, "node_type")),
		    "file") == 0)
			tr->bytes += json_integer_value(json_object_get(n,
			    "size"));
		/* a node missing from the tree would be lost to every
		 * view and check: out of memory fails the load */
		if ((id = json_string_value(json_object_get(n, "id"))) ==
		    NULL)
			json_decref(n);
		else if (json_object_set_new(tr->nodes, id, n) != 0) {
			rc = STORE_ENOMEM;
			goto out;
		}
	}
	if (rc == STORE_ENOTFOUND)
		rc = 0;
out:
	store_cursor_close(c);
	json_decref(app);
	if (rc != 0)
		tree_release(tr);
	return rc;
}

static int
node_save(struct store_txn *t, const char *app_id, json_t *node)
{
	char key[KEY_MAX];

	app_key(key, app_id, json_string_value(json_object_get(node, "id")));
	return store_put_json(t, STORE_DB_ASSETS, key, node, 0);
}

static const char *
node_str(const json_t *n, const char *k)
{
	return json_string_value(json_object_get(n, k));
}

static int
node_is_folder(const json_t *n)
{
	const char *t = node_str(n, "node_type");

	return t != NULL && strcmp(t, "folder") == 0;
}

/* ====== Names and paths ====== */

/* Bytes of a valid UTF-8 sequence at s, or 0 when it is not one. */
static size_t
utf8_seq(const unsigned char *s)
{
	size_t	n, i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xE0) == 0xC0) {
		n = 2;
		cp = s[0] & 0x1F;
	} else if ((s[0] & 0xF0) == 0xE0) {
		n = 3;
		cp = s[0] & 0x0F;
	} else if ((s[0] & 0xF8) == 0xF0) {
		n = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

/* Checks one file or folder name; err names the rule it breaks. */
static int
name_check(const struct conf *c, const char *name, char *err)
{
	const unsigned char	*p;
	size_t			 n;

	if (name == NULL || *name == '\0')
		return engine_invalid(err, "name is required");
	if (strlen(name) > (size_t)c->asset_max_name)
		return engine_invalid(err, "name is longer than %d bytes "
		    "(assets.max_name)", c->asset_max_name);
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return engine_invalid(err, "name must not be '.' or '..'");
	for (p = (const unsigned char *)name; *p != '\0'; p += n) {
		if (*p < 0x20 || *p == 0x7f)
			return engine_invalid(err, "name must not contain "
			    "control characters");
		if (*p == '/' || *p == '\\')
			return engine_invalid(err, "name must not contain "
			    "'/' or '\\'");
		if ((n = utf8_seq(p)) == 0)
			return engine_invalid(err, "name is not valid UTF-8");
	}
	return 0;
}

/*
 * The path "/a/b" of node id in tr, written into buf. Returns its length,
 * or -1 when the chain of parents is broken or longer than bufsz.
 */
static int
node_path(const struct tree *tr, const char *id, char *buf, size_t bufsz)
{
	const char	*names[256];
	json_t		*n;
	size_t		 depth = 0, len = 0, l;
	int		 i;

	while (id != NULL) {
		if ((n = json_object_get(tr->nodes, id)) == NULL ||
		    depth == sizeof(names) / sizeof(names[0]))
			return -1;
		names[depth++] = node_str(n, "name");
		id = node_str(n, "parent_id");
	}
	for (i = (int)depth - 1; i >= 0; i--) {
		l = strlen(names[i]);
		if (len + l + 2 > bufsz)
			return -1;
		buf[len++] = '/';
		memcpy(buf + len, names[i], l);
		len += l;
	}
	buf[len] = '\0';
	return (int)len;
}

/* The node of name under parent (NULL: root) in tr, if any. */
static json_t *
child_named(const struct tree *tr, const char *parent, const char *name)
{
	const char	*k, *p;
	json_t		*n;

	json_object_foreach(tr->nodes, k, n) {
		p = node_str(n, "parent_id");
		if (((p == NULL && parent == NULL) ||
		    (p != NULL && parent != NULL && strcmp(p, parent) == 0)) &&
		    strcmp(node_str(n, "name"), name) == 0)
			return n;
	}
	return NULL;
}

static int64_t
next_order(const struct tree *tr, const char *parent)
{
	const char	*k, *p;
	json_t		*n;
	int64_t		 max = -1, o;

	json_object_foreach(tr->nodes, k, n) {
		p = node_str(n, "parent_id");
		if ((p == NULL) != (parent == NULL) || (p != NULL &&
		    parent != NULL && strcmp(p, parent) != 0))
			continue;
		o = json_integer_value(json_object_get(n, "order"));
		if (o > max)
			max = o;
	}
	return max + 1;
}

/* Checks that parent is NULL or a folder of tr. */
static int
parent_check(const struct tree *tr, const char *parent, char *err)
{
	json_t *p;

	if (parent == NULL)
		return 0;
	if ((p = json_object_get(tr->nodes, parent)) == NULL)
		return engine_invalid(err, "parent_id '%s' is not a folder of "
		    "this app", parent);
	if (!node_is_folder(p))
		return engine_invalid(err, "parent_id '%s' is a file, not a "
		    "folder", parent);
	return 0;
}

/* Checks the full path a node of name would have under parent. */
static int
path_check(const struct conf *c, const struct tree *tr, const char *parent,
    const char *name, char *err)
{
	char	buf[4200];
	int	len = 0;

	if (parent != NULL && (len = node_path(tr, parent, buf,
	    sizeof(buf))) < 0)
		return engine_invalid(err, "folder chain is too deep");
	if ((size_t)len + 1 + strlen(name) > (size_t)c->asset_max_path)
		return engine_invalid(err, "path is longer than %d bytes "
		    "(assets.max_path)", c->asset_max_path);
	return 0;
}

/* ====== Skills: SKILL.md front matter ====== */

/*
 * Reads the YAML front matter ("---" lines around a mapping) at the top of
 * a SKILL.md into *out: {name, description} with whichever of the two it
 * has, or NULL when there is none or it is not valid YAML. Returns 0 or
 * ENGINE_ENOMEM.
 */
static int
skill_front_matter(const char *data, size_t len, json_t **out)
{
	yaml_parser_t	 parser;
	yaml_document_t	 doc;
	yaml_node_t	*root, *k, *v;
	yaml_node_pair_t *pp;
	json_t		*fm = NULL;
	const char	*start, *end;
	int		 have_doc = 0, rc = 0;

	*out = NULL;
	if (len < 4 || memcmp(data, "---", 3) != 0 ||
	    (data[3] != '\n' && data[3] != '\r'))
		return 0;
	start = data + 3;
	for (end = start; end != NULL && end < data + len; end++) {
		end = memchr(end, '\n', (size_t)(data + len - end));
		if (end == NULL || data + len - end < 4)
			return 0;
		if (memcmp(end + 1, "---", 3) == 0)
			break;
	}
	if (end == NULL || end >= data + len)
		return 0;
	if (!yaml_parser_initialize(&parser))
		return ENGINE_ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)start,
	    (size_t)(end - start));
	if (!yaml_parser_load(&parser, &doc))
		goto out;
	have_doc = 1;
	root = yaml_document_get_root_node(&doc);
	if (root == NULL || root->type != YAML_MAPPING_NODE)
		goto out;
	if ((fm = json_object()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (pp = root->data.mapping.pairs.start;
	     pp < root->data.mapping.pairs.top; pp++) {
		k = yaml_document_get_node(&doc, pp->key);
		v = yaml_document_get_node(&doc, pp->value);
		if (k->type != YAML_SCALAR_NODE || v->type != YAML_SCALAR_NODE)
			continue;
		if ((strcmp((char *)k->data.scalar.value, "name") == 0 ||
		    strcmp((char *)k->data.scalar.value, "description") ==
		    0) && json_object_set_new(fm, (char *)k->data.scalar.value,
		    json_stringn((char *)v->data.scalar.value,
		    v->data.scalar.length)) != 0) {
			json_decref(fm);
			fm = NULL;
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	*out = fm;
out:
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

/* ====== Views ====== */

static json_t *
node_view(const struct tree *tr, const json_t *n)
{
	static const char *const fields[] = {
		"id", "node_type", "name", "parent_id", "order", "extension",
		"size", "checksum", "created_at", "updated_at", NULL,
	};
	char	 path[4200];
	json_t	*v, *f;
	size_t	 i;

	if ((v = json_object()) == NULL)
		return NULL;
	/* a view that lost a field to out-of-memory is no view */
	for (i = 0; fields[i] != NULL; i++)
		if ((f = json_object_get(n, fields[i])) != NULL &&
		    json_object_set(v, fields[i], f) != 0)
			goto fail;
	if (node_path(tr, node_str(n, "id"), path, sizeof(path)) >= 0 &&
	    json_object_set_new(v, "path", json_string(path)) != 0)
		goto fail;
	return v;
fail:
	json_decref(v);
	return NULL;
}

static int
order_cmp(const void *a, const void *b)
{
	const json_t	*x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t	 ox = json_integer_value(json_object_get(x, "order"));
	json_int_t	 oy = json_integer_value(json_object_get(y, "order"));

	if (ox != oy)
		return ox < oy ? -1 : 1;
	return strcmp(node_str(x, "name"), node_str(y, "name"));
}

/*
 * The children views of parent (NULL: root), recursively, in order, into
 * *out (a new reference). Returns 0, or ENGINE_ENOMEM with *out NULL:
 * never a tree with parts missing.
 */
static int
children_view(const struct tree *tr, const char *parent, int depth,
    json_t **out)
{
	const char	*k, *p;
	json_t		*n, *arr, *v = NULL, **kids = NULL, *fm, *sub;
	size_t		 nk = 0, cap = 0, i;
	int		 rc = ENGINE_ENOMEM;

	*out = NULL;
	if ((arr = json_array()) == NULL)
		return ENGINE_ENOMEM;
	if (depth > 256)	/* deeper than a path can be: a loop */
		goto done;
	json_object_foreach(tr->nodes, k, n) {
		p = node_str(n, "parent_id");
		if ((p == NULL) != (parent == NULL) || (p != NULL &&
		    parent != NULL && strcmp(p, parent) != 0))
			continue;
		if (nk == cap) {
			json_t **nkids;

			cap = cap ? cap * 2 : 16;
			if ((nkids = realloc(kids, cap * sizeof(*kids))) ==
			    NULL)
				goto out;
			kids = nkids;
		}
		kids[nk++] = n;
	}
	if (nk > 1)
		qsort(kids, nk, sizeof(*kids), order_cmp);
	for (i = 0; i < nk; i++) {
		if ((v = node_view(tr, kids[i])) == NULL)
			goto out;
		if (node_is_folder(kids[i])) {
			if (children_view(tr, node_str(kids[i], "id"),
			    depth + 1, &sub) != 0 ||
			    json_object_set_new(v, "children", sub) != 0)
				goto out;
			n = child_named(tr, node_str(kids[i], "id"),
			    "SKILL.md");
			if (n != NULL && !node_is_folder(n)) {
				fm = json_object_get(n, "front_matter");
				if (json_object_set_new(v, "skill",
				    json_is_object(fm) ? json_deep_copy(fm) :
				    json_object()) != 0)
					goto out;
			}
		} else if (json_object_set_new(v, "children",
		    json_array()) != 0)
			goto out;
		if (json_array_append_new(arr, v) != 0) {
			v = NULL;	/* json_array_append_new took it */
			goto out;
		}
		v = NULL;
	}
done:
	*out = arr;
	arr = NULL;
	rc = 0;
out:
	json_decref(v);
	json_decref(arr);
	free(kids);
	return rc;
}

int
engine_asset_tree(struct engine *e, const char *app_id, char *err,
    json_t **out)
{
	struct store_txn	*t = NULL;
	struct tree		 tr;
	json_t			*kids;
	int			 rc;

	*out = NULL;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = tree_load(t, app_id, err, &tr)) != 0)
		goto out;
	rc = children_view(&tr, NULL, 0, &kids);
	tree_release(&tr);
	if (rc == 0 && (*out = json_pack("{s:o}", "children", kids)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	store_read_end(t);
	return engine_from_store(rc);
}

/* ====== Changes ====== */

/* One change, run inside store_write; a retry starts from scratch. */
struct asset_op {
	struct engine	*e;
	const char	*app_id;
	const char	*node_id;
	const char	*parent_id;
	const char	*name;
	const void	*data;
	size_t		 len;
	int		 replace;
	int		 kind;
	char		*err;
	json_t		*view;	/* out */
	const char	*after_id;	/* OP_REORDER: NULL = first */
	int64_t		 size;		/* OP_RESERVE: bytes to come */
};

enum {
	OP_MKDIR, OP_CREATE, OP_WRITE, OP_RENAME, OP_MOVE, OP_DELETE,
	OP_REORDER, OP_RESERVE,
};

static const char *
name_extension(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot != NULL && dot != name ? dot + 1 : "";
}

/* Sets the file contents of node n (new or replaced), with limits. */
static int
file_set_data(struct store_txn *t, const struct conf *c, struct asset_op *op,
    struct tree *tr, json_t *n)
{
	const char		*old = node_str(n, "checksum");
	char			 hex[STORE_HASH_HEX];
	int64_t			 oldsize = json_integer_value(
				    json_object_get(n, "size"));
	json_t			*fm;
	int			 rc;

	if ((int64_t)op->len > c->asset_max_file) {
		engine_invalid(op->err, "file of %zu bytes is larger than "
		    "%lld bytes (assets.max_file_size)", op->len,
		    (long long)c->asset_max_file);
		return ENGINE_ELIMIT;
	}
	if (tr->bytes - oldsize + (int64_t)op->len > c->asset_max_app_bytes) {
		engine_invalid(op->err, "the app's files would take %lld "
		    "bytes, more than %lld (assets.max_app_size)",
		    (long long)(tr->bytes - oldsize + (int64_t)op->len),
		    (long long)c->asset_max_app_bytes);
		return ENGINE_ELIMIT;
	}
	if ((rc = store_blob_ref(t, op->data, op->len, hex)) != 0)
		return rc;
	if (old != NULL && *old != '\0' &&
	    (rc = store_blob_unref(t, old)) != 0)
		return rc;
	if (json_object_set_new(n, "checksum", json_string(hex)) != 0 ||
	    json_object_set_new(n, "size", json_integer((json_int_t)op->len))
	    != 0 || json_object_set_new(n, "updated_at",
	    json_integer(engine_now())) != 0)
		return ENGINE_ENOMEM;
	json_object_del(n, "front_matter");
	if (strcmp(node_str(n, "name"), "SKILL.md") == 0) {
		if ((rc = skill_front_matter(op->data, op->len, &fm)) != 0)
			return rc;
		if (fm != NULL &&
		    json_object_set_new(n, "front_matter", fm) != 0)
			return ENGINE_ENOMEM;
	}
	tr->bytes += (int64_t)op->len - oldsize;
	return 0;
}

static json_t *
node_new(const char *type, const char *name, const char *parent,
    int64_t order)
{
	char	id[37];
	int64_t	now = engine_now();

	engine_uuid(id);
	return json_pack("{s:s,s:s,s:s,s:o,s:I,s:s,s:i,s:s,s:I,s:I}", "id", id,
	    "node_type", type, "name", name, "parent_id",
	    parent ? json_string(parent) : json_null(), "order",
	    (json_int_t)order, "extension",
	    strcmp(type, "file") == 0 ? name_extension(name) : "", "size", 0,
	    "checksum", "", "created_at", (json_int_t)now, "updated_at",
	    (json_int_t)now);
}

/*
 * A name for a new node under parent that no sibling has, as Dify's
 * ensure_unique_name makes it: name itself, else "<stem> 1<ext>",
 * "<stem> 2<ext>", ... where a file's extension is what Python's
 * os.path.splitext finds (the last dot not leading the name) and a folder
 * has none. Into buf (bufsz bytes). Returns 0, ENGINE_EINVAL when name is
 * refused or no suffix fits assets.max_name, or ENGINE_EEXIST.
 */
static int
unique_name(const struct conf *c, const struct tree *tr, const char *parent,
    const char *name, int is_file, char *buf, size_t bufsz, char *err)
{
	const char	*dot = NULL, *p;
	size_t		 stem;
	int		 i, rc;

	if ((rc = name_check(c, name, err)) != 0)
		return rc;
	if (child_named(tr, parent, name) == NULL) {
		snprintf(buf, bufsz, "%s", name);
		return 0;
	}
	if (is_file && (dot = strrchr(name, '.')) != NULL) {
		for (p = name; p < dot && *p == '.'; p++)
			;
		if (p == dot)
			dot = NULL;	/* ".profile": no extension */
	}
	stem = dot != NULL ? (size_t)(dot - name) : strlen(name);
	for (i = 1; i <= 10000; i++) {
		if ((size_t)snprintf(buf, bufsz, "%.*s %d%s", (int)stem, name,
		    i, dot != NULL ? dot : "") >= bufsz ||
		    strlen(buf) > (size_t)c->asset_max_name)
			return engine_invalid(err, "'%s' is taken and a "
			    "numbered name would be longer than %d bytes "
			    "(assets.max_name)", name, c->asset_max_name);
		if (child_named(tr, parent, buf) == NULL)
			return 0;
	}
	engine_invalid(err, "'%s' and its numbered names are taken", name);
	return ENGINE_EEXIST;
}

/* 1 when node n's parent is parent (NULL: the root). */
static int
parent_is(const json_t *n, const char *parent)
{
	const char *p = node_str(n, "parent_id");

	return p == NULL ? parent == NULL : parent != NULL &&
	    strcmp(p, parent) == 0;
}

/*
 * Moves n right after sibling a (NULL: first) and numbers the siblings 0,
 * 1, ... in their new order, saving those whose number changed; n itself
 * is saved by the caller.
 */
static int
reorder_siblings(struct store_txn *t, const char *app_id, struct tree *tr,
    json_t *n, const json_t *a)
{
	const char	*k, *parent = node_str(n, "parent_id");
	json_t		*s, **sib = NULL;
	size_t		 ns = 0, i, at = 0;
	int64_t		 order = 0;
	int		 rc = 0;

	if ((sib = calloc(json_object_size(tr->nodes) + 1,
	    sizeof(*sib))) == NULL)
		return ENGINE_ENOMEM;
	json_object_foreach(tr->nodes, k, s)
		if (s != n && parent_is(s, parent))
			sib[ns++] = s;
	if (ns > 1)
		qsort(sib, ns, sizeof(*sib), order_cmp);
	if (a != NULL)
		for (i = 0; i < ns; i++)
			if (sib[i] == a)
				at = i + 1;
	memmove(sib + at + 1, sib + at, (ns - at) * sizeof(*sib));
	sib[at] = n;
	ns++;
	for (i = 0; i < ns; i++, order++) {
		if (json_integer_value(json_object_get(sib[i], "order")) ==
		    order)
			continue;
		if (json_object_set_new(sib[i], "order", json_integer(order))
		    != 0) {
			rc = ENGINE_ENOMEM;
			break;
		}
		if (sib[i] != n && (rc = node_save(t, app_id, sib[i])) != 0)
			break;
	}
	free(sib);
	return rc;
}

/* Deletes n and, for a folder, everything below it. */
static int
delete_subtree(struct store_txn *t, const char *app_id, struct tree *tr,
    json_t *n, int depth)
{
	const char	*id = node_str(n, "id"), *k, *sum, *p;
	char		 key[KEY_MAX];
	json_t		*c;
	void		*tmp;
	int		 rc;

	if (depth > 256)
		return STORE_EINVAL;
	if (node_is_folder(n)) {
		json_object_foreach_safe(tr->nodes, tmp, k, c) {
			p = node_str(c, "parent_id");
			if (p != NULL && strcmp(p, id) == 0 &&
			    (rc = delete_subtree(t, app_id, tr, c,
			    depth + 1)) != 0)
				return rc;
		}
	} else if ((sum = node_str(n, "checksum")) != NULL && *sum != '\0' &&
	    (rc = store_blob_unref(t, sum)) != 0 && rc != STORE_ENOTFOUND)
		return rc;
	app_key(key, app_id, id);
	if ((rc = store_del(t, STORE_DB_ASSETS, key, strlen(key))) != 0)
		return rc;
	return 0;
}

/*
 * Checks that nnodes more nodes, files of bytes in all, fit the app: the
 * node count (assets.max_files) and its files (assets.max_app_size).
 */
static int
reserve_check(const struct conf *c, const struct tree *tr, size_t nnodes,
    int64_t bytes, char *err)
{
	if (json_object_size(tr->nodes) + nnodes > (size_t)c->asset_max_files) {
		engine_invalid(err, "the app would have more than %d files and "
		    "folders (assets.max_files)", c->asset_max_files);
		return ENGINE_ELIMIT;
	}
	if (bytes > c->asset_max_app_bytes - tr->bytes) {
		engine_invalid(err, "the app's files would take more than %lld "
		    "bytes (assets.max_app_size)",
		    (long long)c->asset_max_app_bytes);
		return ENGINE_ELIMIT;
	}
	return 0;
}

static int
asset_op_fn(struct store_txn *t, void *arg)
{
	struct asset_op		*op = arg;
	const struct conf	*c = op->e->conf;
	struct tree		 tr = { NULL, 0 };
	json_t			*n = NULL, *other;
	const char		*p;
	char			 uname[1100];
	int			 rc;

	json_decref(op->view);
	op->view = NULL;
	if ((rc = tree_load(t, op->app_id, op->err, &tr)) != 0)
		return rc;
	if (op->node_id != NULL &&
	    (n = json_object_get(tr.nodes, op->node_id)) == NULL) {
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	switch (op->kind) {
	case OP_MKDIR:
	case OP_CREATE:
		if ((rc = name_check(c, op->name, op->err)) != 0 ||
		    (rc = parent_check(&tr, op->parent_id, op->err)) != 0 ||
		    (rc = path_check(c, &tr, op->parent_id, op->name,
		    op->err)) != 0)
			goto out;
		other = child_named(&tr, op->parent_id, op->name);
		if (other != NULL && op->kind == OP_CREATE && op->replace &&
		    !node_is_folder(other)) {
			n = other;
			if ((rc = file_set_data(t, c, op, &tr, n)) != 0)
				goto out;
			break;
		}
		if (other != NULL) {
			rc = ENGINE_EEXIST;
			engine_invalid(op->err, "'%s' already exists in this "
			    "folder", op->name);
			goto out;
		}
		if ((int)json_object_size(tr.nodes) >= c->asset_max_files) {
			rc = ENGINE_ELIMIT;
			engine_invalid(op->err, "the app has %d files and "
			    "folders already (assets.max_files)",
			    c->asset_max_files);
			goto out;
		}
		n = node_new(op->kind == OP_MKDIR ? "folder" : "file",
		    op->name, op->parent_id, next_order(&tr, op->parent_id));
		if (json_object_set_new(tr.nodes, node_str(n, "id"), n) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if (op->kind == OP_CREATE &&
		    (rc = file_set_data(t, c, op, &tr, n)) != 0)
			goto out;
		break;
	case OP_WRITE:
		if (node_is_folder(n)) {
			rc = engine_invalid(op->err, "'%s' is a folder",
			    node_str(n, "name"));
			goto out;
		}
		if ((rc = file_set_data(t, c, op, &tr, n)) != 0)
			goto out;
		break;
	case OP_RENAME:
		if ((rc = name_check(c, op->name, op->err)) != 0)
			goto out;
		p = node_str(n, "parent_id");
		other = child_named(&tr, p, op->name);
		if (other != NULL && other != n) {
			rc = ENGINE_EEXIST;
			engine_invalid(op->err, "'%s' already exists in this "
			    "folder", op->name);
			goto out;
		}
		if ((rc = path_check(c, &tr, p, op->name, op->err)) != 0)
			goto out;
		rc = json_object_set_new(n, "name", json_string(op->name));
		if (!node_is_folder(n)) {
			rc |= json_object_set_new(n, "extension",
			    json_string(name_extension(op->name)));
			if (strcmp(op->name, "SKILL.md") != 0)
				json_object_del(n, "front_matter");
		}
		rc |= json_object_set_new(n, "updated_at",
		    json_integer(engine_now()));
		if (rc != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		break;
	case OP_MOVE:
		if ((rc = parent_check(&tr, op->parent_id, op->err)) != 0)
			goto out;
		/* A folder cannot move into itself or below itself. */
		for (p = op->parent_id; p != NULL;
		     p = node_str(json_object_get(tr.nodes, p), "parent_id"))
			if (strcmp(p, op->node_id) == 0) {
				rc = engine_invalid(op->err, "a folder cannot "
				    "move into itself");
				goto out;
			}
		other = child_named(&tr, op->parent_id, node_str(n, "name"));
		if (other != NULL && other != n) {
			rc = ENGINE_EEXIST;
			engine_invalid(op->err, "'%s' already exists in the "
			    "target folder", node_str(n, "name"));
			goto out;
		}
		if ((rc = path_check(c, &tr, op->parent_id,
		    node_str(n, "name"), op->err)) != 0)
			goto out;
		if (json_object_set_new(n, "parent_id", op->parent_id ?
		    json_string(op->parent_id) : json_null()) != 0 ||
		    json_object_set_new(n, "order", json_integer(next_order(&tr,
		    op->parent_id))) != 0 ||
		    json_object_set_new(n, "updated_at",
		    json_integer(engine_now())) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		break;
	case OP_DELETE:
		rc = delete_subtree(t, op->app_id, &tr, n, 0);
		goto out;
	case OP_REORDER:
		other = NULL;
		if (op->after_id != NULL &&
		    ((other = json_object_get(tr.nodes, op->after_id)) ==
		    NULL || !parent_is(other, node_str(n, "parent_id")))) {
			rc = ENGINE_ENOTFOUND;
			engine_invalid(op->err, "after_node_id '%s' is not a "
			    "node of the same folder", op->after_id);
			goto out;
		}
		if (other == n) {
			rc = engine_invalid(op->err, "a node cannot be placed "
			    "after itself");
			goto out;
		}
		if ((rc = reorder_siblings(t, op->app_id, &tr, n, other)) != 0)
			goto out;
		break;
	case OP_RESERVE:
		if ((rc = parent_check(&tr, op->parent_id, op->err)) != 0 ||
		    (rc = unique_name(c, &tr, op->parent_id, op->name, 1,
		    uname, sizeof(uname), op->err)) != 0 ||
		    (rc = path_check(c, &tr, op->parent_id, uname,
		    op->err)) != 0 ||
		    (rc = reserve_check(c, &tr, 1, op->size, op->err)) != 0)
			goto out;
		n = node_new("file", uname, op->parent_id, next_order(&tr,
		    op->parent_id));
		if (json_object_set_new(tr.nodes, node_str(n, "id"), n) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		break;
	}
	if ((rc = node_save(t, op->app_id, n)) != 0)
		goto out;
	if ((op->view = node_view(&tr, n)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	tree_release(&tr);
	return rc;
}

static int
asset_op_run(struct asset_op *op, json_t **out)
{
	int rc;

	rc = engine_from_store(store_write(op->e->store, asset_op_fn, op));
	if (rc != 0) {
		json_decref(op->view);
		return rc;
	}
	if (out != NULL)
		*out = op->view;
	else
		json_decref(op->view);
	return 0;
}

int
engine_asset_mkdir(struct engine *e, const char *app_id,
    const char *parent_id, const char *name, char *err, json_t **out)
{
	struct asset_op op = { .e = e, .app_id = app_id, .parent_id = parent_id,
	    .name = name, .kind = OP_MKDIR, .err = err };

	return asset_op_run(&op, out);
}

int
engine_asset_create(struct engine *e, const char *app_id,
    const char *parent_id, const char *name, const void *data, size_t len,
    int replace, char *err, json_t **out)
{
	struct asset_op op = { .e = e, .app_id = app_id, .parent_id = parent_id,
	    .name = name, .data = data, .len = len, .replace = replace,
	    .kind = OP_CREATE, .err = err };

	return asset_op_run(&op, out);
}

int
engine_asset_write(struct engine *e, const char *app_id, const char *node_id,
    const void *data, size_t len, char *err, json_t **out)
{
	struct asset_op op = { .e = e, .app_id = app_id, .node_id = node_id,
	    .data = data, .len = len, .kind = OP_WRITE, .err = err };

	return asset_op_run(&op, out);
}

int
engine_asset_rename(struct engine *e, const char *app_id,
    const char *node_id, const char *name, char *err, json_t **out)
{
	struct asset_op op = { .e = e, .app_id = app_id, .node_id = node_id,
	    .name = name, .kind = OP_RENAME, .err = err };

	return asset_op_run(&op, out);
}

int
engine_asset_move(struct engine *e, const char *app_id, const char *node_id,
    const char *parent_id, char *err, json_t **out)
{
	struct asset_op op = { .e = e, .app_id = app_id, .node_id = node_id,
	    .parent_id = parent_id, .kind = OP_MOVE, .err = err };

	return asset_op_run(&op, out);
}

int
engine_asset_delete(struct engine *e, const char *app_id, const char *node_id,
    char *err)
{
	struct asset_op op = { .e = e, .app_id = app_id, .node_id = node_id,
	    .kind = OP_DELETE, .err = err };

	return asset_op_run(&op, NULL);
}

int
engine_asset_reorder(struct engine *e, const char *app_id,
    const char *node_id, const char *after_id, char *err, json_t **out)
{
	struct asset_op op = { .e = e, .app_id = app_id, .node_id = node_id,
	    .after_id = after_id, .kind = OP_REORDER, .err = err };

	return asset_op_run(&op, out);
}

int
engine_asset_reserve(struct engine *e, const char *app_id,
    const char *parent_id, const char *name, int64_t size, char *err,
    json_t **out)
{
	struct asset_op op = { .e = e, .app_id = app_id, .parent_id = parent_id,
	    .name = name, .size = size, .kind = OP_RESERVE, .err = err };

	if (size < 0)
		return engine_invalid(err, "size must not be negative");
	if (size > e->conf->asset_max_file) {
		engine_invalid(err, "file of %lld bytes is larger than %lld "
		    "bytes (assets.max_file_size)", (long long)size,
		    (long long)e->conf->asset_max_file);
		return ENGINE_ELIMIT;
	}
	return asset_op_run(&op, out);
}

/* ====== Batch upload: a tree made at once ====== */

struct batch_op {
	struct engine	*e;
	const char	*app_id;
	const char	*parent_id;
	const json_t	*children;
	char		*err;
	json_t		*made;	/* out: the tree as made */
};

/* "<where>/<name>" for messages, into buf. */
static const char *
batch_label(char *buf, size_t bufsz, const char *where, const char *name)
{
	snprintf(buf, bufsz, "%s%s%s", where, *where ? "/" : "", name);
	return buf;
}

/*
 * Checks the fields of every entry of children (below where) and counts
 * them into *nodes and their files' sizes into *bytes, before anything is
 * made: a batch is refused whole.
 */
static int
batch_scan(const struct conf *c, const json_t *children, const char *where,
    int depth, size_t *nodes, int64_t *bytes, char *err)
{
	const json_t	*ch, *size, *kids;
	const char	*name, *type;
	char		 label[1200];
	size_t		 i;
	int		 rc;

	if (!json_is_array(children))
		return engine_invalid(err, "'%.100s': children must be an "
		    "array", where);
	if (depth > 256)
		return engine_invalid(err, "'%.100s': folders nest too deep",
		    where);
	json_array_foreach(children, i, ch) {
		name = json_string_value(json_object_get(ch, "name"));
		type = json_string_value(json_object_get(ch, "node_type"));
		if (!json_is_object(ch) || name == NULL)
			return engine_invalid(err, "'%.100s': entry %zu needs "
			    "a name", where, i);
		batch_label(label, sizeof(label), where, name);
		if (type == NULL || (strcmp(type, "file") != 0 &&
		    strcmp(type, "folder") != 0))
			return engine_invalid(err, "'%.100s': node_type must "
			    "be file or folder", label);
		if (++*nodes > (size_t)c->asset_batch_max_files) {
			engine_invalid(err, "more than %d files and folders in "
			    "one batch (assets.batch_max_files)",
			    c->asset_batch_max_files);
			return ENGINE_ELIMIT;
		}
		size = json_object_get(ch, "size");
		if (size != NULL && !json_is_null(size) &&
		    (!json_is_integer(size) || json_integer_value(size) < 0))
			return engine_invalid(err, "'%.100s': size must be a "
			    "number of bytes", label);
		kids = json_object_get(ch, "children");
		if (strcmp(type, "file") == 0) {
			if (json_integer_value(size) > c->asset_max_file) {
				engine_invalid(err, "'%.100s': %lld bytes is "
				    "larger than %lld bytes "
				    "(assets.max_file_size)",
				    label, (long long)json_integer_value(size),
				    (long long)c->asset_max_file);
				return ENGINE_ELIMIT;
			}
			*bytes += json_integer_value(size);
			if (json_array_size(kids) > 0)
				return engine_invalid(err, "'%.100s': a file "
				    "has no children", label);
		} else if (kids != NULL && !json_is_null(kids) &&
		    (rc = batch_scan(c, kids, label, depth + 1, nodes, bytes,
		    err)) != 0)
			return rc;
	}
	return 0;
}

/* Makes the entries of children under parent, appending each to out. */
static int
batch_make(struct store_txn *t, struct batch_op *b, struct tree *tr,
    const char *parent, const json_t *children, const char *where,
    json_t *out)
{
	const struct conf	*c = b->e->conf;
	const json_t		*ch, *kids;
	const char		*name, *type;
	char			 uname[1100], label[1200], path[4200];
	char			 why[ENGINE_ERRMAX];
	json_t			*n, *entry;
	size_t			 i;
	int			 rc, file;

	json_array_foreach(children, i, ch) {
		name = json_string_value(json_object_get(ch, "name"));
		type = json_string_value(json_object_get(ch, "node_type"));
		file = strcmp(type, "file") == 0;
		batch_label(label, sizeof(label), where, name);
		if ((rc = unique_name(c, tr, parent, name, file, uname,
		    sizeof(uname), why)) != 0 ||
		    (rc = path_check(c, tr, parent, uname, why)) != 0) {
			snprintf(b->err, ENGINE_ERRMAX, "'%.60s': %.180s",
			    label, why);
			return rc;
		}
		n = node_new(type, uname, parent, next_order(tr, parent));
		if (n == NULL || json_object_set_new(tr->nodes, node_str(n,
		    "id"), n) != 0)
			return ENGINE_ENOMEM;
		if ((rc = node_save(t, b->app_id, n)) != 0)
			return rc;
		if (node_path(tr, node_str(n, "id"), path, sizeof(path)) < 0)
			path[0] = '\0';
		entry = json_pack("{s:s,s:s,s:s,s:I,s:s,s:[]}", "id",
		    node_str(n, "id"), "name", uname, "node_type", type, "size",
		    (json_int_t)(file ? json_integer_value(json_object_get(ch,
		    "size")) : 0), "path", path, "children");
		if (entry == NULL || json_array_append_new(out, entry) != 0)
			return ENGINE_ENOMEM;
		kids = json_object_get(ch, "children");
		if (!file && json_is_array(kids) &&
		    (rc = batch_make(t, b, tr, node_str(n, "id"), kids, label,
		    json_object_get(entry, "children"))) != 0)
			return rc;
	}
	return 0;
}

static int
batch_fn(struct store_txn *t, void *arg)
{
	struct batch_op		*b = arg;
	const struct conf	*c = b->e->conf;
	struct tree		 tr = { NULL, 0 };
	size_t			 nodes = 0;
	int64_t			 bytes = 0;
	int			 rc;

	json_decref(b->made);
	if ((b->made = json_array()) == NULL)
		return ENGINE_ENOMEM;
	if ((rc = tree_load(t, b->app_id, b->err, &tr)) != 0)
		return rc;
	if ((rc = parent_check(&tr, b->parent_id, b->err)) != 0 ||
	    (rc = batch_scan(c, b->children, "", 0, &nodes, &bytes,
	    b->err)) != 0 ||
	    (rc = reserve_check(c, &tr, nodes, bytes, b->err)) != 0)
		goto out;
	rc = batch_make(t, b, &tr, b->parent_id, b->children, "", b->made);
out:
	tree_release(&tr);
	return rc;
}

int
engine_asset_batch(struct engine *e, const char *app_id,
    const char *parent_id, const json_t *children, char *err, json_t **out)
{
	struct batch_op	b = { e, app_id, parent_id, children, err, NULL };
	int		rc;

	if (json_array_size(children) == 0)
		return engine_invalid(err, "children must be a non-empty "
		    "array");
	rc = engine_from_store(store_write(e->store, batch_fn, &b));
	if (rc != 0) {
		json_decref(b.made);
		return rc;
	}
	*out = b.made;
	return 0;
}

/* ====== Reading ====== */

/* File node_id of app_id's tree (loaded into tr) into *n, in t. */
static int
file_find(struct store_txn *t, const char *app_id, const char *node_id,
    char *err, struct tree *tr, json_t **n)
{
	int rc;

	if ((rc = tree_load(t, app_id, err, tr)) != 0)
		return rc;
	if ((*n = json_object_get(tr->nodes, node_id)) == NULL ||
	    node_is_folder(*n))
		return ENGINE_ENOTFOUND;
	return 0;
}

/* The bytes of a file whose checksum is sum (none: empty), NUL-ended. */
static int
asset_bytes(struct store_txn *t, const char *sum, char **data, size_t *len)
{
	if (sum != NULL && *sum != '\0')
		return store_blob_load(t, sum, data, len);
	*len = 0;
	return (*data = calloc(1, 1)) == NULL ? STORE_ENOMEM : 0;
}

int
engine_asset_read(struct engine *e, const char *app_id, const char *node_id,
    char *err, char **data, size_t *len, json_t **node)
{
	struct store_txn	*t = NULL;
	struct tree		 tr = { NULL, 0 };
	size_t			 blen = 0;
	char			*buf = NULL;
	json_t			*n;
	int			 rc;

	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = file_find(t, app_id, node_id, err, &tr, &n)) != 0)
		goto out;
	if ((rc = asset_bytes(t, node_str(n, "checksum"), &buf, &blen)) != 0)
		goto out;
	if (node != NULL && (*node = node_view(&tr, n)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	*data = buf;
	*len = blen;
	buf = NULL;
out:
	free(buf);
	tree_release(&tr);
	store_read_end(t);
	return engine_from_store(rc);
}

int
engine_asset_open(struct engine *e, const char *app_id, const char *node_id,
    char *err, json_t **node, char sum[65], uint64_t *size)
{
	struct store_txn	*t = NULL;
	struct tree		 tr = { NULL, 0 };
	const char		*s;
	json_t			*n;
	int			 rc;

	*node = NULL;
	sum[0] = '\0';
	*size = 0;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = file_find(t, app_id, node_id, err, &tr, &n)) != 0)
		goto out;
	if ((s = node_str(n, "checksum")) != NULL && *s != '\0') {
		if (strlen(s) != 64) {
			rc = STORE_EINVAL;
			goto out;
		}
		memcpy(sum, s, 65);
		if ((rc = store_blob_size(t, sum, size)) != 0)
			goto out;
	}
	if ((*node = node_view(&tr, n)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	tree_release(&tr);
	store_read_end(t);
	return engine_from_store(rc);
}

int
engine_asset_get(struct engine *e, const char *app_id, const char *node_id,
    char *err, json_t **out)
{
	struct store_txn	*t = NULL;
	struct tree		 tr = { NULL, 0 };
	json_t			*n;
	int			 rc;

	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = tree_load(t, app_id, err, &tr)) != 0)
		goto out;
	if ((n = json_object_get(tr.nodes, node_id)) == NULL)
		rc = ENGINE_ENOTFOUND;
	else if ((*out = node_view(&tr, n)) == NULL)
		rc = ENGINE_ENOMEM;
	tree_release(&tr);
out:
	store_read_end(t);
	return engine_from_store(rc);
}

/* ====== Whole-app operations for app.c ====== */

int
assets_delete_all(struct store_txn *t, const char *app_id)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*n;
	char			 prefix[KEY_MAX], **keys = NULL, **nk;
	const char		*sum;
	size_t			 plen, nkeys = 0, cap = 0, i;
	int			 rc;

	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s/", app_id);
	if ((rc = store_cursor_open(t, STORE_DB_ASSETS, &c)) != 0)
		return rc;
	for (rc = store_cursor_seek(c, prefix, plen, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0)
			break;
		if ((n = json_loadb(kv.v, kv.vlen, 0, NULL)) != NULL) {
			sum = node_str(n, "checksum");
			if (sum != NULL && *sum != '\0')
				store_blob_unref(t, sum);
			json_decref(n);
		}
		if (nkeys == cap) {
			cap = cap ? cap * 2 : 64;
			if ((nk = realloc(keys, cap * sizeof(*keys))) == NULL) {
				rc = STORE_ENOMEM;
				goto out;
			}
			keys = nk;
		}
		if ((keys[nkeys] = strndup(kv.k, kv.klen)) == NULL) {
			rc = STORE_ENOMEM;
			goto out;
		}
		nkeys++;
	}
	if (rc != STORE_ENOTFOUND)
		goto out;
	rc = 0;
	store_cursor_close(c);
	c = NULL;
	for (i = 0; i < nkeys && rc == 0; i++)
		rc = store_del(t, STORE_DB_ASSETS, keys[i], strlen(keys[i]));
out:
	store_cursor_close(c);
	for (i = 0; i < nkeys; i++)
		free(keys[i]);
	free(keys);
	return rc;
}

int
assets_copy_all(struct store_txn *t, const char *src, const char *dst)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*n, *all = NULL;
	char			 prefix[KEY_MAX];
	const char		*sum;
	size_t			 plen, i;
	int			 rc;

	/* Collect first: writing while a cursor walks the same database
	 * would move it. */
	if ((all = json_array()) == NULL)
		return STORE_ENOMEM;
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s/", src);
	if ((rc = store_cursor_open(t, STORE_DB_ASSETS, &c)) != 0)
		goto out;
	for (rc = store_cursor_seek(c, prefix, plen, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0)
			break;
		if ((n = json_loadb(kv.v, kv.vlen, 0, NULL)) == NULL) {
			rc = STORE_EINVAL;
			goto out;
		}
		if (json_array_append_new(all, n) != 0) {
			rc = STORE_ENOMEM;
			goto out;
		}
	}
	if (rc != STORE_ENOTFOUND && rc != 0)
		goto out;
	rc = 0;
	store_cursor_close(c);
	c = NULL;
	json_array_foreach(all, i, n) {
		sum = node_str(n, "checksum");
		if (sum != NULL && *sum != '\0' &&
		    (rc = store_blob_addref(t, sum)) != 0)
			goto out;
		if ((rc = node_save(t, dst, n)) != 0)
			goto out;
	}
out:
	store_cursor_close(c);
	json_decref(all);
	return rc;
}

/* ====== Bundles: export and import of a whole tree ====== */

int
assets_export(struct store_txn *t, const char *app_id, json_t **nodes,
    struct bundle_file **files, size_t *nfiles)
{
	struct tree		 tr = { NULL, 0 };
	struct bundle_file	*f = NULL;
	char			 err[ENGINE_ERRMAX], path[4200];
	const char		*k;
	char			*bytes;
	size_t			 n = 0;
	json_t			*list = NULL, *nd, *v;
	int			 rc;

	*nodes = NULL;
	*files = NULL;
	*nfiles = 0;
	if ((rc = tree_load(t, app_id, err, &tr)) != 0)
		return rc;
	if ((list = json_array()) == NULL || (f = calloc(json_object_size(
	    tr.nodes) + 1, sizeof(*f))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_object_foreach(tr.nodes, k, nd) {
		if (node_path(&tr, k, path, sizeof(path)) < 0) {
			rc = STORE_EINVAL;
			goto out;
		}
		if ((v = node_view(&tr, nd)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		json_object_del(v, "created_at");
		json_object_del(v, "updated_at");
		if (json_array_append_new(list, v) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if ((f[n].path = strdup(path + 1)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		f[n].is_dir = node_is_folder(nd);
		n++;
		if (f[n - 1].is_dir)
			continue;
		if ((rc = asset_bytes(t, node_str(nd, "checksum"), &bytes,
		    &f[n - 1].len)) != 0)
			goto out;
		f[n - 1].data = (unsigned char *)bytes;
	}
	*nodes = list;
	*files = f;
	*nfiles = n;
	list = NULL;
	f = NULL;
out:
	if (f != NULL) {
		while (n-- > 0) {
			free(f[n].path);
			free(f[n].data);
		}
		free(f);
	}
	json_decref(list);
	tree_release(&tr);
	return rc;
}

/*
 * The node id a bundle's manifest gives path ("a/b"), if it gives a valid
 * unused one.
 */
static const char *
manifest_id(const json_t *ids, const struct tree *tr, const char *path)
{
	const char *id = json_string_value(json_object_get(ids, path));

	if (id == NULL || engine_uuid_check(id) != 0 ||
	    json_object_get(tr->nodes, id) != NULL)
		return NULL;
	return id;
}

/*
 * path -> node id from a manifest's tree nodes and files list; NULL when
 * out of memory.
 */
static json_t *
manifest_ids(const json_t *manifest)
{
	struct tree	 mt = { NULL, 0 };
	json_t		*ids = json_object(), *nodes, *n, *files;
	const char	*id, *p;
	char		 path[4200];
	size_t		 i;

	if (ids == NULL || manifest == NULL)
		return ids;
	nodes = json_object_get(json_object_get(json_object_get(manifest,
	    "app_assets"), "tree"), "nodes");
	if (json_is_array(nodes)) {
		if ((mt.nodes = json_object()) == NULL)
			goto fail;
		json_array_foreach(nodes, i, n)
			if ((id = node_str(n, "id")) != NULL &&
			    node_str(n, "name") != NULL &&
			    json_object_set(mt.nodes, id, n) != 0)
				goto fail;
		json_array_foreach(nodes, i, n)
			if ((id = node_str(n, "id")) != NULL &&
			    node_path(&mt, id, path, sizeof(path)) > 0 &&
			    json_object_set_new(ids, path + 1,
			    json_string(id)) != 0)
				goto fail;
		tree_release(&mt);
	}
	files = json_object_get(manifest, "files");
	json_array_foreach(files, i, n) {
		id = node_str(n, "node_id");
		p = node_str(n, "path");
		if (id != NULL && p != NULL) {
			while (*p == '/')
				p++;
			if (json_object_set_new(ids, p, json_string(id)) != 0)
				goto fail;
		}
	}
	return ids;
fail:
	tree_release(&mt);
	json_decref(ids);
	return NULL;
}

int
assets_import(struct store_txn *t, const struct conf *c, const char *app_id,
    const struct bundle *b, char *err)
{
	struct tree	 tr = { NULL, 0 };
	json_t		*ids = NULL, *n;
	char		*path = NULL, *slash, *seg;
	const char	*parent, *id;
	size_t		 i;
	int		 rc = 0, depth;

	if ((tr.nodes = json_object()) == NULL ||
	    (ids = manifest_ids(b->manifest)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (i = 0; i < b->nfiles; i++) {
		free(path);
		if ((path = strdup(b->files[i].path)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if (strlen(path) + 1 > (size_t)c->asset_max_path) {
			rc = engine_invalid(err, "'%.200s': path is longer "
			    "than %d bytes (assets.max_path)", path,
			    c->asset_max_path);
			goto out;
		}
		/* mkdir -p for every folder on the way, then the entry. */
		parent = NULL;
		for (seg = path, depth = 0;; seg = slash + 1, depth++) {
			slash = strchr(seg, '/');
			if (slash != NULL)
				*slash = '\0';
			if ((rc = name_check(c, seg, err)) != 0) {
				engine_invalid(err, "'%.200s': %s",
				    b->files[i].path, err);
				goto out;
			}
			n = child_named(&tr, parent, seg);
			if (n == NULL) {
				if ((int)json_object_size(tr.nodes) >=
				    c->asset_max_files) {
					engine_invalid(err, "more than %d files "
					    "and folders (assets.max_files)",
					    c->asset_max_files);
					rc = ENGINE_ELIMIT;
					goto out;
				}
				n = node_new(slash != NULL ||
				    b->files[i].is_dir ? "folder" : "file",
				    seg, parent, next_order(&tr, parent));
				if (n == NULL) {
					rc = ENGINE_ENOMEM;
					goto out;
				}
				/* path now ends at this segment */
				id = manifest_id(ids, &tr, path);
				if (id != NULL && json_object_set_new(n, "id",
				    json_string(id)) != 0) {
					json_decref(n);
					rc = ENGINE_ENOMEM;
					goto out;
				}
				if (json_object_set_new(tr.nodes, node_str(n,
				    "id"), n) != 0) {
					rc = ENGINE_ENOMEM;
					goto out;
				}
			} else if (slash == NULL || !node_is_folder(n)) {
				if (slash == NULL && b->files[i].is_dir &&
				    node_is_folder(n))
					break;	/* folder listed again */
				rc = engine_invalid(err, "'%.200s' is given "
				    "twice", b->files[i].path);
				goto out;
			}
			if (slash == NULL) {
				if (!b->files[i].is_dir) {
					struct asset_op op;

					memset(&op, 0, sizeof(op));
					op.data = b->files[i].data ?
					    (const void *)b->files[i].data :
					    "";
					op.len = b->files[i].len;
					op.err = err;
					if ((rc = file_set_data(t, c, &op,
					    &tr, n)) != 0)
						goto out;
				}
				break;
			}
			*slash = '/';
			parent = node_str(n, "id");
		}
	}
	{
		const char *k;

		json_object_foreach(tr.nodes, k, n)
			if ((rc = node_save(t, app_id, n)) != 0)
				goto out;
	}
out:
	free(path);
	json_decref(ids);
	tree_release(&tr);
	return rc;
}
