/*
 * t_engine_upgrade_oom.c — the upgrade's conversions while allocations
 * fail, one at each point in turn: an agent's llm data (agent_to_llm) is
 * whole or it is NULL with no reason (out of memory, which the upgrade
 * answers as ENGINE_ENOMEM), never an llm node with fields, tools or
 * messages left out; a graph's references (rewrite_refs) are all
 * rewritten or the walk says -1.
 */
#include "engine/records/upgrade.c"
#include "json_oom.h"
#include "tap.h"

static const char agent_data[] =
    "{\"type\": \"agent\", \"title\": \"Helper\", \"desc\": \"d\","
    " \"error_strategy\": \"default-value\","
    " \"default_value\": [{\"key\": \"text\", \"type\": \"string\","
    "  \"value\": \"none\"}],"
    " \"memory\": {\"window\": {\"enabled\": true, \"size\": 5}},"
    " \"agent_parameters\": {"
    "  \"model\": {\"value\": {\"provider\": \"openai\","
    "   \"model\": \"gpt-4o\", \"mode\": \"chat\","
    "   \"completion_params\": {\"temperature\": 0.2}}},"
    "  \"instruction\": {\"value\": \"Be brief.\"},"
    "  \"query\": {\"value\": [\"sys\", \"query\"]},"
    "  \"maximum_iterations\": {\"value\": 7},"
    "  \"tools\": {\"value\": ["
    "   {\"provider_name\": \"time\", \"tool_name\": \"now\","
    "    \"type\": \"builtin\", \"credential_id\": \"c1\","
    "    \"parameters\": {\"tz\": \"UTC\"}},"
    "   {\"provider_name\": \"time\", \"tool_name\": \"diff\"},"
    "   {\"provider_name\": \"web\", \"tool_name\": \"get\","
    "    \"settings\": {\"a\": 1}}]}}}";

static const char graph_text[] =
    "{\"nodes\": [{\"id\": \"l\", \"data\": {\"type\": \"llm\"}},"
    " {\"id\": \"a\", \"data\": {\"type\": \"answer\","
    "  \"answer\": \"{{#l.text#}} and {{#l.reasoning_content#}}\","
    "  \"sel\": [\"l\", \"text\"], \"deep\": [[\"l\", \"reasoning_content\","
    "  \"x\"], \"{{#l.text.y#}}\"]}}], \"edges\": []}";

/* Values in v, counting every member and element. */
static size_t
count(const json_t *v)
{
	const char	*k;
	json_t		*x;
	size_t		 i, n = 1;

	if (json_is_object(v))
		json_object_foreach((json_t *)v, k, x)
			n += count(x);
	else if (json_is_array(v))
		json_array_foreach(v, i, x)
			n += count(x);
	return n;
}

static void
test_agent_to_llm_oom(void)
{
	json_t		*d = json_loads(agent_data, 0, NULL), *llm;
	const char	*why;
	size_t		 want;
	long		 k;
	int		 partial = 0, other = 0, nomem = 0, hit;

	CHECK(d != NULL);
	llm = agent_to_llm(d, &why);
	CHECK(llm != NULL && why == NULL);
	want = count(llm);
	CHECK(want > 60);
	CHECK_INT(json_array_size(json_object_get(llm, "tools")), 3);
	CHECK_INT(json_array_size(json_object_get(llm, "default_value")), 2);
	json_decref(llm);

	for (k = 0; k < 5000; k++) {
		json_oom_at(k);
		llm = agent_to_llm(d, &why);
		hit = json_oom_happened();
		json_oom_at(-1);
		if (llm != NULL && count(llm) != want)
			partial++;
		if (llm == NULL && why != NULL)
			other++;
		nomem += llm == NULL;
		json_decref(llm);
		if (!hit)
			break;
	}
	CHECK_INT(partial, 0);
	CHECK_INT(other, 0);
	CHECK(nomem > 40);
	CHECK(k < 5000);
	json_decref(d);
}

static void
test_rewrite_refs_oom(void)
{
	json_t	*g = json_loads(graph_text, 0, NULL), *ids, *want, *v;
	long	 k;
	int	 partial = 0, nomem = 0, hit, rc;

	ids = json_pack("{s:b}", "l", 1);
	want = json_deep_copy(g);
	CHECK_INT(rewrite_refs(want, ids, 0), 0);
	CHECK(!json_equal(want, g));
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(json_object_get(want, "nodes"), 1), "data"),
	    "answer")), "{{#l.generation.content#}} and "
	    "{{#l.generation.reasoning_content#}}");

	for (k = 0; k < 2000; k++) {
		v = json_deep_copy(g);
		json_oom_at(k);
		rc = rewrite_refs(v, ids, 0);
		hit = json_oom_happened();
		json_oom_at(-1);
		if (rc == 0 && !json_equal(v, want))
			partial++;
		nomem += rc != 0;
		json_decref(v);
		if (!hit)
			break;
	}
	CHECK_INT(partial, 0);
	CHECK(nomem > 4);
	CHECK(k < 2000);
	json_decref(want);
	json_decref(ids);
	json_decref(g);
}

int
main(void)
{
	json_oom_install();
	test_agent_to_llm_oom();
	test_rewrite_refs_oom();
	return tap_done();
}
