/*
 * t_conf_load.c — conf: built-in defaults, conf/flowcgi.yml in step with the
 * settings table, file errors naming file:line:key, environment overrides,
 * size and duration suffixes.
 *
 * Run from the repository root (tests/run-all.sh does), or set
 * FLOWCGI_SRC to it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "conf/conf.h"
#include "tests/unit/tap.h"

static char tmpdir[256];

/* Writes text to a file in tmpdir and returns its path (static buffer). */
static const char *
write_file(const char *name, const char *text)
{
	static char	 path[512];
	FILE		*f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (f == NULL)
		return path;
	fputs(text, f);
	fclose(f);
	return path;
}

/* Index of setting name in the table, or -1. */
static int
setting_index(const char *name)
{
	size_t i;

	for (i = 0; i < conf_setting_count(); i++)
		if (strcmp(conf_setting_name(i), name) == 0)
			return (int)i;
	return -1;
}

static const char *
fmt(const struct conf *c, const char *name)
{
	static char	buf[8][1100];
	static int	n;
	int		i = setting_index(name);

	n = (n + 1) % 8;
	if (i < 0)
		return "(no such setting)";
	return conf_setting_format(c, (size_t)i, buf[n], sizeof(buf[n]));
}

/* ====== Defaults ====== */

static void
test_defaults(void)
{
	struct conf c;

	memset(&c, 0x5a, sizeof(c));
	conf_defaults(&c);
	CHECK_STR(c.listen, "127.0.0.1:9000");
	CHECK_INT(c.workers, 4);
	CHECK_STR(c.data_dir, "var");
	CHECK_STR(c.url_prefix, "");
	CHECK_INT(c.shutdown_grace, 30);
	CHECK_INT(c.max_body, 64LL << 20);
	CHECK_INT(c.max_json_body, 16LL << 20);
	CHECK_INT(c.max_json_depth, 64);
	CHECK_INT(c.request_timeout, 1200);
	CHECK_INT(c.map_size, 64LL << 20);
	CHECK_INT(c.max_map_size, 16LL << 30);
	CHECK_INT(c.sync, 1);
	CHECK_INT(c.log_level, CONF_LOG_INFO);
	CHECK_STR(c.log_file, "");
	CHECK(conf_setting_count() >= 14);
	CHECK(conf_setting_name(conf_setting_count()) == NULL);
	CHECK_STR(fmt(&c, "server.workers"), "4");
	CHECK_STR(fmt(&c, "server.socket_mode"), "0660");
	CHECK_INT(c.socket_mode, 0660);
	CHECK_INT(c.max_connections, 1024);
	CHECK_INT(c.read_timeout, 30);
	CHECK_STR(fmt(&c, "server.listen"), "\"127.0.0.1:9000\"");
	CHECK_STR(fmt(&c, "storage.sync"), "true");
	CHECK_STR(fmt(&c, "log.level"), "info");
	CHECK_STR(fmt(&c, "limits.max_body"), "67108864");
}

/* ====== conf/flowcgi.yml against the table ====== */

/*
 * Collects the dotted keys of a two-level YAML mapping into names (each
 * malloc'd). Returns the count, or -1 when the file is not such a mapping.
 */
static int
yaml_keys(const char *path, char **names, int max)
{
	FILE		*f = fopen(path, "rb");
	yaml_parser_t	 p;
	yaml_document_t	 d;
	yaml_node_t	*root, *k, *sec, *k2;
	yaml_node_pair_t *sp, *kp;
	int		 n = -1;
	char		 buf[256];

	if (f == NULL)
		return -1;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, f);
	if (!yaml_parser_load(&p, &d))
		goto out_parser;
	root = yaml_document_get_root_node(&d);
	if (root == NULL || root->type != YAML_MAPPING_NODE)
		goto out_doc;
	n = 0;
	for (sp = root->data.mapping.pairs.start;
	     sp < root->data.mapping.pairs.top; sp++) {
		k = yaml_document_get_node(&d, sp->key);
		sec = yaml_document_get_node(&d, sp->value);
		if (sec->type != YAML_MAPPING_NODE)
			continue;
		for (kp = sec->data.mapping.pairs.start;
		     kp < sec->data.mapping.pairs.top && n < max; kp++) {
			k2 = yaml_document_get_node(&d, kp->key);
			snprintf(buf, sizeof(buf), "%s.%s",
			    (char *)k->data.scalar.value,
			    (char *)k2->data.scalar.value);
			names[n++] = strdup(buf);
		}
	}
out_doc:
	yaml_document_delete(&d);
out_parser:
	yaml_parser_delete(&p);
	fclose(f);
	return n;
}

static void
test_shipped_file(void)
{
	struct conf	 def, fromfile;
	char		 err[CONF_ERRMAX] = "", path[1100], a[1100], b[1100];
	char		*names[256];
	const char	*src = getenv("FLOWCGI_SRC");
	int		 n, i, j, found, missing = 0, differ = 0;

	snprintf(path, sizeof(path), "%s/conf/flowcgi.yml", src ? src : ".");
	conf_defaults(&def);
	/* Start from values unlike any default, so a setting the file does
	 * not mention would show up as different. */
	memset(&fromfile, 0x33, sizeof(fromfile));
	conf_defaults(&fromfile);
	CHECK_INT(conf_load_file(&fromfile, path, err), 0);
	if (err[0])
		printf("# %s\n", err);
	for (i = 0; i < (int)conf_setting_count(); i++) {
		conf_setting_format(&def, (size_t)i, a, sizeof(a));
		conf_setting_format(&fromfile, (size_t)i, b, sizeof(b));
		if (strcmp(a, b) != 0) {
			differ++;
			printf("# %s: built-in %s, file %s\n",
			    conf_setting_name((size_t)i), a, b);
		}
	}
	CHECK_INT(differ, 0);

	/* Every setting of the table is written in the file. */
	n = yaml_keys(path, names, 256);
	CHECK_INT(n, (int)conf_setting_count());
	for (i = 0; i < (int)conf_setting_count(); i++) {
		found = 0;
		for (j = 0; j < n; j++)
			if (strcmp(names[j], conf_setting_name((size_t)i)) == 0)
				found = 1;
		if (!found) {
			missing++;
			printf("# %s missing from conf/flowcgi.yml\n",
			    conf_setting_name((size_t)i));
		}
	}
	CHECK_INT(missing, 0);
	/* ... and the file sets nothing the table does not know. */
	for (j = 0; j < n; j++) {
		if (setting_index(names[j]) < 0) {
			printf("# %s in the file but not in the table\n",
			    names[j]);
			missing++;
		}
		free(names[j]);
	}
	CHECK_INT(missing, 0);

	/* Loading the file over non-default values resets each one: the
	 * file really spells every default out. */
	{
		struct conf c;

		conf_defaults(&c);
		c.workers = 3;
		c.max_json_depth = 5;
		c.sync = 0;
		c.log_level = CONF_LOG_DEBUG;
		snprintf(c.listen, sizeof(c.listen), "unix:/x");
		c.max_map_size = 1 << 20;
		CHECK_INT(conf_load_file(&c, path, err), 0);
		CHECK_INT(c.workers, 4);
		CHECK_INT(c.max_json_depth, 64);
		CHECK_INT(c.sync, 1);
		CHECK_INT(c.log_level, CONF_LOG_INFO);
		CHECK_STR(c.listen, "127.0.0.1:9000");
		CHECK_INT(c.max_map_size, 16LL << 30);
	}
}

/* ====== File errors ====== */

/* Loads text as name; expects failure with all of want[] in the message. */
static void
expect_error(const char *name, const char *text, const char *want1,
    const char *want2, const char *want3)
{
	struct conf	 c;
	char		 err[CONF_ERRMAX] = "";
	const char	*path;
	int		 rc, ok;

	conf_defaults(&c);
	path = write_file(name, text);
	rc = conf_load_file(&c, path, err);
	ok = rc == -1 && strstr(err, path) != NULL && strstr(err, want1) &&
	    (want2 == NULL || strstr(err, want2)) &&
	    (want3 == NULL || strstr(err, want3));
	if (!tap_check(ok, __FILE__, __LINE__, name))
		printf("#   rc %d, message: '%s'\n#   want: %s / %s / %s\n",
		    rc, err, want1, want2 ? want2 : "", want3 ? want3 : "");
}

static void
test_file_errors(void)
{
	struct conf	c;
	char		err[CONF_ERRMAX] = "";

	/* unknown key, at its line */
	expect_error("unknown.yml", "server:\n  workers: 4\n  wrokers: 5\n",
	    "unknown.yml:3:", "'server.wrokers'", "unknown setting");
	expect_error("unknown-section.yml", "# c\n\nbogus:\n  x: 1\n",
	    "unknown-section.yml:4:", "'bogus.x'", "unknown");
	/* a setting under the wrong section */
	expect_error("wrong-section.yml", "limits:\n  workers: 4\n",
	    "wrong-section.yml:2:", "'limits.workers'", "unknown");
	/* wrong types */
	expect_error("type-int.yml", "server:\n\n  workers: many\n",
	    "type-int.yml:3:", "'server.workers'", "integer");
	expect_error("type-float.yml", "limits:\n  max_json_depth: 6.5\n",
	    "type-float.yml:2:", "'limits.max_json_depth'", "integer");
	expect_error("type-bool.yml", "storage:\n  map_size: 2m\n  sync: maybe\n",
	    "type-bool.yml:3:", "'storage.sync'", "true or false");
	expect_error("type-level.yml", "log:\n  level: loud\n",
	    "type-level.yml:2:", "'log.level'", "error, warn, info or debug");
	expect_error("type-size.yml", "limits:\n  max_body: 12x\n",
	    "type-size.yml:2:", "'limits.max_body'", "size");
	expect_error("type-size2.yml", "limits:\n  max_body: 1.5m\n",
	    "type-size2.yml:2:", "'limits.max_body'", "size");
	expect_error("type-size3.yml", "limits:\n  max_body: m\n",
	    "type-size3.yml:2:", "'limits.max_body'", "size");
	expect_error("type-seq.yml", "server:\n  listen:\n    - a\n    - b\n",
	    "type-seq.yml:", "'server.listen'", "single value");
	expect_error("type-section.yml", "server: 5\n",
	    "type-section.yml:1:", "'server'", "mapping");
	expect_error("type-null.yml", "server:\n  workers: ~\n",
	    "type-null.yml:2:", "'server.workers'", "integer");
	/* impossible values */
	expect_error("mode.yml", "server:\n  socket_mode: \"0999\"\n",
	    "mode.yml:2:", "'server.socket_mode'", "octal");
	expect_error("mode-hi.yml", "server:\n  socket_mode: \"01777\"\n",
	    "mode-hi.yml:2:", "'server.socket_mode'", "octal");
	expect_error("range-lo.yml", "server:\n  workers: 0\n",
	    "range-lo.yml:2:", "'server.workers'", "at least 1");
	expect_error("range-hi.yml", "server:\n  workers: 1025\n",
	    "range-hi.yml:2:", "'server.workers'", "at most 1024");
	expect_error("range-neg.yml", "server:\n  shutdown_grace: -1\n",
	    "range-neg.yml:2:", "'server.shutdown_grace'", "at least 0");
	expect_error("range-size.yml", "storage:\n  map_size: 512k\n",
	    "range-size.yml:2:", "'storage.map_size'", "at least");
	expect_error("range-size-neg.yml", "storage:\n  map_size: -1g\n",
	    "range-size-neg.yml:2:", "'storage.map_size'", NULL);
	expect_error("range-huge.yml",
	    "storage:\n  max_map_size: 99999999999999999999\n",
	    "range-huge.yml:2:", "'storage.max_map_size'", NULL);
	expect_error("range-overflow.yml",
	    "storage:\n  max_map_size: 9000000000000g\n",
	    "range-overflow.yml:2:", "'storage.max_map_size'", NULL);
	expect_error("range-depth.yml", "limits:\n  max_json_depth: 1\n",
	    "range-depth.yml:2:", "'limits.max_json_depth'", "at least 2");
	{
		char	text[2048];
		size_t	i;

		snprintf(text, sizeof(text), "server:\n  listen: \"");
		for (i = strlen(text); i < 300 + 20; i++)
			text[i] = 'a';
		snprintf(text + i, sizeof(text) - i, "\"\n");
		expect_error("range-strlen.yml", text, "range-strlen.yml:2:",
		    "'server.listen'", "longer than 255");
	}
	/* broken YAML names file and line */
	expect_error("syntax.yml", "server:\n  workers: [1,\n", "syntax.yml:",
	    NULL, NULL);
	/* a missing file names the file */
	conf_defaults(&c);
	CHECK_INT(conf_load_file(&c, "/nonexistent/flowcgi.yml", err), -1);
	CHECK(strstr(err, "/nonexistent/flowcgi.yml") != NULL);

	/* good files: only what they set changes; empty file and empty
	 * section are fine */
	conf_defaults(&c);
	CHECK_INT(conf_load_file(&c, write_file("empty.yml", ""), err), 0);
	CHECK_INT(c.workers, 4);
	CHECK_INT(conf_load_file(&c, write_file("emptysec.yml",
	    "server:\nlimits:\n  max_json_depth: 10\n"), err), 0);
	CHECK_INT(c.max_json_depth, 10);
	CHECK_INT(c.workers, 4);
	CHECK_INT(conf_load_file(&c, write_file("good.yml",
	    "server:\n  workers: 6\n  listen: \"unix:/tmp/f.sock\"\n"
	    "  url_prefix: /flow\n  socket_mode: \"0640\"\nstorage:\n"
	    "  sync: no\n  map_size: 2M\nlog:\n  level: debug\n"), err), 0);
	CHECK_INT(c.workers, 6);
	CHECK_INT(c.socket_mode, 0640);
	CHECK_STR(c.listen, "unix:/tmp/f.sock");
	CHECK_STR(c.url_prefix, "/flow");
	CHECK_INT(c.sync, 0);
	CHECK_INT(c.map_size, 2LL << 20);
	CHECK_INT(c.log_level, CONF_LOG_DEBUG);
	CHECK_INT(c.max_json_depth, 10);
}

/* ====== Sizes ====== */

static void
test_sizes(void)
{
	static const struct {
		const char	*text;
		long long	 want;
	} cases[] = {
		{ "2048", 2048 },
		{ "4k", 4096 },
		{ "4K", 4096 },
		{ "3m", 3LL << 20 },
		{ "3M", 3LL << 20 },
		{ "2g", 2LL << 30 },
		{ "1G", 1LL << 30 },
		{ "1024", 1024 },
	};
	struct conf	c;
	char		err[CONF_ERRMAX], text[128];
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		conf_defaults(&c);
		snprintf(text, sizeof(text), "limits:\n  max_body: %s\n",
		    cases[i].text);
		err[0] = '\0';
		CHECK_INT(conf_load_file(&c, write_file("size.yml", text), err),
		    0);
		CHECK_INT(c.max_body, cases[i].want);
	}
	/* the same through the environment */
	conf_defaults(&c);
	setenv("FLOWCGI_STORAGE_MAX_MAP_SIZE", "3g", 1);
	CHECK_INT(conf_load_env(&c, err), 0);
	CHECK_INT(c.max_map_size, 3LL << 30);
	unsetenv("FLOWCGI_STORAGE_MAX_MAP_SIZE");
	/* 1023 bytes is under the 1 KiB floor of limits.max_body */
	conf_defaults(&c);
	CHECK_INT(conf_load_file(&c, write_file("size-lo.yml",
	    "limits:\n  max_body: 1023\n"), err), -1);
	CHECK(strstr(err, "at least 1024") != NULL);
	/* 5g is over max_body's 4 GiB ceiling */
	CHECK_INT(conf_load_file(&c, write_file("size-hi.yml",
	    "limits:\n  max_body: 5g\n"), err), -1);
	CHECK(strstr(err, "at most") != NULL);
	/* suffixes are for sizes only */
	CHECK_INT(conf_load_file(&c, write_file("size-int.yml",
	    "server:\n  workers: 1k\n"), err), -1);
	CHECK(strstr(err, "'server.workers'") != NULL);
}

/* ====== Durations ====== */

static void
test_durations(void)
{
	static const struct {
		const char	*text;
		long long	 want;
	} cases[] = {
		{ "0", 0 },
		{ "90", 90 },
		{ "90s", 90 },
		{ "10m", 600 },
		{ "12h", 12 * 3600 },
		{ "30d", 30 * 86400 },
		{ "2D", 2 * 86400 },
	};
	static const char *const bad[] = { "1.5h", "3x", "d", "-1d", "30dd",
	    "1k", "99999999999999999d" };
	struct conf	c;
	char		err[CONF_ERRMAX], text[128];
	size_t		i;

	conf_defaults(&c);
	CHECK_INT(c.run_history_max_age, 30 * 86400);
	CHECK_INT(c.run_history_max_count, 10000);
	CHECK_INT(c.run_prune_interval, 600);
	CHECK_INT(c.run_prune_batch, 200);
	CHECK_STR(fmt(&c, "run.history_max_age"), "2592000");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		conf_defaults(&c);
		snprintf(text, sizeof(text), "run:\n  history_max_age: %s\n",
		    cases[i].text);
		err[0] = '\0';
		CHECK_INT(conf_load_file(&c, write_file("dur.yml", text), err),
		    0);
		CHECK_INT(c.run_history_max_age, cases[i].want);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		conf_defaults(&c);
		snprintf(text, sizeof(text), "run:\n  history_max_age: %s\n",
		    bad[i]);
		err[0] = '\0';
		CHECK_INT(conf_load_file(&c, write_file("dur-bad.yml", text),
		    err), -1);
		CHECK(strstr(err, "'run.history_max_age'") != NULL);
	}
	CHECK(strstr(err, "duration") != NULL || strstr(err, "at most") !=
	    NULL);
	/* an int setting of seconds into an int field; the range holds */
	conf_defaults(&c);
	setenv("FLOWCGI_RUN_PRUNE_INTERVAL", "2m", 1);
	CHECK_INT(conf_load_env(&c, err), 0);
	CHECK_INT(c.run_prune_interval, 120);
	setenv("FLOWCGI_RUN_PRUNE_INTERVAL", "8d", 1);
	CHECK_INT(conf_load_env(&c, err), -1);
	CHECK(strstr(err, "at most") != NULL);
	unsetenv("FLOWCGI_RUN_PRUNE_INTERVAL");
	/* sizes do not take duration suffixes */
	conf_defaults(&c);
	CHECK_INT(conf_load_file(&c, write_file("size-dur.yml",
	    "limits:\n  max_body: 64d\n"), err), -1);
	CHECK(strstr(err, "size") != NULL);
}

/* ====== Environment ====== */

static void
test_env(void)
{
	struct conf	 c;
	char		 err[CONF_ERRMAX] = "";
	const char	*path;

	conf_defaults(&c);
	CHECK_INT(conf_load_env(&c, err), 0);	/* nothing set: no change */
	CHECK_INT(c.workers, 4);

	/* the environment wins over the file */
	path = write_file("env.yml", "server:\n  workers: 6\n  data_dir: /a\n"
	    "limits:\n  max_json_body: 1m\nlog:\n  level: warn\n");
	CHECK_INT(conf_load_file(&c, path, err), 0);
	CHECK_INT(c.workers, 6);
	setenv("FLOWCGI_SERVER_WORKERS", "7", 1);
	setenv("FLOWCGI_SERVER_DATA_DIR", "/srv/flow data", 1);
	setenv("FLOWCGI_LIMITS_MAX_JSON_BODY", "2k", 1);
	setenv("FLOWCGI_LOG_LEVEL", "error", 1);
	setenv("FLOWCGI_STORAGE_SYNC", "false", 1);
	setenv("FLOWCGI_SERVER_URL_PREFIX", "/x", 1);
	setenv("FLOWCGI_LOG_FILE", "/tmp/flowcgi.log", 1);
	CHECK_INT(conf_load_env(&c, err), 0);
	CHECK_INT(c.workers, 7);
	CHECK_STR(c.data_dir, "/srv/flow data");
	CHECK_INT(c.max_json_body, 2048);
	CHECK_INT(c.log_level, CONF_LOG_ERROR);
	CHECK_INT(c.sync, 0);
	CHECK_STR(c.url_prefix, "/x");
	CHECK_STR(c.log_file, "/tmp/flowcgi.log");
	/* an empty value is allowed for strings */
	setenv("FLOWCGI_SERVER_URL_PREFIX", "", 1);
	CHECK_INT(conf_load_env(&c, err), 0);
	CHECK_STR(c.url_prefix, "");
	unsetenv("FLOWCGI_SERVER_DATA_DIR");
	unsetenv("FLOWCGI_LIMITS_MAX_JSON_BODY");
	unsetenv("FLOWCGI_LOG_LEVEL");
	unsetenv("FLOWCGI_STORAGE_SYNC");
	unsetenv("FLOWCGI_SERVER_URL_PREFIX");
	unsetenv("FLOWCGI_LOG_FILE");

	/* bad values name the variable and the key */
	setenv("FLOWCGI_SERVER_WORKERS", "0", 1);
	CHECK_INT(conf_load_env(&c, err), -1);
	CHECK(strstr(err, "FLOWCGI_SERVER_WORKERS") != NULL);
	CHECK(strstr(err, "server.workers") != NULL);
	CHECK(strstr(err, "at least 1") != NULL);
	setenv("FLOWCGI_SERVER_WORKERS", "", 1);
	CHECK_INT(conf_load_env(&c, err), -1);
	CHECK(strstr(err, "FLOWCGI_SERVER_WORKERS") != NULL);
	setenv("FLOWCGI_SERVER_WORKERS", " 5", 1);
	CHECK_INT(conf_load_env(&c, err), -1);
	setenv("FLOWCGI_SERVER_WORKERS", "5 ", 1);
	CHECK_INT(conf_load_env(&c, err), -1);
	unsetenv("FLOWCGI_SERVER_WORKERS");
	setenv("FLOWCGI_STORAGE_SYNC", "1", 1);
	CHECK_INT(conf_load_env(&c, err), -1);
	CHECK(strstr(err, "FLOWCGI_STORAGE_SYNC") != NULL);
	unsetenv("FLOWCGI_STORAGE_SYNC");
	setenv("FLOWCGI_LIMITS_MAX_BODY", "64q", 1);
	CHECK_INT(conf_load_env(&c, err), -1);
	CHECK(strstr(err, "FLOWCGI_LIMITS_MAX_BODY") != NULL);
	CHECK(strstr(err, "size") != NULL);
	unsetenv("FLOWCGI_LIMITS_MAX_BODY");
	setenv("FLOWCGI_LOG_LEVEL", "INFO", 1);
	CHECK_INT(conf_load_env(&c, err), -1);
	CHECK(strstr(err, "FLOWCGI_LOG_LEVEL") != NULL);
	unsetenv("FLOWCGI_LOG_LEVEL");
	/* every setting has its variable */
	{
		size_t	i, j, bad = 0;
		char	var[160];

		for (i = 0; i < conf_setting_count(); i++) {
			snprintf(var, sizeof(var), "FLOWCGI_%s",
			    conf_setting_name(i));
			for (j = 0; var[j]; j++)
				var[j] = var[j] == '.' ? '_' :
				    (char)(var[j] >= 'a' && var[j] <= 'z' ?
				    var[j] - 32 : var[j]);
			/* a value no setting of any type accepts */
			setenv(var, "\x01not valid\x01", 1);
			conf_defaults(&c);
			/* strings are the settings formatted in quotes */
			if (fmt(&c, conf_setting_name(i))[0] == '"') {
				/* strings take anything: check it landed */
				if (conf_load_env(&c, err) != 0 ||
				    strstr(fmt(&c, conf_setting_name(i)),
				    "not valid") == NULL)
					bad++;
			} else if (conf_load_env(&c, err) != -1 ||
			    strstr(err, var) == NULL) {
				printf("# %s: '%s'\n", var, err);
				bad++;
			}
			unsetenv(var);
		}
		CHECK_INT(bad, 0);
	}
}

int
main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/t_conf_load.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_defaults();
	test_shipped_file();
	test_file_errors();
	test_sizes();
	test_durations();
	test_env();
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmpdir);
	}
	return tap_done();
}
