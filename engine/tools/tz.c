/*
 * tz.c — IANA time zones without touching TZ.
 *
 * Why: glibc keeps one time zone per process, chosen through the TZ
 * environment variable; setenv is not safe while other threads read the
 * environment (libcurl does), and a lock around setenv + tzset +
 * localtime_r does not protect those readers. So the time tools read the
 * zone's TZif file (RFC 8536) themselves: the version 2+ 64-bit block
 * (the version 1 block for old files), its transitions and local time
 * types, and the POSIX TZ string in the footer, which gives the rule for
 * instants after the last transition (modern "slim" files rely on it).
 * Leap-second records are ignored, as Python's zoneinfo and pytz do.
 *
 * Zone files come from $TZDIR or /usr/share/zoneinfo (Debian's tzdata);
 * "UTC" (and "Etc/UTC", "GMT", "Z") work without any file.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/tools/tools.h"

#define TZ_MAX_FILE	(256 * 1024)
#define TZ_MAX_NAME	128
#define TZ_MAX_TYPES	256

/* One rule date of a POSIX TZ string: Jn, n or Mm.w.d, and a time. */
struct tz_date {
	char	kind;		/* 'J', 'N' (zero-based day), 'M' */
	int	day, month, week, wday;
	int32_t	secs;		/* local time of the change, default 2h */
};

struct tz_type {
	int32_t	off;
	int	isdst;
	char	abbr[16];
};

struct tz_zone {
	int64_t		*trans;		/* transition instants, ascending */
	unsigned char	*idx;		/* type after each transition */
	size_t		 ntrans;
	struct tz_type	 types[TZ_MAX_TYPES];
	size_t		 ntypes;
	/* the footer */
	int		 has_rule;
	struct tz_type	 std, dst;
	int		 has_dst;
	struct tz_date	 start, end;
};

/* ====== Civil dates ====== */

int64_t
tz_days_from_civil(int64_t y, int m, int d)
{
	int64_t		era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int
is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int
month_days(int64_t y, int m)
{
	static const int	days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30,
				    31, 30, 31 };

	return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/* The year holding day number days (since the epoch). */
static int64_t
year_of_days(int64_t days)
{
	int64_t	z = days + 719468, era, doe, yoe, doy, mp, y;

	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	return mp >= 10 ? y + 1 : y;
}

static int64_t
floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* ====== The POSIX TZ footer ====== */

static const char *
parse_name(const char *s, char *buf, size_t bufsz)
{
	const char	*b = s;
	size_t		 n;

	if (*s == '<') {
		b = ++s;
		while (*s != '\0' && *s != '>')
			s++;
		if (*s != '>')
			return NULL;
		n = (size_t)(s - b);
		s++;
	} else {
		while (isalpha((unsigned char)*s))
			s++;
		n = (size_t)(s - b);
	}
	if (n < 1 || n >= bufsz)
		return NULL;
	memcpy(buf, b, n);
	buf[n] = '\0';
	return s;
}

/* [+-]hh[:mm[:ss]], hours up to 167 (the time of a rule may exceed 24). */
static const char *
parse_hms(const char *s, int32_t *out)
{
	int32_t	sign = 1, part[3] = { 0, 0, 0 };
	int	i;

	if (*s == '+' || *s == '-')
		sign = *s++ == '-' ? -1 : 1;
	for (i = 0; i < 3; i++) {
		if (!isdigit((unsigned char)*s))
			return NULL;
		while (isdigit((unsigned char)*s) && part[i] < 1000)
			part[i] = part[i] * 10 + (*s++ - '0');
		if (*s != ':' || i == 2)
			break;
		s++;
	}
	if (part[0] > 167 || part[1] > 59 || part[2] > 59)
		return NULL;
	*out = sign * (part[0] * 3600 + part[1] * 60 + part[2]);
	return s;
}

static const char *
parse_num(const char *s, int *out)
{
	int	v = 0;

	if (!isdigit((unsigned char)*s))
		return NULL;
	while (isdigit((unsigned char)*s) && v < 10000)
		v = v * 10 + (*s++ - '0');
	*out = v;
	return s;
}

static const char *
parse_date(const char *s, struct tz_date *d)
{
	memset(d, 0, sizeof(*d));
	d->secs = 7200;
	if (*s == 'M') {
		d->kind = 'M';
		if ((s = parse_num(s + 1, &d->month)) == NULL || *s++ != '.' ||
		    (s = parse_num(s, &d->week)) == NULL || *s++ != '.' ||
		    (s = parse_num(s, &d->wday)) == NULL)
			return NULL;
		if (d->month < 1 || d->month > 12 || d->week < 1 ||
		    d->week > 5 || d->wday > 6)
			return NULL;
	} else if (*s == 'J') {
		d->kind = 'J';
		if ((s = parse_num(s + 1, &d->day)) == NULL || d->day < 1 ||
		    d->day > 365)
			return NULL;
	} else {
		d->kind = 'N';
		if ((s = parse_num(s, &d->day)) == NULL || d->day > 365)
			return NULL;
	}
	if (*s == '/' && (s = parse_hms(s + 1, &d->secs)) == NULL)
		return NULL;
	return s;
}

/* Reads a footer like "CET-1CEST,M3.5.0,M10.5.0/3" into z. */
static int
parse_footer(struct tz_zone *z, const char *s)
{
	int32_t	off;

	if ((s = parse_name(s, z->std.abbr, sizeof(z->std.abbr))) == NULL ||
	    (s = parse_hms(s, &off)) == NULL)
		return -1;
	z->std.off = -off;
	if (*s != '\0') {
		if ((s = parse_name(s, z->dst.abbr,
		    sizeof(z->dst.abbr))) == NULL)
			return -1;
		z->dst.off = z->std.off + 3600;
		z->dst.isdst = 1;
		if (*s != ',' && *s != '\0') {
			if ((s = parse_hms(s, &off)) == NULL)
				return -1;
			z->dst.off = -off;
		}
		if (*s != ',' || (s = parse_date(s + 1, &z->start)) == NULL ||
		    *s != ',' || (s = parse_date(s + 1, &z->end)) == NULL)
			return -1;
		z->has_dst = 1;
	}
	if (*s != '\0')
		return -1;
	z->has_rule = 1;
	return 0;
}

/* The UTC instant of rule date d in year y, at local offset off. */
static int64_t
rule_instant(const struct tz_date *d, int64_t y, int32_t off)
{
	int64_t	days;
	int	first, mday, dim;

	if (d->kind == 'J')
		days = tz_days_from_civil(y, 1, 1) + d->day - 1 +
		    (is_leap(y) && d->day >= 60);
	else if (d->kind == 'N')
		days = tz_days_from_civil(y, 1, 1) + d->day;
	else {
		days = tz_days_from_civil(y, d->month, 1);
		/* 1970-01-01 was a Thursday (4) */
		first = (int)(((days % 7) + 11) % 7);
		mday = 1 + (d->wday - first + 7) % 7 + (d->week - 1) * 7;
		dim = month_days(y, d->month);
		while (mday > dim)
			mday -= 7;
		days += mday - 1;
	}
	return days * 86400 + d->secs - off;
}

static void
rule_lookup(const struct tz_zone *z, int64_t t, struct tz_info *out)
{
	const struct tz_type	*ty = &z->std;
	int64_t			 y, s, e;
	int			 in;

	if (z->has_dst) {
		y = year_of_days(floor_div(t + z->std.off, 86400));
		s = rule_instant(&z->start, y, z->std.off);
		e = rule_instant(&z->end, y, z->dst.off);
		in = s < e ? (t >= s && t < e) : !(t >= e && t < s);
		if (in)
			ty = &z->dst;
	}
	out->off = ty->off;
	out->isdst = ty->isdst;
	snprintf(out->abbr, sizeof(out->abbr), "%s", ty->abbr);
}

/* ====== TZif files ====== */

static int64_t
be(const unsigned char *p, size_t n)
{
	uint64_t	v = 0;
	size_t		i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	if (n == 4)
		return (int32_t)(uint32_t)v;
	return (int64_t)v;
}

/* Parses one data block at p (n bytes left) with tsz-byte times. */
static int
parse_block(struct tz_zone *z, const unsigned char *h, const unsigned char *p,
    size_t n, size_t tsz, size_t *used)
{
	size_t	isut = (size_t)be(h + 20, 4), isstd = (size_t)be(h + 24, 4);
	size_t	leap = (size_t)be(h + 28, 4), timecnt = (size_t)be(h + 32, 4);
	size_t	typecnt = (size_t)be(h + 36, 4), charcnt = (size_t)be(h + 40, 4);
	size_t	need, i, ai;
	const unsigned char *tt, *ti, *ch;

	if (timecnt > 100000 || typecnt == 0 || typecnt > TZ_MAX_TYPES ||
	    charcnt > 4096 || leap > 10000 || isut > TZ_MAX_TYPES ||
	    isstd > TZ_MAX_TYPES)
		return -1;
	need = timecnt * tsz + timecnt + typecnt * 6 + charcnt +
	    leap * (tsz + 4) + isstd + isut;
	if (need > n)
		return -1;
	*used = need;
	if ((z->trans = calloc(timecnt + 1, sizeof(*z->trans))) == NULL ||
	    (z->idx = calloc(timecnt + 1, 1)) == NULL)
		return -1;
	for (i = 0; i < timecnt; i++)
		z->trans[i] = be(p + i * tsz, tsz);
	ti = p + timecnt * tsz;
	for (i = 0; i < timecnt; i++) {
		if (ti[i] >= typecnt)
			return -1;
		z->idx[i] = ti[i];
	}
	z->ntrans = timecnt;
	tt = ti + timecnt;
	ch = tt + typecnt * 6;
	for (i = 0; i < typecnt; i++) {
		z->types[i].off = (int32_t)be(tt + i * 6, 4);
		z->types[i].isdst = tt[i * 6 + 4] != 0;
		ai = tt[i * 6 + 5];
		if (ai >= charcnt)
			return -1;
		snprintf(z->types[i].abbr, sizeof(z->types[i].abbr), "%.*s",
		    (int)strnlen((const char *)ch + ai, charcnt - ai),
		    (const char *)ch + ai);
	}
	z->ntypes = typecnt;
	return 0;
}

static int
parse_tzif(struct tz_zone *z, const unsigned char *buf, size_t len)
{
	size_t	used = 0;
	char	footer[256];
	const unsigned char *p, *nl;

	if (len < 44 || memcmp(buf, "TZif", 4) != 0)
		return -1;
	if (buf[4] == '\0')
		return parse_block(z, buf, buf + 44, len - 44, 4, &used);
	/* skip the version 1 block by reading it, then start over */
	if (parse_block(z, buf, buf + 44, len - 44, 4, &used) != 0)
		return -1;
	free(z->trans);
	free(z->idx);
	z->trans = NULL;
	z->idx = NULL;
	p = buf + 44 + used;
	if ((size_t)(buf + len - p) < 44 || memcmp(p, "TZif", 4) != 0 ||
	    parse_block(z, p, p + 44, (size_t)(buf + len - p - 44), 8,
	    &used) != 0)
		return -1;
	p += 44 + used;
	if (p < buf + len && *p == '\n' && (nl = memchr(p + 1, '\n',
	    (size_t)(buf + len - p - 1))) != NULL && nl > p + 1 &&
	    (size_t)(nl - p - 1) < sizeof(footer)) {
		memcpy(footer, p + 1, (size_t)(nl - p - 1));
		footer[nl - p - 1] = '\0';
		if (parse_footer(z, footer) != 0)
			z->has_rule = 0;
	}
	return 0;
}

/* A zone name made of [A-Za-z0-9_+-] parts joined by '/'. */
static int
name_ok(const char *name)
{
	const char	*s;
	size_t		 part = 0;

	if (name == NULL || *name == '\0' || strlen(name) >= TZ_MAX_NAME)
		return 0;
	for (s = name; *s != '\0'; s++) {
		if (*s == '/') {
			if (part == 0)
				return 0;
			part = 0;
			continue;
		}
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '+' &&
		    *s != '-' && *s != '.')
			return 0;
		if (*s == '.' && (part == 0 || s[-1] == '.'))
			return 0;
		part++;
	}
	return part > 0;
}

static int
is_utc(const char *name)
{
	return strcmp(name, "UTC") == 0 || strcmp(name, "Etc/UTC") == 0 ||
	    strcmp(name, "GMT") == 0 || strcmp(name, "Etc/GMT") == 0 ||
	    strcmp(name, "Z") == 0 || strcmp(name, "Zulu") == 0;
}

int
tz_load(const char *name, char *err, struct tz_zone **out)
{
	struct tz_zone	*z = NULL;
	unsigned char	*buf = NULL;
	const char	*dir;
	char		 path[TZ_MAX_NAME + 512];
	FILE		*f = NULL;
	size_t		 len;
	int		 rc = ENGINE_ENOTFOUND;

	*out = NULL;
	if (!name_ok(name)) {
		engine_invalid(err, "unknown time zone '%s'", name ? name :
		    "");
		goto out;
	}
	if ((z = calloc(1, sizeof(*z))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	dir = getenv("TZDIR");
	if (dir == NULL || *dir == '\0')
		dir = "/usr/share/zoneinfo";
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "rb")) == NULL) {
		if (is_utc(name)) {
			z->types[0].off = 0;
			snprintf(z->types[0].abbr, sizeof(z->types[0].abbr),
			    "%s", strcmp(name, "GMT") == 0 ? "GMT" : "UTC");
			z->ntypes = 1;
			z->std = z->types[0];
			z->has_rule = 1;
			rc = 0;
			goto out;
		}
		engine_invalid(err, "unknown time zone '%s'", name);
		goto out;
	}
	if ((buf = malloc(TZ_MAX_FILE)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	len = fread(buf, 1, TZ_MAX_FILE, f);
	if (parse_tzif(z, buf, len) != 0) {
		engine_invalid(err, "time zone '%s' is not a valid TZif file",
		    name);
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	rc = 0;
out:
	if (f != NULL)
		fclose(f);
	free(buf);
	if (rc == 0)
		*out = z;
	else
		tz_free(z);
	return rc;
}

void
tz_free(struct tz_zone *z)
{
	if (z == NULL)
		return;
	free(z->trans);
	free(z->idx);
	free(z);
}

void
tz_lookup(const struct tz_zone *z, int64_t t, struct tz_info *out)
{
	const struct tz_type	*ty;
	size_t			 lo, hi, mid, i;

	memset(out, 0, sizeof(*out));
	if (z->ntrans == 0 || t < z->trans[0]) {
		if (z->ntrans == 0 && z->has_rule) {
			rule_lookup(z, t, out);
			return;
		}
		/* before the first transition: the first standard type */
		ty = &z->types[0];
		for (i = 0; i < z->ntypes; i++)
			if (!z->types[i].isdst) {
				ty = &z->types[i];
				break;
			}
	} else if (t >= z->trans[z->ntrans - 1] && z->has_rule) {
		rule_lookup(z, t, out);
		return;
	} else {
		lo = 0;
		hi = z->ntrans;		/* trans[lo] <= t < trans[hi] */
		while (hi - lo > 1) {
			mid = lo + (hi - lo) / 2;
			if (z->trans[mid] <= t)
				lo = mid;
			else
				hi = mid;
		}
		ty = &z->types[z->idx[lo]];
	}
	out->off = ty->off;
	out->isdst = ty->isdst;
	snprintf(out->abbr, sizeof(out->abbr), "%s", ty->abbr);
}

int64_t
tz_localize(const struct tz_zone *z, int64_t local)
{
	struct tz_info	a, b, x;
	int64_t		ua, ub;
	int		oka, okb;

	/* the offsets in force a day either side cover any one change */
	tz_lookup(z, local - 86400, &a);
	tz_lookup(z, local + 86400, &b);
	ua = local - a.off;
	ub = local - b.off;
	tz_lookup(z, ua, &x);
	oka = x.off == a.off;
	tz_lookup(z, ub, &x);
	okb = x.off == b.off;
	if (oka && okb && a.off != b.off)	/* repeated: standard time */
		return a.isdst && !b.isdst ? ub : ua;
	if (oka)
		return ua;
	if (okb)
		return ub;
	/* skipped: read with the offset before the change */
	return ua;
}

/* ====== strftime ====== */

int
tz_strftime(const char *fmt, int64_t t, int usec, const struct tz_info *info,
    char **out)
{
	struct dbuf	 f = { 0 };
	struct tm	 tm;
	time_t		 lt;
	char		*buf = NULL, tmp[32];
	size_t		 cap, n = 0;
	int32_t		 off;
	int		 rc = ENGINE_ENOMEM;

	*out = NULL;
	/* Python replaces %f, %z and %Z before the C library sees them. */
	for (; *fmt != '\0'; fmt++) {
		if (*fmt != '%' || fmt[1] == '\0') {
			dbuf_add(&f, fmt, 1);
			continue;
		}
		fmt++;
		if (*fmt == 'f') {
			snprintf(tmp, sizeof(tmp), "%06d", usec);
			dbuf_addstr(&f, tmp);
		} else if (*fmt == 'z') {
			off = info->off < 0 ? -info->off : info->off;
			snprintf(tmp, sizeof(tmp), "%c%02d%02d",
			    info->off < 0 ? '-' : '+', (int)(off / 3600),
			    (int)(off / 60 % 60));
			if (off % 60 != 0)
				snprintf(tmp + 5, sizeof(tmp) - 5, "%02d",
				    (int)(off % 60));
			dbuf_addstr(&f, tmp);
		} else if (*fmt == 'Z') {
			/* a literal % in the name must survive strftime */
			const char *a;

			for (a = info->abbr; *a != '\0'; a++)
				dbuf_add(&f, a, 1 + (*a == '%'));
		} else {
			dbuf_add(&f, fmt - 1, 2);
		}
	}
	dbuf_add(&f, "", 0);
	if (f.len > 8192) {
		rc = ENGINE_ELIMIT;
		goto out;
	}
	if (f.err || (f.p == NULL && (f.p = strdup("")) == NULL))
		goto out;
	lt = (time_t)(t + info->off);
	if (gmtime_r(&lt, &tm) == NULL) {
		rc = ENGINE_ELIMIT;
		goto out;
	}
	tm.tm_isdst = info->isdst;
	tm.tm_gmtoff = info->off;
	tm.tm_zone = info->abbr;
	if (*f.p == '\0') {
		if ((buf = strdup("")) == NULL)
			goto out;
		rc = 0;
		goto out;
	}
	for (cap = 256 + f.len * 4; cap <= 65536; cap *= 4) {
		free(buf);
		if ((buf = malloc(cap)) == NULL)
			goto out;
		/* a non-empty format can legitimately give "" (e.g. "%p"
		 * in some locales); a large buffer settles it */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		/* the format is the tool's parameter, as in Dify */
		n = strftime(buf, cap, f.p, &tm);
#pragma GCC diagnostic pop
		if (n > 0 || cap * 4 > 65536)
			break;
	}
	if (buf == NULL)	/* not reached: f.len <= 8192 sizes a buffer */
		goto out;
	buf[n] = '\0';
	rc = 0;
out:
	dbuf_free(&f);
	if (rc == 0)
		*out = buf;
	else
		free(buf);
	return rc;
}
