/* cgpu.c: the verify-cost table of a GPU: measured, by timing whole
 * forwards of a Llama model on the GPU (kernels/gk.h), or, without a GPU,
 * the simulator's roofline evaluated on the same grid from datasheet
 * constants and the default efficiencies, marked uncalibrated.
 *
 * A measured point (t tokens, context c) is a batch of ceil(t / 5) verify
 * blocks of gamma + 1 = 5 tokens (the last one shorter), each a sequence
 * whose KV cache holds c positions; sequences beyond the caches the device
 * can hold share caches round-robin (the time does not depend on the
 * values; such a forward is for timing only). */
#include "cgpu.h"
#include "ccpu.h"

#include "cost.h"
#include "f16.h"
#include "fmt.h"
#include "gpu.h"
#include "jx.h"
#include "shape.h"
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* -1 with e saying that name is not a built-in shape: shape_load's message
 * lists them, or a file's says that only they are timed */
static int unknown_shape(const char *name, struct err *e)
{
	struct shape any;

	if (shape_load(&any, name, e) == 0)
		err_set(e, "--model: a built-in shape, not the file '%s'", name);
	return -1;
}

json_t *calib_gpu_roofline(const char *gpu, const char *shape,
			   const json_t *prov, struct err *e)
{
	static const int toks[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512,
				    1024, 2048, 4096 };
	static const int ctxs[] = { 128, 256, 512, 1024, 2048, 4096 };
	const struct gpu_spec *g = gpu_preset_find(gpu);
	const struct shape *s = shape_find(shape);
	json_t *tok, *ctx, *rows;
	struct cfg_cloud cl;
	struct cost c;

	if (!g) {
		char known[512];

		return err_set(e, "--gpu: unknown GPU preset '%s' (known: %s)", gpu,
			       fmt_names(known, sizeof(known),
					 gpu_preset_names())), NULL;
	}
	if (!s)
		return unknown_shape(shape, e), NULL;
	cfg_cloud_default(&cl, gpu, s);
	cost_init(&c, &cl);
	tok = json_array();
	ctx = json_array();
	rows = json_array();
	for (size_t j = 0; j < sizeof(ctxs) / sizeof(ctxs[0]); j++)
		json_array_append_new(ctx, json_integer(ctxs[j]));
	for (size_t i = 0; i < sizeof(toks) / sizeof(toks[0]); i++) {
		json_t *row = json_array();
		long seqs = (toks[i] + CALIB_GPU_BLOCK - 1) / CALIB_GPU_BLOCK;

		json_array_append_new(tok, json_integer(toks[i]));
		for (size_t j = 0; j < sizeof(ctxs) / sizeof(ctxs[0]); j++) {
			struct cost_batch b = { toks[i], seqs,
				(double)seqs * ctxs[j],
				(double)toks[i] * ctxs[j], toks[i] };

			json_array_append_new(row,
					      json_real(cost_iter_s(&c, &b, NULL,
								    NULL)));
		}
		json_array_append_new(rows, row);
	}
	return json_pack("{s:s,s:s,s:s,s:b,s:s,s:o,s:o,s:o,s:O}", "kind",
			 "verify", "gpu", g->name, "model", shape, "calibrated", 0,
			 "method", "uncalibrated: the roofline max(bytes / (0.8 "
			 "BW), flops / (0.6 FLOP/s)) + 0.5 ms from datasheet "
			 "constants (sim/gpu.c), sequences of 5 tokens (gamma "
			 "4); no GPU was measured",
			 "tokens", tok, "ctx", ctx, "seconds", rows,
			 "provenance", prov);
}

/* one linear layer to the GPU: FP16 as it is, FP32 rounded to FP16, W4A16
 * repacked */
static int put_linear(const struct gk_api *api, struct gk_model *gm,
		      enum gk_tensor t, int layer, const struct linear *l,
		      bool w4a16, struct err *e)
{
	char msg[GK_MSG];
	struct gk_weights w = { 0 };
	struct gk_q4 q = { 0 };
	uint16_t *f16 = NULL;
	int rc;

	if (w4a16 != (l->format == LIN_W4A16))
		return err_set(e, "the GPU model takes FP32, FP16 or W4A16 "
			       "layers, a block's seven alike");
	if (l->format == LIN_W4A16) {
		gk_q4_pack(&q, &l->q4);
		w.q4 = &q;
	} else if (l->format == LIN_F16) {
		w.f16 = l->f16;
	} else if (l->format == LIN_F32) {
		size_t n = (size_t)l->n * l->k;

		f16 = xmalloc(n * sizeof(uint16_t));
		for (size_t i = 0; i < n; i++)
			f16[i] = f16_from_f32(l->f32[i]);
		w.f16 = f16;
	} else {
		return err_set(e, "the GPU model takes FP32, FP16 or W4A16 "
			       "layers, not W8A16 or W4A4");
	}
	rc = api->model_set(gm, t, layer, &w, NULL, msg);
	gk_q4_release(&q);
	free(f16);
	return rc < 0 ? err_set(e, "%s", msg) : 0;
}

static int upload(const struct gk_api *api, struct gk_model *gm,
		  const struct llama *m, bool w4a16, struct err *e)
{
	const struct llama_config *c = &m->c;
	char msg[GK_MSG];

	if (api->model_set(gm, GK_EMB, 0, NULL, m->tok_emb, msg) < 0 ||
	    api->model_set(gm, GK_RMS_FINAL, 0, NULL, m->rms_final, msg) < 0)
		return err_set(e, "%s", msg);
	for (int l = 0; l < c->n_layers; l++) {
		const struct llama_layer *y = &m->layer[l];
		const struct linear *lin[] = { &y->wq, &y->wk, &y->wv, &y->wo,
					       &y->w1, &y->w2, &y->w3 };

		if (api->model_set(gm, GK_RMS_ATT, l, NULL, y->rms_att, msg) < 0 ||
		    api->model_set(gm, GK_RMS_FFN, l, NULL, y->rms_ffn, msg) < 0)
			return err_set(e, "%s", msg);
		for (int j = 0; j < 7; j++)
			if (put_linear(api, gm, (enum gk_tensor)(GK_WQ + j), l,
				       lin[j], w4a16, e) < 0)
				return -1;
	}
	return put_linear(api, gm, GK_CLS, 0, &m->cls,
			  m->cls.format == LIN_W4A16, e);
}

struct gk_model *calib_gpu_model(const struct gk_api *api,
				 const struct llama_config *c,
				 const struct llama *weights, bool w4a16,
				 int group, int max_tokens, int caches,
				 struct err *e)
{
	/* the classifier as the weights have it (a W4A16 model keeps it in
	 * FP32 unless quantised with -head), W4A16 with the layers when the
	 * weights are the GPU's random ones */
	struct gk_model_desc d = { c->dim, c->hidden, c->n_layers, c->n_heads,
		c->n_kv_heads, c->vocab, c->seq_len, c->norm_eps,
		c->rope_theta, c->rope_half, w4a16, group,
		weights ? weights->cls.format == LIN_W4A16 : w4a16, max_tokens,
		caches };
	char msg[GK_MSG];
	struct gk_model *gm = api->model_new(&d, msg);

	if (!gm)
		return err_set(e, "%s", msg), NULL;
	if (weights && upload(api, gm, weights, w4a16, e) < 0) {
		api->model_free(gm);
		return NULL;
	}
	return gm;
}

/* One measured point's forward: ceil(tokens / 5) blocks at context ctx,
 * sequence s on cache s % caches. */
static int gpu_batch(const struct gk_api *api, struct gk_model *gm,
		     int caches, int tokens, int ctx, struct err *e)
{
	int nseq = (tokens + CALIB_GPU_BLOCK - 1) / CALIB_GPU_BLOCK;
	struct gk_seq *seq = xmalloc(sizeof(*seq) * (size_t)nseq);
	int *toks = xmalloc(sizeof(int) * (size_t)tokens), rc;
	char msg[GK_MSG];

	for (int i = 0; i < tokens; i++)
		toks[i] = (int)((ctx + 7919L * (i + 1)) % 256); /* any vocabulary
								  here has them */
	for (int s = 0; s < nseq; s++) {
		int n = tokens - s * CALIB_GPU_BLOCK;

		seq[s] = (struct gk_seq){ s % caches,
			n < CALIB_GPU_BLOCK ? n : CALIB_GPU_BLOCK, ctx,
			toks + s * CALIB_GPU_BLOCK };
	}
	rc = api->model_forward(gm, seq, nseq, NULL, msg);
	free(seq);
	free(toks);
	return rc < 0 ? err_set(e, "%s", msg) : 0;
}

/* one point, as a calib_time_fn and as the run median_s times */
struct point {
	const struct calib_gpu_opts *o;
	const struct gk_api *api;
	struct gk_model *gm;
	int caches, tokens, ctx;
	struct err *e;
	bool failed;
};

static int run_point(void *arg, char *msg)
{
	struct point *p = arg;

	if (gpu_batch(p->api, p->gm, p->caches, p->tokens, p->ctx, p->e) < 0) {
		snprintf(msg, GK_MSG, "%.500s", p->e->msg);
		return -1;
	}
	return 0;
}

static double point_s(void *arg, int tokens, int ctx)
{
	struct point *p = arg;
	char msg[GK_MSG];
	double s;

	if (p->failed)
		return 1; /* the table is thrown away */
	p->tokens = tokens;
	p->ctx = ctx;
	s = p->api->median_s(run_point, p, 2, p->o->reps, 0, msg);
	if (s < 0) {
		err_set(p->e, "%s", msg);
		p->failed = true;
		return 1;
	}
	return s;
}

static int last(const int *list)
{
	int n = 0;

	while (list[n + 1])
		n++;
	return list[n];
}

/* device bytes of the weights and of one KV cache */
static void model_bytes(const struct llama_config *c, bool w4a16, int group,
			double *weights, double *cache)
{
	double kv = (double)c->dim / c->n_heads * c->n_kv_heads;
	double params = (double)c->n_layers * (2.0 * c->dim * c->dim +
					       2.0 * kv * c->dim +
					       3.0 * c->dim * c->hidden) +
			(double)c->vocab * c->dim;

	*weights = (w4a16 ? params / 2 + params / group * 4 : 2 * params) +
		   4.0 * c->vocab * c->dim;
	*cache = 2.0 * 2.0 * c->n_layers * c->seq_len * kv;
}

/* "NVIDIA H200" -> "NVIDIA-H200" for a file name */
static void file_word(char *dst, size_t n, const char *src)
{
	size_t i = 0;

	for (; src[i] && i + 1 < n; i++)
		dst[i] = (src[i] == ' ' || src[i] == '/') ? '-' : src[i];
	dst[i] = 0;
}

json_t *calib_gpu(const struct calib_gpu_opts *o, const json_t *prov,
		  struct gk_device *dev, char path[CALIB_PATH_BYTES],
		  struct err *e)
{
	const struct shape *s = shape_find(o->model);
	struct quant q;
	struct llama_config c;
	double wbytes, cbytes, budget;
	int maxseq = (last(o->tokens) + CALIB_GPU_BLOCK - 1) / CALIB_GPU_BLOCK;
	int caches;
	const struct gk_api *api;
	struct gk_model *gm;
	json_t *table = NULL, *pv;
	char method[600], qname[32];
	struct point pt = { o, NULL, NULL, 0, 0, 0, e, false };

	if (!s)
		return unknown_shape(o->model, e), NULL;
	if (mload_quant_parse(o->quant, &q, NULL) < 0 ||
	    (q.format != LIN_F16 && q.format != LIN_W4A16))
		return err_set(e, "--quant: expected f16 or w4a16[-gG] (G 32, "
			       "64 or 128: the formats the GPU model takes), "
			       "got '%s'", o->quant), NULL;
	c = (struct llama_config){ s->dim, s->hidden, s->n_layers, s->n_heads,
		s->n_kv_heads, s->vocab, last(o->ctx) + last(o->tokens), 1e-5f,
		10000.0f, false };
	if (!(api = gk_open(dev, e))) {
		char why[sizeof(e->msg)];

		snprintf(why, sizeof(why), "%s", e->msg);
		err_set(e, "%.900s (--roofline writes the uncalibrated table "
			"of a preset without a GPU)", why);
		return NULL;
	}
	if (o->out) {
		snprintf(path, CALIB_PATH_BYTES, "%s", o->out);
	} else {
		char word[256];

		file_word(word, sizeof(word), dev->name);
		snprintf(path, CALIB_PATH_BYTES, "results/calib/verify-%s-%s-%s.json",
			 word, o->model, o->quant);
	}
	if (jx_replaceable(path, NULL, NULL, o->overwrite, e) < 0) {
		gk_close(); /* before the model is built and timed */
		return NULL;
	}
	model_bytes(&c, q.format == LIN_W4A16, q.group, &wbytes, &cbytes);
	/* a tenth of the free memory and 1 GiB left for cuBLAS and scratch */
	budget = 0.9 * (double)dev->free_bytes - (1 << 30) - wbytes;
	if (budget < cbytes) {
		err_set(e, "'%s' in %s needs %.1f GB of weights and %.1f GB a KV "
			"cache; %s has %.1f GB free", o->model, mload_quant_name(&q, qname),
			wbytes / 1e9, cbytes / 1e9, dev->name,
			dev->free_bytes / 1e9);
		gk_close();
		return NULL;
	}
	caches = budget / cbytes < maxseq ? (int)(budget / cbytes) : maxseq;
	if (o->progress)
		fprintf(stderr, "calib: %s, %s %s: %.1f GB of weights, %d KV "
			"caches of %d positions\n", dev->name, o->model,
			mload_quant_name(&q, qname), wbytes / 1e9, caches, c.seq_len);
	if (!(gm = calib_gpu_model(api, &c, NULL, q.format == LIN_W4A16,
				   q.group, last(o->tokens), caches, e))) {
		gk_close();
		return NULL;
	}
	snprintf(method, sizeof(method), "whole forwards of the model on %s "
		 "(kernels/cuda: %s linear layers, FP16 KV cache, random "
		 "weights): batches of ceil(tokens / %d) verify blocks at each "
		 "context, %d KV caches (more sequences share them "
		 "round-robin), CUDA events, median of %d runs after 2 warm-ups",
		 dev->name, q.format == LIN_W4A16 ? "W4A16" : "cuBLAS FP16",
		 CALIB_GPU_BLOCK, caches, o->reps);
	pv = json_deep_copy(prov);
	json_object_set_new(pv, "gpu_device", json_string(dev->name));
	json_object_set_new(pv, "quant", json_string(mload_quant_name(&q, qname)));
	pt.api = api;
	pt.gm = gm;
	pt.caches = caches;
	table = calib_verify_table(dev->name, o->model, c.seq_len, o->tokens,
				   o->ctx, point_s, &pt, method, pv, o->progress);
	json_decref(pv);
	if (pt.failed) {
		json_decref(table);
		table = NULL;
	}
	api->model_free(gm);
	gk_close();
	return table;
}


json_t *calib_gpu_table(const struct calib_gpu_opts *o, const char *preset,
			const json_t *prov, char path[CALIB_PATH_BYTES],
			struct err *e)
{
	struct gk_device dev;
	json_t *t = NULL;

	path[0] = 0;
	if (!preset) {
		t = calib_gpu(o, prov, &dev, path, e);
	} else if (!o->out ||
		   jx_replaceable(o->out, NULL, NULL, o->overwrite, e) == 0) {
		snprintf(path, CALIB_PATH_BYTES, "%s", o->out ? o->out : "");
		t = calib_gpu_roofline(preset, o->model, prov, e);
		if (t && o->progress)
			fprintf(stderr, "calib: the uncalibrated roofline of %s "
				"for %s\n", preset, o->model);
	}
	if (!t)
		err_prefix(e, "calib gpu");
	return t;
}
