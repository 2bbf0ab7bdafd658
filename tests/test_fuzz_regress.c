/* test_fuzz_regress.c: every input that once crashed or hung a fuzz target
 * (fuzz/regress/TARGET/NAME) goes through the same reader again, in the
 * normal build: it must fail with a message (or, for a NAME starting with
 * "ok-", load), within FZ_SLOW_S, and not crash. The targets are
 * fuzz/fz_*.c, built here without libFuzzer's entry point. */
#define FZ_NO_MAIN
#include "harness.h"

#include <time.h>

/* libFuzzer's hang limit (fuzz/run.sh) */
#define FZ_SLOW_S 10.0

#include "../fuzz/fz_acc_trace.c"
#include "../fuzz/fz_cfg.c"
#include "../fuzz/fz_cost.c"
#include "../fuzz/fz_csv.c"
#include "../fuzz/fz_gguf.c"
#include "../fuzz/fz_hf.c"
#include "../fuzz/fz_llama2c.c"
#include "../fuzz/fz_prof_accept.c"
#include "../fuzz/fz_prof_edge.c"
#include "../fuzz/fz_shape.c"
#include "../fuzz/fz_sweep.c"
#include "../fuzz/fz_tok_hf.c"
#include "../fuzz/fz_tok_llama2c.c"
#include "../fuzz/fz_wire.c"
#include "../fuzz/fz_wl_trace.c"
#include "mem.h"

static const struct {
	const char *name;
	int (*fn)(const uint8_t *data, size_t size);
} fz_targets[] = {
	{ "fz_acc_trace", fz_acc_trace },
	{ "fz_cfg", fz_cfg },
	{ "fz_cost", fz_cost },
	{ "fz_csv", fz_csv },
	{ "fz_gguf", fz_gguf },
	{ "fz_hf", fz_hf },
	{ "fz_llama2c", fz_llama2c },
	{ "fz_prof_accept", fz_prof_accept },
	{ "fz_prof_edge", fz_prof_edge },
	{ "fz_shape", fz_shape },
	{ "fz_sweep", fz_sweep },
	{ "fz_tok_hf", fz_tok_hf },
	{ "fz_tok_llama2c", fz_tok_llama2c },
	{ "fz_wire", fz_wire },
	{ "fz_wl_trace", fz_wl_trace },
};

/* The whole file (size in *n), or NULL. Caller frees. */
static uint8_t *slurp_bytes(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	size_t cap = 0, got;

	*n = 0;
	if (!f)
		return NULL;
	do {
		if (*n == cap)
			p = xrealloc(p, cap = cap ? 2 * cap : 4096);
		got = fread(p + *n, 1, cap - *n, f);
		*n += got;
	} while (got > 0);
	fclose(f);
	return p;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay(void)
{
	size_t total = 0;

	for (size_t k = 0; k < sizeof(fz_targets) / sizeof(fz_targets[0]); k++) {
		char dir[256], path[600], **names = NULL;
		size_t n_names = 0;
		struct dirent *de;
		DIR *d;

		snprintf(dir, sizeof(dir), "fuzz/regress/%s", fz_targets[k].name);
		if (!(d = opendir(dir)))
			continue;
		while ((de = readdir(d)))
			if (de->d_name[0] != '.') {
				names = xrealloc(names, (n_names + 1) * sizeof(*names));
				names[n_names++] = xstrdup(de->d_name);
			}
		closedir(d);
		qsort(names, n_names, sizeof(*names), by_name);
		for (size_t i = 0; i < n_names; i++) {
			int want = strncmp(names[i], "ok-", 3) ? -1 : 0, rc;
			struct timespec t0, t1;
			double took;
			size_t n;
			uint8_t *data;

			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			data = slurp_bytes(path, &n);
			CHECK_MSG(data != NULL, "cannot read %s", path);
			clock_gettime(CLOCK_MONOTONIC, &t0);
			rc = fz_targets[k].fn(data ? data : (const uint8_t *)"",
					      data ? n : 0);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			took = (double)(t1.tv_sec - t0.tv_sec) +
			       1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
			CHECK_MSG(rc == want, "%s: the reader returned %d, want %d",
				  path, rc, want);
			CHECK_MSG(took < FZ_SLOW_S, "%s: the reader took %.1f s",
				  path, took);
			free(data);
			free(names[i]);
			total++;
		}
		free(names);
	}
	CHECK_MSG(total > 0, "no inputs under fuzz/regress/");
}

/* Appends a safetensors entry of n F16 zeros (shape [r] or [r, k]) to hdr
 * at offset *at. */
static void st_entry(char *hdr, size_t cap, const char *name, int r, int k,
		     size_t *at)
{
	size_t n = (size_t)r * (k ? k : 1), len = strlen(hdr);

	if (k)
		snprintf(hdr + len, cap - len, "%s\"%s\":{\"dtype\":\"F16\","
			 "\"shape\":[%d,%d],\"data_offsets\":[%zu,%zu]}",
			 len > 1 ? "," : "", name, r, k, *at, *at + 2 * n);
	else
		snprintf(hdr + len, cap - len, "%s\"%s\":{\"dtype\":\"F16\","
			 "\"shape\":[%d],\"data_offsets\":[%zu,%zu]}",
			 len > 1 ? "," : "", name, r, *at, *at + 2 * n);
	*at += 2 * n;
}

/* Models whose head size (514: dim 514, one head) is more than the forward
 * pass takes loaded, then aborted in it; the loaders refuse them now. Too
 * big for fuzz/regress/ (2 and 4 MB of zeros), they are made here. */
static void big_heads(void)
{
	static const char config[] = "{\"model_type\": \"llama\", "
		"\"hidden_size\": 514, "
		"\"intermediate_size\": 1, \"num_hidden_layers\": 1, "
		"\"num_attention_heads\": 1, \"num_key_value_heads\": 1, "
		"\"vocab_size\": 1, \"max_position_embeddings\": 1, "
		"\"tie_word_embeddings\": true}";
	const int32_t h[7] = { 514, 1, 1, 1, 1, 1, 1 };
	const size_t d = 514;
	size_t n = d + (2 * d + 4 * d * d + 3 * d) + d + d, at = 0, hl, total;
	uint8_t *buf = xcalloc(28 + 4 * n, 1);
	char hdr[4096] = "{";
	uint64_t len;

	/* llama2.c: embedding, norms, 4 attention and 3 MLP matrices, final
	 * norm, the RoPE table; shared classifier */
	memcpy(buf, h, sizeof(h));
	CHECK(fz_llama2c(buf, 28 + 4 * n) == -1);
	free(buf);
	/* Hugging Face: the same shape in F16 */
	st_entry(hdr, sizeof(hdr), "model.embed_tokens.weight", 1, 514, &at);
	st_entry(hdr, sizeof(hdr), "model.layers.0.input_layernorm.weight",
		 514, 0, &at);
	st_entry(hdr, sizeof(hdr),
		 "model.layers.0.post_attention_layernorm.weight", 514, 0, &at);
	st_entry(hdr, sizeof(hdr), "model.layers.0.self_attn.q_proj.weight",
		 514, 514, &at);
	st_entry(hdr, sizeof(hdr), "model.layers.0.self_attn.k_proj.weight",
		 514, 514, &at);
	st_entry(hdr, sizeof(hdr), "model.layers.0.self_attn.v_proj.weight",
		 514, 514, &at);
	st_entry(hdr, sizeof(hdr), "model.layers.0.self_attn.o_proj.weight",
		 514, 514, &at);
	st_entry(hdr, sizeof(hdr), "model.layers.0.mlp.gate_proj.weight", 1,
		 514, &at);
	st_entry(hdr, sizeof(hdr), "model.layers.0.mlp.down_proj.weight", 514,
		 1, &at);
	st_entry(hdr, sizeof(hdr), "model.layers.0.mlp.up_proj.weight", 1, 514,
		 &at);
	st_entry(hdr, sizeof(hdr), "model.norm.weight", 514, 0, &at);
	strcat(hdr, "}");
	hl = strlen(hdr);
	len = hl;
	total = sizeof(config) + 8 + hl + at; /* config, NUL, file */
	buf = xcalloc(total, 1);
	memcpy(buf, config, sizeof(config));
	memcpy(buf + sizeof(config), &len, 8);
	memcpy(buf + sizeof(config) + 8, hdr, hl);
	CHECK(fz_hf(buf, total) == -1);
	free(buf);
}

const struct tcase fuzz_regress_tests[] = {
	{ "fuzz: every input that crashed or hung a reader is handled",
	  replay },
	{ "fuzz: models with heads over 512 are refused, not aborted on",
	  big_heads },
	{ 0 },
};
