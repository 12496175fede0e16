/*
 * fake_proc.h — starting and stopping one of the fake servers in
 * tests/fakes/ (fake_<name>.py run by python3, which prints the loopback
 * port it listens on as its first line) from a C test or tool. The script
 * is looked up under FLOWCGI_SRC, or under the working directory when that
 * is unset.
 */
#ifndef FLOWCGI_TESTS_FAKE_PROC_H
#define FLOWCGI_TESTS_FAKE_PROC_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Stops a fake started by fake_proc_start (if *pid > 0); sets *pid to -1. */
static inline void
fake_proc_stop(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGTERM);
		waitpid(*pid, NULL, 0);
		*pid = -1;
	}
}

/*
 * Starts tests/fakes/fake_<name>.py and reads the port it prints into
 * *port. Returns the fake's pid, or -1 (nothing left running) when it
 * could not be started or printed no port.
 */
static inline pid_t
fake_proc_start(const char *name, int *port)
{
	const char	*src = getenv("FLOWCGI_SRC");
	char		 path[1024], buf[32];
	int		 pfd[2];
	ssize_t		 n;
	size_t		 got = 0;
	pid_t		 pid;

	*port = 0;
	snprintf(path, sizeof(path), "%s/tests/fakes/fake_%s.py",
	    src != NULL ? src : ".", name);
	if (pipe(pfd) != 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execlp("python3", "python3", path, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while (got < sizeof(buf) - 1 &&
	    (n = read(pfd[0], buf + got, sizeof(buf) - 1 - got)) > 0) {
		got += (size_t)n;
		if (memchr(buf, '\n', got) != NULL)
			break;
	}
	close(pfd[0]);
	buf[got] = '\0';
	*port = (int)strtol(buf, NULL, 10);
	if (*port <= 0)
		fake_proc_stop(&pid);
	return pid;
}

#endif
