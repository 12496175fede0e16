/*
 * local.c — the local sandbox provider: bubblewrap (bwrap) on this host.
 *
 * Layout on the host, one folder per sandbox:
 *
 *	<sandbox.dir>/<id>/            tmpfs of sandbox.workspace_size (root)
 *	<sandbox.dir>/<id>/workspace   -> /workspace in the sandbox, the cwd
 *	<sandbox.dir>/<id>/tmp         -> /tmp
 *	<sandbox.dir>/<id>/shm         -> /dev/shm
 *	<sandbox.dir>/<id>/etc         passwd, group, hosts for /etc
 *	<sandbox.dir>/<id>/net         with network: proxy socket, forwarder
 *
 * so everything a sandboxed program can write lives under one cap. Beside
 * it, <sandbox.dir>/.<id>.lock names its owner, which holds an flock on it:
 * a flowcgi process that dies however it dies (SIGKILL, a crash) lets go
 * of it, and the next process to start on sandbox.dir sweeps the folder
 * away with its processes and mount (local_sweep.c).
 *
 * Each exec starts one bwrap with new pid, ipc, uts, cgroup and network
 * namespaces, a new session, --die-with-parent; the folders of /usr
 * read-only except /usr/local and /usr/src, the merged-/usr symlinks, a
 * short list of /etc files (below) plus a passwd, group and hosts written
 * for the sandbox, fresh /proc (its files that describe the host,
 * local_proc_hidden, shown empty) and /dev, and the three folders above
 * bound by file descriptor. With sandbox.network the network namespace
 * stays (loopback only) and the way out is net.c's proxy: its folder, with
 * the proxy's socket and the forwarder's program, is bound as
 * /run/flowcgi, and the command starts under the forwarder, which takes
 * 127.0.0.1:3128 to the socket.
 * Nothing else of the host exists inside: not /home, /root, /usr/local,
 * /etc/shadow, the data directory or the sandbox folder's parents. When
 * the command ends, or is killed at the wall clock, bwrap's pid 1 goes and
 * the kernel kills everything left in the pid namespace, so no process
 * outlives an exec. sandbox_local_spawn starts the same bwrap, one more
 * descriptor aside (a code runner's control pipe), and leaves the waiting
 * for later: code runners (code.c) are started that way, ahead of their
 * job when they are warm ones (codepool.c). Such a command may say on its
 * control pipe that its output is complete: sandbox_local_wait then
 * answers without waiting for the exit, and whoever ends the command
 * later kills the sandbox's pid 1 and waits for bwrap to report it, so
 * that nothing of the sandbox runs once it returns.
 *
 * Seccomp. Every command runs under a filter (built once per sandbox with
 * libseccomp, handed to bwrap --seccomp) that refuses with EPERM what code
 * and shell tools never need and what widens the kernel surface: making or
 * entering namespaces, mounting, tracing other processes, bpf, keyrings,
 * perf, io_uring, kernel modules, reboot and swap, handle-based opens,
 * clock setting, I/O ports and personality changes (sc_rules below; the
 * reasons are in docs/sandbox.md). clone3 gets ENOSYS so that libc falls
 * back to clone, whose flags the filter can see; a netlink socket gets
 * EAFNOSUPPORT. A refused call fails with
 * a clear error instead of killing the program. A filter that cannot be
 * built fails sandbox create: nothing ever runs unfiltered.
 *
 * Users and limits. RLIMIT_NPROC is not enforced for uid 0, and a user
 * namespace made by a root bwrap maps the sandbox user onto host root. So:
 *  - as root, bwrap runs privileged without a user namespace and the
 *    command starts through setpriv(1) (util-linux) as sandbox.uid/gid with
 *    no groups, no capabilities (bounding set emptied) and no_new_privs;
 *    the workspace tmpfs belongs to that uid;
 *  - otherwise bwrap makes an unprivileged user namespace (which the host
 *    must allow; sandbox_local_probe says so), keeps flowcgi's uid and,
 *    when this bwrap has --disable-userns (0.8.0 and later), forbids
 *    nested user namespaces with it.
 * Either way the seccomp filter refuses unshare, setns, clone with any
 * CLONE_NEW* flag and clone3, so no namespace can be made inside. As root
 * bwrap cannot take --disable-userns (it needs --unshare-user, whose user
 * namespace would map the sandbox user onto host root): the filter alone
 * does it there.
 * rlimits (CPU, DATA, NPROC, FSIZE, NOFILE, CORE 0) are set before bwrap
 * starts and pass to the command; but not as root, NPROC is set inside
 * the sandbox's user namespace by prlimit(1) (util-linux), the command's
 * first program: set before bwrap, it counted every process of flowcgi's
 * user on the host (a web server's workers and threads when flowcgi runs
 * as www-data), and bwrap could not even make its namespace once they
 * were more than sandbox.processes. Inside, the kernel counts the
 * sandbox's own processes against it. Memory is RLIMIT_DATA, not RLIMIT_AS:
 * V8 reserves far more address space than it uses (node does not start
 * under an RLIMIT_AS of 512m) while RLIMIT_DATA counts the private
 * writable memory a process really takes.
 *
 * Memory budget. Every sandbox reserves workspace_size + memory from
 * sandbox.memory_budget, shared by all processes on sandbox.dir, before
 * its folder is made, and waits for room up to sandbox.budget_wait
 * (local_budget.c).
 *
 * Workspace size. As root, a real tmpfs with size= and nr_inodes= is
 * mounted on the sandbox folder: writes past it fail with ENOSPC at once,
 * and destroy is an unmount. Without root (or when the mount is refused)
 * the folders stay on the host's disk and the cap is kept by accounting:
 * before each exec the usage is measured and RLIMIT_FSIZE lowered to what
 * is left (so one file cannot overshoot), uploads past the cap are
 * refused, and a result reports workspace_full when several files together
 * went past it.
 *
 * Host-side file access (upload, download, list, destroy) walks paths one
 * component at a time with O_NOFOLLOW from the workspace's descriptor, so
 * symlinks or FIFOs planted by sandboxed code never lead outside.
 *
 * A sandbox handle is used by one thread at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <seccomp.h>

#include "engine/sandbox/local.h"

#define BPF_MAX		65536	/* bytes of seccomp program */

/* /etc/hosts of a sandbox without network. */
static const char etc_hosts[] = "127.0.0.1\tlocalhost\n127.0.1.1\tsandbox\n"
    "::1\tlocalhost ip6-localhost ip6-loopback\n";

/* Folders of /usr a sandbox never sees: what the admin installed by hand
 * (/usr/local) and kernel sources. */
static const char *const usr_hidden[] = {"local", "src"};

/*
 * Files of the sandbox's fresh /proc that describe the host rather than
 * the sandbox, shown empty: the kernel's command line (root device,
 * boot options), its build configuration, loaded modules and symbols,
 * disks and swap, the kernel keyrings' users, and the timer and
 * scheduler dumps that name processes outside the sandbox. Chosen from
 * Docker's masked paths and what an unprivileged process can still read.
 * Nothing a program needs reads them. Each costs a mount per exec.
 */
const char *const local_proc_hidden[] = {
	"cmdline", "config.gz", "modules", "kallsyms", "partitions",
	"diskstats", "swaps", "keys", "key-users", "timer_list",
	"sched_debug",
};
const size_t local_proc_hidden_len = sizeof(local_proc_hidden) /
    sizeof(*local_proc_hidden);

/* mkdir -p of an absolute or relative path, mode for new folders. */
static int
mkdir_p(const char *path, mode_t mode)
{
	char	buf[PATH_MAX];
	size_t	i, n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, mode) != 0 && errno != EEXIST)
			return -1;
		buf[i] = i == n ? '\0' : '/';
	}
	return 0;
}

/* ====== Seccomp filter ====== */

/*
 * One refusal of the filter: syscall name, the errno it returns and when:
 * always (SC_ALL), when argument arg differs from val (SC_NE), when its
 * low 32 bits equal val (SC_EQ32: ioctl numbers are 32-bit and the upper
 * half of the register is whatever the caller left there), or when it has
 * any bit of val (SC_ANY: one rule per bit, since libseccomp ORs rules
 * but takes one test per argument in a rule). optional: a call newer than
 * some libseccomp still in use; one that does not know it leaves it out
 * rather than failing (Debian 12's 2.5.4 knows every call listed).
 */
struct sc_rule {
	const char	*name;
	int		 err;
	int		 cmp;
	unsigned	 arg;
	uint64_t	 val;
	int		 optional;
};

#define SC_ALL	0
#define SC_NE	1
#define SC_EQ32	2
#define SC_ANY	3

/* clone's flags are its first argument everywhere but on s390. */
#if defined(__s390__) || defined(__s390x__)
#define SC_CLONE_ARG	1
#else
#define SC_CLONE_ARG	0
#endif

/* The namespace flags of clone(2); CLONE_NEWTIME is only for clone3 and
 * unshare (in clone's flags its bit is part of the exit signal). */
#define SC_CLONE_NEW	((uint64_t)(CLONE_NEWNS | CLONE_NEWCGROUP | \
			    CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | \
			    CLONE_NEWPID | CLONE_NEWNET))

/*
 * What the filter refuses, chosen from Docker's default profile and
 * Flatpak's (docs/sandbox.md says why each group goes). Everything else is
 * allowed: the sandbox already runs without capabilities, and this list
 * takes away what an unprivileged process could still reach.
 */
static const struct sc_rule sc_rules[] = {
	/* namespaces and mounts */
	{"unshare", EPERM, SC_ALL, 0, 0, 0},
	{"setns", EPERM, SC_ALL, 0, 0, 0},
	{"clone", EPERM, SC_ANY, SC_CLONE_ARG, SC_CLONE_NEW, 0},
	{"clone3", ENOSYS, SC_ALL, 0, 0, 0},
	{"mount", EPERM, SC_ALL, 0, 0, 0},
	{"umount", EPERM, SC_ALL, 0, 0, 0},
	{"umount2", EPERM, SC_ALL, 0, 0, 0},
	{"pivot_root", EPERM, SC_ALL, 0, 0, 0},
	{"chroot", EPERM, SC_ALL, 0, 0, 0},
	{"open_tree", EPERM, SC_ALL, 0, 0, 1},
	{"move_mount", EPERM, SC_ALL, 0, 0, 1},
	{"fsopen", EPERM, SC_ALL, 0, 0, 1},
	{"fsconfig", EPERM, SC_ALL, 0, 0, 1},
	{"fsmount", EPERM, SC_ALL, 0, 0, 1},
	{"fspick", EPERM, SC_ALL, 0, 0, 1},
	{"mount_setattr", EPERM, SC_ALL, 0, 0, 1},
	/* other processes' memory */
	{"ptrace", EPERM, SC_ALL, 0, 0, 0},
	{"process_vm_readv", EPERM, SC_ALL, 0, 0, 0},
	{"process_vm_writev", EPERM, SC_ALL, 0, 0, 0},
	{"pidfd_getfd", EPERM, SC_ALL, 0, 0, 1},
	{"kcmp", EPERM, SC_ALL, 0, 0, 0},
	/* large kernel surfaces */
	{"bpf", EPERM, SC_ALL, 0, 0, 0},
	{"perf_event_open", EPERM, SC_ALL, 0, 0, 0},
	{"userfaultfd", EPERM, SC_ALL, 0, 0, 0},
	{"io_uring_setup", EPERM, SC_ALL, 0, 0, 1},
	{"io_uring_enter", EPERM, SC_ALL, 0, 0, 1},
	{"io_uring_register", EPERM, SC_ALL, 0, 0, 1},
	{"keyctl", EPERM, SC_ALL, 0, 0, 0},
	{"add_key", EPERM, SC_ALL, 0, 0, 0},
	{"request_key", EPERM, SC_ALL, 0, 0, 0},
	{"modify_ldt", EPERM, SC_ALL, 0, 0, 0},
	{"personality", EPERM, SC_NE, 0, PER_LINUX, 0},
	{"ioctl", EPERM, SC_EQ32, 1, TIOCSTI, 0},
	{"ioctl", EPERM, SC_EQ32, 1, TIOCLINUX, 0},
	/* netlink: the kernel's configuration interfaces (routes, links,
	 * netfilter, audit, uevents) need none of code's or shell tools'
	 * business; nothing in the sandbox (the forwarder included) opens
	 * one. EAFNOSUPPORT, as a kernel without it answers, so libraries
	 * fall back (getaddrinfo's AI_ADDRCONFIG, getifaddrs callers).
	 * 32-bit x86 could reach socket through socketcall, whose arguments
	 * a filter cannot see: ENOSYS makes libc use socket itself. */
	{"socket", EAFNOSUPPORT, SC_EQ32, 0, AF_NETLINK, 0},
	{"socketcall", ENOSYS, SC_ALL, 0, 0, 1},
	/* the machine itself */
	{"init_module", EPERM, SC_ALL, 0, 0, 0},
	{"finit_module", EPERM, SC_ALL, 0, 0, 0},
	{"delete_module", EPERM, SC_ALL, 0, 0, 0},
	{"create_module", EPERM, SC_ALL, 0, 0, 0},
	{"get_kernel_syms", EPERM, SC_ALL, 0, 0, 0},
	{"query_module", EPERM, SC_ALL, 0, 0, 0},
	{"kexec_load", EPERM, SC_ALL, 0, 0, 0},
	{"kexec_file_load", EPERM, SC_ALL, 0, 0, 0},
	{"reboot", EPERM, SC_ALL, 0, 0, 0},
	{"swapon", EPERM, SC_ALL, 0, 0, 0},
	{"swapoff", EPERM, SC_ALL, 0, 0, 0},
	{"acct", EPERM, SC_ALL, 0, 0, 0},
	{"quotactl", EPERM, SC_ALL, 0, 0, 0},
	{"quotactl_fd", EPERM, SC_ALL, 0, 0, 1},
	{"syslog", EPERM, SC_ALL, 0, 0, 0},
	{"lookup_dcookie", EPERM, SC_ALL, 0, 0, 0},
	{"open_by_handle_at", EPERM, SC_ALL, 0, 0, 0},
	{"name_to_handle_at", EPERM, SC_ALL, 0, 0, 0},
	{"iopl", EPERM, SC_ALL, 0, 0, 0},
	{"ioperm", EPERM, SC_ALL, 0, 0, 0},
	{"settimeofday", EPERM, SC_ALL, 0, 0, 0},
	{"stime", EPERM, SC_ALL, 0, 0, 0},
	{"clock_settime", EPERM, SC_ALL, 0, 0, 0},
	{"uselib", EPERM, SC_ALL, 0, 0, 0},
	{"nfsservctl", EPERM, SC_ALL, 0, 0, 0},
	{"_sysctl", EPERM, SC_ALL, 0, 0, 0},
	{"sysfs", EPERM, SC_ALL, 0, 0, 0},
	{"ustat", EPERM, SC_ALL, 0, 0, 0},
	{"vm86", EPERM, SC_ALL, 0, 0, 0},
	{"vm86old", EPERM, SC_ALL, 0, 0, 0},
};

/* The rules sandbox create builds from; a test may point it elsewhere. */
static const struct sc_rule	*sc_table = sc_rules;
static size_t			 sc_table_len = sizeof(sc_rules) /
				     sizeof(*sc_rules);

/* Adds rule r (syscall nr) to ctx; 0 or libseccomp's negative errno. */
static int
sc_add(scmp_filter_ctx ctx, const struct sc_rule *r, int nr)
{
	uint32_t	act = SCMP_ACT_ERRNO((uint32_t)r->err);
	uint64_t	bit;
	int		rc = 0;

	switch (r->cmp) {
	case SC_ALL:
		rc = seccomp_rule_add(ctx, act, nr, 0);
		break;
	case SC_NE:
		rc = seccomp_rule_add(ctx, act, nr, 1,
		    SCMP_CMP(r->arg, SCMP_CMP_NE, r->val));
		break;
	case SC_EQ32:
		rc = seccomp_rule_add(ctx, act, nr, 1,
		    SCMP_CMP(r->arg, SCMP_CMP_MASKED_EQ, 0xffffffffULL, r->val));
		break;
	case SC_ANY:
		for (bit = 1; bit != 0 && rc == 0; bit <<= 1)
			if (r->val & bit)
				rc = seccomp_rule_add(ctx, act, nr, 1,
				    SCMP_CMP(r->arg, SCMP_CMP_MASKED_EQ, bit, bit));
		break;
	default:
		rc = -EINVAL;
		break;
	}
	return rc;
}

/*
 * Builds the filter of rules[0..n) for the native architecture, x86_64
 * and the native one's 32-bit sibling (a 32-bit syscall would otherwise
 * dodge the rules), and exports its BPF program. *bpf (malloc'd, the
 * caller frees) holds *len bytes, the struct sock_filter array that bwrap
 * --seccomp reads. Returns 0 or SANDBOX_EFAIL with err set.
 */
static int
sc_build(const struct sc_rule *rules, size_t n, char *err,
    unsigned char **bpf, size_t *len)
{
	scmp_filter_ctx	 ctx = NULL;
	unsigned char	*buf = NULL;
	uint32_t	 arches[3];
	size_t		 i, narch = 0, got = 0;
	off_t		 size;
	ssize_t		 r;
	int		 rc = 0, src, nr, fd = -1;

	*bpf = NULL;
	*len = 0;
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: seccomp "
		    "filter: seccomp_init failed");
		goto out;
	}
	arches[narch++] = SCMP_ARCH_X86_64;
	if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
		arches[narch++] = SCMP_ARCH_X86;
		arches[narch++] = SCMP_ARCH_X32;
	} else if (seccomp_arch_native() == SCMP_ARCH_AARCH64)
		arches[narch++] = SCMP_ARCH_ARM;
	for (i = 0; i < narch; i++)
		if ((src = seccomp_arch_add(ctx, arches[i])) != 0 &&
		    src != -EEXIST) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: "
			    "seccomp filter: architecture 0x%x: %s",
			    (unsigned)arches[i], strerror(-src));
			goto out;
		}
	for (i = 0; i < n; i++) {
		nr = seccomp_syscall_resolve_name(rules[i].name);
		if (nr == __NR_SCMP_ERROR && rules[i].optional)
			continue;
		if (nr == __NR_SCMP_ERROR) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: "
			    "seccomp filter: libseccomp does not know the "
			    "system call %s (too old?)", rules[i].name);
			goto out;
		}
		if ((src = sc_add(ctx, &rules[i], nr)) != 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: "
			    "seccomp filter: rule for %s: %s", rules[i].name,
			    strerror(-src));
			goto out;
		}
	}
	if ((fd = memfd_create("flowcgi-seccomp", MFD_CLOEXEC)) < 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: seccomp "
		    "filter: memfd_create: %s", strerror(errno));
		goto out;
	}
	if ((src = seccomp_export_bpf(ctx, fd)) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: seccomp "
		    "filter: export: %s", strerror(-src));
		goto out;
	}
	if ((size = lseek(fd, 0, SEEK_END)) < 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: seccomp "
		    "filter: %s", strerror(errno));
		goto out;
	}
	if (size == 0 || size > BPF_MAX || size % 8 != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: seccomp "
		    "filter: a program of %jd bytes", (intmax_t)size);
		goto out;
	}
	if ((buf = malloc((size_t)size)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	while (got < (size_t)size) {
		r = pread(fd, buf + got, (size_t)size - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: "
			    "seccomp filter: read back: %s", r < 0 ?
			    strerror(errno) : "short");
			goto out;
		}
		got += (size_t)r;
	}
	*bpf = buf;
	*len = got;
	buf = NULL;
out:
	free(buf);
	sandbox_close_fd(&fd);
	if (ctx != NULL)
		seccomp_release(ctx);
	return rc;
}

/*
 * The program of sc_table into *bpf (malloc'd, the caller frees), built
 * once per process and copied out: building costs about 1.5 ms, a copy
 * nothing, and the table does not change (a test may point it elsewhere,
 * which builds again). A failure is not kept. Returns 0 or SANDBOX_EFAIL.
 */
static int
sc_program(char *err, unsigned char **bpf, size_t *len)
{
	static pthread_mutex_t		 mu = PTHREAD_MUTEX_INITIALIZER;
	static const struct sc_rule	*built_from;
	static unsigned char		*prog;
	static size_t			 prog_len;
	int				 rc = 0;

	*bpf = NULL;
	*len = 0;
	pthread_mutex_lock(&mu);
	if (prog == NULL || built_from != sc_table) {
		free(prog);
		prog = NULL;
		built_from = NULL;
		if ((rc = sc_build(sc_table, sc_table_len, err, &prog,
		    &prog_len)) != 0)
			goto out;
		built_from = sc_table;
	}
	if ((*bpf = malloc(prog_len)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	memcpy(*bpf, prog, prog_len);
	*len = prog_len;
out:
	pthread_mutex_unlock(&mu);
	return rc;
}

/* ====== What the sandbox sees of the host ====== */

/*
 * Fills l->usr with the entries of the host's /usr except usr_hidden:
 * folders and files are bound read-only, symlinks made again with the
 * same content (so one pointing into /usr/local shows nothing). Returns 0
 * or SANDBOX_EFAIL.
 */
static int
usr_scan(struct local *l, char *err)
{
	DIR		*d = NULL;
	struct dirent	*de;
	struct stat	 st;
	struct usr_entry *u;
	char		 name[sizeof(u->name)];
	size_t		 i;
	ssize_t		 n;
	int		 rc = 0, hide;

	l->nusr = 0;
	if ((d = opendir("/usr")) == NULL) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: /usr: %s",
		    strerror(errno));
		goto out;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		for (hide = 0, i = 0; i < sizeof(usr_hidden) /
		    sizeof(*usr_hidden); i++)
			hide |= strcmp(de->d_name, usr_hidden[i]) == 0;
		if (hide)
			continue;
		/* A name too long for u->name: none such in a Debian /usr. */
		if ((size_t)snprintf(name, sizeof(name), "/usr/%s",
		    de->d_name) >= sizeof(name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) &&
		    !S_ISLNK(st.st_mode))
			continue;
		if (l->nusr == USR_MAX) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: more "
			    "than %d entries in /usr", USR_MAX);
			goto out;
		}
		u = &l->usr[l->nusr];
		memcpy(u->name, name, sizeof(u->name));
		u->target[0] = '\0';
		if (S_ISLNK(st.st_mode)) {
			n = readlinkat(dirfd(d), de->d_name, u->target,
			    sizeof(u->target) - 1);
			if (n <= 0 || (size_t)n >= sizeof(u->target) - 1)
				continue;
			u->target[n] = '\0';
		}
		l->nusr++;
	}
out:
	if (d != NULL)
		closedir(d);
	return rc;
}

/* Writes name (mode 0444) holding text into folder dirfd; 0 or
 * SANDBOX_EFAIL. */
static int
etc_file(struct local *l, int dirfd, const char *name, const char *text,
    char *err)
{
	size_t	off = 0, len = strlen(text);
	ssize_t	n;
	int	fd, rc = 0;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0444);
	if (fd < 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s/etc/%s': %s",
		    l->root, name, strerror(errno));
		goto out;
	}
	while (off < len) {
		n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s/etc/%s':"
			    " %s", l->root, name, n < 0 ? strerror(errno)
			    : "short write");
			goto out;
		}
		off += (size_t)n;
	}
out:
	if (fd >= 0 && close(fd) != 0 && rc == 0)
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s/etc/%s': %s",
		    l->root, name, strerror(errno));
	return rc;
}

/*
 * Writes the sandbox's own /etc files into <root>/etc: passwd and group
 * with root, the user commands run as (named sandbox) and nobody, and,
 * without network, hosts. Returns 0 or SANDBOX_EFAIL.
 */
static int
etc_write(struct local *l, char *err)
{
	char		passwd[256], group[128];
	unsigned	uid, gid;
	int		rc = 0, fd = -1;

	uid = l->as_root ? (unsigned)l->cfg.uid : (unsigned)getuid();
	gid = l->as_root ? (unsigned)l->cfg.uid : (unsigned)getgid();
	snprintf(passwd, sizeof(passwd),
	    "root:x:0:0:root:/root:/usr/sbin/nologin\n"
	    "sandbox:x:%u:%u:sandbox:/workspace:/bin/sh\n%s", uid, gid,
	    uid == 65534 ? "" : "nobody:x:65534:65534:nobody:/nonexistent:"
	    "/usr/sbin/nologin\n");
	snprintf(group, sizeof(group), "root:x:0:\nsandbox:x:%u:\n%s", gid,
	    gid == 65534 ? "" : "nogroup:x:65534:\n");
	if (mkdirat(l->root_fd, "etc", 0755) != 0 ||
	    fchmodat(l->root_fd, "etc", 0755, 0) != 0 ||
	    (fd = openat(l->root_fd, "etc", O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) < 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s/etc': %s",
		    l->root, strerror(errno));
		goto out;
	}
	if ((rc = etc_file(l, fd, "passwd", passwd, err)) != 0 ||
	    (rc = etc_file(l, fd, "group", group, err)) != 0)
		goto out;
	if ((rc = etc_file(l, fd, "hosts", etc_hosts, err)) != 0 ||
	    (rc = etc_file(l, fd, "empty", "", err)) != 0)
		goto out;
	/* Bound by descriptor, like the folders: no host path in bwrap's
	 * command line, which the sandbox can read as pid 1's. */
	if ((l->etc_fd[0] = openat(fd, "passwd", O_PATH | O_NOFOLLOW |
	    O_CLOEXEC)) < 0 || (l->etc_fd[1] = openat(fd, "group", O_PATH |
	    O_NOFOLLOW | O_CLOEXEC)) < 0 || (l->etc_fd[2] = openat(fd,
	    "hosts", O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (l->empty_fd = openat(fd, "empty", O_PATH | O_NOFOLLOW |
	    O_CLOEXEC)) < 0)
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s/etc': %s",
		    l->root, strerror(errno));
out:
	sandbox_close_fd(&fd);
	return rc;
}

/*
 * 1 when `bwrap --help` lists --disable-userns (bubblewrap 0.8.0 and
 * later), else 0. Asked once per process: the answer is the same for
 * every sandbox.
 */
static int
bwrap_disable_userns(const char *bwrap)
{
	static pthread_mutex_t	 mu = PTHREAD_MUTEX_INITIALIZER;
	static int		 known = -1;
	posix_spawn_file_actions_t fa;
	char			*argv[3], buf[16384];
	size_t			 got = 0;
	ssize_t			 n;
	pid_t			 pid;
	int			 p[2] = {-1, -1}, fa_ok = 0, status, yes = 0;

	pthread_mutex_lock(&mu);
	if (known >= 0)
		goto out;
	argv[0] = (char *)bwrap;
	argv[1] = (char *)"--help";
	argv[2] = NULL;
	if (pipe2(p, O_CLOEXEC) != 0 || posix_spawn_file_actions_init(&fa) != 0)
		goto out;
	fa_ok = 1;
	if (posix_spawn_file_actions_adddup2(&fa, p[1], 1) != 0 ||
	    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY,
	    0) != 0 || posix_spawn(&pid, bwrap, &fa, NULL, argv, environ) != 0)
		goto out;
	sandbox_close_fd(&p[1]);
	while (got < sizeof(buf) - 1) {
		n = read(p[0], buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	yes = strstr(buf, "--disable-userns") != NULL;
	known = yes;
out:
	if (known >= 0)
		yes = known;
	pthread_mutex_unlock(&mu);
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	sandbox_close_fd(&p[0]);
	sandbox_close_fd(&p[1]);
	return yes;
}

/* ====== Create and destroy ====== */

static void	local_close_fds(struct local *l);

/*
 * With network: <root>/net with the forwarder's program and the proxy's
 * socket (its thread started), bound read-only into every command's
 * sandbox as NET_DIR.
 */
static int
net_start(struct local *l, char *err)
{
	size_t	off = 0;
	ssize_t	n;
	int	rc = 0, fd = -1;

	if (mkdirat(l->root_fd, "net", 0755) != 0 ||
	    fchmodat(l->root_fd, "net", 0755, 0) != 0 ||
	    (l->net_fd = openat(l->root_fd, "net", O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (fd = openat(l->net_fd, SANDBOX_NETFWD_NAME, O_WRONLY | O_CREAT |
	    O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755)) < 0)
		goto fail;
	while (off < sandbox_netfwd_len) {
		n = write(fd, sandbox_netfwd_bin + off,
		    sandbox_netfwd_len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	if (fchmod(fd, 0755) != 0 || close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	rc = sandbox_proxy_start(&l->cfg, l->net_fd, err, &l->proxy);
	goto out;
fail:
	rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s/net': %s",
	    l->root, errno ? strerror(errno) : "short write");
out:
	sandbox_close_fd(&fd);
	return rc;
}

static int
local_create(const struct sandbox_config *cfg, char *err,
    struct sandbox **out)
{
	static const char *const sub[] = {"workspace", "tmp", "shm"};
	struct local	*l = NULL;
	char		 opts[128];
	int		 rc = 0, *fds[3];
	size_t		 i;

	*out = NULL;
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	l->root_fd = l->ws_fd = l->tmp_fd = l->shm_fd = -1;
	l->etc_fd[0] = l->etc_fd[1] = l->etc_fd[2] = -1;
	l->net_fd = l->lock_fd = l->empty_fd = -1;
	l->cfg = *cfg;
	l->cfg.options = NULL;
	l->base.network = cfg->network;
	l->as_root = geteuid() == 0;
	engine_uuid(l->base.id);
	if (sandbox_find_program("bwrap", l->bwrap, sizeof(l->bwrap)) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: bwrap not found "
		    "in PATH (install the Debian package bubblewrap)");
		goto out;
	}
	if (l->as_root && (sandbox_find_program("setpriv", l->setpriv,
	    sizeof(l->setpriv)) != 0 || strncmp(l->setpriv, "/usr/", 5) != 0)) {
		/* It must be under /usr to exist inside the sandbox. */
		if (access("/usr/bin/setpriv", X_OK) != 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: setpriv "
			    "not found in /usr (install util-linux)");
			goto out;
		}
		snprintf(l->setpriv, sizeof(l->setpriv), "/usr/bin/setpriv");
	}
	if (!l->as_root && (sandbox_find_program("prlimit", l->prlimit,
	    sizeof(l->prlimit)) != 0 || strncmp(l->prlimit, "/usr/", 5) != 0)) {
		/* the same: it runs inside, as the command's first program */
		if (access("/usr/bin/prlimit", X_OK) != 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: prlimit "
			    "not found in /usr (install util-linux)");
			goto out;
		}
		snprintf(l->prlimit, sizeof(l->prlimit), "/usr/bin/prlimit");
	}
	/* Never run a command unfiltered: no filter, no sandbox. */
	if ((rc = sc_program(err, &l->bpf, &l->bpf_len)) != 0 ||
	    (rc = usr_scan(l, err)) != 0)
		goto out;
	l->no_userns = !l->as_root && bwrap_disable_userns(l->bwrap);
	/* The sandbox's /proc is the same kernel's: what this one lacks, it
	 * lacks too (a bind onto a missing file would fail the exec). */
	for (i = 0; i < local_proc_hidden_len && i < PROC_HIDDEN_MAX; i++) {
		snprintf(opts, sizeof(opts), "/proc/%s", local_proc_hidden[i]);
		if (access(opts, F_OK) == 0)
			l->proc_hidden |= 1U << i;
	}
	if (cfg->dir[0] == '\0' || mkdir_p(cfg->dir, 0700) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox.dir '%.100s': %s",
		    cfg->dir, cfg->dir[0] ? strerror(errno) : "empty");
		goto out;
	}
	if ((size_t)snprintf(l->root, sizeof(l->root), "%s/%s", cfg->dir,
	    l->base.id) >= sizeof(l->root)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox.dir: path too long");
		l->root[0] = '\0';
		goto out;
	}
	/* Folders of dead processes go before this one is made; its owner
	 * file is taken before its folder exists, so that no folder is ever
	 * left without one. */
	local_sweep_first(cfg->dir);
	if ((rc = local_owner_take(l, err)) != 0) {
		l->root[0] = '\0';
		goto out;
	}
	/* Room in the memory budget before anything takes memory. */
	if ((rc = local_budget_take(l, err)) != 0) {
		l->root[0] = '\0';
		goto out;
	}
	if (mkdir(l->root, 0700) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox.dir '%.100s': %s",
		    cfg->dir, strerror(errno));
		l->root[0] = '\0';	/* not ours to remove */
		goto out;
	}
	if (l->as_root && !cfg->no_mount) {
		snprintf(opts, sizeof(opts), "size=%" PRId64 ",nr_inodes=%" PRId64
		    ",mode=0700", cfg->workspace_size,
		    cfg->workspace_size / 4096 > 1024 ? cfg->workspace_size / 4096
						     : 1024);
		if (mount("flowcgi-sandbox", l->root, "tmpfs",
		    MS_NOSUID | MS_NODEV, opts) == 0)
			l->mounted = 1;
		else
			log_warn("sandbox: cannot mount a tmpfs on %s (%s); "
			    "keeping sandbox.workspace_size by accounting",
			    l->root, strerror(errno));
	}
	if ((l->root_fd = open(l->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s': %s", l->root,
		    strerror(errno));
		goto out;
	}
	fds[0] = &l->ws_fd;
	fds[1] = &l->tmp_fd;
	fds[2] = &l->shm_fd;
	for (i = 0; i < 3; i++) {
		if (mkdirat(l->root_fd, sub[i], i == 0 ? 0755 : 01777) != 0 ||
		    fchmodat(l->root_fd, sub[i], i == 0 ? 0755 : 01777, 0) != 0 ||
		    (l->as_root && fchownat(l->root_fd, sub[i],
		    (uid_t)cfg->uid, (gid_t)cfg->uid, AT_SYMLINK_NOFOLLOW) != 0) ||
		    (*fds[i] = openat(l->root_fd, sub[i], O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) < 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s/%s': %s",
			    l->root, sub[i], strerror(errno));
			goto out;
		}
	}
	if ((rc = etc_write(l, err)) != 0 ||
	    (cfg->network && (rc = net_start(l, err)) != 0))
		goto out;
	*out = &l->base;
	l = NULL;
out:
	if (l != NULL) {
		sandbox_proxy_stop(l->proxy);
		local_close_fds(l);
		if (l->mounted)
			(void)umount2(l->root, MNT_DETACH);
		if (l->root[0] != '\0')
			local_rm_tree(AT_FDCWD, l->root);
		local_owner_drop(l);
		local_budget_released(l);
		free(l->bpf);
		free(l);
	}
	return rc;
}

static void
local_close_fds(struct local *l)
{
	sandbox_close_fd(&l->ws_fd);
	sandbox_close_fd(&l->tmp_fd);
	sandbox_close_fd(&l->shm_fd);
	sandbox_close_fd(&l->etc_fd[0]);
	sandbox_close_fd(&l->etc_fd[1]);
	sandbox_close_fd(&l->etc_fd[2]);
	sandbox_close_fd(&l->empty_fd);
	sandbox_close_fd(&l->net_fd);
	sandbox_close_fd(&l->root_fd);
}

static int
local_destroy(struct sandbox *sb, char *err)
{
	struct local	*l = (struct local *)sb;
	int		 rc = 0;

	if (l->destroyed)
		goto out;
	l->destroyed = 1;
	/* No process outlives an exec (see the top), so only the proxy's
	 * threads and files remain. */
	sandbox_proxy_stop(l->proxy);
	l->proxy = NULL;
	local_close_fds(l);
	if (l->mounted && umount2(l->root, MNT_DETACH) != 0)
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s': unmount: %s",
		    l->root, strerror(errno));
	local_rm_tree(AT_FDCWD, l->root);
	if (rc == 0 && access(l->root, F_OK) == 0)
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s': not removed",
		    l->root);
	/* A folder that stayed keeps its owner file: a later sweep of any
	 * process takes it once this one has let go. */
	local_owner_drop(l);
	local_budget_released(l);
out:
	return rc;
}

static void
local_free(struct sandbox *sb)
{
	char err[ENGINE_ERRMAX];

	if (local_destroy(sb, err) != 0)
		log_warn("sandbox: %s", err);
	free(((struct local *)sb)->bpf);
	free(sb);
}

const struct sandbox_provider sandbox_provider_local = {
	.name = "local",
	.create = local_create,
	.exec = local_exec,
	.upload = local_upload,
	.download = local_download,
	.list = local_list,
	.destroy = local_destroy,
	.free = local_free,
	.probe = sandbox_local_probe,
	.sweep = local_sweep,
};

/* ====== Start-up probe ====== */

/* The first line of a /proc/sys file as an integer, or -1. */
static long
sysctl_long(const char *path)
{
	FILE	*f = fopen(path, "re");
	char	 buf[64];
	long	 v = -1;

	if (f == NULL)
		return -1;
	if (fgets(buf, sizeof(buf), f) != NULL)
		v = strtol(buf, NULL, 10);
	fclose(f);
	return v;
}

int
sandbox_local_probe(const struct conf *c, char *err)
{
	struct conf			*def = NULL;
	struct sandbox_config		 cfg;
	struct sandbox_exec_result	 res = {0};
	struct sandbox_exec_req		 req = {0};
	struct sandbox			*sb = NULL;
	static const char *const	 argv[] = {"true", NULL};
	char				 path[PATH_MAX], tmp[64] = "";
	const char			*base;
	int				 rc = 0, root = geteuid() == 0;

	err[0] = '\0';
	if (sandbox_find_program("bwrap", path, sizeof(path)) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: bwrap not found "
		    "in PATH; install the Debian package bubblewrap");
		goto out;
	}
	if (!root && sysctl_long("/proc/sys/kernel/unprivileged_userns_clone")
	    == 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: user namespaces "
		    "are disabled for unprivileged users (sysctl "
		    "kernel.unprivileged_userns_clone=0); set it to 1, or run "
		    "flowcgi as root");
		goto out;
	}
	if (!root && sysctl_long("/proc/sys/user/max_user_namespaces") == 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: user namespaces "
		    "are disabled (sysctl user.max_user_namespaces=0); raise it, "
		    "or run flowcgi as root");
		goto out;
	}
	if (c == NULL) {
		if ((def = malloc(sizeof(*def))) == NULL) {
			rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
			goto out;
		}
		conf_defaults(def);
		sandbox_config_init(&cfg, def);
		base = getenv("TMPDIR");
		snprintf(tmp, sizeof(tmp), "%s/flowcgi-probe-XXXXXX",
		    base && base[0] == '/' && strlen(base) < 32 ? base : "/tmp");
		if (mkdtemp(tmp) == NULL) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: %s: %s",
			    tmp, strerror(errno));
			tmp[0] = '\0';
			goto out;
		}
		snprintf(cfg.dir, sizeof(cfg.dir), "%s", tmp);
		cfg.no_mount = 1;
	} else
		sandbox_config_init(&cfg, c);
	if ((rc = sandbox_create(&sandbox_provider_local, &cfg, err, &sb)) != 0)
		goto out;
	req.argv = argv;
	req.timeout_ms = 20000;
	if ((rc = sandbox_exec(sb, &req, err, &res)) != 0) {
		if (!root && sysctl_long(
		    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
			snprintf(err + strlen(err), ENGINE_ERRMAX - strlen(err),
			    " (AppArmor restricts user namespaces: sysctl "
			    "kernel.apparmor_restrict_unprivileged_userns=1)");
		goto out;
	}
	if (res.exit_code != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: `true` exited "
		    "with %d: %.160s", res.exit_code, res.err);
		goto out;
	}
out:
	sandbox_exec_result_release(&res);
	sandbox_free(sb);
	if (tmp[0] != '\0')
		(void)rmdir(tmp);
	free(def);
	return rc;
}
