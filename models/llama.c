/* llama.c: loading and the forward pass.
 *
 * Activations of a batch (the blocks of one or more sequences, one after
 * the other) are rows of n x dim; every linear layer is one lin_apply over
 * all the rows (the kernels' batch), attention is causal within each block
 * and over its own sequence's cache. KV cache: key[l][g][p][hs] for KV
 * head g (llama_kv_at), value alike: a head's positions one after another,
 * which a decode step's attention streams (position-major, each head's 64
 * values of a position sat a whole position's row apart, and a decode step
 * at context 2048 took 1.4x as long on SmolLM2-135M). */
#include "llama.h"

#include "pool.h"
#include "mem.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads n floats; checks for short files and non-finite values. */
static int read_floats(FILE *f, const char *path, const char *what, float *dst,
		       size_t n, struct err *e)
{
	if (fread(dst, sizeof(float), n, f) != n)
		return err_set(e, "%s: truncated: the file ends inside %s", path,
			       what);
	for (size_t i = 0; i < n; i++)
		if (!isfinite(dst[i]))
			return err_set(e, "%s: %s holds a non-finite value at "
				       "element %zu", path, what, i);
	return 0;
}

static float *alloc_read(FILE *f, const char *path, const char *what, size_t n,
			 struct err *e)
{
	float *p = xmalloc(sizeof(float) * (n ? n : 1));

	if (read_floats(f, path, what, p, n, e) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

/* Reads one matrix per layer, (layers x rows x cols), into the layers'
 * linear at offset `member`. */
static int read_stack(FILE *f, const char *path, const char *what,
		      struct llama *m, size_t member, int rows, int cols,
		      struct err *e)
{
	for (int l = 0; l < m->c.n_layers; l++) {
		float *w = alloc_read(f, path, what, (size_t)rows * cols, e);

		if (!w)
			return -1;
		lin_init_f32((struct linear *)((char *)&m->layer[l] + member), w,
			     rows, cols);
	}
	return 0;
}

static int read_norms(FILE *f, const char *path, const char *what,
		      struct llama *m, int att, struct err *e)
{
	for (int l = 0; l < m->c.n_layers; l++) {
		float *w = alloc_read(f, path, what, (size_t)m->c.dim, e);

		if (!w)
			return -1;
		if (att)
			m->layer[l].rms_att = w;
		else
			m->layer[l].rms_ffn = w;
	}
	return 0;
}

int llama_config_of_shape(struct llama_config *c, const struct shape *s,
			  const char *file, struct err *e)
{
	int head = s->head_dim ? s->head_dim : s->dim / s->n_heads;

	if (strcmp(s->arch, "llama") || s->n_experts || s->qkv_bias)
		return err_set(e, "%s: a %s model%s%s; this tool's forward pass "
			       "takes dense Llama models", file, s->arch,
			       s->n_experts ? " with experts" : "",
			       s->qkv_bias ? " with Q/K/V biases" : "");
	if (head * s->n_heads != s->dim || head % 2)
		return err_set(e, "%s: width %d, %d heads of %d: this tool's "
			       "forward pass takes heads of an even width that "
			       "split the model's", file, s->dim, s->n_heads, head);
	if (head > LLAMA_HEAD_MAX)
		return err_set(e, "%s: head size %d (width %d, %d heads) is more "
			       "than %d, the most this tool's forward pass takes",
			       file, head, s->dim, s->n_heads, LLAMA_HEAD_MAX);
	if (s->dim > 65536 || s->hidden > 262144 || s->n_layers > 4096 ||
	    s->n_heads > 4096)
		return err_set(e, "%s: width %d, MLP width %d, %d layers, %d "
			       "heads: more than this tool's forward pass takes "
			       "(65536, 262144, 4096, 4096)", file, s->dim,
			       s->hidden, s->n_layers, s->n_heads);
	if (s->context < 1)
		return err_set(e, "%s: does not say its context length (config."
			       "json's max_position_embeddings, GGUF's "
			       "context_length)", file);
	c->dim = s->dim;
	c->hidden = s->hidden;
	c->n_layers = s->n_layers;
	c->n_heads = s->n_heads;
	c->n_kv_heads = s->n_kv_heads;
	c->vocab = s->vocab;
	c->seq_len = s->context < LLAMA_SEQ_MAX ? s->context : LLAMA_SEQ_MAX;
	return 0;
}

int llama_load_llama2c(struct llama *m, const char *path, struct err *e)
{
	struct llama_config *c = &m->c;
	int32_t h[7];
	long size, want;
	int kv_dim, head;
	bool shared;
	FILE *f;

	memset(m, 0, sizeof(*m));
	if (!(f = fopen(path, "rb")))
		return err_set(e, "%s: cannot read: %s", path, strerror(errno));
	if (fread(h, sizeof(h), 1, f) != 1) {
		fclose(f);
		return err_set(e, "%s: too short for a llama2.c header", path);
	}
	*c = (struct llama_config){ h[0], h[1], h[2], h[3], h[4], abs(h[5]), h[6],
				    1e-5f, 10000.0f, false };
	shared = h[5] > 0;
	if (c->dim < 1 || c->hidden < 1 || c->n_layers < 1 || c->n_heads < 1 ||
	    c->n_kv_heads < 1 || c->vocab < 1 || c->seq_len < 1 ||
	    c->dim % c->n_heads || c->n_heads % c->n_kv_heads ||
	    (c->dim / c->n_heads) % 2 || c->dim > 65536 || c->hidden > 262144 ||
	    c->n_layers > 1024 || c->vocab > 1000000 || c->seq_len > 1000000) {
		fclose(f);
		return err_set(e, "%s: not a llama2.c checkpoint: header dim %d "
			       "hidden %d layers %d heads %d kv_heads %d vocab %d "
			       "seq_len %d", path, h[0], h[1], h[2], h[3], h[4],
			       h[5], h[6]);
	}
	head = c->dim / c->n_heads;
	if (head > LLAMA_HEAD_MAX) {
		fclose(f);
		return err_set(e, "%s: head size %d (dim %d, %d heads) is more than "
			       "%d, the most this tool's forward pass takes", path,
			       head, c->dim, c->n_heads, LLAMA_HEAD_MAX);
	}
	kv_dim = head * c->n_kv_heads;
	want = 28 + 4L * ((long)c->vocab * c->dim +
			  (long)c->n_layers * (2L * c->dim + 2L * c->dim * c->dim +
					       2L * c->dim * kv_dim +
					       3L * c->dim * c->hidden) +
			  c->dim + (long)c->seq_len * head +
			  (shared ? 0 : (long)c->vocab * c->dim));
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 28, SEEK_SET);
	if (size != want) {
		fclose(f);
		return err_set(e, "%s: %ld bytes, but the header (dim %d, hidden "
			       "%d, %d layers, %d/%d heads, vocab %d, seq_len %d, "
			       "%s classifier) needs %ld", path, size, c->dim,
			       c->hidden, c->n_layers, c->n_heads, c->n_kv_heads,
			       c->vocab, c->seq_len, shared ? "shared" : "separate",
			       want);
	}
	m->layer = xcalloc((size_t)c->n_layers, sizeof(*m->layer));
	if (!(m->tok_emb = alloc_read(f, path, "token_embedding_table",
				      (size_t)c->vocab * c->dim, e)) ||
	    read_norms(f, path, "rms_att_weight", m, 1, e) < 0 ||
	    read_stack(f, path, "wq", m, offsetof(struct llama_layer, wq),
		       c->dim, c->dim, e) < 0 ||
	    read_stack(f, path, "wk", m, offsetof(struct llama_layer, wk), kv_dim,
		       c->dim, e) < 0 ||
	    read_stack(f, path, "wv", m, offsetof(struct llama_layer, wv), kv_dim,
		       c->dim, e) < 0 ||
	    read_stack(f, path, "wo", m, offsetof(struct llama_layer, wo),
		       c->dim, c->dim, e) < 0 ||
	    read_norms(f, path, "rms_ffn_weight", m, 0, e) < 0 ||
	    read_stack(f, path, "w1", m, offsetof(struct llama_layer, w1),
		       c->hidden, c->dim, e) < 0 ||
	    read_stack(f, path, "w2", m, offsetof(struct llama_layer, w2),
		       c->dim, c->hidden, e) < 0 ||
	    read_stack(f, path, "w3", m, offsetof(struct llama_layer, w3),
		       c->hidden, c->dim, e) < 0 ||
	    !(m->rms_final = alloc_read(f, path, "rms_final_weight",
					(size_t)c->dim, e)))
		goto fail;
	/* the RoPE tables llama2.c stores are recomputed, not read */
	fseek(f, 4L * c->seq_len * head, SEEK_CUR);
	{
		float *cls = shared ? NULL
				    : alloc_read(f, path, "wcls",
						 (size_t)c->vocab * c->dim, e);

		if (!shared && !cls)
			goto fail;
		if (shared) {
			cls = xmalloc(sizeof(float) * (size_t)c->vocab * c->dim);
			memcpy(cls, m->tok_emb,
			       sizeof(float) * (size_t)c->vocab * c->dim);
		}
		lin_init_f32(&m->cls, cls, c->vocab, c->dim);
	}
	fclose(f);
	m->kn = kern_best();
	return 0;
fail:
	fclose(f);
	llama_release(m);
	return -1;
}

void llama_release(struct llama *m)
{
	for (int l = 0; m->layer && l < m->c.n_layers; l++) {
		struct llama_layer *L = &m->layer[l];

		free(L->rms_att);
		free(L->rms_ffn);
		lin_release(&L->wq);
		lin_release(&L->wk);
		lin_release(&L->wv);
		lin_release(&L->wo);
		lin_release(&L->w1);
		lin_release(&L->w2);
		lin_release(&L->w3);
	}
	free(m->layer);
	free(m->tok_emb);
	free(m->rms_final);
	lin_release(&m->cls);
	memset(m, 0, sizeof(*m));
}

/* The seven linear layers of a block */
#define BLOCK_LINEARS(L)                                                       \
	{ &(L)->wq, &(L)->wk, &(L)->wv, &(L)->wo, &(L)->w1, &(L)->w2, &(L)->w3 }

void llama_convert(struct llama *m, enum lin_format f, int group,
		   enum q4_kind kind, struct kpool *p)
{
	for (int l = 0; l < m->c.n_layers; l++) {
		struct linear *all[] = BLOCK_LINEARS(&m->layer[l]);

		for (size_t i = 0; i < 7; i++)
			lin_convert(all[i], f, group, kind, m->kn, p);
	}
}

void llama_pack_a8(struct llama *m)
{
	const bool panels = m->kn && m->kn->dig_run;

	for (int l = 0; l < m->c.n_layers; l++) {
		struct linear *all[] = BLOCK_LINEARS(&m->layer[l]);

		for (size_t i = 0; i < 7; i++)
			lin_pack_a8(all[i], m->int8_batches || m->int8_decode ||
					    panels ? m->kn : NULL, m->pool);
	}
	/* the classifier for the exact products on panels only (a step
	 * keeps it exact: apply) */
	lin_pack_a8(&m->cls, panels ? m->kn : NULL, m->pool);
}

void llama_state_init(struct llama_state *s, const struct llama_config *c,
		      int max_block)
{
	int kv_dim = c->dim / c->n_heads * c->n_kv_heads, n = max_block;

	s->max_block = n;
	s->key = xcalloc((size_t)c->n_layers * c->seq_len * kv_dim, sizeof(float));
	s->value = xcalloc((size_t)c->n_layers * c->seq_len * kv_dim, sizeof(float));
	s->x = xcalloc((size_t)n * c->dim, sizeof(float));
	s->xb = xcalloc((size_t)n * c->dim, sizeof(float));
	s->xb2 = xcalloc((size_t)n * c->dim, sizeof(float));
	s->q = xcalloc((size_t)n * c->dim, sizeof(float));
	s->k = xcalloc((size_t)n * kv_dim, sizeof(float));
	s->v = xcalloc((size_t)n * kv_dim, sizeof(float));
	s->hb = xcalloc((size_t)n * c->hidden, sizeof(float));
	s->hb2 = xcalloc((size_t)n * c->hidden, sizeof(float));
	s->att = xcalloc((size_t)c->n_heads * c->seq_len, sizeof(float));
}

void llama_state_release(struct llama_state *s)
{
	free(s->key);
	free(s->value);
	free(s->x);
	free(s->xb);
	free(s->xb2);
	free(s->q);
	free(s->k);
	free(s->v);
	free(s->hb);
	free(s->hb2);
	free(s->att);
	memset(s, 0, sizeof(*s));
}

static void rmsnorm(float *o, const float *x, const float *w, int n, float eps)
{
	double ss = 0;

	for (int i = 0; i < n; i++)
		ss += (double)x[i] * x[i];
	float scale = 1.0f / sqrtf((float)(ss / n) + eps);

	for (int i = 0; i < n; i++)
		o[i] = w[i] * (scale * x[i]);
}

/* Rotates the head vectors of v (heads of size hs) for position pos;
 * freq[i] = theta^(-2i / hs). */
static void rope(const struct llama_config *c, const float *freq, float *v,
		 int heads, int pos)
{
	int hs = c->dim / c->n_heads;

	for (int h = 0; h < heads; h++) {
		float *x = v + h * hs;

		for (int i = 0; i < hs / 2; i++) {
			float a = pos * freq[i], cs = cosf(a), sn = sinf(a);
			int i0 = c->rope_half ? i : 2 * i;
			int i1 = c->rope_half ? i + hs / 2 : 2 * i + 1;
			float x0 = x[i0], x1 = x[i1];

			x[i0] = x0 * cs - x1 * sn;
			x[i1] = x0 * sn + x1 * cs;
		}
	}
}

/* The block layers' activations where int8 asks for the integer path */
static const char *acts_of(const struct llama *m, bool int8)
{
	enum lin_format f = m->layer[0].w1.format;

	if (f == LIN_W4A16 && int8 && m->kn->a8_run)
		return "int8";
	return lin_formats[f].acts;
}

const char *llama_block_acts(const struct llama *m)
{
	return acts_of(m, m->int8_batches);
}

const char *llama_decode_acts(const struct llama *m)
{
	return acts_of(m, m->int8_decode);
}

/* lin_apply, shown to the calibration observer first. A layer takes the
 * integer path where asked for n tokens: int8_batches from
 * KERN_A8_MIN_BATCH on, int8_decode below, but for the classifier: it has
 * a pack only where the set multiplies the digits on panels
 * (llama_pack_a8), so elsewhere a step would pack it again each time */
static void apply(const struct llama *m, const struct linear *l, const float *x,
		  int n, float *y)
{
	if (m->observe)
		m->observe(m->observe_ctx, l, x, n);
	lin_apply(l, x, n, y, m->kn, m->pool,
		  n >= KERN_A8_MIN_BATCH ? m->int8_batches :
		  m->int8_decode && l != &m->cls);
}

/* Attention of heads [h0, h1) for every row of a batch, at one layer: row t
 * of a sequence sees positions 0 .. pos + t of that sequence's cache. Each
 * head has its own row of the scratch's att, so heads can run on any
 * threads. */
struct attn_job {
	const struct llama_config *c;
	const struct kern *kn;
	struct llama_state *scratch;
	const struct llama_seq *seqs;
	int nseq;
	size_t layer_off; /* of the layer in a KV cache */
	int hs, group;
	float inv_sqrt_hs;
};

static void attn_heads(void *ctx, int h0, int h1)
{
	const struct attn_job *j = ctx;
	const struct llama_config *c = j->c;
	struct llama_state *s = j->scratch;
	int hs = j->hs;

	/* the heads of [h0, h1) that share a KV head at once (at most
	 * KERN_ATTEND_QMAX): the cache is read once for them */
	for (int h = h0, e; h < h1; h = e) {
		float *att = s->att + (size_t)h * c->seq_len;
		size_t kv_at = llama_kv_at(c, j->layer_off, h / j->group, 0);
		int r = 0; /* the row in the batch */

		e = (h / j->group + 1) * j->group;
		e = e < h1 ? e : h1;
		e = e - h < KERN_ATTEND_QMAX ? e : h + KERN_ATTEND_QMAX;
		for (int i = 0; i < j->nseq; i++) {
			const struct llama_seq *sq = &j->seqs[i];

			for (int t = 0; t < sq->n; t++, r++)
				kern_attend(j->kn, s->q + (size_t)r * c->dim + h * hs,
					    e - h, sq->s->key + kv_at,
					    sq->s->value + kv_at, sq->pos + t + 1, hs,
					    (size_t)hs, j->inv_sqrt_hs, att,
					    s->xb + (size_t)r * c->dim + h * hs);
		}
	}
}

void llama_forward(const struct llama *m, struct llama_state *s,
		   const int *tokens, int n, int pos, float *logits)
{
	llama_forward_batch(m, s, &(struct llama_seq){ s, tokens, n, pos, n }, 1,
			    logits);
}

void llama_forward_last(const struct llama *m, struct llama_state *s,
			const int *tokens, int n, int pos, float *logits)
{
	llama_forward_batch(m, s, &(struct llama_seq){ s, tokens, n, pos,
						       logits != NULL }, 1, logits);
}

void llama_forward_batch(const struct llama *m, struct llama_state *scratch,
			 const struct llama_seq *seqs, int nseq, float *logits)
{
	const struct llama_config *c = &m->c;
	struct llama_state *s = scratch;
	int dim = c->dim, hs = dim / c->n_heads, kv_dim = hs * c->n_kv_heads;
	int group = c->n_heads / c->n_kv_heads, n = 0; /* n: rows in all */
	float freq[LLAMA_HEAD_MAX], inv_sqrt_hs = 1.0f / sqrtf((float)hs);

	kern_flush_denormals();
	HS_ASSERT(nseq >= 1 && hs <= LLAMA_HEAD_MAX);
	for (int i = 0; i < nseq; i++) {
		const struct llama_seq *sq = &seqs[i];

		HS_ASSERT(sq->n >= 1 && sq->pos >= 0 &&
			  sq->pos <= c->seq_len - sq->n && sq->out >= 0 &&
			  sq->out <= sq->n);
		for (int j = 0; j < i; j++)
			HS_ASSERT(seqs[j].s != sq->s);
		for (int t = 0; t < sq->n; t++)
			HS_ASSERT(sq->tokens[t] >= 0 && sq->tokens[t] < c->vocab);
		n += sq->n;
		HS_ASSERT(n <= s->max_block);
	}
	for (int i = 0; i < hs / 2; i++)
		freq[i] = powf(c->rope_theta, -2.0f * i / hs);
	for (int i = 0, r = 0; i < nseq; i++)
		for (int t = 0; t < seqs[i].n; t++, r++)
			memcpy(s->x + (size_t)r * dim,
			       m->tok_emb + (size_t)seqs[i].tokens[t] * dim,
			       sizeof(float) * dim);
	for (int l = 0; l < c->n_layers; l++) {
		const struct llama_layer *L = &m->layer[l];
		size_t layer_off = (size_t)l * c->seq_len * kv_dim;

		for (int t = 0; t < n; t++)
			rmsnorm(s->xb + t * dim, s->x + t * dim, L->rms_att, dim,
				c->norm_eps);
		apply(m, &L->wq, s->xb, n, s->q);
		apply(m, &L->wk, s->xb, n, s->k);
		apply(m, &L->wv, s->xb, n, s->v);
		/* each row at its sequence's position, into its cache */
		for (int i = 0, r = 0; i < nseq; i++) {
			for (int t = 0; t < seqs[i].n; t++, r++) {
				int p = seqs[i].pos + t;

				rope(c, freq, s->q + r * dim, c->n_heads, p);
				rope(c, freq, s->k + r * kv_dim, c->n_kv_heads, p);
				for (int g = 0; g < c->n_kv_heads; g++) {
					size_t at = llama_kv_at(c, layer_off, g, p);

					memcpy(seqs[i].s->key + at, s->k + r * kv_dim + g * hs,
					       sizeof(float) * hs);
					memcpy(seqs[i].s->value + at, s->v + r * kv_dim + g * hs,
					       sizeof(float) * hs);
				}
			}
		}
		/* causal attention over each row's own sequence; the heads are
		 * split over the threads */
		struct attn_job job = { c, m->kn, s, seqs, nseq, layer_off, hs,
					group, inv_sqrt_hs };

		kpool_run(m->pool, attn_heads, &job, c->n_heads, 1);
		apply(m, &L->wo, s->xb, n, s->xb2);
		for (int i = 0; i < n * dim; i++)
			s->x[i] += s->xb2[i];
		for (int t = 0; t < n; t++)
			rmsnorm(s->xb + t * dim, s->x + t * dim, L->rms_ffn, dim,
				c->norm_eps);
		apply(m, &L->w1, s->xb, n, s->hb);
		apply(m, &L->w3, s->xb, n, s->hb2);
		for (int i = 0; i < n * c->hidden; i++) {
			float v = s->hb[i];

			s->hb[i] = v / (1.0f + expf(-v)) * s->hb2[i];
		}
		apply(m, &L->w2, s->hb, n, s->xb);
		for (int i = 0; i < n * dim; i++)
			s->x[i] += s->xb[i];
	}
	/* the rows wanted (o of them), normed into xb one after another,
	 * through the classifier at once */
	int o = 0;

	for (int i = 0, r = 0; i < nseq; r += seqs[i++].n)
		for (int t = seqs[i].n - seqs[i].out; t < seqs[i].n; t++, o++)
			rmsnorm(s->xb + (size_t)o * dim, s->x + (size_t)(r + t) * dim,
				m->rms_final, dim, c->norm_eps);
	if (o)
		apply(m, &m->cls, s->xb, o, logits);
}
