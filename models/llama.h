/* llama.h: a Llama model (RMSNorm, RoPE, grouped-query attention with a KV
 * cache, SwiGLU) loaded from real weights, and its forward pass for a block
 * of n tokens at once (n = 1: decoding; n = gamma + 1: verification). */
#ifndef HS_LLAMA_H
#define HS_LLAMA_H

#include <stdbool.h>

#include "err.h"
#include "linear.h"

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
};

/* The state of one sequence: its KV cache and scratch for blocks of up to
 * max_block tokens. */
struct llama_state {
	int max_block;
	float *key, *value;   /* (layers x seq_len x kv_dim) owned */
	float *x, *xb, *xb2, *q, *k, *v, *hb, *hb2, *att; /* owned scratch */
};

/* Loads a llama2.c checkpoint (version 0: FP32 header and weights, shared
 * or separate classifier). Errors name the file and what is wrong. */
int llama_load_llama2c(struct llama *m, const char *path, struct err *e);
/* Loads a Hugging Face LlamaForCausalLM folder: config.json and
 * model.safetensors (F32, F16 or BF16; tied or separate lm_head), every
 * tensor's shape checked against the config (models/hf.c). */
int llama_load_hf(struct llama *m, const char *dir, struct err *e);
void llama_release(struct llama *m);

/* Converts every linear layer (not the embedding or the norms). */
void llama_convert(struct llama *m, enum lin_format f, int group,
		   enum q4_kind kind);

void llama_state_init(struct llama_state *s, const struct llama_config *c,
		      int max_block);
void llama_state_release(struct llama_state *s);

/* Runs tokens[0..n) at positions pos..pos+n-1 (the cache holds 0..pos-1)
 * and writes n x vocab logits. n <= max_block, pos + n <= seq_len. */
void llama_forward(const struct llama *m, struct llama_state *s,
		   const int *tokens, int n, int pos, float *logits);

#endif
