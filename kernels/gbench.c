/* gbench.c: the GPU benchmark ("hybridspec bench gpu"): the W4A16
 * tensor-core GEMM (and, at m <= GK_GEMV_MAX, its CUDA-core GEMV) against
 * cuBLAS FP16 on the layer shapes it is given,
 * beside the device's copy bandwidth and FP16 GEMM peak measured in the
 * same run.
 *
 * Each shape's weights are one random FP32 matrix, quantised to W4A16
 * (symmetric, round to nearest) and rounded to FP16, so both kernels read
 * the same matrix. Every timed run starts with the L2 cache overwritten
 * (not timed): a 7B layer in W4A16 fits in an H100's L2, and timing it
 * warm would measure the cache, not the memory. */
#include "gbench.h"

#include "err.h"
#include "f16.h"
#include "gk.h"
#include "mem.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the synthetic weights' and activations' sequence (rng_splitmix64) */
static uint64_t fill_state = 0x9e3779b97f4a7c15u;

static float urand(void) /* [-1, 1) */
{
	return (float)(rng_splitmix64(&fill_state) >> 40) *
		       (2.0f / 16777216.0f) - 1.0f;
}

/* device buffers of one point, and the call median_s times */
struct gemm {
	const struct gk_api *api;
	const struct gk_q4 *q4; /* device */
	const uint16_t *w16, *x;
	float *y;
	uint16_t *y16;
	int n, k, ldx, m;
};

static int run_q4(void *arg, char *msg)
{
	struct gemm *g = arg;

	return g->api->q4_gemm(g->q4, g->x, g->m, g->y, msg);
}

static int run_gemv(void *arg, char *msg)
{
	struct gemm *g = arg;

	return g->api->q4_gemv(g->q4, g->x, g->m, g->y, msg);
}

static int run_f16(void *arg, char *msg)
{
	struct gemm *g = arg;

	return g->api->f16_gemm(g->w16, g->n, g->k, g->x, g->ldx, g->m, g->y,
				g->y16, msg);
}

struct copy {
	const struct gk_api *api;
	void *dst;
	const void *src;
	size_t bytes;
};

static int run_copy(void *arg, char *msg)
{
	struct copy *c = arg;

	return c->api->copy(c->dst, c->src, c->bytes, msg);
}

/* copy GB/s (read + write) and FP16 GEMM TFLOP/s */
static int device_peaks(const struct gk_api *api, const struct gk_device *d,
			int reps, double *copy_gbs, double *tflops, char *msg)
{
	struct gk_bufs b = { api, { 0 }, 0 };
	size_t bytes = d->free_bytes / 8 < (1u << 30) ? d->free_bytes / 8
						      : (1u << 30);
	struct copy c = { api, gk_bufs_alloc(&b, bytes, msg),
			  gk_bufs_alloc(&b, bytes, msg), bytes };
	const int n = 8192;
	struct gemm g = { api, NULL, NULL, NULL, NULL, NULL, n, n, n, n };
	double s;

	if (!c.dst || !c.src || api->poison(c.dst, bytes, msg) < 0 ||
	    api->poison((void *)c.src, bytes, msg) < 0 ||
	    (s = api->median_s(run_copy, &c, 3, reps, 0, msg)) < 0)
		return gk_bufs_free(&b), -1;
	*copy_gbs = 2.0 * (double)bytes / s / 1e9;
	gk_bufs_free(&b);
	/* operands of random FP16 values: the same ones serve as W and x */
	size_t cnt = (size_t)n * n;
	uint16_t *host = xmalloc(cnt * sizeof(uint16_t));
	for (size_t i = 0; i < cnt; i++)
		host[i] = f16_from_f32(urand());
	g.w16 = gk_bufs_alloc(&b, 2 * cnt, msg);
	g.y16 = gk_bufs_alloc(&b, 2 * cnt, msg);
	if (!g.w16 || !g.y16 ||
	    api->upload((void *)g.w16, host, 2 * cnt, msg) < 0) {
		free(host);
		return gk_bufs_free(&b), -1;
	}
	free(host);
	g.x = g.w16;
	s = api->median_s(run_f16, &g, 3, reps, 0, msg);
	gk_bufs_free(&b);
	if (s < 0)
		return -1;
	*tflops = 2.0 * n * (double)n * n / s / 1e12;
	return 0;
}

struct out {
	int json, rows;
};

static void row(struct out *o, const char *kernel, const char *model, int n,
		int k, int m, double s, double bytes, double base_s)
{
	double gbs = bytes / s / 1e9, tf = 2.0 * m * (double)n * k / s / 1e12;

	if (o->json)
		printf("%s{\"kernel\": \"%s\", \"model\": \"%s\", \"shape\": "
		       "\"%dx%d\", \"m\": %d, \"seconds\": %.4e, \"gbs\": %.1f, "
		       "\"tflops\": %.2f, \"speedup\": %.3f}", o->rows ? ", " : "",
		       kernel, model, n, k, m, s, gbs, tf, base_s / s);
	else
		printf("%-10s %-11s %11s %4d %10.2f %8.0f %8.2f %7.2fx\n", kernel,
		       model, "", m, 1e6 * s, gbs, tf, base_s / s);
	o->rows++;
	fflush(stdout);
}

/* every M of one n x k shape */
static int bench_shape(const struct gk_api *api, const char *model, int n,
		       int k, int group, const int *ms, int reps,
		       struct out *o, char *msg)
{
	struct gk_bufs b = { api, { 0 }, 0 };
	struct q4_matrix q;
	struct gk_q4 packed, dev = { 0 };
	size_t cnt = (size_t)n * k, kpad = (size_t)(k + GK_TILE_K - 1) /
					   GK_TILE_K * GK_TILE_K;
	float *w = xmalloc(cnt * sizeof(float));
	uint16_t *w16 = xmalloc(cnt * sizeof(uint16_t));
	uint16_t *x = xcalloc(256 * kpad, sizeof(uint16_t));
	struct gemm g = { api, &dev, NULL, NULL, NULL, NULL, n, k, (int)kpad, 0 };
	int rc = -1;

	for (size_t i = 0; i < cnt; i++) {
		w[i] = urand() / sqrtf((float)k);
		w16[i] = f16_from_f32(w[i]);
	}
	for (int r = 0; r < 256; r++)
		for (int c = 0; c < k; c++)
			x[(size_t)r * kpad + (size_t)c] = f16_from_f32(urand());
	q4_init(&q, n, k, group);
	q4_quantize(&q, w, Q4_SYM);
	gk_q4_pack(&packed, &q);
	q4_release(&q);
	free(w);
	if (api->q4_upload(&packed, &dev, msg) < 0)
		goto out;
	if (!(g.w16 = gk_bufs_alloc(&b, 2 * cnt, msg)) ||
	    !(g.x = gk_bufs_alloc(&b, 2 * 256 * kpad, msg)) ||
	    !(g.y = gk_bufs_alloc(&b, 4 * 256 * (size_t)n, msg)) ||
	    api->upload((void *)g.w16, w16, 2 * cnt, msg) < 0 ||
	    api->upload((void *)g.x, x, 2 * 256 * kpad, msg) < 0)
		goto out;
	if (!o->json)
		printf("%s %dx%d:\n", model, n, k);
	for (int i = 0; ms[i]; i++) {
		double tq, tf, qbytes = (double)(gk_q4_codes_bytes(&dev) +
						 gk_q4_sb_bytes(&dev));

		g.m = ms[i];
		if ((tf = api->median_s(run_f16, &g, 3, reps, 1, msg)) < 0 ||
		    (tq = api->median_s(run_q4, &g, 3, reps, 1, msg)) < 0)
			goto out;
		row(o, "w4a16", model, n, k, g.m, tq, qbytes, tf);
		if (g.m <= GK_GEMV_MAX) {
			if ((tq = api->median_s(run_gemv, &g, 3, reps, 1,
						msg)) < 0)
				goto out;
			row(o, "w4a16-gemv", model, n, k, g.m, tq, qbytes, tf);
		}
		row(o, "cublas-f16", model, n, k, g.m, tf, 2.0 * cnt, tf);
	}
	rc = 0;
out:
	if (dev.codes)
		api->q4_free(&dev);
	gk_bufs_free(&b);
	gk_q4_release(&packed);
	free(w16);
	free(x);
	return rc;
}

int gbench_run(const struct gbench_opts *o, struct err *e)
{
	static const int all_m[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 0 };
	static const int quick_m[] = { 1, 16, 256, 0 };
	struct out out = { o->json, 0 };
	char msg[GK_MSG];
	struct gk_device d;
	const struct gk_api *api;
	double copy_gbs, tflops;

	if (!(api = gk_open(&d, e)))
		return -1;
	fprintf(stderr, "bench gpu: %s, %d SMs, %.0f GiB, L2 %.0f MiB\n", d.name,
		d.sms, d.mem_bytes / 1073741824.0, d.l2_bytes / 1048576.0);
	if (device_peaks(api, &d, o->reps, &copy_gbs, &tflops, msg) < 0) {
		gk_close();
		return err_set(e, "%s", msg);
	}
	if (o->json)
		printf("{\"gpu\": \"%s\", \"group\": %d, \"copy_gbs\": %.1f, "
		       "\"f16_peak_tflops\": %.1f, \"rows\": [", d.name, o->group,
		       copy_gbs, tflops);
	else
		printf("%s: copy %.0f GB/s (read + write), FP16 GEMM %.0f TFLOP/s "
		       "(cuBLAS, 8192^3)\n%-10s %-11s %11s %4s %10s %8s %8s %8s\n",
		       d.name, copy_gbs, tflops, "kernel", "model", "", "M", "us",
		       "GB/s", "TFLOP/s", "vs f16");
	for (int i = 0; i < o->n_gemms; i++) {
		const struct gbench_gemm *gm = &o->gemms[i];

		fprintf(stderr, "bench gpu: %s %dx%d\n", gm->model, gm->n, gm->k);
		if (bench_shape(api, gm->model, gm->n, gm->k, o->group,
				o->quick ? quick_m : all_m, o->reps, &out,
				msg) < 0) {
			gk_close();
			if (o->json)
				printf("]}\n");
			return err_set(e, "%s %dx%d: %s", gm->model, gm->n, gm->k,
				       msg);
		}
	}
	if (o->json)
		printf("]}\n");
	gk_close();
	return 0;
}
