/*
 * records.c — what every kind of record shares: listing the entries of a
 * database (by key prefix and app), telling whose a record is, and sending
 * a stored file's bytes a chunk at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/records/records.h"

int
record_field_is(const json_t *rec, const char *k, const char *want)
{
	const char *v = json_string_value(json_object_get(rec, k));

	return v != NULL && strcmp(v, want) == 0;
}

int
record_owned(const json_t *rec, const char *app_id, const char *user_key,
    const char *user)
{
	return (app_id == NULL || record_field_is(rec, "app_id", app_id)) &&
	    (user == NULL || record_field_is(rec, user_key, user));
}

int
records_collect(struct store_txn *t, enum store_db db, const char *prefix,
    const char *app_id, size_t max, json_t **out)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*all, *rec;
	const char		*app;
	size_t			 plen = prefix != NULL ? strlen(prefix) : 0;
	int			 rc;

	*out = NULL;
	if ((all = json_object()) == NULL)
		return STORE_ENOMEM;
	if ((rc = store_cursor_open(t, db, &c)) != 0)
		goto out;
	for (rc = plen > 0 ? store_cursor_seek(c, prefix, plen, &kv) :
	    store_cursor_first(c, &kv);
	    rc == 0 && (max == 0 || json_object_size(all) < max);
	    rc = store_cursor_next(c, &kv)) {
		if (plen > 0 && (kv.klen < plen ||
		    memcmp(kv.k, prefix, plen) != 0))
			break;
		if ((rec = json_loadb(kv.v, kv.vlen, 0, NULL)) == NULL)
			rec = json_null();
		app = json_string_value(json_object_get(rec, "app_id"));
		if (app_id != NULL && (app == NULL ||
		    strcmp(app, app_id) != 0)) {
			json_decref(rec);
			continue;
		}
		if (json_object_setn_new_nocheck(all, kv.k, kv.klen,
		    rec) != 0) {
			rc = STORE_ENOMEM;
			goto out;
		}
	}
	if (rc == STORE_ENOTFOUND)
		rc = 0;
out:
	store_cursor_close(c);
	if (rc == 0)
		*out = all;
	else
		json_decref(all);
	return rc;
}

/* ====== Sending a blob ====== */

int
blob_read_alone(struct engine *e, const char *sum, uint64_t off, void *buf,
    size_t n, size_t *got)
{
	struct store_txn	*t = NULL;
	int			 rc;

	*got = 0;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return rc;
	rc = store_blob_read(t, sum, off, buf, n, got);
	store_read_end(t);
	return rc;
}

int
engine_blob_send(struct engine *e, const char *sum, uint64_t off,
    uint64_t len, engine_out_fn out, void *ctx)
{
	unsigned char		*buf;
	uint64_t		 end = off + len;
	size_t			 got = 0, want;
	int			 rc = 0;

	if (len == 0)
		return 0;
	if ((buf = malloc(STORE_BLOB_CHUNK)) == NULL)
		return ENGINE_ENOMEM;
	while (rc == 0 && off < end) {
		/* to the end of the chunk off is in: one chunk read each */
		want = STORE_BLOB_CHUNK - (size_t)(off % STORE_BLOB_CHUNK);
		if (want > end - off)
			want = (size_t)(end - off);
		rc = blob_read_alone(e, sum, off, buf, want, &got);
		if (rc == 0 && got != want)
			rc = STORE_ENOTFOUND;	/* another blob's size now */
		if (rc == 0 && out(ctx, buf, got) != 0) {
			free(buf);
			return 1;
		}
		off += got;
	}
	free(buf);
	return engine_from_store(rc);
}
