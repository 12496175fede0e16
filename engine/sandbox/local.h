/*
 * local.h — what the files of the local provider share (private to them):
 * local.c makes and removes a sandbox (its folders, the seccomp program,
 * what it shows of /usr and /etc) and holds the provider table and the
 * start-up probe; local_exec.c starts bwrap and waits for commands;
 * local_files.c moves files in and out of the workspace; local_sweep.c
 * marks who owns a sandbox folder and removes those of processes that are
 * gone; local_budget.c keeps the memory budget all sandboxes of a
 * sandbox.dir share. The design is at the top of local.c.
 */
#ifndef FLOWCGI_ENGINE_SANDBOX_LOCAL_H
#define FLOWCGI_ENGINE_SANDBOX_LOCAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/sandbox/provider.h"

#define USR_MAX		48	/* entries of /usr bound into a sandbox */
#define PROC_HIDDEN_MAX	12	/* files of /proc shown empty */

/*
 * The files of /proc a sandbox sees empty (an empty file bound over each
 * that exists): they tell about the host, not the sandbox (local.c).
 */
extern const char *const local_proc_hidden[];
extern const size_t local_proc_hidden_len;

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
	char			 prlimit[PATH_MAX];	/* not root: sets NPROC inside */
	int			 root_fd;
	int			 ws_fd;
	int			 tmp_fd;
	int			 shm_fd;
	int			 etc_fd[3];	/* passwd, group, hosts (O_PATH) */
	int			 empty_fd;	/* an empty file (O_PATH) */
	unsigned		 proc_hidden;	/* bit i: local_proc_hidden[i] is
						 * there to hide */
	int			 net_fd;	/* with network: <root>/net */
	int			 lock_fd;	/* owner file, flock'd: ours */
	struct sandbox_proxy	*proxy;		/* with network */
	int			 as_root;	/* commands drop to cfg.uid */
	int			 mounted;	/* root is our tmpfs */
	int			 destroyed;
	int			 no_userns;	/* bwrap has --disable-userns */
	int64_t			 reserved;	/* of the memory budget */
	unsigned char		*bpf;		/* the seccomp program */
	size_t			 bpf_len;
	struct usr_entry	 usr[USR_MAX];	/* what /usr shows */
	size_t			 nusr;
};

/*
 * Removes name under dirfd (AT_FDCWD: name is a path) and everything below
 * it, never following a symlink; what cannot be removed stays.
 */
void	local_rm_tree(int dirfd, const char *name);

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

/* ====== Owners and the sweep (local_sweep.c) ====== */

/*
 * 1 when name is an owner file's (.<id>.lock), its id copied into id
 * (which may be NULL), else 0.
 */
int	local_owner_name(const char *name, char id[37]);

/*
 * Makes l->root's owner file, <sandbox.dir>/.<id>.lock, and holds an flock on it in
 * l->lock_fd for as long as the sandbox lives (call before l->root is
 * made). Returns 0 or SANDBOX_EFAIL.
 */
int	local_owner_take(struct local *l, char *err);

/*
 * Ends l's ownership: removes the owner file when l->root is gone (a
 * folder that could not be removed stays for a later sweep) and closes
 * l->lock_fd. Safe when there is none.
 */
void	local_owner_drop(struct local *l);

/*
 * The provider's sweep: removes the sandboxes of cfg->dir whose owner is
 * gone, with their processes and tmpfs mounts, logging each (see the top
 * of local_sweep.c); *removed counts them. Returns 0, or SANDBOX_EFAIL /
 * ENGINE_ENOMEM with err set (a missing folder is no error).
 */
int	local_sweep(const struct sandbox_config *cfg, char *err,
	    int *removed);

/*
 * The first create of a process in folder dir sweeps it
 * (local_sweep) unless the start-up sweep already did; failures
 * are logged.
 */
void	local_sweep_first(const char *dir);

/* ====== The memory budget (local_budget.c) ====== */

/* What one sandbox of cfg reserves: workspace_size + memory. */
int64_t	local_budget_need(const struct sandbox_config *cfg);

/* sandbox.memory_budget in bytes: cfg's, or half the host's memory. */
int64_t	local_budget_total(const struct sandbox_config *cfg);

/*
 * Reserves local_budget_need from the budget of l->cfg.dir, into l's
 * owner file (local_owner_take first), waiting up to cfg.budget_wait
 * seconds for room; l->reserved says how much. Returns 0, ENGINE_ELIMIT
 * (no room; err names sandbox.memory_budget and sandbox.budget_wait) or
 * SANDBOX_EFAIL.
 */
int	local_budget_take(struct local *l, char *err);

/*
 * Says that l's reservation went with its owner file (local_owner_drop):
 * wakes the creators of this process that wait for room. Safe when l
 * reserved nothing.
 */
void	local_budget_released(struct local *l);

#endif
