/*
 * t_tools_chart.c — Dify's chart provider: bar, line and pie charts as
 * PNG (signature, Dify's 1000 x 800 size, the bars' colour where a bar
 * stands, the same bytes twice) and as SVG (well-formed, one element per
 * value, labels escaped and cut as Dify cuts them, labels of the wrong
 * count ignored), Dify's messages and errors, the limits. The tools make
 * no request: no fake is started.
 */
#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"
#include "t_tools_files.h"

struct chart {
	struct tool_result	 r;
	int			 rc;
	char			 err[ENGINE_ERRMAX];
	char			*data;		/* the file's bytes */
	size_t			 len;
	const char		*mime;
};

static void
chart(struct chart *c, const char *tool, json_t *params)
{
	const json_t *f;

	memset(c, 0, sizeof(*c));
	c->rc = tool_call_simple("chart", "builtin", tool, params, &c->r,
	    c->err);
	if ((f = res_file(&c->r, 0, &c->data, &c->len)) != NULL)
		c->mime = json_string_value(json_object_get(f, "mime_type"));
}

static void
chart_release(struct chart *c)
{
	tool_result_release(&c->r);
	free(c->data);
}

static void
test_png(void)
{
	struct chart	 a, b;
	unsigned char	*px = NULL;
	unsigned	 w = 0, h = 0;
	size_t		 at;

	CHECK(tool_provider_find("chart", "builtin") == &tool_provider_chart);
	chart(&a, "bar_chart", json_pack("{s:s,s:s}", "data", "3;1;2",
	    "x_axis", "a;b;c"));
	CHECK_INT(a.rc, 0);
	CHECK_STR(res_text(&a.r), "the bar chart is saved as an image.");
	CHECK_STR(a.mime, "image/png");
	CHECK(png_size(a.data, a.len, &w, &h) == 0);
	CHECK_INT(w, 1000);
	CHECK_INT(h, 800);
	CHECK(png_rgb(a.data, a.len, &px, &w, &h) == 0);
	if (px != NULL) {
		/* the first bar (the tallest) at its slot's centre, low down:
		 * matplotlib's first colour #1f77b4 */
		at = ((size_t)650 * w + 240) * 3;
		CHECK(px[at] == 0x1f && px[at + 1] == 0x77 && px[at + 2] == 0xb4);
		/* above the plot: white */
		at = ((size_t)40 * w + 500) * 3;
		CHECK(px[at] == 0xff && px[at + 1] == 0xff && px[at + 2] == 0xff);
	}
	free(px);
	chart(&b, "bar_chart", json_pack("{s:s,s:s}", "data", "3;1;2",
	    "x_axis", "a;b;c"));
	CHECK(a.len == b.len && a.data && b.data && memcmp(a.data, b.data,
	    a.len) == 0);	/* deterministic */
	chart_release(&a);
	chart_release(&b);

	chart(&a, "line_chart", json_pack("{s:s}", "data", "1;4;9;16"));
	CHECK_STR(res_text(&a.r), "the line chart is saved as an image.");
	CHECK(png_size(a.data, a.len, &w, &h) == 0 && w == 1000 && h == 800);
	chart_release(&a);
	chart(&a, "pie_chart", json_pack("{s:s,s:s}", "data", "1;1;2",
	    "categories", "x;y;z"));
	CHECK_STR(res_text(&a.r), "the pie chart is saved as an image.");
	CHECK_STR(a.mime, "image/png");
	chart_release(&a);
}

static void
test_svg(void)
{
	struct chart c;

	chart(&c, "bar_chart", json_pack("{s:s,s:s,s:s,s:s}", "data",
	    " 10 ; 2.5;-4;1_000", "x_axis", "<b>;R&D;a very long label;d",
	    "title", "Q1 \"sales\" <2024>", "image_format", "svg"));
	CHECK_INT(c.rc, 0);
	CHECK_STR(c.mime, "image/svg+xml");
	CHECK(xml_ok(c.data));
	CHECK_INT(count_of(c.data, "<rect x="), 4);	/* a bar per value */
	CHECK_INT(count_of(c.data, "<rect class=\"frame\""), 1);
	CHECK(c.data && strstr(c.data, ">&lt;b&gt;</text>") != NULL);
	CHECK(c.data && strstr(c.data, ">R&amp;D</text>") != NULL);
	CHECK(c.data && strstr(c.data, ">a very lon...</text>") != NULL);
	CHECK(c.data && strstr(c.data, ">Q1 &quot;sales&quot; &lt;2024&gt;"
	    "</text>") != NULL);
	CHECK(c.data && strstr(c.data, "<b>") == NULL);
	/* y ticks at round numbers, 0 among them */
	CHECK(c.data && strstr(c.data, ">0</text>") != NULL);
	CHECK(c.data && strstr(c.data, ">1000</text>") != NULL);
	chart_release(&c);

	/* labels of another count are ignored: indices instead */
	chart(&c, "line_chart", json_pack("{s:s,s:s,s:s}", "data", "1;2;3",
	    "x_axis", "a;b", "image_format", "svg"));
	CHECK(xml_ok(c.data));
	CHECK(c.data && strstr(c.data, "text-anchor=\"middle\">2</text>") !=
	    NULL);
	CHECK(c.data && strstr(c.data, ">a</text>") == NULL);
	CHECK_INT(count_of(c.data, "<polyline"), 1);
	CHECK(c.data && strstr(c.data, "points=\"") != NULL);
	chart_release(&c);

	chart(&c, "pie_chart", json_pack("{s:s,s:s,s:s}", "data", "1;2;3;0",
	    "categories", "one;two;th<r>ee;zero", "image_format", "svg"));
	CHECK(xml_ok(c.data));
	CHECK_INT(count_of(c.data, "<path "), 3);	/* 0 has no wedge */
	CHECK(c.data && strstr(c.data, ">th&lt;r&gt;ee</text>") != NULL);
	CHECK(c.data && strstr(c.data, "fill=\"#ff7f0e\"") != NULL);
	chart_release(&c);

	/* a step below the values' precision ends too */
	chart(&c, "line_chart", json_pack("{s:s,s:s}", "data",
	    "10000000000000000;10000000000000002", "image_format", "svg"));
	CHECK_INT(c.rc, 0);
	CHECK(xml_ok(c.data));
	chart_release(&c);
	chart(&c, "bar_chart", json_pack("{s:s,s:s}", "data",
	    "1e-310;2e-310", "image_format", "svg"));
	CHECK_INT(c.rc, 0);
	CHECK(xml_ok(c.data));
	CHECK(c.data && strstr(c.data, "nan") == NULL);
	chart_release(&c);
	chart(&c, "bar_chart", json_pack("{s:s}", "data", "1e308;-1e308"));
	CHECK_INT(c.rc, ENGINE_EINVAL);
	CHECK(strstr(c.err, "too large") != NULL);
	chart_release(&c);

	chart(&c, "pie_chart", json_pack("{s:s,s:s}", "data", "5",
	    "image_format", "svg"));
	CHECK_INT(count_of(c.data, "<circle "), 1);	/* one whole wedge */
	chart_release(&c);
}

static void
test_errors(void)
{
	struct chart	 c;
	struct dbuf	 b = { 0 };
	int		 i;

	chart(&c, "bar_chart", json_pack("{s:s}", "data", ""));
	CHECK_INT(c.rc, 0);
	CHECK_STR(res_text(&c.r), "Please input data");
	CHECK(c.r.files == NULL);
	chart_release(&c);
	chart(&c, "pie_chart", NULL);
	CHECK_STR(res_text(&c.r), "Please input data");
	chart_release(&c);
	chart(&c, "bar_chart", json_pack("{s:s}", "data", "1;x;3"));
	CHECK_INT(c.rc, ENGINE_EINVAL);
	CHECK_STR(c.err, "could not convert string to float: 'x'");
	chart_release(&c);
	chart(&c, "line_chart", json_pack("{s:s}", "data", "1;;3"));
	CHECK_INT(c.rc, ENGINE_EINVAL);
	chart_release(&c);
	chart(&c, "bar_chart", json_pack("{s:s}", "data", "1;nan"));
	CHECK_INT(c.rc, ENGINE_EINVAL);
	chart_release(&c);
	chart(&c, "bar_chart", json_pack("{s:s,s:s}", "data", "1",
	    "image_format", "gif"));
	CHECK_INT(c.rc, ENGINE_EINVAL);
	chart_release(&c);
	chart(&c, "scatter_chart", json_pack("{s:s}", "data", "1"));
	CHECK_INT(c.rc, ENGINE_ENOTFOUND);
	chart_release(&c);

	for (i = 0; i < 50; i++)
		dbuf_addstr(&b, "1;");
	dbuf_addstr(&b, "1");
	tn_conf.export_max_points = 50;
	chart(&c, "bar_chart", json_pack("{s:s}", "data", b.p));
	CHECK_INT(c.rc, ENGINE_ELIMIT);
	CHECK(strstr(c.err, "export.max_points") != NULL);
	chart_release(&c);
	tn_conf.export_max_points = 10000;
	tn_conf.export_max_output = 4096;
	chart(&c, "bar_chart", json_pack("{s:s}", "data", b.p));
	CHECK_INT(c.rc, ENGINE_ELIMIT);
	CHECK(strstr(c.err, "export.max_output") != NULL);
	chart_release(&c);
	tn_conf.export_max_output = 32 << 20;
	dbuf_free(&b);
}

int
main(void)
{
	tn_open();
	test_png();
	test_svg();
	test_errors();
	tn_close();
	tf_fonts_release();
	return tap_done();
}
