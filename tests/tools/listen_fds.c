/*
 * listen_fds.c — starts a program the way systemd socket activation does,
 * for tests on machines where systemd is not running:
 *
 *     listen_fds ADDR PROGRAM [ARG...]
 *
 * ADDR is host:port (IPv4) or unix:/path. Opens a listening socket there,
 * moves it to fd 3, sets LISTEN_FDS=1, LISTEN_PID=<own pid> and
 * LISTEN_FDNAMES=flowcgi, and execs PROGRAM (so the pid stays the same, as
 * sd_listen_fds(3) requires). Exits 2 on a usage error, 1 when the socket
 * or the exec fails.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int
open_listener(const char *addr)
{
	struct sockaddr_in	 in;
	struct sockaddr_un	 un;
	const char		*colon;
	char			 host[64], *end;
	long			 port;
	int			 fd = -1, one = 1;

	if (strncmp(addr, "unix:", 5) == 0) {
		memset(&un, 0, sizeof(un));
		un.sun_family = AF_UNIX;
		if (strlen(addr + 5) >= sizeof(un.sun_path))
			return -1;
		memcpy(un.sun_path, addr + 5, strlen(addr + 5) + 1);
		unlink(un.sun_path);
		if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 ||
		    bind(fd, (struct sockaddr *)&un, sizeof(un)) != 0)
			goto fail;
		chmod(un.sun_path, 0666);
	} else {
		if ((colon = strrchr(addr, ':')) == NULL ||
		    (size_t)(colon - addr) >= sizeof(host))
			return -1;
		memcpy(host, addr, (size_t)(colon - addr));
		host[colon - addr] = '\0';
		errno = 0;
		port = strtol(colon + 1, &end, 10);
		if (errno != 0 || *end != '\0' || port < 1 || port > 65535)
			return -1;
		memset(&in, 0, sizeof(in));
		in.sin_family = AF_INET;
		in.sin_port = htons((unsigned short)port);
		if (inet_pton(AF_INET, host, &in.sin_addr) != 1)
			return -1;
		if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
			goto fail;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&in, sizeof(in)) != 0)
			goto fail;
	}
	if (listen(fd, 128) != 0)
		goto fail;
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

int
main(int argc, char **argv)
{
	char	pid[32];
	int	fd;

	if (argc < 3) {
		fprintf(stderr, "usage: listen_fds host:port|unix:/path "
		    "PROGRAM [ARG...]\n");
		return 2;
	}
	if ((fd = open_listener(argv[1])) < 0) {
		fprintf(stderr, "listen_fds: cannot listen on %s: %s\n",
		    argv[1], strerror(errno));
		return 1;
	}
	if (fd != 3) {
		if (dup2(fd, 3) < 0) {
			perror("listen_fds: dup2");
			return 1;
		}
		close(fd);
	}
	fcntl(3, F_SETFD, 0);	/* kept across exec */
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	setenv("LISTEN_FDS", "1", 1);
	setenv("LISTEN_PID", pid, 1);
	setenv("LISTEN_FDNAMES", "flowcgi", 1);
	execvp(argv[2], argv + 2);
	fprintf(stderr, "listen_fds: %s: %s\n", argv[2], strerror(errno));
	return 1;
}
