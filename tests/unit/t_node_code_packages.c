/*
 * t_node_code_packages.c — python3 code nodes import what Dify users'
 * apps import: the Debian packages contrib/install-deps.sh brings
 * (requests, httpx, numpy, pandas, jinja2, beautifulsoup4, lxml, yaml,
 * jieba, matplotlib, dateutil, pytz) inside the real sandbox; a folder of
 * code.python_paths (an admin's virtualenv) is found on PYTHONPATH and
 * read-only there; a request without network says which setting holds it.
 *
 * Needs bwrap, python3 and those packages (all installed by
 * contrib/install-deps.sh): a missing bwrap is one counted skip (NEED),
 * a missing package fails, naming it.
 */
#include <sys/stat.h>

#include "tests/unit/tap.h"
#include "tests/unit/t_node_run.h"

static json_t *
code_node(const char *code, const char *type)
{
	return json_pack("{s:s,s:s,s:s,s:[],s:{s:{s:s,s:[]}}}", "type", "code",
	    "code_language", "python3", "code", code, "variables", "outputs",
	    "a", "type", type, "children");
}

static const char *
run(json_t *node, struct tn_run *r)
{
	if (tn_run1(node, json_pack("{s:[s,s]}", "a", "n1", "a"), NULL, r) != 0)
		return "(no run)";
	return r->error != NULL ? r->error : "";
}

static void
test_packages(void)
{
	static const char *const mods[] = { "requests", "httpx", "numpy",
		"pandas", "jinja2", "bs4", "lxml", "yaml", "jieba",
		"matplotlib", "dateutil", "pytz", NULL };
	struct tn_run	 r;
	char		 code[256];
	const char	*e;
	size_t		 i;

	for (i = 0; mods[i] != NULL; i++) {
		snprintf(code, sizeof(code), "import %s\ndef main():\n    "
		    "return {'a': '%s ' + str(getattr(%s, '__version__', "
		    "'ok'))}\n", mods[i], mods[i], mods[i]);
		e = run(code_node(code, "string"), &r);
		if (!CHECK(strcmp(e, "") == 0))
			printf("# %s cannot be imported in a code node "
			    "(contrib/install-deps.sh installs it)\n", mods[i]);
		else
			printf("# %s\n", json_string_value(json_object_get(
			    r.outputs, "a")));
		tn_release(&r);
	}
	/* what the apps do with them */
	e = run(code_node("import pandas as pd, jieba\n"
	    "def main():\n"
	    "    df = pd.DataFrame({'x': [1, 2, 3]})\n"
	    "    words = '/'.join(jieba.cut('我来到北京清华大学'))\n"
	    "    return {'a': str(int(df.x.sum())) + ' ' + words}\n", "string"),
	    &r);
	CHECK_STR(e, "");
	CHECK_STR(json_string_value(json_object_get(r.outputs, "a")),
	    "6 我/来到/北京/清华大学");
	tn_release(&r);
	e = run(code_node("import matplotlib\nmatplotlib.use('Agg')\n"
	    "import matplotlib.pyplot as plt, io\n"
	    "def main():\n"
	    "    plt.plot([1, 2], [3, 4])\n"
	    "    b = io.BytesIO()\n"
	    "    plt.savefig(b, format='png')\n"
	    "    return {'a': b.getvalue()[:4].hex()}\n", "string"), &r);
	CHECK_STR(e, "");
	CHECK_STR(json_string_value(json_object_get(r.outputs, "a")),
	    "89504e47");
	tn_release(&r);
}

static void
test_python_paths(void)
{
	struct tn_run	 r;
	char		 dir[] = "/tmp/t_pypaths.XXXXXX", path[256];
	const char	*e;
	FILE		*f;

	if (!CHECK(mkdtemp(dir) != NULL))
		return;
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/site-packages", dir);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/site-packages/flowcgi_probe.py", dir);
	f = fopen(path, "w");
	fputs("ANSWER = 42\n", f);
	fclose(f);
	chmod(path, 0644);
	/* not on the path: the node says what is available */
	e = run(code_node("import flowcgi_probe\ndef main():\n    return "
	    "{'a': flowcgi_probe.ANSWER}\n", "number"), &r);
	CHECK(strstr(e, "No module named 'flowcgi_probe'") != NULL);
	tn_release(&r);
	snprintf(tn_conf.code_python_paths, sizeof(tn_conf.code_python_paths),
	    "/nonexistent/lib, %s/site-packages/", dir);
	e = run(code_node("import flowcgi_probe, os, sys\ndef main():\n"
	    "    return {'a': flowcgi_probe.ANSWER}\n", "number"), &r);
	CHECK_STR(e, "");
	CHECK_INT(json_integer_value(json_object_get(r.outputs, "a")), 42);
	tn_release(&r);
	/* read-only there */
	e = run(code_node("import flowcgi_probe, os\ndef main():\n"
	    "    try:\n"
	    "        open(os.path.dirname(flowcgi_probe.__file__) + '/x', 'w')\n"
	    "        return {'a': 'written'}\n"
	    "    except OSError as e:\n"
	    "        return {'a': 'refused'}\n", "string"), &r);
	CHECK_STR(e, "");
	CHECK_STR(json_string_value(json_object_get(r.outputs, "a")),
	    "refused");
	tn_release(&r);
	tn_conf.code_python_paths[0] = '\0';
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

static void
test_network(void)
{
	struct tn_run	 r;
	const char	*e;

	tn_conf.sandbox_network = 0;
	e = run(code_node("import requests\ndef main():\n"
	    "    return {'a': requests.get('http://example.com', "
	    "timeout=5).text}\n", "string"), &r);
	if (!CHECK(strstr(e, "sandbox.network is false") != NULL))
		printf("# error: %s\n", e);
	tn_release(&r);
}

int
main(void)
{
	if (!NEED("bwrap"))
		return tap_done();
	tn_open();
	test_packages();
	test_python_paths();
	test_network();
	tn_close();
	return tap_done();
}
