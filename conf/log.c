/*
 * log.c — one line per event, to standard error or a file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "conf/conf.h"

static int	 log_level = CONF_LOG_INFO;
static FILE	*log_fp;

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

static void __attribute__((format(printf, 3, 0)))
log_line(int level, const char *tag, const char *fmt, va_list ap)
{
	FILE		*fp = log_fp != NULL ? log_fp : stderr;
	char		 ts[32];
	struct timespec	 now;
	struct tm	 tm;

	if (level > log_level)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	flockfile(fp);
	fprintf(fp, "%s.%03ldZ %s ", ts, now.tv_nsec / 1000000, tag);
	vfprintf(fp, fmt, ap);
	fputc('\n', fp);
	funlockfile(fp);
	fflush(fp);
}

#define LOG_FN(fn, lvl, tag)                                                  \
	void fn(const char *fmt, ...)                                         \
	{                                                                     \
		va_list ap;                                                   \
		va_start(ap, fmt);                                            \
		log_line(lvl, tag, fmt, ap);                                  \
		va_end(ap);                                                   \
	}

LOG_FN(log_error, CONF_LOG_ERROR, "error")
LOG_FN(log_warn, CONF_LOG_WARN, "warn")
LOG_FN(log_info, CONF_LOG_INFO, "info")
LOG_FN(log_debug, CONF_LOG_DEBUG, "debug")
