/* llama.h: a Llama model (RMSNorm, RoPE, grouped-query attention with a KV
 * cache, SwiGLU) loaded from real weights, and its forward pass for a block
 * of n tokens at once (n = 1: decoding; n = gamma + 1: verification), or for
 * a batch of such blocks from several sequences at once. */
#ifndef HS_LLAMA_H
#define HS_LLAMA_H

#include <stdbool.h>

#include "err.h"
#include "linear.h"
#include "shape.h"

/* The largest head size (dim / n_heads) the forward pass takes; the
 * loaders refuse larger ones. */
#define LLAMA_HEAD_MAX KERN_HEAD_MAX
/* The longest context the loaders keep (the KV cache a state allocates);
 * a model trained for more is cut to this. */
#define LLAMA_SEQ_MAX 4096

struct llama_config {
	int dim, hidden, n_layers, n_heads, n_kv_heads, vocab, seq_len;
	float norm_eps, rope_theta;
	bool rope_half; /* rotate dims (i, i + head/2), Hugging Face style;
			   else adjacent pairs (llama2.c) */
};

struct llama_layer {
	float *rms_att, *rms_ffn; /* (dim) owned */
	struct linear wq, wk, wv, wo, w1, w2, w3;
};

struct llama {
	struct llama_config c;
	float *tok_emb;           /* (vocab x dim) owned */
	struct llama_layer *layer; /* (n_layers) owned */
	float *rms_final;         /* (dim) owned */
	struct linear cls;        /* (vocab x dim) */
	const struct kern *kn;    /* borrowed: kernels for the non-FP32 layers */
	struct kpool *pool;       /* borrowed: threads, or NULL */
	bool int8_batches;        /* W4A16 block layers take blocks of
				     KERN_A8_MIN_BATCH or more tokens through
				     kn's integer path (lin_apply) */
	bool int8_decode;         /* and fewer tokens (a decode step, a
				     short verify block) too */
	/* calibration: called with the n x k input of each linear layer
	 * before it is applied; NULL for none */
	void (*observe)(void *ctx, const struct linear *l, const float *x, int n);
	void *observe_ctx;
};

/* The state of one sequence: its KV cache and scratch for blocks of up to
 * max_block tokens (a batch's scratch: up to max_block tokens in all). */
struct llama_state {
	int max_block;
	/* (layers x kv heads x seq_len x head dim) owned: a head's positions
	 * one after another, which attention streams */
	float *key, *value;
	float *x, *xb, *xb2, *q, *k, *v, *hb, *hb2; /* owned scratch */
	float *att;  /* (heads x seq_len) owned: attention weights per head */
};

/* The forward's dimensions from a model's shape (read from file, which
 * the messages name): a dense Llama (arch "llama", no experts, no Q/K/V
 * biases, heads of dim / n_heads, an even width of at most LLAMA_HEAD_MAX)
 * of a known context, cut to LLAMA_SEQ_MAX. norm_eps, rope_theta and
 * rope_half are the caller's. 0, or -1 with e's message. */
int llama_config_of_shape(struct llama_config *c, const struct shape *s,
			  const char *file, struct err *e);

/* Loads a llama2.c checkpoint (version 0: FP32 header and weights, shared
 * or separate classifier). Errors name the file and what is wrong. */
int llama_load_llama2c(struct llama *m, const char *path, struct err *e);
void llama_release(struct llama *m);

/* How m's blocks of KERN_A8_MIN_BATCH or more tokens (prefill,
 * verification) meet the block layers' weights: "int8" (W4A16 through the
 * kernel set's integer path: int8_batches, where kn has one), "fp16"
 * (FP16, W8A16, and W4A16's own exact FP16 activations), "fp32", "int4"
 * (W4A4). Static. */
const char *llama_block_acts(const struct llama *m);
/* The same for fewer than KERN_A8_MIN_BATCH tokens (decode): "int8"
 * where int8_decode sends them through the integer path. Static. */
const char *llama_decode_acts(const struct llama *m);
/* Packs the block layers' W4A16 weights once for m->kn's integer path when
 * m->int8_batches or m->int8_decode, or kn has digits over panels for
 * the exact products (kern.dig_run; then a W4A16 classifier's too)
 * (lin_pack_a8, on m->pool), else
 * drops such packs: call after setting kn, pool, int8_batches and
 * int8_decode. Without it the integer path packs the weights at every
 * call and the exact products read the rows as they are (the same
 * products, within FP32 rounding, slower). */
void llama_pack_a8(struct llama *m);

/* Converts every linear layer of the blocks (not the embeddings, the
 * classifier or the norms), by m->kn's conversions on p's threads (the
 * same bytes whatever they are: lin_convert). */
void llama_convert(struct llama *m, enum lin_format f, int group,
		   enum q4_kind kind, struct kpool *p);

void llama_state_init(struct llama_state *s, const struct llama_config *c,
		      int max_block);
void llama_state_release(struct llama_state *s);
/* Where KV head g's position p starts in a cache's key or value, the layer
 * at layer_off (layer x seq_len x kv_dim) */
static inline size_t llama_kv_at(const struct llama_config *c,
				 size_t layer_off, int g, int p)
{
	size_t hs = (size_t)(c->dim / c->n_heads);

	return layer_off + ((size_t)g * c->seq_len + (size_t)p) * hs;
}

/* Runs tokens[0..n) at positions pos..pos+n-1 (the cache holds 0..pos-1)
 * and writes n x vocab logits. n <= max_block, pos + n <= seq_len. The
 * batch of one sequence, with s as its own scratch. */
void llama_forward(const struct llama *m, struct llama_state *s,
		   const int *tokens, int n, int pos, float *logits);
/* The same, writing the logits of the last token only (vocab floats), or
 * none where logits is NULL: a prompt's prefill, whose other rows no one
 * reads, without the classifier over every row (at SmolLM2's 49152 x 576
 * the largest layer). */
void llama_forward_last(const struct llama *m, struct llama_state *s,
			const int *tokens, int n, int pos, float *logits);

/* One sequence's part of a batch: tokens[0..n) at positions pos..pos+n-1
 * of s's KV cache (which holds positions 0..pos-1), the logits of its last
 * `out` rows wanted (0 .. n: n every row, 0 none). Borrowed pointers. */
struct llama_seq {
	struct llama_state *s;
	const int *tokens;
	int n, pos, out;
};

/* Runs the sequences' tokens through the model together, as a serving
 * system batches requests: every linear layer runs once over the rows of
 * all of them (its weights read once a batch), and each row attends over
 * its own sequence's KV cache, causally from its own position, into which
 * its key and value are written. Only the seqs' KV caches are used, not
 * their scratch; scratch (borrowed) supplies the activation buffers
 * (scratch->max_block >= the total tokens); scratch's own KV cache is not
 * touched, so it may be one of the seqs' states or a separate state.
 * logits (borrowed; NULL if no row is wanted) gets the rows wanted (the
 * sum of the seqs' out) x vocab, one after another, sequences in order.
 * Each seq: n >= 1, pos >= 0, pos + n <= seq_len, 0 <= out <= n;
 * nseq >= 1; no state may appear twice. Every row's logits are those of
 * its sequence's own llama_forward: bit for bit in FP32, up to summation
 * order in the other formats. */
void llama_forward_batch(const struct llama *m, struct llama_state *scratch,
			 const struct llama_seq *seqs, int nseq, float *logits);

#endif
