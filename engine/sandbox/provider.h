/*
 * provider.h — private to engine/sandbox/: what the provider files share
 * beyond sandbox.h, and the functions of single providers that their
 * tests call by name. Everything else reaches a provider through its
 * table (sandbox_provider_find), never through these.
 */
#ifndef FLOWCGI_ENGINE_SANDBOX_PROVIDER_H
#define FLOWCGI_ENGINE_SANDBOX_PROVIDER_H

#include "engine/sandbox/sandbox.h"

/* ====== Shared by the providers (sandbox.c) ====== */

/*
 * Appends s percent-encoded (all but unreserved characters and '/') to the
 * string in buf of bufsz bytes. Returns 0, or -1 when it does not fit.
 */
int	sandbox_url_escape(char *buf, size_t bufsz, const char *s);

/*
 * The absolute path under the workspace folder workdir of a
 * workspace-relative path (sandbox_path_check) into buf; "" or "." is
 * workdir itself when allow_root. Returns 0 or ENGINE_EINVAL.
 */
int	sandbox_ws_path(const char *workdir, const char *path, int allow_root,
	    char *err, char *buf, size_t bufsz);

/* A command's time limit in ms: req's, else cfg's timeout, else 60 s. */
int64_t	sandbox_exec_timeout_ms(const struct sandbox_exec_req *req,
	    const struct sandbox_config *cfg);

/*
 * Moves a command's collected stdout and stderr (out, errb: their bytes
 * and whether they were cut) into res. Returns 0 or ENGINE_ENOMEM.
 */
int	sandbox_exec_take(struct sandbox_exec_result *res, struct dbuf *out,
	    struct dbuf *errb, char *err);

/* ====== The local provider (local.c) ====== */

/*
 * The local provider's probe: runs `true` in a local sandbox made from c
 * (NULL: the built-in defaults in a temporary directory). Returns 0, or an
 * ENGINE_E* code with err saying plainly what is wrong: bwrap missing
 * (install bubblewrap), user namespaces disabled (which sysctl), the
 * sandbox folder not writable, the sandbox uid unusable. Callers go
 * through sandbox_probe("local", ...); the tests call it by name.
 */
int	sandbox_local_probe(const struct conf *c, char *err);

/*
 * The memory budget of the local sandboxes of cfg->dir, every process's
 * (local_budget.c): *used = what live sandboxes reserve (each
 * sandbox.workspace_size + sandbox.memory), *total = sandbox.memory_budget
 * in bytes (its default: half the host's memory). Returns 0 (a missing
 * folder: nothing used) or SANDBOX_EFAIL.
 */
int	sandbox_local_budget(const struct sandbox_config *cfg, int64_t *used,
	    int64_t *total);

/* ====== The docker provider (docker.c) ====== */

/*
 * Test connection of the docker provider: the engine's version and
 * whether the options' image is on it. *info (malloc'd) says both, for the
 * admin. Returns 0, or SANDBOX_EFAIL / ENGINE_EINVAL with err naming the
 * cause (engine unreachable, image missing).
 */
int	sandbox_docker_probe(const json_t *options, char *err, char **info);

/*
 * Removes the containers of the engine in options that flowcgi processes
 * of this host left behind (label flowcgi.sandbox, process gone), with
 * their volumes; *removed counts them. Returns 0 or an error in err.
 */
int	sandbox_docker_sweep(const json_t *options, char *err, int *removed);

/* ====== The ssh provider (ssh.c) ====== */

/*
 * ssh-keyscan of the host and port in ssh options: *keys = the server's
 * host keys as "type base64" lines (malloc'd), for ssh_host_key. Trust on
 * first use: call it only when the admin asks to pin (test connection).
 */
int	sandbox_ssh_scan(const json_t *options, char *err, char **keys);

#endif
