/*
 * database.c — the plugin hjlarry/database's sql_execute, read-only, on
 * PostgreSQL (libpq) and SQLite (libsqlite3).
 *
 * The credential db_uri (secret; engine/tools/providers/database.yml):
 *   postgresql://user:pass@host:port/db   (postgres://, and SQLAlchemy's
 *                                          postgresql+driver:// too)
 *   sqlite:///relative/path.db, sqlite:////absolute/path.db
 *
 * sql_execute (query, format json|md|csv) answers as the plugin does:
 * json, the json message {"result": [{column: value}]}; md, tablib's text
 * table (columns padded, "|" between them, a "-" rule under the header);
 * csv, a file result.csv (text/csv). A query that does not start with
 * SELECT or WITH goes the plugin's other way: "Query executed
 * successfully. Affected rows: N", or "Error: <why>" — and since every
 * statement runs read-only, a write always ends there:
 *   - PostgreSQL: one statement (the extended protocol takes no more)
 *     inside BEGIN READ ONLY with SET LOCAL statement_timeout
 *     (tools.database_timeout); rows read one at a time;
 *   - SQLite: opened SQLITE_OPEN_READONLY (no URI names), one statement
 *     (a second is refused), an authorizer that denies every write,
 *     ATTACH, DETACH and PRAGMA, a progress handler for the timeout.
 * An answer keeps at most tools.database_max_rows rows and
 * tools.database_max_bytes bytes of values; past that it is cut, with a
 * text message saying so (md: the note after the table).
 *
 * text2sql (query, tables, model: a model-selector {provider, model,
 * completion_params}) gives the model, through the model providers
 * (llm_chat), the tables' columns as the plugin renders them (Python's
 * repr of {table: [{name, type, nullable, default, primary_key}]}) and
 * the question, with a system prompt of the plugin's requirements in
 * flowcgi's words; the answer is the model's text.
 *
 * Not served: the plugin's db_uri parameter (a model could point it at
 * any host or file: the URI is the admin's, in Settings > Tools),
 * config_options (SQLAlchemy's engine options; given, they are ignored),
 * the formats yaml, html and xlsx. The connection to
 * PostgreSQL may take http.connect_timeout seconds.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>
#include <openssl/crypto.h>
#include <sqlite3.h>

#include "engine/tools/tools.h"

/* ====== Tools ====== */

static const struct tool_param p_exec[] = {
	{ "query", "string", 1, "The SQL query string." },
	{ "format", "string", 0, "Output format: json (default), md or csv" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_t2s[] = {
	{ "query", "string", 1, "The user query." },
	{ "tables", "string", 0, "Tables to give the model as context, "
	    "comma-separated" },
	{ "model", "object", 1, "The model: {provider, model, "
	    "completion_params}" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_def defs[] = {
	{ "sql_execute", "This tool is used to execute SQL in an existing "
	    "database.", p_exec },
	{ "text2sql", "supply to LLM the context of the database and the user "
	    "query to get a sql string.", p_t2s },
	{ NULL, NULL, NULL },
};

/* ====== Results ====== */

/* What a query gave: column names, rows (arrays of values), the cut. */
struct db_rows {
	json_t	*cols;		/* array of strings */
	json_t	*rows;		/* array of arrays */
	size_t	 bytes;		/* of the values kept */
	int	 cut;		/* 1: rows, 2: bytes */
	int64_t	 affected;	/* a statement's changes; -1 unknown */
	int	 max_rows;
	size_t	 max_bytes;
};

/* Adds row (stolen) of bytes bytes; 1 when the answer is full. */
static int
rows_add(struct db_rows *r, json_t *row, size_t bytes)
{
	if (json_array_size(r->rows) >= (size_t)r->max_rows) {
		json_decref(row);
		r->cut = 1;
		return 1;
	}
	if (r->bytes + bytes > r->max_bytes) {
		json_decref(row);
		r->cut = 2;
		return 1;
	}
	r->bytes += bytes;
	json_array_append_new(r->rows, row);
	return 0;
}

/* ====== PostgreSQL ====== */

/* A PostgreSQL text value of type oid as JSON. */
static json_t *
pg_value(const char *s, Oid oid)
{
	char	*end;
	json_t	*v;

	switch (oid) {
	case 16:	/* bool */
		return json_boolean(s[0] == 't');
	case 20: case 21: case 23: case 26:	/* int8, int2, int4, oid */
		return json_integer(strtoll(s, &end, 10));
	case 700: case 701: case 1700:	/* float4, float8, numeric */
		if (strcmp(s, "NaN") == 0 || strstr(s, "Infinity") != NULL)
			return json_string(s);
		return json_real(strtod(s, &end));
	case 114: case 3802:	/* json, jsonb */
		if ((v = json_loads(s, JSON_DECODE_ANY, NULL)) != NULL)
			return v;
		return json_string(s);
	default:
		return json_string(s);
	}
}

/* A query's notices (RAISE NOTICE) go nowhere, not to stderr. */
static void
pg_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* The server's message of res, without libpq's "ERROR:  " prefix. */
static const char *
pg_message(const PGresult *res)
{
	const char *m = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

	return m != NULL ? m : PQresultErrorMessage(res);
}

/*
 * A connection to uri inside BEGIN READ ONLY with the statement timeout:
 * *out (PQfinish it). Returns 0 or ENGINE_EINVAL with err.
 */
static int
pg_open(struct engine *e, const char *uri, char *err, PGconn **out)
{
	const char	*keys[] = { "dbname", "connect_timeout",
			    "application_name", NULL };
	const char	*vals[4];
	char		 tmo[16], setup[96];
	PGconn		*c = NULL;
	PGresult	*res = NULL;
	int		 rc = 0;

	*out = NULL;
	snprintf(tmo, sizeof(tmo), "%d", e->conf->http_connect_timeout);
	vals[0] = uri;
	vals[1] = tmo;
	vals[2] = "flowcgi-database-tool";
	vals[3] = NULL;
	c = PQconnectdbParams(keys, vals, 1);
	if (c == NULL || PQstatus(c) != CONNECTION_OK) {
		rc = engine_invalid(err, "could not connect to the database: "
		    "%s", c ? PQerrorMessage(c) : "out of memory");
		goto out;
	}
	PQsetNoticeProcessor(c, pg_notice, NULL);
	snprintf(setup, sizeof(setup), "SET LOCAL statement_timeout = %d",
	    e->conf->tools_db_timeout * 1000);
	/* read-only from the first statement on: a later SET TRANSACTION
	 * READ WRITE is refused once a query ran */
	res = PQexec(c, "BEGIN READ ONLY");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		goto pgerr;
	PQclear(res);
	res = PQexec(c, setup);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		goto pgerr;
	PQclear(res);
	res = PQexec(c, "SELECT 1");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		goto pgerr;
	PQclear(res);
	res = NULL;
	*out = c;
	c = NULL;
	goto out;
pgerr:
	rc = engine_invalid(err, "%s", pg_message(res));
out:
	PQclear(res);
	if (c != NULL)
		PQfinish(c);
	err[strcspn(err, "\n")] = '\0';
	return rc;
}

/* Runs sql read-only on PostgreSQL at uri into r. Returns 0, or
 * ENGINE_EINVAL with err (the server's message). */
static int
pg_run(struct engine *e, const char *uri, const char *sql, char *err,
    struct db_rows *r)
{
	char		 cbuf[256];
	PGconn		*c = NULL;
	PGresult	*res = NULL;
	PGcancel	*cancel;
	json_t		*row;
	size_t		 bytes;
	int		 i, n, rc = 0, full = 0, failed = 0;

	if ((rc = pg_open(e, uri, err, &c)) != 0)
		goto out;
	/* the extended protocol: exactly one statement */
	if (!PQsendQueryParams(c, sql, 0, NULL, NULL, NULL, NULL, 0) ||
	    !PQsetSingleRowMode(c)) {
		rc = engine_invalid(err, "%s", PQerrorMessage(c));
		goto out;
	}
	while ((res = PQgetResult(c)) != NULL) {
		switch (PQresultStatus(res)) {
		case PGRES_SINGLE_TUPLE:
			if (json_array_size(r->cols) == 0)
				for (i = 0; i < PQnfields(res); i++)
					json_array_append_new(r->cols,
					    json_string(PQfname(res, i)));
			if (full)
				break;
			row = json_array();
			n = PQnfields(res);
			for (i = 0, bytes = 0; i < n; i++) {
				bytes += (size_t)PQgetlength(res, 0, i) + 1;
				json_array_append_new(row, PQgetisnull(res, 0,
				    i) ? json_null() : pg_value(PQgetvalue(res,
				    0, i), PQftype(res, i)));
			}
			if ((full = rows_add(r, row, bytes)) != 0 &&
			    (cancel = PQgetCancel(c)) != NULL) {
				/* stop the server sending the rest */
				PQcancel(cancel, cbuf, sizeof(cbuf));
				PQfreeCancel(cancel);
			}
			break;
		case PGRES_TUPLES_OK:
			if (json_array_size(r->cols) == 0)
				for (i = 0; i < PQnfields(res); i++)
					json_array_append_new(r->cols,
					    json_string(PQfname(res, i)));
			break;
		case PGRES_COMMAND_OK:
			r->affected = *PQcmdTuples(res) ?
			    strtoll(PQcmdTuples(res), NULL, 10) : -1;
			break;
		default:
			/* the cancel of a full answer is no failure */
			if (!full && !failed) {
				failed = 1;
				rc = engine_invalid(err, "%s",
				    pg_message(res));
			}
			break;
		}
		PQclear(res);
	}
	res = NULL;
out:
	/* never commit: a read-only transaction rolled back */
	PQclear(res);
	if (c != NULL)
		PQfinish(c);
	err[strcspn(err, "\n")] = '\0';
	return rc;
}

/* ====== SQLite ====== */

/* Every write, ATTACH, DETACH and PRAGMA denied. */
static int
lite_auth(void *arg, int op, const char *a, const char *b, const char *c,
    const char *d)
{
	switch (op) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_FUNCTION:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	default:
		return SQLITE_DENY;
	}
}

/* Stops a statement past its deadline. */
static int
lite_progress(void *arg)
{
	const struct timespec	*deadline = arg;
	struct timespec		 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline->tv_sec || (now.tv_sec ==
	    deadline->tv_sec && now.tv_nsec > deadline->tv_nsec);
}

static json_t *
lite_value(sqlite3_stmt *st, int i, size_t *bytes)
{
	const unsigned char	*t;
	char			*b64;
	json_t			*v;
	int			 n;

	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		*bytes += 8;
		return json_integer(sqlite3_column_int64(st, i));
	case SQLITE_FLOAT:
		*bytes += 8;
		return json_real(sqlite3_column_double(st, i));
	case SQLITE_NULL:
		*bytes += 1;
		return json_null();
	case SQLITE_BLOB:
		n = sqlite3_column_bytes(st, i);
		*bytes += (size_t)n;
		b64 = file_b64_encode(sqlite3_column_blob(st, i), (size_t)n);
		v = json_string(b64 ? b64 : "");
		free(b64);
		return v;
	default:
		t = sqlite3_column_text(st, i);
		n = sqlite3_column_bytes(st, i);
		*bytes += (size_t)n;
		v = json_stringn((const char *)t, (size_t)n);
		return v ? v : json_stringn_nocheck((const char *)t,
		    (size_t)n);
	}
}

/* Runs sql read-only on the SQLite file path into r. */
static int
lite_run(struct engine *e, const char *path, const char *sql, char *err,
    struct db_rows *r)
{
	sqlite3		*db = NULL;
	sqlite3_stmt	*st = NULL;
	struct timespec	 deadline;
	const char	*tail = NULL;
	json_t		*row;
	size_t		 bytes;
	int		 i, n, src, rc = 0;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		rc = engine_invalid(err, "could not open the database: %s",
		    db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	sqlite3_set_authorizer(db, lite_auth, NULL);
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += e->conf->tools_db_timeout;
	sqlite3_progress_handler(db, 1000, lite_progress, &deadline);
	if (sqlite3_prepare_v2(db, sql, -1, &st, &tail) != SQLITE_OK) {
		rc = engine_invalid(err, "%s", sqlite3_errmsg(db));
		goto out;
	}
	while (tail != NULL && (isspace((unsigned char)*tail) || *tail == ';'))
		tail++;
	if (st == NULL || (tail != NULL && *tail != '\0')) {
		rc = engine_invalid(err, "%s", st == NULL ? "no statement to "
		    "run" : "one statement at a time: the query has more "
		    "than one");
		goto out;
	}
	n = sqlite3_column_count(st);
	for (i = 0; i < n; i++)
		json_array_append_new(r->cols, json_string(
		    sqlite3_column_name(st, i)));
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		row = json_array();
		for (i = 0, bytes = 0; i < n; i++)
			json_array_append_new(row, lite_value(st, i, &bytes));
		if (rows_add(r, row, bytes))
			break;
	}
	if (src != SQLITE_ROW && src != SQLITE_DONE) {
		rc = engine_invalid(err, "%s", src == SQLITE_INTERRUPT ?
		    "the query ran longer than tools.database_timeout" :
		    sqlite3_errmsg(db));
		goto out;
	}
	r->affected = sqlite3_changes(db);
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

/* ====== Formats ====== */

/* Python's str() of a value, as tablib and csv write it. */
static void
add_py_str(struct dbuf *b, const json_t *v, int csv)
{
	char *s;

	switch (json_typeof(v)) {
	case JSON_STRING:
		dbuf_add(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		dbuf_addf(b, "%lld", (long long)json_integer_value(v));
		break;
	case JSON_REAL:
		tpl_add_py_float(b, json_real_value(v));
		break;
	case JSON_TRUE:
		dbuf_addstr(b, "True");
		break;
	case JSON_FALSE:
		dbuf_addstr(b, "False");
		break;
	case JSON_NULL:
		if (!csv)
			dbuf_addstr(b, "None");
		break;
	default:
		if ((s = json_dumps(v, JSON_COMPACT)) != NULL)
			dbuf_addstr(b, s);
		free(s);
		break;
	}
}

/* tablib's str(dataset): every cell padded to its column's width. */
static int
format_md(const struct db_rows *r, struct dbuf *out)
{
	struct dbuf	 cell;
	size_t		 ncol = json_array_size(r->cols), i, j, k, *w;
	const json_t	*row;
	size_t		 len;
	int		 rc = 0;

	if ((w = calloc(ncol ? ncol : 1, sizeof(*w))) == NULL)
		return ENGINE_ENOMEM;
	dbuf_init(&cell, 0);
	for (j = 0; j < ncol; j++)
		w[j] = engine_utf8_len(json_string_value(json_array_get(
		    r->cols, j)));
	json_array_foreach(r->rows, i, row)
		for (j = 0; j < ncol; j++) {
			dbuf_reset(&cell);
			add_py_str(&cell, json_array_get(row, j), 0);
			len = engine_utf8_len(dbuf_str(&cell));
			if (len > w[j])
				w[j] = len;
		}
	for (i = 0; i < json_array_size(r->rows) + 2; i++) {
		if (i > 0)
			dbuf_addc(out, '\n');
		for (j = 0; j < ncol; j++) {
			if (j > 0)
				dbuf_addc(out, '|');
			dbuf_reset(&cell);
			if (i == 0)
				add_py_str(&cell, json_array_get(r->cols, j), 0);
			else if (i == 1)
				for (k = 0; k < w[j]; k++)
					dbuf_addc(&cell, '-');
			else
				add_py_str(&cell, json_array_get(
				    json_array_get(r->rows, i - 2), j), 0);
			dbuf_addstr(out, dbuf_str(&cell));
			/* str.format pads only a field followed by another
			 * too: the last one as well, as tablib does */
			for (k = engine_utf8_len(dbuf_str(&cell)); k < w[j];
			    k++)
				dbuf_addc(out, ' ');
		}
	}
	if (cell.err != DBUF_OK || out->err != DBUF_OK)
		rc = ENGINE_ENOMEM;
	dbuf_free(&cell);
	free(w);
	return rc;
}

/* Python's csv writer (QUOTE_MINIMAL, "\r\n"): header, then the rows. */
static int
format_csv(const struct db_rows *r, struct dbuf *out)
{
	struct dbuf	 cell;
	const json_t	*row, *list;
	size_t		 ncol = json_array_size(r->cols), i, j;
	const char	*p;
	int		 rc = 0;

	dbuf_init(&cell, 0);
	for (i = 0; i <= json_array_size(r->rows); i++) {
		list = i == 0 ? r->cols : json_array_get(r->rows, i - 1);
		for (j = 0; j < ncol; j++) {
			if (j > 0)
				dbuf_addc(out, ',');
			dbuf_reset(&cell);
			add_py_str(&cell, json_array_get(list, j), 1);
			p = dbuf_str(&cell);
			if (strpbrk(p, ",\"\r\n") != NULL || (ncol == 1 &&
			    *p == '\0' && json_is_string(json_array_get(list,
			    j)))) {
				dbuf_addc(out, '"');
				for (; *p; p++) {
					if (*p == '"')
						dbuf_addc(out, '"');
					dbuf_addc(out, *p);
				}
				dbuf_addc(out, '"');
			} else
				dbuf_addstr(out, p);
		}
		dbuf_addstr(out, "\r\n");
	}
	if (cell.err != DBUF_OK || out->err != DBUF_OK)
		rc = ENGINE_ENOMEM;
	dbuf_free(&cell);
	(void)row;
	return rc;
}

/* The note of a cut answer into buf. */
static void
cut_note(const struct db_rows *r, char *buf, size_t bufsz)
{
	if (r->cut == 1)
		snprintf(buf, bufsz, "Note: the result was cut at %zu rows "
		    "(tools.database_max_rows).", json_array_size(r->rows));
	else
		snprintf(buf, bufsz, "Note: the result was cut at %zu rows, "
		    "its values reaching tools.database_max_bytes (%zu "
		    "bytes).", json_array_size(r->rows), r->max_bytes);
}

/* ====== The tools ====== */

/* The engine and the path or URI of a db_uri: 'p' (PostgreSQL, *out a
 * libpq URI, malloc'd), 's' (SQLite, *out the file's path), 0 neither. */
static int
db_kind(const char *uri, char **out)
{
	const char	*rest;
	size_t		 n;

	*out = NULL;
	if (strncmp(uri, "sqlite:///", 10) == 0) {
		if (uri[10] == '\0')
			return 0;
		*out = strdup(uri + 10);
		return *out ? 's' : -1;
	}
	if (strncmp(uri, "postgresql", 10) == 0)
		rest = uri + 10;
	else if (strncmp(uri, "postgres", 8) == 0)
		rest = uri + 8;
	else
		return 0;
	if (*rest == '+')	/* SQLAlchemy's dialect+driver */
		rest += strcspn(rest, ":");
	if (strncmp(rest, "://", 3) != 0)
		return 0;
	n = strlen(rest) + sizeof("postgresql");
	if ((*out = malloc(n)) == NULL)
		return -1;
	snprintf(*out, n, "postgresql%s", rest);
	return 'p';
}

/* err with the password of uri (scheme://user:password@...) masked. */
static void
scrub_password(char *err, const char *uri)
{
	const char	*p = strstr(uri, "://"), *at, *colon;
	char		 pw[256];
	size_t		 n;

	if (p == NULL || (at = strchr(p + 3, '@')) == NULL)
		return;
	if ((colon = memchr(p + 3, ':', (size_t)(at - p - 3))) == NULL)
		return;
	n = (size_t)(at - colon - 1);
	if (n == 0 || n >= sizeof(pw))
		return;
	memcpy(pw, colon + 1, n);
	pw[n] = '\0';
	llm_scrub(err, pw);
	OPENSSL_cleanse(pw, sizeof(pw));
}

/* The plugin's ^\s*(SELECT|WITH)\s+, case-insensitive. */
static int
is_select(const char *q)
{
	while (isspace((unsigned char)*q))
		q++;
	if (strncasecmp(q, "SELECT", 6) == 0)
		q += 6;
	else if (strncasecmp(q, "WITH", 4) == 0)
		q += 4;
	else
		return 0;
	return isspace((unsigned char)*q);
}

/*
 * The database a call names: the credential db_uri (the parameter db_uri
 * only when it is the same), as db_kind gives it (*target malloc'd).
 * Returns 0, or ENGINE_EINVAL / ENGINE_ENOMEM with err.
 */
static int
db_target(const struct tool_call *call, char *err, const char **uri,
    int *kind, char **target)
{
	const char	*puri;
	char		*bu = NULL;
	int		 rc = 0;

	*target = NULL;
	*uri = json_string_value(json_object_get(call->credentials,
	    "db_uri"));
	puri = tool_param_str(call->params, "db_uri", &bu);
	if (puri != NULL && *puri != '\0' && (*uri == NULL || strcmp(puri,
	    *uri) != 0)) {
		rc = engine_invalid(err, "the db_uri parameter is not honoured "
		    "here: set the Database URI in Settings > Tools "
		    "(database)");
		goto out;
	}
	if (*uri == NULL || **uri == '\0') {
		rc = engine_invalid(err, "Database URI is not provided.");
		goto out;
	}
	if ((*kind = db_kind(*uri, target)) < 0)
		rc = ENGINE_ENOMEM;
	else if (*kind == 0)
		rc = engine_invalid(err, "the Database URI is neither "
		    "postgresql:// nor sqlite:///: flowcgi serves those two");
out:
	free(bu);
	return rc;
}

static int
sql_execute(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct db_rows	 r;
	struct dbuf	 b;
	const char	*uri = NULL, *q, *fmt, *opts, *name;
	char		*bq = NULL, *bf = NULL, *bo = NULL;
	char		*target = NULL, note[200], msg[ENGINE_ERRMAX + 32];
	json_t		*j, *obj, *file;
	size_t		 i, k;
	int		 rc = 0, kind, sel;

	memset(&r, 0, sizeof(r));
	dbuf_init(&b, TOOL_MAX_TEXT);
	r.cols = json_array();
	r.rows = json_array();
	r.affected = -1;
	r.max_rows = e->conf->tools_db_max_rows;
	r.max_bytes = (size_t)e->conf->tools_db_max_bytes;
	q = tool_param_str(call->params, "query", &bq);
	fmt = tool_param_str(call->params, "format", &bf);
	opts = tool_param_str(call->params, "config_options", &bo);
	out->final = 1;		/* nothing below is mended by a retry */
	if ((rc = db_target(call, err, &uri, &kind, &target)) != 0)
		goto out;
	if (q == NULL || *q == '\0') {
		rc = engine_invalid(err, "sql_execute needs the parameter "
		    "query");
		goto out;
	}
	if (opts != NULL && *opts != '\0') {
		/* SQLAlchemy's engine options: checked as the plugin does,
		 * then ignored */
		if ((j = json_loads(opts, JSON_DECODE_ANY, NULL)) == NULL) {
			rc = engine_invalid(err, "Invalid JSON format for "
			    "Connect Config");
			goto out;
		}
		json_decref(j);
	}
	if (fmt == NULL || *fmt == '\0')
		fmt = "json";
	sel = is_select(q);
	if (sel && strcmp(fmt, "json") != 0 && strcmp(fmt, "md") != 0 &&
	    strcmp(fmt, "csv") != 0) {
		rc = engine_invalid(err, strcmp(fmt, "yaml") == 0 ||
		    strcmp(fmt, "html") == 0 || strcmp(fmt, "xlsx") == 0 ?
		    "the format %s is not served by flowcgi: json, md or csv" :
		    "Unsupported format: %s", fmt);
		goto out;
	}
	rc = kind == 'p' ? pg_run(e, target, q, err, &r) :
	    lite_run(e, target, q, err, &r);
	if (!sel) {
		/* the plugin's write branch: its answer is a text */
		out->final = 0;
		if (rc == ENGINE_EINVAL) {
			snprintf(msg, sizeof(msg), "Error: %s", err);
			err[0] = '\0';
			rc = tool_result_text(out, msg, strlen(msg));
		} else if (rc == 0) {
			snprintf(msg, sizeof(msg), "Query executed successfully. "
			    "Affected rows: %lld", (long long)r.affected);
			rc = tool_result_text(out, msg, strlen(msg));
		}
		goto out;
	}
	if (rc != 0)
		goto out;
	out->final = 0;
	if (r.cut)
		cut_note(&r, note, sizeof(note));
	if (strcmp(fmt, "json") == 0) {
		if ((j = json_array()) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		json_array_foreach(r.rows, i, obj) {
			json_t *o = json_object();

			for (k = 0; k < json_array_size(r.cols); k++) {
				name = json_string_value(json_array_get(r.cols,
				    k));
				json_object_set(o, name, json_array_get(obj,
				    k));
			}
			json_array_append_new(j, o);
		}
		if ((rc = tool_result_json(out, json_pack("{s:o}", "result",
		    j))) != 0)
			goto out;
		if (r.cut)
			rc = tool_result_text(out, note, strlen(note));
	} else if (strcmp(fmt, "md") == 0) {
		if ((rc = format_md(&r, &b)) != 0)
			goto out;
		if (r.cut)
			dbuf_addf(&b, "\n\n%s", note);
		rc = b.err == DBUF_OK ? tool_result_text(out, b.p ? b.p : "",
		    b.len) : b.err == DBUF_ETOOBIG ? ENGINE_ELIMIT :
		    ENGINE_ENOMEM;
	} else {
		if ((rc = format_csv(&r, &b)) != 0)
			goto out;
		if ((file = file_from_bytes("result.csv", "text/csv", b.p ?
		    b.p : "", b.len)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if ((rc = tool_result_file(out, file)) != 0)
			goto out;
		if (r.cut)
			rc = tool_result_text(out, note, strlen(note));
	}
out:
	if (rc != 0 && rc != ENGINE_EINVAL)
		out->final = 0;
	if (uri != NULL && err[0] != '\0')
		scrub_password(err, uri);
	free(bq);
	free(bf);
	free(bo);
	free(target);
	dbuf_free(&b);
	json_decref(r.cols);
	json_decref(r.rows);
	return rc;
}

/* ====== text2sql ====== */

/*
 * What the model is told (the plugin's requirements, in flowcgi's
 * words): %s is the dialect.
 */
#define T2S_SYSTEM \
	"You write %s queries. Answer with one complete %s query that runs " \
	"as it is, and nothing else: no explanation, no code fence, no " \
	"escaped characters.\n" \
	"- Use only the tables and columns of the schema given.\n" \
	"- Select only the columns the question needs.\n" \
	"- Do not quote column names as delimited identifiers.\n" \
	"- Unless the question says otherwise, return at most 5 rows.\n" \
	"- Join, filter and order as the question needs, with the right " \
	"join conditions and casts.\n" \
	"- Mind NULL in NOT IN, UNION against UNION ALL, range bounds and " \
	"type mismatches."

/* Python's repr() of one column's description, as the plugin builds it. */
static void
add_column(struct dbuf *b, const char *name, const char *type, int nullable,
    const char *dflt, int64_t pk, int with_pk)
{
	dbuf_addstr(b, "{'name': ");
	tpl_add_py_str(b, name, strlen(name));
	dbuf_addstr(b, ", 'type': ");
	tpl_add_py_str(b, type, strlen(type));
	dbuf_addf(b, ", 'nullable': %s, 'default': ", nullable ? "True" :
	    "False");
	if (dflt != NULL)
		tpl_add_py_str(b, dflt, strlen(dflt));
	else
		dbuf_addstr(b, "None");
	if (with_pk)
		dbuf_addf(b, ", 'primary_key': %lld", (long long)pk);
	else
		dbuf_addstr(b, ", 'primary_key': False");
	dbuf_addc(b, '}');
}

/* The table names of tables (comma-separated) into list, or NULL. */
static int
split_tables(const char *tables, json_t *list)
{
	const char	*p, *end;
	size_t		 n;

	for (p = tables; p != NULL && *p != '\0'; p = *end ? end + 1 : end) {
		end = p + strcspn(p, ",");
		n = (size_t)(end - p);
		if (json_array_append_new(list, json_stringn(p, n)) != 0)
			return ENGINE_ENOMEM;
	}
	return 0;
}

/* The schema of SQLite file path's tables (all when list is empty). */
static int
lite_schema(const char *path, json_t *list, char *err, struct dbuf *b)
{
	sqlite3		*db = NULL;
	sqlite3_stmt	*st = NULL;
	const char	*name;
	size_t		 i;
	int		 rc = 0, n;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK) {
		rc = engine_invalid(err, "could not open the database: %s",
		    db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	if (json_array_size(list) == 0) {
		if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master "
		    "WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
		    "ESCAPE '\\' ORDER BY name", -1, &st, NULL) != SQLITE_OK)
			goto lite_err;
		while (sqlite3_step(st) == SQLITE_ROW)
			json_array_append_new(list, json_string((const char *)
			    sqlite3_column_text(st, 0)));
		sqlite3_finalize(st);
		st = NULL;
	}
	if (sqlite3_prepare_v2(db, "SELECT name, type, \"notnull\", "
	    "dflt_value, pk FROM pragma_table_info(?1)", -1, &st, NULL) !=
	    SQLITE_OK)
		goto lite_err;
	dbuf_addc(b, '{');
	for (i = 0; i < json_array_size(list); i++) {
		name = json_string_value(json_array_get(list, i));
		if (i > 0)
			dbuf_addstr(b, ", ");
		tpl_add_py_str(b, name, strlen(name));
		dbuf_addstr(b, ": [");
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		for (n = 0; sqlite3_step(st) == SQLITE_ROW; n++) {
			if (n > 0)
				dbuf_addstr(b, ", ");
			add_column(b, (const char *)sqlite3_column_text(st, 0),
			    (const char *)sqlite3_column_text(st, 1),
			    sqlite3_column_int(st, 2) == 0, (const char *)
			    sqlite3_column_text(st, 3),
			    sqlite3_column_int64(st, 4), 1);
		}
		dbuf_addc(b, ']');
	}
	dbuf_addc(b, '}');
	goto out;
lite_err:
	rc = engine_invalid(err, "%s", sqlite3_errmsg(db));
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

/* The schema of PostgreSQL's tables (of the current schema). */
static int
pg_schema(struct engine *e, const char *uri, json_t *list, char *err,
    struct dbuf *b)
{
	PGconn		*c = NULL;
	PGresult	*res = NULL;
	const char	*name;
	size_t		 i;
	int		 rc, j;

	if ((rc = pg_open(e, uri, err, &c)) != 0)
		goto out;
	if (json_array_size(list) == 0) {
		res = PQexec(c, "SELECT table_name FROM information_schema."
		    "tables WHERE table_schema = current_schema() AND "
		    "table_type = 'BASE TABLE' ORDER BY table_name");
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
			goto pgerr;
		for (j = 0; j < PQntuples(res); j++)
			json_array_append_new(list, json_string(
			    PQgetvalue(res, j, 0)));
		PQclear(res);
		res = NULL;
	}
	dbuf_addc(b, '{');
	for (i = 0; i < json_array_size(list); i++) {
		name = json_string_value(json_array_get(list, i));
		res = PQexecParams(c, "SELECT column_name, upper(data_type), "
		    "is_nullable = 'YES', column_default FROM "
		    "information_schema.columns WHERE table_schema = "
		    "current_schema() AND table_name = $1 ORDER BY "
		    "ordinal_position", 1, NULL, &name, NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
			goto pgerr;
		if (i > 0)
			dbuf_addstr(b, ", ");
		tpl_add_py_str(b, name, strlen(name));
		dbuf_addstr(b, ": [");
		for (j = 0; j < PQntuples(res); j++) {
			if (j > 0)
				dbuf_addstr(b, ", ");
			add_column(b, PQgetvalue(res, j, 0), PQgetvalue(res,
			    j, 1), PQgetvalue(res, j, 2)[0] == 't',
			    PQgetisnull(res, j, 3) ? NULL : PQgetvalue(res, j,
			    3), 0, 0);
		}
		dbuf_addc(b, ']');
		PQclear(res);
		res = NULL;
	}
	dbuf_addc(b, '}');
	goto out;
pgerr:
	rc = engine_invalid(err, "%s", pg_message(res));
out:
	PQclear(res);
	if (c != NULL)
		PQfinish(c);
	return rc;
}

/*
 * The plugin's text2sql: the schema of the tables (all, or those of
 * `tables`) and the question go to the model of the `model` setting (a
 * model-selector: {provider, model, completion_params}) through the model
 * providers; the answer is its text.
 */
static int
text2sql(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	const json_t		*model = json_object_get(call->params,
				    "model");
	struct llm_message	 msgs[2];
	struct llm_request	 rq;
	struct llm_response	 resp;
	struct dbuf		 schema, sys, user;
	const char		*uri, *q, *provider, *name, *tables, *dialect;
	char			*bq = NULL, *bt = NULL, *target = NULL;
	json_t			*list = NULL;
	int			 rc, kind = 0;

	memset(&resp, 0, sizeof(resp));
	dbuf_init(&schema, TOOL_MAX_TEXT);
	dbuf_init(&sys, 0);
	dbuf_init(&user, TOOL_MAX_TEXT);
	out->final = 1;
	provider = json_string_value(json_object_get(model, "provider"));
	name = json_string_value(json_object_get(model, "model"));
	q = tool_param_str(call->params, "query", &bq);
	tables = tool_param_str(call->params, "tables", &bt);
	if ((rc = db_target(call, err, &uri, &kind, &target)) != 0)
		goto out;
	if (q == NULL || *q == '\0') {
		rc = engine_invalid(err, "text2sql needs the parameter query");
		goto out;
	}
	if (provider == NULL || name == NULL) {
		rc = engine_invalid(err, "text2sql needs its model setting "
		    "({provider, model})");
		goto out;
	}
	if ((list = json_array()) == NULL || split_tables(tables, list) != 0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = kind == 'p' ? pg_schema(e, target, list, err, &schema) :
	    lite_schema(target, list, err, &schema);
	if (rc != 0)
		goto out;
	dialect = kind == 'p' ? "postgresql" : "sqlite";
	dbuf_addf(&sys, T2S_SYSTEM, dialect, dialect);
	dbuf_addstr(&user, "Tables and their columns:\n");
	dbuf_add(&user, schema.p ? schema.p : "{}", schema.p ? schema.len : 2);
	dbuf_addstr(&user, "\n\nThe question: ");
	dbuf_addstr(&user, q);
	if (schema.err != DBUF_OK || sys.err != DBUF_OK || user.err !=
	    DBUF_OK) {
		rc = schema.err == DBUF_ETOOBIG || user.err == DBUF_ETOOBIG ?
		    engine_invalid(err, "the schema is too large for the "
		    "model") : ENGINE_ENOMEM;
		goto out;
	}
	memset(msgs, 0, sizeof(msgs));
	msgs[0].role = LLM_SYSTEM;
	msgs[0].content = sys.p;
	msgs[1].role = LLM_USER;
	msgs[1].content = user.p;
	memset(&rq, 0, sizeof(rq));
	rq.model = name;
	rq.messages = msgs;
	rq.nmessages = 2;
	rq.params = json_object_get(model, "completion_params");
	if ((rc = llm_chat(e, provider, &rq, err, &resp)) != 0) {
		out->final = rc == ENGINE_EINVAL;
		goto out;
	}
	out->final = 0;
	rc = tool_result_text(out, resp.text ? resp.text : "", resp.text_len);
out:
	if (uri != NULL && err[0] != '\0')
		scrub_password(err, uri);
	llm_response_release(&resp);
	json_decref(list);
	dbuf_free(&schema);
	dbuf_free(&sys);
	dbuf_free(&user);
	free(bq);
	free(bt);
	free(target);
	return rc;
}

static int
database_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
database_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	if (strcmp(call->tool, "sql_execute") == 0)
		return sql_execute(e, call, err, out);
	if (strcmp(call->tool, "text2sql") == 0)
		return text2sql(e, call, err, out);
	engine_invalid(err, "tool '%s/%s' is not available in flowcgi",
	    call->provider, call->tool);
	return ENGINE_ENOTFOUND;
}

const struct tool_provider tool_provider_database = {
	"database", database_list, database_invoke, 1,
};
