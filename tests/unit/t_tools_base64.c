/*
 * t_tools_base64.c — the base64_codec provider (the Dify plugin
 * bowenliang123/base64_codec served locally): text, hex and file
 * conversions as the plugin's tools answer them, Python's decoding rules
 * (characters outside the alphabet dropped, padding required), its error
 * messages, the decoders' split into several files with their names and
 * types, and an input file read from a data: URL or fetched from the
 * loopback fake (tests/fakes/fake_feeds.py).
 */
#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"

#define PROVIDER "bowenliang123/base64_codec/base64_codec"

static const char *
run_text(const char *tool, json_t *params, int *rcp)
{
	static char		 buf[4][512];
	static int		 i;
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX];
	int			 rc;

	i = (i + 1) % 4;
	rc = tool_call_simple(PROVIDER, "plugin", tool, params, &r, err);
	if (rcp != NULL)
		*rcp = rc;
	snprintf(buf[i], sizeof(buf[i]), "%s", rc == 0 ? res_text(&r) : err);
	tool_result_release(&r);
	return buf[i];
}

static void
test_text(void)
{
	int rc;

	CHECK_STR(run_text("base64_encoder", json_pack("{s:s,s:s}",
	    "plain_text", "你好, flowcgi?>", "urlsafe_enabled", "false"), NULL),
	    "5L2g5aW9LCBmbG93Y2dpPz4=");
	CHECK_STR(run_text("base64_encoder", json_pack("{s:s,s:s}",
	    "plain_text", "?>?", "urlsafe_enabled", "true"), NULL), "Pz4_");
	CHECK_STR(run_text("base64_encoder", json_pack("{s:s}",
	    "plain_text", "?>?"), NULL), "Pz4/");
	CHECK_STR(run_text("base64_encoder", json_pack("{s:s}", "plain_text",
	    ""), NULL), "");
	CHECK_STR(run_text("base64_decoder", json_pack("{s:s}",
	    "encoded_text", "5L2g5aW9\nLCBmbG93Y2dpPz4="), NULL),
	    "你好, flowcgi?>");
	/* URL-safe characters are outside the standard alphabet */
	CHECK_STR(run_text("base64_decoder", json_pack("{s:s,s:s}",
	    "encoded_text", "aGk_", "urlsafe_enabled", "false"), &rc),
	    "Failed to decode Base64 text input, Exception: Incorrect "
	    "padding");
	CHECK(rc == ENGINE_EINVAL);
	CHECK_STR(run_text("base64_decoder", json_pack("{s:s,s:s}",
	    "encoded_text", "8J-Ygw==", "urlsafe_enabled", "true"), NULL),
	    "😃");
	CHECK_STR(run_text("base64_decoder", json_pack("{s:s}",
	    "encoded_text", "8J-Ygw=="), NULL), "Failed to decode Base64 "
	    "text input, Exception: Invalid base64-encoded string: number of "
	    "data characters (5) cannot be 1 more than a multiple of 4");
	CHECK_STR(run_text("base64_decoder", json_pack("{s:s}",
	    "encoded_text", "aGVsbG8"), &rc), "Failed to decode Base64 text "
	    "input, Exception: Incorrect padding");
	CHECK_STR(run_text("base64_decoder", json_pack("{s:s}",
	    "encoded_text", "aGVsb"), &rc), "Failed to decode Base64 text "
	    "input, Exception: Invalid base64-encoded string: number of data "
	    "characters (5) cannot be 1 more than a multiple of 4");
	CHECK_STR(run_text("base64_decoder", json_pack("{s:s}",
	    "encoded_text", "//4="), &rc), "Failed to decode Base64 text "
	    "input, Exception: the decoded bytes are not UTF-8 text");
	CHECK(rc == ENGINE_EINVAL);
	CHECK_STR(run_text("base64_to_hex", json_pack("{s:s}",
	    "encoded_text", "//4AAQ=="), NULL), "fffe0001");
	CHECK_STR(run_text("hex_to_base64", json_pack("{s:s}", "hex_text",
	    " 0xfffe0001 "), NULL), "//4AAQ==");
	CHECK_STR(run_text("hex_to_base64", json_pack("{s:s}", "hex_text",
	    "ff  fe"), NULL), "//4=");
	CHECK_STR(run_text("hex_to_base64", json_pack("{s:s,s:s}",
	    "hex_text", "fffe3f", "urlsafe_enabled", "true"), NULL), "__4_");
	CHECK_STR(run_text("hex_to_base64", json_pack("{s:s}", "hex_text",
	    "abc"), &rc), "Invalid hex text, exception: the length of hex "
	    "text must be an even number.");
	CHECK(rc == ENGINE_EINVAL);
	CHECK(strncmp(run_text("hex_to_base64", json_pack("{s:s}",
	    "hex_text", "zz"), &rc), "Invalid hex text, exception: "
	    "non-hexadecimal", 44) == 0);
}

static void
test_files(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX];
	json_t			*f;

	/* two parts, the delimiter written as "\n", two names */
	CHECK(tool_call_simple(PROVIDER, "plugin", "base64_file_decoder",
	    json_pack("{s:s,s:s,s:s}", "encoded_text", "iVBORw0KGgoAAQID\\n"
	    "data:text/plain;base64,aGVsbG8=", "output_filename",
	    "picture\nnotes.txt", "splitter_str", "\\n"), &r, err) == 0);
	/* the literal "\n" above is no newline: one part; try again */
	tool_result_release(&r);
	CHECK(tool_call_simple(PROVIDER, "plugin", "base64_file_decoder",
	    json_pack("{s:s,s:s,s:s}", "encoded_text", "iVBORw0KGgoAAQID\n"
	    "data:text/plain;base64,aGVsbG8=", "output_filename",
	    "picture\nnotes.txt", "splitter_str", "\\n"), &r, err) == 0);
	CHECK_INT(json_array_size(r.files), 2);
	f = json_array_get(r.files, 0);
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "picture.png");
	CHECK_STR(json_string_value(json_object_get(f, "mime_type")),
	    "image/png");
	CHECK_INT(json_integer_value(json_object_get(f, "size")), 12);
	f = json_array_get(r.files, 1);
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "notes.txt");
	CHECK_STR(json_string_value(json_object_get(f, "mime_type")),
	    "text/plain");
	CHECK_STR(json_string_value(json_object_get(f, "url")),
	    "data:text/plain;base64,aGVsbG8=");
	tool_result_release(&r);

	/* images: the prefix's type, image/png without one */
	CHECK(tool_call_simple(PROVIDER, "plugin", "base64_image_decoder",
	    json_pack("{s:s}", "encoded_text", "data:image/jpeg;base64,"
	    "/9j/4AAQ\n\naGk="), &r, err) == 0);
	CHECK_INT(json_array_size(r.files), 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(r.files,
	    0), "mime_type")), "image/jpeg");
	CHECK_STR(json_string_value(json_object_get(json_array_get(r.files,
	    1), "mime_type")), "image/png");
	tool_result_release(&r);
	CHECK(tool_call_simple(PROVIDER, "plugin", "base64_image_decoder",
	    json_pack("{s:s}", "encoded_text", ""), &r, err) == ENGINE_EINVAL);
	CHECK_STR(err, "Invalid input encoded_text");
	tool_result_release(&r);
	CHECK(tool_call_simple(PROVIDER, "plugin", "base64_file_decoder",
	    json_pack("{s:s}", "encoded_text", "aGk"), &r, err) ==
	    ENGINE_EINVAL);
	CHECK_STR(err, "Failed to decode base64 text, error: Incorrect "
	    "padding");
	tool_result_release(&r);

	/* encoders read a file object: a data: URL */
	f = file_from_bytes("a.png", "image/png", "\x89PNG\r\n\x1a\n", 8);
	CHECK(tool_call_simple(PROVIDER, "plugin", "base64_image_encoder",
	    json_pack("{s:O}", "input_image", f), &r, err) == 0);
	CHECK_STR(res_text(&r), "data:image/png;base64,iVBORw0KGgo=");
	tool_result_release(&r);
	CHECK(tool_call_simple(PROVIDER, "plugin", "base64_file_encoder",
	    json_pack("{s:o}", "input_file", f), &r, err) == 0);
	CHECK_STR(res_text(&r), "iVBORw0KGgo=");
	tool_result_release(&r);
	CHECK(tool_call_simple(PROVIDER, "plugin", "base64_file_encoder",
	    json_pack("{s:s}", "input_file", "nope"), &r, err) ==
	    ENGINE_EINVAL);
	CHECK_STR(err, "Not a valid file for input input_file");
	tool_result_release(&r);
}

static void
test_remote_file(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX];

	CHECK(tool_call_simple(PROVIDER, "plugin", "base64_file_encoder",
	    json_pack("{s:{s:s,s:s}}", "input_file", "transfer_method",
	    "remote_url", "remote_url", fake_url("/blob.png")), &r, err) ==
	    0);
	CHECK_STR(res_text(&r), "iVBORw0KGgoAAQID");
	tool_result_release(&r);
	CHECK(tool_call_simple(PROVIDER, "plugin", "base64_file_encoder",
	    json_pack("{s:{s:s}}", "input_file", "remote_url",
	    fake_url("/status/404")), &r, err) == ENGINE_EINVAL);
	CHECK_STR(err, "the file of input_file: its URL answered status 404");
	tool_result_release(&r);
	/* the SSRF guard holds for a file's URL */
	tn_conf.http_allow_private = 0;
	CHECK(tool_call_simple(PROVIDER, "plugin", "base64_file_encoder",
	    json_pack("{s:{s:s}}", "input_file", "remote_url",
	    fake_url("/blob.png")), &r, err) == ENGINE_EFETCH);
	tool_result_release(&r);
	tn_conf.http_allow_private = 1;
}

/* Through the tool node as an export of the plugin writes it. */
static void
test_node(void)
{
	struct tn_run	 r;
	json_t		*node;

	node = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:{s:s,s:s}},s:{s:s}}",
	    "type", "tool", "provider_id", PROVIDER, "provider_name", PROVIDER,
	    "provider_type", "builtin", "tool_name", "base64_image_decoder",
	    "tool_parameters", "encoded_text", "type", "mixed", "value",
	    "data:image/gif;base64,R0lGODlh", "tool_configurations",
	    "splitter_str", "\\n\\n");
	if (tn_run1(node, json_pack("{s:[s,s],s:[s,s]}", "text", "n1", "text",
	    "files", "n1", "files"), NULL, &r) == 0) {
		CHECK_STR(r.status, "succeeded");
		CHECK_STR(tn_out_str(&r, "text"), "");
		CHECK_INT(json_array_size(json_object_get(r.outputs, "files")),
		    1);
		CHECK_STR(json_string_value(json_object_get(json_array_get(
		    json_object_get(r.outputs, "files"), 0), "mime_type")),
		    "image/gif");
	} else
		CHECK(0);
	tn_release(&r);
}

int
main(void)
{
	tn_open();
	setenv("FLOWCGI_FAKE_MCP", "tests/fakes/fake_feeds.py", 1);
	test_text();
	test_files();
	test_node();
	if (fake_begin()) {
		tn_conf.http_allow_private = 1;
		test_remote_file();
		fake_stop();
	}
	tn_close();
	return tap_done();
}
