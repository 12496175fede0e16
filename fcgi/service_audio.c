/*
 * service_audio.c — Dify's audio routes of the service API
 * (api/controllers/service_api/app/audio.py, api/services/audio_service.py):
 *
 *   POST /v1/audio-to-text   multipart "file" (and "user") -> {"text"}
 *   POST /v1/text-to-audio   {text | message_id, voice?, user} -> the audio
 *
 * Each needs the app's feature (speech_to_text / text_to_speech enabled in
 * a workflow's features or a chat app's model_config), else Dify's 400
 * invalid_param "... is not enabled". The models are the settings
 * audio.speech_to_text_model and audio.text_to_speech_model, called on
 * their provider's OpenAI-compatible audio API (engine/llm/audio.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/internal.h"

/* Dify's ALLOWED_EXTENSIONS, as audio/<ext> types. */
static const char *const audio_types[] = { "mp3", "mp4", "mpeg", "mpga",
    "m4a", "wav", "webm", "amr", NULL };

/*
 * The app's feature k ({enabled, voice, ...}) from the DSL it runs, or
 * NULL; *app (new reference) to release. NULL after an answer when the
 * app cannot be read (then *app is NULL).
 */
static const json_t *
app_feature(struct req *r, const char *k, json_t **app)
{
	const json_t	*dsl, *wf;
	int		 rc;

	*app = NULL;
	if ((rc = engine_app_get_live(r->eng, r->app_id, app)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return NULL;
	}
	dsl = json_object_get(*app, "dsl");
	wf = json_object_get(dsl, "workflow");
	return json_object_get(json_is_object(wf) ? json_object_get(wf,
	    "features") : json_object_get(dsl, "model_config"), k);
}

/* Answers an engine error of the audio API as Dify's routes do. */
static void
audio_error(struct req *r, int rc, const char *err)
{
	if (rc == ENGINE_EINVAL)
		resp_error(r, 400, "provider_not_initialize", "%s", err);
	else if (rc == ENGINE_EFETCH)
		resp_error(r, 400, "completion_request_error", "%s", err);
	else
		resp_engine_error(r, rc, err, "audio");
}

static void
h_audio_to_text(struct req *r)
{
	struct mp_part	*parts;
	const json_t	*feat;
	const char	*data = NULL, *mime = NULL;
	char		 err[ENGINE_ERRMAX] = "", *text = NULL;
	json_t		*app = NULL;
	size_t		 n, i, len = 0, k;
	int		 rc, ok = 0;

	if (req_read_body(r, r->conf->max_body) != 0)
		return;
	feat = app_feature(r, "speech_to_text", &app);
	if (app == NULL)
		return;
	if (!json_is_true(json_object_get(feat, "enabled"))) {
		resp_error(r, 400, "invalid_param", "Speech to text is not "
		    "enabled");
		goto out;
	}
	if (multipart_parse(r->a, r->content_type, r->body, r->body_len, 8,
	    &parts, &n, err, sizeof(err)) != 0) {
		resp_error(r, 400, "invalid_multipart", "%s", err);
		goto out;
	}
	for (i = 0; i < n && data == NULL; i++)
		if (strcmp(parts[i].name, "file") == 0) {
			data = parts[i].data;
			len = parts[i].len;
			mime = parts[i].content_type;
		}
	if (data == NULL) {
		resp_error(r, 400, "no_audio_uploaded", "Please upload your "
		    "audio.");
		goto out;
	}
	/* the type without its parameters, as Werkzeug's mimetype: a
	 * browser's recorder sends "audio/webm;codecs=opus" */
	for (k = 0; audio_types[k] != NULL && mime != NULL; k++) {
		size_t tl = strcspn(mime, "; \t");

		if (tl > 6 && strncmp(mime, "audio/", 6) == 0 &&
		    strlen(audio_types[k]) == tl - 6 &&
		    strncmp(mime + 6, audio_types[k], tl - 6) == 0)
			ok = 1;
	}
	if (!ok) {
		resp_error(r, 415, "unsupported_audio_type", "Audio type not "
		    "allowed.");
		goto out;
	}
	if ((int64_t)len > r->conf->audio_max_upload) {
		resp_error(r, 413, "audio_too_large", "Audio size larger than "
		    "%lld bytes (audio.max_upload)",
		    (long long)r->conf->audio_max_upload);
		goto out;
	}
	if ((rc = llm_audio_transcribe(r->eng, r->conf->audio_stt_model, data,
	    len, mime, err, &text)) != 0) {
		audio_error(r, rc, err);
		goto out;
	}
	resp_json(r, 200, json_pack("{s:s}", "text", text));
out:
	free(text);
	json_decref(app);
}

static void
h_text_to_audio(struct req *r)
{
	const json_t	*feat;
	const char	*text = NULL, *voice = NULL, *msg_id = NULL, *user;
	char		 err[ENGINE_ERRMAX] = "", mime[64], *audio = NULL;
	json_t		*app = NULL, *msg = NULL;
	size_t		 len = 0;
	int		 rc;

	if (req_read_json(r) != 0 ||
	    req_json_string(r, "user", 1, &user) != 0 ||
	    req_json_string(r, "text", 0, &text) != 0 ||
	    req_json_string(r, "voice", 0, &voice) != 0 ||
	    req_json_string(r, "message_id", 0, &msg_id) != 0)
		return;
	feat = app_feature(r, "text_to_speech", &app);
	if (app == NULL)
		return;
	if (!json_is_true(json_object_get(feat, "enabled"))) {
		resp_error(r, 400, "invalid_param", "TTS is not enabled");
		goto out;
	}
	if (voice == NULL || *voice == '\0')
		voice = json_string_value(json_object_get(feat, "voice"));
	/* a message's answer, as AudioService.transcript_tts reads it */
	if (msg_id != NULL && *msg_id != '\0') {
		if ((rc = engine_message_get(r->eng, r->app_id, user, msg_id,
		    &msg)) != 0) {
			resp_error(r, 404, "not_found", "Message Not Exists.");
			goto out;
		}
		text = json_string_value(json_object_get(msg, "answer"));
	}
	if (text == NULL || *text == '\0') {
		resp_error(r, 400, "invalid_param", "text or message_id is "
		    "required");
		goto out;
	}
	if ((rc = llm_audio_speech(r->eng, r->conf->audio_tts_model, text,
	    voice, err, &audio, &len, mime)) != 0) {
		audio_error(r, rc, err);
		goto out;
	}
	resp_bytes(r, 200, mime, audio, len);
out:
	free(audio);
	json_decref(msg);
	json_decref(app);
}

const struct route service_audio_routes[] = {
	{ "POST", "/v1/audio-to-text", h_audio_to_text, AUTH_APP |
	    WEB_ROUTE | WEB_RUN },
	{ "POST", "/v1/text-to-audio", h_text_to_audio, AUTH_APP |
	    WEB_ROUTE | WEB_RUN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
