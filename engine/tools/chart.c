/*
 * chart.c — Dify's builtin `chart` provider
 * (api/core/tools/builtin_tool/providers/chart/tools/):
 *
 *   bar_chart    data (";"-separated numbers), x_axis (";"-separated
 *                labels, used when there are as many as values; longer
 *                than 10 characters cut to 10 + "...")
 *   line_chart   the same, drawn as a line
 *   pie_chart    data, categories (";"-separated, as many as values)
 *
 * Each answers Dify's text ("the bar chart is saved as an image.") and a
 * PNG file (image/png) of 1000 x 800 pixels, the size of Dify's
 * matplotlib figure (10 x 8 inches at 100 dpi). Empty data answers
 * "Please input data"; a value that is not a number fails the tool with
 * Python's message ("could not convert string to float: 'x'").
 *
 * The chart is drawn here as SVG (axes, ticks at round numbers, bars or a
 * line in matplotlib's first colour, pie wedges in its tab10 cycle, every
 * label escaped) and rasterised by librsvg with cairo; the same input
 * gives the same bytes. Two parameters Dify lacks: `title` (drawn above
 * the plot) and `image_format` ("png", the default, or "svg" to get the
 * SVG itself, image/svg+xml). No request is made anywhere.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>
#include <librsvg/rsvg.h>

#include "engine/tools/md.h"
#include "engine/tools/tools.h"

#define W	1000
#define H	800
/* matplotlib's subplot box: left .125, right .9, bottom .11, top .88 */
#define PX0	125.0
#define PX1	900.0
#define PY0	96.0
#define PY1	712.0
#define FONT	"font-family=\"DejaVu Sans, Bitstream Vera Sans, sans-serif\""

static const char *const tab10[] = { "#1f77b4", "#ff7f0e", "#2ca02c",
    "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
    "#17becf" };

static const struct tool_param p_axis[] = {
	{ "data", "string", 1, "Data for generating the chart, each number "
	    "separated by \";\"" },
	{ "x_axis", "string", 0, "X-axis labels, each separated by \";\"" },
	{ "title", "string", 0, "Title drawn above the chart" },
	{ "image_format", "string", 0, "png (default) or svg" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_pie[] = {
	{ "data", "string", 1, "Data for generating the chart, each number "
	    "separated by \";\"" },
	{ "categories", "string", 0, "Categories, each separated by \";\"" },
	{ "title", "string", 0, "Title drawn above the chart" },
	{ "image_format", "string", 0, "png (default) or svg" },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def defs[] = {
	{ "bar_chart", "Bar chart", p_axis },
	{ "line_chart", "Linear chart", p_axis },
	{ "pie_chart", "Pie chart", p_pie },
	{ NULL, NULL, NULL },
};

/* ====== Input ====== */

/* The ";"-separated fields of s: a new array of strings. */
static json_t *
split(const char *s)
{
	json_t		*a = json_array();
	const char	*p;

	while (a != NULL) {
		p = strchr(s, ';');
		if (json_array_append_new(a, json_stringn(s, p ? (size_t)(p - s)
		    : strlen(s))) != 0) {
			json_decref(a);
			return NULL;
		}
		if (p == NULL)
			break;
		s = p + 1;
	}
	return a;
}

/* Python's float(s): surrounding blanks allowed, "_" between digits. */
static int
py_float(const char *s, double *out)
{
	char	 buf[128], *end;
	size_t	 n = 0;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	for (; *s != '\0' && n + 1 < sizeof(buf); s++)
		if (*s != '_')
			buf[n++] = *s;
	if (*s != '\0')
		return -1;
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t' ||
	    buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	if (n == 0 || strchr(buf, 'x') || strchr(buf, 'X'))	/* no hex */
		return -1;
	*out = strtod(buf, &end);
	return *end == '\0' && isfinite(*out) ? 0 : -1;
}

/* ====== SVG ====== */

static void
esc(struct dbuf *b, const char *s)
{
	md_xml_escape(b, s, strlen(s));
}

/* A tick label: the value with as many decimals as the step needs. */
static void
tick_label(struct dbuf *b, double v, double step)
{
	int	dec = 0;
	double	s = step;

	while (dec < 8 && fabs(s - round(s)) > 1e-9 * fabs(step) + 1e-12) {
		s *= 10;
		dec++;
	}
	if (fabs(v) < step * 1e-9)
		v = 0;
	dbuf_addf(b, "%.*f", dec, v);
}

/* Round ticks over [lo, hi]: *step, and the first tick *first. */
static void
nice_ticks(double lo, double hi, double *first, double *step)
{
	double range = hi - lo, raw, mag, f;

	if (range <= 0)
		range = fabs(hi) > 0 ? fabs(hi) : 1;
	raw = range / 6;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	*step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) *
	    mag;
	*first = ceil(lo / *step - 1e-9) * *step;
}

static void
svg_begin(struct dbuf *b, const char *title)
{
	dbuf_addf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" viewBox=\"0 0 %d %d\">\n"
	    "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, H, W,
	    H, W, H);
	if (title != NULL && *title != '\0') {
		dbuf_addf(b, "<text class=\"title\" x=\"%.1f\" y=\"%.1f\" "
		    "text-anchor=\"middle\" font-size=\"17\" " FONT ">",
		    (PX0 + PX1) / 2, PY0 - 12);
		esc(b, title);
		dbuf_addstr(b, "</text>\n");
	}
}

/* Axes of a bar or line chart: the frame, y ticks with grid-less labels
 * and x ticks at slot centres with labels (rotated when given). */
static void
svg_axes(struct dbuf *b, double lo, double hi, size_t n, const json_t *labels,
    double (*xpos)(size_t, size_t))
{
	double	first, step, v, y, x;
	size_t	i;

	nice_ticks(lo, hi, &first, &step);
	dbuf_addstr(b, "<g class=\"y-axis\" font-size=\"14\" " FONT ">\n");
	/* at most 50 ticks: v = first + i * step, never v += step, which
	 * stops moving where step is below the values' precision */
	for (i = 0; i < 50 && (v = first + (double)i * step) <= hi + step *
	    1e-9; i++) {
		y = PY1 - (v - lo) / (hi - lo) * (PY1 - PY0);
		dbuf_addf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		    "y2=\"%.1f\" stroke=\"#000000\"/>", PX0 - 5, y, PX0, y);
		dbuf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
		    PX0 - 8, y + 5);
		tick_label(b, v, step);
		dbuf_addstr(b, "</text>\n");
	}
	dbuf_addstr(b, "</g>\n<g class=\"x-axis\" font-size=\"14\" " FONT
	    ">\n");
	for (i = 0; i < n; i++) {
		x = xpos(i, n);
		dbuf_addf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		    "y2=\"%.1f\" stroke=\"#000000\"/>", x, PY1, x, PY1 + 5);
		if (labels != NULL) {
			const char	*s = json_string_value(json_array_get(
			    labels, i));
			size_t		 chars = 0, k = 0;

			/* Dify cuts a label past 10 characters */
			while (s[k] != '\0' && chars < 10) {
				k++;
				while (((unsigned char)s[k] & 0xc0) == 0x80)
					k++;
				chars++;
			}
			dbuf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" "
			    "text-anchor=\"end\" transform=\"rotate(-45 %.1f "
			    "%.1f)\">", x, PY1 + 20, x, PY1 + 20);
			md_xml_escape(b, s, k);
			if (s[k] != '\0')
				dbuf_addstr(b, "...");
		} else {
			dbuf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" "
			    "text-anchor=\"middle\">%zu", x, PY1 + 22, i);
		}
		dbuf_addstr(b, "</text>\n");
	}
	dbuf_addf(b, "</g>\n<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" "
	    "width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#000000\"/>\n",
	    PX0, PY0, PX1 - PX0, PY1 - PY0);
}

/* Slot centres: bars fill [-0.5, n - 0.5] with matplotlib's margins. */
static double
bar_x(size_t i, size_t n)
{
	double lo = -0.5 - 0.05 * n, hi = n - 0.5 + 0.05 * n;

	return PX0 + ((double)i - lo) / (hi - lo) * (PX1 - PX0);
}

static double
line_x(size_t i, size_t n)
{
	double span = n > 1 ? (double)(n - 1) : 1, lo = -0.05 * span,
	    hi = span * 1.05;

	if (n <= 1)
		return (PX0 + PX1) / 2;
	return PX0 + ((double)i - lo) / (hi - lo) * (PX1 - PX0);
}

static void
svg_bar_line(struct dbuf *b, int line, const double *v, size_t n,
    const json_t *labels, const char *title)
{
	double	lo = 0, hi = 0, y0, x, y, bw, m;
	size_t	i;

	for (i = 0; i < n; i++) {
		if (line && i == 0)
			lo = hi = v[0];
		lo = fmin(lo, v[i]);
		hi = fmax(hi, v[i]);
	}
	m = (hi - lo) * 0.05;
	if (m == 0)
		m = fabs(hi) > 0 ? fabs(hi) * 0.05 : 0.05;
	/* bars stand on zero: no margin below a zero floor */
	if (!line && lo == 0)
		hi += m;
	else if (!line && hi == 0)
		lo -= m;
	else {
		lo -= m;
		hi += m;
	}
	svg_begin(b, title);
	y0 = PY1 - (0 - lo) / (hi - lo) * (PY1 - PY0);
	if (!line) {
		bw = 0.8 * (bar_x(1, n) - bar_x(0, n));
		dbuf_addstr(b, "<g class=\"bars\" fill=\"#1f77b4\">\n");
		for (i = 0; i < n; i++) {
			x = bar_x(i, n);
			y = PY1 - (v[i] - lo) / (hi - lo) * (PY1 - PY0);
			dbuf_addf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
			    "height=\"%.2f\"/>\n", x - bw / 2, fmin(y, y0), bw,
			    fabs(y0 - y));
		}
		dbuf_addstr(b, "</g>\n");
	} else {
		dbuf_addstr(b, "<polyline class=\"line\" fill=\"none\" "
		    "stroke=\"#1f77b4\" stroke-width=\"2\" "
		    "stroke-linejoin=\"round\" points=\"");
		for (i = 0; i < n; i++)
			dbuf_addf(b, "%s%.2f,%.2f", i ? " " : "", line_x(i, n),
			    PY1 - (v[i] - lo) / (hi - lo) * (PY1 - PY0));
		dbuf_addstr(b, "\"/>\n");
	}
	svg_axes(b, lo, hi, n, labels, line ? line_x : bar_x);
	dbuf_addstr(b, "</svg>\n");
}

static void
svg_pie(struct dbuf *b, const double *v, size_t n, const json_t *labels,
    const char *title)
{
	double	total = 0, a0 = 0, a1, cx = (PX0 + PX1) / 2,
		cy = (PY0 + PY1) / 2, r = (PY1 - PY0) / 2 / 1.1, mid, lx, ly;
	size_t	i;

	for (i = 0; i < n; i++)
		total += v[i] > 0 ? v[i] : 0;
	svg_begin(b, title);
	dbuf_addstr(b, "<g class=\"wedges\" stroke=\"#ffffff\" "
	    "stroke-width=\"1\">\n");
	for (i = 0; i < n && total > 0; i++) {
		if (v[i] <= 0)
			continue;
		a1 = a0 + v[i] / total * 2 * M_PI;
		/* counter-clockwise from 3 o'clock, as matplotlib */
		if (v[i] >= total)
			dbuf_addf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" "
			    "fill=\"%s\"/>\n", cx, cy, r, tab10[i % 10]);
		else
			dbuf_addf(b, "<path fill=\"%s\" d=\"M%.2f,%.2f L%.2f,%.2f "
			    "A%.2f,%.2f 0 %d,0 %.2f,%.2f Z\"/>\n", tab10[i % 10],
			    cx, cy, cx + r * cos(a0), cy - r * sin(a0), r, r,
			    a1 - a0 > M_PI ? 1 : 0, cx + r * cos(a1),
			    cy - r * sin(a1));
		a0 = a1;
	}
	dbuf_addstr(b, "</g>\n");
	if (labels != NULL) {
		dbuf_addstr(b, "<g class=\"labels\" font-size=\"14\" " FONT
		    ">\n");
		a0 = 0;
		for (i = 0; i < n && total > 0; i++) {
			if (v[i] <= 0)
				continue;
			a1 = a0 + v[i] / total * 2 * M_PI;
			mid = (a0 + a1) / 2;
			lx = cx + 1.1 * r * cos(mid);
			ly = cy - 1.1 * r * sin(mid);
			dbuf_addf(b, "<text x=\"%.2f\" y=\"%.2f\" "
			    "text-anchor=\"%s\">", lx, ly + 5, cos(mid) >= 0 ?
			    "start" : "end");
			esc(b, json_string_value(json_array_get(labels, i)));
			dbuf_addstr(b, "</text>\n");
			a0 = a1;
		}
		dbuf_addstr(b, "</g>\n");
	}
	dbuf_addstr(b, "</svg>\n");
}

/* ====== PNG ====== */

static cairo_status_t
png_sink(void *arg, const unsigned char *data, unsigned int n)
{
	return dbuf_add(arg, data, n) == DBUF_OK ? CAIRO_STATUS_SUCCESS :
	    CAIRO_STATUS_WRITE_ERROR;
}

/* The PNG of svg (W x H) through librsvg and cairo into out. */
static int
svg_png(const struct dbuf *svg, struct dbuf *out, char *err)
{
	RsvgHandle		*h = NULL;
	GError			*gerr = NULL;
	cairo_surface_t		*surf = NULL;
	cairo_t			*cr = NULL;
	RsvgRectangle		 vp = { 0, 0, W, H };
	int			 rc = ENGINE_ENOMEM;

	h = rsvg_handle_new_from_data((const guint8 *)svg->p, svg->len, &gerr);
	if (h == NULL) {
		rc = engine_invalid(err, "the chart's SVG could not be read: "
		    "%s", gerr ? gerr->message : "?");
		goto out;
	}
	surf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, W, H);
	if (cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS)
		goto out;
	cr = cairo_create(surf);
	if (!rsvg_handle_render_document(h, cr, &vp, &gerr)) {
		rc = engine_invalid(err, "the chart could not be drawn: %s",
		    gerr ? gerr->message : "?");
		goto out;
	}
	cairo_surface_flush(surf);
	if (cairo_surface_write_to_png_stream(surf, png_sink, out) !=
	    CAIRO_STATUS_SUCCESS) {
		rc = out->err == DBUF_ETOOBIG ? ENGINE_ELIMIT : ENGINE_ENOMEM;
		goto out;
	}
	rc = 0;
out:
	if (gerr != NULL)
		g_error_free(gerr);
	if (cr != NULL)
		cairo_destroy(cr);
	if (surf != NULL)
		cairo_surface_destroy(surf);
	if (h != NULL)
		g_object_unref(h);
	return rc;
}

/* ====== The provider ====== */

static int
chart_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	if ((*out = tool_defs_json(defs)) == NULL)
		return ENGINE_ENOMEM;
	return 0;
}

static int
chart_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct dbuf	 svg, png;
	json_t		*fields = NULL, *labels = NULL;
	double		*v = NULL;
	char		*dbuf_s = NULL, *lbuf = NULL, *tbuf = NULL, *fbuf = NULL;
	char		 msg[64];
	const char	*data, *lab, *title, *fmt, *kind;
	size_t		 i, n;
	int		 rc = 0, pie = 0, line = 0;

	err[0] = '\0';
	dbuf_init(&svg, (size_t)e->conf->export_max_output);
	dbuf_init(&png, (size_t)e->conf->export_max_output);
	if (call->tool != NULL && strcmp(call->tool, "pie_chart") == 0)
		pie = 1;
	else if (call->tool != NULL && strcmp(call->tool, "line_chart") == 0)
		line = 1;
	else if (call->tool == NULL || strcmp(call->tool, "bar_chart") != 0) {
		rc = ENGINE_ENOTFOUND;
		engine_invalid(err, "tool 'chart/%s' is not available in "
		    "flowcgi", call->tool ? call->tool : "");
		goto out;
	}
	kind = pie ? "pie" : line ? "line" : "bar";
	data = tool_param_str(call->params, "data", &dbuf_s);
	if (data == NULL || *data == '\0') {
		rc = tool_result_text(out, "Please input data", 17);
		goto out;
	}
	if ((int64_t)strlen(data) > e->conf->export_max_input) {
		rc = ENGINE_ELIMIT;
		snprintf(err, ENGINE_ERRMAX, "data has more than "
		    "export.max_input (%lld bytes)",
		    (long long)e->conf->export_max_input);
		goto out;
	}
	if ((fields = split(data)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	n = json_array_size(fields);
	if (n > (size_t)e->conf->export_max_points) {
		rc = ENGINE_ELIMIT;
		snprintf(err, ENGINE_ERRMAX, "data has %zu values, more than "
		    "export.max_points (%d)", n, e->conf->export_max_points);
		goto out;
	}
	if ((v = calloc(n, sizeof(*v))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (py_float(json_string_value(json_array_get(fields, i)),
		    &v[i]) != 0) {
			rc = engine_invalid(err, "could not convert string to "
			    "float: '%.64s'", json_string_value(
			    json_array_get(fields, i)));
			goto out;
		}
	{
		double lo = 0, hi = 0, sum = 0;

		for (i = 0; i < n; i++) {
			lo = fmin(lo, v[i]);
			hi = fmax(hi, v[i]);
			sum += fabs(v[i]);
		}
		if (!isfinite(hi - lo) || !isfinite(sum)) {
			rc = engine_invalid(err, "the data's values are too "
			    "large to draw (their range passes a double)");
			goto out;
		}
	}
	lab = tool_param_str(call->params, pie ? "categories" : "x_axis",
	    &lbuf);
	if (lab != NULL && *lab != '\0') {
		if ((labels = split(lab)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if (json_array_size(labels) != n) {	/* Dify ignores them */
			json_decref(labels);
			labels = NULL;
		}
	}
	title = tool_param_str(call->params, "title", &tbuf);
	if (pie)
		svg_pie(&svg, v, n, labels, title);
	else
		svg_bar_line(&svg, line, v, n, labels, title);
	if (svg.err) {
		rc = svg.err == DBUF_ETOOBIG ? ENGINE_ELIMIT : ENGINE_ENOMEM;
		goto out;
	}
	fmt = tool_param_str(call->params, "image_format", &fbuf);
	if (fmt != NULL && strcasecmp(fmt, "svg") != 0 &&
	    strcasecmp(fmt, "png") != 0 && *fmt != '\0') {
		rc = engine_invalid(err, "image_format must be png or svg, not "
		    "'%.32s'", fmt);
		goto out;
	}
	snprintf(msg, sizeof(msg), "the %s chart is saved as an image.", kind);
	if ((rc = tool_result_text(out, msg, strlen(msg))) != 0)
		goto out;
	if (fmt != NULL && strcasecmp(fmt, "svg") == 0) {
		rc = tool_result_file(out, file_from_bytes(NULL,
		    "image/svg+xml", svg.p, svg.len));
		goto out;
	}
	if ((rc = svg_png(&svg, &png, err)) != 0)
		goto out;
	rc = tool_result_file(out, file_from_bytes(NULL, "image/png", png.p,
	    png.len));
out:
	if (rc == ENGINE_ELIMIT && err[0] == '\0')
		snprintf(err, ENGINE_ERRMAX, "the chart would pass "
		    "export.max_output (%lld bytes)",
		    (long long)e->conf->export_max_output);
	json_decref(fields);
	json_decref(labels);
	free(v);
	free(dbuf_s);
	free(lbuf);
	free(tbuf);
	free(fbuf);
	dbuf_free(&svg);
	dbuf_free(&png);
	return rc;
}

const struct tool_provider tool_provider_chart = {
	"chart", chart_list, chart_invoke, 0,
};
