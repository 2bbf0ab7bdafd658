/* synth.c: a model of a given shape with random weights, for timing shapes
 * whose trained weights are not here (LLaMA-2-7B on a 24 GiB machine).
 *
 * Every layer is drawn in FP32 (uniform in +-sqrt(3/k), the variance of a
 * 1/k initialisation) into one scratch matrix and converted to the asked
 * format at once (an FP32 model's layers each drawn into its own), so the
 * peak memory is the converted model plus one FP32 matrix. The draws are
 * one splitmix64 sequence from the seed, taken in pieces on every CPU
 * (each piece from its own place in it). The numbers mean nothing; the
 * bytes streamed and the arithmetic done are exactly those of a trained
 * model of that shape and format. */
#include "synth.h"
#include "mem.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

/* uniform in [-a, a]; exactly 0 once in 2^24 draws (2^23 + 0.5 rounds to
 * 2^23 in FP32) */
static float draw(uint64_t *s, float a)
{
	float u = (float)((rng_splitmix64(s) >> 40) + 0.5) / (float)(1 << 24);

	return a * (2 * u - 1);
}

struct fill_job {
	uint64_t s;  /* the state before the fill's first draw */
	float *v;    /* n x k, row-major */
	int k;
	float centre, a;
};

static void fill_rows(void *ctx, int r0, int r1)
{
	const struct fill_job *j = ctx;
	uint64_t s = rng_splitmix64_skip(j->s, (uint64_t)r0 * j->k);

	for (size_t i = (size_t)r0 * j->k; i < (size_t)r1 * j->k; i++)
		j->v[i] = j->centre + draw(&s, j->a);
}

/* v (n x k) = centre + draws in [-a, a] on p's threads: the values one
 * sequence from *s gives in turn (advanced past them) */
static void fill_into(uint64_t *s, float *v, int n, int k, float centre,
		      float a, struct kpool *p)
{
	struct fill_job j = { *s, v, k, centre, a };

	kpool_run(p, fill_rows, &j, n, 1);
	*s = rng_splitmix64_skip(*s, (uint64_t)n * k);
}

static float *fill(uint64_t *s, int n, int k, float centre, float a,
		   struct kpool *p)
{
	float *v = xmalloc(sizeof(float) * (size_t)n * k);

	fill_into(s, v, n, k, centre, a, p);
	return v;
}

/* A layer drawn on p's threads: FP32 into its own matrix, another format
 * into scratch (FP32, n x k at least) and converted from it */
static void synth_linear(struct linear *l, uint64_t *s, int n, int k,
			 const struct quant *q, const struct kern *kn,
			 struct kpool *p, float *scratch)
{
	const float a = sqrtf(3.0f / k);

	if (q->format == LIN_F32) {
		lin_init_f32(l, fill(s, n, k, 0, a, p), n, k);
		return;
	}
	fill_into(s, scratch, n, k, 0, a, p);
	lin_init_from(l, scratch, n, k, q->format, q->group, q->kind, kn, p);
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
	int kv_dim = c->dim / c->n_heads * c->n_kv_heads, widest;
	uint64_t s = seed;
	float *scratch; /* NULL, or the largest layer: dim by the widest */
	struct kpool *p;

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
	widest = c->hidden > c->vocab ? c->hidden : c->vocab;
	widest = widest > c->dim ? widest : c->dim;
	scratch = q->format == LIN_F32 ? NULL
				       : xmalloc(sizeof(float) * (size_t)c->dim * widest);
	/* drawn and converted on every CPU: the same bytes at any count */
	p = kern_pool_new(kpool_cpus());
	*m = (struct llama){ .c = *c, .kn = kern_best() };
	m->tok_emb = fill(&s, c->vocab, c->dim, 0, 1, p);
	m->layer = xcalloc((size_t)c->n_layers, sizeof(*m->layer));
	for (int l = 0; l < c->n_layers; l++) {
		struct llama_layer *L = &m->layer[l];

		L->rms_att = fill(&s, 1, c->dim, 1, 0.1f, NULL);
		L->rms_ffn = fill(&s, 1, c->dim, 1, 0.1f, NULL);
		synth_linear(&L->wq, &s, c->dim, c->dim, q, m->kn, p, scratch);
		synth_linear(&L->wk, &s, kv_dim, c->dim, q, m->kn, p, scratch);
		synth_linear(&L->wv, &s, kv_dim, c->dim, q, m->kn, p, scratch);
		synth_linear(&L->wo, &s, c->dim, c->dim, q, m->kn, p, scratch);
		synth_linear(&L->w1, &s, c->hidden, c->dim, q, m->kn, p, scratch);
		synth_linear(&L->w2, &s, c->dim, c->hidden, q, m->kn, p, scratch);
		synth_linear(&L->w3, &s, c->hidden, c->dim, q, m->kn, p, scratch);
	}
	m->rms_final = fill(&s, 1, c->dim, 1, 0.1f, NULL);
	synth_linear(&m->cls, &s, c->vocab, c->dim, q, m->kn, p, scratch);
	kpool_free(p);
	free(scratch);
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
