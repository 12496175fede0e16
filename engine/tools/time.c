/*
 * time.c — Dify's builtin `time` provider
 * (api/core/tools/builtin_tool/providers/time/tools/), answering with the
 * same text messages:
 *
 *   current_time          timezone (default UTC), format (default
 *                         "%Y-%m-%d %H:%M:%S"): now, formatted with
 *                         Python's strftime rules; "Invalid timezone: X"
 *   timezone_conversion   current_time ("%Y-%m-%d %H:%M:%S"),
 *                         current_timezone (Asia/Shanghai),
 *                         target_timezone (Asia/Tokyo)
 *   weekday               year, month, day: "January 1, 2024 is Monday."
 *   timestamp_to_localtime  timestamp, timezone (Asia/Shanghai)
 *   localtime_to_timestamp  localtime ("%Y-%m-%d %H:%M:%S"), timezone
 *
 * Time zones come from tz.c (thread-safe; see there). A zone name Dify
 * would reject fails the tool as Dify's ToolInvokeError does, except in
 * current_time, which answers with a message.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "engine/tools/tools.h"

#define TIME_FMT	"%Y-%m-%d %H:%M:%S"

static const struct tool_param p_current[] = {
	{ "timezone", "string", 0, "Timezone (IANA name), default UTC" },
	{ "format", "string", 0, "Time format in strftime standard." },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_convert[] = {
	{ "current_time", "string", 1, "Datetime to convert, in the form "
	    "2024-1-1 00:00:00" },
	{ "current_timezone", "string", 1, "Timezone of current_time" },
	{ "target_timezone", "string", 1, "Timezone to convert to" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_weekday[] = {
	{ "year", "number", 1, "Year" },
	{ "month", "number", 1, "Month" },
	{ "day", "number", 1, "Day" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_ts2local[] = {
	{ "timestamp", "number", 1, "Unix timestamp in seconds" },
	{ "timezone", "string", 0, "Timezone, default Asia/Shanghai" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_local2ts[] = {
	{ "localtime", "string", 1, "Local time, 2024-1-1 00:00:00" },
	{ "timezone", "string", 0, "Timezone, default Asia/Shanghai" },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def defs[] = {
	{ "current_time", "A tool for getting the current time.", p_current },
	{ "timezone_conversion", "Convert a time from one timezone to "
	    "another.", p_convert },
	{ "weekday", "A tool for calculating the weekday of a given date.",
	    p_weekday },
	{ "timestamp_to_localtime", "Convert a timestamp to local time.",
	    p_ts2local },
	{ "localtime_to_timestamp", "Convert local time to a timestamp.",
	    p_local2ts },
	{ NULL, NULL, NULL },
};

static const char *const month_names[] = { "January", "February", "March",
    "April", "May", "June", "July", "August", "September", "October",
    "November", "December" };
static const char *const day_names[] = { "Monday", "Tuesday", "Wednesday",
    "Thursday", "Friday", "Saturday", "Sunday" };

/* A string parameter, or dflt when missing (NULL) — Python's .get(k, d). */
static const char *
str_or(const json_t *params, const char *name, const char *dflt, char **buf)
{
	const char *s = tool_param_str(params, name, buf);

	return s != NULL || json_object_get(params, name) != NULL ? s : dflt;
}

static int
text(struct tool_result *out, const char *s)
{
	return tool_result_text(out, s, strlen(s));
}

/* Python's datetime.strptime(s, "%Y-%m-%d %H:%M:%S") as wall-clock
 * seconds. Returns 0 or -1. */
static int
parse_local(const char *s, int64_t *out)
{
	int	v[6], i, n, max[6] = { 4, 2, 2, 2, 2, 2 };
	char	sep[6] = { '-', '-', ' ', ':', ':', '\0' };

	if (s == NULL)
		return -1;
	for (i = 0; i < 6; i++) {
		for (v[i] = 0, n = 0; isdigit((unsigned char)*s) &&
		    n < max[i]; n++)
			v[i] = v[i] * 10 + (*s++ - '0');
		if (n == 0 || (i == 0 && n != 4))
			return -1;
		if (sep[i] == ' ') {
			if (!isspace((unsigned char)*s))
				return -1;
			while (isspace((unsigned char)*s))
				s++;
		} else if (sep[i] != '\0' && *s++ != sep[i])
			return -1;
	}
	if (*s != '\0' || v[0] < 1 || v[1] < 1 || v[1] > 12 || v[2] < 1 ||
	    v[3] > 23 || v[4] > 59 || v[5] > 61)
		return -1;
	/* Python accepts :60 and :61 only as leap seconds it clamps */
	if (v[5] > 59)
		v[5] = 59;
	if (v[2] > (v[1] == 2 ? ((v[0] % 4 == 0 && v[0] % 100 != 0) ||
	    v[0] % 400 == 0 ? 29 : 28) : (v[1] == 4 || v[1] == 6 ||
	    v[1] == 9 || v[1] == 11) ? 30 : 31))
		return -1;
	*out = tz_days_from_civil(v[0], v[1], v[2]) * 86400 + v[3] * 3600 +
	    v[4] * 60 + v[5];
	return 0;
}

/* Formats instant t in zone z with fmt into the result. */
static int
emit_time(struct tool_result *out, const struct tz_zone *z, int64_t t,
    int usec, const char *fmt, char *err)
{
	struct tz_info	 info;
	char		*s = NULL;
	int		 rc;

	tz_lookup(z, t, &info);
	if ((rc = tz_strftime(fmt, t, usec, &info, &s)) != 0) {
		engine_invalid(err, "time format '%s' cannot be used", fmt);
		goto out;
	}
	rc = text(out, s);
out:
	free(s);
	return rc;
}

static int
current_time(const json_t *params, char *err, struct tool_result *out)
{
	struct tz_zone	*z = NULL;
	struct timeval	 tv;
	const char	*tzname, *fmt;
	char		*b1 = NULL, *b2 = NULL, msg[200];
	int		 rc;

	tzname = str_or(params, "timezone", "UTC", &b1);
	fmt = tool_param_str(params, "format", &b2);
	if (fmt == NULL || *fmt == '\0')
		fmt = TIME_FMT;
	if (tzname == NULL || tz_load(tzname, err, &z) != 0) {
		snprintf(msg, sizeof(msg), "Invalid timezone: %s",
		    tzname ? tzname : "None");
		rc = text(out, msg);
		goto out;
	}
	gettimeofday(&tv, NULL);
	rc = emit_time(out, z, (int64_t)tv.tv_sec, (int)tv.tv_usec, fmt, err);
out:
	tz_free(z);
	free(b1);
	free(b2);
	return rc;
}

static int
timezone_conversion(const json_t *params, char *err, struct tool_result *out)
{
	struct tz_zone	*src = NULL, *dst = NULL;
	const char	*cur, *from, *to;
	char		*b1 = NULL, *b2 = NULL, *b3 = NULL;
	int64_t		 local;
	int		 rc;

	cur = tool_param_str(params, "current_time", &b1);
	from = str_or(params, "current_timezone", "Asia/Shanghai", &b2);
	to = str_or(params, "target_timezone", "Asia/Tokyo", &b3);
	if ((rc = tz_load(from, err, &src)) != 0 ||
	    (rc = tz_load(to, err, &dst)) != 0)
		goto out;
	if (parse_local(cur, &local) != 0) {
		rc = engine_invalid(err, "time data '%s' does not match "
		    "format '%s'", cur ? cur : "None", TIME_FMT);
		goto out;
	}
	rc = emit_time(out, dst, tz_localize(src, local), 0, TIME_FMT, err);
out:
	tz_free(src);
	tz_free(dst);
	free(b1);
	free(b2);
	free(b3);
	return rc;
}

static int
weekday(const json_t *params, char *err, struct tool_result *out)
{
	int64_t	y = 0, m = 0, d = 0, days;
	char	msg[200];
	int	rc, ry, rm, rd, dim;

	rm = tool_param_int(params, "month", &m);
	if (rm == 1) {
		rc = engine_invalid(err, "Month is required");
		goto out;
	}
	ry = tool_param_int(params, "year", &y);
	rd = tool_param_int(params, "day", &d);
	if (ry != 0 || rm != 0 || rd != 0 || y < 1 || y > 9999 || m < 1 ||
	    m > 12 || d < 1 || d > 31)
		goto invalid;
	dim = m == 2 ? ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 :
	    28) : (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31;
	if (d > dim)
		goto invalid;
	days = tz_days_from_civil(y, (int)m, (int)d);
	/* 1970-01-01 was a Thursday: index 3 from Monday */
	snprintf(msg, sizeof(msg), "%s %d, %d is %s.", month_names[m - 1],
	    (int)d, (int)y, day_names[((days % 7) + 7 + 3) % 7]);
	rc = text(out, msg);
	goto out;
invalid:
	{
		char	*b1 = NULL, *b2 = NULL, *b3 = NULL;
		const char *sy = tool_param_str(params, "year", &b1);
		const char *sm = tool_param_str(params, "month", &b2);
		const char *sd = tool_param_str(params, "day", &b3);

		snprintf(msg, sizeof(msg), "Invalid date: Year %s, Month %s, "
		    "Day %s.", sy ? sy : "None", sm ? sm : "None",
		    sd ? sd : "None");
		free(b1);
		free(b2);
		free(b3);
	}
	rc = text(out, msg);
out:
	return rc;
}

/* The zone of a "timezone" parameter: Asia/Shanghai when missing; an
 * empty value is the machine's zone (Dify's "local"), taken as UTC. */
static const char *
zone_param(const json_t *params, char **buf)
{
	const char *s = str_or(params, "timezone", "Asia/Shanghai", buf);

	return s == NULL || *s == '\0' ? "UTC" : s;
}

static int
timestamp_to_localtime(const json_t *params, char *err,
    struct tool_result *out)
{
	struct tz_zone	*z = NULL;
	const char	*tzname;
	char		*b = NULL, msg[200];
	int64_t		 ts;
	int		 rc;

	tzname = zone_param(params, &b);
	if ((rc = tz_load(tzname, err, &z)) != 0)
		goto out;
	if (tool_param_int(params, "timestamp", &ts) != 0 ||
	    ts < -62135596800LL || ts > 253402300799LL) {
		char *bt = NULL;
		const char *s = tool_param_str(params, "timestamp", &bt);

		snprintf(msg, sizeof(msg), "Invalid timestamp: %s",
		    s ? s : "None");
		free(bt);
		rc = text(out, msg);
		goto out;
	}
	rc = emit_time(out, z, ts, 0, TIME_FMT, err);
out:
	tz_free(z);
	free(b);
	return rc;
}

static int
localtime_to_timestamp(const json_t *params, char *err,
    struct tool_result *out)
{
	struct tz_zone	*z = NULL;
	const char	*tzname, *lt;
	char		*b1 = NULL, *b2 = NULL, msg[64];
	int64_t		 local;
	int		 rc;

	tzname = zone_param(params, &b1);
	lt = tool_param_str(params, "localtime", &b2);
	if ((rc = tz_load(tzname, err, &z)) != 0)
		goto out;
	if (parse_local(lt, &local) != 0) {
		rc = engine_invalid(err, "time data '%s' does not match "
		    "format '%s'", lt ? lt : "None", TIME_FMT);
		goto out;
	}
	snprintf(msg, sizeof(msg), "%lld", (long long)tz_localize(z, local));
	rc = text(out, msg);
out:
	tz_free(z);
	free(b1);
	free(b2);
	return rc;
}

static int
time_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
time_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	const char	*t = call->tool;
	int		 rc;

	if (strcmp(t, "current_time") == 0)
		rc = current_time(call->params, err, out);
	else if (strcmp(t, "timezone_conversion") == 0)
		rc = timezone_conversion(call->params, err, out);
	else if (strcmp(t, "weekday") == 0)
		rc = weekday(call->params, err, out);
	else if (strcmp(t, "timestamp_to_localtime") == 0)
		rc = timestamp_to_localtime(call->params, err, out);
	else if (strcmp(t, "localtime_to_timestamp") == 0)
		rc = localtime_to_timestamp(call->params, err, out);
	else {
		engine_invalid(err, "tool '%s/%s' is not available in "
		    "flowcgi", call->provider, t);
		rc = ENGINE_ENOTFOUND;
	}
	return rc;
}

const struct tool_provider tool_provider_time = {
	"time", time_list, time_invoke, 0,
};
