/*
 * host_procs.h — counting this host's processes by command line, for the
 * sandbox tests' "nothing is left running" checks.
 */
#ifndef FLOWCGI_TESTS_HOST_PROCS_H
#define FLOWCGI_TESTS_HOST_PROCS_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
	char		 path[300], buf[4096];
	int		 n = 0, fd;
	ssize_t		 len, i;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		if ((fd = open(path, O_RDONLY)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		for (i = 0; i < len; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[len] = '\0';
		if (strstr(buf, needle) != NULL && (prefix == NULL ||
		    strncmp(buf, prefix, strlen(prefix)) == 0) &&
		    (exclude == NULL || strstr(buf, exclude) == NULL))
			n++;
	}
	closedir(d);
	return n;
}

#endif
