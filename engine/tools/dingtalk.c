/*
 * dingtalk.c — the DingTalk group bot (langgenius/dingtalk,
 * dingtalk_group_bot): a message posted to a custom robot's webhook
 * signed as DingTalk's security settings ask
 * (https://open.dingtalk.com/document/robots/customize-robot-security-
 * settings): timestamp = now in ms, sign = urlencode(base64(HMAC-SHA256(
 * key = sign_secret, "<timestamp>\n<sign_secret>"))), both in the query
 * beside access_token. Parameters, messages and answers as the plugin's
 * tools/dingtalk_group_bot.py; DingTalk's errcode in a 200 answer is
 * reported too. The credential base_url (for tests) replaces
 * https://oapi.dingtalk.com and is trusted as an admin's endpoint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "engine/tools/tools.h"

#define DINGTALK_URL	"https://oapi.dingtalk.com"

static const char security_doc[] = "Regarding information about security "
    "details,please refer to the DingTalk docs:https://open.dingtalk.com/"
    "document/robots/customize-robot-security-settings";

static const struct tool_param params[] = {
	{ "access_token", "string", 1, "The access token of the robot's "
	    "webhook URL" },
	{ "sign_secret", "string", 1, "The robot's signing secret (SEC...)" },
	{ "content", "string", 1, "Content to send to the group." },
	{ "message_type", "string", 0, "text or markdown" },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def defs[] = {
	{ "dingtalk_group_bot", "A tool for sending a message to a DingTalk "
	    "group through its robot.", params },
	{ NULL, NULL, NULL },
};

/*
 * The signature DingTalk checks: base64 of HMAC-SHA256 keyed by secret
 * over "<ts>\n<secret>", percent-encoded (libcurl). *out malloc'd.
 */
static int
dingtalk_sign(const char *ts, const char *secret, char **out)
{
	unsigned char	 mac[EVP_MAX_MD_SIZE], b64[4 * EVP_MAX_MD_SIZE];
	unsigned int	 maclen = 0;
	struct dbuf	 msg = { 0 };
	char		*esc;
	int		 n;

	*out = NULL;
	dbuf_addf(&msg, "%s\n%s", ts, secret);
	if (msg.err || HMAC(EVP_sha256(), secret, (int)strlen(secret),
	    (const unsigned char *)msg.p, msg.len, mac, &maclen) == NULL) {
		dbuf_free(&msg);
		return ENGINE_ENOMEM;
	}
	dbuf_free(&msg);
	n = EVP_EncodeBlock(b64, mac, (int)maclen);
	OPENSSL_cleanse(mac, sizeof(mac));
	if ((esc = curl_easy_escape(NULL, (const char *)b64, n)) == NULL)
		return ENGINE_ENOMEM;
	*out = strdup(esc);
	curl_free(esc);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
dt_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
text(struct tool_result *out, const char *s)
{
	return tool_result_text(out, s, strlen(s));
}

static int
dt_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	struct curl_slist	*hdrs = NULL;
	struct timespec		 now;
	struct dbuf		 url = { 0 }, msg = { 0 };
	const char		*content, *token, *secret, *type, *base;
	char			*b1 = NULL, *b2 = NULL, *b3 = NULL, *b4 = NULL;
	char			 ts[32], *sign = NULL, *tok = NULL, *body = NULL;
	json_t			*payload = NULL, *ans = NULL;
	int			 rc = 0, trusted;

	memset(&resp, 0, sizeof(resp));
	if (!tool_defs_has(defs, call->tool)) {
		engine_invalid(err, "tool 'dingtalk/%s' is not available in "
		    "flowcgi", call->tool ? call->tool : "");
		return ENGINE_ENOTFOUND;
	}
	content = tool_param_str(call->params, "content", &b1);
	token = tool_param_str(call->params, "access_token", &b2);
	secret = tool_param_str(call->params, "sign_secret", &b3);
	type = tool_param_str(call->params, "message_type", &b4);
	if (content == NULL || *content == '\0') {
		rc = text(out, "Invalid parameter content");
		goto out;
	}
	if (token == NULL || *token == '\0') {
		dbuf_addf(&msg, "Invalid parameter access_token. %s",
		    security_doc);
		rc = msg.err ? ENGINE_ENOMEM : text(out, msg.p);
		goto out;
	}
	if (secret == NULL || *secret == '\0') {
		dbuf_addf(&msg, "Invalid parameter sign_secret. %s",
		    security_doc);
		rc = msg.err ? ENGINE_ENOMEM : text(out, msg.p);
		goto out;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(ts, sizeof(ts), "%lld", (long long)now.tv_sec * 1000 +
	    now.tv_nsec / 1000000);
	if ((rc = dingtalk_sign(ts, secret, &sign)) != 0 ||
	    (tok = curl_easy_escape(NULL, token, 0)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	base = json_string_value(json_object_get(call->credentials,
	    "base_url"));
	trusted = base != NULL && *base != '\0';
	dbuf_addf(&url, "%s/robot/send?access_token=%s&timestamp=%s&sign=%s",
	    trusted ? base : DINGTALK_URL, tok, ts, sign);
	if (type != NULL && strcmp(type, "markdown") == 0)
		payload = json_pack("{s:s,s:{s:s,s:s}}", "msgtype", "markdown",
		    "markdown", "text", content, "title",
		    "DingTalk message from dify");
	else
		payload = json_pack("{s:s,s:{s:s,s:s}}", "msgtype", "text",
		    "text", "content", content, "title",
		    "DingTalk message from dify");
	if (url.err || payload == NULL || (body = json_dumps(payload,
	    JSON_COMPACT)) == NULL || (hdrs = curl_slist_append(NULL,
	    "Content-Type: application/json")) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = url.p;
	req.headers = hdrs;
	req.body = body;
	req.body_len = strlen(body);
	req.trusted = trusted;
	req.timeout = e->conf->tools_timeout;
	if ((rc = outbound_fetch(e, &req, err, &resp)) != 0) {
		/* the URL holds the token: never in a message */
		snprintf(err, ENGINE_ERRMAX, "dingtalk: the robot could not be "
		    "reached");
		goto out;
	}
	ans = json_loadb(resp.body ? resp.body : "", resp.len, 0, NULL);
	if (resp.status < 200 || resp.status > 299) {
		dbuf_addf(&msg, "Failed to send the text message, status code: "
		    "%ld, response: %.300s", resp.status, resp.body ? resp.body :
		    "");
		rc = msg.err ? ENGINE_ENOMEM : text(out, msg.p);
	} else if (json_integer_value(json_object_get(ans, "errcode")) != 0) {
		/* 200 with errcode: a wrong token or signature, a keyword */
		engine_invalid(err, "dingtalk: %.180s (errcode %lld)",
		    json_string_value(json_object_get(ans, "errmsg")) ?
		    json_string_value(json_object_get(ans, "errmsg")) : "refused",
		    (long long)json_integer_value(json_object_get(ans,
		    "errcode")));
		rc = ENGINE_EFETCH;
	} else
		rc = text(out, "Text message sent successfully");
out:
	outbound_resp_release(&resp);
	curl_slist_free_all(hdrs);
	curl_free(tok);
	free(sign);
	free(body);
	free(b1);
	free(b2);
	free(b3);
	free(b4);
	dbuf_free(&url);
	dbuf_free(&msg);
	json_decref(payload);
	json_decref(ans);
	return rc;
}

const struct tool_provider tool_provider_dingtalk = {
	"dingtalk", dt_list, dt_invoke, 1,
};
