/*
 * netfwd.c — the forwarder inside a local sandbox with network
 * (engine/sandbox/net.c): a program of its own, linked with libc only so
 * that it starts in a millisecond, built by GNUmakefile without
 * sanitizers and carried in the library as bytes (sandbox_netfwd_bin),
 * which local.c writes into each such sandbox's net folder.
 *
 *	flowcgi-netfwd port socket -- command...
 *
 * listens on 127.0.0.1:port, starts the command, relays each connection
 * to the unix socket (the proxy) in a process of its own, and ends as the
 * command ends: with its exit status, or killed by the same signal. It is
 * no part of the enforcement: code in the sandbox may kill it or talk to
 * the socket itself, and meets the same proxy.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/sandbox/relay.h"

/* A code runner's control pipe (SANDBOX_CTL_FD in sandbox.h). */
#define CTL_FD	11

/* Ends as the command ended (status st). */
static void __attribute__((noreturn))
end_as(int st)
{
	sigset_t	 one;
	int		 sig;

	if (!WIFSIGNALED(st))
		_exit(WEXITSTATUS(st));
	sig = WTERMSIG(st);
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	kill(getpid(), sig);
	_exit(128 + sig);
}

int
main(int argc, char **argv)
{
	struct sockaddr_in		 sin;
	struct sockaddr_un		 sun;
	struct signalfd_siginfo		 si;
	struct pollfd			 pfd[2];
	sigset_t			 chld, none;
	pid_t				 cmd, pid;
	int				 lfd, sfd, c, u, st, one = 1, null;

	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fprintf(stderr, "%s: usage: port socket -- command\n",
		    argv[0]);
		return 127;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)strtol(argv[1], NULL, 10));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", argv[2]);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	/* Without a listener the command still runs: it then finds no
	 * proxy and says so, which beats not starting at all. */
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd >= 0 && (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)) != 0 || bind(lfd, (struct sockaddr *)&sin,
	    sizeof(sin)) != 0 || listen(lfd, 64) != 0)) {
		close(lfd);
		lfd = -1;
	}
	if ((cmd = fork()) < 0) {
		fprintf(stderr, "%s: fork: %s\n", argv[0], strerror(errno));
		return 126;
	}
	if (cmd == 0) {
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execvp(argv[4], argv + 4);
		fprintf(stderr, "%s: %s\n", argv[4], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	/* The command holds its standard descriptors and the control pipe;
	 * ours would keep them open after it closed them. */
	if ((null = open("/dev/null", O_RDWR)) >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	close(CTL_FD);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC);
	for (;;) {
		pfd[0].fd = sfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = lfd;
		pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		if (poll(pfd, lfd >= 0 ? 2 : 1, sfd >= 0 ? -1 : 100) < 0 &&
		    errno != EINTR)
			break;
		if (sfd >= 0 && (pfd[0].revents & POLLIN) &&
		    read(sfd, &si, sizeof(si)) < 0)
			continue;
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
			if (pid == cmd)
				end_as(st);
		if (lfd < 0 || !(pfd[1].revents & POLLIN))
			continue;
		if ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			continue;
		if (fork() == 0) {
			close(lfd);
			u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (u >= 0 && connect(u, (struct sockaddr *)&sun,
			    sizeof(sun)) == 0)
				relay_copy(c, u, -1, 24 * 3600 * 1000);
			_exit(0);
		}
		close(c);
	}
	return 126;
}
