/*
 * t_tools_time.c — the time zone reader and Dify's time tools with fixed
 * inputs: offsets, abbreviations and DST (from transitions and from the
 * POSIX footer far in the future), Python's strftime extras, conversion,
 * pytz's choice in repeated and skipped hours, weekday phrasing and
 * invalid dates, the registry's provider ids, descriptions for agents.
 */
#include <time.h>

#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"

static const char *
fmt_at(const char *zone, int64_t t, const char *fmt)
{
	static char	 buf[4][128];
	static int	 i;
	struct tz_zone	*z = NULL;
	struct tz_info	 info;
	char		 err[ENGINE_ERRMAX], *s = NULL;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "(error)");
	if (tz_load(zone, err, &z) != 0) {
		printf("# %s: %s\n", zone, err);
		return buf[i];
	}
	tz_lookup(z, t, &info);
	if (tz_strftime(fmt, t, 0, &info, &s) == 0)
		snprintf(buf[i], sizeof(buf[i]), "%s", s);
	free(s);
	tz_free(z);
	return buf[i];
}

static int64_t
localize(const char *zone, const char *local)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX];
	int64_t			 v = -1;

	if (tool_call_simple("time", "builtin", "localtime_to_timestamp",
	    json_pack("{s:s,s:s}", "localtime", local, "timezone", zone), &r,
	    err) == 0)
		v = strtoll(res_text(&r), NULL, 10);
	tool_result_release(&r);
	return v;
}

/* The text a time tool answers, in a static ring. */
static const char *
tool_text(const char *tool, json_t *params)
{
	static char		 buf[4][320];
	static int		 i;
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX];

	i = (i + 1) % 4;
	if (tool_call_simple("langgenius/time/time", "builtin", tool, params,
	    &r, err) == 0)
		snprintf(buf[i], sizeof(buf[i]), "%s", res_text(&r));
	else
		snprintf(buf[i], sizeof(buf[i]), "(failed: %s)", err);
	tool_result_release(&r);
	return buf[i];
}

static void
test_zones(void)
{
	const char *f = "%Y-%m-%d %H:%M:%S %Z %z";

	CHECK_STR(fmt_at("Asia/Shanghai", 1704067200, f),
	    "2024-01-01 08:00:00 CST +0800");
	CHECK_STR(fmt_at("Europe/Berlin", 1719835200, f),
	    "2024-07-01 14:00:00 CEST +0200");
	CHECK_STR(fmt_at("Europe/Berlin", 1704067200, f),
	    "2024-01-01 01:00:00 CET +0100");
	CHECK_STR(fmt_at("America/New_York", 1704067200, f),
	    "2023-12-31 19:00:00 EST -0500");
	/* beyond the last transition: the footer's rule */
	CHECK_STR(fmt_at("Europe/Berlin", 4118049600LL, f),
	    "2100-06-30 16:40:00 CEST +0200");
	CHECK_STR(fmt_at("America/New_York", 4118049600LL, f),
	    "2100-06-30 10:40:00 EDT -0400");
	CHECK_STR(fmt_at("Australia/Sydney", 1704067200, f),
	    "2024-01-01 11:00:00 AEDT +1100");
	CHECK_STR(fmt_at("Australia/Sydney", 4118049600LL, f),
	    "2100-07-01 00:40:00 AEST +1000");
	CHECK_STR(fmt_at("Asia/Kolkata", 1704067200, f),
	    "2024-01-01 05:30:00 IST +0530");
	CHECK_STR(fmt_at("America/Sao_Paulo", 1704067200, f),
	    "2023-12-31 21:00:00 -03 -0300");
	CHECK_STR(fmt_at("Africa/Cairo", 1719835200, f),
	    "2024-07-01 15:00:00 EEST +0300");
	CHECK_STR(fmt_at("UTC", 0, f), "1970-01-01 00:00:00 UTC +0000");
	/* Python's extras and the C library's directives */
	CHECK_STR(fmt_at("UTC", 1704067200, "%A %a %B %b %j %p %f %% %y"),
	    "Monday Mon January Jan 001 AM 000000 % 24");
	CHECK_STR(fmt_at("UTC", 1704067200, "no directives"), "no directives");
	CHECK_STR(fmt_at("UTC", 1704067200, ""), "");
}

static void
test_bad_zones(void)
{
	struct tz_zone	*z = NULL;
	char		 err[ENGINE_ERRMAX];

	CHECK(tz_load("Mars/Base", err, &z) == ENGINE_ENOTFOUND);
	CHECK(tz_load("../../etc/passwd", err, &z) == ENGINE_ENOTFOUND);
	CHECK(tz_load("/etc/passwd", err, &z) == ENGINE_ENOTFOUND);
	CHECK(tz_load("Asia/../Asia/Tokyo", err, &z) == ENGINE_ENOTFOUND);
	CHECK(tz_load("", err, &z) == ENGINE_ENOTFOUND);
	/* a directory is not a zone */
	CHECK(tz_load("Asia", err, &z) == ENGINE_ENOTFOUND);
	CHECK(z == NULL);
}

static void
test_current_time(void)
{
	char	year[16];
	time_t	now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	snprintf(year, sizeof(year), "%d", tm.tm_year + 1900);
	CHECK_STR(tool_text("current_time", json_pack("{s:s,s:s}", "timezone",
	    "UTC", "format", "%Y")), year);
	CHECK_INT(strlen(tool_text("current_time", json_object())), 19);
	CHECK_INT(strlen(tool_text("current_time", json_pack("{s:s}",
	    "timezone", "Asia/Shanghai"))), 19);
	CHECK_STR(tool_text("current_time", json_pack("{s:s,s:s}", "timezone",
	    "Asia/Shanghai", "format", "%Z %z")), "CST +0800");
	CHECK_STR(tool_text("current_time", json_pack("{s:s}", "timezone",
	    "Mars/Base")), "Invalid timezone: Mars/Base");
}

static void
test_conversion(void)
{
	CHECK_STR(tool_text("timezone_conversion", json_pack("{s:s,s:s,s:s}",
	    "current_time", "2024-1-1 00:00:00", "current_timezone",
	    "Asia/Shanghai", "target_timezone", "Asia/Tokyo")),
	    "2024-01-01 01:00:00");
	CHECK_STR(tool_text("timezone_conversion", json_pack("{s:s,s:s,s:s}",
	    "current_time", "2024-07-01 12:00:00", "current_timezone",
	    "Europe/Berlin", "target_timezone", "America/New_York")),
	    "2024-07-01 06:00:00");
	CHECK(strncmp(tool_text("timezone_conversion", json_pack(
	    "{s:s,s:s,s:s}", "current_time", "yesterday", "current_timezone",
	    "UTC", "target_timezone", "UTC")), "(failed", 7) == 0);
	CHECK(strncmp(tool_text("timezone_conversion", json_pack(
	    "{s:s,s:s,s:s}", "current_time", "2024-1-1 00:00:00",
	    "current_timezone", "Nowhere", "target_timezone", "UTC")),
	    "(failed", 7) == 0);
	CHECK_STR(tool_text("timestamp_to_localtime", json_pack("{s:I,s:s}",
	    "timestamp", (json_int_t)1704067200, "timezone", "Asia/Shanghai")),
	    "2024-01-01 08:00:00");
	CHECK_STR(tool_text("timestamp_to_localtime", json_pack("{s:s}",
	    "timestamp", "1704067200")), "2024-01-01 08:00:00");
	CHECK_STR(tool_text("timestamp_to_localtime", json_pack("{s:s}",
	    "timestamp", "soon")), "Invalid timestamp: soon");
	CHECK_INT(localize("Asia/Shanghai", "2024-01-01 08:00:00"),
	    1704067200);
	/* pytz localize(is_dst=False): the repeated hour reads as standard
	 * time, the skipped one with the offset before the change */
	CHECK_INT(localize("America/New_York", "2024-11-03 01:30:00"),
	    1730615400);
	CHECK_INT(localize("America/New_York", "2024-03-10 02:30:00"),
	    1710055800);
	CHECK_INT(localize("Europe/Berlin", "2100-07-01 14:00:00"),
	    4118126400LL);
}

static void
test_weekday(void)
{
	CHECK_STR(tool_text("weekday", json_pack("{s:i,s:i,s:i}", "year",
	    2024, "month", 1, "day", 1)), "January 1, 2024 is Monday.");
	CHECK_STR(tool_text("weekday", json_pack("{s:s,s:s,s:s}", "year",
	    "2000", "month", "2", "day", "29")),
	    "February 29, 2000 is Tuesday.");
	CHECK_STR(tool_text("weekday", json_pack("{s:i,s:i,s:i}", "year",
	    1969, "month", 7, "day", 20)), "July 20, 1969 is Sunday.");
	CHECK_STR(tool_text("weekday", json_pack("{s:i,s:i,s:i}", "year",
	    2023, "month", 2, "day", 29)),
	    "Invalid date: Year 2023, Month 2, Day 29.");
	CHECK_STR(tool_text("weekday", json_pack("{s:i,s:i,s:i}", "year",
	    2023, "month", 13, "day", 1)),
	    "Invalid date: Year 2023, Month 13, Day 1.");
	CHECK(strstr(tool_text("weekday", json_pack("{s:i,s:i}", "year", 2023,
	    "day", 1)), "Month is required") != NULL);
}

static void
test_registry(void)
{
	struct tool_call	 call;
	json_t			*d = NULL;
	char			 err[ENGINE_ERRMAX];

	CHECK(tool_provider_find("time", NULL) == &tool_provider_time);
	CHECK(tool_provider_find("langgenius/time/time", "builtin") ==
	    &tool_provider_time);
	CHECK(tool_provider_find("langgenius/time", "plugin") ==
	    &tool_provider_time);
	CHECK(tool_provider_find("langgenius/json_process/json_process",
	    "plugin") == &tool_provider_json_process);
	CHECK(tool_provider_find("webscraper", "builtin") ==
	    &tool_provider_webscraper);
	CHECK(tool_provider_find("code", "builtin") == &tool_provider_code);
	CHECK(tool_provider_find("jina", "builtin") == NULL);
	CHECK(tool_provider_find("e64b4c7f", "api") == &tool_provider_api);
	CHECK(tool_provider_find("srv", "mcp") == &tool_provider_mcp);
	/* a workflow tool is an app of the server, whatever the id */
	CHECK(tool_provider_find("time", "workflow") ==
	    &tool_provider_workflow);
	CHECK(tool_provider_find("langgenius/", NULL) == NULL);

	memset(&call, 0, sizeof(call));
	call.provider = "time";
	CHECK(tool_describe(tn_engine, &call, err, &d) == 0);
	CHECK_INT(json_array_size(d), 5);
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(d, 0), "parameters"), "type")), "object");
	json_decref(d);
	call.tool = "weekday";
	CHECK(tool_describe(tn_engine, &call, err, &d) == 0);
	CHECK_INT(json_array_size(d), 1);
	CHECK_STR(tn_dump(json_object_get(json_object_get(json_array_get(d,
	    0), "parameters"), "required")), "[\"year\",\"month\",\"day\"]");
	json_decref(d);
	call.tool = "nope";
	CHECK(tool_describe(tn_engine, &call, err, &d) == ENGINE_ENOTFOUND);
	CHECK_STR(err, "tool 'time/nope' is not available in flowcgi");
	call.provider = "jina";
	CHECK(tool_describe(tn_engine, &call, err, &d) == ENGINE_ENOTFOUND);
	{
		struct tool_result r;

		CHECK(tool_call_simple("time", NULL, "nope", NULL, &r, err) ==
		    ENGINE_ENOTFOUND);
		CHECK_STR(err, "tool 'time/nope' is not available in flowcgi");
		tool_result_release(&r);
		CHECK(tool_call_simple("jina", "builtin", "reader", NULL, &r,
		    err) == ENGINE_ENOTFOUND);
		CHECK_STR(err, "tool 'jina/reader' is not available in "
		    "flowcgi");
		tool_result_release(&r);
	}
}

int
main(void)
{
	tn_open();
	test_zones();
	test_bad_zones();
	test_current_time();
	test_conversion();
	test_weekday();
	test_registry();
	tn_close();
	return tap_done();
}
