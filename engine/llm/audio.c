/*
 * audio.c — speech to text and text to speech through a model provider's
 * OpenAI-compatible audio API, for the service API's /v1/audio-to-text
 * and /v1/text-to-audio (fcgi/service_audio.c):
 *
 *   POST <base_url>/audio/transcriptions   multipart: model, file
 *   POST <base_url>/audio/speech           {model, input, voice,
 *                                           response_format: "mp3"}
 *
 * The model is "provider#model" (audio.speech_to_text_model,
 * audio.text_to_speech_model); the endpoint is what llm_provider_resolve
 * finds for it, its API key a Bearer token. An anthropic entry has no
 * audio API and is refused. A request may take llm.timeout seconds; the
 * audio received is at most http.max_binary_response bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "engine/llm/llm.h"

/* The endpoint of spec "provider#model"; *model points into *buf. */
static int
audio_endpoint(struct engine *e, const char *spec, char *err,
    struct llm_endpoint *ep, char **buf, const char **model)
{
	char	*hash;
	int	 rc;

	if ((*buf = strdup(spec != NULL ? spec : "")) == NULL)
		return ENGINE_ENOMEM;
	if ((hash = strchr(*buf, '#')) == NULL || hash == *buf ||
	    hash[1] == '\0')
		return engine_invalid(err, "the audio model '%.100s' is not "
		    "\"provider#model\"", spec ? spec : "");
	*hash = '\0';
	*model = hash + 1;
	if ((rc = llm_provider_resolve(e, *buf, *model, err, ep)) != 0)
		return rc;
	if (strcmp(ep->protocol, "openai") != 0) {
		llm_endpoint_release(ep);
		return engine_invalid(err, "model provider '%.100s' has no "
		    "OpenAI-compatible audio API", *buf);
	}
	return 0;
}

int
llm_audio_post(struct engine *e, const struct llm_endpoint *ep,
    const char *path, const char *ctype, const void *body, size_t len,
    int64_t max, char *err, struct outbound_resp *resp)
{
	struct curl_slist	*hl = NULL, *nl;
	struct outbound_req	 req;
	char			*url = NULL, *auth = NULL, h[160];
	size_t			 n;
	int			 rc = ENGINE_ENOMEM;

	memset(resp, 0, sizeof(*resp));
	if ((url = llm_url(ep->base_url, path)) == NULL)
		goto out;
	snprintf(h, sizeof(h), "Content-Type: %s", ctype);
	if ((hl = curl_slist_append(NULL, h)) == NULL)
		goto out;
	if (ep->api_key != NULL && ep->api_key[0] != '\0') {
		n = strlen(ep->api_key) + sizeof("Authorization: Bearer ");
		if ((auth = malloc(n)) == NULL)
			goto out;
		snprintf(auth, n, "Authorization: Bearer %s", ep->api_key);
		if ((nl = curl_slist_append(hl, auth)) == NULL)
			goto out;
		hl = nl;
	}
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = url;
	req.headers = hl;
	req.body = body;
	req.body_len = len;
	req.trusted = 1;	/* the admin configured this endpoint */
	req.timeout = e->conf->llm_timeout;
	req.max_bytes = max;
	if ((rc = outbound_fetch(e, &req, err, resp)) != 0)
		goto out;
	if (resp->status < 200 || resp->status >= 300) {
		llm_error_from_body(ep->name, resp->status, resp->body,
		    resp->len, ep->api_key, err);
		outbound_resp_release(resp);
		rc = ENGINE_EFETCH;
	}
out:
	if (auth != NULL) {
		OPENSSL_cleanse(auth, strlen(auth));
		free(auth);
	}
	curl_slist_free_all(hl);
	free(url);
	if (rc != 0 && ep->api_key != NULL)
		llm_scrub(err, ep->api_key);
	return rc;
}

int
llm_audio_transcription(struct engine *e, const struct llm_endpoint *ep,
    const char *model, const char *mime, const void *audio, size_t len,
    char *err, char **text)
{
	struct outbound_resp	 resp;
	struct dbuf		 b;
	const char		*t;
	unsigned char		 rnd[12];
	char			 boundary[64], ctype[128];
	json_t			*j = NULL;
	size_t			 i;
	int			 rc;

	*text = NULL;
	memset(&resp, 0, sizeof(resp));
	dbuf_init(&b, 0);
	if (RAND_bytes(rnd, sizeof(rnd)) != 1) {
		rc = engine_invalid(err, "no random bytes for the multipart "
		    "boundary");
		goto out;
	}
	snprintf(boundary, sizeof(boundary), "flowcgi-");
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(boundary + 8 + 2 * i, sizeof(boundary) - 8 - 2 * i,
		    "%02x", rnd[i]);
	/* Dify sends the upload as temp.mp3 whatever it was */
	dbuf_addf(&b, "--%s\r\nContent-Disposition: form-data; name=\"model\""
	    "\r\n\r\n%s\r\n--%s\r\nContent-Disposition: form-data; "
	    "name=\"file\"; filename=\"temp.mp3\"\r\nContent-Type: %s"
	    "\r\n\r\n", boundary, model, boundary, mime != NULL &&
	    strncmp(mime, "audio/", 6) == 0 && strcspn(mime, "\r\n\"") ==
	    strlen(mime) ? mime : "audio/mpeg");
	dbuf_add(&b, audio, len);
	dbuf_addf(&b, "\r\n--%s--\r\n", boundary);
	if (b.err != DBUF_OK) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	snprintf(ctype, sizeof(ctype), "multipart/form-data; boundary=%s",
	    boundary);
	if ((rc = llm_audio_post(e, ep, "/audio/transcriptions", ctype, b.p,
	    b.len, 0, err, &resp)) != 0)
		goto out;
	j = json_loadb(resp.body, resp.len, 0, NULL);
	if ((t = json_string_value(json_object_get(j, "text"))) == NULL) {
		rc = engine_invalid(err, "%s: the transcription answer has no "
		    "text", ep->name);
		goto out;
	}
	rc = (*text = strdup(t)) != NULL ? 0 : ENGINE_ENOMEM;
out:
	outbound_resp_release(&resp);
	json_decref(j);
	dbuf_free(&b);
	return rc;
}

int
llm_audio_transcribe(struct engine *e, const char *spec, const char *audio,
    size_t len, const char *mime, char *err, char **out)
{
	struct llm_endpoint	 ep;
	const char		*model = NULL;
	char			*buf = NULL;
	int			 rc;

	*out = NULL;
	memset(&ep, 0, sizeof(ep));
	if ((rc = audio_endpoint(e, spec, err, &ep, &buf, &model)) != 0)
		goto out;
	rc = llm_audio_transcription(e, &ep, model, mime, audio, len, err,
	    out);
	llm_endpoint_release(&ep);
out:
	free(buf);
	return rc;
}

int
llm_audio_speech(struct engine *e, const char *spec, const char *text,
    const char *voice, char *err, char **out, size_t *outlen, char mime[64])
{
	struct llm_endpoint	 ep;
	struct outbound_resp	 resp;
	const char		*model = NULL;
	char			*buf = NULL, *body = NULL;
	json_t			*req = NULL;
	int			 rc, have_ep = 0;

	*out = NULL;
	*outlen = 0;
	memset(&ep, 0, sizeof(ep));
	memset(&resp, 0, sizeof(resp));
	if ((rc = audio_endpoint(e, spec, err, &ep, &buf, &model)) != 0)
		goto out;
	have_ep = 1;
	if ((req = json_pack("{s:s,s:s,s:s,s:s}", "model", model, "input",
	    text, "voice", voice != NULL && *voice != '\0' ? voice : "alloy",
	    "response_format", "mp3")) == NULL ||
	    (body = json_dumps(req, JSON_COMPACT | JSON_PRESERVE_ORDER)) ==
	    NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = llm_audio_post(e, &ep, "/audio/speech", "application/json",
	    body, strlen(body), e->conf->http_max_binary_response, err,
	    &resp)) != 0)
		goto out;
	if (resp.content_type != NULL && strncmp(resp.content_type,
	    "audio/", 6) == 0)
		snprintf(mime, 64, "%.*s", (int)strcspn(resp.content_type,
		    "; "), resp.content_type);
	else
		snprintf(mime, 64, "audio/mpeg");
	if ((*out = malloc(resp.len + 1)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	memcpy(*out, resp.body, resp.len);
	*outlen = resp.len;
	rc = 0;
out:
	outbound_resp_release(&resp);
	if (have_ep)
		llm_endpoint_release(&ep);
	json_decref(req);
	free(body);
	free(buf);
	return rc;
}
