/* shape.c: the table of built-in shapes, the counts a roofline needs, and
 * shapes read from a model's description.
 *
 * Each built-in row names its source (a model card's config.json, a
 * checkpoint's header). A file is read for its dimensions only: a
 * config.json by its keys (unknown keys are the model's business and are
 * ignored, missing or bad ones are errors with their JSON pointer), a GGUF
 * file by its metadata and tensor names (no tensor data is touched). */
#define _DEFAULT_SOURCE /* realpath */
#include "shape.h"

#include "gguf.h"
#include "jx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HF(repo) "config.json of huggingface.co/" repo

static const struct shape shapes[] = {
	{ .name = "llama2-7b", .arch = "llama", .dim = 4096, .hidden = 11008,
	  .n_layers = 32, .n_heads = 32, .n_kv_heads = 32, .vocab = 32000,
	  .context = 4096,
	  .tokenizer = "llama2",
	  .source = HF("meta-llama/Llama-2-7b-hf") },
	{ .name = "llama2-13b", .arch = "llama", .dim = 5120, .hidden = 13824,
	  .n_layers = 40, .n_heads = 40, .n_kv_heads = 40, .vocab = 32000,
	  .context = 4096,
	  .tokenizer = "llama2",
	  .source = HF("meta-llama/Llama-2-13b-hf") },
	{ .name = "llama2-70b", .arch = "llama", .dim = 8192, .hidden = 28672,
	  .n_layers = 80, .n_heads = 64, .n_kv_heads = 8, .vocab = 32000,
	  .context = 4096,
	  .tokenizer = "llama2",
	  .source = HF("meta-llama/Llama-2-70b-hf") },
	{ .name = "llama3-8b", .arch = "llama", .dim = 4096, .hidden = 14336,
	  .n_layers = 32, .n_heads = 32, .n_kv_heads = 8, .vocab = 128256,
	  .context = 8192,
	  .tokenizer = "llama3",
	  .source = HF("meta-llama/Meta-Llama-3-8B") },
	{ .name = "llama3-70b", .arch = "llama", .dim = 8192, .hidden = 28672,
	  .n_layers = 80, .n_heads = 64, .n_kv_heads = 8, .vocab = 128256,
	  .context = 8192,
	  .tokenizer = "llama3",
	  .source = HF("meta-llama/Meta-Llama-3-70B") },
	{ .name = "qwen2.5-7b", .arch = "qwen2", .dim = 3584, .hidden = 18944,
	  .n_layers = 28, .n_heads = 28, .n_kv_heads = 4, .vocab = 152064,
	  .qkv_bias = true, .context = 131072,
	  .tokenizer = "qwen2",
	  .source = HF("Qwen/Qwen2.5-7B") },
	{ .name = "llama3.1-8b", .arch = "llama", .dim = 4096, .hidden = 14336,
	  .n_layers = 32, .n_heads = 32, .n_kv_heads = 8, .vocab = 128256,
	  .context = 131072, .tokenizer = "llama3",
	  .source = HF("meta-llama/Llama-3.1-8B") },
	{ .name = "llama3.2-1b", .arch = "llama", .dim = 2048, .hidden = 8192,
	  .n_layers = 16, .n_heads = 32, .n_kv_heads = 8, .vocab = 128256,
	  .tied = true, .context = 131072, .tokenizer = "llama3",
	  .source = HF("meta-llama/Llama-3.2-1B") },
	{ .name = "qwen2.5-0.5b", .arch = "qwen2", .dim = 896, .hidden = 4864,
	  .n_layers = 24, .n_heads = 14, .n_kv_heads = 2, .vocab = 151936,
	  .qkv_bias = true, .tied = true, .context = 32768, .tokenizer = "qwen2",
	  .source = HF("Qwen/Qwen2.5-0.5B") },
	{ .name = "qwen2.5-1.5b", .arch = "qwen2", .dim = 1536, .hidden = 8960,
	  .n_layers = 28, .n_heads = 12, .n_kv_heads = 2, .vocab = 151936,
	  .qkv_bias = true, .tied = true, .context = 131072, .tokenizer = "qwen2",
	  .source = HF("Qwen/Qwen2.5-1.5B") },
	{ .name = "mistral-7b", .arch = "mistral", .dim = 4096, .hidden = 14336,
	  .n_layers = 32, .n_heads = 32, .n_kv_heads = 8, .vocab = 32000,
	  .context = 32768,
	  .tokenizer = "mistral",
	  .source = HF("mistralai/Mistral-7B-v0.1") },
	{ .name = "mixtral-8x7b", .arch = "mixtral", .dim = 4096,
	  .hidden = 14336, .n_layers = 32, .n_heads = 32, .n_kv_heads = 8,
	  .vocab = 32000, .n_experts = 8, .n_active = 2,
	  .context = 32768,
	  .tokenizer = "mistral",
	  .source = HF("mistralai/Mixtral-8x7B-v0.1") },
	{ .name = "smollm2-135m", .arch = "llama", .dim = 576, .hidden = 1536,
	  .n_layers = 30, .n_heads = 9, .n_kv_heads = 3, .vocab = 49152,
	  .tied = true, .context = 8192,
	  .tokenizer = "smollm2",
	  .source = HF("HuggingFaceTB/SmolLM2-135M-Instruct") },
	{ .name = "smollm2-1.7b", .arch = "llama", .dim = 2048, .hidden = 8192,
	  .n_layers = 24, .n_heads = 32, .n_kv_heads = 32, .vocab = 49152,
	  .tied = true, .context = 8192,
	  .tokenizer = "smollm2",
	  .source = HF("HuggingFaceTB/SmolLM2-1.7B") },
	{ .name = "stories260K", .arch = "llama", .dim = 64, .hidden = 172,
	  .n_layers = 5, .n_heads = 8, .n_kv_heads = 4, .vocab = 512,
	  .tied = true, .source = "the header of llama2.c's stories260K.bin" },
	{ .name = "tinystories656K", .arch = "llama", .dim = 128, .hidden = 384,
	  .n_layers = 2, .n_heads = 8, .n_kv_heads = 4, .vocab = 2048,
	  .tied = true, .source = "the header of tinystories656K's model.bin" },
};
#define N_SHAPES (sizeof(shapes) / sizeof(shapes[0]))

bool shape_same_tokens(const struct shape *a, const struct shape *b)
{
	if (a->tokenizer && b->tokenizer)
		return !strcmp(a->tokenizer, b->tokenizer);
	return a->vocab == b->vocab;
}

const struct shape *shape_find(const char *name)
{
	for (size_t i = 0; i < N_SHAPES; i++)
		if (!strcmp(shapes[i].name, name))
			return &shapes[i];
	return NULL;
}

const struct shape *shape_of_repo(const char *repo)
{
	static const char prefix[] = "config.json of huggingface.co/";

	for (size_t i = 0; i < N_SHAPES; i++)
		if (!strncmp(shapes[i].source, prefix, sizeof(prefix) - 1) &&
		    !strcmp(shapes[i].source + sizeof(prefix) - 1, repo))
			return &shapes[i];
	return NULL;
}

static int head_dim(const struct shape *s)
{
	return s->head_dim ? s->head_dim : s->dim / s->n_heads;
}

double shape_kv_elems_per_token(const struct shape *s)
{
	return 2.0 * s->n_layers * head_dim(s) * s->n_kv_heads;
}

double shape_attn_flops(const struct shape *s)
{
	return 4.0 * s->n_layers * head_dim(s) * s->n_heads;
}

/* One expert's (or the dense MLP's) weights in one layer. */
static double mlp_params(const struct shape *s)
{
	return 3.0 * s->dim * s->hidden;
}

/* Everything but the routed experts: embeddings, attention, norms, the
 * router, the shared expert, the classifier. */
static double fixed_params(const struct shape *s)
{
	double hd = head_dim(s), q = hd * s->n_heads, kv = hd * s->n_kv_heads;
	double layer = 2.0 * s->dim * q + 2.0 * s->dim * kv + 2.0 * s->dim;

	if (s->qkv_bias)
		layer += q + 2 * kv;
	if (s->n_experts)
		layer += (double)s->n_experts * s->dim +
			 (s->shared_hidden ? 3.0 * s->dim * s->shared_hidden +
						     s->dim : 0);
	else
		layer += mlp_params(s);
	return s->n_layers * layer + (s->tied ? 1.0 : 2.0) * s->vocab * s->dim +
	       s->dim;
}

double shape_params(const struct shape *s)
{
	return fixed_params(s) +
	       (double)s->n_layers * s->n_experts * mlp_params(s);
}

double shape_active_params(const struct shape *s)
{
	return fixed_params(s) +
	       (double)s->n_layers * s->n_active * mlp_params(s);
}

double shape_params_read(const struct shape *s, double tokens)
{
	double e = s->n_experts, distinct;

	if (!s->n_experts)
		return shape_params(s);
	distinct = e * (1 - pow(1 - s->n_active / e, tokens > 0 ? tokens : 0));
	return fixed_params(s) + s->n_layers * distinct * mlp_params(s);
}

int shape_gemms(const struct shape *s, int gemm[SHAPE_GEMMS][2])
{
	int hd = head_dim(s), q = hd * s->n_heads, kv = hd * s->n_kv_heads;
	int n = 0;
	const int all[SHAPE_GEMMS][2] = { { q, s->dim }, { kv, s->dim },
		{ s->dim, q }, { s->hidden, s->dim }, { s->dim, s->hidden },
		{ s->vocab, s->dim } };

	for (int j = 0; j < SHAPE_GEMMS; j++) {
		bool dup = false;

		for (int i = 0; i < n; i++)
			dup |= gemm[i][0] == all[j][0] && gemm[i][1] == all[j][1];
		if (dup)
			continue;
		gemm[n][0] = all[j][0];
		gemm[n][1] = all[j][1];
		n++;
	}
	return n;
}

/* ---- shapes from files ---- */

/* What any shape must satisfy, whatever it was read from. */
static int well_formed(const struct shape *s, const char *file, struct err *e)
{
	if (s->n_heads % s->n_kv_heads)
		return err_set(e, "%s: %d attention heads are not a multiple of "
			       "%d key-value heads", file, s->n_heads,
			       s->n_kv_heads);
	if (!s->head_dim && s->dim % s->n_heads)
		return err_set(e, "%s: width %d is not a multiple of %d heads "
			       "and no head width is given", file, s->dim,
			       s->n_heads);
	if (s->n_experts && (s->n_active < 1 || s->n_active > s->n_experts))
		return err_set(e, "%s: %d experts a token of %d", file,
			       s->n_active, s->n_experts);
	return 0;
}

/* The shape's name: the folder of a config.json (found from the working
 * directory where the path names none), else the file's name without its
 * last extension ("SmolLM2-1.7B.gguf": "SmolLM2-1.7B"). */
static void name_from(struct shape *s, const char *path)
{
	char full[4096];
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *dot = strrchr(base, '.');
	size_t n = dot ? (size_t)(dot - base) : strlen(base);

	if (!strcmp(base, "config.json") && realpath(path, full)) {
		path = full;
		base = strrchr(full, '/') + 1;
	}
	if (!strcmp(base, "config.json") && base > path) {
		const char *end = base - 1, *start = end;

		while (start > path && start[-1] != '/')
			start--;
		if (end > start) {
			base = start;
			n = (size_t)(end - start);
		}
	}
	if (n == 0)
		n = strlen(base);
	snprintf(s->name, sizeof(s->name), "%.*s", (int)n, base);
}

static int hf_int(struct jx *x, json_t *doc, const char *key, long long def,
		  int *out)
{
	long long v;

	if (json_is_null(json_object_get(doc, key)))
		json_object_del(doc, key); /* null: the model's default */
	if (jx_int(x, doc, "", key, 1, 1 << 24, def, &v) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

/* max_position_embeddings, when the file says (else 0: not known). */
static int hf_context(struct jx *x, json_t *doc, int *out)
{
	*out = 0;
	if (!json_is_integer(json_object_get(doc, "max_position_embeddings")))
		return 0;
	return hf_int(x, doc, "max_position_embeddings", 0, out);
}

int shape_of_hf(struct shape *s, json_t *doc, const char *path,
		struct err *e)
{
	static const char *const types[] = { "llama", "mistral", "qwen2",
					     "mixtral", "qwen2_moe", NULL };
	struct jx x = { .file = path, .err = e };
	int type, sparse_step;

	*s = (struct shape){ 0 };
	if (!json_is_object(doc))
		return jx_fail(&x, "", "a Hugging Face config.json object", doc);
	if (jx_enum(&x, doc, "", "model_type", types, NULL, &type) < 0 ||
	    hf_int(&x, doc, "hidden_size", JX_REQUIRED_INT, &s->dim) < 0 ||
	    hf_int(&x, doc, "num_hidden_layers", JX_REQUIRED_INT,
		   &s->n_layers) < 0 ||
	    hf_int(&x, doc, "num_attention_heads", JX_REQUIRED_INT,
		   &s->n_heads) < 0 ||
	    hf_int(&x, doc, "num_key_value_heads", s->n_heads,
		   &s->n_kv_heads) < 0 ||
	    hf_int(&x, doc, "head_dim", s->dim / s->n_heads, &s->head_dim) < 0 ||
	    hf_int(&x, doc, "vocab_size", JX_REQUIRED_INT, &s->vocab) < 0 ||
	    hf_context(&x, doc, &s->context) < 0 ||
	    jx_bool(&x, doc, "", "tie_word_embeddings", 0, &s->tied) < 0 ||
	    jx_bool(&x, doc, "", "attention_bias", type == 2 || type == 4,
		    &s->qkv_bias) < 0)
		return -1;
	snprintf(s->arch, sizeof(s->arch), "%s", types[type]);
	if (type == 3) { /* mixtral */
		if (hf_int(&x, doc, "intermediate_size", JX_REQUIRED_INT,
			   &s->hidden) < 0 ||
		    hf_int(&x, doc, "num_local_experts", JX_REQUIRED_INT,
			   &s->n_experts) < 0 ||
		    hf_int(&x, doc, "num_experts_per_tok", JX_REQUIRED_INT,
			   &s->n_active) < 0)
			return -1;
	} else if (type == 4) { /* qwen2_moe */
		json_t *dense = json_object_get(doc, "mlp_only_layers");

		if (hf_int(&x, doc, "moe_intermediate_size", JX_REQUIRED_INT,
			   &s->hidden) < 0 ||
		    hf_int(&x, doc, "num_experts", JX_REQUIRED_INT,
			   &s->n_experts) < 0 ||
		    hf_int(&x, doc, "num_experts_per_tok", JX_REQUIRED_INT,
			   &s->n_active) < 0 ||
		    hf_int(&x, doc, "decoder_sparse_step", 1, &sparse_step) < 0)
			return -1;
		if (json_object_get(doc, "shared_expert_intermediate_size") &&
		    hf_int(&x, doc, "shared_expert_intermediate_size", 0,
			   &s->shared_hidden) < 0)
			return -1;
		if (sparse_step != 1 ||
		    (dense && (!json_is_array(dense) || json_array_size(dense)))) {
			jx_fail(&x, sparse_step != 1 ? "/decoder_sparse_step"
						     : "/mlp_only_layers",
				"every layer a mixture of experts (decoder_sparse_"
				"step 1, mlp_only_layers [])",
				sparse_step != 1 ? json_object_get(doc,
						"decoder_sparse_step") : dense);
			return -1;
		}
	} else if (hf_int(&x, doc, "intermediate_size", JX_REQUIRED_INT,
			  &s->hidden) < 0) {
		return -1;
	}
	return well_formed(s, path, e);
}

static int load_hf(struct shape *s, const char *path, struct err *e)
{
	json_t *doc = jx_load(path, e);
	int rc;

	if (!doc)
		return -1;
	rc = shape_of_hf(s, doc, path, e);
	json_decref(doc);
	return rc;
}

static int gguf_dim(const struct gguf *g, const char *arch, const char *key,
		    int64_t def, int *out, struct err *e)
{
	char k[96];
	int64_t v;

	snprintf(k, sizeof(k), "%s.%s", arch, key);
	if (def >= 0 && !gguf_get(g, k)) {
		*out = (int)def;
		return 0;
	}
	if (gguf_int(g, k, &v, e) < 0)
		return -1;
	if (v < 1 || v > 1 << 24)
		return err_set(e, "%s: metadata '%s' is %lld; expected 1 .. "
			       "16777216", g->name, k, (long long)v);
	*out = (int)v;
	return 0;
}

int shape_of_gguf(struct shape *s, const struct gguf *g, struct err *e)
{
	static const char *const arches[][2] = { { "llama", "llama" },
		{ "qwen2", "qwen2" }, { "qwen2moe", "qwen2_moe" } };
	struct gguf_str a;
	const struct gguf_kv *toks;
	char arch[32];
	int ai = -1, n_vocab = 0;

	*s = (struct shape){ 0 };
	if (gguf_string(g, "general.architecture", &a, e) < 0)
		return -1;
	snprintf(arch, sizeof(arch), "%.*s", (int)(a.n < 31 ? a.n : 31), a.s);
	for (int i = 0; i < 3; i++)
		if (!strcmp(arch, arches[i][0]))
			ai = i;
	if (ai < 0)
		return err_set(e, "%s: metadata 'general.architecture' is \"%s\"; "
			       "expected llama, qwen2 or qwen2moe", g->name, arch);
	if (gguf_dim(g, arch, "embedding_length", -1, &s->dim, e) < 0 ||
	    gguf_dim(g, arch, "block_count", -1, &s->n_layers, e) < 0 ||
	    gguf_dim(g, arch, "attention.head_count", -1, &s->n_heads, e) < 0 ||
	    gguf_dim(g, arch, "attention.head_count_kv", s->n_heads,
		     &s->n_kv_heads, e) < 0 ||
	    gguf_dim(g, arch, "attention.key_length", s->dim / s->n_heads,
		     &s->head_dim, e) < 0 ||
	    gguf_dim(g, arch, "expert_count", 0, &s->n_experts, e) < 0 ||
	    gguf_dim(g, arch, "context_length", 0, &s->context, e) < 0)
		return -1;
	/* the vocabulary: the metadata's, else the tokenizer's length */
	if ((toks = gguf_get(g, "tokenizer.ggml.tokens")) &&
	    toks->type == GGUF_ARRAY)
		n_vocab = (int)toks->n;
	if (gguf_dim(g, arch, "vocab_size", n_vocab ? n_vocab : -1, &s->vocab,
		     e) < 0)
		return -1;
	if (s->n_experts) {
		if (gguf_dim(g, arch, "expert_used_count", -1, &s->n_active,
			     e) < 0 ||
		    gguf_dim(g, arch, ai == 2 ? "expert_feed_forward_length"
					       : "feed_forward_length", -1,
			     &s->hidden, e) < 0)
			return -1;
		if (ai == 2) {
			char k[96];

			snprintf(k, sizeof(k), "%s.expert_shared_feed_forward_"
				 "length", arch);
			if (gguf_get(g, k) &&
			    gguf_dim(g, arch, "expert_shared_feed_forward_length",
				     -1, &s->shared_hidden, e) < 0)
				return -1;
		}
	} else if (gguf_dim(g, arch, "feed_forward_length", -1, &s->hidden,
			    e) < 0) {
		return -1;
	}
	snprintf(s->arch, sizeof(s->arch), "%s",
		 ai == 0 && s->n_experts ? "mixtral" : arches[ai][1]);
	s->tied = !gguf_tensor(g, "output.weight");
	s->qkv_bias = gguf_tensor(g, "blk.0.attn_q.bias") != NULL;
	return well_formed(s, g->name, e);
}

static int load_gguf(struct shape *s, const char *path, struct err *e)
{
	struct gguf g;
	int rc;

	if (gguf_open(&g, path, e) < 0)
		return -1;
	rc = shape_of_gguf(s, &g, e);
	gguf_release(&g);
	return rc;
}

int shape_load(struct shape *s, const char *name_or_path, struct err *e)
{
	const struct shape *b = shape_find(name_or_path);
	char path[1024], magic[4] = { 0 };
	FILE *f;
	int rc;

	if (b) {
		*s = *b;
		return 0;
	}
	*s = (struct shape){ 0 };
	snprintf(path, sizeof(path), "%s", name_or_path);
	if ((f = fopen(path, "rb"))) {
		/* a folder opens but cannot be read: look for its config.json */
		if (fread(magic, 1, 4, f) == 0 && ferror(f)) {
			fclose(f);
			snprintf(path, sizeof(path), "%s/config.json", name_or_path);
			f = fopen(path, "rb");
		}
	}
	if (!f) {
		char known[1024] = "";
		size_t n = 0;

		for (size_t i = 0; i < N_SHAPES && n < 900; i++)
			n += (size_t)snprintf(known + n, sizeof(known) - n,
					      "%s%.63s", i ? ", " : "",
					      shapes[i].name);
		return err_set(e, "'%s' is neither a model hybridspec knows (%s)"
			       " nor a readable config.json or GGUF file",
			       name_or_path, known);
	}
	fclose(f);
	rc = !memcmp(magic, "GGUF", 4) ? load_gguf(s, path, e)
				       : load_hf(s, path, e);
	if (rc == 0) {
		name_from(s, path);
		if (s->head_dim == s->dim / s->n_heads &&
		    s->dim % s->n_heads == 0)
			s->head_dim = 0; /* the default, stated once */
	}
	return rc;
}
