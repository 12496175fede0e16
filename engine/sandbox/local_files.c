/*
 * local_files.c — files of the local provider from the host's side:
 * upload, download and list, the workspace's usage, and the walk that
 * opens a path one component at a time with O_NOFOLLOW from the
 * workspace's descriptor, so that symlinks or FIFOs planted by sandboxed
 * code never lead outside (see the top of local.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "engine/sandbox/local.h"

#define LIST_MAX_DEPTH	64
#define USAGE_MAX_FILES	200000

/* ====== Paths inside the workspace ====== */

/*
 * Opens the folder that holds path's last component, walking from the
 * workspace without following symlinks; mkdirs missing folders (owned by
 * the sandbox user) when make is set. *dirfd is a new descriptor; *leaf
 * points into path. path "" or ".": *dirfd is the workspace, *leaf "".
 */
int
local_ws_parent(struct local *l, const char *path, int make, char *err,
    int *dirfd, const char **leaf)
{
	char		 comp[NAME_MAX + 1];
	const char	*p, *c;
	int		 fd = -1, next, rc = 0;
	size_t		 n;

	*dirfd = -1;
	*leaf = "";
	if ((fd = fcntl(l->ws_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox: %s", strerror(errno));
		goto out;
	}
	if (path[0] == '\0' || strcmp(path, ".") == 0)
		goto out;
	for (p = path;; p = c + 1) {
		c = strchr(p, '/');
		if (c == NULL) {
			*leaf = p;
			break;
		}
		n = (size_t)(c - p);
		if (n > NAME_MAX) {
			rc = sandbox_fail(err, ENGINE_EINVAL, "path '%.120s': name too "
			    "long", path);
			goto out;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (strcmp(comp, ".") == 0)
			continue;
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (next < 0 && errno == ENOENT && make) {
			if (mkdirat(fd, comp, 0755) != 0 && errno != EEXIST) {
				rc = sandbox_fail(err, errno == ENOSPC ? ENGINE_ELIMIT
				    : SANDBOX_EFAIL, "path '%.120s': %s%s", path,
				    strerror(errno), errno == ENOSPC ?
				    " (sandbox.workspace_size)" : "");
				goto out;
			}
			if (l->as_root)
				(void)fchownat(fd, comp, (uid_t)l->cfg.uid,
				    (gid_t)l->cfg.uid, AT_SYMLINK_NOFOLLOW);
			next = openat(fd, comp, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0) {
			rc = sandbox_fail(err, errno == ENOENT ? ENGINE_ENOTFOUND
			    : ENGINE_EINVAL, "path '%.120s': %s%s", path,
			    strerror(errno), errno == ELOOP || errno == ENOTDIR
			    ? " (a component is not a folder)" : "");
			goto out;
		}
		close(fd);
		fd = next;
	}
	if (strlen(*leaf) > NAME_MAX)
		rc = sandbox_fail(err, ENGINE_EINVAL, "path '%.120s': name too long",
		    path);
out:
	if (rc != 0 && fd >= 0) {
		close(fd);
		fd = -1;
	}
	*dirfd = fd;
	return rc;
}

/* Folder fd read from its start through a new descriptor, or NULL. */
static DIR *
dir_dup(int fd)
{
	DIR	*d;
	int	 dfd;

	if ((dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
		return NULL;
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return NULL;
	}
	rewinddir(d);	/* a dup shares the offset of earlier walks */
	return d;
}

/* Bytes used under folder fd (allocated blocks), recursively. */
static int64_t
usage_of(int fd, int depth, size_t *count)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	int64_t		 sum = 0;
	int		 sub;

	if ((d = dir_dup(fd)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && *count < USAGE_MAX_FILES) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		(*count)++;
		sum += (int64_t)st.st_blocks * 512;
		if (S_ISDIR(st.st_mode) && depth < LIST_MAX_DEPTH &&
		    (sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) >= 0) {
			sum += usage_of(sub, depth + 1, count);
			close(sub);
		}
	}
	closedir(d);
	return sum;
}

/* Bytes the sandbox's files take: workspace, /tmp and /dev/shm. */
int64_t
local_usage(struct local *l)
{
	struct statvfs	vs;
	size_t		count = 0;

	if (l->mounted && fstatvfs(l->root_fd, &vs) == 0)
		return (int64_t)(vs.f_blocks - vs.f_bfree) * (int64_t)vs.f_frsize;
	return usage_of(l->root_fd, 0, &count);
}

/* ====== Files ====== */

int
local_upload(struct sandbox *sb, const char *path, const void *data,
    size_t len, char *err)
{
	struct local	*l = (struct local *)sb;
	const char	*leaf, *p = data;
	struct stat	 st;
	int		 rc, dfd = -1, fd = -1;
	size_t		 off = 0;
	ssize_t		 n;

	if (l->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	if ((rc = sandbox_path_check(path, 0, err)) != 0)
		goto out;
	if ((int64_t)len > l->cfg.file_size) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "upload '%.120s': %zu bytes is "
		    "above sandbox.file_size", path, len);
		goto out;
	}
	if (!l->mounted && local_usage(l) + (int64_t)len >
	    l->cfg.workspace_size) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "upload '%.120s': the workspace "
		    "would grow past sandbox.workspace_size", path);
		goto out;
	}
	if ((rc = local_ws_parent(l, path, 1, err, &dfd, &leaf)) != 0)
		goto out;
	/* O_NONBLOCK: a FIFO planted here must not hang us. */
	fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC, 0644);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "upload '%.120s': %s", path,
		    fd < 0 ? strerror(errno) : "not a regular file");
		goto out;
	}
	if (ftruncate(fd, 0) != 0 || (l->as_root && fchown(fd,
	    (uid_t)l->cfg.uid, (gid_t)l->cfg.uid) != 0)) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "upload '%.120s': %s", path,
		    strerror(errno));
		goto out;
	}
	while (off < len) {
		n = write(fd, p + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = sandbox_fail(err, errno == ENOSPC ? ENGINE_ELIMIT
			    : SANDBOX_EFAIL, "upload '%.120s': %s%s", path,
			    strerror(errno), errno == ENOSPC ?
			    " (sandbox.workspace_size)" : "");
			goto out;
		}
		off += (size_t)n;
	}
out:
	sandbox_close_fd(&fd);
	sandbox_close_fd(&dfd);
	return rc;
}

int
local_download(struct sandbox *sb, const char *path, int64_t max, char *err,
    char **data, size_t *len)
{
	struct local	*l = (struct local *)sb;
	const char	*leaf;
	struct stat	 st;
	struct dbuf	 b;
	char		 chunk[16384];
	int		 rc, dfd = -1, fd = -1;
	ssize_t		 n;

	/* The file may grow meanwhile: keep at most max + 1 bytes. */
	dbuf_init(&b, max >= 0 ? (size_t)max + 1 : 1);
	if (l->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	if ((rc = sandbox_path_check(path, 0, err)) != 0 ||
	    (rc = local_ws_parent(l, path, 0, err, &dfd, &leaf)) != 0)
		goto out;
	fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = sandbox_fail(err, fd < 0 && errno == ENOENT ? ENGINE_ENOTFOUND
		    : ENGINE_EINVAL, "download '%.120s': %s", path,
		    fd < 0 ? strerror(errno) : "not a regular file");
		goto out;
	}
	if (st.st_size > max) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "download '%.120s': %" PRId64
		    " bytes is above the limit of %" PRId64, path,
		    (int64_t)st.st_size, max);
		goto out;
	}
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "download '%.120s': %s",
			    path, strerror(errno));
			goto out;
		}
		if (n == 0 || dbuf_add(&b, chunk, (size_t)n) != DBUF_OK)
			break;
	}
	if (b.err == DBUF_ETOOBIG || (int64_t)b.len > max) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "download '%.120s': above the "
		    "limit of %" PRId64, path, max);
		goto out;
	}
	if (b.err == DBUF_ENOMEM || (*data = dbuf_take(&b, len)) == NULL)
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
out:
	dbuf_free(&b);
	sandbox_close_fd(&fd);
	sandbox_close_fd(&dfd);
	return rc;
}

struct listing {
	struct sandbox_file	*v;
	size_t			 n, max;
	char			*err;
	int			 rc;
};

/* Adds the entries of folder fd (whose path is prefix) and below. */
static void
list_dir(struct listing *ls, int fd, const char *prefix, int depth)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	char		 path[PATH_MAX];
	int		 dfd, sub;

	if ((d = dir_dup(fd)) == NULL)
		return;
	dfd = dirfd(d);
	while (ls->rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s%s%s", prefix,
		    prefix[0] ? "/" : "", de->d_name) >= sizeof(path))
			continue;
		if (ls->n >= ls->max) {
			ls->rc = sandbox_fail(ls->err, ENGINE_ELIMIT, "list: more than "
			    "%zu entries", ls->max);
			break;
		}
		if ((ls->v[ls->n].path = strdup(path)) == NULL) {
			ls->rc = sandbox_fail(ls->err, ENGINE_ENOMEM, "out of memory");
			break;
		}
		ls->v[ls->n].is_dir = S_ISDIR(st.st_mode);
		ls->v[ls->n].size = S_ISDIR(st.st_mode) ? 0 : (int64_t)st.st_size;
		ls->v[ls->n].mtime = (int64_t)st.st_mtime;
		ls->n++;
		if (S_ISDIR(st.st_mode) && depth < LIST_MAX_DEPTH &&
		    (sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) >= 0) {
			list_dir(ls, sub, path, depth + 1);
			close(sub);
		}
	}
	closedir(d);
}

int
local_list(struct sandbox *sb, const char *dir, size_t max, char *err,
    struct sandbox_file **files, size_t *n)
{
	struct local	*l = (struct local *)sb;
	struct listing	 ls = {NULL, 0, max, err, 0};
	const char	*leaf, *prefix = dir;
	int		 rc, dfd = -1, fd = -1;

	if (l->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	if (dir == NULL || strcmp(dir, ".") == 0)
		prefix = dir = "";
	if ((rc = sandbox_path_check(dir, 1, err)) != 0 ||
	    (rc = local_ws_parent(l, dir, 0, err, &dfd, &leaf)) != 0)
		goto out;
	if (leaf[0] == '\0')
		fd = dfd, dfd = -1;
	else if ((fd = openat(dfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0) {
		rc = sandbox_fail(err, errno == ENOENT ? ENGINE_ENOTFOUND
		    : ENGINE_EINVAL, "list '%.120s': %s", dir, strerror(errno));
		goto out;
	}
	if ((ls.v = calloc(max ? max : 1, sizeof(*ls.v))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	list_dir(&ls, fd, prefix, 0);
	if ((rc = ls.rc) != 0)
		goto out;
	*files = ls.v;
	*n = ls.n;
	ls.v = NULL;
out:
	sandbox_files_free(ls.v, ls.n);
	sandbox_close_fd(&fd);
	sandbox_close_fd(&dfd);
	return rc;
}

/* ====== Removing a tree ====== */

/* local_rm_tree, depth folders down. */
static void
rm_tree(int dirfd, const char *name, int depth)
{
	DIR		*d;
	struct dirent	*de;
	int		 fd;

	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return;
	if (depth > 256 || (fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) < 0)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			rm_tree(fd, de->d_name, depth + 1);
	closedir(d);
	(void)unlinkat(dirfd, name, AT_REMOVEDIR);
}

void
local_rm_tree(int dirfd, const char *name)
{
	rm_tree(dirfd, name, 0);
}
