/*
 * tool.c — a dataset as a tool an agent may call, as Dify's
 * DatasetRetrieverTool: named "dataset_" + the dataset's id with "_" for
 * "-", described by the dataset's description (or "useful for when you
 * want to answer queries about the <name>", line breaks removed), taking
 * {query}; its answer is the contents of the segments found, one a line.
 * The agent node (engine/nodes/agent.c) holds the tool entries that
 * legacy.c makes from an agent-chat app's dataset_configs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/knowledge/knowledge.h"
#include "engine/records/records.h"

int
kb_tool_describe(struct engine *e, const json_t *cfg, char name[65],
    char **description, json_t **schema)
{
	const char	*id = json_string_value(json_object_get(cfg,
			    "dataset_id"));
	const char	*d, *s;
	json_t		*ds = NULL;
	char		*buf = NULL, *q;
	size_t		 i;
	int		 rc = ENGINE_ENOMEM;

	*description = NULL;
	*schema = NULL;
	if ((ds = kb_dataset_load(e, id)) == NULL)
		return ENGINE_ENOTFOUND;
	snprintf(name, 65, "dataset_%s", id);
	for (i = 0; name[i] != '\0'; i++)
		if (name[i] == '-')
			name[i] = '_';
	d = json_string_value(json_object_get(ds, "description"));
	if (d != NULL && *d != '\0')
		buf = strdup(d);
	else if ((buf = malloc(strlen(json_string_value(json_object_get(ds,
	    "name"))) + 64)) != NULL)
		snprintf(buf, strlen(json_string_value(json_object_get(ds,
		    "name"))) + 64, "useful for when you want to answer "
		    "queries about the %s", json_string_value(
		    json_object_get(ds, "name")));
	if (buf == NULL)
		goto out;
	for (s = buf, q = buf; *s != '\0'; s++)
		if (*s != '\n' && *s != '\r')
			*q++ = *s;
	*q = '\0';
	if ((*schema = json_pack("{s:s,s:{s:{s:s,s:s}},s:[s]}", "type",
	    "object", "properties", "query", "type", "string", "description",
	    "Query for the dataset to be used to retrieve the dataset.",
	    "required", "query")) == NULL)
		goto out;
	*description = buf;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	json_decref(ds);
	return rc;
}

int
kb_tool_run(struct engine *e, const json_t *cfg, const char *args,
    char **out)
{
	const char	*id = json_string_value(json_object_get(cfg,
			    "dataset_id"));
	json_t		*a = json_loads(args && *args ? args : "{}", 0, NULL);
	json_t		*ds = NULL, *hits = NULL, *h, *rm;
	const char	*query = json_string_value(json_object_get(a, "query"));
	char		 err[ENGINE_ERRMAX] = "";
	struct dbuf	 b = { 0 };
	double		 th = 0;
	size_t		 i;
	int		 top_k, rc;

	*out = NULL;
	if (query == NULL || *query == '\0') {
		json_decref(a);
		*out = strdup("tool error: query is required");
		return *out ? 0 : ENGINE_ENOMEM;
	}
	if ((ds = kb_dataset_load(e, id)) == NULL) {
		json_decref(a);
		*out = strdup("tool error: the dataset is gone");
		return *out ? 0 : ENGINE_ENOMEM;
	}
	/* the app's top_k and threshold, else the dataset's, as Dify's
	 * to_dataset_retriever_tool (its default top_k 2) */
	rm = json_object_get(ds, "retrieval_model_dict");
	top_k = (int)json_integer_value(json_object_get(cfg, "top_k"));
	if (top_k <= 0)
		top_k = (int)json_integer_value(json_object_get(rm, "top_k"));
	if (top_k <= 0)
		top_k = 2;
	if (json_is_number(json_object_get(cfg, "score_threshold")))
		th = json_number_value(json_object_get(cfg, "score_threshold"));
	else if (json_is_true(json_object_get(rm, "score_threshold_enabled")))
		th = json_number_value(json_object_get(rm, "score_threshold"));
	if ((rc = kb_search(e, id, query, NULL, top_k, th, err, &hits)) !=
	    0) {
		size_t n = strlen(err) + 32;

		/* the model sees the failure and may try otherwise */
		if ((*out = malloc(n)) != NULL)
			snprintf(*out, n, "tool error: %s", err);
		rc = *out ? 0 : ENGINE_ENOMEM;
		goto out;
	}
	json_array_foreach(hits, i, h) {
		if (i > 0)
			dbuf_addstr(&b, "\n");
		dbuf_addstr(&b, json_string_value(json_object_get(
		    json_object_get(h, "segment"), "content")));
	}
	*out = dbuf_take(&b, NULL);
	rc = *out ? 0 : ENGINE_ENOMEM;
out:
	json_decref(a);
	json_decref(ds);
	json_decref(hits);
	return rc;
}
