/*
 * records.c — what every kind of record shares: listing the entries of a
 * database (by key prefix and app) and telling whose a record is.
 */
#include <string.h>

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
