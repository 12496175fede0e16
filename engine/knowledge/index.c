/*
 * index.c — the stored keyword index of local datasets: postings kept in
 * the same write transaction as the segments they describe, so keyword
 * search reads the postings of the query's terms instead of every
 * segment (docs/knowledge.md, "The keyword index"):
 *
 *	kb.ix/<ds>/<doc>/<block>/<term>	postings: 12 bytes each, little
 *					endian u32 position, tf, length
 *	kb.ixs/<ds>/<doc>		u64 segments, u64 tokens, u64 the
 *					highest position indexed
 *
 * A block is KB_IX_BLOCK segment positions of one document. Keys sort by
 * document and block first, so that a batch of the indexer writes one
 * contiguous run of keys (few pages) and a document's index is one key
 * range; a query reads each of its terms in each block of the searchable
 * documents (a point read each). Only enabled segments with text are in
 * the index; a document's searchability (completed, enabled, not
 * archived) is its record's and read at query time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/knowledge/knowledge.h"

#define KB_IX	"kb.ix/"
#define KB_IXS	"kb.ixs/"
#define KB_IX_BLOCK	1024
#define POSTING	12

/* ====== Bytes ====== */

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static void
put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t
get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* ====== Changes of one write ====== */

struct ix_change {
	char	 ds[40], doc[40];
	int	 pos;
	char	*old_text;	/* the indexed text it had, or NULL */
	char	*new_text;	/* the text it gets indexed by, or NULL */
};

struct kb_ix {
	struct ix_change	*c;
	size_t			 n, cap;
};

int
kb_ix_begin(struct kb_ix **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : STORE_ENOMEM;
}

void
kb_ix_free(struct kb_ix *x)
{
	size_t i;

	if (x == NULL)
		return;
	for (i = 0; i < x->n; i++) {
		free(x->c[i].old_text);
		free(x->c[i].new_text);
	}
	free(x->c);
	free(x);
}

/* The text a segment record is indexed by: its content when enabled. */
static const char *
seg_text(const json_t *seg)
{
	if (seg == NULL || !json_is_true(json_object_get(seg, "enabled")))
		return NULL;
	return json_string_value(json_object_get(seg, "content"));
}

/* Parses "kb.seg/<ds>/<doc>/<pos>" (0, or -1 when not a segment key). */
static int
seg_key_parse(const char *key, char ds[40], char doc[40], int *pos)
{
	const char	*p, *a, *b;
	char		*end;
	long		 v;

	if (strncmp(key, KB_SEG, strlen(KB_SEG)) != 0)
		return -1;
	p = key + strlen(KB_SEG);
	if ((a = strchr(p, '/')) == NULL || (size_t)(a - p) >= 40 ||
	    (b = strchr(a + 1, '/')) == NULL || (size_t)(b - a - 1) >= 40)
		return -1;
	v = strtol(b + 1, &end, 10);
	if (*end != '\0' || v < 1 || v > INT32_MAX)
		return -1;
	memcpy(ds, p, (size_t)(a - p));
	ds[a - p] = '\0';
	memcpy(doc, a + 1, (size_t)(b - a - 1));
	doc[b - a - 1] = '\0';
	*pos = (int)v;
	return 0;
}

int
kb_ix_seg(struct kb_ix *x, struct store_txn *t, const char *key,
    const json_t *seg)
{
	struct ix_change	*c;
	const void		*v;
	size_t			 vlen;
	json_t			*old = NULL;
	const char		*ot, *nt = seg_text(seg);
	int			 rc;

	if (x->n == x->cap) {
		size_t			 cap = x->cap ? x->cap * 2 : 64;
		struct ix_change	*n2 = realloc(x->c, cap * sizeof(*n2));

		if (n2 == NULL)
			return STORE_ENOMEM;
		x->c = n2;
		x->cap = cap;
	}
	c = &x->c[x->n];
	memset(c, 0, sizeof(*c));
	if (seg_key_parse(key, c->ds, c->doc, &c->pos) != 0)
		return 0;	/* not a segment */
	rc = store_get(t, STORE_DB_SETTINGS, key, strlen(key), &v, &vlen);
	if (rc != 0 && rc != STORE_ENOTFOUND)
		return rc;
	if (rc == 0)
		old = json_loadb(v, vlen, 0, NULL);
	ot = seg_text(old);
	if ((ot != NULL && (c->old_text = strdup(ot)) == NULL) ||
	    (nt != NULL && (c->new_text = strdup(nt)) == NULL)) {
		json_decref(old);
		free(c->old_text);
		return STORE_ENOMEM;
	}
	json_decref(old);
	if (c->old_text != NULL || c->new_text != NULL)
		x->n++;
	return 0;
}

/* ====== Applying them ====== */

struct plist {
	char		 key[KB_TOKEN_MAX + 160];
	unsigned char	*buf;
	size_t		 n, cap;	/* postings */
	int		 dirty;
};

struct block {
	struct store_txn	*t;
	const char		*ds, *doc;
	int			 block;
	json_t			*map;	/* term -> index into pl */
	struct plist		*pl;
	size_t			 npl, cappl;
	int64_t			 dn, dlen, maxpos;
};

static struct plist *
block_plist(struct block *b, const char *term, size_t tlen, int *rc)
{
	json_t		*ix = json_object_getn(b->map, term, tlen);
	struct plist	*p;
	const void	*v;
	size_t		 vlen;

	if (ix != NULL)
		return &b->pl[json_integer_value(ix)];
	if (b->npl == b->cappl) {
		size_t		 cap = b->cappl ? b->cappl * 2 : 64;
		struct plist	*n2 = realloc(b->pl, cap * sizeof(*n2));

		if (n2 == NULL)
			goto nomem;
		b->pl = n2;
		b->cappl = cap;
	}
	p = &b->pl[b->npl];
	memset(p, 0, sizeof(*p));
	snprintf(p->key, sizeof(p->key), KB_IX "%s/%s/%05d/%.*s", b->ds,
	    b->doc, b->block, (int)tlen, term);
	*rc = store_get(b->t, STORE_DB_SETTINGS, p->key, strlen(p->key), &v,
	    &vlen);
	if (*rc != 0 && *rc != STORE_ENOTFOUND)
		return NULL;
	if (*rc == STORE_ENOTFOUND)
		vlen = 0;
	*rc = 0;
	if (vlen % POSTING != 0)
		vlen -= vlen % POSTING;
	if (vlen > 0) {
		if ((p->buf = malloc(vlen)) == NULL)
			goto nomem;
		memcpy(p->buf, v, vlen);
		p->n = p->cap = vlen / POSTING;
	}
	if (json_object_setn_new(b->map, term, tlen,
	    json_integer((json_int_t)b->npl)) != 0) {
		free(p->buf);
		goto nomem;
	}
	b->npl++;
	return p;
nomem:
	*rc = STORE_ENOMEM;
	return NULL;
}

/* A segment's term frequencies (term -> count) and its token count. */
struct tfs {
	json_t	*tf;
	size_t	 len;
	int	 oom;
};

static int
tfs_add(const char *tok, size_t n, void *arg)
{
	struct tfs	*s = arg;
	json_t		*v = json_object_getn(s->tf, tok, n);

	s->len++;
	if (v != NULL)
		json_integer_set(v, json_integer_value(v) + 1);
	else if (json_object_setn_new(s->tf, tok, n, json_integer(1)) != 0)
		s->oom = 1;
	return 0;
}

static int
block_seg(struct block *b, const char *text, int pos, int add)
{
	struct tfs	 s = { json_object(), 0, 0 };
	struct plist	*p;
	const char	*term;
	json_t		*v;
	size_t		 i, tlen;
	int		 rc = STORE_ENOMEM;

	if (s.tf == NULL)
		return rc;
	kb_tokens(text, strlen(text), tfs_add, &s);
	if (s.oom)
		goto out;
	json_object_keylen_foreach(s.tf, term, tlen, v) {
		if ((p = block_plist(b, term, tlen, &rc)) == NULL)
			goto out;
		for (i = 0; i < p->n; i++)
			if ((int)get32(p->buf + i * POSTING) == pos)
				break;
		if (!add) {
			if (i < p->n) {
				memmove(p->buf + i * POSTING, p->buf + (i + 1) *
				    POSTING, (p->n - i - 1) * POSTING);
				p->n--;
				p->dirty = 1;
			}
			continue;
		}
		if (i == p->n) {
			if (p->n == p->cap) {
				size_t		 cap = p->cap ? p->cap * 2 : 4;
				unsigned char	*n2 = realloc(p->buf, cap *
				    POSTING);

				rc = STORE_ENOMEM;
				if (n2 == NULL)
					goto out;
				p->buf = n2;
				p->cap = cap;
			}
			p->n++;
		}
		put32(p->buf + i * POSTING, (uint32_t)pos);
		put32(p->buf + i * POSTING + 4, (uint32_t)json_integer_value(v));
		put32(p->buf + i * POSTING + 8, (uint32_t)s.len);
		p->dirty = 1;
	}
	if (add && pos > b->maxpos)
		b->maxpos = pos;
	b->dn += add ? 1 : -1;
	b->dlen += add ? (int64_t)s.len : -(int64_t)s.len;
	rc = 0;
out:
	json_decref(s.tf);
	return rc;
}

/* Writes the block's postings and the document's counts. */
static int
block_write(struct block *b)
{
	char		 key[160];
	const void	*old;
	unsigned char	 st[24];
	size_t		 i, vlen;
	int64_t		 n = 0, tok = 0, maxpos = 0;
	int		 rc = 0;

	for (i = 0; i < b->npl; i++) {
		struct plist *p = &b->pl[i];

		if (!p->dirty)
			continue;
		if (p->n == 0) {
			rc = store_del(b->t, STORE_DB_SETTINGS, p->key,
			    strlen(p->key));
			if (rc != 0 && rc != STORE_ENOTFOUND)
				return rc;
		} else if ((rc = store_put(b->t, STORE_DB_SETTINGS, p->key,
		    strlen(p->key), p->buf, p->n * POSTING, 0)) != 0)
			return rc;
	}
	snprintf(key, sizeof(key), KB_IXS "%s/%s", b->ds, b->doc);
	rc = store_get(b->t, STORE_DB_SETTINGS, key, strlen(key), &old, &vlen);
	if (rc != 0 && rc != STORE_ENOTFOUND)
		return rc;
	if (rc == 0 && vlen == sizeof(st)) {
		n = (int64_t)get64(old);
		tok = (int64_t)get64((const unsigned char *)old + 8);
		maxpos = (int64_t)get64((const unsigned char *)old + 16);
	}
	n += b->dn;
	tok += b->dlen;
	if (b->maxpos > maxpos)
		maxpos = b->maxpos;
	if (n <= 0) {
		rc = store_del(b->t, STORE_DB_SETTINGS, key, strlen(key));
		return rc == STORE_ENOTFOUND ? 0 : rc;
	}
	put64(st, (uint64_t)n);
	put64(st + 8, (uint64_t)(tok > 0 ? tok : 0));
	put64(st + 16, (uint64_t)maxpos);
	return store_put(b->t, STORE_DB_SETTINGS, key, strlen(key), st,
	    sizeof(st), 0);
}

static int
by_block(const void *a, const void *b)
{
	const struct ix_change *x = a, *y = b;
	int c;

	if ((c = strcmp(x->ds, y->ds)) != 0 || (c = strcmp(x->doc,
	    y->doc)) != 0)
		return c;
	if ((x->pos - 1) / KB_IX_BLOCK != (y->pos - 1) / KB_IX_BLOCK)
		return (x->pos - 1) / KB_IX_BLOCK < (y->pos - 1) /
		    KB_IX_BLOCK ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void
block_release(struct block *b)
{
	size_t i;

	for (i = 0; i < b->npl; i++)
		free(b->pl[i].buf);
	free(b->pl);
	json_decref(b->map);
	b->pl = NULL;
	b->npl = b->cappl = 0;
	b->map = NULL;
}

int
kb_ix_commit(struct kb_ix *x, struct store_txn *t)
{
	struct block	 b;
	size_t		 i, j;
	int		 rc = 0;

	memset(&b, 0, sizeof(b));
	if (x->n > 1)
		qsort(x->c, x->n, sizeof(*x->c), by_block);
	for (i = 0; i < x->n; i = j) {
		b.t = t;
		b.ds = x->c[i].ds;
		b.doc = x->c[i].doc;
		b.block = (x->c[i].pos - 1) / KB_IX_BLOCK;
		b.dn = b.dlen = b.maxpos = 0;
		if ((b.map = json_object()) == NULL) {
			rc = STORE_ENOMEM;
			goto out;
		}
		for (j = i; j < x->n && strcmp(x->c[j].ds, b.ds) == 0 &&
		    strcmp(x->c[j].doc, b.doc) == 0 && (x->c[j].pos - 1) /
		    KB_IX_BLOCK == b.block; j++) {
			if (x->c[j].old_text != NULL && (rc = block_seg(&b,
			    x->c[j].old_text, x->c[j].pos, 0)) != 0)
				goto out;
			if (x->c[j].new_text != NULL && (rc = block_seg(&b,
			    x->c[j].new_text, x->c[j].pos, 1)) != 0)
				goto out;
		}
		if ((rc = block_write(&b)) != 0)
			goto out;
		block_release(&b);
	}
out:
	block_release(&b);
	return rc;
}

/* ====== Dropping ====== */

/* Deletes every key under prefix. */
static int
ix_del_prefix(struct store_txn *t, const char *prefix)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	char			**keys = NULL, **k2;
	size_t			 n = 0, cap = 0, i, plen = strlen(prefix);
	int			 rc;

	if ((rc = store_cursor_open(t, STORE_DB_SETTINGS, &c)) != 0)
		return rc;
	for (rc = store_cursor_seek(c, prefix, plen, &kv); rc == 0;
	    rc = store_cursor_next(c, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0)
			break;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((k2 = realloc(keys, cap * sizeof(*keys))) == NULL) {
				rc = STORE_ENOMEM;
				goto out;
			}
			keys = k2;
		}
		if ((keys[n] = strndup(kv.k, kv.klen)) == NULL) {
			rc = STORE_ENOMEM;
			goto out;
		}
		n++;
	}
	if (rc != 0 && rc != STORE_ENOTFOUND)
		goto out;
	store_cursor_close(c);
	c = NULL;
	rc = 0;
	for (i = 0; i < n && rc == 0; i++)
		if ((rc = store_del(t, STORE_DB_SETTINGS, keys[i],
		    strlen(keys[i]))) == STORE_ENOTFOUND)
			rc = 0;
out:
	store_cursor_close(c);
	for (i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	return rc;
}

/* Drops the index of one document: one key range and its counts. */
static int
ix_drop_doc(struct store_txn *t, const char *ds, const char *doc)
{
	char	key[160];
	int	rc;

	snprintf(key, sizeof(key), KB_IX "%s/%s/", ds, doc);
	if ((rc = ix_del_prefix(t, key)) != 0)
		return rc;
	snprintf(key, sizeof(key), KB_IXS "%s/%s", ds, doc);
	rc = store_del(t, STORE_DB_SETTINGS, key, strlen(key));
	return rc == STORE_ENOTFOUND ? 0 : rc;
}

int
kb_ix_drop(struct store_txn *t, const char *seg_prefix)
{
	char		 ds[40], doc[40], prefix[128];
	const char	*p, *a;
	size_t		 n;
	int		 rc;

	if (strncmp(seg_prefix, KB_SEG, strlen(KB_SEG)) != 0)
		return 0;
	p = seg_prefix + strlen(KB_SEG);
	if ((a = strchr(p, '/')) == NULL || (size_t)(a - p) >= sizeof(ds))
		return 0;
	memcpy(ds, p, (size_t)(a - p));
	ds[a - p] = '\0';
	if (a[1] == '\0') {	/* the whole dataset */
		const char *const pre[] = { KB_IX, KB_IXS };

		for (n = 0; n < 2; n++) {
			snprintf(prefix, sizeof(prefix), "%s%s/", pre[n], ds);
			if ((rc = ix_del_prefix(t, prefix)) != 0)
				return rc;
		}
		return 0;
	}
	n = strlen(a + 1);
	if (n < 2 || n > sizeof(doc) || a[n] != '/')
		return 0;
	memcpy(doc, a + 1, n - 1);
	doc[n - 1] = '\0';
	return ix_drop_doc(t, ds, doc);
}

/* ====== Reading ====== */

int
kb_ix_read(struct store_txn *t, const char *ds, const json_t *docs,
    const char (*terms)[KB_TOKEN_MAX + 8], const size_t *tlen, size_t nterms,
    size_t *nseg, double *tokens, kb_posting_fn fn, void *arg)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	char			 prefix[128], doc[40], key[KB_TOKEN_MAX + 160];
	const unsigned char	*p;
	const void		*v;
	size_t			 plen, i, j, vlen;
	int64_t			 blk, nblk;
	int			 rc;

	*nseg = 0;
	*tokens = 0;
	snprintf(prefix, sizeof(prefix), KB_IXS "%s/", ds);
	plen = strlen(prefix);
	if ((rc = store_cursor_open(t, STORE_DB_SETTINGS, &c)) != 0)
		return rc;
	for (rc = store_cursor_seek(c, prefix, plen, &kv); rc == 0;
	    rc = store_cursor_next(c, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0)
			break;
		if (kv.vlen != 24 || kv.klen - plen >= sizeof(doc))
			continue;
		memcpy(doc, (const char *)kv.k + plen, kv.klen - plen);
		doc[kv.klen - plen] = '\0';
		if (json_object_get(docs, doc) == NULL)
			continue;
		*nseg += (size_t)get64(kv.v);
		*tokens += (double)get64((const unsigned char *)kv.v + 8);
		nblk = ((int64_t)get64((const unsigned char *)kv.v + 16) - 1) /
		    KB_IX_BLOCK + 1;
		for (blk = 0; blk < nblk; blk++)
			for (i = 0; i < nterms; i++) {
				snprintf(key, sizeof(key), KB_IX "%s/%s/%05d/%.*s",
				    ds, doc, (int)blk, (int)tlen[i], terms[i]);
				rc = store_get(t, STORE_DB_SETTINGS, key,
				    strlen(key), &v, &vlen);
				if (rc == STORE_ENOTFOUND)
					continue;
				if (rc != 0)
					goto out;
				for (j = 0, p = v; j + POSTING <= vlen; j +=
				    POSTING)
					if ((rc = fn(i, doc, (int)get32(p + j),
					    get32(p + j + 4), get32(p + j + 8),
					    arg)) != 0)
						goto out;
			}
	}
	rc = rc == STORE_ENOTFOUND ? 0 : rc;
out:
	store_cursor_close(c);
	return rc;
}
