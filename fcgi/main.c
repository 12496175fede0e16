/*
 * main.c — the flowcgi command line: serve, token, import, export, upgrade,
 * run, prune, migrate, --help, --version.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/dbuf.h"
#include "fcgi/fcgi.h"

/* ====== run ====== */

static int	read_file(const char *path, char **out, size_t *len);

struct cli_run {
	int	json;
};

static void
cli_event(void *arg, const json_t *ev)
{
	struct cli_run	*cr = arg;
	const char	*name = json_string_value(json_object_get(ev, "event"));
	json_t		*d = json_object_get(ev, "data");
	char		*s;

	if (cr->json) {
		if ((s = json_dumps(ev, JSON_COMPACT)) != NULL) {
			printf("%s\n", s);
			free(s);
		}
		fflush(stdout);
		return;
	}
	if (strcmp(name, "node_started") == 0)
		fprintf(stderr, "> %-20s %s\n", json_string_value(
		    json_object_get(d, "node_type")), json_string_value(
		    json_object_get(d, "title")));
	else if (strcmp(name, "node_finished") == 0)
		fprintf(stderr, "< %-20s %s  %s %.3fs%s%s\n", json_string_value(
		    json_object_get(d, "node_type")), json_string_value(
		    json_object_get(d, "title")), json_string_value(
		    json_object_get(d, "status")), json_real_value(
		    json_object_get(d, "elapsed_time")),
		    json_is_string(json_object_get(d, "error")) ? "  " : "",
		    json_is_string(json_object_get(d, "error")) ?
		    json_string_value(json_object_get(d, "error")) : "");
	else if (strcmp(name, "text_chunk") == 0)
		fprintf(stderr, "%s", json_string_value(json_object_get(d,
		    "text")));
	else if (strcmp(name, "message") == 0)	/* a chat app's answer */
		fprintf(stderr, "%s", json_string_value(json_object_get(ev,
		    "answer")));
}

static int
cmd_run(struct engine *e, const char *what, json_t *inputs, const char *query,
    int as_json)
{
	struct run_opts	 o;
	struct cli_run	 cr = { as_json };
	char		 err[ENGINE_ERRMAX] = "", *data = NULL, *s;
	char		 status[32] = "", rerr[ENGINE_ERRMAX] = "";
	const char	*app_id = what;
	size_t		 len;
	json_t		*imp = NULL, *res = NULL, *d;
	int		 rc, temp = 0;

	if (engine_uuid_check(what) != 0) {
		struct import_opts io;

		/* A file: import it into a temporary app, removed after. */
		memset(&io, 0, sizeof(io));
		if (read_file(what, &data, &len) != 0) {
			fprintf(stderr, "flowcgi: %s: cannot read\n", what);
			return 1;
		}
		rc = engine_import(e, data, len, &io, err, &imp);
		free(data);
		if (rc != 0 || json_string_value(json_object_get(imp,
		    "app_id")) == NULL) {
			fprintf(stderr, "flowcgi: %s: %s\n", what, rc ? (err[0]
			    ? err : engine_strerror(rc)) : json_string_value(
			    json_object_get(imp, "error")));
			json_decref(imp);
			return 1;
		}
		app_id = json_string_value(json_object_get(imp, "app_id"));
		temp = 1;
	}
	memset(&o, 0, sizeof(o));
	o.app_id = app_id;
	o.inputs = inputs;	/* NULL: no inputs */
	o.query = query;
	o.user = "cli";
	o.invoke_from = "cli";
	o.on_event = cli_event;
	o.arg = &cr;
	o.status = status;
	o.error = rerr;
	rc = engine_run(e, &o, err, &res);
	if (rc != 0) {
		fprintf(stderr, "flowcgi: run: %s\n", err[0] ? err :
		    engine_strerror(rc));
		rc = 1;
		goto out;
	}
	/* A workflow answers {data: {outputs}}, a chatflow {answer}; how
	 * either ended is in status and rerr */
	d = json_object_get(res, "data") ? json_object_get(res, "data") : res;
	if (status[0] == '\0')
		snprintf(status, sizeof(status), "failed");
	if (!as_json) {
		fprintf(stderr, "\n%s\n", status);
		if (json_object_get(d, "outputs") != NULL &&
		    (s = json_dumps(json_object_get(d, "outputs"),
		    JSON_INDENT(2))) != NULL) {
			printf("%s\n", s);
			free(s);
		} else if (json_is_string(json_object_get(d, "answer")))
			printf("%s\n", json_string_value(json_object_get(d,
			    "answer")));
		if (strcmp(status, "succeeded") != 0 && rerr[0] != '\0')
			fprintf(stderr, "error: %s\n", rerr);
	}
	rc = strcmp(status, "succeeded") == 0 ||
	    strcmp(status, "partial-succeeded") == 0 ? 0 : 1;
out:
	if (temp)
		engine_app_delete(e, app_id);
	json_decref(res);
	json_decref(imp);
	return rc;
}

/* ====== upgrade ====== */

static int
cmd_upgrade(struct engine *e, const char *id)
{
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*res = NULL;
	const char	*result;
	int		 rc;

	if ((rc = engine_app_upgrade(e, id, err, &res)) != 0) {
		fprintf(stderr, "flowcgi: upgrade: %s\n", err[0] ? err :
		    engine_strerror(rc));
		return 1;
	}
	result = json_string_value(json_object_get(res, "result"));
	if (strcmp(result, "success") == 0) {
		printf("%s\n", json_string_value(json_object_get(res,
		    "new_app_id")));
		fprintf(stderr, "flowcgi: converted %lld agent nodes, skipped "
		    "%lld\n", (long long)json_integer_value(json_object_get(res,
		    "converted_agents")), (long long)json_integer_value(
		    json_object_get(res, "skipped_agents")));
		rc = 0;
	} else {
		fprintf(stderr, "flowcgi: upgrade: %s\n", result);
		rc = 1;
	}
	json_decref(res);
	return rc;
}

/* ====== prune ====== */

/* One pass now (after any pass under way elsewhere); prints the counts. */
static int
cmd_prune(struct engine *e)
{
	struct prune_stats	st;
	int			rc;

	rc = engine_prune(e, PRUNE_WAIT, &st);
	printf("runs %lld\nnode_traces %lld\nmessages %lld\nimports %lld\n"
	    "blobs %lld\n", (long long)st.runs, (long long)st.node_runs,
	    (long long)st.messages, (long long)st.imports,
	    (long long)st.blobs);
	if (st.running > 0)
		fprintf(stderr, "flowcgi: prune: kept %lld runs that are still "
		    "running\n", (long long)st.running);
	if (rc != 0) {
		fprintf(stderr, "flowcgi: prune: %s\n", engine_strerror(rc));
		return 1;
	}
	return 0;
}

/* ====== migrate ====== */

/*
 * The store the configuration names, opened as engine_open opens it, with
 * one or two connections: migrate copies on one thread.
 */
static void
migrate_opts(const struct conf *c, struct store_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->map_size = c->map_size;
	o->max_map_size = c->max_map_size;
	o->sync = 1;	/* a copy is only done once it is on disk */
	o->batch_max = 1;
	o->backend = c->storage_backend;
	o->postgres_url = c->postgres_url;
	o->pool_size = 2;
	o->wait_ms = c->postgres_wait * 1000;
}

/* True when paths a and b are one directory. */
static int
same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * flowcgi migrate --to BACKEND WHERE: copies the configured store into the
 * empty store of BACKEND (lmdb, postgres) at WHERE (a data directory, a
 * PostgreSQL URL) with store_migrate, which prints a line per database and
 * verifies the copy. Exit 0 only when every count and digest matches.
 */
static int
cmd_migrate(const struct conf *c, const char *to, const char *where)
{
	struct store_opts	 so, dopts;
	struct store		*src = NULL, *dst = NULL;
	char			 err[512];
	const char		*from;
	int			 rc, from_lmdb;

	migrate_opts(c, &so);
	from = c->storage_backend[0] != '\0' ? c->storage_backend : "lmdb";
	from_lmdb = strcmp(from, "lmdb") == 0;
	dopts = so;
	dopts.backend = to;
	dopts.postgres_url = NULL;
	if (strcmp(to, "postgres") == 0) {
		dopts.postgres_url = where;
		if (!from_lmdb && strcmp(c->postgres_url, where) == 0) {
			fprintf(stderr, "flowcgi: migrate: the destination is "
			    "the configured store (storage.postgres_url)\n");
			return 1;
		}
	} else if (from_lmdb && same_dir(c->data_dir, where)) {
		fprintf(stderr, "flowcgi: migrate: the destination is the "
		    "configured data directory (server.data_dir)\n");
		return 1;
	}
	/* The source must exist: opening it would make an empty one. */
	if (from_lmdb && access(c->data_dir, F_OK) != 0) {
		fprintf(stderr, "flowcgi: migrate: data directory '%s': %s\n",
		    c->data_dir, strerror(errno));
		return 1;
	}
	if ((rc = store_open(c->data_dir, &so, &src)) != 0) {
		fprintf(stderr, "flowcgi: migrate: source (%s): %s\n", from,
		    store_strerror(rc));
		return 1;
	}
	if (strcmp(to, "lmdb") == 0 && mkdir(where, 0700) != 0 &&
	    errno != EEXIST) {
		fprintf(stderr, "flowcgi: migrate: '%s': %s\n", where,
		    strerror(errno));
		rc = 1;
		goto out;
	}
	if ((rc = store_open(where, &dopts, &dst)) != 0) {
		fprintf(stderr, "flowcgi: migrate: destination (%s): %s\n", to,
		    store_strerror(rc));
		rc = 1;
		goto out;
	}
	printf("migrating %s (%s) to %s\n", from, from_lmdb ? c->data_dir :
	    "storage.postgres_url", to);
	if ((rc = store_migrate(src, dst, stdout, err, sizeof(err))) != 0) {
		fprintf(stderr, "flowcgi: migrate: FAILED: %s\n", err);
		rc = 1;
		goto out;
	}
	/* Secrets in settings are encrypted with secret.key, file links
	 * signed with link.key: without them the copy cannot be read. */
	if (strcmp(to, "postgres") == 0)
		fprintf(stderr, "flowcgi: migrate: now set storage.backend: "
		    "postgres and storage.postgres_url; every host needs "
		    "secret.key, link.key and admin_token of %s in its data "
		    "directory\n", c->data_dir);
	else if (!same_dir(c->data_dir, where))
		fprintf(stderr, "flowcgi: migrate: now copy secret.key, "
		    "link.key and admin_token of %s into %s and set "
		    "server.data_dir and storage.backend: lmdb\n", c->data_dir,
		    where);
	else
		fprintf(stderr, "flowcgi: migrate: now set storage.backend: "
		    "lmdb\n");
out:
	store_close(dst);
	store_close(src);
	return rc;
}

/* ====== import and export ====== */

static int
read_file(const char *path, char **out, size_t *len)
{
	FILE		*f;
	struct dbuf	 b = { 0 };
	char		 chunk[65536];
	size_t		 got;

	if ((f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb")) == NULL)
		return -1;
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (dbuf_add(&b, chunk, got) != DBUF_OK)
			break;
	if (f != stdin)
		fclose(f);
	/* out of memory: no file, rather than part of one */
	return (*out = dbuf_take(&b, len)) != NULL ? 0 : -1;
}

static int
has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && strcmp(s + n - m, suf) == 0;
}

static int
cmd_import(struct engine *e, const char *path, const char *name, int yes)
{
	struct import_opts	 o;
	char			*data = NULL, err[ENGINE_ERRMAX] = "";
	const char		*st, *id;
	size_t			 len = 0;
	json_t			*imp = NULL, *conf = NULL, *w;
	size_t			 i;
	int			 rc;

	if (read_file(path, &data, &len) != 0) {
		fprintf(stderr, "flowcgi: %s: cannot read\n", path);
		return 1;
	}
	memset(&o, 0, sizeof(o));
	o.name = name;
	if (has_suffix(path, ".zip") || (len > 4 && memcmp(data, "PK\003\004",
	    4) == 0))
		rc = engine_import_bundle(e, data, len, &o, err, &imp);
	else
		rc = engine_import(e, data, len, &o, err, &imp);
	free(data);
	if (rc != 0) {
		fprintf(stderr, "flowcgi: import: %s\n", err[0] ? err :
		    engine_strerror(rc));
		return 1;
	}
	st = json_string_value(json_object_get(imp, "status"));
	if (strcmp(st, "pending") == 0 && yes) {
		rc = engine_import_confirm(e, json_string_value(
		    json_object_get(imp, "id")), err, &conf);
		json_decref(imp);
		if (rc != 0) {
			fprintf(stderr, "flowcgi: import: %s\n", err[0] ? err :
			    engine_strerror(rc));
			return 1;
		}
		imp = conf;
		st = json_string_value(json_object_get(imp, "status"));
	}
	id = json_string_value(json_object_get(imp, "app_id"));
	if (strcmp(st, "failed") == 0) {
		fprintf(stderr, "flowcgi: import failed: %s\n",
		    json_string_value(json_object_get(imp, "error")));
		rc = 1;
	} else if (strcmp(st, "pending") == 0) {
		fprintf(stderr, "flowcgi: DSL version %s differs from %s; run "
		    "again with --yes to import it anyway\n",
		    json_string_value(json_object_get(imp,
		    "imported_dsl_version")), DSL_VERSION_CURRENT);
		rc = 3;
	} else {
		if (strcmp(st, "completed-with-warnings") == 0)
			fprintf(stderr, "flowcgi: imported an older DSL version "
			    "(%s)\n", json_string_value(json_object_get(imp,
			    "imported_dsl_version")));
		json_array_foreach(json_object_get(imp, "warnings"), i, w)
			fprintf(stderr, "flowcgi: warning: %s\n",
			    json_string_value(json_object_get(w, "message")));
		printf("%s\n", id);
		rc = 0;
	}
	json_decref(imp);
	return rc;
}

static int
cmd_export(struct engine *e, const char *id, const char *out, int secrets)
{
	json_t	*rec = NULL;
	char	 err[ENGINE_ERRMAX] = "", *data = NULL, *fname = NULL;
	char	 path[512];
	size_t	 len = 0;
	FILE	*f;
	int	 rc, bundle;

	if ((rc = engine_app_get(e, id, &rec)) != 0) {
		fprintf(stderr, "flowcgi: export: app %s: %s\n", id,
		    engine_strerror(rc));
		return 1;
	}
	bundle = engine_app_is_sandboxed(rec) ||
	    (out != NULL && has_suffix(out, ".zip"));
	if (bundle)
		rc = engine_export_bundle(e, id, secrets, err, &data, &len,
		    &fname);
	else
		rc = engine_export(e, id, secrets, err, &data, &len);
	if (rc != 0) {
		fprintf(stderr, "flowcgi: export: %s\n", err[0] ? err :
		    engine_strerror(rc));
		json_decref(rec);
		return 1;
	}
	if (out == NULL) {
		engine_bundle_filename(rec, path, sizeof(path));
		if (!bundle)	/* same safe name, .yml */
			memcpy(path + strlen(path) - 4, ".yml", 4);
		out = path;
	}
	f = strcmp(out, "-") == 0 ? stdout : fopen(out, "wb");
	if (f == NULL || fwrite(data, 1, len, f) != len) {
		fprintf(stderr, "flowcgi: export: cannot write %s\n", out);
		rc = 1;
	} else if (f != stdout)
		fprintf(stderr, "flowcgi: wrote %s (%zu bytes)\n", out, len);
	if (f != NULL && f != stdout)
		fclose(f);
	free(data);
	free(fname);
	json_decref(rec);
	return rc;
}

static void
usage(FILE *fp)
{
	fprintf(fp,
"usage: flowcgi <command> [options]\n"
"\n"
"commands:\n"
"  serve [-c FILE] [--listen ADDR]   serve FastCGI (or one CGI request)\n"
"  token [-c FILE]                   print the admin token\n"
"  import FILE [--name NAME] [--yes] import a .yml DSL or a .zip bundle;\n"
"                                    prints the new app id\n"
"  export ID [-o FILE] [--secrets]   export an app: .zip for sandboxed\n"
"                                    apps, .yml otherwise\n"
"  upgrade ID                        copy a classic app to the sandboxed\n"
"                                    runtime; prints the new app id\n"
"  run FILE|ID [--input k=v]... [--query TEXT] [--json]\n"
"                                    run a workflow here, showing each node\n"
"  prune [-c FILE]                   remove run history past\n"
"                                    run.history_max_age / _max_count, and\n"
"                                    what nothing refers to any more; prints\n"
"                                    what it removed\n"
"  migrate --to postgres URL | --to lmdb DIR\n"
"                                    copy the configured store into an\n"
"                                    empty one, then compare every database\n"
"                                    (counts, SHA-256); stop servers first\n"
"\n"
"options:\n"
"  -c, --config FILE   configuration file (default: $FLOWCGI_CONFIG, else\n"
"                      flowcgi.yml beside the program, else the built-in\n"
"                      defaults; see conf/flowcgi.yml)\n"
"  -l, --listen ADDR   host:port or unix:/path (overrides server.listen)\n"
"  -o, --output FILE   where export writes (default: <app name>.yml/.zip)\n"
"      --name NAME     the imported app's name (default: from the DSL)\n"
"      --yes           confirm an import of another DSL version\n"
"      --secrets       export the DSL's secrets too (secret env\n"
"                      variables, http-request API keys)\n"
"  -i, --input K=V     a start input (repeat; V is JSON when it parses)\n"
"      --json          run prints every event as one JSON line\n"
"      --query TEXT    run: the user's message, for chatflow apps\n"
"      --to BACKEND    migrate: postgres (then URL) or lmdb (then DIR)\n"
"  -h, --help          this help\n"
"  -V, --version       print the version\n"
"\n"
"Every setting can be overridden with FLOWCGI_<SECTION>_<NAME>, for\n"
"example FLOWCGI_SERVER_DATA_DIR=/srv/flowcgi.\n"
"Started by a web server with a socket on standard input, or as CGI,\n"
"flowcgi serves without any arguments.\n");
}

/*
 * The configuration file when neither -c nor FLOWCGI_CONFIG names one:
 * flowcgi.yml in the directory of the program as started (argv[0], when it
 * has a slash), else of the executable (/proc/self/exe). This is how a
 * binary dropped into a web root as flowcgi.fcgi (mod_fcgid, mod_cgi) finds
 * its settings. Writes the file's path into path and its directory into
 * dir (both PATH_MAX bytes); returns 0, or -1 when there is no such file.
 */
static int
conf_beside_binary(const char *argv0, char *path, char *dir)
{
	struct stat	 st;
	char		*slash;
	ssize_t		 n;
	int		 i;

	for (i = 0; i < 2; i++) {
		if (i == 0) {
			if (argv0 == NULL || strchr(argv0, '/') == NULL ||
			    strlen(argv0) >= PATH_MAX)
				continue;
			snprintf(dir, PATH_MAX, "%s", argv0);
		} else {
			if ((n = readlink("/proc/self/exe", dir,
			    PATH_MAX - 1)) <= 0)
				continue;
			dir[n] = '\0';
		}
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (snprintf(path, PATH_MAX, "%s/flowcgi.yml", dir) >=
		    PATH_MAX)
			continue;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
	}
	return -1;
}

/* A relative path set in a file found beside the binary starts at that
 * file's directory, whatever the working directory. */
static int
conf_rebase(char *p, size_t size, const char *dir)
{
	char tmp[PATH_MAX];

	if (*p == '\0' || *p == '/')
		return 0;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", dir, p) >= size)
		return -1;
	memcpy(p, tmp, strlen(tmp) + 1);
	return 0;
}

static int
load_conf(struct conf *c, const char *path, const char *listen,
    const char *argv0)
{
	char err[CONF_ERRMAX], found[PATH_MAX], dir[PATH_MAX];

	conf_defaults(c);
	if (path == NULL)
		path = getenv("FLOWCGI_CONFIG");
	if (path == NULL && conf_beside_binary(argv0, found, dir) == 0) {
		if (conf_load_file(c, found, err) != 0)
			goto fail;
		if (conf_rebase(c->data_dir, sizeof(c->data_dir), dir) != 0 ||
		    conf_rebase(c->sandbox_dir, sizeof(c->sandbox_dir),
		    dir) != 0 ||
		    conf_rebase(c->log_file, sizeof(c->log_file), dir) != 0) {
			snprintf(err, sizeof(err), "%.400s: a path is too long",
			    found);
			goto fail;
		}
	} else if (path != NULL && *path != '\0' &&
	    conf_load_file(c, path, err) != 0)
		goto fail;
	if (conf_load_env(c, err) != 0)
		goto fail;
	if (listen != NULL) {
		if (strlen(listen) >= sizeof(c->listen)) {
			snprintf(err, sizeof(err), "--listen: too long");
			goto fail;
		}
		snprintf(c->listen, sizeof(c->listen), "%s", listen);
	}
	if (log_init(c->log_level, c->log_file) != 0) {
		snprintf(err, sizeof(err), "log.file '%.400s': cannot open",
		    c->log_file);
		goto fail;
	}
	log_set_format(c->log_format);
	log_set_requests(c->log_requests);
	return 0;
fail:
	fprintf(stderr, "flowcgi: configuration: %s\n", err);
	return -1;
}

/* True when a web server started us to serve without any arguments. */
static int
started_by_server(void)
{
	int		v = 0;
	socklen_t	len = sizeof(v);

	return getenv("GATEWAY_INTERFACE") != NULL ||
	    getenv("LISTEN_FDS") != NULL ||
	    (getsockopt(0, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == 0 && v);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "output", required_argument, NULL, 'o' },
		{ "name", required_argument, NULL, 'N' },
		{ "yes", no_argument, NULL, 'Y' },
		{ "secrets", no_argument, NULL, 'S' },
		{ "input", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'J' },
		{ "query", required_argument, NULL, 'Q' },
		{ "to", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	static struct conf	 c;
	struct engine		*e = NULL;
	const char		*cmd = NULL, *cpath = NULL, *listen = NULL;
	const char		*output = NULL, *name = NULL, *arg = NULL;
	const char		*query = NULL, *to = NULL;
	int			 yes = 0, secrets = 0, as_json = 0;
	json_t			*inputs = NULL, *iv;
	char			*eq;
	char			 err[ENGINE_ERRMAX] = "", token[AUTH_TOKEN_MAX];
	const char		*argv0 = argv[0];
	int			 ch, rc;

	if (argc < 2 && started_by_server())
		cmd = "serve";
	else if (argc >= 2 && argv[1][0] != '-') {
		cmd = argv[1];
		argv++;
		argc--;
	}
	while ((ch = getopt_long(argc, argv, "c:l:hVo:i:", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'c': cpath = optarg; break;
		case 'l': listen = optarg; break;
		case 'o': output = optarg; break;
		case 'N': name = optarg; break;
		case 'Y': yes = 1; break;
		case 'S': secrets = 1; break;
		case 'J': as_json = 1; break;
		case 'Q': query = optarg; break;
		case 'T': to = optarg; break;
		case 'i':
			if ((eq = strchr(optarg, '=')) == NULL) {
				fprintf(stderr, "flowcgi: --input wants "
				    "NAME=VALUE\n");
				return 2;
			}
			*eq = '\0';
			iv = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
			if (inputs == NULL && (inputs = json_object()) == NULL)
				return 1;
			rc = json_object_set_new(inputs, optarg, iv &&
			    !json_is_null(iv) ? iv : json_string(eq + 1));
			if (iv != NULL && json_is_null(iv))
				json_decref(iv);
			if (rc != 0) {
				fprintf(stderr, "flowcgi: out of memory\n");
				return 1;
			}
			break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("flowcgi %s\n", FLOWCGI_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (cmd == NULL) {
		usage(stderr);
		return 2;
	}
	if ((strcmp(cmd, "import") == 0 || strcmp(cmd, "export") == 0 ||
	    strcmp(cmd, "run") == 0 || strcmp(cmd, "upgrade") == 0 ||
	    strcmp(cmd, "migrate") == 0) && optind < argc)
		arg = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "flowcgi: unexpected argument '%s'\n",
		    argv[optind]);
		return 2;
	}
	if (strcmp(cmd, "serve") != 0 && strcmp(cmd, "token") != 0 &&
	    strcmp(cmd, "import") != 0 && strcmp(cmd, "export") != 0 &&
	    strcmp(cmd, "run") != 0 && strcmp(cmd, "upgrade") != 0 &&
	    strcmp(cmd, "prune") != 0 && strcmp(cmd, "migrate") != 0) {
		fprintf(stderr, "flowcgi: unknown command '%s'\n", cmd);
		usage(stderr);
		return 2;
	}
	if ((strcmp(cmd, "import") == 0 || strcmp(cmd, "export") == 0 ||
	    strcmp(cmd, "run") == 0 || strcmp(cmd, "upgrade") == 0) &&
	    arg == NULL) {
		fprintf(stderr, "flowcgi: %s needs a %s\n", cmd,
		    strcmp(cmd, "import") == 0 || strcmp(cmd, "run") == 0 ?
		    "FILE" : "app ID");
		return 2;
	}
	if (strcmp(cmd, "migrate") == 0 && (to == NULL || arg == NULL ||
	    (strcmp(to, "postgres") != 0 && strcmp(to, "lmdb") != 0))) {
		fprintf(stderr, "flowcgi: migrate needs --to postgres URL or "
		    "--to lmdb DIR\n");
		return 2;
	}
	if (to != NULL && strcmp(cmd, "migrate") != 0) {
		fprintf(stderr, "flowcgi: --to is for migrate\n");
		return 2;
	}
	if (load_conf(&c, cpath, listen, argv0) != 0)
		return 2;
	/* Two stores and no engine: neither is served meanwhile. */
	if (strcmp(cmd, "migrate") == 0)
		return cmd_migrate(&c, to, arg);
	json_object_seed(0);	/* before any thread makes a JSON object */
	if ((rc = engine_open(&c, err, &e)) != 0) {
		fprintf(stderr, "flowcgi: %s\n", err[0] ? err :
		    engine_strerror(rc));
		return 1;
	}
	if (strcmp(cmd, "import") == 0)
		rc = cmd_import(e, arg, name, yes);
	else if (strcmp(cmd, "export") == 0)
		rc = cmd_export(e, arg, output, secrets);
	else if (strcmp(cmd, "run") == 0)
		rc = cmd_run(e, arg, inputs, query, as_json);
	else if (strcmp(cmd, "upgrade") == 0)
		rc = cmd_upgrade(e, arg);
	else if (strcmp(cmd, "prune") == 0)
		rc = cmd_prune(e);
	else if (strcmp(cmd, "token") == 0) {
		if (auth_token_load(c.data_dir, token) != 0) {
			perror("flowcgi: admin token");
			rc = 1;
		} else
			printf("%s\n", token);
	} else
		rc = server_run(&c, e);
	engine_close(e);
	json_decref(inputs);
	return rc;
}
