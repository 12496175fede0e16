/*
 * json.c — JSON text as json_dumps(JSON_COMPACT | JSON_ENCODE_ANY) writes
 * it, byte for byte, for the values flowcgi writes most: records it
 * stores and events it streams.
 *
 * Jansson's dump guards against a value that contains itself with a hash
 * table keyed by each container's address formatted as text; for a run's
 * node trace (hundreds of small objects) that guard cost more than the
 * writing. The engine builds trees, never loops, so this writer walks them
 * directly. What it does not write itself it asks jansson for: a real (so
 * its digits are jansson's own), and anything nested deeper than
 * JT_DEPTH (the whole value then goes to json_dumps). fuzz_json_text and
 * t_storage_store compare the two.
 */
#include <stdlib.h>
#include <string.h>

#include "conf/dbuf.h"
#include "storage/storage.h"

#define JT_DEPTH	512

/* Jansson's escapes: the quote, the backslash and control characters. */
static void
jt_string(struct dbuf *b, const char *s, size_t n)
{
	static const char	 hex[] = "0123456789ABCDEF";
	char			 u[6] = "\\u00";
	const char		*e;
	size_t			 i, from = 0;
	unsigned char		 c;

	dbuf_add(b, "\"", 1);
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		dbuf_add(b, s + from, i - from);
		from = i + 1;
		switch (c) {
		case '"':  e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		case '\b': e = "\\b"; break;
		case '\f': e = "\\f"; break;
		case '\n': e = "\\n"; break;
		case '\r': e = "\\r"; break;
		case '\t': e = "\\t"; break;
		default:   e = NULL; break;
		}
		if (e != NULL)
			dbuf_add(b, e, 2);
		else {
			u[4] = hex[c >> 4];
			u[5] = hex[c & 15];
			dbuf_add(b, u, sizeof(u));
		}
	}
	dbuf_add(b, s + from, n - from);
	dbuf_add(b, "\"", 1);
}

static void
jt_integer(struct dbuf *b, json_int_t v)
{
	char			 num[24], *p = num + sizeof(num);
	unsigned long long	 u = v < 0 ? 0ULL - (unsigned long long)v :
				    (unsigned long long)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	dbuf_add(b, p, (size_t)(num + sizeof(num) - p));
}

static void
jt_value(struct dbuf *b, const json_t *j, int depth)
{
	const char	*k;
	json_t		*v;
	size_t		 i, klen;
	char		*r;

	if (b->err != DBUF_OK || j == NULL || depth > JT_DEPTH) {
		b->err = DBUF_ENOMEM;	/* too deep: jansson says why */
		return;
	}
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		dbuf_add(b, "{", 1);
		i = 0;
		json_object_keylen_foreach((json_t *)j, k, klen, v) {
			if (i++ > 0)
				dbuf_add(b, ",", 1);
			jt_string(b, k, klen);
			dbuf_add(b, ":", 1);
			jt_value(b, v, depth + 1);
		}
		dbuf_add(b, "}", 1);
		break;
	case JSON_ARRAY:
		dbuf_add(b, "[", 1);
		json_array_foreach(j, i, v) {
			if (i > 0)
				dbuf_add(b, ",", 1);
			jt_value(b, v, depth + 1);
		}
		dbuf_add(b, "]", 1);
		break;
	case JSON_STRING:
		jt_string(b, json_string_value(j), json_string_length(j));
		break;
	case JSON_INTEGER:
		jt_integer(b, json_integer_value(j));
		break;
	case JSON_REAL:
		if ((r = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY)) ==
		    NULL) {
			b->err = DBUF_ENOMEM;
			return;
		}
		dbuf_add(b, r, strlen(r));
		free(r);
		break;
	case JSON_TRUE:
		dbuf_add(b, "true", 4);
		break;
	case JSON_FALSE:
		dbuf_add(b, "false", 5);
		break;
	default:
		dbuf_add(b, "null", 4);
		break;
	}
}

char *
store_json_text(const json_t *j, size_t *len)
{
	struct dbuf	 b = { 0 };
	char		*s;

	jt_value(&b, j, 0);
	if (b.err != DBUF_OK) {
		dbuf_free(&b);
		if ((s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY)) != NULL &&
		    len != NULL)
			*len = strlen(s);
		return s;
	}
	return dbuf_take(&b, len);
}
