/* shape.h: transformer shapes by name (LLaMA-2 family and the small models
 * in ../shared/models), for roofline costs and synthetic-weight timing. */
#ifndef HS_SHAPE_H
#define HS_SHAPE_H

struct shape {
	const char *name;
	int dim;        /* model width */
	int hidden;     /* SwiGLU hidden width */
	int n_layers;
	int n_heads;
	int n_kv_heads;
	int vocab;
};

/* The named shape, or NULL. Borrowed from a static table. */
const struct shape *shape_find(const char *name);
/* NULL-terminated names, for "expected one of" messages. */
const char *const *shape_names(void);

/* Weights (embedding, all layers, classifier untied), and bytes of K and V
 * cached per token per element size. */
double shape_params(const struct shape *s);
double shape_kv_elems_per_token(const struct shape *s);

#endif
