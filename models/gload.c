/* gload.c: the metadata give the config; each tensor is then looked up by
 * llama.cpp's name, checked against the shape the config implies, and
 * dequantised. A bitmap of the tensors taken finds the ones left over. */
#include "gload.h"

#include "gguf.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctx {
	const struct gguf *g;
	unsigned char *used; /* (g->n_t) */
	struct err *e;
};

/* Tensor name as FP32, of shape [ne0] (ne1 = 0) or [ne0, ne1]; NULL and
 * an error if it is missing or of another shape. Caller frees. */
static float *take(struct ctx *x, const char *name, int64_t ne0, int64_t ne1)
{
	const struct gguf_tensor *t = gguf_tensor(x->g, name);
	int nd = ne1 ? 2 : 1;

	if (!t) {
		err_set(x->e, "%s: tensor '%s' is missing", x->g->name, name);
		return NULL;
	}
	if (t->n_dims != nd || t->ne[0] != ne0 || (ne1 && t->ne[1] != ne1)) {
		char got[96];
		int n = 0;

		for (int d = 0; d < t->n_dims; d++)
			n += snprintf(got + n, sizeof(got) - (size_t)n, "%s%lld",
				      d ? ", " : "", (long long)t->ne[d]);
		if (ne1)
			err_set(x->e, "%s: tensor '%s': shape [%s], expected [%lld, "
				"%lld] from the llama.* metadata", x->g->name, name,
				got, (long long)ne0, (long long)ne1);
		else
			err_set(x->e, "%s: tensor '%s': shape [%s], expected [%lld] "
				"from the llama.* metadata", x->g->name, name, got,
				(long long)ne0);
		return NULL;
	}
	x->used[t - x->g->t] = 1;
	return gguf_tensor_f32(t);
}

static int config(const struct gguf *g, struct llama_config *c, struct err *e)
{
	const struct gguf_kv *toks;
	struct shape sh;
	double eps, theta = 10000;
	int64_t rope_dims;

	if (!(toks = gguf_get(g, "tokenizer.ggml.tokens")) ||
	    toks->type != GGUF_ARRAY)
		return err_set(e, "%s: metadata 'tokenizer.ggml.tokens' is missing "
			       "(expected an array of string)", g->name);
	if (shape_of_gguf(&sh, g, e) < 0 ||
	    llama_config_of_shape(c, &sh, g->name, e) < 0 ||
	    gguf_float(g, "llama.attention.layer_norm_rms_epsilon", &eps, e) < 0 ||
	    (gguf_get(g, "llama.rope.freq_base") &&
	     gguf_float(g, "llama.rope.freq_base", &theta, e) < 0))
		return -1;
	rope_dims = c->dim / c->n_heads;
	if ((uint64_t)c->vocab != toks->n)
		return err_set(e, "%s: llama.vocab_size %d, but %llu tokens in "
			       "tokenizer.ggml.tokens", g->name, c->vocab,
			       (unsigned long long)toks->n);
	if (gguf_get(g, "llama.rope.dimension_count") &&
	    gguf_int(g, "llama.rope.dimension_count", &rope_dims, e) < 0)
		return -1;
	if (rope_dims != c->dim / c->n_heads)
		return err_set(e, "%s: llama.rope.dimension_count %lld: RoPE on "
			       "part of a head (size %d) is not supported",
			       g->name, (long long)rope_dims, c->dim / c->n_heads);
	if (gguf_get(g, "llama.rope.scaling.type")) {
		struct gguf_str st;

		if (gguf_string(g, "llama.rope.scaling.type", &st, e) < 0)
			return -1;
		if (!(st.n == 4 && !memcmp(st.s, "none", 4)))
			return err_set(e, "%s: llama.rope.scaling.type \"%.*s\" is not "
				       "supported", g->name,
				       (int)(st.n > 32 ? 32 : st.n), st.s);
	}
	if (!(eps > 0) || !(theta > 0))
		return err_set(e, "%s: layer_norm_rms_epsilon %g and rope.freq_base "
			       "%g must be > 0", g->name, eps, theta);
	c->norm_eps = (float)eps;
	c->rope_theta = (float)theta;
	c->rope_half = false;
	return 0;
}

static int weights(struct ctx *x, struct llama *m)
{
	const struct llama_config *c = &m->c;
	int kv_dim = c->dim / c->n_heads * c->n_kv_heads;
	static const struct {
		const char *name;
		size_t member;
		int out, in; /* 0 dim, 1 kv_dim, 2 hidden */
	} mats[] = {
		{ "attn_q", offsetof(struct llama_layer, wq), 0, 0 },
		{ "attn_k", offsetof(struct llama_layer, wk), 1, 0 },
		{ "attn_v", offsetof(struct llama_layer, wv), 1, 0 },
		{ "attn_output", offsetof(struct llama_layer, wo), 0, 0 },
		{ "ffn_gate", offsetof(struct llama_layer, w1), 2, 0 },
		{ "ffn_down", offsetof(struct llama_layer, w2), 0, 2 },
		{ "ffn_up", offsetof(struct llama_layer, w3), 2, 0 },
	};
	int dims[3] = { c->dim, kv_dim, c->hidden };
	char name[96];
	float *cls;

	if (!(m->tok_emb = take(x, "token_embd.weight", c->dim, c->vocab)))
		return -1;
	m->layer = xcalloc((size_t)c->n_layers, sizeof(*m->layer));
	for (int l = 0; l < c->n_layers; l++) {
		struct llama_layer *L = &m->layer[l];

		snprintf(name, sizeof(name), "blk.%d.attn_norm.weight", l);
		if (!(L->rms_att = take(x, name, c->dim, 0)))
			return -1;
		snprintf(name, sizeof(name), "blk.%d.ffn_norm.weight", l);
		if (!(L->rms_ffn = take(x, name, c->dim, 0)))
			return -1;
		for (size_t i = 0; i < sizeof(mats) / sizeof(mats[0]); i++) {
			int r = dims[mats[i].out], k = dims[mats[i].in];
			float *w;

			snprintf(name, sizeof(name), "blk.%d.%s.weight", l, mats[i].name);
			if (!(w = take(x, name, k, r)))
				return -1;
			lin_init_f32((struct linear *)((char *)L + mats[i].member), w,
				     r, k);
		}
	}
	if (!(m->rms_final = take(x, "output_norm.weight", c->dim, 0)))
		return -1;
	if (gguf_tensor(x->g, "output.weight")) {
		if (!(cls = take(x, "output.weight", c->dim, c->vocab)))
			return -1;
	} else {
		cls = xmalloc(sizeof(float) * (size_t)c->vocab * c->dim);
		memcpy(cls, m->tok_emb, sizeof(float) * (size_t)c->vocab * c->dim);
	}
	lin_init_f32(&m->cls, cls, c->vocab, c->dim);
	for (long i = 0; i < x->g->n_t; i++)
		if (!x->used[i])
			return err_set(x->e, "%s: tensor '%s' is not one a llama "
				       "model has (rope_freqs and the like are not "
				       "supported)", x->g->name, x->g->t[i].name);
	return 0;
}

int llama_load_gguf(struct llama *m, struct tok *t, const char *path,
		    struct err *e)
{
	struct gguf g;
	struct ctx x = { &g, NULL, e };
	int rc = -1;

	memset(m, 0, sizeof(*m));
	memset(t, 0, sizeof(*t));
	if (gguf_open(&g, path, e) < 0)
		return -1;
	x.used = xcalloc((size_t)g.n_t + 1, 1);
	if (config(&g, &m->c, e) < 0 || weights(&x, m) < 0 ||
	    tok_load_gguf(t, &g, m->c.vocab, e) < 0) {
		llama_release(m);
		goto out;
	}
	m->kn = kern_best();
	rc = 0;
out:
	free(x.used);
	gguf_release(&g);
	return rc;
}
