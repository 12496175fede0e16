/*
 * t_sandbox_conformance_local.c — the provider conformance suite
 * (sandbox_conformance.h) on the local (bubblewrap) provider.
 *
 * Needs bwrap (Debian package bubblewrap): without it one counted skip
 * (NEED). Processes are counted on the
 * host: each exec has its own pid namespace, so a scan from inside a later
 * command would see nothing either way.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/host_procs.h"
#include "tests/unit/sandbox_conformance.h"

static char	top[256];		/* this test's temporary folder */
static char	ws_dir[300];		/* sandbox.dir */

/* Host processes whose command line contains needle. */
static int
host_procs_with(const char *needle)
{
	return host_procs(needle, NULL, NULL);
}

static int
workspace_exists(const struct sandbox *sb)
{
	char		path[700];
	struct stat	st;

	snprintf(path, sizeof(path), "%s/%s", ws_dir, sb->id);
	return lstat(path, &st) == 0;
}

int
main(void)
{
	struct sandbox_config	cfg;
	struct conf		c;
	char			cmd[400];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!NEED("bwrap"))
		return tap_done();
	snprintf(top, sizeof(top), "/tmp/t_sandbox_conf_local.XXXXXX");
	if (mkdtemp(top) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(ws_dir, sizeof(ws_dir), "%s/sandboxes", top);
	conf_defaults(&c);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", top);
	snprintf(c.sandbox_dir, sizeof(c.sandbox_dir), "%s", ws_dir);
	sandbox_config_init(&cfg, &c);
	cfg.timeout = 20;
	if (cfg.max_output < (1 << 20))
		cfg.max_output = 1 << 20;
	conformance_opts.count_procs = host_procs_with;
	conformance_opts.workspace_exists = workspace_exists;
	conformance_run(&sandbox_provider_local, &cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", top);
	return tap_done();
}
