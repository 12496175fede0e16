/*
 * relay.h — copying bytes both ways between two sockets, for the local
 * sandbox's network proxy (net.c) and its forwarder inside the sandbox
 * (netfwd/netfwd.c), which is a program of its own linked with libc only:
 * so these are static functions, and this header needs nothing but libc.
 */
#ifndef FLOWCGI_ENGINE_SANDBOX_RELAY_H
#define FLOWCGI_ENGINE_SANDBOX_RELAY_H

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>

#define RELAY_BUF	16384	/* bytes in flight each way */

/* Writes all of data to socket fd (blocking); 0 or -1. */
static inline int
relay_write_all(int fd, const void *data, size_t len)
{
	const char	*p = data;
	ssize_t		 n;

	while (len > 0) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One direction of a relay. */
struct relay_half {
	char	buf[RELAY_BUF];
	size_t	len, off;
	int	eof;		/* its source ended */
	int	shut;		/* its sink was shut for writing */
};

/*
 * Copies bytes both ways between sockets a and b until both sides ended
 * (each end's close is passed on as a shutdown for writing), one failed,
 * nothing moved for idle_ms, or stop (-1: none) became readable. Blocking
 * sockets are fine: only what poll said is ready is read, and writes go
 * as far as they can without blocking.
 */
static inline void
relay_copy(int a, int b, int stop, int idle_ms)
{
	struct relay_half	*h = NULL;
	struct pollfd		 pfd[3];
	int			 fds[2], i, n;
	ssize_t			 got;

	fds[0] = a;
	fds[1] = b;
	if ((h = calloc(2, sizeof(*h))) == NULL)
		return;
	/* h[0]: a to b, h[1]: b to a */
	while (!h[0].shut || !h[1].shut) {
		for (i = 0; i < 2; i++) {
			pfd[i].fd = fds[i];
			pfd[i].events = 0;
			pfd[i].revents = 0;
			if (!h[i].eof && h[i].len == 0)
				pfd[i].events |= POLLIN;
			if (h[1 - i].len > h[1 - i].off)
				pfd[i].events |= POLLOUT;
		}
		pfd[2].fd = stop;
		pfd[2].events = POLLIN;
		pfd[2].revents = 0;
		n = poll(pfd, stop >= 0 ? 3 : 2, idle_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (stop >= 0 && pfd[2].revents != 0))
			break;
		for (i = 0; i < 2; i++) {
			if ((pfd[i].revents & POLLOUT) &&
			    h[1 - i].len > h[1 - i].off) {
				got = send(fds[i], h[1 - i].buf +
				    h[1 - i].off, h[1 - i].len - h[1 - i].off,
				    MSG_NOSIGNAL | MSG_DONTWAIT);
				if (got < 0 && errno != EAGAIN &&
				    errno != EINTR)
					goto out;
				if (got > 0 && (h[1 - i].off += (size_t)got) ==
				    h[1 - i].len)
					h[1 - i].len = h[1 - i].off = 0;
			}
			if ((pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    !h[i].eof && h[i].len == 0) {
				got = recv(fds[i], h[i].buf, sizeof(h[i].buf),
				    MSG_DONTWAIT);
				if (got < 0 && errno != EAGAIN &&
				    errno != EINTR)
					goto out;
				if (got == 0)
					h[i].eof = 1;
				else if (got > 0)
					h[i].len = (size_t)got;
			}
			if ((pfd[i].revents & (POLLERR | POLLNVAL)) != 0 &&
			    !(pfd[i].revents & POLLIN))
				goto out;
		}
		for (i = 0; i < 2; i++)
			if (h[i].eof && h[i].len == 0 && !h[i].shut) {
				(void)shutdown(fds[1 - i], SHUT_WR);
				h[i].shut = 1;
			}
	}
out:
	free(h);
}

#endif
