/*
 * internal.h — declarations shared by the engine's own files only.
 */
#ifndef FLOWCGI_ENGINE_INTERNAL_H
#define FLOWCGI_ENGINE_INTERNAL_H

#include "engine/engine.h"

struct engine {
	const struct conf	*conf;
	struct store		*store;
};

/* Maps a STORE_E* code to the ENGINE_E* code the engine returns. */
int	engine_from_store(int rc);

/* Writes a message into err (ENGINE_ERRMAX bytes) and returns ENGINE_EINVAL. */
int	engine_invalid(char *err, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* The number of Unicode code points in the UTF-8 string s. */
size_t	engine_utf8_len(const char *s);

/* Removes every asset node of app_id, dropping blob references. */
int	assets_delete_all(struct store_txn *t, const char *app_id);

/* Copies every asset node of src to dst (same node ids, shared blobs). */
int	assets_copy_all(struct store_txn *t, const char *src, const char *dst);

#endif
