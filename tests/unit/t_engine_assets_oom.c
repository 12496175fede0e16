/*
 * t_engine_assets_oom.c — an app's file tree listed while allocations
 * fail, one at each point in turn: the listing (children_view) is whole or
 * it is ENGINE_ENOMEM, never a tree with folders, files or fields left
 * out. The tree is made in memory (jansson's parser itself drops a byte
 * when its buffer cannot grow, so a tree read from the store under the
 * same failures would test jansson, not us).
 */
#include "engine/records/assets.c"
#include "json_oom.h"
#include "tap.h"

static void
node_add(json_t *nodes, const char *id, const char *type, const char *name,
    const char *parent, int order)
{
	json_object_set_new(nodes, id, json_pack("{s:s,s:s,s:s,s:s?,s:i,s:s,"
	    "s:i,s:s,s:i,s:i}", "id", id, "node_type", type, "name", name,
	    "parent_id", parent, "order", order, "extension", "", "size", 0,
	    "checksum", "", "created_at", 1, "updated_at", 1));
}

/* Nodes in a listing, in all folders. */
static size_t
count(const json_t *kids)
{
	json_t	*k;
	size_t	 i, n = 0;

	json_array_foreach(kids, i, k)
		n += 1 + count(json_object_get(k, "children"));
	return n;
}

/* Fields present in every node of a listing. */
static int
fields_whole(const json_t *kids)
{
	json_t	*k;
	size_t	 i;

	json_array_foreach(kids, i, k)
		if (json_object_size(k) < 11 || !json_is_string(
		    json_object_get(k, "path")) ||
		    !fields_whole(json_object_get(k, "children")))
			return 0;
	return 1;
}

static void
test_listing_oom(void)
{
	struct tree	 tr = { NULL, 0 };
	json_t		*out, *skill;
	long		 k;
	int		 rc, partial = 0, other = 0, nomem = 0, hit;

	tr.nodes = json_object();
	node_add(tr.nodes, "a", "file", "a.txt", NULL, 0);
	node_add(tr.nodes, "d", "folder", "docs", NULL, 1);
	node_add(tr.nodes, "d1", "file", "one.md", "d", 0);
	node_add(tr.nodes, "d2", "folder", "deep", "d", 1);
	node_add(tr.nodes, "d21", "file", "x", "d2", 0);
	node_add(tr.nodes, "s", "folder", "skill", NULL, 2);
	node_add(tr.nodes, "s1", "file", "SKILL.md", "s", 0);
	json_object_set_new(json_object_get(tr.nodes, "s1"), "front_matter",
	    json_pack("{s:s}", "name", "skill"));

	CHECK_INT(children_view(&tr, NULL, 0, &out), 0);
	CHECK_INT(count(out), 7);
	CHECK(fields_whole(out));
	skill = json_object_get(json_array_get(out, 2), "skill");
	CHECK_STR(json_string_value(json_object_get(skill, "name")), "skill");
	json_decref(out);

	for (k = 0; k < 2000; k++) {
		out = NULL;
		json_oom_at(k);
		rc = children_view(&tr, NULL, 0, &out);
		hit = json_oom_happened();
		json_oom_at(-1);
		if (rc == 0 && (count(out) != 7 || !fields_whole(out) ||
		    !json_is_object(json_object_get(json_array_get(out, 2),
		    "skill"))))
			partial++;
		if (rc != 0 && (rc != ENGINE_ENOMEM || out != NULL))
			other++;
		nomem += rc == ENGINE_ENOMEM;
		json_decref(out);
		if (!hit)
			break;	/* the listing needs fewer allocations */
	}
	CHECK_INT(partial, 0);
	CHECK_INT(other, 0);
	CHECK(nomem > 20);	/* the failures were met, and reported */
	CHECK(k < 2000);	/* and it succeeded once memory sufficed */
	tree_release(&tr);
}

int
main(void)
{
	json_oom_install();
	test_listing_oom();
	return tap_done();
}
