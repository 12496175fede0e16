/*
 * host_procs.h — counting this host's processes by command line, for the
 * sandbox tests' "nothing is left running" checks; and whether the host
 * has bwrap, which those tests need.
 */
#ifndef FLOWCGI_TESTS_HOST_PROCS_H
#define FLOWCGI_TESTS_HOST_PROCS_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/tap.h"

/*
 * The command line of process pid (a /proc entry's name), its arguments
 * joined by spaces, into buf. Its length, or -1 when it has none (gone,
 * a kernel thread).
 */
static inline ssize_t
proc_cmdline(const char *pid, char *buf, size_t size)
{
	char	path[300];
	ssize_t	len, i;
	int	fd;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return -1;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len <= 0)
		return -1;
	for (i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[len] = '\0';
	return len;
}

/*
 * Host processes whose command line (arguments joined by spaces) contains
 * needle, begins with prefix (NULL: anything) and does not contain
 * exclude (NULL: nothing excluded). -1 when /proc cannot be read.
 */
static inline int
host_procs(const char *needle, const char *prefix, const char *exclude)
{
	DIR		*d = opendir("/proc");
	struct dirent	*de;
	char		 buf[4096];
	int		 n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9' ||
		    proc_cmdline(de->d_name, buf, sizeof(buf)) < 0)
			continue;
		if (strstr(buf, needle) != NULL && (prefix == NULL ||
		    strncmp(buf, prefix, strlen(prefix)) == 0) &&
		    (exclude == NULL || strstr(buf, exclude) == NULL))
			n++;
	}
	closedir(d);
	return n;
}

/*
 * Whether bwrap is on this host, as one check: the local sandbox tests
 * fail, never skip, without it. When it is not, says what to install.
 */
static inline int
host_bwrap_check(void)
{
	return tap_need("bwrap");
}

#endif
