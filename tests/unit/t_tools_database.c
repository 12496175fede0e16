/*
 * t_tools_database.c — the database provider's sql_execute on a SQLite
 * file and on a private real PostgreSQL (pg_private.h): the json, md
 * and csv answers as the plugin gives them, writes refused (the data
 * unchanged after), one statement at a time, ATTACH denied, the row and
 * byte limits cutting an answer with a note, the statement timeout, the
 * db_uri parameter refused; text2sql asking tests/fakes/fake_llm.py with
 * the schema and the question.
 */
#include "tap.h"
#include "t_node_run.h"
#include "pg_private.h"

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "engine/tools/tools.h"

static char	 lite_path[300];
static json_t	*creds;

static int
call(const char *tool, json_t *p, struct tool_result *r, char *err)
{
	struct tool_call	c;
	int			rc;

	memset(&c, 0, sizeof(c));
	memset(r, 0, sizeof(*r));
	c.provider = "hjlarry/database/database";
	c.provider_type = "builtin";
	c.tool = tool;
	c.params = p;
	c.credentials = creds;
	err[0] = '\0';
	rc = tool_invoke(tn_engine, &c, err, r);
	json_decref(p);
	return rc;
}

static const char *
text_of(const struct tool_result *r)
{
	return r->text.p ? r->text.p : "";
}

/* The json message of r as compact text (malloc'd). */
static char *
json_of(const struct tool_result *r)
{
	json_t *m = json_array_get(r->json, 0);

	return m ? json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER) :
	    strdup("(none)");
}

/* The bytes of r's first file (malloc'd) or NULL. */
static char *
file_of(const struct tool_result *r)
{
	const char	*url = json_string_value(json_object_get(
			    json_array_get(r->files, 0), "url"));
	const char	*comma = url ? strchr(url, ',') : NULL;
	char		*out = NULL;
	size_t		 n;

	if (comma == NULL || file_b64_decode(comma + 1, strlen(comma + 1),
	    &out, &n) != 0)
		return NULL;
	return out;
}

static int
lite_exec(const char *sql)
{
	sqlite3	*db = NULL;
	int	 rc;

	if (sqlite3_open(lite_path, &db) != SQLITE_OK)
		return -1;
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

static int
lite_count(void)
{
	sqlite3		*db = NULL;
	sqlite3_stmt	*st = NULL;
	int		 n = -1;

	if (sqlite3_open_v2(lite_path, &db, SQLITE_OPEN_READONLY, NULL) ==
	    SQLITE_OK && sqlite3_prepare_v2(db, "SELECT count(*) FROM people",
	    -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

static pid_t	llm_pid = -1;
static int	llm_port;

/* fake_llm.py answering every request with one SQL text. */
static int
llm_start(void)
{
	char	 script[400], line[64];
	int	 fds[2];
	FILE	*f;

	snprintf(script, sizeof(script), "%s/script.json", tn_dir);
	if ((f = fopen(script, "w")) == NULL)
		return -1;
	fputs("{\"responses\": [{\"text\": \"SELECT count(*) FROM people\", "
	    "\"repeat\": true}]}", f);
	fclose(f);
	if (pipe(fds) != 0)
		return -1;
	if ((llm_pid = fork()) == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execlp("python3", "python3", "tests/fakes/fake_llm.py",
		    "--script", script, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (llm_pid < 0 || (f = fdopen(fds[0], "r")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) == NULL ||
	    sscanf(line, "%d", &llm_port) != 1) {
		fclose(f);
		return -1;
	}
	fclose(f);
	snprintf(tn_conf.llm_base_url, sizeof(tn_conf.llm_base_url),
	    "http://127.0.0.1:%d/v1", llm_port);
	return 0;
}

/* text2sql against the fake model: the prompt holds the dialect, the
 * schema as the plugin renders it, and the question. */
static void
test_text2sql(const char *dialect, const char *schema)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], url[128];
	const char		*sys, *user;
	json_t			*all = NULL, *body;

	if (llm_pid < 0 && (system("command -v python3 >/dev/null 2>&1") !=
	    0 || !CHECK(llm_start() == 0)))
		return;
	CHECK(call("text2sql", json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:f}}}",
	    "query", "How many people?", "tables", dialect[0] == 'p' ?
	    "items" : "people", "model", "provider", "my-llm", "model",
	    "sql-model", "completion_params", "temperature", 0.0), &r, err) ==
	    0);
	CHECK_STR(text_of(&r), "SELECT count(*) FROM people");
	tool_result_release(&r);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/_requests", llm_port);
	memset(&req, 0, sizeof(req));
	req.url = url;
	req.trusted = 1;
	if (CHECK(outbound_fetch(tn_engine, &req, err, &resp) == 0)) {
		all = json_loadb(resp.body, resp.len, 0, NULL);
		outbound_resp_release(&resp);
	}
	body = json_object_get(json_array_get(all, json_array_size(all) - 1),
	    "body");
	CHECK_STR(json_string_value(json_object_get(body, "model")),
	    "sql-model");
	sys = json_string_value(json_object_get(json_array_get(
	    json_object_get(body, "messages"), 0), "content"));
	user = json_string_value(json_object_get(json_array_get(
	    json_object_get(body, "messages"), 1), "content"));
	CHECK(sys != NULL && strstr(sys, dialect) != NULL);
	CHECK(user != NULL && strstr(user, schema) != NULL);
	if (user != NULL && strstr(user, schema) == NULL)
		printf("# prompt: %s\n", user);
	CHECK(user != NULL && strstr(user, "How many people?") != NULL);
	json_decref(all);
}

static void
test_sqlite(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], uri[400], *s;

	snprintf(lite_path, sizeof(lite_path), "%s/t.db", tn_dir);
	if (!CHECK(lite_exec("CREATE TABLE people (id INTEGER, name TEXT, "
	    "score REAL, note TEXT); INSERT INTO people VALUES (1, 'Ann', "
	    "1.5, NULL), (2, '李雷', 20.25, 'x,y'), (3, 'Bo', 3.0, 'say "
	    "\"hi\"'); CREATE TABLE big (v TEXT);") == 0))
		return;
	snprintf(uri, sizeof(uri), "sqlite:///%s", lite_path);
	creds = json_pack("{s:s}", "db_uri", uri);

	CHECK(call("sql_execute", json_pack("{s:s}", "query", "SELECT id, "
	    "name, score, note FROM people ORDER BY id"), &r, err) == 0);
	s = json_of(&r);
	CHECK_STR(s, "{\"result\":[{\"id\":1,\"name\":\"Ann\",\"score\":1.5,"
	    "\"note\":null},{\"id\":2,\"name\":\"李雷\",\"score\":20.25,"
	    "\"note\":\"x,y\"},{\"id\":3,\"name\":\"Bo\",\"score\":3.0,"
	    "\"note\":\"say \\\"hi\\\"\"}]}");
	free(s);
	CHECK_STR(text_of(&r), "");
	tool_result_release(&r);

	CHECK(call("sql_execute", json_pack("{s:s,s:s}", "query", "  select "
	    "id, name, score, note from people order by id", "format", "md"),
	    &r, err) == 0);
	CHECK_STR(text_of(&r), "id|name|score|note    \n"
	    "--|----|-----|--------\n"
	    "1 |Ann |1.5  |None    \n"
	    "2 |李雷  |20.25|x,y     \n"
	    "3 |Bo  |3.0  |say \"hi\"");
	tool_result_release(&r);

	CHECK(call("sql_execute", json_pack("{s:s,s:s}", "query", "SELECT * "
	    "FROM people ORDER BY id", "format", "csv"), &r, err) == 0);
	CHECK_STR(json_string_value(json_object_get(json_array_get(r.files,
	    0), "filename")), "result.csv");
	s = file_of(&r);
	CHECK_STR(s ? s : "(none)", "id,name,score,note\r\n1,Ann,1.5,\r\n"
	    "2,李雷,20.25,\"x,y\"\r\n3,Bo,3.0,\"say \"\"hi\"\"\"\r\n");
	free(s);
	tool_result_release(&r);

	/* writes: the plugin's write branch, refused read-only */
	CHECK(call("sql_execute", json_pack("{s:s}", "query", "DELETE FROM "
	    "people"), &r, err) == 0);
	CHECK(strncmp(text_of(&r), "Error: ", 7) == 0);
	printf("# %s\n", text_of(&r));
	tool_result_release(&r);
	CHECK(call("sql_execute", json_pack("{s:s}", "query", "ATTACH "
	    "DATABASE 'x.db' AS x"), &r, err) == 0);
	CHECK(strncmp(text_of(&r), "Error: ", 7) == 0);
	tool_result_release(&r);
	CHECK(call("sql_execute", json_pack("{s:s}", "query", "PRAGMA "
	    "journal_mode = DELETE"), &r, err) == 0);
	CHECK(strncmp(text_of(&r), "Error: ", 7) == 0);
	tool_result_release(&r);
	CHECK(call("sql_execute", json_pack("{s:s}", "query", "SELECT 1; "
	    "DELETE FROM people"), &r, err) == ENGINE_EINVAL);
	CHECK(strstr(err, "one statement") != NULL);
	tool_result_release(&r);
	CHECK(call("sql_execute", json_pack("{s:s}", "query", "WITH x AS "
	    "(SELECT 1) DELETE FROM people"), &r, err) == ENGINE_EINVAL);
	tool_result_release(&r);
	CHECK_INT(lite_count(), 3);

	/* the limits */
	tn_conf.tools_db_max_rows = 10;
	CHECK(call("sql_execute", json_pack("{s:s}", "query", "WITH RECURSIVE "
	    "c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 50) "
	    "SELECT x FROM c"), &r, err) == 0);
	CHECK_INT(json_array_size(json_object_get(json_array_get(r.json, 0),
	    "result")), 10);
	CHECK_STR(text_of(&r), "Note: the result was cut at 10 rows "
	    "(tools.database_max_rows).");
	tool_result_release(&r);
	tn_conf.tools_db_max_rows = 1000;
	tn_conf.tools_db_max_bytes = 1024;
	CHECK(call("sql_execute", json_pack("{s:s,s:s}", "query", "WITH "
	    "RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT "
	    "50) SELECT printf('%0100d', x) AS v FROM c", "format", "md"), &r,
	    err) == 0);
	s = strstr(text_of(&r), "\n\nNote: the result was cut at 10 rows, "
	    "its values reaching tools.database_max_bytes (1024 bytes).");
	CHECK(s != NULL && s[strlen(s) - 1] == '.');
	tool_result_release(&r);
	tn_conf.tools_db_max_bytes = 1 << 20;

	/* what is not served */
	CHECK(call("sql_execute", json_pack("{s:s,s:s}", "query", "SELECT 1",
	    "db_uri", "sqlite:////etc/passwd"), &r, err) == ENGINE_EINVAL);
	CHECK(r.final == 1 && strstr(err, "Settings > Tools") != NULL);
	tool_result_release(&r);
	CHECK(call("sql_execute", json_pack("{s:s,s:s}", "query", "SELECT 1",
	    "format", "xlsx"), &r, err) == ENGINE_EINVAL);
	tool_result_release(&r);
	CHECK(call("text2sql", json_pack("{s:s}", "query", "how many?"), &r,
	    err) == ENGINE_EINVAL);
	CHECK(r.final == 1 && strstr(err, "model setting") != NULL);
	tool_result_release(&r);
	test_text2sql("sqlite", "{'people': [{'name': 'id', 'type': 'INTEGER', "
	    "'nullable': True, 'default': None, 'primary_key': 0}, {'name': "
	    "'name', 'type': 'TEXT', 'nullable': True, 'default': None, "
	    "'primary_key': 0}, {'name': 'score', 'type': 'REAL', 'nullable': "
	    "True, 'default': None, 'primary_key': 0}, {'name': 'note', "
	    "'type': 'TEXT', 'nullable': True, 'default': None, "
	    "'primary_key': 0}]}");
	json_decref(creds);
	creds = json_object();
	CHECK(call("sql_execute", json_pack("{s:s}", "query", "SELECT 1"), &r,
	    err) == ENGINE_EINVAL);
	CHECK_STR(err, "Database URI is not provided.");
	tool_result_release(&r);
	json_decref(creds);
	creds = NULL;
}

static int
pg_count(PGconn *c)
{
	PGresult	*res = PQexec(c, "SELECT count(*) FROM items");
	int		 n = PQresultStatus(res) == PGRES_TUPLES_OK ?
			    atoi(PQgetvalue(res, 0, 0)) : -1;

	PQclear(res);
	return n;
}

static void
test_pg(const char *url)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], *s;
	PGconn			*c = PQconnectdb(url);
	PGresult		*res;

	if (!CHECK(PQstatus(c) == CONNECTION_OK)) {
		PQfinish(c);
		return;
	}
	PQsetNoticeProcessor(c, notice_quiet, NULL);
	res = PQexec(c, "DROP TABLE IF EXISTS items; CREATE TABLE items (id "
	    "int, name text, ok boolean, price numeric(6,2), tags jsonb); "
	    "INSERT INTO items VALUES (1, 'pen', true, 1.50, '[\"a\"]'), (2, "
	    "NULL, false, 20.00, NULL)");
	CHECK(PQresultStatus(res) == PGRES_COMMAND_OK);
	PQclear(res);
	creds = json_pack("{s:s}", "db_uri", url);

	CHECK(call("sql_execute", json_pack("{s:s}", "query", "SELECT * FROM "
	    "items ORDER BY id"), &r, err) == 0);
	s = json_of(&r);
	CHECK_STR(s, "{\"result\":[{\"id\":1,\"name\":\"pen\",\"ok\":true,"
	    "\"price\":1.5,\"tags\":[\"a\"]},{\"id\":2,\"name\":null,\"ok\":"
	    "false,\"price\":20.0,\"tags\":null}]}");
	free(s);
	tool_result_release(&r);
	CHECK(call("sql_execute", json_pack("{s:s,s:s}", "query", "SELECT id, "
	    "name, ok FROM items ORDER BY id", "format", "md"), &r, err) == 0);
	CHECK_STR(text_of(&r), "id|name|ok   \n--|----|-----\n1 |pen |True \n"
	    "2 |None|False");
	tool_result_release(&r);

	/* writes refused, whatever way they come */
	CHECK(call("sql_execute", json_pack("{s:s}", "query", "INSERT INTO "
	    "items VALUES (3)"), &r, err) == 0);
	CHECK(strncmp(text_of(&r), "Error: ", 7) == 0 && strstr(text_of(&r),
	    "read-only") != NULL);
	printf("# %s\n", text_of(&r));
	tool_result_release(&r);
	CHECK(call("sql_execute", json_pack("{s:s}", "query", "SELECT 1; "
	    "DELETE FROM items"), &r, err) == ENGINE_EINVAL);
	tool_result_release(&r);
	CHECK(call("sql_execute", json_pack("{s:s}", "query", "COMMIT; "
	    "DELETE FROM items"), &r, err) == 0);
	CHECK(strncmp(text_of(&r), "Error: ", 7) == 0);
	tool_result_release(&r);
	CHECK(call("sql_execute", json_pack("{s:s}", "query", "WITH d AS "
	    "(DELETE FROM items RETURNING id) SELECT * FROM d"), &r, err) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "read-only") != NULL);
	tool_result_release(&r);
	CHECK_INT(pg_count(c), 2);
	test_text2sql("postgresql", "{'items': [{'name': 'id', 'type': "
	    "'INTEGER', 'nullable': True, 'default': None, 'primary_key': "
	    "False}, {'name': 'name', 'type': 'TEXT', 'nullable': True, "
	    "'default': None, 'primary_key': False}, {'name': 'ok', 'type': "
	    "'BOOLEAN', 'nullable': True, 'default': None, 'primary_key': "
	    "False}, {'name': 'price', 'type': 'NUMERIC', 'nullable': True, "
	    "'default': None, 'primary_key': False}, {'name': 'tags', "
	    "'type': 'JSONB', 'nullable': True, 'default': None, "
	    "'primary_key': False}]}");

	/* the row limit stops a long answer */
	tn_conf.tools_db_max_rows = 5;
	CHECK(call("sql_execute", json_pack("{s:s}", "query", "SELECT g FROM "
	    "generate_series(1, 5000000) g"), &r, err) == 0);
	CHECK_INT(json_array_size(json_object_get(json_array_get(r.json, 0),
	    "result")), 5);
	CHECK_STR(text_of(&r), "Note: the result was cut at 5 rows "
	    "(tools.database_max_rows).");
	tool_result_release(&r);
	tn_conf.tools_db_max_rows = 1000;
	/* statement_timeout */
	tn_conf.tools_db_timeout = 1;
	CHECK(call("sql_execute", json_pack("{s:s}", "query", "SELECT "
	    "pg_sleep(5)"), &r, err) == ENGINE_EINVAL);
	CHECK(strstr(err, "statement timeout") != NULL);
	tool_result_release(&r);
	tn_conf.tools_db_timeout = 30;
	json_decref(creds);
	creds = NULL;
	PQfinish(c);
}

int
main(void)
{
	const char	*url;
	int		 rc;

	tn_open();
	test_sqlite();
	if ((rc = pg_private_start(tn_dir, &url)) == 77)
		SKIP("no PostgreSQL here (Debian: postgresql)");
	else if (CHECK(rc == 0))
		test_pg(url);
	if (pg_dir[0] != '\0')
		(void)pg_ctl("stop");
	if (llm_pid > 0) {
		kill(llm_pid, SIGTERM);
		waitpid(llm_pid, NULL, 0);
	}
	tn_close();
	return tap_done();
}
