/*
 * echarts.c — the langgenius/echarts plugin: bar_chart, line_chart and
 * pie_chart answer an ECharts option as a ```echarts code block, which
 * Dify's chat page (and any Markdown view that knows ECharts) draws. As
 * the plugin's tools (bar.py, line.py, pie.py): data and x_axis (categories for the pie) are
 * ";"-separated, the numbers all integers when every one is digits, else
 * floats; the option is json.dumps(indent=2, ensure_ascii=False) of the
 * plugin's dict, in its key order (jansson keeps insertion order and
 * writes the same layout).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tools/tools.h"

#define ECHARTS_MAX_POINTS	10000	/* values of one chart */

static const struct tool_param chart_params[] = {
	{ "title", "string", 0, "The title of the chart." },
	{ "data", "string", 1, "The values, separated by \";\"." },
	{ "x_axis", "string", 1, "The x-axis labels, separated by \";\"." },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_param pie_params[] = {
	{ "title", "string", 0, "The title of the chart." },
	{ "data", "string", 1, "The values, separated by \";\"." },
	{ "categories", "string", 1, "The categories, separated by \";\"." },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def defs[] = {
	{ "bar_chart", "Bar chart: an ECharts option drawn by the chat page.",
	    chart_params },
	{ "line_chart", "Line chart: an ECharts option drawn by the chat page.",
	    chart_params },
	{ "pie_chart", "Pie chart: an ECharts option drawn by the chat page.",
	    pie_params },
	{ NULL, NULL, NULL },
};

/* s split at ';' into a new array of strings. */
static json_t *
split(const char *s)
{
	json_t		*arr = json_array();
	const char	*p = s, *q;

	while (arr != NULL) {
		q = strchr(p, ';');
		if (json_array_size(arr) >= ECHARTS_MAX_POINTS ||
		    json_array_append_new(arr, json_stringn(p, q ? (size_t)(q -
		    p) : strlen(p))) != 0) {
			json_decref(arr);
			return NULL;
		}
		if (q == NULL)
			break;
		p = q + 1;
	}
	return arr;
}

/* Python's str.isdigit for ASCII text: non-empty, digits only. */
static int
all_digits(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* The values as the plugin makes them: ints when every one is digits,
 * else floats (Python's float(): surrounding blanks allowed). */
static int
numbers(const json_t *parts, char *err, json_t **out)
{
	const json_t	*p;
	const char	*s;
	char		*end;
	double		 d;
	size_t		 i;
	int		 ints = 1;

	*out = NULL;
	json_array_foreach(parts, i, p)
		ints &= all_digits(json_string_value(p));
	if ((*out = json_array()) == NULL)
		return ENGINE_ENOMEM;
	json_array_foreach(parts, i, p) {
		s = json_string_value(p);
		errno = 0;
		if (ints) {
			long long v = strtoll(s, &end, 10);

			if (errno != 0)
				goto bad;
			if (json_array_append_new(*out, json_integer(v)) != 0)
				return ENGINE_ENOMEM;
			continue;
		}
		d = strtod(s, &end);
		while (isspace((unsigned char)*end))
			end++;
		if (end == s || *end != '\0' || errno != 0)
			goto bad;
		if (json_array_append_new(*out, json_real(d)) != 0)
			return ENGINE_ENOMEM;
	}
	return 0;
bad:
	json_decref(*out);
	*out = NULL;
	engine_invalid(err, "could not convert string to float: '%.100s'", s);
	return ENGINE_EINVAL;
}

static int
echarts_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
echarts_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	const char	*tool = call->tool, *title, *data, *labels;
	char		*tb = NULL, *db = NULL, *lb = NULL, *json = NULL;
	json_t		*parts = NULL, *vals = NULL, *names = NULL, *cfg = NULL;
	json_t		*pie = NULL;
	struct dbuf	 b = { 0 };
	size_t		 i;
	int		 rc = 0, is_pie;

	if (!tool_defs_has(defs, tool)) {
		engine_invalid(err, "tool 'echarts/%s' is not available in "
		    "flowcgi", tool ? tool : "");
		return ENGINE_ENOTFOUND;
	}
	is_pie = strcmp(tool, "pie_chart") == 0;
	title = tool_param_str(call->params, "title", &tb);
	labels = tool_param_str(call->params, is_pie ? "categories" : "x_axis",
	    &lb);
	data = tool_param_str(call->params, "data", &db);
	if (labels == NULL || *labels == '\0') {
		rc = tool_result_text(out, is_pie ? "Please input categories" :
		    "Please input x_axis", is_pie ? 23 : 19);
		goto out;
	}
	if (data == NULL || *data == '\0') {
		rc = tool_result_text(out, "Please input data", 17);
		goto out;
	}
	if ((names = split(labels)) == NULL || (parts = split(data)) == NULL) {
		rc = engine_invalid(err, "at most %d values and labels",
		    ECHARTS_MAX_POINTS);
		rc = ENGINE_ELIMIT;
		goto out;
	}
	if ((rc = numbers(parts, err, &vals)) != 0) {
		out->final = rc == ENGINE_EINVAL;
		goto out;
	}
	if (is_pie) {
		/* zip(data, categories): as many as the shorter */
		if ((pie = json_array()) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		for (i = 0; i < json_array_size(vals) &&
		    i < json_array_size(names); i++)
			if (json_array_append_new(pie, json_pack("{s:O,s:O}",
			    "value", json_array_get(vals, i), "name",
			    json_array_get(names, i))) != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		cfg = json_pack("{s:{s:s,s:s},s:{s:s},s:{s:s,s:s},"
		    "s:[{s:s,s:O}]}", "title", "left", "center", "text",
		    title ? title : "", "tooltip", "trigger", "item", "legend",
		    "orient", "vertical", "left", "left", "series", "type",
		    "pie", "data", pie);
	} else
		cfg = json_pack("{s:{s:s,s:s},s:{s:s,s:{s:s}},s:{s:s,s:O},"
		    "s:{s:s},s:[{s:O,s:s,s:b}]}", "title", "left", "center",
		    "text", title ? title : "", "tooltip", "trigger", "axis",
		    "axisPointer", "type", "cross", "xAxis", "type",
		    "category", "data", names, "yAxis", "type", "value",
		    "series", "data", vals, "type", strcmp(tool,
		    "bar_chart") == 0 ? "bar" : "line", "smooth", 1);
	if (cfg == NULL || (json = json_dumps(cfg, JSON_INDENT(2) |
	    JSON_REAL_PRECISION(15))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	dbuf_addf(&b, "```echarts\n%s\n```", json);
	rc = b.err ? ENGINE_ENOMEM : tool_result_text(out, b.p, b.len);
out:
	dbuf_free(&b);
	free(json);
	free(tb);
	free(db);
	free(lb);
	json_decref(parts);
	json_decref(vals);
	json_decref(names);
	json_decref(pie);
	json_decref(cfg);
	return rc;
}

const struct tool_provider tool_provider_echarts = {
	"echarts", echarts_list, echarts_invoke, 0,
};
