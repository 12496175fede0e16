/*
 * codec.c — the Dify plugin bowenliang123/base64_codec (provider
 * base64_codec), served locally, after its tools/ scripts:
 *
 *	base64_encoder (plain_text, urlsafe_enabled)	text -> base64 text
 *	base64_decoder (encoded_text, urlsafe_enabled)	base64 -> UTF-8 text
 *	base64_file_encoder (input_file)		file -> base64 text
 *	base64_image_encoder (input_image)		file -> data:<mime>;base64,...
 *	hex_to_base64 (hex_text, urlsafe_enabled)	hex -> base64 text
 *	base64_to_hex (encoded_text, urlsafe_enabled)	base64 -> hex text
 *	base64_file_decoder (encoded_text, output_filename, splitter_str)
 *	base64_image_decoder (encoded_text, output_filename, splitter_str)
 *							base64 -> files
 *
 * urlsafe_enabled is the string "true" (anything else is false), as the
 * plugin reads it. Decoding is Python's non-strict b64decode: characters
 * outside the alphabet are dropped, the padding must be complete
 * ("Incorrect padding" otherwise). Like the plugin, a failure raises:
 * ENGINE_EINVAL with the plugin's message ("Failed to decode Base64 text
 * input, Exception: ..."). The decoders split encoded_text by
 * splitter_str ("\n\n" by default, a written "\n" meaning a newline) into
 * one file per part, named by the lines of output_filename; a part's
 * "data:...," prefix is dropped, an image's MIME type taken from it
 * (image/png without one), a file's from its first bytes (with the
 * extension added to its name), else from its name. An input file is
 * read from its data: URL (the files flowcgi makes) or fetched from its
 * http(s) URL through the outbound client (SSRF guard); at most
 * CODEC_MAX_BYTES either way.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tools/tools.h"

#define CODEC_MAX_BYTES		(16 * 1024 * 1024)	/* bytes in or out */
#define CODEC_MAX_FILES		64	/* files one decoder call makes */

/* ====== Base64 ====== */

static char *
b64_encode(const void *data, size_t n, int urlsafe)
{
	char	*s = file_b64_encode(data, n), *p;

	for (p = s; urlsafe && p != NULL && *p != '\0'; p++)
		if (*p == '+')
			*p = '-';
		else if (*p == '/')
			*p = '_';
	return s;
}

/*
 * Python's b64decode(s, validate=False) (urlsafe: urlsafe_b64decode):
 * bytes outside the alphabet dropped, then the padding checked. *out
 * malloc'd, NUL-terminated. Returns 0, ENGINE_EINVAL with why in err
 * (Python's words), ENGINE_ENOMEM or ENGINE_ELIMIT.
 */
static int
b64_decode(const char *s, size_t n, int urlsafe, int plain, char *why,
    size_t whysz, char **out, size_t *outlen)
{
	char	*f = NULL;
	size_t	 i, d = 0, pads = 0;
	int	 rc;

	*out = NULL;
	*outlen = 0;
	if (n > CODEC_MAX_BYTES * 2) {
		snprintf(why, whysz, "the input is larger than %d bytes",
		    CODEC_MAX_BYTES * 2);
		return ENGINE_ELIMIT;
	}
	if ((f = malloc(n + 1)) == NULL)
		return ENGINE_ENOMEM;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (isalnum(c) || c == '+' || c == '/')
			f[d++] = (char)c;
		else if (urlsafe && (c == '-' || c == '_'))
			f[d++] = c == '-' ? '+' : '/';
		else if (c == '=')
			pads++;
	}
	f[d] = '\0';
	if (d % 4 == 1) {
		snprintf(why, whysz, "Invalid base64-encoded string: number of "
		    "data characters (%zu) cannot be 1 more than a multiple "
		    "of 4", d);
		rc = ENGINE_EINVAL;
		goto out;
	}
	if (!plain && ((d % 4 == 2 && pads < 2) || (d % 4 == 3 &&
	    pads < 1))) {
		snprintf(why, whysz, "Incorrect padding");
		rc = ENGINE_EINVAL;
		goto out;
	}
	if (file_b64_decode(f, d, out, outlen) != 0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = 0;
out:
	free(f);
	return rc;
}

/* 1 when n bytes at s are UTF-8 (no NUL: a text message cannot hold
 * one). */
static int
utf8_ok(const char *s, size_t n)
{
	json_t	*v;

	if (memchr(s, '\0', n) != NULL)
		return 0;
	v = json_stringn(s, n);
	json_decref(v);
	return v != NULL;
}

/* ====== Files ====== */

/* What a file's first bytes say it is (after Python's filetype). */
static const struct magic {
	const char	*sig;
	size_t		 off, len;
	const char	*mime, *ext;
} magics[] = {
	{ "\x89PNG\r\n\x1a\n", 0, 8, "image/png", "png" },
	{ "\xff\xd8\xff", 0, 3, "image/jpeg", "jpg" },
	{ "GIF8", 0, 4, "image/gif", "gif" },
	{ "WEBP", 8, 4, "image/webp", "webp" },
	{ "BM", 0, 2, "image/bmp", "bmp" },
	{ "%PDF", 0, 4, "application/pdf", "pdf" },
	{ "PK\x03\x04", 0, 4, "application/zip", "zip" },
	{ "\x1f\x8b", 0, 2, "application/gzip", "gz" },
	{ "ID3", 0, 3, "audio/mpeg", "mp3" },
	{ "ftyp", 4, 4, "video/mp4", "mp4" },
	{ NULL, 0, 0, NULL, NULL },
};

static const struct magic *
magic_of(const char *data, size_t n)
{
	size_t	i;

	for (i = 0; magics[i].sig != NULL; i++)
		if (n >= magics[i].off + magics[i].len && memcmp(data +
		    magics[i].off, magics[i].sig, magics[i].len) == 0)
			return &magics[i];
	return NULL;
}

/*
 * The bytes of file object f (a tool's file parameter): its data: URL
 * decoded, or its http(s) url / remote_url fetched. *data malloc'd.
 * Returns 0 or an ENGINE_E* code with err.
 */
static int
file_param(struct engine *e, const json_t *f, const char *pname, char *err,
    char **data, size_t *len)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	const char		*url, *comma;
	char			 why[160];
	int			 rc;

	*data = NULL;
	*len = 0;
	if (json_is_array(f))
		f = json_array_get(f, 0);
	url = json_string_value(json_object_get(f, "url"));
	if (url == NULL || *url == '\0')
		url = json_string_value(json_object_get(f, "remote_url"));
	if (!json_is_object(f) || url == NULL)
		return engine_invalid(err, "Not a valid file for input %s",
		    pname);
	if (strncmp(url, "data:", 5) == 0 && (comma = strchr(url, ',')) !=
	    NULL) {
		if (comma - url >= 7 && strncmp(comma - 7, ";base64", 7) == 0) {
			rc = b64_decode(comma + 1, strlen(comma + 1), 1, 1, why,
			    sizeof(why), data, len);
			if (rc == ENGINE_EINVAL || rc == ENGINE_ELIMIT)
				engine_invalid(err, "the file of %s: %s", pname,
				    why);
			return rc;
		}
		if ((*data = strdup(comma + 1)) == NULL)
			return ENGINE_ENOMEM;
		*len = strlen(*data);
		return 0;
	}
	if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url,
	    "https://", 8) != 0)
		return engine_invalid(err, "the file of %s cannot be read: "
		    "it has no data: or http(s) URL", pname);
	memset(&req, 0, sizeof(req));
	req.url = url;
	req.follow = 1;
	req.max_bytes = CODEC_MAX_BYTES;
	if ((rc = outbound_fetch(e, &req, err, &resp)) != 0)
		return rc;
	if (resp.status < 200 || resp.status >= 300) {
		rc = engine_invalid(err, "the file of %s: its URL answered "
		    "status %ld", pname, resp.status);
		outbound_resp_release(&resp);
		return rc;
	}
	*data = resp.body;
	*len = resp.len;
	resp.body = NULL;
	outbound_resp_release(&resp);
	return 0;
}

/* The MIME type of an image data: prefix ("data:image/png;base64"), as
 * the plugin's extract_mime_type finds it, into buf; NULL when none. */
static const char *
image_mime(const char *prefix, size_t n, char *buf, size_t bufsz)
{
	const char	*p, *end = prefix + n, *s;

	for (p = prefix; p + 11 <= end; p++) {
		if (strncmp(p, "data:image/", 11) != 0)
			continue;
		for (s = p + 11; s < end && (isalnum((unsigned char)*s) ||
		    *s == '_' || *s == '-' || *s == '+'); s++)
			;
		if (s > p + 11 && s + 7 <= end && strncmp(s, ";base64", 7) ==
		    0 && (size_t)(s - p - 5) < bufsz) {
			snprintf(buf, bufsz, "%.*s", (int)(s - p - 5), p + 5);
			return buf;
		}
	}
	return NULL;
}

/* ====== Tools ====== */

/* The parameter as text ("" when absent). */
static const char *
pstr(const struct tool_call *call, const char *name, char **buf)
{
	const char *s = tool_param_str(call->params, name, buf);

	return s ? s : "";
}

static int
urlsafe(const struct tool_call *call)
{
	char		*b = NULL;
	const char	*s = pstr(call, "urlsafe_enabled", &b);
	int		 r = strcasecmp(s, "true") == 0;

	free(b);
	return r;
}

static int
fail(char *err, const char *what, const char *why)
{
	return engine_invalid(err, "%s, Exception: %s", what, why);
}

static int
encode_text(const struct tool_call *call, char *err, struct tool_result *out)
{
	char		*b = NULL, *enc = NULL;
	const char	*s = pstr(call, "plain_text", &b);
	int		 rc;

	if (strlen(s) > CODEC_MAX_BYTES) {
		rc = engine_invalid(err, "plain_text is larger than %d bytes",
		    CODEC_MAX_BYTES);
		goto out;
	}
	if ((enc = b64_encode(s, strlen(s), urlsafe(call))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = tool_result_text(out, enc, strlen(enc));
out:
	free(enc);
	free(b);
	return rc;
}

/* base64_decoder (hex 0) and base64_to_hex (hex 1). */
static int
decode_text(const struct tool_call *call, int hex, char *err,
    struct tool_result *out)
{
	char		*b = NULL, *dec = NULL, why[200], *hx = NULL;
	const char	*s = pstr(call, "encoded_text", &b);
	const char	*what = hex ? "Failed to covert Base64 text to Hex "
			    "text" : "Failed to decode Base64 text input";
	size_t		 n, i;
	int		 rc;

	if (*s == '\0') {
		rc = tool_result_text(out, "", 0);
		goto out;
	}
	rc = b64_decode(s, strlen(s), urlsafe(call), 0, why, sizeof(why),
	    &dec, &n);
	if (rc == ENGINE_EINVAL || rc == ENGINE_ELIMIT)
		rc = fail(err, what, why);
	if (rc != 0)
		goto out;
	if (!hex) {
		if (!utf8_ok(dec, n)) {
			rc = fail(err, what, "the decoded bytes are not UTF-8 "
			    "text");
			goto out;
		}
		rc = tool_result_text(out, dec, n);
		goto out;
	}
	if ((hx = malloc(n * 2 + 1)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		snprintf(hx + i * 2, 3, "%02x", (unsigned char)dec[i]);
	hx[n * 2] = '\0';
	rc = tool_result_text(out, hx, n * 2);
out:
	free(hx);
	free(dec);
	free(b);
	return rc;
}

static int
hex_to_b64(const struct tool_call *call, char *err, struct tool_result *out)
{
	char		*b = NULL, *bytes = NULL, *enc = NULL;
	const char	*s = pstr(call, "hex_text", &b);
	size_t		 n, i, digits = 0, len = 0;
	int		 rc, hi = -1, v;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= 2 && strncmp(s, "0x", 2) == 0) {
		s += 2;
		n -= 2;
	}
	if (n % 2 != 0) {
		rc = engine_invalid(err, "Invalid hex text, exception: the "
		    "length of hex text must be an even number.");
		goto out;
	}
	if (n / 2 > CODEC_MAX_BYTES || (bytes = malloc(n / 2 + 1)) == NULL) {
		rc = n / 2 > CODEC_MAX_BYTES ? engine_invalid(err, "hex_text "
		    "is too long") : ENGINE_ENOMEM;
		goto out;
	}
	/* bytes.fromhex: pairs of digits, white space between pairs */
	for (i = 0; i < n; i++) {
		if (hi < 0 && isspace((unsigned char)s[i]))
			continue;
		v = isxdigit((unsigned char)s[i]) ? (isdigit((unsigned char)
		    s[i]) ? s[i] - '0' : tolower((unsigned char)s[i]) - 'a' +
		    10) : -1;
		if (v < 0) {
			rc = engine_invalid(err, "Invalid hex text, exception: "
			    "non-hexadecimal number found in fromhex() arg at "
			    "position %zu", i);
			goto out;
		}
		digits++;
		if (hi < 0)
			hi = v;
		else {
			bytes[len++] = (char)(hi * 16 + v);
			hi = -1;
		}
	}
	if (hi >= 0) {
		rc = engine_invalid(err, "Invalid hex text, exception: "
		    "non-hexadecimal number found in fromhex() arg at "
		    "position %zu", n);
		goto out;
	}
	if ((enc = b64_encode(bytes, len, urlsafe(call))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = tool_result_text(out, enc, strlen(enc));
out:
	free(enc);
	free(bytes);
	free(b);
	return rc;
}

/* base64_file_encoder (image 0) and base64_image_encoder (image 1). */
static int
encode_file(struct engine *e, const struct tool_call *call, int image,
    char *err, struct tool_result *out)
{
	const char	*pname = image ? "input_image" : "input_file";
	const json_t	*f = json_object_get(call->params, pname);
	const char	*mime;
	char		*data = NULL, *enc = NULL;
	size_t		 n;
	int		 rc;

	if ((rc = file_param(e, f, pname, err, &data, &n)) != 0)
		goto out;
	if ((enc = b64_encode(data, n, 0)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if (image) {
		if (json_is_array(f))
			f = json_array_get(f, 0);
		mime = json_string_value(json_object_get(f, "mime_type"));
		if (mime == NULL || *mime == '\0')
			mime = magic_of(data, n) ? magic_of(data, n)->mime :
			    "application/octet-stream";
		if ((rc = tool_result_text(out, "data:", 5)) != 0 ||
		    (rc = tool_result_text(out, mime, strlen(mime))) != 0 ||
		    (rc = tool_result_text(out, ";base64,", 8)) != 0)
			goto out;
	}
	rc = tool_result_text(out, enc, strlen(enc));
out:
	free(enc);
	free(data);
	return rc;
}

/* One part of a decoder's input into a file. */
static int
decode_part(const char *part, size_t n, const char *name, int image,
    char *err, struct tool_result *out)
{
	const char		*comma = memchr(part, ',', n);
	const char		*mime = NULL;
	const struct magic	*m;
	char			*dec = NULL, why[200], mbuf[64], *nm = NULL;
	size_t			 len, l;
	int			 rc;
	json_t			*file;

	if (image)
		mime = comma ? image_mime(part, (size_t)(comma - part), mbuf,
		    sizeof(mbuf)) : "image/png";
	if (comma != NULL) {
		n -= (size_t)(comma + 1 - part);
		part = comma + 1;
	}
	/* decodebytes is binascii.a2b_base64: the padding must be whole */
	rc = b64_decode(part, n, 0, 0, why, sizeof(why), &dec, &len);
	if (rc == ENGINE_EINVAL || rc == ENGINE_ELIMIT)
		rc = engine_invalid(err, "Failed to decode base64 text, error: "
		    "%s", why);
	if (rc != 0)
		goto out;
	if (len == 0) {		/* the plugin yields no empty file */
		rc = 0;
		goto out;
	}
	if (!image && (m = magic_of(dec, len)) != NULL) {
		mime = m->mime;
		if (name != NULL && (l = strlen(name)) > 0 && !(l > strlen(
		    m->ext) && name[l - strlen(m->ext) - 1] == '.' &&
		    strcmp(name + l - strlen(m->ext), m->ext) == 0)) {
			if ((nm = malloc(l + strlen(m->ext) + 2)) == NULL) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
			snprintf(nm, l + strlen(m->ext) + 2, "%s.%s", name,
			    m->ext);
			name = nm;
		}
	}
	if ((file = file_from_bytes(name, mime, dec, len)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = tool_result_file(out, file);
out:
	free(nm);
	free(dec);
	return rc;
}

static int
decode_files(const struct tool_call *call, int image, char *err,
    struct tool_result *out)
{
	char		*b1 = NULL, *b2 = NULL, *b3 = NULL, *split = NULL;
	char		*names = NULL, *name, *save = NULL;
	const char	*s = pstr(call, "encoded_text", &b1);
	const char	*fn = pstr(call, "output_filename", &b2);
	const char	*sp = pstr(call, "splitter_str", &b3), *p, *q;
	const char	*nv[CODEC_MAX_FILES];
	size_t		 i, j, nn = 0, part = 0, sl;
	int		 rc;

	if (*s == '\0') {
		rc = engine_invalid(err, image ? "Invalid input encoded_text" :
		    "Empty input encoded_text");
		goto out;
	}
	/* normalize_splitter(splitter.strip() or "\n\n") */
	while (isspace((unsigned char)*sp))
		sp++;
	sl = strlen(sp);
	while (sl > 0 && isspace((unsigned char)sp[sl - 1]))
		sl--;
	if ((split = malloc(sl + 3)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (i = j = 0; i < sl; i++) {
		if (sp[i] == '\\' && i + 1 < sl && sp[i + 1] == 'n') {
			split[j++] = '\n';
			i++;
		} else
			split[j++] = sp[i];
	}
	if (j == 0) {
		split[j++] = '\n';
		split[j++] = '\n';
	}
	split[j] = '\0';
	sl = j;
	/* the names, one a line */
	if ((names = strdup(fn)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (name = strtok_r(names, "\n", &save); name != NULL && nn <
	    CODEC_MAX_FILES; name = strtok_r(NULL, "\n", &save))
		nv[nn++] = name;
	for (p = s; *p != '\0'; p = q + (*q ? sl : 0)) {
		q = strstr(p, split);
		if (q == NULL)
			q = p + strlen(p);
		if (q == p)
			continue;
		if (part >= CODEC_MAX_FILES) {
			rc = engine_invalid(err, "more than %d files in one "
			    "call (CODEC_MAX_FILES)", CODEC_MAX_FILES);
			goto out;
		}
		if ((rc = decode_part(p, (size_t)(q - p), part < nn ?
		    nv[part] : NULL, image, err, out)) != 0)
			goto out;
		part++;
	}
	rc = 0;
out:
	free(names);
	free(split);
	free(b1);
	free(b2);
	free(b3);
	return rc;
}

/* ====== Provider ====== */

static const struct tool_param p_encode[] = {
	{ "plain_text", "string", 1, "Text to encode" },
	{ "urlsafe_enabled", "string", 0, "\"true\" for the URL-safe "
	    "alphabet" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_decode[] = {
	{ "encoded_text", "string", 1, "Base64-encoded text" },
	{ "urlsafe_enabled", "string", 0, "\"true\" for the URL-safe "
	    "alphabet" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_hex[] = {
	{ "hex_text", "string", 1, "Hex Text" },
	{ "urlsafe_enabled", "string", 0, "\"true\" for the URL-safe "
	    "alphabet" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_file[] = {
	{ "input_file", "object", 1, "Input File" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_image[] = {
	{ "input_image", "object", 1, "Input Image File" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_files[] = {
	{ "encoded_text", "string", 1, "Base64-encoded text of the file(s)" },
	{ "output_filename", "string", 0, "Output file name(s), one per "
	    "line" },
	{ "splitter_str", "string", 0, "Delimiter between files (default "
	    "two newlines)" },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def defs[] = {
	{ "base64_encoder", "A tool to encode text to Base64-encoded string",
	    p_encode },
	{ "base64_file_encoder", "Encode the binary file to Base64-encoded "
	    "text", p_file },
	{ "base64_image_encoder", "Encode the image file to Base64-encoded "
	    "text", p_image },
	{ "hex_to_base64", "Convert Hexadecimal text to Base64 text", p_hex },
	{ "base64_decoder", "A tool to decode Base64-encoded text",
	    p_decode },
	{ "base64_file_decoder", "Decode Base64-encoded text to a binary "
	    "file", p_files },
	{ "base64_image_decoder", "Decode Base64-encoded text to an image "
	    "file", p_files },
	{ "base64_to_hex", "Convert Base64 text to Hexadecimal text",
	    p_decode },
	{ NULL, NULL, NULL },
};

static int
codec_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
codec_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	const char	*t = call->tool;

	if (strcmp(t, "base64_encoder") == 0)
		return encode_text(call, err, out);
	if (strcmp(t, "base64_decoder") == 0)
		return decode_text(call, 0, err, out);
	if (strcmp(t, "base64_to_hex") == 0)
		return decode_text(call, 1, err, out);
	if (strcmp(t, "hex_to_base64") == 0)
		return hex_to_b64(call, err, out);
	if (strcmp(t, "base64_file_encoder") == 0)
		return encode_file(e, call, 0, err, out);
	if (strcmp(t, "base64_image_encoder") == 0)
		return encode_file(e, call, 1, err, out);
	if (strcmp(t, "base64_file_decoder") == 0)
		return decode_files(call, 0, err, out);
	if (strcmp(t, "base64_image_decoder") == 0)
		return decode_files(call, 1, err, out);
	engine_invalid(err, "tool '%s/%s' is not available in flowcgi",
	    call->provider, t);
	return ENGINE_ENOTFOUND;
}

const struct tool_provider tool_provider_base64_codec = {
	"base64_codec", codec_list, codec_invoke, 0,
};
