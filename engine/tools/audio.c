/*
 * audio.c — Dify's builtin `audio` provider
 * (api/core/tools/builtin_tool/providers/audio/tools/): text to speech and
 * speech to text through the model providers of Settings > Model
 * Providers (engine/llm/providers.c), on their OpenAI-compatible API.
 *
 *   tts   text; model "provider#model" (form); voice#provider#model (the
 *         voice, form; "alloy" when none, the first of OpenAI's): POST
 *         <base_url>/audio/speech {"model", "input", "voice",
 *         "response_format": "mp3"}; answers "Audio generated
 *         successfully" and the audio as a file (the answer's audio
 *         Content-Type when it is audio, else Dify's audio/x-wav).
 *   asr   audio_file (a file of type audio); model "provider#model": POST
 *         <base_url>/audio/transcriptions, multipart/form-data with the
 *         fields model and file (named temp.mp3, as Dify names it;
 *         llm_audio_transcription, shared with /v1/audio-to-text);
 *         answers the transcript's `text`, or "not a valid audio file".
 *
 * The endpoint is the one llm_provider_resolve finds for the provider
 * and model (an admin's: trusted), with its API key as a Bearer token;
 * an entry of the anthropic protocol has no audio API and fails. The
 * request may take llm.timeout seconds; the audio sent is at most
 * tools.max_file_size bytes, the audio received http.max_binary_response.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "engine/tools/tools.h"

#define AUDIO_VOICE	"alloy"

static const struct tool_param p_tts[] = {
	{ "text", "string", 1, "The text to be converted." },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_asr[] = {
	{ "audio_file", "object", 1, "The audio file to be converted." },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_def defs[] = {
	{ "tts", "Convert text to audio file.", p_tts },
	{ "asr", "Convert audio file to text.", p_asr },
	{ NULL, NULL, NULL },
};

/*
 * The endpoint of the node's model parameter "provider#model": *model
 * points into *buf (free it). Returns 0 or ENGINE_EINVAL (final).
 */
static int
audio_endpoint(struct engine *e, const json_t *params, char *err,
    struct llm_endpoint *ep, char **buf, const char **provider,
    const char **model)
{
	const char	*m;
	char		*hash;
	int		 rc;

	*buf = NULL;
	m = tool_param_str(params, "model", buf);
	if (m == NULL || (hash = strchr(m, '#')) == NULL || hash == m ||
	    hash[1] == '\0' || strchr(hash + 1, '#') != NULL ||
	    strpbrk(m, "\r\n\"") != NULL)
		return engine_invalid(err, "the parameter model must be "
		    "\"provider#model\" (the node's Model setting)");
	if (*buf == NULL && (*buf = strdup(m)) == NULL)
		return ENGINE_ENOMEM;
	hash = strchr(*buf, '#');
	*hash = '\0';
	*provider = *buf;
	*model = hash + 1;
	if ((rc = llm_provider_resolve(e, *provider, *model, err, ep)) != 0)
		return rc;
	if (strcmp(ep->protocol, "openai") != 0) {
		llm_endpoint_release(ep);
		return engine_invalid(err, "the model provider '%s' speaks the "
		    "%s protocol, which has no audio API", *provider,
		    ep->protocol);
	}
	return 0;
}

static int
tts(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct llm_endpoint	 ep;
	struct outbound_resp	 resp;
	const char		*provider, *model, *text, *voice;
	char			*bm = NULL, *bt = NULL, *bv = NULL, *body = NULL;
	char			 vname[300], mime[64];
	json_t			*req = NULL, *file;
	int			 rc, have_ep = 0;

	memset(&ep, 0, sizeof(ep));
	memset(&resp, 0, sizeof(resp));
	text = tool_param_str(call->params, "text", &bt);
	if (text == NULL || *text == '\0') {
		out->final = 1;
		rc = engine_invalid(err, "tts needs the parameter text");
		goto out;
	}
	if ((rc = audio_endpoint(e, call->params, err, &ep, &bm, &provider,
	    &model)) != 0) {
		out->final = rc == ENGINE_EINVAL;
		goto out;
	}
	have_ep = 1;
	snprintf(vname, sizeof(vname), "voice#%s#%s", provider, model);
	voice = tool_param_str(call->params, vname, &bv);
	if (voice == NULL || *voice == '\0')
		voice = AUDIO_VOICE;
	if ((req = json_pack("{s:s,s:s,s:s,s:s}", "model", model, "input",
	    text, "voice", voice, "response_format", "mp3")) == NULL ||
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
		snprintf(mime, sizeof(mime), "%.*s", (int)strcspn(
		    resp.content_type, "; "), resp.content_type);
	else
		snprintf(mime, sizeof(mime), "audio/x-wav");
	if ((rc = tool_result_text(out, "Audio generated successfully",
	    28)) != 0)
		goto out;
	if ((file = file_from_bytes(NULL, mime, resp.body, resp.len)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = tool_result_file(out, file);
out:
	outbound_resp_release(&resp);
	if (have_ep)
		llm_endpoint_release(&ep);
	json_decref(req);
	free(body);
	free(bm);
	free(bt);
	free(bv);
	return rc;
}

/* 1 when f is an audio file: Dify's type "audio", else an audio MIME
 * type or a common audio extension when the type is missing. */
static int
is_audio(const json_t *f)
{
	static const char *const exts[] = { "mp3", "m4a", "wav", "webm",
	    "amr", "mpga", "mp4", "mpeg", "ogg", "flac", "aac", "opus",
	    NULL };
	const char	*type = json_string_value(json_object_get(f, "type"));
	const char	*mime = json_string_value(json_object_get(f,
			    "mime_type"));
	char		 ext[32];
	size_t		 i;

	if (!json_is_object(f))
		return 0;
	if (type != NULL && strcmp(type, "custom") != 0)
		return strcmp(type, "audio") == 0;
	if (mime != NULL && strncmp(mime, "audio/", 6) == 0)
		return 1;
	file_ext(f, ext, sizeof(ext));
	for (i = 0; exts[i] != NULL; i++)
		if (strcmp(ext, exts[i]) == 0)
			return 1;
	return 0;
}

static int
asr(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct llm_endpoint	 ep;
	const json_t		*f = json_object_get(call->params, "audio_file");
	const char		*provider, *model;
	char			*bm = NULL, *data = NULL, *text = NULL;
	size_t			 len;
	int			 rc, have_ep = 0;

	memset(&ep, 0, sizeof(ep));
	if (json_is_array(f))
		f = json_array_get(f, 0);
	if (f == NULL || json_is_null(f)) {
		out->final = 1;
		rc = engine_invalid(err, "asr needs the parameter audio_file");
		goto out;
	}
	if (!is_audio(f)) {
		rc = tool_result_text(out, "not a valid audio file", 22);
		goto out;
	}
	if ((rc = audio_endpoint(e, call->params, err, &ep, &bm, &provider,
	    &model)) != 0) {
		out->final = rc == ENGINE_EINVAL;
		goto out;
	}
	have_ep = 1;
	if ((rc = tool_file_bytes(e, f, "audio file", err, &data, &len)) != 0)
		goto out;
	/* Dify's tool sends every file as audio/mpeg */
	if ((rc = llm_audio_transcription(e, &ep, model, NULL, data, len, err,
	    &text)) != 0)
		goto out;
	rc = tool_result_text(out, text, strlen(text));
out:
	if (have_ep)
		llm_endpoint_release(&ep);
	free(text);
	free(data);
	free(bm);
	return rc;
}

static int
audio_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
audio_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	if (strcmp(call->tool, "tts") == 0)
		return tts(e, call, err, out);
	if (strcmp(call->tool, "asr") == 0)
		return asr(e, call, err, out);
	engine_invalid(err, "tool '%s/%s' is not available in flowcgi",
	    call->provider, call->tool);
	return ENGINE_ENOTFOUND;
}

const struct tool_provider tool_provider_audio = {
	"audio", audio_list, audio_invoke, 0,
};
