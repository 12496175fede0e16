/*
 * local.h — what the files of the local provider share (private to them):
 * local.c makes and removes a sandbox (its folders, the seccomp program,
 * what it shows of /usr and /etc) and holds the provider table and the
 * start-up probe; local_exec.c starts bwrap and waits for commands;
 * local_files.c moves files in and out of the workspace. The design is at
 * the top of local.c.
 */
#ifndef FLOWCGI_ENGINE_SANDBOX_LOCAL_H
#define FLOWCGI_ENGINE_SANDBOX_LOCAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/sandbox/provider.h"

#define USR_MAX		48	/* entries of /usr bound into a sandbox */

/* One entry of the host's /usr, as the sandbox shows it. */
struct usr_entry {
	char	name[64];
	char	target[256];	/* a symlink's content; "" for a bind */
};

struct local {
	struct sandbox		 base;
	struct sandbox_config	 cfg;
	char			 root[PATH_MAX];	/* <dir>/<id> */
	char			 bwrap[PATH_MAX];
	char			 setpriv[PATH_MAX];
	int			 root_fd;
	int			 ws_fd;
	int			 tmp_fd;
	int			 shm_fd;
	int			 etc_fd[3];	/* passwd, group, hosts (O_PATH) */
	int			 net_fd;	/* with network: <root>/net */
	struct sandbox_proxy	*proxy;		/* with network */
	int			 as_root;	/* commands drop to cfg.uid */
	int			 mounted;	/* root is our tmpfs */
	int			 destroyed;
	int			 no_userns;	/* bwrap has --disable-userns */
	unsigned char		*bpf;		/* the seccomp program */
	size_t			 bpf_len;
	struct usr_entry	 usr[USR_MAX];	/* what /usr shows */
	size_t			 nusr;
};

/* ====== Commands (local_exec.c) ====== */

/* The provider's exec: spawns req and waits for it (sandbox.h). */
int	local_exec(struct sandbox *sb, const struct sandbox_exec_req *req,
	    char *err, struct sandbox_exec_result *res);

/* ====== Files (local_files.c) ====== */

/*
 * Opens the folder that holds path's last component, walking from the
 * workspace without following symlinks; mkdirs missing folders (owned by
 * the sandbox user) when make is set. *dirfd is a new descriptor; *leaf
 * points into path. path "" or ".": *dirfd is the workspace, *leaf "".
 * Returns 0, or ENGINE_EINVAL, ENGINE_ENOTFOUND, ENGINE_ELIMIT (the
 * workspace is full) or SANDBOX_EFAIL with err saying why.
 */
int	local_ws_parent(struct local *l, const char *path, int make, char *err,
	    int *dirfd, const char **leaf);

/* Bytes the sandbox's files take: workspace, /tmp and /dev/shm. */
int64_t	local_usage(struct local *l);

/* The provider's upload, download and list (sandbox.h). */
int	local_upload(struct sandbox *sb, const char *path, const void *data,
	    size_t len, char *err);
int	local_download(struct sandbox *sb, const char *path, int64_t max,
	    char *err, char **data, size_t *len);
int	local_list(struct sandbox *sb, const char *dir, size_t max, char *err,
	    struct sandbox_file **files, size_t *n);

#endif
