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

/* ====== Outbound HTTP (outbound.c) ====== */

struct curl_slist;

struct outbound_req {
	const char		*method;	/* NULL: GET, or POST with body */
	const char		*url;
	const struct curl_slist	*headers;
	const void		*body;
	size_t			 body_len;
	int			 trusted;	/* admin-configured: no guard */
	int			 follow;	/* follow up to 5 redirects */
	int			 timeout;	/* 0: http.timeout */
	int64_t			 max_bytes;	/* 0: http.max_response */
	/* Streaming: when set, bytes go here instead of resp->body; return
	 * non-zero to abort. */
	int			 (*on_data)(const char *p, size_t n, void *arg);
	void			*arg;
};

struct outbound_resp {
	long	 status;
	char	*body;		/* NUL-terminated, malloc'd; caller frees */
	size_t	 len;
	char	*content_type;	/* malloc'd or NULL */
};

/*
 * Performs one HTTP exchange through libcurl with the http.* limits. Unless
 * req->trusted, every address connected to (after DNS, and on redirects)
 * must be public unless http.allow_private. Returns 0 with resp filled
 * (any HTTP status), or ENGINE_EFETCH / ENGINE_ELIMIT with err saying why.
 * Free resp with outbound_resp_release.
 */
int	outbound_fetch(struct engine *e, const struct outbound_req *req,
	    char *err, struct outbound_resp *resp);
void	outbound_resp_release(struct outbound_resp *resp);

/* 1 when addr (AF_INET or AF_INET6 sockaddr) is private, loopback,
 * link-local, multicast or otherwise not a public unicast address. */
struct sockaddr;
int	outbound_addr_private(const struct sockaddr *addr);

#endif
