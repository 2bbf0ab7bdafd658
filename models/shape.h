/* shape.h: transformer shapes by name (LLaMA-2 family and the small models
 * of the models folder), for roofline costs and synthetic-weight timing. */
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

/* The distinct weight matrices of a layer and the classifier, rows x
 * columns: dim x dim (Q, O; K and V without grouped-query attention), kv x
 * dim (K, V with it), hidden x dim, dim x hidden, vocab x dim. Returns how
 * many it wrote into gemm (4 or 5). */
enum { SHAPE_GEMMS = 5 };
int shape_gemms(const struct shape *s, int gemm[SHAPE_GEMMS][2]);

#endif
