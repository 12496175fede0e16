/*
 * tap_json.h — for tests that compare JSON values as text: compact, keys
 * sorted, in a static buffer (valid until the next call).
 */
#ifndef TAP_JSON_H
#define TAP_JSON_H

#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

static const char *
tap_json(const json_t *j)
{
	static char	 buf[4096];
	char		*s;

	if (j == NULL)
		return "(null)";
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	snprintf(buf, sizeof(buf), "%s", s ? s : "(error)");
	free(s);
	return buf;
}

#endif
