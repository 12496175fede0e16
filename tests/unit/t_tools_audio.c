/*
 * t_tools_audio.c — the audio provider (tts, asr) against an
 * OpenAI-compatible fake on loopback (tests/fakes/fake_audio.py) reached
 * through the catch-all model provider (llm.base_url): the request
 * bodies byte for byte (the speech JSON; the multipart upload with the
 * model and the file), the key as a Bearer token, the audio back as a
 * file and the transcript as text, a provider's error, a file that is
 * not audio, a model parameter of the wrong shape.
 */
#include "tap.h"
#include "t_node_run.h"

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/tools/tools.h"

static pid_t	fake_pid = -1;
static int	fake_port;

static int
fake_start(void)
{
	int	 fds[2];
	char	 line[64];
	FILE	*f;

	if (pipe(fds) != 0)
		return -1;
	if ((fake_pid = fork()) == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execlp("python3", "python3", "tests/fakes/fake_audio.py",
		    (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (fake_pid < 0 || (f = fdopen(fds[0], "r")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) == NULL ||
	    sscanf(line, "%d", &fake_port) != 1) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

/* The fake's last request (new reference) or NULL. */
static json_t *
last_request(void)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	char			 err[ENGINE_ERRMAX], url[128];
	json_t			*all, *v = NULL;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/_requests", fake_port);
	memset(&req, 0, sizeof(req));
	req.url = url;
	req.trusted = 1;
	if (outbound_fetch(tn_engine, &req, err, &resp) != 0)
		return NULL;
	all = json_loadb(resp.body, resp.len, 0, NULL);
	outbound_resp_release(&resp);
	if (json_array_size(all) > 0)
		v = json_incref(json_array_get(all, json_array_size(all) - 1));
	json_decref(all);
	return v;
}

/* The body of request q, decoded (malloc'd), its length in *len. */
static char *
body_of(const json_t *q, size_t *len)
{
	const char	*b = json_string_value(json_object_get(q, "body_b64"));
	char		*out = NULL;

	*len = 0;
	if (b == NULL || file_b64_decode(b, strlen(b), &out, len) != 0)
		return NULL;
	return out;
}

static const char *
header(const json_t *q, const char *name)
{
	const char *s = json_string_value(json_object_get(json_object_get(q,
	    "headers"), name));

	return s ? s : "(none)";
}

static int
call(const char *tool, json_t *p, struct tool_result *r, char *err)
{
	struct tool_call	c;
	int			rc;

	memset(&c, 0, sizeof(c));
	memset(r, 0, sizeof(*r));
	c.provider = "audio";
	c.provider_type = "builtin";
	c.tool = tool;
	c.params = p;
	err[0] = '\0';
	rc = tool_invoke(tn_engine, &c, err, r);
	json_decref(p);
	return rc;
}

static void
test_tts(void)
{
	static const char	 audio[] = "ID3\x03\x00" "fake-mp3\x00\xff\xfe";
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], *body, *bytes = NULL;
	const char		*url, *comma;
	json_t			*q, *f;
	size_t			 len, n = 0;

	CHECK(call("tts", json_pack("{s:s,s:s,s:s}", "text", "你好, world",
	    "model", "my-tts#tts-1", "voice#my-tts#tts-1", "nova"), &r, err) ==
	    0);
	CHECK_STR(r.text.p ? r.text.p : "", "Audio generated successfully");
	f = json_array_get(r.files, 0);
	CHECK_STR(json_string_value(json_object_get(f, "mime_type")),
	    "audio/mpeg");
	url = json_string_value(json_object_get(f, "url"));
	comma = url ? strchr(url, ',') : NULL;
	CHECK(comma != NULL && file_b64_decode(comma + 1, strlen(comma + 1),
	    &bytes, &n) == 0);
	CHECK(n == sizeof(audio) - 1 && bytes != NULL && memcmp(bytes, audio,
	    n) == 0);
	free(bytes);
	tool_result_release(&r);
	if (!CHECK((q = last_request()) != NULL))
		return;
	CHECK_STR(json_string_value(json_object_get(q, "path")),
	    "/v1/audio/speech");
	CHECK_STR(header(q, "authorization"), "Bearer sk-audio-test");
	CHECK_STR(header(q, "content-type"), "application/json");
	body = body_of(q, &len);
	CHECK_STR(body ? body : "(none)", "{\"model\":\"tts-1\",\"input\":"
	    "\"你好, world\",\"voice\":\"nova\",\"response_format\":"
	    "\"mp3\"}");
	free(body);
	json_decref(q);

	/* no voice: the first of OpenAI's */
	CHECK(call("tts", json_pack("{s:s,s:s}", "text", "hi", "model",
	    "my-tts#tts-1"), &r, err) == 0);
	tool_result_release(&r);
	q = last_request();
	body = body_of(q, &len);
	CHECK(body != NULL && strstr(body, "\"voice\":\"alloy\"") != NULL);
	free(body);
	json_decref(q);

	/* the provider's error, its key not in it */
	CHECK(call("tts", json_pack("{s:s,s:s,s:s}", "text", "hi", "model",
	    "my-tts#tts-1", "voice#my-tts#tts-1", "fail"), &r, err) ==
	    ENGINE_EFETCH);
	CHECK(strstr(err, "bad voice") != NULL && strstr(err, "400") != NULL);
	CHECK(strstr(err, "sk-audio-test") == NULL);
	tool_result_release(&r);
	CHECK(call("tts", json_pack("{s:s,s:s}", "text", "hi", "model",
	    "tts-1"), &r, err) == ENGINE_EINVAL);
	CHECK(r.final == 1 && strstr(err, "provider#model") != NULL);
	tool_result_release(&r);
}

static void
test_asr(void)
{
	static const char	 wav[] = "RIFF\x24\x00\x00\x00WAVEfmt \x00\r\n--x";
	struct tool_result	 r;
	struct dbuf		 want;
	char			 err[ENGINE_ERRMAX], *body;
	const char		*ct, *bnd;
	json_t			*q, *f;
	size_t			 len;

	f = file_from_bytes("voice.wav", "audio/wav", wav, sizeof(wav) - 1);
	json_object_set_new(f, "type", json_string("audio"));
	CHECK(call("asr", json_pack("{s:o,s:s}", "audio_file", f, "model",
	    "my-tts#whisper-1"), &r, err) == 0);
	CHECK_STR(r.text.p ? r.text.p : "", "hello from the fake");
	tool_result_release(&r);
	if (!CHECK((q = last_request()) != NULL))
		return;
	CHECK_STR(json_string_value(json_object_get(q, "path")),
	    "/v1/audio/transcriptions");
	CHECK_STR(header(q, "authorization"), "Bearer sk-audio-test");
	ct = header(q, "content-type");
	CHECK(strncmp(ct, "multipart/form-data; boundary=", 30) == 0);
	bnd = strchr(ct, '=') ? strchr(ct, '=') + 1 : "";
	dbuf_init(&want, 0);
	dbuf_addf(&want, "--%s\r\nContent-Disposition: form-data; "
	    "name=\"model\"\r\n\r\nwhisper-1\r\n--%s\r\nContent-Disposition: "
	    "form-data; name=\"file\"; filename=\"temp.mp3\"\r\nContent-Type: "
	    "audio/mpeg\r\n\r\n", bnd, bnd);
	dbuf_add(&want, wav, sizeof(wav) - 1);
	dbuf_addf(&want, "\r\n--%s--\r\n", bnd);
	body = body_of(q, &len);
	CHECK(body != NULL && len == want.len && memcmp(body, want.p, len) ==
	    0);
	free(body);
	dbuf_free(&want);
	json_decref(q);

	/* not audio: Dify's message, no request */
	f = file_from_bytes("a.png", "image/png", "x", 1);
	json_object_set_new(f, "type", json_string("image"));
	CHECK(call("asr", json_pack("{s:o,s:s}", "audio_file", f, "model",
	    "my-tts#whisper-1"), &r, err) == 0);
	CHECK_STR(r.text.p ? r.text.p : "", "not a valid audio file");
	tool_result_release(&r);
	CHECK(call("asr", json_pack("{s:s}", "model", "my-tts#whisper-1"), &r,
	    err) == ENGINE_EINVAL);
	CHECK(r.final == 1);
	tool_result_release(&r);
}

int
main(void)
{
	if (system("command -v python3 >/dev/null 2>&1") != 0) {
		tap_skip("python3 is not installed: tests/fakes/fake_audio.py "
		    "did not run");
		return tap_done();
	}
	if (!CHECK(fake_start() == 0))
		return tap_done();
	tn_open();
	snprintf(tn_conf.llm_base_url, sizeof(tn_conf.llm_base_url),
	    "http://127.0.0.1:%d/v1", fake_port);
	snprintf(tn_conf.llm_api_key, sizeof(tn_conf.llm_api_key),
	    "sk-audio-test");
	test_tts();
	test_asr();
	kill(fake_pid, SIGTERM);
	waitpid(fake_pid, NULL, 0);
	tn_close();
	return tap_done();
}
