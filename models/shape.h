/* shape.h: transformer shapes, by name or from a model's own description
 * (a Hugging Face config.json, a GGUF file's metadata), for roofline costs,
 * memory fit and synthetic-weight timing.
 *
 * A shape is a plain value: copy it freely. Dense models (Llama, Mistral,
 * Qwen2) and mixtures of experts (Mixtral, Qwen-MoE) share one form; a
 * dense model has n_experts 0. */
#ifndef HS_SHAPE_H
#define HS_SHAPE_H

#include <stdbool.h>

#include "err.h"

#include <jansson.h>

struct gguf;

struct shape {
	char name[64];
	char arch[16];   /* "llama", "mistral", "qwen2", "mixtral", "qwen2_moe" */
	int dim;         /* model width */
	int hidden;      /* SwiGLU hidden width (of one expert in a MoE) */
	int n_layers;
	int n_heads;
	int n_kv_heads;
	int head_dim;    /* width of one head; dim / n_heads unless given */
	int vocab;       /* the classifier's rows: the tokenizer's tokens,
			    often padded up (Qwen2.5's 151,936 and 152,064
			    rows hold one tokenizer's 151,665) */
	int context;     /* positions it was trained for (config.json's
			    max_position_embeddings, GGUF's context_length);
			    0: not known */
	bool tied;       /* the classifier is the embedding table */
	bool qkv_bias;   /* Q, K and V projections carry biases (Qwen2) */
	int n_experts;   /* experts per MoE layer; 0: dense */
	int n_active;    /* experts each token is routed to */
	int shared_hidden; /* Qwen-MoE: the shared expert's width; 0: none */
	const char *tokenizer; /* static: the tokenizer's family, shared by
				  every model that has it (built-in shapes),
				  or NULL (not known) */
	const char *source; /* static: where the figures come from (built-in
			       shapes), or NULL (read from a file) */
};

/* The built-in shape called name, or NULL. Borrowed from a static table. */
const struct shape *shape_find(const char *name);
/* The built-in shape read from Hugging Face repository repo ("org/name"),
 * or NULL. */
const struct shape *shape_of_repo(const char *repo);

/* A built-in name, or the path of a Hugging Face config.json (or a folder
 * holding one) or a GGUF file, whose metadata alone is read. The shape of
 * a file is named after it (the folder of a config.json, the GGUF file
 * without .gguf). 0, or -1 with "PATH: /hidden_size: expected ..." (or
 * "PATH: key llama.block_count: ...") in e. */
int shape_load(struct shape *s, const char *name_or_path, struct err *e);

/* The shape a config.json (doc, parsed from path) or a GGUF file (g)
 * describes, as shape_load reads them, unnamed and with head_dim always
 * given. 0, or -1 with the message shape_load gives. */
int shape_of_hf(struct shape *s, json_t *doc, const char *path,
		struct err *e);
int shape_of_gguf(struct shape *s, const struct gguf *g, struct err *e);

/* Whether a draft of shape a can propose tokens to target b: the same
 * tokenizer where both name theirs, else the same vocabulary. */
bool shape_same_tokens(const struct shape *a, const struct shape *b);

/* Every weight (all experts, the classifier unless tied). */
double shape_params(const struct shape *s);
/* The weights one token runs through (its experts only). */
double shape_active_params(const struct shape *s);
/* The weights a batch of tokens reads: everything but the routed experts,
 * and of those the expected number of distinct experts that tokens
 * tokens touch per layer, E (1 - (1 - k/E)^tokens) with k of E experts
 * each, routing uniform and independent. Dense: shape_params. */
double shape_params_read(const struct shape *s, double tokens);
/* K and V elements cached per token, all layers. */
double shape_kv_elems_per_token(const struct shape *s);
/* Attention FLOPs per token per cached position (Q K and A V). */
double shape_attn_flops(const struct shape *s);

/* The distinct weight matrices of a layer and the classifier, rows x
 * columns: Q (heads x head_dim by dim), K and V (kv_heads x head_dim by
 * dim), O, the MLP (one expert's) up and down, the classifier. Duplicates
 * (Q = K without grouped-query attention, Q = O when heads x head_dim is
 * dim) are written once. Returns how many it wrote (at most SHAPE_GEMMS). */
enum { SHAPE_GEMMS = 6 };
int shape_gemms(const struct shape *s, int gemm[SHAPE_GEMMS][2]);

#endif
