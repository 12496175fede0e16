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

/*
 * A block's changes are applied by sorting, not hashing: every segment's
 * tokens are sorted and counted into one posting change per term, the
 * block's changes are sorted by term (then by their order), and each
 * term's postings are read, changed and written once.
 */
struct ent {
	size_t		 toff;		/* the term in the token bytes */
	unsigned	 tlen;
	int		 pos, add;
	uint32_t	 tf, len;
	size_t		 seq;
};

struct tok {
	size_t		 off;
	unsigned	 len;
};

struct block {
	struct store_txn	*t;
	const char		*ds, *doc;
	int			 block;
	char			*tb;		/* token bytes */
	size_t			 tn, tcap;
	struct tok		*tk;		/* one segment's tokens */
	size_t			 ntk, captk;
	struct ent		*e;
	size_t			 ne, cape;
	int			 oom;
	int64_t			 dn, dlen, maxpos;
};

static __thread const char *sort_bytes;	/* the token bytes, for qsort */

static int
by_tok(const void *a, const void *b)
{
	const struct tok	*x = a, *y = b;
	unsigned		 n = x->len < y->len ? x->len : y->len;
	int			 c = memcmp(sort_bytes + x->off, sort_bytes + y->off, n);

	return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

static int
by_ent(const void *a, const void *b)
{
	const struct ent	*x = a, *y = b;
	unsigned		 n = x->tlen < y->tlen ? x->tlen : y->tlen;
	int			 c = memcmp(sort_bytes + x->toff, sort_bytes +
				    y->toff, n);

	if (c == 0 && x->tlen != y->tlen)
		c = x->tlen < y->tlen ? -1 : 1;
	return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t	 c = *cap ? *cap : 64;
	void	*n2;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if ((n2 = realloc(*p, c * size)) == NULL)
		return -1;
	*p = n2;
	*cap = c;
	return 0;
}

static int
tok_add(const char *tok, size_t n, void *arg)
{
	struct block *b = arg;

	if (b->oom || grow((void **)&b->tb, &b->tcap, b->tn + n, 1) != 0 ||
	    grow((void **)&b->tk, &b->captk, b->ntk + 1, sizeof(*b->tk)) !=
	    0) {
		b->oom = 1;
		return 1;
	}
	memcpy(b->tb + b->tn, tok, n);
	b->tk[b->ntk].off = b->tn;
	b->tk[b->ntk].len = (unsigned)n;
	b->tn += n;
	b->ntk++;
	return 0;
}

/* One segment's text at pos added to (add) or removed from the block. */
static int
block_seg(struct block *b, const char *text, int pos, int add)
{
	size_t i, j;

	b->ntk = 0;
	kb_tokens(text, strlen(text), tok_add, b);
	if (b->oom)
		return STORE_ENOMEM;
	sort_bytes = b->tb;
	if (b->ntk > 1)
		qsort(b->tk, b->ntk, sizeof(*b->tk), by_tok);
	for (i = 0; i < b->ntk; i = j) {
		for (j = i + 1; j < b->ntk && by_tok(&b->tk[i], &b->tk[j]) == 0;
		    j++)
			;
		if (grow((void **)&b->e, &b->cape, b->ne + 1,
		    sizeof(*b->e)) != 0)
			return STORE_ENOMEM;
		b->e[b->ne].toff = b->tk[i].off;
		b->e[b->ne].tlen = b->tk[i].len;
		b->e[b->ne].pos = pos;
		b->e[b->ne].add = add;
		b->e[b->ne].tf = (uint32_t)(j - i);
		b->e[b->ne].len = (uint32_t)b->ntk;
		b->e[b->ne].seq = b->ne;
		b->ne++;
	}
	b->dn += add ? 1 : -1;
	b->dlen += add ? (int64_t)b->ntk : -(int64_t)b->ntk;
	if (add && pos > b->maxpos)
		b->maxpos = pos;
	return 0;
}

/* Applies the block's changes term by term, then the document's counts. */
static int
block_write(struct block *b)
{
	char		 key[KB_TOKEN_MAX + 160];
	unsigned char	*buf = NULL, st[24];
	const void	*old;
	size_t		 i, j, k, n, cap = 0, vlen;
	int64_t		 nseg = 0, tok = 0, maxpos = 0;
	int		 rc = 0;

	sort_bytes = b->tb;
	if (b->ne > 1)
		qsort(b->e, b->ne, sizeof(*b->e), by_ent);
	for (i = 0; i < b->ne; i = j) {
		snprintf(key, sizeof(key), KB_IX "%s/%s/%05d/%.*s", b->ds,
		    b->doc, b->block, (int)b->e[i].tlen, b->tb + b->e[i].toff);
		rc = store_get(b->t, STORE_DB_SETTINGS, key, strlen(key), &old,
		    &vlen);
		if (rc != 0 && rc != STORE_ENOTFOUND)
			goto out;
		n = rc == 0 ? vlen / POSTING : 0;
		for (j = i; j < b->ne && by_ent(&b->e[i], &b->e[j]) <= 0 &&
		    b->e[j].tlen == b->e[i].tlen && memcmp(b->tb + b->e[j].toff,
		    b->tb + b->e[i].toff, b->e[i].tlen) == 0; j++)
			;
		rc = STORE_ENOMEM;
		if (grow((void **)&buf, &cap, n + (j - i) + 1, POSTING) != 0)
			goto out;
		if (n > 0)
			memcpy(buf, old, n * POSTING);
		for (k = i; k < j; k++) {
			size_t at;

			for (at = 0; at < n; at++)
				if ((int)get32(buf + at * POSTING) == b->e[k].pos)
					break;
			if (!b->e[k].add) {
				if (at < n) {
					memmove(buf + at * POSTING, buf + (at +
					    1) * POSTING, (n - at - 1) * POSTING);
					n--;
				}
				continue;
			}
			if (at == n)
				n++;
			put32(buf + at * POSTING, (uint32_t)b->e[k].pos);
			put32(buf + at * POSTING + 4, b->e[k].tf);
			put32(buf + at * POSTING + 8, b->e[k].len);
		}
		if (n == 0) {
			rc = store_del(b->t, STORE_DB_SETTINGS, key,
			    strlen(key));
			if (rc == STORE_ENOTFOUND)
				rc = 0;
		} else
			rc = store_put(b->t, STORE_DB_SETTINGS, key,
			    strlen(key), buf, n * POSTING, 0);
		if (rc != 0)
			goto out;
	}
	snprintf(key, sizeof(key), KB_IXS "%s/%s", b->ds, b->doc);
	rc = store_get(b->t, STORE_DB_SETTINGS, key, strlen(key), &old, &vlen);
	if (rc != 0 && rc != STORE_ENOTFOUND)
		goto out;
	if (rc == 0 && vlen == sizeof(st)) {
		nseg = (int64_t)get64(old);
		tok = (int64_t)get64((const unsigned char *)old + 8);
		maxpos = (int64_t)get64((const unsigned char *)old + 16);
	}
	nseg += b->dn;
	tok += b->dlen;
	if (b->maxpos > maxpos)
		maxpos = b->maxpos;
	if (nseg <= 0) {
		rc = store_del(b->t, STORE_DB_SETTINGS, key, strlen(key));
		rc = rc == STORE_ENOTFOUND ? 0 : rc;
		goto out;
	}
	put64(st, (uint64_t)nseg);
	put64(st + 8, (uint64_t)(tok > 0 ? tok : 0));
	put64(st + 16, (uint64_t)maxpos);
	rc = store_put(b->t, STORE_DB_SETTINGS, key, strlen(key), st,
	    sizeof(st), 0);
out:
	free(buf);
	return rc;
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
		b.tn = b.ne = 0;
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
	}
out:
	free(b.tb);
	free(b.tk);
	free(b.e);
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
