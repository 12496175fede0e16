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
 * so everything a sandboxed program can write lives under one cap.
 *
 * Each exec starts one bwrap with new pid, ipc, uts, cgroup and network
 * namespaces, a new session, --die-with-parent; the folders of /usr
 * read-only except /usr/local and /usr/src, the merged-/usr symlinks, a
 * short list of /etc files (below) plus a passwd, group and hosts written
 * for the sandbox, fresh /proc and /dev, and the three folders above
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
 * back to clone, whose flags the filter can see. A refused call fails with
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
 * starts and pass to the command. Memory is RLIMIT_DATA, not RLIMIT_AS:
 * V8 reserves far more address space than it uses (node does not start
 * under an RLIMIT_AS of 512m) while RLIMIT_DATA counts the private
 * writable memory a process really takes.
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
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <seccomp.h>

#include "engine/sandbox/sandbox.h"

/* Fixed descriptors in bwrap's process. */
#define FD_WS		3
#define FD_TMP		4
#define FD_SHM		5
#define FD_STAT		6
#define FD_SECCOMP	7
#define FD_PASSWD	8
#define FD_GROUP	9
#define FD_HOSTS	10
#define FD_CTL		SANDBOX_CTL_FD	/* the code pool's, else none */
#define FD_NET		12	/* with network: the proxy's folder */
#define FD_RO		13	/* req->readonly's folder, else none */
#define FD_COUNT	14

/* Where the proxy's socket and the forwarder are inside. */
#define NET_DIR		"/run/flowcgi"
#define NET_FWD		NET_DIR "/" SANDBOX_NETFWD_NAME

#define NET_ENV_MAX	32	/* variables of sandbox_net_env */
#define LIST_MAX_DEPTH	64
#define USAGE_MAX_FILES	200000
#define USR_MAX		48	/* entries of /usr bound into a sandbox */
#define BPF_MAX		65536	/* bytes of seccomp program */

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

/*
 * The /etc files programs need; nothing else of /etc is visible. Each is a
 * mount costing about 0.1 ms per exec, so the list is short: the dynamic
 * linker's cache, time zone, alternatives (symlinks into /usr), CA
 * certificates, name service switch, services, protocols, os-release.
 * passwd and group are written for the sandbox (its own user, root and
 * nobody: the host's account names are none of its business), and so is
 * hosts.
 */
static const char *const etc_files[] = {
	"/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives",
	"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/nsswitch.conf",
	"/etc/services", "/etc/protocols", "/etc/os-release",
};

/* /etc/hosts of a sandbox without network. */
static const char etc_hosts[] = "127.0.0.1\tlocalhost\n127.0.1.1\tsandbox\n"
    "::1\tlocalhost ip6-localhost ip6-loopback\n";

/* Folders of /usr a sandbox never sees: what the admin installed by hand
 * (/usr/local) and kernel sources. */
static const char *const usr_hidden[] = {"local", "src"};

/* Top-level names that merged-/usr systems make symlinks into /usr. */
static const char *const usr_links[] = {
	"bin", "sbin", "lib", "lib32", "lib64", "libx32",
};

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

/* ====== Paths inside the workspace ====== */

/*
 * Opens the folder that holds path's last component, walking from the
 * workspace without following symlinks; mkdirs missing folders (owned by
 * the sandbox user) when make is set. *dirfd is a new descriptor; *leaf
 * points into path. path "" or ".": *dirfd is the workspace, *leaf "".
 */
static int
ws_parent(struct local *l, const char *path, int make, char *err, int *dirfd,
    const char **leaf)
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
static int64_t
local_usage(struct local *l)
{
	struct statvfs	vs;
	size_t		count = 0;

	if (l->mounted && fstatvfs(l->root_fd, &vs) == 0)
		return (int64_t)(vs.f_blocks - vs.f_bfree) * (int64_t)vs.f_frsize;
	return usage_of(l->root_fd, 0, &count);
}

/* Removes name under dirfd and everything below it, never following a
 * symlink. */
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
		if (strlen(de->d_name) + 5 >= sizeof(l->usr[0].name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;	/* no such name in a Debian /usr */
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) &&
		    !S_ISLNK(st.st_mode))
			continue;
		if (l->nusr == USR_MAX) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox: more "
			    "than %d entries in /usr", USR_MAX);
			goto out;
		}
		u = &l->usr[l->nusr];
		snprintf(u->name, sizeof(u->name), "/usr/%s", de->d_name);
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
	if ((rc = etc_file(l, fd, "hosts", etc_hosts, err)) != 0)
		goto out;
	/* Bound by descriptor, like the folders: no host path in bwrap's
	 * command line, which the sandbox can read as pid 1's. */
	if ((l->etc_fd[0] = openat(fd, "passwd", O_PATH | O_NOFOLLOW |
	    O_CLOEXEC)) < 0 || (l->etc_fd[1] = openat(fd, "group", O_PATH |
	    O_NOFOLLOW | O_CLOEXEC)) < 0 || (l->etc_fd[2] = openat(fd,
	    "hosts", O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0)
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

/* A memfd holding data[0..len), positioned at its start, for bwrap
 * --seccomp. Returns 0 or SANDBOX_EFAIL; *fd is new (-1 on failure). */
static int
data_fd(const char *name, const void *data, size_t len, char *err, int *fd)
{
	const char	*p = data;
	size_t		 off = 0;
	ssize_t		 n;
	int		 rc = 0;

	if ((*fd = memfd_create(name, MFD_CLOEXEC)) < 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "exec: memfd_create: %s",
		    strerror(errno));
		goto out;
	}
	while (off < len) {
		n = write(*fd, p + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "exec: %s: %s", name,
			    n < 0 ? strerror(errno) : "short write");
			goto out;
		}
		off += (size_t)n;
	}
	if (lseek(*fd, 0, SEEK_SET) != 0)
		rc = sandbox_fail(err, SANDBOX_EFAIL, "exec: %s: %s", name,
		    strerror(errno));
out:
	if (rc != 0)
		sandbox_close_fd(fd);
	return rc;
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
	l->net_fd = -1;
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
	/* Never run a command unfiltered: no filter, no sandbox. */
	if ((rc = sc_program(err, &l->bpf, &l->bpf_len)) != 0 ||
	    (rc = usr_scan(l, err)) != 0)
		goto out;
	l->no_userns = !l->as_root && bwrap_disable_userns(l->bwrap);
	if (cfg->dir[0] == '\0' || mkdir_p(cfg->dir, 0700) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox.dir '%.100s': %s",
		    cfg->dir, cfg->dir[0] ? strerror(errno) : "empty");
		goto out;
	}
	if ((size_t)snprintf(l->root, sizeof(l->root), "%s/%s", cfg->dir,
	    l->base.id) >= sizeof(l->root)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox.dir: path too long");
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
			rm_tree(AT_FDCWD, l->root, 0);
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
	rm_tree(AT_FDCWD, l->root, 0);
	if (rc == 0 && access(l->root, F_OK) == 0)
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s': not removed",
		    l->root);
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

/* ====== Exec ====== */

/* A growing list of strings for argv and envp; never fails mid-way: a
 * full list is noticed once at the end. */
struct strv {
	const char	**v;
	size_t		  n, cap;
	int		  full;
};

static void
strv_add(struct strv *s, const char *str)
{
	if (s->n + 2 > s->cap) {
		s->full = 1;
		return;
	}
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

/* 1 when env list v already has name (up to '='). */
static int
env_has(const struct strv *s, const char *kv)
{
	size_t i, n = strcspn(kv, "=");

	for (i = 0; i < s->n; i++)
		if (strncmp(s->v[i], kv, n) == 0 && s->v[i][n] == '=')
			return 1;
	return 0;
}

/* A pipe from bwrap and what came through it (out of memory: kept so
 * far, truncated). */
struct stream {
	int			fd;
	struct sandbox_buf	b;
};

/* Reads what fd has; returns 0 on data, 1 on EOF or error, -1 when there
 * is nothing to read now. */
static int
stream_read(struct stream *s)
{
	char	tmp[65536];
	ssize_t	n;

	while ((n = read(s->fd, tmp, sizeof(tmp))) < 0 && errno == EINTR)
		;
	if (n < 0 && errno == EAGAIN)
		return -1;
	if (n <= 0)
		return 1;
	sandbox_buf_add(&s->b, tmp, (size_t)n);
	return 0;
}

/* Reads everything s has now (closing it at its end). */
static void
stream_drain(struct stream *s)
{
	int rc;

	while (s->fd >= 0 && (rc = stream_read(s)) >= 0)
		if (rc == 1)
			sandbox_close_fd(&s->fd);
}

/*
 * The child between fork and exec: only async-signal-safe calls. Moves the
 * descriptors src[0..FD_COUNT) into place (a slot whose src is -1 stays
 * closed), drops everything else, resets signals, sets the limits and runs
 * bwrap.
 */
static void
child_exec(const char *path, char *const *argv, char *const *envp,
    const int *src, const struct rlimit *lim, const int *res, size_t nlim)
{
	struct sigaction	sa;
	sigset_t		all;
	int			hi[FD_COUNT], i;

	(void)setsid();
	for (i = 0; i < FD_COUNT; i++) {
		hi[i] = -1;
		if (src[i] >= 0 && (hi[i] = fcntl(src[i], F_DUPFD, 32)) < 0)
			_exit(126);
	}
	for (i = 0; i < FD_COUNT; i++)
		if (hi[i] >= 0 ? dup2(hi[i], i) < 0 : close(i) != 0 &&
		    errno != EBADF)
			_exit(126);
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)FD_COUNT, ~0U, 0U) != 0)
#endif
		for (i = FD_COUNT; i < 4096; i++)
			(void)close(i);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (i = 1; i < NSIG; i++)
		(void)sigaction(i, &sa, NULL);
	sigemptyset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, NULL);
	for (i = 0; i < (int)nlim; i++)
		if (setrlimit(res[i], &lim[i]) != 0)
			_exit(126);
	execve(path, argv, envp);
	_exit(127);
}

/* Writes what it can of stdin; returns 1 when done (all written, or the
 * reader went away). SIGPIPE is blocked in this thread meanwhile. */
static int
stdin_write(int fd, const char *p, size_t len, size_t *off)
{
	ssize_t n;

	n = write(fd, p + *off, len - *off > 65536 ? 65536 : len - *off);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : 1;
	*off += (size_t)n;
	return *off >= len;
}

/*
 * A command started by local_spawn and not yet waited for: bwrap's pid, a
 * pidfd on it (-1 without pidfd_open) and our ends of its pipes, all
 * close-on-exec and (but stdin) non-blocking.
 */
struct sandbox_proc {
	struct local	*l;
	pid_t		 pid;
	pid_t		 init;		/* the sandbox's pid 1, as we see it
					 * (0: not known) */
	int		 pidfd;
	int		 in;		/* its standard input */
	int		 out;		/* its standard output */
	int		 err;		/* its standard error */
	int		 st;		/* bwrap's --json-status-fd */
};

#define PROC_INIT	{NULL, -1, 0, -1, -1, -1, -1, -1}

/* How long bwrap may take to report its pid 1 killed (ms). */
#define INIT_GRACE_MS	5000

/* The number after "name": in bwrap's status lines, or 0. */
static long
status_number(const char *status, const char *name)
{
	const char *s;

	if (status == NULL || (s = strstr(status, name)) == NULL ||
	    (s = strchr(s, ':')) == NULL)
		return 0;
	return strtol(s + 1, NULL, 10);
}

/* The parent of process pid, from /proc, or -1. */
static pid_t
parent_of(pid_t pid)
{
	char	 path[64], buf[512], *s;
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...", comm may hold anything */
	if ((s = strrchr(buf, ')')) == NULL || strlen(s) < 5)
		return -1;
	return (pid_t)strtol(s + 4, NULL, 10);
}

/*
 * Kills the sandbox's pid 1 (bwrap's init, whose end takes every other
 * process of the pid namespace with it) and waits for bwrap to report it:
 * the kernel has emptied the namespace before, so nothing of the sandbox
 * runs once bwrap ended. Killing bwrap instead leaves its pid 1 and the
 * rest to die on their own a moment later, maybe after the workspace is
 * gone. Returns 1 when bwrap ended so, 0 when the caller must kill it.
 */
static int
proc_kill_init(struct sandbox_proc *p)
{
	int ok = 0;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
	struct pollfd	pfd;
	int		fd;

	if (p->init <= 1 || p->pidfd < 0 ||
	    (fd = (int)syscall(SYS_pidfd_open, p->init, 0)) < 0)
		return 0;
	/* Still bwrap's child, so the pidfd is on the sandbox's pid 1 and
	 * not on a process that got its number since. */
	if (parent_of(p->init) == p->pid &&
	    syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) == 0) {
		pfd.fd = p->pidfd;
		pfd.events = POLLIN;
		while ((ok = poll(&pfd, 1, INIT_GRACE_MS)) < 0 &&
		    errno == EINTR)
			;
		ok = ok == 1;
	}
	close(fd);
#else
	(void)p;
#endif
	return ok;
}

/*
 * Kills what is left of p's command and reaps bwrap: its pid 1 when known
 * (proc_kill_init), else bwrap's process group (the rest of the sandbox
 * dies with bwrap's pid 1). Closes p's descriptors; p itself stays.
 */
static void
proc_end(struct sandbox_proc *p)
{
	char	buf[512];
	ssize_t	n;
	int	status;

	if (p->pid > 0) {
		/* Never waited for: bwrap's first status line, written
		 * when it started its pid 1, names it. */
		if (p->init == 0 && p->st >= 0 &&
		    (n = read(p->st, buf, sizeof(buf) - 1)) > 0) {
			buf[n] = '\0';
			p->init = (pid_t)status_number(buf, "\"child-pid\"");
		}
		if (!proc_kill_init(p)) {
			(void)kill(-p->pid, SIGKILL);
			(void)kill(p->pid, SIGKILL);
		}
		while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
			;
		p->pid = -1;
	}
	sandbox_close_fd(&p->in);
	sandbox_close_fd(&p->out);
	sandbox_close_fd(&p->err);
	sandbox_close_fd(&p->st);
	sandbox_close_fd(&p->pidfd);
}

/*
 * The workspace folder name (one component, at most 40 bytes) opened
 * O_PATH without following a symlink, for a read-only bind: -1 when
 * there is none or it is not a real folder (nothing to protect then).
 */
static int
ro_folder(struct local *l, const char *name)
{
	struct stat	st;
	int		fd;

	if (name == NULL || *name == '\0' || strchr(name, '/') != NULL ||
	    strlen(name) > 40 || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return -1;
	if ((fd = openat(l->ws_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Starts req in sandbox l: bwrap with the sandbox's namespaces, mounts,
 * filter and limits, the command in it. ctl, when >= 0, becomes the
 * command's descriptor FD_CTL. Fills p; its standard input stays open
 * for local_wait. Returns 0 or an error (nothing started then).
 */
static int
local_spawn(struct local *l, const struct sandbox_exec_req *req, int ctl,
    char *err, struct sandbox_proc *p)
{
	struct strv	 av = {0}, ev = {0};
	struct rlimit	 lim[6];
	struct stat	 sst;
	char		 links[6][PATH_MAX], chdir_to[PATH_MAX + 16];
	char		 ids[3][48], net_env[1024], rodest[64];
	int		 rcs[6], pin[2] = {-1, -1}, pout[2] = {-1, -1};
	int		 perr[2] = {-1, -1}, pst[2] = {-1, -1}, src[FD_COUNT];
	int		 sfd = -1, rofd = -1;
	int		 rc = 0, dfd = -1;
	size_t		 nargs = 0, nenv = 0, k;
	const char	*leaf;
	pid_t		 pid = -1;
	int64_t		 used, left;
	ssize_t		 ln;

	p->l = l;
	if (l->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed",
		    l->base.id);
		goto out;
	}
	/* The working folder must exist and be a real folder. */
	snprintf(chdir_to, sizeof(chdir_to), "/workspace");
	if (req->cwd != NULL && req->cwd[0] != '\0' &&
	    strcmp(req->cwd, ".") != 0) {
		if ((rc = sandbox_path_check(req->cwd, 1, err)) != 0 ||
		    (rc = ws_parent(l, req->cwd, 0, err, &dfd, &leaf)) != 0)
			goto out;
		if (fstatat(dfd, leaf, &sst, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(sst.st_mode)) {
			rc = sandbox_fail(err, ENGINE_ENOTFOUND, "exec: cwd '%.120s' is "
			    "not a folder in the workspace", req->cwd);
			goto out;
		}
		snprintf(chdir_to, sizeof(chdir_to), "/workspace/%s", req->cwd);
	}
	rofd = ro_folder(l, req->readonly);
	for (k = 0; req->argv != NULL && req->argv[k] != NULL; k++)
		nargs++;
	for (k = 0; req->env != NULL && req->env[k] != NULL; k++)
		nenv++;
	av.cap = 160 + 3 * (sizeof(etc_files) / sizeof(*etc_files)) +
	    3 * l->nusr + nargs;
	ev.cap = 16 + NET_ENV_MAX + nenv;
	if ((av.v = calloc(av.cap, sizeof(*av.v))) == NULL ||
	    (ev.v = calloc(ev.cap, sizeof(*ev.v))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}

	/* bwrap's command line. */
	strv_add(&av, l->bwrap);
	if (!l->as_root) {
		snprintf(ids[0], sizeof(ids[0]), "%u", (unsigned)getuid());
		snprintf(ids[1], sizeof(ids[1]), "%u", (unsigned)getgid());
		strv_add(&av, "--unshare-user");
		if (l->no_userns)
			strv_add(&av, "--disable-userns");
		strv_add(&av, "--uid");
		strv_add(&av, ids[0]);
		strv_add(&av, "--gid");
		strv_add(&av, ids[1]);
	}
	strv_add(&av, "--unshare-pid");
	strv_add(&av, "--unshare-ipc");
	strv_add(&av, "--unshare-uts");
	strv_add(&av, "--unshare-cgroup-try");
	/* With network too: the proxy is the way out (net.c). */
	strv_add(&av, "--unshare-net");
	strv_add(&av, "--hostname");
	strv_add(&av, "sandbox");
	strv_add(&av, "--die-with-parent");
	strv_add(&av, "--new-session");
	strv_add(&av, "--json-status-fd");
	strv_add(&av, "6");
	strv_add(&av, "--seccomp");
	strv_add(&av, "7");
	/* Folders bwrap makes for bind targets would be 0700 root. */
	strv_add(&av, "--perms");
	strv_add(&av, "0755");
	strv_add(&av, "--dir");
	strv_add(&av, "/usr");
	for (k = 0; k < l->nusr; k++) {
		if (l->usr[k].target[0] != '\0') {
			strv_add(&av, "--symlink");
			strv_add(&av, l->usr[k].target);
		} else {
			strv_add(&av, "--ro-bind");
			strv_add(&av, l->usr[k].name);
		}
		strv_add(&av, l->usr[k].name);
	}
	strv_add(&av, "--perms");
	strv_add(&av, "0755");
	strv_add(&av, "--dir");
	strv_add(&av, "/etc");
	strv_add(&av, "--perms");
	strv_add(&av, "0755");
	strv_add(&av, "--dir");
	strv_add(&av, "/etc/ssl");
	for (k = 0; k < sizeof(usr_links) / sizeof(*usr_links); k++) {
		char top[32];

		snprintf(top, sizeof(top), "/%s", usr_links[k]);
		if (lstat(top, &sst) != 0)
			continue;
		if (S_ISLNK(sst.st_mode)) {
			ln = readlink(top, links[k], sizeof(links[k]) - 1);
			if (ln <= 0)
				continue;
			links[k][ln] = '\0';
			strv_add(&av, "--symlink");
			strv_add(&av, links[k]);
		} else if (S_ISDIR(sst.st_mode)) {
			strv_add(&av, "--ro-bind");
			snprintf(links[k], sizeof(links[k]), "%s", top);
			strv_add(&av, links[k]);
		} else
			continue;
		snprintf(links[k] + strlen(links[k]) + 1, sizeof(links[k]) -
		    strlen(links[k]) - 1, "%s", top);
		strv_add(&av, links[k] + strlen(links[k]) + 1);
	}
	for (k = 0; k < sizeof(etc_files) / sizeof(*etc_files); k++) {
		strv_add(&av, "--ro-bind-try");
		strv_add(&av, etc_files[k]);
		strv_add(&av, etc_files[k]);
	}
	strv_add(&av, "--ro-bind-fd");
	strv_add(&av, "8");
	strv_add(&av, "/etc/passwd");
	strv_add(&av, "--ro-bind-fd");
	strv_add(&av, "9");
	strv_add(&av, "/etc/group");
	strv_add(&av, "--ro-bind-fd");
	strv_add(&av, "10");
	strv_add(&av, "/etc/hosts");
	if (l->cfg.network) {
		strv_add(&av, "--perms");
		strv_add(&av, "0755");
		strv_add(&av, "--dir");
		strv_add(&av, "/run");
		strv_add(&av, "--ro-bind-fd");
		strv_add(&av, "12");	/* FD_NET */
		strv_add(&av, NET_DIR);
	}
	strv_add(&av, "--proc");
	strv_add(&av, "/proc");
	strv_add(&av, "--dev");
	strv_add(&av, "/dev");
	strv_add(&av, "--bind-fd");
	strv_add(&av, "3");
	strv_add(&av, "/workspace");
	strv_add(&av, "--bind-fd");
	strv_add(&av, "4");
	strv_add(&av, "/tmp");
	strv_add(&av, "--bind-fd");
	strv_add(&av, "5");
	strv_add(&av, "/dev/shm");
	if (rofd >= 0) {
		snprintf(rodest, sizeof(rodest), "/workspace/%s",
		    req->readonly);
		strv_add(&av, "--ro-bind-fd");
		strv_add(&av, "13");	/* FD_RO */
		strv_add(&av, rodest);
	}
	/* bwrap's root tmpfs has no size cap: nothing may be written there
	 * (the binds above stay writable). */
	strv_add(&av, "--remount-ro");
	strv_add(&av, "/");
	strv_add(&av, "--chdir");
	strv_add(&av, chdir_to);
	if (l->as_root) {
		snprintf(ids[0], sizeof(ids[0]), "--reuid=%d", l->cfg.uid);
		snprintf(ids[1], sizeof(ids[1]), "--regid=%d", l->cfg.uid);
		strv_add(&av, "--cap-add");
		strv_add(&av, "CAP_SETUID");
		strv_add(&av, "--cap-add");
		strv_add(&av, "CAP_SETGID");
		strv_add(&av, "--cap-add");
		strv_add(&av, "CAP_SETPCAP");
		strv_add(&av, "--");
		strv_add(&av, l->setpriv);
		strv_add(&av, ids[0]);
		strv_add(&av, ids[1]);
		strv_add(&av, "--clear-groups");
		strv_add(&av, "--no-new-privs");
		strv_add(&av, "--inh-caps=-all");
		strv_add(&av, "--bounding-set=-all");
	}
	strv_add(&av, "--");
	if (l->cfg.network) {
		snprintf(ids[2], sizeof(ids[2]), "%d", SANDBOX_PROXY_PORT);
		strv_add(&av, NET_FWD);
		strv_add(&av, ids[2]);
		strv_add(&av, NET_DIR "/proxy.sock");
		strv_add(&av, "--");
	}
	if (req->shell != NULL) {
		strv_add(&av, "/bin/sh");
		strv_add(&av, "-c");
		strv_add(&av, req->shell);
	} else
		for (k = 0; k < nargs; k++)
			strv_add(&av, req->argv[k]);

	/* The command's environment: the caller's, then the network's, then
	 * the defaults. */
	for (k = 0; k < nenv; k++)
		if (!env_has(&ev, req->env[k]))
			strv_add(&ev, req->env[k]);
	if (l->cfg.network) {
		const char	*ne[NET_ENV_MAX];
		int		 nn;

		if ((nn = sandbox_net_env(&l->cfg, net_env, sizeof(net_env),
		    ne, NET_ENV_MAX)) < 0) {
			rc = sandbox_fail(err, ENGINE_EINVAL, "exec: network "
			    "environment too long");
			goto out;
		}
		for (k = 0; k < (size_t)nn; k++)
			if (!env_has(&ev, ne[k]))
				strv_add(&ev, ne[k]);
	}
	{
		static const char *const defaults[] = {
			"PATH=/usr/bin:/bin",
			"HOME=/workspace", "TMPDIR=/tmp", "LANG=C.UTF-8",
			"PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8",
		};
		for (k = 0; k < sizeof(defaults) / sizeof(*defaults); k++)
			if (!env_has(&ev, defaults[k]))
				strv_add(&ev, defaults[k]);
	}
	if (av.full || ev.full) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "exec: too many arguments");
		goto out;
	}

	/* Limits. Without our own tmpfs, no file may outgrow what is left. */
	/* SIGXCPU at the soft limit says why; SIGKILL a second later. */
	lim[0].rlim_cur = (rlim_t)l->cfg.cpu_seconds;
	lim[0].rlim_max = (rlim_t)l->cfg.cpu_seconds + 1;
	rcs[0] = RLIMIT_CPU;
	lim[1].rlim_cur = lim[1].rlim_max = (rlim_t)l->cfg.memory;
	rcs[1] = RLIMIT_DATA;
	lim[2].rlim_cur = lim[2].rlim_max = (rlim_t)l->cfg.processes;
	rcs[2] = RLIMIT_NPROC;
	lim[3].rlim_cur = lim[3].rlim_max = (rlim_t)l->cfg.file_size;
	rcs[3] = RLIMIT_FSIZE;
	lim[4].rlim_cur = lim[4].rlim_max = (rlim_t)l->cfg.open_files;
	rcs[4] = RLIMIT_NOFILE;
	lim[5].rlim_cur = lim[5].rlim_max = 0;
	rcs[5] = RLIMIT_CORE;
	if (!l->mounted) {
		used = local_usage(l);
		left = l->cfg.workspace_size - used;
		if (left < 0)
			left = 0;
		if (left < l->cfg.file_size)
			lim[3].rlim_cur = lim[3].rlim_max = (rlim_t)left;
	}

	if (pipe2(pin, O_CLOEXEC) != 0 || pipe2(pout, O_CLOEXEC) != 0 ||
	    pipe2(perr, O_CLOEXEC) != 0 || pipe2(pst, O_CLOEXEC) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "exec: pipe: %s", strerror(errno));
		goto out;
	}
	/* The filter, for bwrap to read from its start. */
	if ((rc = data_fd("flowcgi-seccomp", l->bpf, l->bpf_len, err,
	    &sfd)) != 0)
		goto out;
	src[0] = pin[0];
	src[1] = pout[1];
	src[2] = perr[1];
	src[FD_WS] = l->ws_fd;
	src[FD_TMP] = l->tmp_fd;
	src[FD_SHM] = l->shm_fd;
	src[FD_STAT] = pst[1];
	src[FD_SECCOMP] = sfd;
	src[FD_PASSWD] = l->etc_fd[0];
	src[FD_GROUP] = l->etc_fd[1];
	src[FD_HOSTS] = l->etc_fd[2];
	src[FD_CTL] = ctl;
	src[FD_NET] = l->net_fd;
	src[FD_RO] = rofd;
	if ((pid = fork()) < 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "exec: fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child_exec(l->bwrap, (char *const *)av.v, (char *const *)ev.v,
		    src, lim, rcs, 6);
	p->pid = pid;
#ifdef SYS_pidfd_open
	/* Readable when bwrap ends; without it, look every few ms. */
	p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	/* p owns our ends from here on. */
	p->in = pin[1];
	p->out = pout[0];
	p->err = perr[0];
	p->st = pst[0];
	pin[1] = pout[0] = perr[0] = pst[0] = -1;
	(void)fcntl(p->in, F_SETFL, O_NONBLOCK);
	(void)fcntl(p->out, F_SETFL, O_NONBLOCK);
	(void)fcntl(p->err, F_SETFL, O_NONBLOCK);
	(void)fcntl(p->st, F_SETFL, O_NONBLOCK);
out:
	sandbox_close_fd(&pin[0]);
	sandbox_close_fd(&pin[1]);
	sandbox_close_fd(&pout[0]);
	sandbox_close_fd(&pout[1]);
	sandbox_close_fd(&perr[0]);
	sandbox_close_fd(&perr[1]);
	sandbox_close_fd(&pst[0]);
	sandbox_close_fd(&pst[1]);
	sandbox_close_fd(&dfd);
	sandbox_close_fd(&sfd);
	sandbox_close_fd(&rofd);
	free(av.v);
	free(ev.v);
	return rc;
}

/*
 * What came on a command's control pipe (see sandbox_local_wait): 1 when
 * it said 'D', 0 when nothing of note, -1 at its end.
 */
static int
done_read(int fd)
{
	char	buf[64];
	ssize_t	n;

	while ((n = read(fd, buf, sizeof(buf))) < 0 && errno == EINTR)
		;
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0)
		return -1;
	return memchr(buf, 'D', (size_t)n) != NULL;
}

/*
 * Feeds stdin_data to p's command, then EOF; drains its output until all
 * is closed and bwrap has ended; kills everything at t0 + timeout_ms (0:
 * the sandbox's timeout) or as soon as cancel (NULL: none) says so, and
 * fills res (elapsed from t0). With dn, also
 * watches the command's control pipe: at its first 'D', when dn says the
 * output so far is complete, fills res from it as from a command that
 * exited 0 and returns with *early set and p's command still running
 * (p's descriptors kept, its pid 1 noted for proc_end). Otherwise p's
 * command is over and its descriptors closed afterwards, whatever is
 * returned.
 */
static int
local_wait(struct sandbox_proc *p, const void *stdin_data, size_t stdin_len,
    int64_t t0, int timeout_ms, int64_t max_output,
    const struct sandbox_done *dn, const struct sandbox_cancel *cancel,
    int *early, char *err, struct sandbox_exec_result *res)
{
	struct local	*l = p->l;
	struct stream	 so = {-1, {NULL, 0, 0, 0, 0, 0}};
	struct stream	 se = {-1, {NULL, 0, 0, 0, 0, 0}};
	struct stream	 st = {-1, {NULL, 0, 0, 4096, 0, 0}};
	struct sandbox_exec_result so_far;
	struct pollfd	 pfd[6];
	sigset_t	 oldset;
	char		*nl;
	int		 rc = 0, status = 0, exited = 0, killed = 0;
	int		 started, nfd, i, ms, said = 0, looked = 0;
	int		 dfd = dn != NULL ? dn->fd : -1;
	size_t		 in_off = 0;
	const char	*s;
	int64_t		 deadline, grace = 0, used;

	*early = 0;
	sandbox_sigpipe_block(&oldset);
	/* The streams own the read ends from here on. */
	so.fd = p->out;
	se.fd = p->err;
	st.fd = p->st;
	p->out = p->err = p->st = -1;
	so.b.max = se.b.max = max_output > 0 ? max_output : l->cfg.max_output;
	if (stdin_len == 0)
		sandbox_close_fd(&p->in);
	deadline = sandbox_proc_deadline(p, t0, timeout_ms);

	/* Drain the three pipes and feed stdin until all is closed and bwrap
	 * has ended; kill everything at the deadline. */
	while (so.fd >= 0 || se.fd >= 0 || st.fd >= 0 || !exited) {
		nfd = 0;
		if (p->in >= 0) {
			pfd[nfd].fd = p->in;
			pfd[nfd++].events = POLLOUT;
		}
		if (so.fd >= 0) {
			pfd[nfd].fd = so.fd;
			pfd[nfd++].events = POLLIN;
		}
		if (se.fd >= 0) {
			pfd[nfd].fd = se.fd;
			pfd[nfd++].events = POLLIN;
		}
		if (st.fd >= 0) {
			pfd[nfd].fd = st.fd;
			pfd[nfd++].events = POLLIN;
		}
		if (dfd >= 0) {
			pfd[nfd].fd = dfd;
			pfd[nfd++].events = POLLIN;
		}
		if (p->pidfd >= 0 && !exited) {
			pfd[nfd].fd = p->pidfd;
			pfd[nfd++].events = POLLIN;
		}
		ms = (int)(((killed ? grace : deadline) - sandbox_now_us()) / 1000) + 1;
		if (ms < 0)
			ms = 0;
		if (!exited && p->pidfd < 0 && ms > 5)
			ms = 5;		/* look at the child now and then */
		if (cancel != NULL && !killed && ms > SANDBOX_CANCEL_MS)
			ms = SANDBOX_CANCEL_MS;	/* and at a stop */
		if (nfd > 0)
			(void)poll(pfd, (nfds_t)nfd, ms);
		else if (ms > 0)
			(void)poll(NULL, 0, ms);
		for (i = 0; i < nfd; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (pfd[i].fd == p->in) {
				if (stdin_write(p->in, stdin_data, stdin_len,
				    &in_off))
					sandbox_close_fd(&p->in);
			} else if (pfd[i].fd == so.fd) {
				if (stream_read(&so) == 1)
					sandbox_close_fd(&so.fd);
			} else if (pfd[i].fd == se.fd) {
				if (stream_read(&se) == 1)
					sandbox_close_fd(&se.fd);
			} else if (pfd[i].fd == st.fd) {
				if (stream_read(&st) == 1)
					sandbox_close_fd(&st.fd);
			} else if (pfd[i].fd == dfd) {
				/* read to the end, so that the command never
				 * waits on it; only the first 'D' counts */
				if ((said = done_read(dfd)) < 0)
					dfd = -1;
			}
		}
		if (said > 0 && !looked && !killed) {
			/* Everything the command wrote before its 'D' is in
			 * the pipes: read it all, then ask. Asked once, so
			 * that bytes written there by the code cost a look
			 * at most and an early one only waits for the exit. */
			looked = 1;
			stream_drain(&so);
			stream_drain(&se);
			stream_drain(&st);
			memset(&so_far, 0, sizeof(so_far));
			so_far.out = so.b.p != NULL ? so.b.p : "";
			so_far.out_len = so.b.len;
			so_far.out_truncated = so.b.truncated;
			so_far.err = se.b.p != NULL ? se.b.p : "";
			so_far.err_len = se.b.len;
			so_far.err_truncated = se.b.truncated;
			if (dn->complete(dn->arg, &so_far)) {
				*early = 1;
				break;
			}
		}
		if (!exited && (waitpid(p->pid, &status, WNOHANG) == p->pid ||
		    errno == ECHILD))
			exited = 1;	/* ECHILD: reaped elsewhere; bwrap's
					 * status line still has the code */
		if (!killed && cancel != NULL && cancel->fn(cancel->arg))
			res->cancelled = 1;
		if (!killed && (res->cancelled ||
		    sandbox_now_us() >= deadline)) {
			/* bwrap's pid 1 dies with it (--die-with-parent), and
			 * with pid 1 the whole pid namespace. */
			res->timed_out = !res->cancelled;
			killed = 1;
			(void)kill(-p->pid, SIGKILL);
			(void)kill(p->pid, SIGKILL);
			grace = sandbox_now_us() + 5000000;
		} else if (killed && sandbox_now_us() >= grace) {
			/* Something outside the namespace holds a pipe; stop
			 * waiting for it. */
			sandbox_close_fd(&so.fd);
			sandbox_close_fd(&se.fd);
			sandbox_close_fd(&st.fd);
			if (!exited && waitpid(p->pid, &status, 0) == p->pid)
				exited = 1;
		}
		if (exited && p->in >= 0)
			sandbox_close_fd(&p->in);
	}

	if (*early) {
		/* The command is done, maybe still there: p keeps what is
		 * left of it for proc_end, which kills its pid 1 (unless
		 * bwrap was reaped already). */
		if (exited)
			p->pid = -1;
		p->init = (pid_t)status_number(st.b.p, "\"child-pid\"");
		p->out = so.fd;
		p->err = se.fd;
		p->st = st.fd;
		so.fd = se.fd = st.fd = -1;
	} else {
		p->pid = -1;
		/* What happened, from bwrap's status lines and its exit. */
		started = st.b.p != NULL &&
		    strstr(st.b.p, "\"child-pid\"") != NULL;
		if (st.b.p != NULL &&
		    (s = strstr(st.b.p, "\"exit-code\"")) != NULL &&
		    (s = strchr(s, ':')) != NULL)
			res->exit_code = (int)strtol(s + 1, NULL, 10);
		else if (WIFEXITED(status))
			res->exit_code = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			res->exit_code = 128 + WTERMSIG(status);
		if (res->timed_out || res->cancelled)
			res->exit_code = 128 + SIGKILL;
		if (res->exit_code > 128 && res->exit_code < 128 + NSIG)
			res->signal = res->exit_code - 128;
		if (!started && !res->timed_out && !res->cancelled) {
			/* bwrap gave up before the command could start. */
			if (se.b.p != NULL &&
			    (nl = strchr(se.b.p, '\n')) != NULL)
				*nl = '\0';
			rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox "
			    "could not start: %.180s", se.b.p && se.b.p[0] ?
			    se.b.p : "bwrap failed without a message");
			goto out;
		}
	}
	res->out_truncated = so.b.truncated;
	res->err_truncated = se.b.truncated;
	res->out = sandbox_buf_take(&so.b, &res->out_len);
	res->err = sandbox_buf_take(&se.b, &res->err_len);
	if (res->out == NULL || res->err == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	used = local_usage(l);
	res->workspace_full = used >= l->cfg.workspace_size ||
	    (l->mounted && l->cfg.workspace_size - used < 4096);
	res->elapsed_us = sandbox_now_us() - t0;
out:
	if (rc != 0)
		*early = 0;
	if (!*early)
		proc_end(p);
	sandbox_sigpipe_restore(&oldset);
	sandbox_close_fd(&so.fd);
	sandbox_close_fd(&se.fd);
	sandbox_close_fd(&st.fd);
	free(so.b.p);
	free(se.b.p);
	free(st.b.p);
	if (rc != 0)
		sandbox_exec_result_release(res);
	return rc;
}

static int
local_exec(struct sandbox *sb, const struct sandbox_exec_req *req, char *err,
    struct sandbox_exec_result *res)
{
	struct sandbox_proc	p = PROC_INIT;
	int64_t			t0 = sandbox_now_us();
	int			rc, early;

	if ((rc = local_spawn((struct local *)sb, req, -1, err, &p)) != 0)
		return rc;
	return local_wait(&p, req->stdin_data, req->stdin_len, t0,
	    req->timeout_ms, req->max_output, NULL, req->cancel, &early, err,
	    res);
}

/* ====== Commands for the code pool ====== */

int
sandbox_local_spawn(struct sandbox *sb, const struct sandbox_exec_req *req,
    int ctl, char *err, struct sandbox_proc **out)
{
	struct sandbox_proc	*p = NULL;
	const char		*kv;
	size_t			 k;
	int			 rc = 0;

	*out = NULL;
	err[0] = '\0';
	if (sb->provider != &sandbox_provider_local) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "spawn: not a local "
		    "sandbox");
		goto out;
	}
	if ((req->argv == NULL) == (req->shell == NULL) ||
	    (req->argv != NULL && req->argv[0] == NULL) ||
	    req->stdin_len > 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "spawn: give argv or a "
		    "shell command, and no stdin_data");
		goto out;
	}
	for (k = 0; req->env != NULL && (kv = req->env[k]) != NULL; k++)
		if (kv[0] == '=' || strchr(kv, '=') == NULL) {
			rc = sandbox_fail(err, ENGINE_EINVAL, "spawn: "
			    "environment entry '%.60s' is not NAME=value", kv);
			goto out;
		}
	if ((p = malloc(sizeof(*p))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	*p = (struct sandbox_proc)PROC_INIT;
	if ((rc = local_spawn((struct local *)sb, req, ctl, err, p)) != 0)
		goto out;
	*out = p;
	p = NULL;
out:
	free(p);
	return rc;
}

int64_t
sandbox_proc_deadline(const struct sandbox_proc *p, int64_t t0,
    int timeout_ms)
{
	return t0 + (timeout_ms > 0 ? (int64_t)timeout_ms * 1000
				    : (int64_t)p->l->cfg.timeout * 1000000);
}

int
sandbox_proc_send(struct sandbox_proc *p, const void *data, size_t len)
{
	struct pollfd	 pfd;
	sigset_t	 oldset;
	size_t		 off = 0;
	int		 rc = 0;

	if (p->in < 0)
		return -1;
	sandbox_sigpipe_block(&oldset);
	while (off < len) {
		if (stdin_write(p->in, data, len, &off))
			break;
		pfd.fd = p->in;
		pfd.events = POLLOUT;
		(void)poll(&pfd, 1, 100);
	}
	if (off < len)
		rc = -1;
	sandbox_sigpipe_restore(&oldset);
	return rc;
}

int
sandbox_local_wait(struct sandbox_proc **pp, int64_t t0, int timeout_ms,
    const struct sandbox_done *dn, const struct sandbox_cancel *cancel,
    char *err, struct sandbox_exec_result *res)
{
	int rc, early;

	memset(res, 0, sizeof(*res));
	err[0] = '\0';
	rc = local_wait(*pp, NULL, 0, t0, timeout_ms, 0, dn, cancel, &early,
	    err, res);
	if (!early) {
		free(*pp);
		*pp = NULL;
	}
	return rc;
}

void
sandbox_proc_kill(struct sandbox_proc *p)
{
	if (p == NULL)
		return;
	proc_end(p);
	free(p);
}

/* ====== Files ====== */

static int
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
	if ((rc = ws_parent(l, path, 1, err, &dfd, &leaf)) != 0)
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

static int
local_download(struct sandbox *sb, const char *path, int64_t max, char *err,
    char **data, size_t *len)
{
	struct local	*l = (struct local *)sb;
	const char	*leaf;
	struct stat	 st;
	char		*buf = NULL;
	int		 rc, dfd = -1, fd = -1;
	size_t		 off = 0, cap;
	ssize_t		 n;

	if (l->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	if ((rc = sandbox_path_check(path, 0, err)) != 0 ||
	    (rc = ws_parent(l, path, 0, err, &dfd, &leaf)) != 0)
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
	/* The file may grow meanwhile: read at most max + 1 bytes. */
	cap = (size_t)st.st_size + 1;
	if ((buf = malloc(cap + 1)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		if (off == cap) {
			char *nb;

			if ((int64_t)off > max) {
				rc = sandbox_fail(err, ENGINE_ELIMIT, "download "
				    "'%.120s': above the limit of %" PRId64,
				    path, max);
				goto out;
			}
			cap = cap * 2 > (size_t)max + 1 ? (size_t)max + 1
							 : cap * 2;
			if (cap <= off)
				cap = off + 1;
			if ((nb = realloc(buf, cap + 1)) == NULL) {
				rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
				goto out;
			}
			buf = nb;
		}
		n = read(fd, buf + off, cap - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "download '%.120s': %s",
			    path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	if ((int64_t)off > max) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "download '%.120s': above the "
		    "limit of %" PRId64, path, max);
		goto out;
	}
	buf[off] = '\0';
	*data = buf;
	*len = off;
	buf = NULL;
out:
	free(buf);
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

static int
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
	    (rc = ws_parent(l, dir, 0, err, &dfd, &leaf)) != 0)
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

const struct sandbox_provider sandbox_provider_local = {
	.name = "local",
	.create = local_create,
	.exec = local_exec,
	.upload = local_upload,
	.download = local_download,
	.list = local_list,
	.destroy = local_destroy,
	.free = local_free,
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
