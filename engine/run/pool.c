/*
 * pool.c — the variable pool: values keyed by [node id, name], reached by
 * selectors with a path into the value. Values are jansson references and
 * never change once set; a mutex guards the maps so parallel branches can
 * share one pool.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"

struct pool {
	pthread_mutex_t	 mu;
	json_t		*vars;		/* node -> {name -> value} */
	json_t		*owned;		/* node ids kept here, not parent */
	struct pool	*parent;
};

struct pool *
pool_new(struct pool *parent)
{
	struct pool *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	p->vars = json_object();
	p->owned = json_object();
	p->parent = parent;
	if (p->vars == NULL || p->owned == NULL) {
		pool_free(p);
		return NULL;
	}
	return p;
}

void
pool_free(struct pool *p)
{
	if (p == NULL)
		return;
	json_decref(p->vars);
	json_decref(p->owned);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

int
pool_own(struct pool *p, const char *node_id)
{
	int rc;

	pthread_mutex_lock(&p->mu);
	rc = json_object_set_new(p->owned, node_id, json_true());
	pthread_mutex_unlock(&p->mu);
	return rc == 0 ? 0 : ENGINE_ENOMEM;
}

/* The pool that holds node's values: p if it owns them or has no parent. */
static struct pool *
pool_for(struct pool *p, const char *node)
{
	int own;

	while (p->parent != NULL) {
		pthread_mutex_lock(&p->mu);
		own = json_object_get(p->owned, node) != NULL;
		pthread_mutex_unlock(&p->mu);
		if (own)
			break;
		p = p->parent;
	}
	return p;
}

int
pool_set(struct pool *p, const char *node, const char *name, json_t *v)
{
	json_t	*m;
	int	 rc = ENGINE_ENOMEM;

	if (v == NULL)		/* the constructor of v failed */
		return ENGINE_ENOMEM;
	p = pool_for(p, node);
	pthread_mutex_lock(&p->mu);
	if ((m = json_object_get(p->vars, node)) == NULL &&
	    ((m = json_object()) == NULL ||
	    json_object_set_new(p->vars, node, m) != 0))
		goto out;	/* json_object_set_new freed m */
	if (json_object_set(m, name, v) == 0)
		rc = 0;
out:
	pthread_mutex_unlock(&p->mu);
	return rc;
}

int
pool_set_all(struct pool *p, const char *node, const json_t *obj)
{
	const char	*k;
	json_t		*v;
	int		 rc;

	json_object_foreach((json_t *)obj, k, v)
		if ((rc = pool_set(p, node, k, v)) != 0)
			return rc;
	return 0;
}

/* Walks path parts into v: object keys, or array indexes. */
static json_t *
walk(json_t *v, const char *const *parts, size_t n)
{
	size_t	 i;
	char	*end;
	long	 idx;

	for (i = 0; i < n && v != NULL; i++) {
		if (json_is_object(v))
			v = json_object_get(v, parts[i]);
		else if (json_is_array(v)) {
			idx = strtol(parts[i], &end, 10);
			v = *end == '\0' && end != parts[i] && idx >= 0 ?
			    json_array_get(v, (size_t)idx) : NULL;
		} else
			v = NULL;
	}
	return v;
}

json_t *
pool_get_parts(struct pool *p, const char *const *parts, size_t nparts)
{
	json_t *m, *v = NULL;

	if (nparts < 2)
		return NULL;
	p = pool_for(p, parts[0]);
	pthread_mutex_lock(&p->mu);
	if ((m = json_object_get(p->vars, parts[0])) != NULL &&
	    (v = json_object_get(m, parts[1])) != NULL)
		v = json_incref(walk(v, parts + 2, nparts - 2));
	pthread_mutex_unlock(&p->mu);
	return v;
}

json_t *
pool_get(struct pool *p, const json_t *selector)
{
	const char	*parts[16];
	size_t		 n, i;

	if (!json_is_array(selector) || (n = json_array_size(selector)) < 2 ||
	    n > 16)
		return NULL;
	for (i = 0; i < n; i++)
		if ((parts[i] = json_string_value(json_array_get(selector,
		    i))) == NULL)
			return NULL;
	return pool_get_parts(p, parts, n);
}

json_t *
pool_get_node(struct pool *p, const char *node)
{
	json_t *m, *out;

	p = pool_for(p, node);
	pthread_mutex_lock(&p->mu);
	m = json_object_get(p->vars, node);
	out = m != NULL ? json_copy(m) : json_object();
	pthread_mutex_unlock(&p->mu);
	return out;
}
