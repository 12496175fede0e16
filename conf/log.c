/*
 * log.c — one line per event, to standard error or a file: text
 * ("<time> <level> <message>") or, with log.format json, one JSON object
 * per line with the time, level, message and what the thread works on
 * (request id, route, app, run id).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "conf/conf.h"

static int	 log_level = CONF_LOG_INFO;
static int	 log_format = CONF_LOG_TEXT;
static int	 log_requests;
static FILE	*log_fp;

/* What the calling thread's lines are about: the request's strings are
 * borrowed (they live as long as the request), a run's are copied (the
 * run ends before the request's last line). */
static __thread struct {
	const char	*request_id;
	const char	*route;
	char		 app[40];
	char		 run_id[40];
} ctx;

int
log_init(int level, const char *path)
{
	FILE *fp;

	log_level = level;
	if (path == NULL || *path == '\0') {
		log_fp = NULL;
		return 0;
	}
	if ((fp = fopen(path, "a")) == NULL)
		return -1;
	setvbuf(fp, NULL, _IOLBF, 0);
	log_fp = fp;
	return 0;
}

void
log_set_format(int format)
{
	log_format = format == CONF_LOG_JSON ? CONF_LOG_JSON : CONF_LOG_TEXT;
}

void
log_set_requests(int on)
{
	log_requests = on;
}

void
log_context_request(const char *request_id, const char *route)
{
	ctx.request_id = request_id;
	ctx.route = route;
}

void
log_context_run(const char *app, const char *run_id)
{
	snprintf(ctx.app, sizeof(ctx.app), "%s", app ? app : "");
	snprintf(ctx.run_id, sizeof(ctx.run_id), "%s", run_id ? run_id : "");
}

void
log_context_clear(void)
{
	memset(&ctx, 0, sizeof(ctx));
}

const char *
log_context_request_id(void)
{
	return ctx.request_id;
}

/* Writes s as the inside of a JSON string. */
static void
json_str(FILE *fp, const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\') {
			fputc('\\', fp);
			fputc(*p, fp);
		} else if (*p == '\n')
			fputs("\\n", fp);
		else if (*p == '\t')
			fputs("\\t", fp);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(fp, "\\u%04x", *p);
		else
			fputc(*p, fp);
	}
}

static void
json_field(FILE *fp, const char *k, const char *v)
{
	if (v == NULL || *v == '\0')
		return;
	fprintf(fp, ",\"%s\":\"", k);
	json_str(fp, v);
	fputc('"', fp);
}

/*
 * One line. extra, for JSON lines, is more members to write as they are
 * (",\"status\":200"), or NULL.
 */
static void __attribute__((format(printf, 4, 0)))
log_line(int level, const char *tag, const char *extra, const char *fmt,
    va_list ap)
{
	FILE		*fp = log_fp != NULL ? log_fp : stderr;
	char		 ts[32], msg[4096];
	struct timespec	 now;
	struct tm	 tm;

	if (level > log_level)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	if (log_format == CONF_LOG_JSON)
		vsnprintf(msg, sizeof(msg), fmt, ap);
	flockfile(fp);
	if (log_format == CONF_LOG_JSON) {
		fprintf(fp, "{\"time\":\"%s.%03ldZ\",\"level\":\"%s\"", ts,
		    now.tv_nsec / 1000000, tag);
		json_field(fp, "request_id", ctx.request_id);
		json_field(fp, "route", ctx.route);
		json_field(fp, "app", ctx.app);
		json_field(fp, "run_id", ctx.run_id);
		if (extra != NULL)
			fputs(extra, fp);
		fputs(",\"msg\":\"", fp);
		json_str(fp, msg);
		fputs("\"}\n", fp);
	} else {
		fprintf(fp, "%s.%03ldZ %s ", ts, now.tv_nsec / 1000000, tag);
		vfprintf(fp, fmt, ap);
		fputc('\n', fp);
	}
	funlockfile(fp);
	fflush(fp);
}

#define LOG_FN(fn, lvl, tag)                                                  \
	void fn(const char *fmt, ...)                                         \
	{                                                                     \
		va_list ap;                                                   \
		va_start(ap, fmt);                                            \
		log_line(lvl, tag, NULL, fmt, ap);                            \
		va_end(ap);                                                   \
	}

LOG_FN(log_error, CONF_LOG_ERROR, "error")
LOG_FN(log_warn, CONF_LOG_WARN, "warn")
LOG_FN(log_info, CONF_LOG_INFO, "info")
LOG_FN(log_debug, CONF_LOG_DEBUG, "debug")

static void __attribute__((format(printf, 3, 4)))
log_with(int level, const char *extra, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(level, level == CONF_LOG_INFO ? "info" : "debug", extra, fmt,
	    ap);
	va_end(ap);
}

void
log_request(const char *method, const char *path, int status, double ms)
{
	char	extra[128], m[17];
	size_t	i, n = 0;
	int	level = log_requests ? CONF_LOG_INFO : CONF_LOG_DEBUG;

	if (level > log_level)
		return;
	/* the client's word: letters only in the JSON as it is */
	for (i = 0; method[i] != '\0' && n < sizeof(m) - 1; i++)
		if (method[i] >= 'A' && method[i] <= 'Z')
			m[n++] = method[i];
	m[n] = '\0';
	snprintf(extra, sizeof(extra), ",\"method\":\"%s\",\"status\":%d,"
	    "\"duration_ms\":%.2f", m, status, ms);
	log_with(level, extra, "%s %s %d %.2fms", method, path, status, ms);
}
