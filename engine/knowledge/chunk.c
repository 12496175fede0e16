/*
 * chunk.c — text into tokens and chunks for knowledge indexing: the
 * tokeniser the keyword index and the chunk sizes share (words, CJK code
 * points and their pairs), Dify's cleaning rules, and its splitters (a
 * fixed separator, then recursive separators with merging and overlap).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "engine/knowledge/knowledge.h"

/* ====== Tokens ====== */

/* The code point at s[0..len) into *cp; its byte length (1 for a bad
 * byte, taken as itself). */
static size_t
utf8_next(const unsigned char *s, size_t len, unsigned *cp)
{
	if (s[0] < 0x80 || len < 2) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0 && (s[1] & 0xc0) == 0x80) {
		*cp = ((unsigned)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
		return 2;
	}
	if ((s[0] & 0xf0) == 0xe0 && len >= 3 && (s[1] & 0xc0) == 0x80 &&
	    (s[2] & 0xc0) == 0x80) {
		*cp = ((unsigned)(s[0] & 0x0f) << 12) |
		    ((unsigned)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
		return 3;
	}
	if ((s[0] & 0xf8) == 0xf0 && len >= 4 && (s[1] & 0xc0) == 0x80 &&
	    (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80) {
		*cp = ((unsigned)(s[0] & 0x07) << 18) |
		    ((unsigned)(s[1] & 0x3f) << 12) |
		    ((unsigned)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
		return 4;
	}
	*cp = s[0];
	return 1;
}

static int
is_cjk(unsigned cp)
{
	return (cp >= 0x3040 && cp <= 0x30ff) || (cp >= 0x3400 &&
	    cp <= 0x4dbf) || (cp >= 0x4e00 && cp <= 0x9fff) ||
	    (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xac00 &&
	    cp <= 0xd7af) || (cp >= 0x20000 && cp <= 0x2ffff);
}

/* Letters of scripts written with spaces: part of a word. Punctuation of
 * every block below U+3000 that is not ASCII counts as a letter, which
 * errs on the side of longer words. */
static int
is_word(unsigned cp)
{
	if (cp < 0x80)
		return isalnum((int)cp) || cp == '_';
	if (cp == 0xa0 || (cp >= 0x2000 && cp <= 0x206f) ||
	    (cp >= 0x3000 && cp <= 0x303f) || (cp >= 0xff00 && cp <= 0xffef))
		return 0;
	return !is_cjk(cp);
}

int
kb_tokens(const char *s, size_t len, kb_token_fn fn, void *arg)
{
	const unsigned char	*p = (const unsigned char *)s;
	char			 w[KB_TOKEN_MAX], pair[8];
	size_t			 i = 0, n, wl = 0, pl = 0;
	unsigned		 cp;
	int			 rc = 0;

	while (i <= len && rc == 0) {
		if (i == len) {
			cp = ' ';
			n = 1;
		} else
			n = utf8_next(p + i, len - i, &cp);
		if (is_word(cp)) {
			/* a word: lowercased, cut at KB_TOKEN_MAX bytes
			 * (only on a code point boundary) */
			if (wl + n <= sizeof(w)) {
				if (cp < 0x80)
					w[wl++] = (char)tolower((int)cp);
				else {
					memcpy(w + wl, p + i, n);
					wl += n;
				}
			}
			pl = 0;
		} else {
			if (wl > 0)
				rc = fn(w, wl, arg);
			wl = 0;
			if (rc == 0 && is_cjk(cp)) {
				if ((rc = fn((const char *)p + i, n, arg)) == 0 &&
				    pl > 0) {
					memcpy(pair + pl, p + i, n);
					rc = fn(pair, pl + n, arg);
				}
				memcpy(pair, p + i, n);
				pl = n;
			} else
				pl = 0;
		}
		i += n;
	}
	return rc;
}

size_t
kb_token_count(const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, n, count = 0;
	unsigned		 cp;
	int			 inword = 0;

	while (i < len) {
		n = utf8_next(p + i, len - i, &cp);
		if (is_word(cp)) {
			count += !inword;
			inword = 1;
		} else {
			inword = 0;
			count += is_cjk(cp);
		}
		i += n;
	}
	return count;
}

/* ====== Cleaning ====== */

static int
is_space_run(unsigned cp)
{
	return cp == '\t' || cp == '\f' || cp == '\r' || cp == ' ' ||
	    cp == 0xa0 || cp == 0x1680 || cp == 0x180e || (cp >= 0x2000 &&
	    cp <= 0x200a) || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* Length of an e-mail address starting at s (0: none): Dify's
 * [a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+ */
static size_t
email_at(const char *s, const char *start)
{
	const char	*p = s, *q;
	size_t		 dots = 0;

	if (s > start && (isalnum((unsigned char)s[-1]) || strchr("_.+-",
	    s[-1]) != NULL))
		return 0;
	while (*p && (isalnum((unsigned char)*p) || strchr("_.+-", *p)))
		p++;
	if (p == s || *p != '@')
		return 0;
	q = ++p;
	while (*p && (isalnum((unsigned char)*p) || *p == '-'))
		p++;
	if (p == q || *p != '.')
		return 0;
	while (*p && (isalnum((unsigned char)*p) || *p == '-' || *p == '.')) {
		dots += *p == '.';
		p++;
	}
	return p[-1] == '.' && dots == 1 ? 0 : (size_t)(p - s);
}

char *
kb_clean(const char *text, int extra_spaces, int urls_emails)
{
	const unsigned char	*p = (const unsigned char *)text;
	size_t			 len = strlen(text), i = 0, n, nl = 0, e;
	struct dbuf		 b = { 0 };
	unsigned		 cp;
	int			 sp = 0;

	while (i < len) {
		n = utf8_next(p + i, len - i, &cp);
		if ((cp == '<' && p[i + 1] == '|') ||
		    (cp == '|' && p[i + 1] == '>')) {
			dbuf_addc(&b, (char)p[cp == '<' ? i : i + 1]);
			i += 2;
			nl = 0;
			sp = 0;
			continue;
		}
		if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
		    cp == 0x7f || cp == 0xfffe) {
			i += n;
			continue;
		}
		if (urls_emails && (strncmp(text + i, "http://", 7) == 0 ||
		    strncmp(text + i, "https://", 8) == 0) && (i < 2 ||
		    text[i - 1] != '(' || text[i - 2] != ']')) {
			while (i < len && !isspace(p[i]))
				i++;
			continue;
		}
		if (urls_emails && (e = email_at(text + i, text)) > 0) {
			i += e;
			continue;
		}
		if (extra_spaces && cp == '\n') {
			sp = 0;
			if (++nl > 2) {
				i += n;
				continue;
			}
		} else if (extra_spaces && is_space_run(cp)) {
			nl = nl > 0 ? nl : 0;
			if (sp++ > 0) {
				i += n;
				continue;
			}
			dbuf_addc(&b, ' ');
			i += n;
			continue;
		} else {
			nl = 0;
			sp = 0;
		}
		dbuf_add(&b, p + i, n);
		i += n;
	}
	dbuf_addc(&b, '\0');
	if (b.err != 0) {
		dbuf_free(&b);
		return NULL;
	}
	return dbuf_take(&b, NULL);
}

/* ====== Splitting ====== */

static const char *const split_seps[] = { "\n\n", "\xe3\x80\x82", ". ",
    " ", "" };
#define NSEPS (sizeof(split_seps) / sizeof(split_seps[0]))

struct splitter {
	int	 max, overlap;
	size_t	 max_chunks;
	json_t	*out;
	int	 rc;
};

/* Emits s[0..n) trimmed, when not empty. */
static void
emit(struct splitter *sp, const char *s, size_t n)
{
	while (n > 0 && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0 || sp->rc != 0)
		return;
	if (json_array_size(sp->out) >= sp->max_chunks) {
		sp->rc = ENGINE_ELIMIT;
		return;
	}
	if (json_array_append_new(sp->out, json_stringn_nocheck(s, n)) != 0)
		sp->rc = ENGINE_ENOMEM;
}

struct piece {
	const char	*s;
	size_t		 n;
	size_t		 tokens;
};

static void split_rec(struct splitter *sp, const char *s, size_t n,
    size_t sep);

/* Langchain's _merge_splits over pieces that lie end to end in memory:
 * a chunk is a run of consecutive pieces, so joining is a span. */
static void
merge(struct splitter *sp, struct piece *pc, size_t np)
{
	size_t	first = 0, i, total = 0;

	for (i = 0; i < np && sp->rc == 0; i++) {
		if (total + pc[i].tokens > (size_t)sp->max && i > first) {
			emit(sp, pc[first].s, (size_t)(pc[i - 1].s +
			    pc[i - 1].n - pc[first].s));
			while (first < i && (total > (size_t)sp->overlap ||
			    (total + pc[i].tokens > (size_t)sp->max &&
			    total > 0))) {
				total -= pc[first].tokens;
				first++;
			}
		}
		total += pc[i].tokens;
	}
	if (first < np && sp->rc == 0)
		emit(sp, pc[first].s, (size_t)(pc[np - 1].s + pc[np - 1].n -
		    pc[first].s));
}

/* Splits s[0..n) on the first separator from sep on that it holds,
 * keeping each separator at the end of its piece. */
static void
split_rec(struct splitter *sp, const char *s, size_t n, size_t sep)
{
	struct piece	*pc = NULL;
	size_t		 np = 0, cap = 0, i, sl, good = 0;
	const char	*p = s, *end = s + n, *q;
	unsigned	 cp;

	while (sep < NSEPS - 1 && memmem(s, n, split_seps[sep],
	    strlen(split_seps[sep])) == NULL)
		sep++;
	sl = strlen(split_seps[sep]);
	while (p < end && sp->rc == 0) {
		if (sl == 0)
			q = p + utf8_next((const unsigned char *)p,
			    (size_t)(end - p), &cp);
		else {
			q = memmem(p, (size_t)(end - p), split_seps[sep], sl);
			q = q == NULL ? end : q + sl;
		}
		if (np == cap) {
			struct piece *t;

			cap = cap ? cap * 2 : 64;
			if ((t = realloc(pc, cap * sizeof(*pc))) == NULL) {
				sp->rc = ENGINE_ENOMEM;
				break;
			}
			pc = t;
		}
		pc[np].s = p;
		pc[np].n = (size_t)(q - p);
		pc[np].tokens = kb_token_count(p, (size_t)(q - p));
		np++;
		p = q;
	}
	/* runs of small pieces merge; a big one splits further */
	for (i = 0; i < np && sp->rc == 0; i++) {
		if (pc[i].tokens <= (size_t)sp->max || sl == 0)
			continue;
		if (i > good)
			merge(sp, pc + good, i - good);
		split_rec(sp, pc[i].s, pc[i].n, sep + 1);
		good = i + 1;
	}
	if (good < np && sp->rc == 0)
		merge(sp, pc + good, np - good);
	free(pc);
}

int
kb_split(const char *text, const char *fixed, int max_tokens, int overlap,
    size_t max_chunks, json_t **out)
{
	struct splitter	 sp;
	const char	*p = text, *q, *end = text + strlen(text);
	size_t		 fl;

	*out = NULL;
	memset(&sp, 0, sizeof(sp));
	sp.max = max_tokens > 0 ? max_tokens : 1;
	sp.overlap = overlap >= 0 && overlap < sp.max ? overlap : 0;
	sp.max_chunks = max_chunks;
	if ((sp.out = json_array()) == NULL)
		return ENGINE_ENOMEM;
	if (fixed == NULL || *fixed == '\0')
		split_rec(&sp, text, (size_t)(end - text), 0);
	else {
		fl = strlen(fixed);
		while (p <= end && sp.rc == 0) {
			q = memmem(p, (size_t)(end - p), fixed, fl);
			if (q == NULL)
				q = end;
			if (kb_token_count(p, (size_t)(q - p)) >
			    (size_t)sp.max)
				split_rec(&sp, p, (size_t)(q - p), 0);
			else
				emit(&sp, p, (size_t)(q - p));
			p = q + fl;
		}
	}
	if (sp.rc != 0) {
		json_decref(sp.out);
		return sp.rc;
	}
	*out = sp.out;
	return 0;
}
