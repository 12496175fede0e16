/*
 * t_node_oom.c — nodes run while allocations fail, one at each point in
 * turn: a node either succeeds with the same inputs, outputs, trace and
 * branch as when memory sufficed, or it fails saying "out of memory";
 * never a success with a member, element or branch left out. The nodes
 * run on their own (no executor), against a pool of start values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"
#include "json_oom.h"
#include "tap.h"

static struct pool *pool;

/* The node type named type. */
static const struct node_type *
type_of(const char *type)
{
	const struct node_type	*nt;
	size_t			 i;

	for (i = 0; (nt = node_type_at(i)) != NULL; i++)
		if (strcmp(nt->type, type) == 0)
			return nt;
	return NULL;
}

struct result {
	int	 rc;
	json_t	*inputs, *outputs, *process_data;
	char	 handle[128];
	char	 err[ENGINE_ERRMAX];
};

static void
result_release(struct result *r)
{
	json_decref(r->inputs);
	json_decref(r->outputs);
	json_decref(r->process_data);
	memset(r, 0, sizeof(*r));
}

/* Runs node data (its type's run) once; oom: json_oom_at's n, or -1. */
static void
run_node(json_t *data, long oom, struct result *r, int *hit)
{
	const struct node_type	*nt;
	struct gnode		 n;
	struct node_ctx		 c;

	memset(r, 0, sizeof(*r));
	memset(&n, 0, sizeof(n));
	memset(&c, 0, sizeof(c));
	nt = type_of(json_string_value(json_object_get(data, "type")));
	n.id = "n1";
	n.type = nt->type;
	n.title = "N";
	n.data = data;
	n.nt = nt;
	c.node = &n;
	c.pool = pool;
	c.handle = "source";
	c.inputs = json_object();
	c.outputs = json_object();
	json_oom_at(oom);
	r->rc = nt->run(&c);
	*hit = json_oom_happened();
	json_oom_at(-1);
	r->inputs = c.inputs;
	r->outputs = c.outputs;
	r->process_data = c.process_data;
	json_decref(c.metadata);
	snprintf(r->handle, sizeof(r->handle), "%s", c.handle ? c.handle :
	    "");
	snprintf(r->err, sizeof(r->err), "%s", c.err);
}

/*
 * Runs node data once with memory, then failing each allocation in turn:
 * every success must equal the first, every failure be out of memory.
 */
static void
check_node(const char *text)
{
	struct result	 want, got;
	json_t		*data = json_loads(text, 0, NULL);
	long		 k;
	int		 hit, partial = 0, other = 0, nomem = 0;

	if (!CHECK(data != NULL))
		return;
	run_node(data, -1, &want, &hit);
	if (!CHECK(want.rc == 0))
		printf("# %s: %s\n", text, want.err);
	for (k = 0; k < 5000; k++) {
		run_node(data, k, &got, &hit);
		if (got.rc == 0 && (!json_equal(got.outputs, want.outputs) ||
		    !json_equal(got.inputs, want.inputs) ||
		    (want.process_data != NULL && !json_equal(
		    got.process_data, want.process_data)) ||
		    strcmp(got.handle, want.handle) != 0))
			partial++;
		if (got.rc != 0 && strstr(got.err, "out of memory") == NULL) {
			other++;
			printf("# allocation %ld: %s\n", k, got.err);
		}
		nomem += got.rc != 0;
		result_release(&got);
		if (!hit)
			break;
	}
	if (!CHECK(partial == 0 && other == 0))
		printf("# %s: %d partial, %d other\n", text, partial, other);
	CHECK(nomem > 0);
	CHECK(k < 5000);
	result_release(&want);
	json_decref(data);
}

/* pool[node][name] = v (taken). 0 or ENGINE_ENOMEM. */
static int
put(const char *node, const char *name, json_t *v)
{
	int rc = pool_set(pool, node, name, v);

	json_decref(v);
	return rc;
}

int
main(void)
{
	json_oom_install();
	if ((pool = pool_new(NULL)) == NULL ||
	    put("start", "nums", json_pack("[i,i,i,i]", 3, 1, 4, 2)) != 0 ||
	    put("start", "words", json_pack("[s,s,s]", "pear", "apple",
	    "fig")) != 0 ||
	    put("start", "name", json_string("Ada")) != 0 ||
	    put("sys", "query", json_string("hi")) != 0) {
		CHECK(0);
		return tap_done();
	}
	/* list-operator: filter, order, limit, first and last */
	check_node("{\"type\": \"list-operator\", \"variable\": [\"start\","
	    " \"nums\"], \"filter_by\": {\"enabled\": true, \"conditions\":"
	    " [{\"comparison_operator\": \">\", \"value\": \"1\"}]},"
	    " \"order_by\": {\"enabled\": true, \"value\": \"desc\"},"
	    " \"limit\": {\"enabled\": true, \"size\": 2}}");
	check_node("{\"type\": \"list-operator\", \"variable\": [\"start\","
	    " \"words\"], \"order_by\": {\"enabled\": true, \"value\":"
	    " \"asc\"}}");
	/* if-else: a template as expected value, a list of them, cases */
	check_node("{\"type\": \"if-else\", \"cases\": [{\"case_id\": \"no\","
	    " \"logical_operator\": \"and\", \"conditions\": [{"
	    "\"variable_selector\": [\"start\", \"name\"],"
	    " \"comparison_operator\": \"is\", \"value\": \"Bob\"}]},"
	    " {\"case_id\": \"yes\", \"logical_operator\": \"or\","
	    " \"conditions\": [{\"variable_selector\": [\"start\", \"name\"],"
	    " \"comparison_operator\": \"is\", \"value\": "
	    "\"{{#start.name#}}\"}, {\"variable_selector\": [\"start\","
	    " \"words\"], \"comparison_operator\": \"contains\", \"value\":"
	    " \"fig\"}]}]}");
	/* variable-aggregator, with groups and without */
	check_node("{\"type\": \"variable-aggregator\", \"variables\":"
	    " [[\"start\", \"missing\"], [\"start\", \"name\"]]}");
	check_node("{\"type\": \"variable-aggregator\", \"advanced_settings\":"
	    " {\"group_enabled\": true, \"groups\": [{\"group_name\": \"a\","
	    " \"variables\": [[\"start\", \"name\"]]}, {\"group_name\": \"b\","
	    " \"variables\": [[\"start\", \"nums\"]]}]}}");
	/* start: its variables and the sys.* copies */
	check_node("{\"type\": \"start\", \"variables\": [{\"variable\":"
	    " \"name\"}, {\"variable\": \"nums\"}]}");
	/* template-transform: variables into a Jinja2 template */
	check_node("{\"type\": \"template-transform\", \"template\":"
	    " \"{% for w in words %}{{ w|upper }},{% endfor %} {{ name }}\","
	    " \"variables\": [{\"variable\": \"words\", \"value_selector\":"
	    " [\"start\", \"words\"]}, {\"variable\": \"name\","
	    " \"value_selector\": [\"start\", \"name\"]}]}");
	pool_free(pool);
	return tap_done();
}
