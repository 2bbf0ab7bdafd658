#define _DEFAULT_SOURCE /* realpath, setenv */
/* test_models.c: the models on the real weights of ../shared/models (or
 * $HYBRIDSPEC_MODELS): loading, bad files, the tokenizer's round trip on the
 * evaluation text, the forward pass against an independent float64 one, a
 * batch of sequences against each one's own forward, and the reference
 * output of stories260K. */
#include "harness.h"

#include "f16.h"
#include "gptq.h"
#include "hf.h"
#include "mload.h"
#include "pool.h"
#include "rng.h"

#include <jansson.h>
#include "spec.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* Absolute path of a file in the models folder (static buffer). */
static const char *model_file(const char *rel)
{
	static char p[8192];
	const char *md = mload_models_dir();
	char abs[4096];

	if (!md || !realpath(md, abs))
		return NULL;
	snprintf(p, sizeof(p), "%s/%s", abs, rel);
	return p;
}

static void stories_reference_output(void)
{
	char out[8192];
	const char *want = "Once upon a time, there was a little girl named "
			   "Lily. She loved to play outside in the park.";

	if (!t_need_models())
		return;
	/* the binary runs from the case folder: give it the folder */
	setenv("HYBRIDSPEC_MODELS", model_file(""), 1);
	CHECK(t_run("generate --model stories260K --steps 40", out,
		    sizeof(out)) == 0);
	CHECK_MSG(!strncmp(out, want, strlen(want)), "got: %s", out);
	{	/* the model's folder by its path, as its name finds it */
		char args[8400];

		snprintf(args, sizeof(args), "generate --model '%s/' --steps 40",
			 model_file("stories260K"));
		CHECK(t_run(args, out, sizeof(out)) == 0);
		CHECK_MSG(!strncmp(out, want, strlen(want)), "got: %s", out);
		t_write("a.gguf", "");
		t_write("b.gguf", "");
		CHECK_MSG(t_run("generate --model . --steps 1", out,
				sizeof(out)) == 2 &&
			  strstr(out, "'.': a folder without NAME.bin"), "%s", out);
	}
}

/* Every line of the evaluation text survives encode and decode, with the
 * tokenizers of both models. */
static void tokenizer_round_trip(void)
{
	static const char *const models[] = { "stories260K", "tinystories656K" };
	struct quant q = { LIN_F32, 128, Q4_SYM, false, false };
	char line[8192], back[16384], dpath[4200];

	if (!t_need_models())
		return;
	snprintf(dpath, sizeof(dpath), "%s/TinyStories-valid-excerpt.txt",
		 mload_data_dir());
	for (int mi = 0; mi < 2; mi++) {
		struct llama m;
		struct tok t;
		struct err e;
		FILE *f;
		int lines = 0, bad = 0, tokens = 0;

		if (mload(models[mi], &q, &m, &t, &e) < 0) {
			CHECK_MSG(0, "%s", e.msg);
			continue;
		}
		f = fopen(dpath, "r");
		CHECK_MSG(f != NULL, "cannot read %s", dpath);
		while (f && fgets(line, sizeof(line), f)) {
			int *ids = malloc(sizeof(int) * (strlen(line) + 3));
			int n;
			size_t len = 0;

			line[strcspn(line, "\r\n")] = '\0';
			n = tok_encode(&t, line, 1, 0, ids);
			tokens += n;
			for (int i = 1; i < n; i++) {
				const char *s = tok_decode(&t, ids[i - 1], ids[i]);
				size_t sl = strlen(s);

				if (len + sl < sizeof(back))
					memcpy(back + len, s, sl);
				len += sl;
			}
			back[len < sizeof(back) ? len : sizeof(back) - 1] = '\0';
			if (strcmp(back, line) && bad++ < 2)
				t_fail(__FILE__, __LINE__, "%s: round trip changed "
				       "\"%.60s\" into \"%.60s\"", models[mi], line,
				       back);
			lines++;
			free(ids);
		}
		if (f)
			fclose(f);
		CHECK(lines > 10 && tokens > 1000);
		tok_release(&t);
		llama_release(&m);
	}
}

/* An independent forward in float64 for one token at a time (llama2.c's
 * layout), to check the FP32 block forward. */
static void ref_forward(const struct llama *m, const int *toks, int n,
			double *logits)
{
	const struct llama_config *c = &m->c;
	int dim = c->dim, hs = dim / c->n_heads, kvd = hs * c->n_kv_heads;
	double *kc = calloc((size_t)c->n_layers * n * kvd, sizeof(double));
	double *vc = calloc((size_t)c->n_layers * n * kvd, sizeof(double));
	double x[1024], xb[1024], q[1024], k[1024], v[1024], hb[4096], hb2[4096];
	double att[1024];
	float **W = malloc(sizeof(float *) * (size_t)c->n_layers * 7);
	float *cls = lin_weights(&m->cls);

	for (int l = 0; l < c->n_layers; l++) {
		const struct llama_layer *L = &m->layer[l];
		const struct linear *ls[] = { &L->wq, &L->wk, &L->wv, &L->wo,
					      &L->w1, &L->w2, &L->w3 };

		for (int i = 0; i < 7; i++)
			W[l * 7 + i] = lin_weights(ls[i]);
	}
#define MATVEC(out, w, in, rows, cols)                                        \
	for (int r_ = 0; r_ < (rows); r_++) {                                 \
		double a_ = 0;                                                \
		for (int c_ = 0; c_ < (cols); c_++)                           \
			a_ += (double)(w)[(size_t)r_ * (cols) + c_] * (in)[c_]; \
		(out)[r_] = a_;                                               \
	}
#define NORM(out, in, w)                                                      \
	do {                                                                  \
		double ss_ = 0;                                               \
		for (int i_ = 0; i_ < dim; i_++)                              \
			ss_ += (in)[i_] * (in)[i_];                           \
		ss_ = 1 / sqrt(ss_ / dim + c->norm_eps);                      \
		for (int i_ = 0; i_ < dim; i_++)                              \
			(out)[i_] = (w)[i_] * ss_ * (in)[i_];                 \
	} while (0)
	for (int t = 0; t < n; t++) {
		for (int i = 0; i < dim; i++)
			x[i] = m->tok_emb[(size_t)toks[t] * dim + i];
		for (int l = 0; l < c->n_layers; l++) {
			const struct llama_layer *L = &m->layer[l];
			double *K = kc + (size_t)l * n * kvd, *V = vc + (size_t)l * n * kvd;

			NORM(xb, x, L->rms_att);
			MATVEC(q, W[l * 7 + 0], xb, dim, dim);
			MATVEC(k, W[l * 7 + 1], xb, kvd, dim);
			MATVEC(v, W[l * 7 + 2], xb, kvd, dim);
			for (int i = 0; i < dim; i += 2) {
				double fr = pow(c->rope_theta, -(double)(i % hs) / hs);
				double a = t * fr, cs = cos(a), sn = sin(a), x0, x1;

				x0 = q[i];
				x1 = q[i + 1];
				q[i] = x0 * cs - x1 * sn;
				q[i + 1] = x0 * sn + x1 * cs;
				if (i < kvd) {
					x0 = k[i];
					x1 = k[i + 1];
					k[i] = x0 * cs - x1 * sn;
					k[i + 1] = x0 * sn + x1 * cs;
				}
			}
			memcpy(K + (size_t)t * kvd, k, sizeof(double) * kvd);
			memcpy(V + (size_t)t * kvd, v, sizeof(double) * kvd);
			for (int h = 0; h < c->n_heads; h++) {
				int kh = h / (c->n_heads / c->n_kv_heads);
				double mx = -1e300, sum = 0;

				for (int p = 0; p <= t; p++) {
					double a = 0;

					for (int i = 0; i < hs; i++)
						a += q[h * hs + i] *
						     K[(size_t)p * kvd + kh * hs + i];
					att[p] = a / sqrt((double)hs);
					mx = att[p] > mx ? att[p] : mx;
				}
				for (int p = 0; p <= t; p++)
					sum += att[p] = exp(att[p] - mx);
				for (int i = 0; i < hs; i++) {
					double o = 0;

					for (int p = 0; p <= t; p++)
						o += att[p] / sum *
						     V[(size_t)p * kvd + kh * hs + i];
					xb[h * hs + i] = o;
				}
			}
			MATVEC(q, W[l * 7 + 3], xb, dim, dim);
			for (int i = 0; i < dim; i++)
				x[i] += q[i];
			NORM(xb, x, L->rms_ffn);
			MATVEC(hb, W[l * 7 + 4], xb, c->hidden, dim);
			MATVEC(hb2, W[l * 7 + 6], xb, c->hidden, dim);
			for (int i = 0; i < c->hidden; i++)
				hb[i] = hb[i] / (1 + exp(-hb[i])) * hb2[i];
			MATVEC(q, W[l * 7 + 5], hb, dim, c->hidden);
			for (int i = 0; i < dim; i++)
				x[i] += q[i];
		}
		NORM(xb, x, m->rms_final);
		MATVEC(logits + (size_t)t * c->vocab, cls, xb, c->vocab, dim);
	}
#undef MATVEC
#undef NORM
	for (int i = 0; i < c->n_layers * 7; i++)
		free(W[i]);
	free(W);
	free(cls);
	free(kc);
	free(vc);
}

/* FP32 forward (a block, then one token at a time) against float64. */
static void forward_matches_float64(void)
{
	static const int toks[] = { 1, 403, 407, 261, 378, 430, 270, 313, 281,
				    266, 289, 400 };
	const int n = sizeof(toks) / sizeof(toks[0]);
	struct llama m;
	struct llama_state s, s1;
	struct tok t;
	struct err e;
	struct quant q = { LIN_F32, 128, Q4_SYM, false, false };
	double *ref;
	float *lg, *lg1, *lg3;
	double worst = 0, scale = 0;

	if (!t_need_models())
		return;
	if (mload("stories260K", &q, &m, &t, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	ref = malloc(sizeof(double) * n * m.c.vocab);
	lg = malloc(sizeof(float) * n * m.c.vocab);
	lg1 = malloc(sizeof(float) * m.c.vocab);
	lg3 = malloc(sizeof(float) * n * m.c.vocab);
	ref_forward(&m, toks, n, ref);
	llama_state_init(&s, &m.c, n);
	llama_state_init(&s1, &m.c, 1);
	llama_forward(&m, &s, toks, n, 0, lg);
	for (int i = 0; i < n * m.c.vocab; i++) {
		scale = fmax(scale, fabs(ref[i]));
		worst = fmax(worst, fabs(lg[i] - ref[i]));
	}
	CHECK_MSG(worst <= 1e-4 * scale, "block forward off by %.3g (scale %.3g)",
		  worst, scale);
	/* token by token gives the same logits as the block */
	worst = 0;
	for (int i = 0; i < n; i++) {
		llama_forward(&m, &s1, &toks[i], 1, i, lg1);
		for (int j = 0; j < m.c.vocab; j++)
			worst = fmax(worst, fabs(lg1[j] - lg[(size_t)i * m.c.vocab + j]));
	}
	CHECK_MSG(worst <= 1e-5 * scale, "token-by-token differs by %.3g", worst);
	/* on three threads (attention split by heads, layers by rows): the
	 * same logits, bit for bit */
	m.pool = kern_pool_new(3);
	llama_forward(&m, &s, toks, n, 0, lg3);
	CHECK(memcmp(lg3, lg, sizeof(float) * n * m.c.vocab) == 0);
	kpool_free(m.pool);
	m.pool = NULL;
	free(lg3);
	llama_state_release(&s);
	llama_state_release(&s1);
	free(ref);
	free(lg);
	free(lg1);
	tok_release(&t);
	llama_release(&m);
}

/* How far a batch of sequences is from each sequence's own llama_forward. */
struct batch_diff {
	double logits, cache; /* the largest |difference| */
	double logit_scale, cache_scale; /* the largest |logit|, |cache value| */
	bool same;            /* logits and caches equal bit for bit */
};

/* Four sequences at different cached lengths, with blocks of different
 * sizes (decoding, verification, a prompt from the start) and different
 * tokens, run as one llama_forward_batch twice: in order with a separate
 * scratch and every row's logits, then shuffled with one of the
 * sequences' states as the scratch and only some sequences' last rows'
 * logits (one sequence's none). Against each sequence's own llama_forward
 * on a state prefilled alike. */
static struct batch_diff batch_vs_own(const struct llama *m)
{
	enum { S = 4, MAXLEN = 16 };
	static const int pos[S] = { 7, 3, 11, 0 }, len[S] = { 1, 5, 3, 2 };
	static const int order[2][S] = { { 0, 1, 2, 3 }, { 2, 0, 3, 1 } };
	/* the logits wanted: every row's, then some sequences' last rows */
	static const int out[2][S] = { { 1, 5, 3, 2 }, { 1, 2, 0, 1 } };
	const struct llama_config *c = &m->c;
	size_t cache = (size_t)c->n_layers * c->seq_len *
		       (c->dim / c->n_heads * c->n_kv_heads);
	int toks[S][MAXLEN], first[S], total = 0;
	struct llama_state own[S], bat[S], scratch;
	float *lg = malloc(sizeof(float) * MAXLEN * c->vocab), *want, *got;
	struct batch_diff d = { 0, 0, 0, 0, true };

	for (int i = 0; i < S; i++) {
		for (int t = 0; t < pos[i] + len[i]; t++)
			toks[i][t] = t ? 2 + (97 * i + 31 * t) % (c->vocab - 2) : 1;
		first[i] = total;
		total += len[i];
		llama_state_init(&own[i], c, MAXLEN);
		llama_state_init(&bat[i], c, MAXLEN);
		if (pos[i]) {
			llama_forward(m, &own[i], toks[i], pos[i], 0, lg);
			llama_forward(m, &bat[i], toks[i], pos[i], 0, lg);
		}
	}
	want = malloc(sizeof(float) * total * c->vocab);
	got = malloc(sizeof(float) * total * c->vocab);
	for (int i = 0; i < S; i++)
		llama_forward(m, &own[i], toks[i] + pos[i], len[i], pos[i],
			      want + (size_t)first[i] * c->vocab);
	llama_state_init(&scratch, c, total);
	for (int o = 0; o < 2; o++) {
		struct llama_seq seqs[S];
		size_t row = 0;

		for (int k = 0; k < S; k++) {
			int i = order[o][k];

			seqs[k] = (struct llama_seq){ &bat[i], toks[i] + pos[i],
						      len[i], pos[i], out[o][i] };
		}
		llama_forward_batch(m, o ? &bat[order[o][0]] : &scratch, seqs, S,
				    got);
		for (int k = 0; k < S; k++) {
			int i = order[o][k];
			size_t nv = (size_t)out[o][i] * c->vocab;
			const float *w = want + (size_t)(first[i] + len[i] -
							 out[o][i]) * c->vocab;
			const float *g = got + row * c->vocab;

			d.same &= !memcmp(g, w, sizeof(float) * nv);
			for (size_t j = 0; j < nv; j++) {
				d.logit_scale = fmax(d.logit_scale, fabs(w[j]));
				d.logits = fmax(d.logits, fabs(g[j] - w[j]));
			}
			row += (size_t)out[o][i];
		}
		for (int i = 0; i < 2 * S; i++) { /* keys, then values */
			const float *g = i < S ? bat[i].key : bat[i - S].value;
			const float *w = i < S ? own[i].key : own[i - S].value;

			d.same &= !memcmp(g, w, sizeof(float) * cache);
			for (size_t j = 0; j < cache; j++) {
				d.cache_scale = fmax(d.cache_scale, fabs(w[j]));
				d.cache = fmax(d.cache, fabs(g[j] - w[j]));
			}
		}
	}
	for (int i = 0; i < S; i++) {
		llama_state_release(&own[i]);
		llama_state_release(&bat[i]);
	}
	llama_state_release(&scratch);
	free(lg);
	free(want);
	free(got);
	return d;
}

/* FP32: a batch gives every sequence the logits and the KV cache of its own
 * forward, bit for bit, in any order and on 1 or 3 threads. */
static void batch_matches_own_forward_f32(void)
{
	static const char *const models[] = { "stories260K", "tinystories656K" };
	struct quant q = { LIN_F32, 128, Q4_SYM, false, false };

	if (!t_need_models())
		return;
	for (int mi = 0; mi < 2; mi++)
		for (int threads = 1; threads <= 3; threads += 2) {
			struct llama m;
			struct tok t;
			struct err e;
			struct batch_diff d;

			if (mload(models[mi], &q, &m, &t, &e) < 0) {
				CHECK_MSG(0, "%s", e.msg);
				return;
			}
			m.pool = threads > 1 ? kern_pool_new(threads) : NULL;
			d = batch_vs_own(&m);
			CHECK_MSG(d.same, "%s, %d threads: the batch differs from "
				  "the sequences' own forward by %.3g in the "
				  "logits, %.3g in the caches", models[mi], threads,
				  d.logits, d.cache);
			CHECK(d.logit_scale > 1); /* it did compare logits */
			if (m.pool)
				kpool_free(m.pool);
			tok_release(&t);
			llama_release(&m);
		}
}

/* The W4A16 kernels may sum a batch in another order than a single token
 * (batch 1 has kernels of its own: AVX2 with groups of 64 or more, AVX-512
 * with 128): the batch's logits and caches within this fraction of the
 * largest value. Measured: 4e-5 of the logits (AVX2, groups of 128), 3e-7
 * of the caches; one sequence's queries one position off: 0.1 and 0.02. */
#define BATCH_W4A16_TOL 1e-3

/* How far a W4A8 decode step's logits may move from W4A16's, over the
 * largest logit: int8 activations in blocks of 32 round each by at most
 * half a unit of the block's largest (tinystories656K, g32, its classifier
 * W4A16 too, a step at position 0: 2.1% on avx2 and avx512-vnni, EPYC,
 * 2026-12-06) */
#define INT8_STEP_TOL 0.05

/* W4A16, groups of 32 and of 128, every kernel this CPU runs: a batch
 * matches each sequence's own forward within BATCH_W4A16_TOL, in any
 * order, on 3 threads. */
static void batch_matches_own_forward_w4a16(void)
{
	static const int groups[] = { 32, 128 };
	struct quant q = { LIN_F32, 128, Q4_SYM, false, false };

	if (!t_need_models())
		return;
	for (int gi = 0; gi < 2; gi++) {
		struct llama m;
		struct tok t;
		struct err e;

		if (mload("tinystories656K", &q, &m, &t, &e) < 0) {
			CHECK_MSG(0, "%s", e.msg);
			return;
		}
		llama_convert(&m, LIN_W4A16, groups[gi], Q4_ASYM, NULL);
		m.pool = kern_pool_new(3);
		for (const char *const *kn = kern_available(); *kn; kn++) {
			struct batch_diff d;

			m.kn = kern_find(*kn);
			d = batch_vs_own(&m);
			CHECK_MSG(d.logits <= BATCH_W4A16_TOL * d.logit_scale,
				  "%s, group %d: logits off by %.3g of %.3g", *kn,
				  groups[gi], d.logits, d.logit_scale);
			CHECK_MSG(d.cache <= BATCH_W4A16_TOL * d.cache_scale,
				  "%s, group %d: KV caches off by %.3g of %.3g",
				  *kn, groups[gi], d.cache, d.cache_scale);
			CHECK(d.logit_scale > 1 && d.cache_scale > 0);
		}
		kpool_free(m.pool);
		tok_release(&t);
		llama_release(&m);
	}
}

/* llama.int8_decode (--decode-acts int8), the classifier W4A16 too
 * (-head): a step of one token (at position 0: no cache that a block
 * wrote) takes the kernel set's integer path, and a block of four does
 * not while int8_batches is off (the same logits, bit for bit);
 * int8_batches alone leaves a step exact, bit for bit. The step's logits
 * move by W4A8's rounding, no more; a set without the path leaves the
 * step as it was. */
static void int8_decode_steps(void)
{
	static const int toks[] = { 1, 403, 407, 261, 378 };
	/* int8_batches, int8_decode: exact, decode, blocks */
	static const bool flags[3][2] = { { 0, 0 }, { 0, 1 }, { 1, 0 } };
	struct quant q = { LIN_W4A16, 32, Q4_ASYM, false, true };
	struct llama m;
	struct tok t;
	struct err e;

	if (!t_need_models())
		return;
	if (mload("tinystories656K", &q, &m, &t, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	m.pool = kern_pool_new(2);
	for (const char *const *kn = kern_available(); *kn; kn++) {
		size_t v = (size_t)m.c.vocab;
		float *blk[3], *step[3];
		double worst = 0, scale = 0;

		m.kn = kern_find(*kn);
		for (int c = 0; c < 3; c++) {
			struct llama_state s;

			m.int8_batches = flags[c][0];
			m.int8_decode = flags[c][1];
			llama_pack_a8(&m);
			blk[c] = malloc(sizeof(float) * 4 * v);
			step[c] = malloc(sizeof(float) * v);
			llama_state_init(&s, &m.c, 4);
			llama_forward(&m, &s, toks, 4, 0, blk[c]);
			llama_forward(&m, &s, toks + 4, 1, 0, step[c]);
			llama_state_release(&s);
			if (c == 1)
				CHECK_MSG(!strcmp(llama_decode_acts(&m),
						  m.kn->a8_run ? "int8" : "fp16"),
					  "%s: decode acts %s", *kn,
					  llama_decode_acts(&m));
		}
		CHECK_MSG(!memcmp(blk[0], blk[1], sizeof(float) * 4 * v),
			  "%s: a block of four moved with int8_decode", *kn);
		CHECK_MSG(!memcmp(step[0], step[2], sizeof(float) * v),
			  "%s: a step moved with int8_batches alone", *kn);
		for (size_t j = 0; j < v; j++) {
			scale = fmax(scale, fabs(step[0][j]));
			worst = fmax(worst, fabs(step[1][j] - step[0][j]));
		}
		if (m.kn->a8_run)
			CHECK_MSG(worst > 0 && worst <= INT8_STEP_TOL * scale,
				  "%s: the step moved by %.3g of %.3g", *kn,
				  worst, scale);
		else
			CHECK_MSG(worst == 0, "%s: no integer path, yet the step "
				  "moved by %.3g", *kn, worst);
		for (int c = 0; c < 3; c++) {
			free(blk[c]);
			free(step[c]);
		}
	}
	kpool_free(m.pool);
	tok_release(&t);
	llama_release(&m);
}

/* Bad checkpoints: an error that says what is wrong, never a crash. */
static void bad_files(void)
{
	static const struct {
		const char *what, *want;
	} cases[] = {
		{ "truncated", "bytes, but the header" },
		{ "empty", "too short for a llama2.c header" },
		{ "header", "not a llama2.c checkpoint" },
		{ "nan", "holds a non-finite value" },
	};
	const char *src;
	FILE *f;
	long size;
	char *data;

	if (!t_need_models())
		return;
	src = model_file("stories260K/stories260K.bin");
	f = fopen(src, "rb");
	if (!f) {
		CHECK_MSG(0, "cannot read %s", src);
		return;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	data = malloc((size_t)size);
	CHECK(fread(data, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[600];
		struct llama m;
		struct err e = { "" };
		long len = size;
		char *copy = malloc((size_t)size);

		memcpy(copy, data, (size_t)size);
		if (!strcmp(cases[i].what, "truncated"))
			len = size - 1000;
		else if (!strcmp(cases[i].what, "empty"))
			len = 10;
		else if (!strcmp(cases[i].what, "header"))
			memset(copy, 0xff, 8); /* dim -1, hidden -1 */
		else
			memcpy(copy + 28 + 4 * 100, "\xff\xff\xff\x7f", 4); /* NaN */
		snprintf(path, sizeof(path), "%s/%s.bin", t_tmpdir(), cases[i].what);
		f = fopen(path, "wb");
		fwrite(copy, 1, (size_t)len, f);
		fclose(f);
		CHECK_MSG(llama_load_llama2c(&m, path, &e) < 0, "%s accepted",
			  cases[i].what);
		CHECK_MSG(strstr(e.msg, cases[i].want), "%s: \"%s\"", cases[i].what,
			  e.msg);
		free(copy);
	}
	free(data);
}


/* Greedy speculative decoding gives exactly the target's greedy output,
 * whatever the draft and gamma (the lossless property). */
static void speculative_is_lossless(void)
{
	struct llama tgt, drf, same;
	struct tok t1, t2, t3;
	struct err e;
	struct quant qf = { LIN_F32, 128, Q4_SYM, false, false }, qd = { LIN_W4A16, 32, Q4_ASYM, false, false };
	int prompt[] = { 1, 403, 407, 261, 378 }, np = 5, steps = 60;
	int want[60], got[60];

	if (!t_need_models())
		return;
	if (mload("stories260K", &qf, &tgt, &t1, &e) < 0 ||
	    mload("stories260K", &qd, &drf, &t2, &e) < 0 ||
	    mload("stories260K", &qf, &same, &t3, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	spec_greedy(&tgt, prompt, np, steps, want);
	for (int g = 1; g <= 7; g += 2) {
		struct spec_stats ss = { 0 };
		long v = spec_decode_greedy(&tgt, &drf, prompt, np, steps, g, got,
					    &ss);

		CHECK_MSG(!memcmp(got, want, sizeof(want)), "gamma %d: the output "
			  "differs from the target's greedy output", g);
		CHECK(v >= (steps + g) / (g + 1) && v <= steps);
		/* a draft equal to the target is always accepted */
		CHECK(ss.verifications == v && ss.full_blocks <= v);
		memset(&ss, 0, sizeof(ss));
		v = spec_decode_greedy(&tgt, &same, prompt, np, steps, g, got, &ss);
		CHECK(!memcmp(got, want, sizeof(want)));
		CHECK_MSG(v == (steps + g) / (g + 1), "gamma %d: %ld verifications "
			  "with an identical draft", g, v);
		/* every whole block of an identical draft commits gamma + 1 */
		CHECK(ss.full_blocks > 0 && ss.full_tokens == ss.full_blocks * (g + 1));
	}
	tok_release(&t1);
	tok_release(&t2);
	tok_release(&t3);
	llama_release(&tgt);
	llama_release(&drf);
	llama_release(&same);
}

/* eval accept writes a profile whose bits the simulator replays. */
static void acceptance_profile_feeds_the_simulator(void)
{
	char out[8192], args[4096], text[4096] = "", line[2048], cwd[1024];
	FILE *f;
	int lines = 0;

	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, ".");
	if (!t_need_models())
		return;
	setenv("HYBRIDSPEC_MODELS", model_file(""), 1);
	snprintf(line, sizeof(line), "%s/TinyStories-valid-excerpt.txt",
		 mload_data_dir());
	f = fopen(line, "r");
	CHECK(f != NULL);
	while (f && lines < 3 && fgets(line, sizeof(line), f)) {
		strncat(text, line, sizeof(text) - strlen(text) - 1);
		lines++;
	}
	if (f)
		fclose(f);
	t_write("few.txt", text);
	CHECK(t_run("eval accept --target stories260K --draft "
		    "stories260K:w4a4-g32 --text few.txt --gamma 2 --prompts 2 "
		    "--out prof.json --json", out, sizeof(out)) == 0);
	CHECK_MSG(strstr(out, "\"alpha_greedy\"") != NULL &&
			  strstr(out, "\"ppl\"") != NULL, "%s", out);
	snprintf(args, sizeof(args),
		 "run %s/tests/data/small.json -o r --quiet --set "
		 "/cloud/model=stories260K --set "
		 "'/tenants/0/acceptance={\"profile\":\"%s/prof.json\"}'",
		 cwd, t_tmpdir());
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
}

/* The Hugging Face model: safetensors, tokenizer.json, generation. */
static void hf_model(void)
{
	struct llama m;
	struct tok t;
	struct err e;
	struct quant q = { LIN_F32, 128, Q4_SYM, false, false };
	char out[8192];
	int ids[64], n, len = 0;
	char back[256] = "";
	const char *text = "Once upon a time, Tom saw a dog.";

	if (!t_need_models())
		return;
	if (mload("tinystories656K", &q, &m, &t, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	CHECK(m.c.dim == 128 && m.c.n_layers == 2 && m.c.vocab == 2048 &&
	      m.c.rope_half);
	n = tok_encode(&t, text, 1, 0, ids);
	CHECK(n > 3 && n < 20 && ids[0] == TOK_BOS);
	for (int i = 1; i < n; i++) {
		const char *p = tok_decode(&t, ids[i - 1], ids[i]);

		len += snprintf(back + len, sizeof(back) - (size_t)len, "%s", p);
	}
	CHECK_MSG(!strcmp(back, text), "round trip: \"%s\"", back);
	CHECK(tok_encode(&t, "", 1, 0, ids) == 1); /* nothing prepended */
	tok_release(&t);
	llama_release(&m);
	setenv("HYBRIDSPEC_MODELS", model_file(""), 1);
	CHECK(t_run("generate --model tinystories656K --steps 8", out,
		    sizeof(out)) == 0);
	CHECK_MSG(!strncmp(out, "Once upon a time", 16), "got: %s", out);
}

/* A config.json the forward pass cannot run is refused before any weight
 * is read, naming the file and what it lacks. */
static void hf_not_llama(void)
{
#define DIMS "\"hidden_size\": 128, \"intermediate_size\": 384, " \
	"\"num_hidden_layers\": 2, \"num_attention_heads\": 8, " \
	"\"vocab_size\": 2048"
	static const struct {
		const char *config, *want;
	} cases[] = {
		{ "{" DIMS ", \"max_position_embeddings\": 512}",
		  "/: missing required key \"model_type\"" },
		{ "{\"model_type\": \"qwen2\", \"max_position_embeddings\": 512, "
		  DIMS "}", "a qwen2 model with Q/K/V biases; this tool's forward "
		  "pass takes dense Llama models" },
		{ "{\"model_type\": \"mixtral\", \"num_local_experts\": 4, "
		  "\"num_experts_per_tok\": 2, \"max_position_embeddings\": 512, "
		  DIMS "}", "a mixtral model with experts" },
		{ "{\"model_type\": \"llama\", \"head_dim\": 32, "
		  "\"max_position_embeddings\": 512, " DIMS "}",
		  "width 128, 8 heads of 32" },
		{ "{\"model_type\": \"llama\", " DIMS "}",
		  "does not say its context length" },
	};
#undef DIMS
	char dir[700], path[800];

	snprintf(dir, sizeof(dir), "%s/nl", t_tmpdir());
	CHECK(mkdir(dir, 0755) == 0);
	snprintf(path, sizeof(path), "%s/config.json", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct llama m;
		struct err e = { "" };
		FILE *f = fopen(path, "w");

		fputs(cases[i].config, f);
		fclose(f);
		CHECK_MSG(hf_load(&m, dir, &e) < 0, "case %zu accepted", i);
		CHECK_MSG(strstr(e.msg, path) && strstr(e.msg, cases[i].want),
			  "case %zu: \"%s\" lacks \"%s\"", i, e.msg,
			  cases[i].want);
	}
}

/* A safetensors tensor whose shape contradicts config.json is an error. */
static void hf_bad_shape(void)
{
	char dir[700], cmd[10240];
	struct llama m;
	struct err e = { "" };
	FILE *f;

	if (!t_need_models())
		return;
	snprintf(dir, sizeof(dir), "%s/hf", t_tmpdir());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s' '%s/'", dir,
		 model_file("tinystories656K/model.safetensors"), dir);
	CHECK(system(cmd) == 0);
	snprintf(cmd, sizeof(cmd), "%s/config.json", dir);
	f = fopen(cmd, "w");
	fputs("{\"model_type\": \"llama\", \"hidden_size\": 128, "
	      "\"intermediate_size\": 512, "
	      "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
	      "\"num_key_value_heads\": 4, \"vocab_size\": 2048, "
	      "\"max_position_embeddings\": 512, \"tie_word_embeddings\": true}",
	      f);
	fclose(f);
	CHECK(hf_load(&m, dir, &e) < 0);
	CHECK_MSG(strstr(e.msg, "mlp.down_proj.weight\" has shape [128, 384]") ||
			  strstr(e.msg, "mlp.gate_proj.weight\" has shape [384, 128]"),
		  "%s", e.msg);
	/* fewer layers than the weights hold: refused, not run short (the
	 * second layer had been ignored) */
	f = fopen(cmd, "w");
	fputs("{\"model_type\": \"llama\", \"hidden_size\": 128, "
	      "\"intermediate_size\": 384, "
	      "\"num_hidden_layers\": 1, \"num_attention_heads\": 8, "
	      "\"num_key_value_heads\": 4, \"vocab_size\": 2048, "
	      "\"max_position_embeddings\": 512, \"tie_word_embeddings\": true}",
	      f);
	fclose(f);
	CHECK(hf_load(&m, dir, &e) < 0);
	CHECK_MSG(strstr(e.msg, "holds a layer 1, past the 1 layers of") &&
		  strstr(e.msg, "the config is not the weights'"), "%s", e.msg);
}

/* Two-sample chi-square over categories with at least 10 draws in all,
 * the rest lumped: is it below the 0.999 quantile? (Wilson-Hilferty) */
static int same_distribution(const int *a, const int *b, int n, double *stat,
			     int *dof)
{
	double chi = 0, ra = 0, rb = 0;
	int df = -1;

	for (int i = 0; i < n; i++) {
		if (a[i] + b[i] >= 10) {
			chi += (double)(a[i] - b[i]) * (a[i] - b[i]) / (a[i] + b[i]);
			df++;
		} else {
			ra += a[i];
			rb += b[i];
		}
	}
	if (ra + rb > 0) {
		chi += (ra - rb) * (ra - rb) / (ra + rb);
		df++;
	}
	*stat = chi;
	*dof = df;
	if (df < 1)
		return 1;
	double h = 2.0 / (9 * df), crit = df * pow(1 - h + 3.09 * sqrt(h), 3);

	return chi <= crit;
}

/* Rejection-sampling speculative decoding draws from the target's own
 * distribution: the first two tokens, against the target's own sampling. */
static void speculative_sampling_matches_target(void)
{
	enum { N = 2500 };
	struct llama tgt, drf;
	struct tok t1, t2;
	struct err e;
	struct quant qf = { LIN_F32, 128, Q4_SYM, false, false }, qd = { LIN_W4A4, 32, Q4_SYM, false, false };
	int prompt[64], np, out[2];
	int *c1s, *c1t, *c2s, *c2t;
	gsl_rng *r = rng_new(17, rng_stream_id("test/spec-sampling"));
	struct llama_state s;
	float *lg;
	double *p;
	double stat;
	int df;

	if (!t_need_models())
		return;
	if (mload("stories260K", &qf, &tgt, &t1, &e) < 0 ||
	    mload("stories260K", &qd, &drf, &t2, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	/* a prompt with many likely continuations */
	np = tok_encode(&t1, "Once upon a time, there was a little", 1, 0, prompt);
	c1s = calloc(tgt.c.vocab, sizeof(int));
	c1t = calloc(tgt.c.vocab, sizeof(int));
	c2s = calloc(tgt.c.vocab, sizeof(int));
	c2t = calloc(tgt.c.vocab, sizeof(int));
	lg = malloc(sizeof(float) * np * tgt.c.vocab);
	p = malloc(sizeof(double) * tgt.c.vocab);
	llama_state_init(&s, &tgt.c, np);
	for (int i = 0; i < N; i++) {
		spec_decode_sample(&tgt, &drf, prompt, np, 2, 3, 1.0f, r, out, NULL);
		c1s[out[0]]++;
		c2s[out[1]]++;
		llama_forward(&tgt, &s, prompt, np, 0, lg);
		spec_softmax(lg + (size_t)(np - 1) * tgt.c.vocab, tgt.c.vocab, 1.0f, p);
		out[0] = spec_sample(p, tgt.c.vocab, r);
		llama_forward(&tgt, &s, &out[0], 1, np, lg);
		spec_softmax(lg, tgt.c.vocab, 1.0f, p);
		out[1] = spec_sample(p, tgt.c.vocab, r);
		c1t[out[0]]++;
		c2t[out[1]]++;
	}
	CHECK_MSG(same_distribution(c1s, c1t, tgt.c.vocab, &stat, &df),
		  "first token: chi-square %.1f with %d degrees of freedom", stat,
		  df);
	CHECK(df >= 5);
	CHECK_MSG(same_distribution(c2s, c2t, tgt.c.vocab, &stat, &df),
		  "second token: chi-square %.1f with %d degrees of freedom", stat,
		  df);
	/* and the test can tell: the draft's own samples differ */
	memset(c1s, 0, sizeof(int) * tgt.c.vocab);
	{
		struct llama_state ds;

		llama_state_init(&ds, &drf.c, np);
		for (int i = 0; i < N; i++) {
			llama_forward(&drf, &ds, prompt, np, 0, lg);
			spec_softmax(lg + (size_t)(np - 1) * tgt.c.vocab, tgt.c.vocab,
				     1.0f, p);
			c1s[spec_sample(p, tgt.c.vocab, r)]++;
		}
		llama_state_release(&ds);
	}
	CHECK_MSG(!same_distribution(c1s, c1t, tgt.c.vocab, &stat, &df),
		  "the draft's own samples pass as the target's (chi-square %.1f, "
		  "%d dof)", stat, df);
	llama_state_release(&s);
	free(lg);
	free(p);
	free(c1s);
	free(c1t);
	free(c2s);
	free(c2t);
	rng_free(r);
	tok_release(&t1);
	tok_release(&t2);
	llama_release(&tgt);
	llama_release(&drf);
}

/* GPTQ lowers the layer's output error on correlated inputs, the quantity
 * it minimises, against round to nearest (synthetic layer). */
static void gptq_beats_rounding(void)
{
	enum { N = 24, K = 192, S = 600 };
	float *w = malloc(sizeof(float) * N * K), *x = malloc(sizeof(float) * S * K);
	float *wr = malloc(sizeof(float) * N * K), *wg = malloc(sizeof(float) * N * K);
	double *h = calloc((size_t)K * K, sizeof(double));
	gsl_rng *r = rng_new(9, rng_stream_id("test/gptq"));
	struct linear l;
	struct q4_matrix rtn, gq;
	double err_r = 0, err_g = 0;

	for (int i = 0; i < N * K; i++)
		w[i] = (float)(gsl_rng_uniform(r) - 0.5);
	for (int s = 0; s < S; s++) { /* inputs along a few directions */
		double z[4];

		for (int j = 0; j < 4; j++)
			z[j] = gsl_rng_uniform(r) * 2 - 1;
		for (int c = 0; c < K; c++)
			x[s * K + c] = (float)(z[c % 4] * (1 + c % 7) +
					       0.05 * (gsl_rng_uniform(r) - 0.5));
	}
	for (int s = 0; s < S; s++)
		for (int a = 0; a < K; a++)
			for (int b = 0; b <= a; b++)
				h[(size_t)a * K + b] += (double)x[s * K + a] * x[s * K + b];
	q4_init(&rtn, N, K, 64);
	q4_quantize(&rtn, w, Q4_ASYM);
	q4_dequantize(&rtn, wr);
	memcpy(wg, w, sizeof(float) * N * K);
	lin_init_f32(&l, wg, N, K);
	gptq_layer(&l, h, 64, Q4_ASYM, &gq);
	q4_dequantize(&gq, wg); /* wg now holds the GPTQ weights */
	q4_dequantize(&rtn, wr);
	for (int s = 0; s < S; s++)
		for (int n = 0; n < N; n++) {
			double yr = 0, yg = 0, y = 0;

			for (int c = 0; c < K; c++) {
				y += (double)w[n * K + c] * x[s * K + c];
				yr += (double)wr[n * K + c] * x[s * K + c];
				yg += (double)wg[n * K + c] * x[s * K + c];
			}
			err_r += (y - yr) * (y - yr);
			err_g += (y - yg) * (y - yg);
		}
	CHECK_MSG(err_g < 0.5 * err_r, "GPTQ output error %.4g, rounding %.4g",
		  err_g, err_r);
	q4_release(&rtn);
	q4_release(&gq);
	free(w);
	free(x);
	free(wr);
	free(h);
	lin_release(&l); /* frees wg */
	rng_free(r);
}

/* Writes dir/model.safetensors from src with every F32 tensor as dtype
 * ("F16" or "BF16"), and config.json and tokenizer.json beside it. */
static int convert_safetensors(const char *src_dir, const char *dir,
			       const char *dtype)
{
	char p[20000];
	FILE *f, *o;
	uint64_t n;
	char *hdr;
	json_t *h, *out = json_object(), *v;
	const char *key;
	long data_at, at = 0;

	snprintf(p, sizeof(p), "mkdir -p '%s' && cp '%s/config.json' "
		 "'%s/tokenizer.json' '%s/'", dir, src_dir, src_dir, dir);
	if (system(p) != 0)
		return -1;
	snprintf(p, sizeof(p), "%s/model.safetensors", src_dir);
	if (!(f = fopen(p, "rb")) || fread(&n, 8, 1, f) != 1)
		return -1;
	hdr = calloc(1, n + 1);
	if (fread(hdr, 1, n, f) != n)
		return -1;
	h = json_loads(hdr, 0, NULL);
	data_at = 8 + (long)n;
	json_object_foreach(h, key, v) {
		json_t *c;
		long b0, b1;

		if (!strcmp(key, "__metadata__"))
			continue;
		b0 = (long)json_integer_value(json_array_get(
			json_object_get(v, "data_offsets"), 0));
		b1 = (long)json_integer_value(json_array_get(
			json_object_get(v, "data_offsets"), 1));
		c = json_deep_copy(v);
		json_object_set_new(c, "dtype", json_string(dtype));
		json_object_set_new(c, "data_offsets",
				    json_pack("[I,I]", (json_int_t)at,
					      (json_int_t)(at + (b1 - b0) / 2)));
		json_object_set_new(c, "src", json_integer(b0));
		json_object_set_new(out, key, c);
		at += (b1 - b0) / 2;
	}
	free(hdr);
	hdr = json_dumps(out, JSON_COMPACT);
	snprintf(p, sizeof(p), "%s/model.safetensors", dir);
	o = fopen(p, "wb");
	n = strlen(hdr);
	fwrite(&n, 8, 1, o);
	fwrite(hdr, 1, n, o);
	json_object_foreach(out, key, v) {
		json_t *shape = json_object_get(v, "shape");
		long count = 1;

		for (size_t i = 0; i < json_array_size(shape); i++)
			count *= (long)json_integer_value(json_array_get(shape, i));
		fseek(f, data_at + (long)json_integer_value(json_object_get(v, "src")),
		      SEEK_SET);
		for (long i = 0; i < count; i++) {
			float x;
			uint16_t hv;
			uint32_t bits;

			if (fread(&x, 4, 1, f) != 1)
				return -1;
			memcpy(&bits, &x, 4);
			hv = strcmp(dtype, "F16") ? (uint16_t)(bits >> 16)
						  : f16_from_f32(x);
			fwrite(&hv, 2, 1, o);
		}
	}
	fclose(o);
	fclose(f);
	free(hdr);
	json_decref(h);
	json_decref(out);
	return 0;
}

/* F16 and BF16 safetensors load, and run close to the F32 model. */
static void hf_half_precision(void)
{
	static const char *const dtypes[] = { "F16", "BF16" };
	static const double tol[] = { 0.01, 0.1 }; /* of the largest logit */
	struct llama m32, m;
	struct tok t32;
	struct err e;
	struct quant q = { LIN_F32, 128, Q4_SYM, false, false };
	int toks[] = { 1, 147, 201, 282, 57 };
	float lg32[5 * 2048], lg[5 * 2048];
	struct llama_state s;
	char dir[700];

	if (!t_need_models())
		return;
	if (mload("tinystories656K", &q, &m32, &t32, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	llama_state_init(&s, &m32.c, 5);
	llama_forward(&m32, &s, toks, 5, 0, lg32);
	for (int d = 0; d < 2; d++) {
		double worst = 0, scale = 0;

		snprintf(dir, sizeof(dir), "%s/%s", t_tmpdir(), dtypes[d]);
		CHECK(convert_safetensors(model_file("tinystories656K"), dir,
					  dtypes[d]) == 0);
		if (hf_load(&m, dir, &e) < 0) {
			CHECK_MSG(0, "%s: %s", dtypes[d], e.msg);
			continue;
		}
		llama_forward(&m, &s, toks, 5, 0, lg);
		for (int i = 0; i < 5 * 2048; i++) {
			scale = fmax(scale, fabs(lg32[i]));
			worst = fmax(worst, fabs(lg[i] - lg32[i]));
		}
		/* (this model's weights are exact BF16 values: both give the
		 * F32 logits exactly, but a wrong decoding would not) */
		CHECK_MSG(worst <= tol[d] * scale, "%s: logits off by "
			  "%.3g of %.3g", dtypes[d], worst, scale);
		llama_release(&m);
	}
	llama_state_release(&s);
	tok_release(&t32);
	llama_release(&m32);
}

/* Runs of accepts and the chance of one after each outcome, by hand */
static void burst_counts(void)
{
	static const unsigned char bits[] = { 1, 1, 0, 1, 1, 1, 0 };
	static const unsigned char ones[] = { 1, 1, 1 };
	struct spec_burst b;

	spec_burst(bits, 7, &b);
	CHECK(b.runs == 2 && b.mean_run == 2.5);
	CHECK_NEAR(b.p_after_accept, 3.0 / 5, 1e-12); /* 11 10 11 11 10 */
	CHECK(b.p_after_reject == 1); /* 01 */
	CHECK_NEAR(b.iid_mean_run, 1 / (1 - 5.0 / 7), 1e-12);
	spec_burst(ones, 3, &b);
	CHECK(b.runs == 1 && b.mean_run == 3 && b.p_after_accept == 1 &&
	      isnan(b.p_after_reject) && isinf(b.iid_mean_run));
}

/* BPE merges by rank: the lowest rank first, a pair listed twice at its
 * first rank, and a merge whose join is no piece refused by its index */
static void bpe_merge_ranks(void)
{
	static const char vocab[] = "{\"model\": {\"type\": \"BPE\", \"vocab\": "
		"{\"<unk>\": 0, \"<s>\": 1, \"</s>\": 2, \"\\u2581\": 3, \"a\": 4, "
		"\"b\": 5, \"c\": 6, \"ab\": 7, \"bc\": 8, \"abc\": 9}, "
		"\"merges\": [%s]}}";
	char text[512];
	struct tok t;
	struct err e;
	int ids[8], n;

	/* a b (rank 0) before b c (1), then ab c: "abc" is one piece; had
	 * the second "a b" (3) counted, b c would merge first and stop */
	snprintf(text, sizeof(text), vocab,
		 "\"a b\", \"b c\", \"ab c\", \"a b\"");
	if (tok_load_hf(&t, t_write("tok.json", text), 10, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	n = tok_encode(&t, "abc", 0, 0, ids);
	CHECK_MSG(n == 2 && ids[0] == 3 && ids[1] == 9, "n %d", n);
	n = tok_encode(&t, "cab", 0, 0, ids);
	CHECK_MSG(n == 3 && ids[1] == 6 && ids[2] == 7, "n %d", n);
	tok_release(&t);
	snprintf(text, sizeof(text), vocab, "\"a b\", \"a c\"");
	CHECK(tok_load_hf(&t, t_write("tok.json", text), 10, &e) < 0 &&
	      strstr(e.msg, "/model/merges/1: expected \"left right\""));
}

const struct tcase model_tests[] = {
	{ "models: BPE merges by rank, a pair listed twice at its first",
	  bpe_merge_ranks },
	{ "models: burstiness of accept bits", burst_counts },
	{ "models: F16 and BF16 safetensors load and agree with F32",
	  hf_half_precision },
	{ "models: GPTQ beats rounding on the error it minimises",
	  gptq_beats_rounding },
	{ "models: speculative sampling draws from the target's distribution",
	  speculative_sampling_matches_target },
	{ "models: Hugging Face safetensors and tokenizer.json", hf_model },
	{ "models: a tensor that contradicts the config is rejected",
	  hf_bad_shape },
	{ "models: a config.json of no dense Llama is refused, saying why",
	  hf_not_llama },
	{ "models: greedy speculative decoding is lossless",
	  speculative_is_lossless },
	{ "models: an acceptance profile feeds the simulator",
	  acceptance_profile_feeds_the_simulator },
	{ "models: stories260K greedy gives its reference sentence",
	  stories_reference_output },
	{ "models: tokenizer round trip on the evaluation text",
	  tokenizer_round_trip },
	{ "models: FP32 forward matches a float64 reference, on 1 or 3 threads",
	  forward_matches_float64 },
	{ "models: bad checkpoints give clear errors", bad_files },
	{ "models: an FP32 batch of sequences is each one's own forward, bit "
	  "for bit", batch_matches_own_forward_f32 },
	{ "models: a W4A16 batch of sequences matches each one's own forward",
	  batch_matches_own_forward_w4a16 },
	{ "models: --decode-acts int8 takes a step's token through the integer "
	  "path, not a block's", int8_decode_steps },
	{ 0 },
};
