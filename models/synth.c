/* synth.c: a model of a given shape with random weights, for timing shapes
 * whose trained weights are not here (LLaMA-2-7B on a 24 GiB machine).
 *
 * Every layer is drawn in FP32 (uniform in +-sqrt(3/k), the variance of a
 * 1/k initialisation; never zero) and converted to the asked format at once,
 * so the peak memory is the converted model plus one FP32 matrix. The numbers
 * mean nothing; the bytes streamed and the arithmetic done are exactly those
 * of a trained model of that shape and format. */
#include "synth.h"
#include "mem.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

/* uniform in [-a, a], never exactly 0 */
static float draw(uint64_t *s, float a)
{
	float u = (float)((rng_splitmix64(s) >> 40) + 0.5) / (float)(1 << 24);

	return a * (2 * u - 1);
}

static float *fill(uint64_t *s, size_t n, float centre, float a)
{
	float *v = xmalloc(sizeof(float) * n);

	for (size_t i = 0; i < n; i++)
		v[i] = centre + draw(s, a);
	return v;
}

static void synth_linear(struct linear *l, uint64_t *s, int n, int k,
			 const struct quant *q)
{
	lin_init_f32(l, fill(s, (size_t)n * k, 0, sqrtf(3.0f / k)), n, k);
	if (q->format != LIN_F32)
		lin_convert(l, q->format, q->group, q->kind);
}

double synth_bytes(const struct llama_config *c, const struct quant *q)
{
	double kv_dim = (double)c->dim / c->n_heads * c->n_kv_heads;
	double lin = c->n_layers * ((double)c->dim * c->dim * 2 +
				    2.0 * c->dim * kv_dim +
				    3.0 * c->dim * c->hidden) +
		     (double)c->vocab * c->dim;

	return lin * lin_format_bits(q->format, q->group) / 8 + 4.0 * c->vocab * c->dim +
	       4.0 * 2 * c->n_layers * (double)c->seq_len * kv_dim;
}

int synth_llama(struct llama *m, const struct llama_config *c,
		const struct quant *q, uint64_t seed, struct err *e)
{
	double need = synth_bytes(c, q);
	double have = (double)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
	int kv_dim = c->dim / c->n_heads * c->n_kv_heads;
	uint64_t s = seed;

	if (q->gptq)
		return err_set(e, "synthetic weights: GPTQ needs trained weights "
			       "(its kernels and timing are those of round to "
			       "nearest; ask for that)");
	if (c->dim % c->n_heads || c->n_heads % c->n_kv_heads)
		return err_set(e, "synthetic weights: dim %d, %d heads, %d KV "
			       "heads do not divide", c->dim, c->n_heads,
			       c->n_kv_heads);
	if (have > 0 && need > 0.85 * have)
		return err_set(e, "synthetic weights: the model needs %.1f GiB "
			       "(weights, embedding, KV cache of %d positions), "
			       "more than 85%% of this machine's %.1f GiB",
			       need / (1 << 30), c->seq_len, have / (1 << 30));
	*m = (struct llama){ .c = *c };
	m->tok_emb = fill(&s, (size_t)c->vocab * c->dim, 0, 1);
	m->layer = xcalloc((size_t)c->n_layers, sizeof(*m->layer));
	for (int l = 0; l < c->n_layers; l++) {
		struct llama_layer *L = &m->layer[l];

		L->rms_att = fill(&s, (size_t)c->dim, 1, 0.1f);
		L->rms_ffn = fill(&s, (size_t)c->dim, 1, 0.1f);
		synth_linear(&L->wq, &s, c->dim, c->dim, q);
		synth_linear(&L->wk, &s, kv_dim, c->dim, q);
		synth_linear(&L->wv, &s, kv_dim, c->dim, q);
		synth_linear(&L->wo, &s, c->dim, c->dim, q);
		synth_linear(&L->w1, &s, c->hidden, c->dim, q);
		synth_linear(&L->w2, &s, c->dim, c->hidden, q);
		synth_linear(&L->w3, &s, c->hidden, c->dim, q);
	}
	m->rms_final = fill(&s, (size_t)c->dim, 1, 0.1f);
	synth_linear(&m->cls, &s, c->vocab, c->dim, q);
	m->kn = kern_best();
	return 0;
}

void synth_cache(struct llama_state *st, const struct llama_config *c,
		 int upto, uint64_t seed)
{
	size_t kv_dim = (size_t)(c->dim / c->n_heads * c->n_kv_heads);
	size_t hs = (size_t)(c->dim / c->n_heads);
	uint64_t s = seed;

	for (int l = 0; l < c->n_layers; l++)
		for (int g = 0; g < c->n_kv_heads; g++) {
			size_t at = llama_kv_at(c, (size_t)l * c->seq_len * kv_dim, g, 0);

			for (size_t i = 0; i < (size_t)upto * hs; i++) {
				st->key[at + i] = draw(&s, 1);
				st->value[at + i] = draw(&s, 1);
			}
		}
}
