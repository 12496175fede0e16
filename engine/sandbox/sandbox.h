/*
 * sandbox.h — the sandbox provider interface (private to engine/).
 *
 * A sandbox is an isolated place to run commands, with a workspace that
 * keeps its files from one command to the next until the sandbox is
 * destroyed. A provider (local bubblewrap, ssh, e2b) is one file that fills
 * one struct sandbox_provider and adds one line to the registry in
 * sandbox.c; callers go through the sandbox_* wrappers below and never
 * learn which provider they hold.
 *
 * Errors: every fallible call returns 0 or a negative ENGINE_E* code and
 * writes a message into err (ENGINE_ERRMAX bytes). A command that ran and
 * failed (non-zero exit, killed, timed out) is not an error of exec: exec
 * returns 0 and the result says what happened.
 */
#ifndef FLOWCGI_ENGINE_SANDBOX_H
#define FLOWCGI_ENGINE_SANDBOX_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/socket.h>

#include <jansson.h>

#include "engine/internal.h"

/*
 * The sandbox itself failed (could not start, a host file operation
 * failed), as opposed to the command in it; err says why. Stands in for an
 * ENGINE_ESANDBOX until engine.h has one.
 */
#define SANDBOX_EFAIL	ENGINE_ESANDBOX

/* ====== Configuration ====== */

/*
 * What a sandbox is made from: the sandbox.* settings, plus the options of
 * an external provider (ssh host, e2b key). Filled by sandbox_config_init;
 * callers may lower limits afterwards (the tests do).
 */
struct sandbox_config {
	char		 dir[1100];	/* local: where workspaces live */
	int		 network;	/* egress through the proxy */
	char		 network_allow[4096]; /* hosts, comma-separated */
	int		 network_connections; /* per sandbox, at once */
	int		 network_idle;	/* seconds, silent connection */
	int64_t		 memory;	/* bytes per process (RLIMIT_DATA) */
	int		 cpu_seconds;	/* per process (RLIMIT_CPU) */
	int		 processes;	/* RLIMIT_NPROC */
	int64_t		 file_size;	/* RLIMIT_FSIZE */
	int64_t		 workspace_size; /* all files of the sandbox */
	int		 open_files;	/* RLIMIT_NOFILE */
	int		 timeout;	/* default wall clock of exec, s */
	int64_t		 max_output;	/* default cap per stream, bytes */
	int		 uid;		/* local, as root: run commands as */
	int		 no_mount;	/* local: never mount a tmpfs (tests) */
	int64_t		 memory_budget;	/* local: all sandboxes; 0: half RAM */
	int		 budget_wait;	/* local: s to wait for budget room */
	char		 python_paths[2048]; /* local: code.python_paths */
	const json_t	*options;	/* provider options; NULL for local */
};

/* Fills cfg from the sandbox.* settings of c. */
void	sandbox_config_init(struct sandbox_config *cfg, const struct conf *c);

/* ====== Commands ====== */

/*
 * A stop asked for from outside (a run being stopped): while a command
 * runs, the local provider calls fn at least every SANDBOX_CANCEL_MS, and
 * when it answers 1 kills the command and everything in its sandbox at
 * once, as at its time limit. The docker provider asks too, about once a
 * second while a command is silent. The ssh and e2b providers do not look
 * at it: their commands run to their end or their limit.
 */
struct sandbox_cancel {
	int	(*fn)(void *arg);
	void	*arg;
};

#define SANDBOX_CANCEL_MS	50

/* One command. Exactly one of argv and shell is set. */
struct sandbox_exec_req {
	const char *const *argv;	/* NULL-terminated; argv[0] via PATH */
	const char	*shell;		/* run as sh -c shell */
	const char *const *env;		/* "K=V", NULL-terminated, or NULL */
	const char	*cwd;		/* relative to the workspace; NULL: it */
	const void	*stdin_data;	/* fed to standard input, then EOF */
	size_t		 stdin_len;
	int		 timeout_ms;	/* 0: the config's timeout */
	int64_t		 max_output;	/* 0: the config's max_output */
	const struct sandbox_cancel *cancel;	/* NULL: none */
	/*
	 * A folder of the workspace (one name, "skills") the command sees
	 * read-only, or NULL. The local provider binds it read-only over
	 * itself when it is a real folder; ssh, e2b and docker ignore it.
	 */
	const char	*readonly;
};

/*
 * What a command did. out and err are malloc'd, NUL-terminated (the NUL is
 * not counted in the lengths) and freed by sandbox_exec_result_release.
 */
struct sandbox_exec_result {
	char	*out;
	size_t	 out_len;
	int	 out_truncated;		/* more output than max_output */
	char	*err;
	size_t	 err_len;
	int	 err_truncated;
	int	 exit_code;		/* as a shell reports it: 128+n when
					 * killed by signal n */
	int	 signal;		/* n when killed by signal n, else 0 */
	int	 timed_out;		/* killed at the wall-clock limit */
	int	 cancelled;		/* killed because cancel said so */
	int	 workspace_full;	/* the workspace is above its cap */
	int64_t	 elapsed_us;		/* wall clock from start to end */
};

void	sandbox_exec_result_release(struct sandbox_exec_result *r);

/* One entry of sandbox_list. */
struct sandbox_file {
	char	*path;		/* relative to the workspace, "a/b.txt" */
	int	 is_dir;
	int64_t	 size;		/* bytes; 0 for a folder */
	int64_t	 mtime;		/* seconds since the epoch */
};

void	sandbox_files_free(struct sandbox_file *files, size_t n);

/* ====== Providers ====== */

struct sandbox_provider;

/*
 * A live sandbox. Providers embed this as the first member of their own
 * struct; nothing but the provider looks past it.
 */
struct sandbox {
	const struct sandbox_provider *provider;
	char	id[37];		/* UUID, unique among live sandboxes */
	int	network;	/* commands may reach the network */
};

/* One field of a provider's config, as the console's form shows it. */
struct sandbox_field {
	const char	*name;
	const char	*type;		/* "text-input" or "secret-input" */
	int		 required;
	const char	*def;		/* default; NULL: none */
	const char	*label;
};

/*
 * The table a provider fills. Paths given to upload, download and list
 * are relative to the workspace; absolute paths and ".." are refused, and
 * symlinks planted by sandboxed code are never followed.
 */
struct sandbox_provider {
	const char	*name;		/* "local", "ssh", "e2b", "docker" */
	/* Its config (settings.c stores it, secret-input fields
	 * encrypted, and passes it as cfg->options); none for local. */
	const struct sandbox_field *fields;
	size_t		 nfields;
	/* A new sandbox with an empty workspace. *out: sandbox_free. */
	int	(*create)(const struct sandbox_config *cfg, char *err,
		    struct sandbox **out);
	/* Runs one command to its end or its time limit; see above. */
	int	(*exec)(struct sandbox *sb, const struct sandbox_exec_req *req,
		    char *err, struct sandbox_exec_result *res);
	/* Writes data to path, replacing it; missing folders are made. */
	int	(*upload)(struct sandbox *sb, const char *path, const void *data,
		    size_t len, char *err);
	/* Reads path into *data (malloc'd, NUL-terminated) when it holds at
	 * most max bytes; else ENGINE_ELIMIT. */
	int	(*download)(struct sandbox *sb, const char *path, int64_t max,
		    char *err, char **data, size_t *len);
	/* Files and folders under dir ("" or "." for all), depth first, at
	 * most max of them (ENGINE_ELIMIT beyond). *files: sandbox_files_free. */
	int	(*list)(struct sandbox *sb, const char *dir, size_t max,
		    char *err, struct sandbox_file **files, size_t *n);
	/* Kills every process and removes the workspace. Idempotent; other
	 * calls fail with ENGINE_EINVAL afterwards. */
	int	(*destroy)(struct sandbox *sb, char *err);
	/* Destroys if needed and frees the handle. */
	void	(*free)(struct sandbox *sb);

	/* Optional; NULL when the provider has nothing to do there. */

	/*
	 * Start-up check that this host can make such sandboxes, from the
	 * sandbox.* settings of c (NULL: the built-in defaults in a
	 * temporary directory). Returns 0, or an ENGINE_E* code with err
	 * saying plainly what is wrong and what to do.
	 */
	int	(*probe)(const struct conf *c, char *err);
	/*
	 * Before a config is saved or tested, what create would not say as
	 * plainly: may complete options (ssh pins the host key it scans when
	 * none is pinned) and may set *info (malloc'd) for the admin.
	 * Returns 0, or SANDBOX_EFAIL / ENGINE_EINVAL with err naming the
	 * cause.
	 */
	int	(*check)(json_t *options, char *err, char **info);
	/*
	 * At start-up, when the provider is the active one (local: always):
	 * removes what flowcgi processes of this host that are gone left
	 * behind, for cfg (its options, local its dir); *removed counts it.
	 * Returns 0 or an error in err.
	 */
	int	(*sweep)(const struct sandbox_config *cfg, char *err,
		    int *removed);
	/*
	 * What the bash tool's description should say about sandboxes made
	 * from cfg (sandbox_tool_note), as a malloc'd string, NULL when out
	 * of memory. Without it: whether it has network.
	 */
	char	*(*note)(const struct sandbox_config *cfg);
};

/* The provider called name, or NULL. */
const struct sandbox_provider *sandbox_provider_find(const char *name);

/* The i-th provider of the registry (in the order the console lists
 * them), or NULL past the last. */
const struct sandbox_provider *sandbox_provider_at(size_t i);

/*
 * The probe of the provider called name (see struct sandbox_provider):
 * 0 when it has none, ENGINE_EINVAL when there is no such provider.
 */
int	sandbox_probe(const char *name, const struct conf *c, char *err);

/* p's check; 0 when it has none. */
int	sandbox_check(const struct sandbox_provider *p, json_t *options,
	    char *err, char **info);

/* p's sweep; 0 with *removed = 0 when it has none. */
int	sandbox_sweep(const struct sandbox_provider *p,
	    const struct sandbox_config *cfg, char *err, int *removed);

extern const struct sandbox_provider sandbox_provider_local;

/* ====== Calls through a sandbox's provider ====== */

/*
 * p->create; *out is freed with sandbox_free. sandbox_exec checks req
 * (exactly one of argv and shell, stdin_data when stdin_len, env entries
 * NAME=value) before the provider sees it: ENGINE_EINVAL.
 */
int	sandbox_create(const struct sandbox_provider *p,
	    const struct sandbox_config *cfg, char *err, struct sandbox **out);
int	sandbox_exec(struct sandbox *sb, const struct sandbox_exec_req *req,
	    char *err, struct sandbox_exec_result *res);
int	sandbox_upload(struct sandbox *sb, const char *path, const void *data,
	    size_t len, char *err);
int	sandbox_download(struct sandbox *sb, const char *path, int64_t max,
	    char *err, char **data, size_t *len);
int	sandbox_list(struct sandbox *sb, const char *dir, size_t max,
	    char *err, struct sandbox_file **files, size_t *n);
int	sandbox_destroy(struct sandbox *sb, char *err);
/* NULL is fine. */
void	sandbox_free(struct sandbox *sb);

/* ====== For providers (sandbox.c) ====== */

/* Formats an error into err (ENGINE_ERRMAX), returns rc. */
int	sandbox_fail(char *err, int rc, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/* The monotonic clock in microseconds. */
int64_t	sandbox_now_us(void);

/*
 * Checks a workspace-relative path: not absolute, no "..", no empty
 * component, no control character, shorter than PATH_MAX - 64. "" and "."
 * (the workspace itself) pass when allow_root. Returns 0 or ENGINE_EINVAL.
 */
int	sandbox_path_check(const char *path, int allow_root, char *err);

/* Closes *fd when open and sets it to -1. */
void	sandbox_close_fd(int *fd);

/*
 * An executable called name in the absolute folders of $PATH, then in
 * /usr/bin, /bin, /usr/sbin, /sbin, into buf. Returns 0 or -1.
 */
int	sandbox_find_program(const char *name, char *buf, size_t bufsz);

/*
 * Blocks SIGPIPE in this thread (the old mask into *old) while writing to
 * a child; sandbox_sigpipe_restore drops a SIGPIPE left pending and puts
 * the old mask back.
 */
void	sandbox_sigpipe_block(sigset_t *old);
void	sandbox_sigpipe_restore(const sigset_t *old);

/*
 * Provider options (cfg->options): *out is the value of key when it is a
 * non-empty string, else def; returns -1 when key holds something other
 * than a string or null, else 0.
 */
int	sandbox_opt_str(const json_t *o, const char *key, const char *def,
	    const char **out);

/*
 * An integer option in [lo, hi], given as a JSON number or a string of
 * digits; *out = def when absent, null or "". Returns 0, or -1 (then *out
 * is def) for anything else.
 */
int	sandbox_opt_int(const json_t *o, const char *key, int def, int lo,
	    int hi, int *out);

/*
 * Commands' output and scripts are collected in a struct dbuf
 * (conf/dbuf.h): past its max the bytes are cut (DBUF_ETOOBIG, the
 * output's "truncated"). This appends s single-quoted for a POSIX shell.
 */
void	sandbox_add_quoted(struct dbuf *b, const char *s);

/* ====== Network of local sandboxes (net.c) ====== */

/*
 * sandbox.network for the local provider: the sandbox keeps a network
 * namespace of its own (loopback only) and reaches out through an HTTP
 * proxy of flowcgi's that lets through only the hosts of
 * sandbox.network_allow (see net.c and docs/sandbox.md).
 */

/* The port of the forwarder inside the sandbox, on 127.0.0.1. */
#define SANDBOX_PROXY_PORT	3128
/*
 * The forwarder (engine/sandbox/netfwd/netfwd.c, built by GNUmakefile):
 * the bytes of its program, written into each sandbox with network.
 */
#define SANDBOX_NETFWD_NAME	"flowcgi-netfwd"
extern const unsigned char	sandbox_netfwd_bin[];
extern const size_t		sandbox_netfwd_len;

/* sandbox.network_allow, parsed. */
struct sandbox_net_allow;

/*
 * Parses list (entries separated by commas or blanks: "name",
 * "*.suffix", "*", an IPv4 or IPv6 address, "addr/bits") into *out
 * (sandbox_net_allow_free). Returns 0, ENGINE_EINVAL naming the bad
 * entry, or ENGINE_ENOMEM.
 */
int	sandbox_net_allow_parse(const char *list, char *err,
	    struct sandbox_net_allow **out);
void	sandbox_net_allow_free(struct sandbox_net_allow *a);

/* 1 when an entry of a covers a loopback address or names localhost. */
int	sandbox_net_allow_loopback(const struct sandbox_net_allow *a);

/*
 * 1 when host (lower case; a name, or an address without brackets) may be
 * asked for: "*", the same name, a name under a "*.suffix" entry (not the
 * suffix itself), or an address inside an address or CIDR entry.
 */
int	sandbox_net_host_allowed(const struct sandbox_net_allow *a,
	    const char *host);

/*
 * NULL when the proxy may connect to sa, else why not ("a loopback
 * address", "a link-local address", "a private or reserved address"):
 * the special ranges of outbound_addr_private, unless an address or CIDR
 * entry of a covers sa.
 */
const char *sandbox_net_addr_refused(const struct sandbox_net_allow *a,
	    const struct sockaddr *sa);

/* A request to the proxy, as sandbox_proxy_parse found it. */
struct sandbox_proxy_req {
	char	method[24];
	char	host[256];	/* lower case, IPv6 without brackets */
	int	port;
	int	connect;	/* CONNECT host:port */
	int	minor;		/* HTTP/1.minor */
	size_t	auth_off, auth_len;	/* absolute URI: its authority */
	size_t	path_off, path_len;	/* and what follows it */
	size_t	head_len;	/* bytes up to and with the empty line */
};

#define SANDBOX_PROXY_OK	0
#define SANDBOX_PROXY_MORE	1	/* no end of the head yet */
#define SANDBOX_PROXY_BAD	(-1)	/* not a request we serve */

/*
 * Parses the head at the start of buf (len bytes, at most 16 KiB
 * matter): "CONNECT host:port HTTP/1.x" or "METHOD http://authority/path
 * HTTP/1.x", then header lines to an empty line. No userinfo, no other
 * scheme. r's offsets point into buf.
 */
int	sandbox_proxy_parse(const char *buf, size_t len,
	    struct sandbox_proxy_req *r);

/*
 * The head of a parsed absolute-URI request as the origin gets it: the
 * path only, Host set to the URL's authority, Connection, Keep-Alive,
 * Proxy-Connection and Proxy-Authorization dropped, "Connection: close".
 * Appends to out; 0 or ENGINE_ENOMEM.
 */
int	sandbox_proxy_rewrite(const char *buf,
	    const struct sandbox_proxy_req *r, struct dbuf *out);

/* A running proxy of one sandbox. */
struct sandbox_proxy;

/*
 * Makes proxy.sock in the folder dirfd and serves it on a thread of its
 * own (a thread per connection, at most cfg->network_connections) with
 * cfg's allow list. *out: sandbox_proxy_stop. Returns 0, ENGINE_EINVAL
 * (a bad allow list) or SANDBOX_EFAIL.
 */
int	sandbox_proxy_start(const struct sandbox_config *cfg, int dirfd,
	    char *err, struct sandbox_proxy **out);

/* Closes every connection, waits for its threads, frees. NULL is fine. */
void	sandbox_proxy_stop(struct sandbox_proxy *px);

/*
 * The environment of a command in a sandbox with network: the proxy
 * variables (curl, pip, npm, git, python and node libraries), NO_PROXY,
 * and pip and npm installing into /workspace/.local with its bin first
 * on PATH. Up to max pointers into env (strings in buf or static).
 * Returns how many, or -1 when buf or max is too small.
 */
int	sandbox_net_env(const struct sandbox_config *cfg, char *buf,
	    size_t bufsz, const char **env, size_t max);

/*
 * What the bash tool's description should add about the sandbox that p
 * makes from cfg: whether it has network and which hosts it may reach,
 * where pip and npm install, and which interpreters and tools it has (for
 * the local provider: looked for once per process in the host's /usr,
 * which the sandbox shows). A malloc'd string, or NULL when out of memory.
 */
char	*sandbox_tool_note(const struct sandbox_provider *p,
	    const struct sandbox_config *cfg);

/* ====== Started commands, for code runners (local.c) ====== */

/*
 * A command started in a local sandbox and not yet waited for. Its
 * descriptors on our side are close-on-exec and reach no other child.
 */
struct sandbox_proc;

/*
 * The descriptor on which a command started by sandbox_local_spawn finds
 * the ctl descriptor given to it.
 */
#define SANDBOX_CTL_FD	11

/*
 * Starts req (argv or shell, no stdin_data) in local sandbox sb exactly as
 * exec would (the same bwrap, namespaces, mounts, seccomp filter, user and
 * rlimits) and returns without waiting; its standard input stays open.
 * ctl, when >= 0, is passed as SANDBOX_CTL_FD (the caller keeps and closes
 * its own copy). bwrap dies with the thread that started it (its
 * --die-with-parent is a parent-death signal, which Linux sends when the
 * forking thread ends), so that thread must outlive the command. *out is
 * ended by sandbox_local_wait or sandbox_proc_kill, from any thread.
 */
int	sandbox_local_spawn(struct sandbox *sb,
	    const struct sandbox_exec_req *req, int ctl, char *err,
	    struct sandbox_proc **out);

/* Writes len bytes to p's standard input; 0, or -1 when it is closed. */
int	sandbox_proc_send(struct sandbox_proc *p, const void *data,
	    size_t len);

/* The bytes kept of p's standard output: its sandbox's max_output. */
int64_t	sandbox_proc_max_output(const struct sandbox_proc *p);

/* t0 plus timeout_ms, or plus the sandbox's timeout when it is 0. */
int64_t	sandbox_proc_deadline(const struct sandbox_proc *p, int64_t t0,
	    int timeout_ms);

/*
 * How a command says that it has printed all it will (sandbox_local_wait):
 * a 'D' on its control pipe, whose read end is fd (non-blocking; the
 * caller's, left open), once its output is flushed. complete(arg, so_far)
 * then looks at everything in the pipes (out, err and their truncated
 * flags; nothing owned) and says 1 when that is the command's whole
 * output, 0 to wait for the exit after all. Only the first 'D' is asked
 * about: one written early by the code inside costs it its early answer.
 */
struct sandbox_done {
	int	  fd;
	int	(*complete)(void *arg,
		    const struct sandbox_exec_result *so_far);
	void	 *arg;
};

/*
 * Closes *pp's standard input, then does what exec does from there: output
 * up to the sandbox's max_output, everything killed at
 * sandbox_proc_deadline(*pp, t0, timeout_ms) or when cancel (NULL: none)
 * says so, res filled as exec fills it
 * with elapsed_us counted from t0; frees *pp and sets it to NULL. With dn
 * (NULL: none), the first 'D' on dn->fd asks dn->complete; when it says 1,
 * res is filled from the output so far as for an exit with status 0 and
 * the command is left running in *pp: the caller ends it with
 * sandbox_proc_kill (from any thread).
 */
int	sandbox_local_wait(struct sandbox_proc **pp, int64_t t0, int timeout_ms,
	    const struct sandbox_done *dn, const struct sandbox_cancel *cancel,
	    char *err, struct sandbox_exec_result *res);

/*
 * Kills p's command and everything in its sandbox, reaps it, frees p. It
 * kills the sandbox's pid 1 and waits for bwrap to report that, so that
 * no process of the sandbox is left when it returns (without pidfds, or
 * when bwrap does not report within 5 s, it kills bwrap instead, and the
 * last ones may still be dying). NULL is fine.
 */
void	sandbox_proc_kill(struct sandbox_proc *p);

/* ====== Code (code.c) ====== */

/* A code node's run: Dify's python3 or javascript main(). */
struct sandbox_code_req {
	const char	*language;	/* "python3" or "javascript" */
	const char	*code;		/* defines main(...) */
	const json_t	*inputs;	/* object: variable name -> value */
	int		 timeout_ms;	/* 0: the config's timeout */
	const struct sandbox_cancel *cancel;	/* NULL: none */
};

struct sandbox_code_result {
	json_t	*outputs;	/* the object main returned; new reference */
	char	*log;		/* what the code printed (markers removed),
				 * then its standard error; malloc'd */
	int64_t	 elapsed_us;	/* the interpreter's run, wall clock */
};

void	sandbox_code_result_release(struct sandbox_code_result *r);

/*
 * Runs code in local sandbox sb the way Dify's code executor does, on a
 * runner started for it and given the job at once (sandbox_code_start,
 * sandbox_code_finish): python3 calls main(**inputs), javascript calls
 * main(inputs); the returned value must be an object (dict). Returns 0
 * with res->outputs set, or ENGINE_EINVAL (unknown language, an
 * exception: err has its type and message, and the traceback tail is in
 * res->log; a result that is not an object or not JSON), ENGINE_ELIMIT
 * (killed at sandbox.timeout, a CPU, memory or output limit; err names the
 * setting), ENGINE_ESTOPPED (killed because req->cancel said so; err is
 * "stopped"), or a provider error.
 */
int	sandbox_run_code_in(struct sandbox *sb,
	    const struct sandbox_code_req *req, char *err,
	    struct sandbox_code_result *res);

/*
 * sandbox_run_code_in in a fresh local sandbox made from cfg, destroyed
 * before returning.
 */
int	sandbox_run_code(const struct sandbox_config *cfg,
	    const struct sandbox_code_req *req, char *err,
	    struct sandbox_code_result *res);

/*
 * A code runner: the interpreter of one language started on the runner in
 * a local sandbox, waiting on its standard input for the go of its one
 * job. Runs and their error messages are the same whether the runner was
 * started for the job (sandbox_run_code) or ahead of it (the pool below):
 * the same runner, command line and sandbox, started the same way.
 */
struct sandbox_runner {
	struct sandbox		*sb;	/* where it runs; not owned */
	struct sandbox_proc	*proc;	/* NULL once reaped or dropped */
	int			 ctl;	/* control pipe, read end */
	int			 lang;	/* in code.c's languages */
	int			 ready;	/* it said so */
	int			 warm;	/* started ahead: see gone */
	int			 gone;	/* a warm one had died before
					 * its job: none of it ran */
	int			 fork;	/* a fork server (codefork.c) */
	int			 dead;	/* a fork server that must not
					 * serve again: end it */
	int64_t			 t0;	/* the job's clock starts */
	char			 dir[64];	/* its workspace folder */
	char			 mark[64];	/* around the result */
};

/*
 * Starts a runner for language in local sandbox sb (see
 * sandbox_local_spawn for which thread must outlive it), r->t0 = now.
 * Returns 0, or ENGINE_EINVAL for an unknown language, or a sandbox
 * error; r is safe to drop either way.
 */
int	sandbox_code_start(struct sandbox *sb, const char *language,
	    char *err, struct sandbox_runner *r);

/* Reads what the runner said so far: 1 when it is ready for its job, 0
 * when still starting, -1 when it ended (or said something else). */
int	sandbox_code_ready(struct sandbox_runner *r);

/*
 * Runs req (its language must be r's) on started runner r, as
 * sandbox_run_code_in does, with the time limit counted from r->t0. A warm
 * runner (r->warm) found dead before it took the job sets r->gone and
 * returns SANDBOX_EFAIL. Returns as soon as the runner said it is done
 * with a complete result or failure, maybe before it exited. The runner
 * is used up afterwards: drop it (which kills what is left of it).
 */
int	sandbox_code_finish(struct sandbox_runner *r,
	    const struct sandbox_code_req *req, char *err,
	    struct sandbox_code_result *res);

/* Kills r's command if it still runs and closes its pipe; the sandbox is
 * the caller's. */
void	sandbox_code_drop(struct sandbox_runner *r);

/*
 * The parts of sandbox_code_finish that a fork server shares: req checked
 * and its inputs as JSON (*inputs malloc'd; 0 or ENGINE_EINVAL); and what
 * a run came to from its output x (NUL-terminated out and err, which it
 * may change), with the markers mark around the result, as
 * sandbox_run_code_in returns it.
 */
/* A fresh nonce for result markers and folder names: 32 hex digits. */
void	sandbox_code_nonce(char nonce[33]);
/*
 * Starts argv (NULL-terminated) in r->sb with a control pipe on the
 * command's SANDBOX_CTL_FD: r->proc and r->ctl (non-blocking, ours) set on
 * 0; else a sandbox error and nothing left open.
 */
int	sandbox_code_spawn(struct sandbox_runner *r, const char *const *argv,
	    char *err);
int	sandbox_code_inputs(const struct sandbox_code_req *req, char *err,
	    char **inputs);
int	sandbox_code_outcome(struct sandbox *sb,
	    const struct sandbox_code_req *req, const char *mark,
	    int64_t max_output, struct sandbox_exec_result *x, char *err,
	    struct sandbox_code_result *res);

/* ====== Fork servers (codefork.c) ====== */

/*
 * The runners' jobs (code.c), which the fork server's children run: the
 * same main, markers, summary line and output limit as a one-shot runner.
 * python3: a function job(src, inputs, mark, lim, done); javascript: a
 * script that needs src, inputs, mark, lim, vm and end(code) defined.
 */
extern const char sandbox_code_python_job[];
extern const char sandbox_code_javascript_job[];

/* 1 when language's code nodes can run on a fork server (python3,
 * javascript). */
int	sandbox_code_fork_language(const char *language);

/*
 * Starts a fork server for language in local sandbox sb, as
 * sandbox_code_start starts a runner (the same interpreter, command line
 * shape, sandbox and thread rule); it is ready when sandbox_code_ready
 * says 1. Returns 0, ENGINE_EINVAL (no fork server for language) or a
 * sandbox error; r (r->fork set) is safe to drop either way.
 */
int	sandbox_code_fork_start(struct sandbox *sb, const char *language,
	    char *err, struct sandbox_runner *r);

/*
 * Runs req on fork server r in a child of its own, with the time limit
 * counted from r->t0, and returns what sandbox_run_code_in would. The
 * server stays for the next job unless r->dead is set (it retired, was
 * stopped mid-job, did not answer, or died: drop it) or r->gone (it had
 * died before the job: none of it ran; SANDBOX_EFAIL).
 */
int	sandbox_code_fork_run(struct sandbox_runner *r,
	    const struct sandbox_code_req *req, char *err,
	    struct sandbox_code_result *res);

/* ====== Warm code runners (codepool.c) ====== */

/*
 * A pool of warm runners per language for code nodes in local sandboxes:
 * each one started ahead in a sandbox of its own with the node's settings,
 * given one job, then killed and its sandbox removed; a thread of the pool
 * refills it. Nothing is started before a language's first job, and a
 * pool of size 0 is no pool at all (NULL). See docs/sandbox.md.
 */
struct sandbox_code_pool;

/*
 * A pool of size warm runners per language (at most
 * SANDBOX_POOL_MAX) in sandboxes made from cfg; a runner left unused for
 * idle seconds is replaced (0: kept). *out is NULL when size is 0. Starts
 * no thread and no process yet. Returns 0 or ENGINE_ENOMEM.
 */
#define SANDBOX_POOL_MAX	16
int	sandbox_code_pool_new(const struct sandbox_config *cfg, int size,
	    int idle, struct sandbox_code_pool **out);

/*
 * sandbox_run_code with a warm runner when p has one for req's language
 * and cfg is the pool's; otherwise (no pool, other settings, none warm
 * right now, or the one taken had died) exactly sandbox_run_code. Never
 * waits for a runner to start.
 */
int	sandbox_code_pool_run(struct sandbox_code_pool *p,
	    const struct sandbox_config *cfg,
	    const struct sandbox_code_req *req, char *err,
	    struct sandbox_code_result *res);

/*
 * Stops the pool's thread after it killed and reaped its warm runners and
 * removed their sandboxes; later jobs run cold. Safe while jobs run, but a
 * job on a runner of the pool is killed with it (bwrap dies with the
 * thread that started it): for a process about to exit. Idempotent; NULL
 * is fine.
 */
void	sandbox_code_pool_stop(struct sandbox_code_pool *p);

/* Stops and frees; no job may use p any more. NULL is fine. */
void	sandbox_code_pool_free(struct sandbox_code_pool *p);

/* What a pool holds and did (tests, bench). Per language: python3, then
 * javascript. */
struct sandbox_code_pool_stats {
	int	ready[2];	/* warm and waiting */
	int	starting[2];	/* started, not ready yet */
	long	hits;		/* jobs given a warm runner */
	long	early;		/* of them, one still starting */
	long	misses;		/* jobs run cold */
	long	started;	/* runners started */
	long	died;		/* warm ones found dead and replaced */
	long	expired;	/* replaced after code.pool_idle */
	long	served;		/* jobs a fork server took back */
	int	threads;	/* 1 while the pool's thread runs */
};

/* The languages of sandbox_code_pool_tune's fork. */
#define SANDBOX_FORK_PYTHON3	1	/* code.fork_server, the default */
#define SANDBOX_FORK_JAVASCRIPT	2	/* code.fork_server_javascript */

/*
 * The languages of pool p whose code nodes run on fork servers (fork: a
 * mask of SANDBOX_FORK_*, python3 alone by default); the others on
 * one-shot runners. With fork servers the
 * pool keeps its size of them ready, and more, up to max (code.pool_max),
 * while jobs find none free; one above size that waited spare_idle
 * seconds (code.pool_spare_idle) is ended; a job waits up to wait_ms
 * (code.pool_wait_ms) for a busy server to be free before one starts
 * cold. Call before the first job. NULL is fine.
 */
void	sandbox_code_pool_tune(struct sandbox_code_pool *p, int fork, int max,
	    int spare_idle, int wait_ms);

void	sandbox_code_pool_stats(struct sandbox_code_pool *p,
	    struct sandbox_code_pool_stats *s);

/*
 * Starts filling language's pool if nothing did yet, then waits up to
 * timeout_ms for at least n ready runners of it. Returns 0, or -1 at
 * the timeout (tests, bench).
 */
int	sandbox_code_pool_wait(struct sandbox_code_pool *p,
	    const char *language, int n, int timeout_ms);

/* ====== SSH provider, trees and provider settings (ssh.c, settings.c) ====== */

/* The ssh provider (ssh.c); options documented at the top of ssh.c. */
extern const struct sandbox_provider sandbox_provider_ssh;

/* The e2b provider (e2b.c); options documented at the top of e2b.c. */
extern const struct sandbox_provider sandbox_provider_e2b;

/* The docker provider (docker.c); options documented at the top of
 * docker.c. */
extern const struct sandbox_provider sandbox_provider_docker;

/* sandbox_upload_tree and sandbox_download_tree exist. */
#define SANDBOX_HAVE_TREES 1

/*
 * Writes the regular files and folders of a tar archive (tar, len bytes)
 * under dir ("" or "." for the workspace). The whole archive is checked
 * first: an absolute name, "..", or an entry that is neither a file nor a
 * folder refuses it with ENGINE_EINVAL and writes nothing. ssh streams it
 * to a remote tar; other providers get one upload per file.
 */
int	sandbox_upload_tree(struct sandbox *sb, const char *dir,
	    const void *tar, size_t len, char *err);

/*
 * dir as a pax tar of its regular files and folders, names relative to
 * dir (symlinks and others left out), in *tar (malloc'd, *len bytes);
 * ENGINE_ELIMIT when it would exceed max bytes, ENGINE_ENOTFOUND when dir
 * is not a folder.
 */
int	sandbox_download_tree(struct sandbox *sb, const char *dir, int64_t max,
	    char *err, char **tar, size_t *len);

/*
 * The active sandbox provider, read from storage now (so a change made by
 * any process applies to the next run): *p and cfg filled from the
 * sandbox.* settings of e's conf, with cfg->options a new reference to the
 * provider's stored config, secrets decrypted (NULL for local). Release
 * with sandbox_config_release. Nothing stored, or the active provider no
 * longer known: local. Returns 0, ENGINE_ESTORE, ENGINE_ENOMEM, or the
 * error of a secret that cannot be decrypted (err says which).
 */
int	sandbox_active(struct engine *e, char *err,
	    const struct sandbox_provider **p, struct sandbox_config *cfg);

/* Drops cfg->options (set by sandbox_active); cfg stays usable. */
void	sandbox_config_release(struct sandbox_config *cfg);

/*
 * At start-up: removes the local sandboxes (folders, tmpfs mounts and
 * processes) that dead flowcgi processes sharing sandbox.dir left, and
 * when the active provider is another with a sweep (docker: containers),
 * what they left there too; failures are logged.
 */
void	sandbox_sweep_active(struct engine *e);

#endif
