/* ccpu.c: timing a model's draft steps, verify blocks and prefills on this
 * CPU, and fitting the simulator's edge-cost form to them.
 *
 * Before a step at context ctx is timed, the KV cache holds ctx positions of
 * random values (the time of a step does not depend on the values, and
 * filling the cache of a 7B model by running 2048 prompt tokens would take
 * minutes); the tokens fed are arbitrary ids. A measurement is the median
 * of its repetitions. */
#include "ccpu.h"

#include "rt.h"
#include "kbench.h"
#include "pool.h"
#include "prof.h"
#include "shape.h"
#include "spec.h"
#include "synth.h"
#include "mem.h"
#include "order.h"

#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int calib_model_init(struct calib_model *c, const char *model,
		     const char *shape, const char *quant, int threads,
		     int seq_len, struct err *e)
{
	struct quant q;

	*c = (struct calib_model){ .threads = threads };
	if (mload_quant_parse(quant, &q, e) < 0)
		return -1;
	mload_quant_name(&q, c->quant);
	if (model) {
		const char *slash = strrchr(model, '/');

		if (mload(model, &q, &c->m, &c->t, e) < 0)
			return -1;
		snprintf(c->name, sizeof(c->name), "%s", slash ? slash + 1 : model);
		snprintf(c->path, sizeof(c->path), "%s", model);
	} else {
		struct shape sh, *s = &sh;
		struct llama_config lc;

		if (shape_load(s, shape, e) < 0)
			return -1;
		/* what the forward runs: dense, heads of dim / heads */
		if (s->n_experts)
			return err_set(e, "%s: a mixture of %d experts; calib cpu "
				       "times dense models only", shape,
				       s->n_experts);
		if (s->head_dim && s->head_dim * s->n_heads != s->dim)
			return err_set(e, "%s: head_dim %d x %d heads is not the "
				       "width %d; calib cpu's forward needs heads "
				       "of dim / heads", shape, s->head_dim,
				       s->n_heads, s->dim);
		lc = (struct llama_config){ s->dim, s->hidden, s->n_layers,
			s->n_heads, s->n_kv_heads, s->vocab, seq_len, 1e-5f,
			10000.0f, false };
		if (synth_llama(&c->m, &lc, &q, 0x5eed, e) < 0)
			return -1;
		c->synthetic = true;
		snprintf(c->name, sizeof(c->name), "%.63s", s->name);
	}
	if (threads > 1)
		c->pool = kern_pool_new(threads);
	c->m.pool = c->pool;
	return 0;
}

void calib_model_release(struct calib_model *c)
{
	llama_release(&c->m);
	if (!c->synthetic)
		tok_release(&c->t);
	if (c->pool)
		kpool_free(c->pool);
	memset(c, 0, sizeof(*c));
}

/* What is timed: a draft step, a block, or a prefill of n tokens. */
enum what { DRAFT, BLOCK, PREFILL };

static void run_once(struct calib_model *c, struct llama_state *st,
		     enum what w, int n, int ctx, float *logits, int *toks)
{
	int vocab = c->m.c.vocab;

	for (int i = 0; i < n; i++)
		toks[i] = (int)((ctx + 7919L * (i + 1)) % vocab);
	switch (w) {
	case DRAFT:
		llama_forward(&c->m, st, toks, 1, ctx, logits);
		toks[0] = spec_argmax(logits, vocab);
		break;
	case BLOCK:
		llama_forward(&c->m, st, toks, n, ctx, logits);
		break;
	case PREFILL:
		for (int at = 0; at < n; at += CALIB_PREFILL_BLOCK) {
			int b = n - at < CALIB_PREFILL_BLOCK ? n - at
							     : CALIB_PREFILL_BLOCK;

			llama_forward_last(&c->m, st, toks + at, b, at,
					   at + b == n ? logits : NULL);
		}
		break;
	}
}

/* Each timed run after a pause of pause_s (spin: awake); none: warm.
 * *upper_s (unless NULL): the upper quartile of the runs. */
static double median_s(struct calib_model *c, struct llama_state *st,
		       enum what w, int n, int ctx, int reps, double min_s,
		       double pause_s, bool spin, double *upper_s)
{
	int cap = reps > 16 ? reps : 16, k = 0, blk = n > st->max_block ?
		st->max_block : n;
	double *t = xmalloc(sizeof(double) * (size_t)cap), spent = 0, med;
	float *logits = xmalloc(sizeof(float) * (size_t)c->m.c.vocab *
				(size_t)(blk > 1 ? blk : 1));
	int *toks = xmalloc(sizeof(int) * (size_t)(n > 1 ? n : 1));

	{ /* warm caches and pages; a run of over 0.5 s is its own warm-up
	   * and counts */
		double t0 = rt_now_s();

		run_once(c, st, w, n, ctx, logits, toks);
		if ((t[0] = rt_now_s() - t0) > 0.5)
			spent = t[k++];
	}
	while (k < reps || spent < min_s) {
		double t0;

		if (pause_s > 0)
			rt_pause_s(pause_s, spin);
		t0 = rt_now_s();
		run_once(c, st, w, n, ctx, logits, toks);
		if (k == cap)
			t = xrealloc(t, sizeof(double) * (size_t)(cap *= 2));
		t[k] = rt_now_s() - t0;
		spent += t[k++];
		if (k >= 100000)
			break;
	}
	med = order_median(t, (size_t)k); /* t sorted */
	if (upper_s)
		*upper_s = t[(3 * k) / 4];
	free(t);
	free(logits);
	free(toks);
	return med;
}

double calib_draft_s(struct calib_model *c, struct llama_state *st, int ctx,
		     int reps, double min_s)
{
	return median_s(c, st, DRAFT, 1, ctx, reps, min_s, 0, false, NULL);
}

double calib_draft_after_s(struct calib_model *c, struct llama_state *st,
			   int ctx, double pause_s, bool spin, int reps,
			   double *upper_s)
{
	return median_s(c, st, DRAFT, 1, ctx, reps, 0, pause_s, spin, upper_s);
}

double calib_block_s(struct calib_model *c, struct llama_state *st, int n,
		     int ctx, int reps, double min_s)
{
	return median_s(c, st, BLOCK, n, ctx, reps, min_s, 0, false, NULL);
}

double calib_prefill_s(struct calib_model *c, struct llama_state *st, int n,
		       int reps, double min_s)
{
	return median_s(c, st, PREFILL, n, 0, reps, min_s, 0, false, NULL);
}

double calib_fit(const double *x, const double *t, int n, double *a,
		 double *b)
{
	double *w = xmalloc(sizeof(double) * (size_t)n), c00, c01, c11, ss,
	       worst = 0;

	for (int i = 0; i < n; i++)
		w[i] = 1 / (t[i] * t[i]);
	*a = t[0];
	*b = 0;
	if (n >= 2)
		gsl_fit_wlinear(x, 1, w, 1, t, 1, (size_t)n, a, b, &c00, &c01,
				&c11, &ss);
	if (*b < 0) { /* flat within noise: a weighted mean */
		double sw = 0, swt = 0;

		for (int i = 0; i < n; i++) {
			sw += w[i];
			swt += w[i] * t[i];
		}
		*a = swt / sw;
		*b = 0;
	} else if (*a < 0) { /* through the origin */
		*a = 0;
		gsl_fit_wmul(x, 1, w, 1, t, 1, (size_t)n, b, &c11, &ss);
	}
	for (int i = 0; i < n; i++) {
		double r = fabs(*a + *b * x[i] - t[i]) / t[i];

		if (r > worst)
			worst = r;
	}
	free(w);
	return worst;
}

static json_t *array_of(const double *v, int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_real(v[i]));
	return a;
}

static int count(const int *v)
{
	int n = 0;

	while (v && v[n])
		n++;
	return n;
}

static void progress(bool show, const char *what, int n, int ctx, double s)
{
	if (show)
		fprintf(stderr, "calib: %-7s %5d token%s at context %5d: "
			"%10.3f ms\n", what, n, n > 1 ? "s" : " ", ctx, 1e3 * s);
}

json_t *calib_verify_table(const char *gpu, const char *model, int seq_len,
			   const int *tokens, const int *ctxs,
			   calib_time_fn *fn, void *arg, const char *method,
			   const json_t *prov, bool show)
{
	int nt = count(tokens), nc = 0, raised = 0;
	int maxt = tokens[nt - 1];
	double *prev = xcalloc((size_t)count(ctxs) + 1, sizeof(double));
	json_t *ctx = json_array(), *rows = json_array(), *tok = json_array();
	char m2[1024];

	for (int j = 0; ctxs[j]; j++)
		if (ctxs[j] + maxt <= seq_len) {
			json_array_append_new(ctx, json_integer(ctxs[j]));
			nc++;
		}
	for (int i = 0; i < nt; i++) {
		json_t *row = json_array();

		for (int j = 0; j < nc; j++) {
			int cx = (int)json_integer_value(json_array_get(ctx, j));
			double s = fn(arg, tokens[i], cx);

			progress(show, "verify", tokens[i], cx, s);
			if (s < prev[j]) {
				s = prev[j];
				raised++;
			}
			prev[j] = s;
			json_array_append_new(row, json_real(s));
		}
		json_array_append_new(rows, row);
		json_array_append_new(tok, json_integer(tokens[i]));
	}
	free(prev);
	if (raised)
		snprintf(m2, sizeof(m2), "%.900s; %d times raised to the time "
			 "for fewer tokens at the same context", method, raised);
	return json_pack("{s:s,s:s,s:s,s:b,s:s,s:o,s:o,s:o,s:O}", "kind",
			 "verify", "gpu", gpu, "model", model, "calibrated", 1,
			 "method", raised ? m2 : method, "tokens", tok, "ctx", ctx,
			 "seconds", rows, "provenance", prov);
}

/* calib_block_s as a calib_time_fn */
struct block_arg {
	struct calib_model *c;
	struct llama_state *st;
	const struct calib_cpu_opts *o;
};

static double block_time(void *arg, int tokens, int ctx)
{
	struct block_arg *b = arg;

	return calib_block_s(b->c, b->st, tokens, ctx, b->o->reps, b->o->min_s);
}

static json_t *verify_table(struct calib_model *c, struct llama_state *st,
			    const struct calib_cpu_opts *o, const json_t *prov)
{
	struct block_arg b = { c, st, o };
	char dev[96];

	snprintf(dev, sizeof(dev), "cpu-%dt", c->threads);
	return calib_verify_table(dev, c->name, c->m.c.seq_len, o->verify_tokens,
				  o->ctx, block_time, &b, "block forwards timed "
				  "on this CPU (median of repetitions)", prov,
				  o->progress);
}

json_t *calib_cpu(struct calib_model *c, const struct calib_cpu_opts *o,
		  const json_t *prov, json_t **verify)
{
	const struct llama_config *lc = &c->m.c;
	int nctx = count(o->ctx), npre = count(o->prefill), vmax = 1, blk;
	double *cx = xmalloc(sizeof(double) * (size_t)nctx);
	double *ct = xmalloc(sizeof(double) * (size_t)nctx);
	double *px = xmalloc(sizeof(double) * (size_t)npre);
	double *pt = xmalloc(sizeof(double) * (size_t)npre);
	double da, db, pa, pb, dres, pres, stream[3], peak, int8, pair;
	struct llama_state st;
	json_t *model, *out;

	if (o->verify_tokens)
		vmax = o->verify_tokens[count(o->verify_tokens) - 1];
	blk = vmax > CALIB_PREFILL_BLOCK ? vmax : CALIB_PREFILL_BLOCK;
	kbench_stream(c->threads, o->stream_bytes, stream);
	peak = kbench_flops(c->threads);
	int8 = kbench_int8(c->m.kn, c->threads);
	if (o->progress)
		fprintf(stderr, "calib: %s %s, %d thread%s, %s activations in "
			"blocks, %s in draft steps; STREAM triad %.1f GB/s, FMA "
			"peak %.0f GFLOP/s, int8 dot peak %.0f GOP/s\n", c->name,
			c->quant, c->threads, c->threads > 1 ? "s" : "",
			llama_block_acts(&c->m), llama_decode_acts(&c->m),
			stream[KSTREAM_TRIAD], peak, int8);
	llama_state_init(&st, lc, blk);
	synth_cache(&st, lc, lc->seq_len, 0xcac4e);
	for (int i = 0; i < npre; i++) {
		px[i] = o->prefill[i];
		pt[i] = calib_prefill_s(c, &st, o->prefill[i], o->reps, o->min_s);
		progress(o->progress, "prefill", o->prefill[i], 0, pt[i]);
		/* more tokens never take less time: a median below the one
		 * before is the shared machine's noise (the profile reader
		 * refuses a prefill series that falls) */
		if (i && pt[i] < pt[i - 1])
			pt[i] = pt[i - 1];
	}
	/* the prefill overwrote the first positions with real activations of
	 * arbitrary tokens: as good as random for timing */
	for (int i = 0; i < nctx; i++) {
		cx[i] = o->ctx[i];
		ct[i] = calib_draft_s(c, &st, o->ctx[i], o->reps, o->min_s);
		progress(o->progress, "draft", 1, o->ctx[i], ct[i]);
	}
	/* a pass feeding two tokens (an edge's bonus token with the last
	 * draft), at the middle context */
	pair = calib_block_s(c, &st, 2, o->ctx[nctx / 2], o->reps, o->min_s);
	progress(o->progress, "draft", 2, o->ctx[nctx / 2], pair);
	*verify = o->verify_tokens ? verify_table(c, &st, o, prov) : NULL;
	llama_state_release(&st);
	dres = calib_fit(cx, ct, nctx, &da, &db);
	pres = calib_fit(px, pt, npre, &pa, &pb);
	model = json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:s}", "name", c->name,
			  "dim", lc->dim, "hidden", lc->hidden, "layers",
			  lc->n_layers, "heads", lc->n_heads, "kv_heads",
			  lc->n_kv_heads, "vocab", lc->vocab, "weights",
			  c->synthetic ? "synthetic" : "trained");
	if (!c->synthetic)
		json_object_set_new(model, "path", json_string(c->path));
	out = json_pack("{s:s,s:s,s:b,s:o,s:s,s:i,s:s,s:s,s:s,s:f,s:f,s:f,s:{s:o,s:o},"
			"s:{s:o,s:o},s:{s:f,s:f,s:f,s:f,s:f,s:f,s:f},s:O}",
			"kind", "edge", "device", "", "derived", 0, "model", model,
			"quant", c->quant, "threads", c->threads, "kernel",
			c->m.kn->name, "prefill_activations", llama_block_acts(&c->m),
			"decode_activations", llama_decode_acts(&c->m),
			"stream_gbs", stream[KSTREAM_TRIAD],
			"peak_gflops", peak, "int8_gops", int8, "draft", "ctx",
			array_of(cx, nctx), "seconds",
			array_of(ct, nctx), "prefill", "tokens",
			array_of(px, npre), "seconds", array_of(pt, npre), "fit",
			"draft_base_s", da, "draft_per_ctx_s", db,
			"prefill_base_s", pa, "prefill_per_token_s", pb,
			"draft_max_rel_residual", dres,
			"prefill_max_rel_residual", pres, "draft_pair_s", pair,
			"provenance", prov);
	free(cx);
	free(ct);
	free(px);
	free(pt);
	return out;
}

/* The fit's terms on stderr, as `calib cpu` reports them */
static void print_fit(const json_t *profile)
{
	static const char *const k[] = { "draft_base_s", "draft_per_ctx_s",
		"prefill_base_s", "prefill_per_token_s", "draft_max_rel_residual",
		"prefill_max_rel_residual" };
	const json_t *fit = json_object_get(profile, "fit");
	double v[6];

	for (int i = 0; i < 6; i++)
		v[i] = json_number_value(json_object_get(fit, k[i]));
	fprintf(stderr, "calib: draft   %.4f ms + %.3f us x ctx (largest "
		"residual %.1f%%)\ncalib: prefill %.4f ms + %.4f ms x tokens "
		"(largest residual %.1f%%)\n", 1e3 * v[0], 1e6 * v[1], 100 * v[4],
		1e3 * v[2], 1e3 * v[3], 100 * v[5]);
}

/* Cuts the lists at the first value the model does not hold (a step at
 * ctx needs ctx + 1 positions, the verify table ctx + 16); -1 with a
 * message when two contexts and a prefill are not left. */
static int cut_lists(const struct calib_model *c, int *ctx, int *pre,
		     struct err *e)
{
	int seq_len = c->m.c.seq_len;

	for (int i = 0; ctx[i]; i++)
		if (ctx[i] + 16 > seq_len) {
			fprintf(stderr, "calib: %s holds %d positions: contexts "
				"from %d on left out\n", c->name, seq_len, ctx[i]);
			ctx[i] = 0;
			break;
		}
	for (int i = 0; pre[i]; i++)
		if (pre[i] > seq_len) {
			fprintf(stderr, "calib: %s holds %d positions: prefills "
				"from %d tokens on left out\n", c->name, seq_len,
				pre[i]);
			pre[i] = 0;
			break;
		}
	if (!ctx[0] || !ctx[1] || !pre[0] || !pre[1])
		return err_set(e, "calib cpu: expected two contexts (--ctx) and "
			       "two prefill lengths (--prefill) that %s's %d "
			       "positions hold: a line is fitted to each",
			       c->name, seq_len);
	return 0;
}

json_t *calib_cpu_profile(const struct calib_cpu_job *j, const json_t *prov,
			  json_t **verify, struct err *e)
{
	static const int verify_tokens[] = { 1, 2, 4, 8, 16, 0 };
	int ctx[CALIB_MAX_POINTS], pre[CALIB_MAX_POINTS], nctx = count(j->ctx);
	struct calib_cpu_opts o = { .ctx = ctx, .prefill = pre, .reps = j->reps,
				    .min_s = 0.1, .progress = true,
				    .verify_tokens = j->verify ? verify_tokens
							       : NULL };
	char host[128] = "this machine";
	struct calib_model c;
	struct prof_edge pe;
	struct err why;
	json_t *profile;

	HS_ASSERT(nctx >= 1 && nctx < CALIB_MAX_POINTS &&
		  count(j->prefill) < CALIB_MAX_POINTS);
	memcpy(ctx, j->ctx, sizeof(int) * (size_t)(nctx + 1));
	memcpy(pre, j->prefill, sizeof(int) * (size_t)(count(j->prefill) + 1));
	*verify = NULL;
	/* a synthetic model's cache only needs the largest context asked */
	if (calib_model_init(&c, j->model, j->shape, j->quant, j->threads,
			     ctx[nctx - 1] + 16, e) < 0)
		return NULL;
	if (j->kern)
		c.m.kn = j->kern;
	c.m.int8_batches = j->int8_blocks;
	c.m.int8_decode = j->int8_decode;
	llama_pack_a8(&c.m);
	if (cut_lists(&c, ctx, pre, e) < 0) {
		calib_model_release(&c);
		return NULL;
	}
	profile = calib_cpu(&c, &o, prov, verify);
	print_fit(profile);
	if (!j->device)
		gethostname(host, sizeof(host) - 1);
	json_object_set_new(profile, "device", json_string(j->device ? j->device
								    : host));
	calib_model_release(&c);
	/* what the simulator's reader refuses is not written: a fit whose
	 * prefill is no slower for more tokens, or whose step costs nothing
	 * at context 0 (times flat or falling within their noise) */
	if (prof_edge_parse(profile, "the measured profile", &pe, &why) < 0) {
		err_set(e, "calib cpu: %.600s: time contexts and prompts further "
			"apart (--ctx, --prefill), with more --reps, on a quieter "
			"machine", why.msg);
		json_decref(profile);
		json_decref(*verify);
		*verify = NULL;
		return NULL;
	}
	return profile;
}
