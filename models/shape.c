/* shape.c: the table of named shapes.
 *
 * LLaMA-2 shapes are from the model cards / config.json of meta-llama
 * Llama-2-{7b,13b,70b}-hf; the small ones from the headers of their
 * llama2.c checkpoints. */
#include "shape.h"

#include <string.h>

static const struct shape shapes[] = {
	{ "llama2-7b", 4096, 11008, 32, 32, 32, 32000 },
	{ "llama2-13b", 5120, 13824, 40, 40, 40, 32000 },
	{ "llama2-70b", 8192, 28672, 80, 64, 8, 32000 },
	{ "stories260K", 64, 172, 5, 8, 4, 512 },
	{ "tinystories656K", 128, 384, 2, 8, 4, 2048 },
};

static const char *const names[] = {
	"llama2-7b", "llama2-13b", "llama2-70b", "stories260K",
	"tinystories656K", NULL,
};

const struct shape *shape_find(const char *name)
{
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (!strcmp(shapes[i].name, name))
			return &shapes[i];
	return NULL;
}

const char *const *shape_names(void)
{
	return names;
}

double shape_kv_elems_per_token(const struct shape *s)
{
	return 2.0 * s->n_layers * s->dim / s->n_heads * s->n_kv_heads;
}

double shape_params(const struct shape *s)
{
	double head = (double)s->dim / s->n_heads;
	double attn = (double)s->dim * s->dim * 2 +
		      2.0 * s->dim * head * s->n_kv_heads;
	double mlp = 3.0 * s->dim * s->hidden;

	return s->n_layers * (attn + mlp + 2.0 * s->dim) +
	       2.0 * s->vocab * s->dim + s->dim;
}

int shape_gemms(const struct shape *s, int gemm[SHAPE_GEMMS][2])
{
	int kv = s->dim / s->n_heads * s->n_kv_heads, n = 0;
	const int all[SHAPE_GEMMS][2] = { { s->dim, s->dim }, { kv, s->dim },
		{ s->hidden, s->dim }, { s->dim, s->hidden },
		{ s->vocab, s->dim } };

	for (int j = 0; j < SHAPE_GEMMS; j++) {
		if (j == 1 && kv == s->dim)
			continue; /* no grouped-query attention */
		gemm[n][0] = all[j][0];
		gemm[n][1] = all[j][1];
		n++;
	}
	return n;
}
