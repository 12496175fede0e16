/*
 * fcgi — the front: process model, FastCGI accept loop, request parsing,
 * router, auth, JSON responses, the console and service APIs, the CLI.
 *
 * fcgi/main.c is the program; the functions here are what it and the
 * tests call.
 */
#ifndef FLOWCGI_FCGI_H
#define FLOWCGI_FCGI_H

#include <stddef.h>

#include "conf/conf.h"
#include "engine/engine.h"

/*
 * Serves requests until SIGTERM or SIGINT, then lets in-flight requests
 * finish for conf.shutdown_grace seconds. The listening socket is, in
 * order: systemd's (LISTEN_FDS), a FastCGI listening socket on standard
 * input, or conf.listen. Started as plain CGI (GATEWAY_INTERFACE set, no
 * socket on standard input) it answers one request. Returns the process
 * exit status.
 */
int	server_run(const struct conf *c, struct engine *e);

/*
 * Reads the admin token from the data directory, creating it (0600) on
 * first use; safe when several processes race. Writes it, NUL-terminated,
 * into buf (at least AUTH_TOKEN_MAX bytes). Returns 0 or -1 with errno.
 */
#define AUTH_TOKEN_MAX 128
int	auth_token_load(const char *data_dir, char *buf);

#endif
