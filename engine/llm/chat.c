/*
 * post.c — llm_post: the HTTP half of one exchange, the same for every
 * protocol file. It sends the headers and the JSON body, feeds a streamed
 * answer to the protocol's event parser as it arrives, turns a provider's
 * refusal into a message, and reads an answer that came whole as JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "engine/llm/llm.h"

/* A streamed answer on its way to the protocol's parser. */
struct stream {
	const struct llm_post	*po;
	int			 events;	/* SSE events seen */
	int			 rc;		/* what stopped the transfer */
	struct tpl_sb		 raw;		/* the body before any event */
	struct llm_sse		 sse;
};

static int
on_event(void *arg, const char *event, const char *data, size_t len)
{
	struct stream *st = arg;

	st->events++;
	tpl_sb_release(&st->raw);
	return st->po->on_event(st->po->arg, event, data, len);
}

static int
on_data(const char *buf, size_t n, void *arg)
{
	struct stream *st = arg;

	if (st->events == 0) {
		tpl_sb_add(&st->raw, buf, n);
		if (st->raw.oom)
			st->rc = ENGINE_ENOMEM;
	}
	if (st->rc == 0)
		st->rc = llm_sse_feed(&st->sse, buf, n);
	return st->rc;
}

/* The request headers; NULL when out of memory. */
static struct curl_slist *
headers(const struct llm_endpoint *ep, const struct llm_post *po, int stream)
{
	struct curl_slist	*hl = NULL, *nl;
	const char		*fixed[] = {
		"Content-Type: application/json",
		po->header,
		stream ? "Accept: text/event-stream" :
		    "Accept: application/json",
		"Expect:",
	};
	char			*h;
	size_t			 i, sz;

	for (i = 0; i < sizeof(fixed) / sizeof(*fixed); i++) {
		if (fixed[i] == NULL)
			continue;
		if ((nl = curl_slist_append(hl, fixed[i])) == NULL)
			goto fail;
		hl = nl;
	}
	if (ep->api_key[0] != '\0') {
		sz = strlen(po->auth) + strlen(ep->api_key) + 1;
		if ((h = malloc(sz)) == NULL)
			goto fail;
		snprintf(h, sz, "%s%s", po->auth, ep->api_key);
		nl = curl_slist_append(hl, h);
		secret_free(h);
		if (nl == NULL)
			goto fail;
		hl = nl;
	}
	return hl;
fail:
	curl_slist_free_all(hl);
	return NULL;
}

int
llm_post(struct engine *e, const struct llm_endpoint *ep,
    const struct llm_request *rq, const struct llm_post *po,
    struct llm_attempt *at, char *err, json_t **whole)
{
	struct curl_slist	*hl = NULL;
	struct outbound_req	 oreq;
	struct outbound_resp	 resp;
	struct stream		 st;
	char			*text = NULL, *url = NULL;
	char			 ferr[ENGINE_ERRMAX];
	int			 rc;

	*whole = NULL;
	memset(&resp, 0, sizeof(resp));
	memset(&st, 0, sizeof(st));
	st.po = po;
	st.sse.on_event = on_event;
	st.sse.arg = &st;
	rc = ENGINE_ENOMEM;
	if ((text = json_dumps(po->body, JSON_COMPACT)) == NULL ||
	    (url = llm_url(ep->base_url, po->path)) == NULL ||
	    (hl = headers(ep, po, rq->stream)) == NULL)
		goto out;
	memset(&oreq, 0, sizeof(oreq));
	oreq.method = "POST";
	oreq.url = url;
	oreq.headers = hl;
	oreq.body = text;
	oreq.body_len = strlen(text);
	oreq.trusted = 1;	/* the admin configured this endpoint */
	oreq.timeout = rq->timeout > 0 ? rq->timeout : e->conf->llm_timeout;
	if (rq->stream) {
		oreq.on_data = on_data;
		oreq.arg = &st;
	}
	rc = outbound_fetch(e, &oreq, ferr, &resp);
	if (st.rc != 0) {	/* the stream parse stopped the transfer */
		rc = st.rc;
		if (rc == ENGINE_ESTOPPED)
			snprintf(err, ENGINE_ERRMAX, "stopped");
		else if (rc == ENGINE_ENOMEM)
			snprintf(err, ENGINE_ERRMAX, "out of memory");
		goto out;
	}
	if (rc != 0) {
		snprintf(err, ENGINE_ERRMAX, "%.64s: %.180s", ep->name, ferr);
		llm_scrub(err, ep->api_key);
		goto out;
	}
	llm_attempt_status(at, &resp);
	if (resp.status < 200 || resp.status > 299) {
		if (rq->stream)
			llm_error_from_body(ep->name, resp.status, st.raw.p,
			    st.raw.len, ep->api_key, err);
		else
			llm_error_from_body(ep->name, resp.status, resp.body,
			    resp.len, ep->api_key, err);
		rc = ENGINE_EFETCH;
		goto out;
	}
	if (rq->stream && (rc = llm_sse_finish(&st.sse)) != 0)
		goto out;
	if (rq->stream && st.events > 0)
		goto out;
	/* Not streamed, or a server that answered a stream request with
	 * one JSON object. */
	*whole = rq->stream ? json_loadb(st.raw.p != NULL ? st.raw.p : "",
	    st.raw.len, 0, NULL) : json_loadb(resp.body, resp.len, 0, NULL);
	if (*whole == NULL) {
		snprintf(err, ENGINE_ERRMAX, "%s: the answer is not JSON",
		    ep->name);
		rc = ENGINE_EFETCH;
	}
out:
	tpl_sb_release(&st.sse.line);
	tpl_sb_release(&st.sse.data);
	tpl_sb_release(&st.raw);
	outbound_resp_release(&resp);
	curl_slist_free_all(hl);
	free(text);
	free(url);
	return rc;
}
