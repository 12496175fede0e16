/*
 * child.c — a reader run in a child process, for the libraries that are
 * not safe on hostile files: Debian's libfreexl 1.0.6 reads past its
 * buffers on some damaged workbooks (an iconv over a stack buffer in
 * freexl_open, found by fuzz_xls under ASan), and libgsf's OLE directory
 * reader leaks on some damaged compound files (fuzz_msg under
 * LeakSanitizer). A crash there is a damaged file, not the server's; a
 * leak dies with the child.
 *
 * The child gets the file's bytes by fork (no copy), runs the reader,
 * writes back rc, the message, the parts and the text, and exits; the
 * parent reads them within twice documents.max_unpacked, asking the run's
 * stop and documents.timeout every 100 ms, and kills the child when either
 * says so. The child never asks the run (its store is the parent's): it
 * runs without stop or timeout of its own. The cost is a fork of the
 * server's address space (copy on write) per file of those formats.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/documents/internal.h"

static int
child_write_all(int fd, const void *p, size_t n)
{
	const char	*c = p;
	ssize_t		 w;

	while (n > 0) {
		if ((w = write(fd, c, n)) < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
child_write_str(int fd, const char *s)
{
	uint64_t n = s != NULL ? strlen(s) : 0;

	return child_write_all(fd, &n, sizeof(n)) != 0 || child_write_all(fd, s,
	    (size_t)n) != 0 ? -1 : 0;
}

/* One string of the child's answer at *off of b, malloc'd; NULL when cut
 * short. */
static char *
child_read_str(const struct dbuf *b, size_t *off)
{
	uint64_t	 n;
	char		*s;

	if (b->len - *off < sizeof(n))
		return NULL;
	memcpy(&n, b->p + *off, sizeof(n));
	*off += sizeof(n);
	if (n > b->len - *off || (s = malloc((size_t)n + 1)) == NULL)
		return NULL;
	memcpy(s, b->p + *off, (size_t)n);
	s[n] = '\0';
	*off += (size_t)n;
	return s;
}

int
doc_read_in_child(doc_reader_fn *fn, const char *what, const char *unit,
    const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	struct doc_limits	 cl = *lim;
	struct dbuf		 b;
	struct pollfd		 pfd;
	struct doc		 cd = { 0 };
	char			 cerr[512], buf[65536], *s;
	size_t			 off = 0, i;
	uint64_t		 n;
	ssize_t			 r;
	pid_t			 pid;
	int			 fds[2], rc = DOC_EDAMAGED, st = 0, crc;

	if (pipe2(fds, O_CLOEXEC) != 0) {
		snprintf(err, errsz, "cannot start the %s reader", what);
		return DOC_ENOMEM;
	}
	if ((pid = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		snprintf(err, errsz, "cannot start the %s reader", what);
		return DOC_ENOMEM;
	}
	if (pid == 0) {
		close(fds[0]);
		cl.stop = NULL;
		cl.timeout_ms = 0;
		cerr[0] = '\0';
		crc = fn(data, len, &cl, &cd, cerr, sizeof(cerr));
		n = cd.nparts;
		if (child_write_all(fds[1], &crc, sizeof(crc)) != 0 ||
		    child_write_str(fds[1], cerr) != 0 ||
		    child_write_all(fds[1], &n, sizeof(n)) != 0)
			_exit(1);
		for (i = 0; i < cd.nparts; i++)
			if (child_write_str(fds[1], cd.parts[i].text) != 0)
				_exit(1);
		_exit(child_write_str(fds[1], cd.text) != 0);
	}
	close(fds[1]);
	dbuf_init(&b, lim->max_unpacked * 2 + 65536);
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	for (;;) {
		if ((rc = doc_check_stop(lim, err, errsz)) != 0)
			goto kill;
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if ((r = read(fds[0], buf, sizeof(buf))) < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (dbuf_add(&b, buf, (size_t)r) != DBUF_OK) {
			snprintf(err, errsz, "the %s's text is larger than %zu "
			    "bytes (documents.max_unpacked)", what,
			    lim->max_unpacked);
			rc = DOC_ELIMIT;
			goto kill;
		}
	}
	close(fds[0]);
	fds[0] = -1;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	rc = DOC_EDAMAGED;
	if (b.len < sizeof(crc) || (WIFSIGNALED(st))) {
		snprintf(err, errsz, "the %s is damaged (its reader "
		    "failed on it)", what);
		goto out;
	}
	memcpy(&crc, b.p, sizeof(crc));
	off = sizeof(crc);
	if ((s = child_read_str(&b, &off)) == NULL)
		goto cut;
	snprintf(err, errsz, "%s", s);
	free(s);
	if (crc != 0) {
		rc = crc;
		goto out;
	}
	if (b.len - off < sizeof(n))
		goto cut;
	memcpy(&n, b.p + off, sizeof(n));
	off += sizeof(n);
	if (n > (b.len - off) / sizeof(n))
		goto cut;
	if (n > 0 && (d->parts = calloc((size_t)n, sizeof(*d->parts))) ==
	    NULL) {
		snprintf(err, errsz, "out of memory");
		rc = DOC_ENOMEM;
		goto out;
	}
	d->unit = n > 0 ? unit : NULL;
	for (i = 0; i < n; i++) {
		if ((d->parts[i].text = child_read_str(&b, &off)) == NULL)
			goto cut;
		d->nparts++;
	}
	if ((d->text = child_read_str(&b, &off)) == NULL)
		goto cut;
	err[0] = '\0';
	rc = 0;
	goto out;
cut:
	snprintf(err, errsz, "the %s is damaged (its reader failed "
	    "on it)", what);
	rc = DOC_EDAMAGED;
	goto out;
kill:
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
out:
	if (fds[0] >= 0)
		close(fds[0]);
	dbuf_free(&b);
	return rc;
}
