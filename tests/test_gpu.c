/* test_gpu.c: the GPU path. The W4A16 repacking runs everywhere; the
 * kernels, the cuBLAS baseline and the model forward run on a GPU and are
 * skipped, saying why, where there is none (or no CUDA in the build). On a
 * GPU: against references computed here, on fresh random inputs, every
 * output poisoned (NaN) before each run. */
#include "harness.h"

#include "cgpu.h"
#include "mload.h"
#include "f16.h"
#include "gk.h"
#include "spec.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tolerances, relative to sum |w x| of each output. */
#define MAX_GPU_W4A16_ERR 2e-3 /* weights rounded to FP16 once dequantised,
				  FP32 tensor-core sums */
#define MAX_GPU_F16_ERR 1e-3   /* exact FP16 products, FP32 sums */
/* logits of a whole forward, relative to the largest |logit| of the CPU's:
 * FP16 KV cache on the GPU against FP32 on the CPU, other summation orders */
#define MAX_GPU_MODEL_ERR 2e-2

static uint64_t rng_state = 0x2545f4914f6cdd1du;

static float urand(void) /* [-1, 1) */
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (float)(rng_state >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

static uint32_t read32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The repacked layout, decoded here from gk.h's description (not from
 * gk.c's arithmetic), equals the CPU format weight for weight; the padding
 * is code 0, scale 0, bias 0. */
static void t_gk_pack_layout(void)
{
	static const struct { int n, k, g; enum q4_kind kind; } cases[] = {
		{ 1, 1, 32, Q4_SYM },     { 64, 128, 128, Q4_SYM },
		{ 97, 300, 32, Q4_ASYM }, { 130, 257, 64, Q4_SYM },
		{ 65, 384, 128, Q4_ASYM },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		int n = cases[c].n, k = cases[c].k, g = cases[c].g;
		float *w = malloc(sizeof(float) * (size_t)n * k);
		float *deq = malloc(sizeof(float) * (size_t)n * k);
		struct q4_matrix q;
		struct gk_q4 p;
		int bad = 0, ktiles, gpt;

		for (size_t i = 0; i < (size_t)n * k; i++)
			w[i] = urand();
		q4_init(&q, n, k, g);
		q4_quantize(&q, w, cases[c].kind);
		q4_dequantize(&q, deq);
		gk_q4_pack(&p, &q);
		CHECK(p.npad % GK_TILE_N == 0 && p.npad >= n && p.npad < n + 64);
		CHECK(p.kpad % GK_TILE_K == 0 && p.kpad >= k && p.kpad < k + 128);
		ktiles = p.kpad / GK_TILE_K;
		gpt = GK_TILE_K / g;
		for (int r = 0; r < p.npad; r++) {
			for (int col = 0; col < p.kpad; col++) {
				size_t tile = (size_t)(r / 64) * ktiles + col / 128;
				int rr = r % 64, cc = col % 128, e = cc % 32;
				uint32_t word = read32(p.codes + tile * 4096 +
						       (size_t)(rr * 4 + cc / 32) * 16 +
						       (size_t)(e / 8) * 4);
				int i = e % 8 / 2, code = word >> (4 * i + 16 * (e % 2)) & 15;
				size_t pair = (tile * 64 + rr) * gpt + cc / g;
				float s = f16_to_f32(p.sb[2 * pair]);
				float b = f16_to_f32(p.sb[2 * pair + 1]);

				if (r < n && col < k) {
					bad += code != q4_code(&q, r, col) ||
					       s * code + b != deq[(size_t)r * k + col] ||
					       gk_q4_weight(&p, r, col) !=
						       deq[(size_t)r * k + col];
				} else {
					/* past k within a real group the bias
					 * is the group's; all else is zero */
					bad += code != 0 ||
					       ((r >= n || col / g * g >= k) &&
						(s != 0 || b != 0));
				}
			}
		}
		CHECK_MSG(bad == 0, "%dx%d g%d: %d weights differ", n, k, g, bad);
		gk_q4_release(&p);
		q4_release(&q);
		free(w);
		free(deq);
	}
}

/* The device, opened once for the process (and left open); NULL with the
 * reason in why where there is none. */
static const struct gk_api *gpu(const char **why)
{
	static const struct gk_api *api;
	static struct err e;
	static int tried;
	struct gk_device d;

	if (!tried) {
		tried = 1;
		api = gk_open(&d, &e);
	}
	*why = e.msg;
	return api;
}

/* gpu(), the running case skipped where there is none */
static const struct gk_api *need_gpu(void)
{
	const char *why;
	const struct gk_api *api = gpu(&why);

	if (!api)
		t_skip("%s", why);
	return api;
}

/* a device buffer of the case, freed with the others (gk_bufs) */
static void *dalloc(struct gk_bufs *b, size_t bytes)
{
	char msg[GK_MSG];
	void *p = gk_bufs_alloc(b, bytes, msg);

	CHECK_MSG(p != NULL, "%s", msg);
	return p;
}

/* reference y (m x n) = x (m rows of ldx FP16) w^T (w FP32, n x k), and
 * sum |w x| of each output, in double */
static void reference(const float *w, int n, int k, const uint16_t *x, int ldx,
		      int m, double *y, double *mag)
{
	for (int i = 0; i < m; i++)
		for (int r = 0; r < n; r++) {
			double acc = 0, a = 0;

			for (int c = 0; c < k; c++) {
				double p = (double)w[(size_t)r * k + c] *
					   f16_to_f32(x[(size_t)i * ldx + c]);

				acc += p;
				a += p < 0 ? -p : p;
			}
			y[(size_t)i * n + r] = acc;
			mag[(size_t)i * n + r] = a;
		}
}

/* outputs of m tokens past their tolerance (NaN counts) */
static int count_bad(const float *got, const double *want, const double *mag,
		     size_t cnt, double tol)
{
	int bad = 0;

	for (size_t i = 0; i < cnt; i++)
		bad += !(fabs(got[i] - want[i]) <= tol * mag[i] + 1e-6);
	return bad;
}

static const int gemm_ms[] = { 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63,
			       64, 65, 100, 255, 256 };
#define NMS (sizeof(gemm_ms) / sizeof(gemm_ms[0]))
#define MAXM 256

static void t_gpu_w4a16_gemm(void)
{
	static const struct { int n, k, g; enum q4_kind kind; } cases[] = {
		{ 64, 128, 128, Q4_SYM },    { 97, 300, 32, Q4_ASYM },
		{ 200, 1000, 64, Q4_SYM },   { 1100, 4096, 128, Q4_ASYM },
		{ 4096, 512, 32, Q4_SYM },
	};
	const struct gk_api *api = need_gpu();

	for (size_t c = 0; api && c < sizeof(cases) / sizeof(cases[0]); c++) {
		int n = cases[c].n, k = cases[c].k, g = cases[c].g;
		struct gk_bufs b = { api, { 0 }, 0 };
		struct q4_matrix q;
		struct gk_q4 host, dev;
		float *w = malloc(sizeof(float) * (size_t)n * k);
		float *y = malloc(sizeof(float) * (size_t)MAXM * n);
		double *want = malloc(sizeof(double) * (size_t)MAXM * n);
		double *mag = malloc(sizeof(double) * (size_t)MAXM * n);
		int kpad = (k + GK_TILE_K - 1) / GK_TILE_K * GK_TILE_K;
		uint16_t *x = calloc((size_t)MAXM * kpad, sizeof(uint16_t));
		char msg[GK_MSG];
		void *dx, *dy;

		for (size_t i = 0; i < (size_t)n * k; i++)
			w[i] = 0.05f * urand() + (i % 97 == 0 ? 0.3f : 0.0f);
		for (int i = 0; i < MAXM; i++)
			for (int j = 0; j < k; j++)
				x[(size_t)i * kpad + j] = f16_from_f32(urand());
		q4_init(&q, n, k, g);
		q4_quantize(&q, w, cases[c].kind);
		q4_dequantize(&q, w); /* the reference's weights: s q + b */
		reference(w, n, k, x, kpad, MAXM, want, mag);
		gk_q4_pack(&host, &q);
		CHECK_MSG(api->q4_upload(&host, &dev, msg) == 0, "%s", msg);
		dx = dalloc(&b, 2 * (size_t)MAXM * kpad);
		dy = dalloc(&b, 4 * (size_t)MAXM * n);
		if (dx && dy && dev.codes &&
		    api->upload(dx, x, 2 * (size_t)MAXM * kpad, msg) == 0) {
			for (size_t i = 0; i < NMS; i++) {
				int m = gemm_ms[i], bad;

				/* the tensor-core kernel, then the GEMV where
				 * it takes m */
				for (int kern = 0; kern < 2; kern++) {
					if (kern && m > GK_GEMV_MAX)
						break;
					if (api->poison(dy, 4 * (size_t)MAXM * n, msg) < 0 ||
					    (kern ? api->q4_gemv : api->q4_gemm)(
						    &dev, dx, m, dy, msg) < 0 ||
					    api->download(y, dy, 4 * (size_t)m * n,
							  msg) < 0) {
						CHECK_MSG(0, "%s", msg);
						break;
					}
					bad = count_bad(y, want, mag, (size_t)m * n,
							MAX_GPU_W4A16_ERR);
					CHECK_MSG(bad == 0, "%s %dx%d g%d, m %d: %d "
						  "of %d outputs off (y[0] %g, "
						  "want %g)", kern ? "gemv" : "gemm",
						  n, k, g, m, bad, m * n, y[0],
						  want[0]);
				}
			}
		}
		if (dev.codes)
			api->q4_free(&dev);
		gk_bufs_free(&b);
		gk_q4_release(&host);
		q4_release(&q);
		free(w);
		free(y);
		free(want);
		free(mag);
		free(x);
	}
}

static void t_gpu_cublas_f16(void)
{
	static const int shapes[][2] = { { 64, 128 }, { 97, 300 }, { 1100, 2048 } };
	const struct gk_api *api = need_gpu();

	for (size_t c = 0; api && c < sizeof(shapes) / sizeof(shapes[0]); c++) {
		int n = shapes[c][0], k = shapes[c][1], ldx = k + 8;
		struct gk_bufs b = { api, { 0 }, 0 };
		uint16_t *w16 = malloc(2 * (size_t)n * k), *y16 =
			malloc(2 * (size_t)MAXM * n);
		float *w = malloc(sizeof(float) * (size_t)n * k);
		float *y = malloc(sizeof(float) * (size_t)MAXM * n);
		double *want = malloc(sizeof(double) * (size_t)MAXM * n);
		double *mag = malloc(sizeof(double) * (size_t)MAXM * n);
		uint16_t *x = calloc((size_t)MAXM * ldx, sizeof(uint16_t));
		char msg[GK_MSG];
		void *dw, *dx, *dy, *dy16;

		for (size_t i = 0; i < (size_t)n * k; i++) {
			w16[i] = f16_from_f32(0.05f * urand());
			w[i] = f16_to_f32(w16[i]);
		}
		for (int i = 0; i < MAXM; i++)
			for (int j = 0; j < k; j++)
				x[(size_t)i * ldx + j] = f16_from_f32(urand());
		reference(w, n, k, x, ldx, MAXM, want, mag);
		dw = dalloc(&b, 2 * (size_t)n * k);
		dx = dalloc(&b, 2 * (size_t)MAXM * ldx);
		dy = dalloc(&b, 4 * (size_t)MAXM * n);
		dy16 = dalloc(&b, 2 * (size_t)MAXM * n);
		if (dw && dx && dy && dy16 &&
		    api->upload(dw, w16, 2 * (size_t)n * k, msg) == 0 &&
		    api->upload(dx, x, 2 * (size_t)MAXM * ldx, msg) == 0) {
			for (size_t i = 0; i < NMS; i++) {
				int m = gemm_ms[i], bad16 = 0, bad;

				if (api->poison(dy, 4 * (size_t)MAXM * n, msg) < 0 ||
				    api->poison(dy16, 2 * (size_t)MAXM * n, msg) < 0 ||
				    api->f16_gemm(dw, n, k, dx, ldx, m, dy, NULL, msg) < 0 ||
				    api->f16_gemm(dw, n, k, dx, ldx, m, NULL, dy16, msg) < 0 ||
				    api->download(y, dy, 4 * (size_t)m * n, msg) < 0 ||
				    api->download(y16, dy16, 2 * (size_t)m * n, msg) < 0) {
					CHECK_MSG(0, "%s", msg);
					break;
				}
				bad = count_bad(y, want, mag, (size_t)m * n,
						MAX_GPU_F16_ERR);
				for (size_t j = 0; j < (size_t)m * n; j++) {
					double d = f16_to_f32(y16[j]) - want[j];

					bad16 += !(fabs(d) <= MAX_GPU_F16_ERR * mag[j] +
						   fabs(want[j]) / 1024 + 1e-6);
				}
				CHECK_MSG(bad == 0 && bad16 == 0, "%dx%d, m %d: %d "
					  "FP32 and %d FP16 outputs off", n, k, m,
					  bad, bad16);
			}
		}
		gk_bufs_free(&b);
		free(w16);
		free(y16);
		free(w);
		free(y);
		free(want);
		free(mag);
		free(x);
	}
}

/* Two sequences batched, a prompt each and then a verify block each, on the
 * GPU and on the CPU (llama_forward per sequence): the same logits. The
 * model is a name in the models folders; one that is not there is a skip. */
static void model_case(const char *name, const char *quant)
{
	const struct gk_api *api = need_gpu();
	struct llama m;
	struct tok t;
	struct quant q;
	struct err e;
	struct gk_model *gm;
	struct llama_state st[2];
	int toks[2][17], lens[2] = { 12, 7 };
	float *gpu, *cpu;
	char path[4096];

	if (!api || !t_need_models())
		return;
	if (mload_find(name, path, sizeof(path)) < 0) {
		t_skip("no model '%s' in the models folders", name);
		return;
	}
	if (mload_quant_parse(quant, &q, &e) < 0 ||
	    mload(path, &q, &m, &t, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	gm = calib_gpu_model(api, &m.c, &m, q.format == LIN_W4A16, q.group, 32,
			     2, &e);
	CHECK_MSG(gm != NULL, "%s", e.msg);
	gpu = malloc(sizeof(float) * 32 * (size_t)m.c.vocab);
	cpu = malloc(sizeof(float) * 32 * (size_t)m.c.vocab);
	for (int s = 0; s < 2; s++) {
		llama_state_init(&st[s], &m.c, 16);
		for (int i = 0; i < 17; i++)
			toks[s][i] = (int)((s * 1000 + 37 * i + 5) % m.c.vocab);
	}
	for (int step = 0; gm && step < 2; step++) {
		struct gk_seq seq[2];
		char msg[GK_MSG];
		size_t rows = 0;
		double worst = 0, top = 0;
		int argmax_off = 0;

		for (int s = 0; s < 2; s++) {
			int pos = step ? lens[s] : 0, n = step ? 5 : lens[s];

			seq[s] = (struct gk_seq){ s, n, pos, toks[s] + pos };
			llama_forward(&m, &st[s], toks[s] + pos, n, pos,
				      cpu + rows * m.c.vocab);
			rows += (size_t)n;
		}
		memset(gpu, 0xff, sizeof(float) * rows * m.c.vocab); /* NaN */
		if (api->model_forward(gm, seq, 2, gpu, msg) < 0) {
			CHECK_MSG(0, "%s", msg);
			break;
		}
		for (size_t r = 0; r < rows; r++) {
			const float *a = gpu + r * m.c.vocab, *b = cpu + r * m.c.vocab;
			int ga = spec_argmax(a, m.c.vocab), ca = spec_argmax(b, m.c.vocab);

			for (int v = 0; v < m.c.vocab; v++) {
				worst = fmax(worst, fabs((double)a[v] - b[v]));
				top = fmax(top, fabs((double)b[v]));
			}
			/* a different arg max only where the CPU's two are
			 * within the tolerance */
			argmax_off += ga != ca && b[ca] - b[ga] > MAX_GPU_MODEL_ERR *
								  fabs(b[ca]);
		}
		CHECK_MSG(worst <= MAX_GPU_MODEL_ERR * top, "%s %s (%d layers), "
			  "step %d: logits differ by %g of at most %g", name,
			  quant, m.c.n_layers, step, worst, top);
		CHECK_MSG(argmax_off == 0, "%s %s, step %d: %d rows pick "
			  "another token", name, quant, step, argmax_off);
		printf("  %s %s (%d layers), step %d: logits within %.3g of "
		       "%.3g\n", name, quant, m.c.n_layers, step, worst, top);
	}
	if (gm)
		api->model_free(gm);
	for (int s = 0; s < 2; s++)
		llama_state_release(&st[s]);
	free(gpu);
	free(cpu);
	llama_release(&m);
	tok_release(&t);
}

static void t_gpu_model_f16(void)
{
	model_case("tinystories656K", "f16");
}

static void t_gpu_model_w4a16(void)
{
	model_case("tinystories656K", "w4a16-g128");
}

/* SmolLM2-135M: grouped-query attention (9 heads, 3 KV heads), the
 * rotate-half RoPE, a 49,152-token classifier tied to the embedding and
 * the GGUF file's own group of 32. A GPU machine that cannot take the
 * 98 MB file gets its first layers (scripts/gpu-prep.sh); the test names
 * the layers it ran. */
static void t_gpu_model_smollm_f16(void)
{
	model_case("smollm2-135m", "f16");
}

static void t_gpu_model_smollm_w4a16(void)
{
	model_case("smollm2-135m", "w4a16-g32-asym");
}

/* Without a GPU, `calib gpu` says so, points at --roofline and writes
 * nothing. */
static void t_calib_gpu_without_gpu(void)
{
	char out[4096], cmd[600];
	const char *why;

	if (gpu(&why)) {
		t_skip("a GPU is here (gpu_calib_table runs instead)");
		return;
	}
	snprintf(cmd, sizeof(cmd), "calib gpu --model stories260K -o '%s/t.json'",
		 t_tmpdir());
	CHECK(t_run(cmd, out, sizeof(out)) != 0);
	CHECK_MSG(strstr(out, "no usable GPU") || strstr(out, "no CUDA path"),
		  "%s", out);
	CHECK_MSG(strstr(out, "--roofline") != NULL, "%s", out);
	CHECK(!t_exists("t.json"));
}

/* On a GPU: a small measured table the simulator's rules accept. */
static void t_gpu_calib_table(void)
{
	char out[8192], cmd[600];
	json_t *t, *rows;
	json_error_t je;

	if (!need_gpu())
		return;
	snprintf(cmd, sizeof(cmd), "calib gpu --model stories260K --quant "
		 "w4a16 --tokens 1,5,16 --ctx 16,64 --reps 3 -o '%s/t.json'",
		 t_tmpdir());
	CHECK_MSG(t_run(cmd, out, sizeof(out)) == 0, "%s", out);
	snprintf(cmd, sizeof(cmd), "%s/t.json", t_tmpdir());
	t = json_load_file(cmd, 0, &je);
	CHECK_MSG(t != NULL, "%s", je.text);
	if (!t)
		return;
	rows = json_object_get(t, "seconds");
	CHECK(json_is_true(json_object_get(t, "calibrated")));
	CHECK(json_array_size(rows) == 3);
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *r = json_array_get(rows, i);

		CHECK(json_array_size(r) == 2);
		for (size_t j = 0; j < json_array_size(r); j++) {
			double v = json_real_value(json_array_get(r, j));

			CHECK(v > 0 && v < 1);
			if (i)
				CHECK(v >= json_real_value(json_array_get(
					     json_array_get(rows, i - 1), j)));
		}
	}
	CHECK(json_string_value(json_object_get(json_object_get(t, "provenance"),
						"gpu_device")) != NULL);
	json_decref(t);
}

const struct tcase gpu_tests[] = {
	{ "gk_pack_layout", t_gk_pack_layout },
	{ "gpu_w4a16_gemm", t_gpu_w4a16_gemm },
	{ "gpu_cublas_f16", t_gpu_cublas_f16 },
	{ "gpu_model_f16", t_gpu_model_f16 },
	{ "gpu_model_w4a16", t_gpu_model_w4a16 },
	{ "gpu_model_smollm_f16", t_gpu_model_smollm_f16 },
	{ "gpu_model_smollm_w4a16", t_gpu_model_smollm_w4a16 },
	{ "calib_gpu_without_gpu", t_calib_gpu_without_gpu },
	{ "gpu_calib_table", t_gpu_calib_table },
	{ 0 },
};
