/*
 * main.c — the flowcgi command line: serve, token, --help, --version.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fcgi/fcgi.h"

static void
usage(FILE *fp)
{
	fprintf(fp,
"usage: flowcgi <command> [options]\n"
"\n"
"commands:\n"
"  serve [-c FILE] [--listen ADDR]   serve FastCGI (or one CGI request)\n"
"  token [-c FILE]                   print the admin token\n"
"\n"
"options:\n"
"  -c, --config FILE   configuration file (default: $FLOWCGI_CONFIG, else\n"
"                      the built-in defaults; see conf/flowcgi.yml)\n"
"  -l, --listen ADDR   host:port or unix:/path (overrides server.listen)\n"
"  -h, --help          this help\n"
"  -V, --version       print the version\n"
"\n"
"Every setting can be overridden with FLOWCGI_<SECTION>_<NAME>, for\n"
"example FLOWCGI_SERVER_DATA_DIR=/srv/flowcgi.\n"
"Started by a web server with a socket on standard input, or as CGI,\n"
"flowcgi serves without any arguments.\n");
}

static int
load_conf(struct conf *c, const char *path, const char *listen)
{
	char err[CONF_ERRMAX];

	conf_defaults(c);
	if (path == NULL)
		path = getenv("FLOWCGI_CONFIG");
	if (path != NULL && *path != '\0' && conf_load_file(c, path, err) != 0)
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
		{ NULL, 0, NULL, 0 },
	};
	static struct conf	 c;
	struct engine		*e = NULL;
	const char		*cmd = NULL, *cpath = NULL, *listen = NULL;
	char			 err[ENGINE_ERRMAX] = "", token[AUTH_TOKEN_MAX];
	int			 ch, rc;

	if (argc < 2 && started_by_server())
		cmd = "serve";
	else if (argc >= 2 && argv[1][0] != '-') {
		cmd = argv[1];
		argv++;
		argc--;
	}
	while ((ch = getopt_long(argc, argv, "c:l:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': cpath = optarg; break;
		case 'l': listen = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("flowcgi %s\n", FLOWCGI_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (cmd == NULL) {
		usage(stderr);
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "flowcgi: unexpected argument '%s'\n",
		    argv[optind]);
		return 2;
	}
	if (strcmp(cmd, "serve") != 0 && strcmp(cmd, "token") != 0) {
		fprintf(stderr, "flowcgi: unknown command '%s'\n", cmd);
		usage(stderr);
		return 2;
	}
	if (load_conf(&c, cpath, listen) != 0)
		return 2;
	json_object_seed(0);	/* before any thread makes a JSON object */
	if ((rc = engine_open(&c, err, &e)) != 0) {
		fprintf(stderr, "flowcgi: %s\n", err[0] ? err :
		    engine_strerror(rc));
		return 1;
	}
	if (strcmp(cmd, "token") == 0) {
		if (auth_token_load(c.data_dir, token) != 0) {
			perror("flowcgi: admin token");
			rc = 1;
		} else
			printf("%s\n", token);
	} else
		rc = server_run(&c, e);
	engine_close(e);
	return rc;
}
