/* ggml-mm.c: times ggml's CPU matrix product at one shape, for
 * scripts/bench-ggml.sh, which builds it against a ggml built here (never
 * committed): y (n x rows) = mul_mat(W (rows x cols, TYPE), x (n x cols,
 * FP32)), as llama.cpp runs a linear layer. A call includes ggml's
 * conversion of x to the weights' dot-product type (Q8_0 for Q4_0 and
 * Q8_0, F16 for F16), as in llama.cpp.
 *
 * usage: ggml-mm TYPE ROWS COLS N [REPS] [THREADS] [plain|repack]
 *   plain:  W in the CPU buffer (ggml's mul_mat, llamafile's sgemm where it
 *           takes the shape);
 *   repack: W in the CPU_REPACK buffer, llama.cpp's default for weights
 *           (Q4_0 is repacked on AVX2 and later; a type with no repacked
 *           layout here stays plain, and the line says plain(norepack)).
 * Prints one line: ggml TYPE rows=R cols=C n=N threads=T mode=M reps=K
 * ms=MEDIAN gflops=G min_ms=MIN. Exit 1 on a bad argument or a ggml
 * failure. */
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* xorshift, uniform in [-1, 1) */
static float uniform(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (float)((*s >> 40) * (1.0 / 8388608.0)) - 1.0f;
}

static int fail(const char *what)
{
	fprintf(stderr, "ggml-mm: %s\n", what);
	return 1;
}

/* the CPU_REPACK buffer type, or NULL */
static ggml_backend_buffer_type_t repack_type(ggml_backend_t be)
{
	typedef ggml_backend_buffer_type_t *(*extra_fn)(ggml_backend_dev_t);
	ggml_backend_dev_t dev = ggml_backend_get_device(be);
	ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
	extra_fn extra = (extra_fn)ggml_backend_reg_get_proc_address(
		reg, "ggml_backend_dev_get_extra_bufts");

	for (ggml_backend_buffer_type_t *p = extra ? extra(dev) : NULL; p && *p;
	     p++)
		if (!strcmp(ggml_backend_buft_name(*p), "CPU_REPACK"))
			return *p;
	return NULL;
}

int main(int argc, char **argv)
{
	enum ggml_type type = GGML_TYPE_COUNT;
	int64_t rows, cols, n;
	int reps, threads;
	const char *mode;
	uint64_t seed = 0x9e3779b97f4a7c15u;

	if (argc < 5 || argc > 8)
		return fail("usage: ggml-mm TYPE ROWS COLS N [REPS] [THREADS] "
			    "[plain|repack]");
	for (int t = 0; t < GGML_TYPE_COUNT; t++)
		if (ggml_type_name(t) && !strcmp(ggml_type_name(t), argv[1]) &&
		    ggml_blck_size(t) > 0)
			type = t;
	rows = atoll(argv[2]);
	cols = atoll(argv[3]);
	n = atoll(argv[4]);
	reps = argc > 5 ? atoi(argv[5]) : 10;
	threads = argc > 6 ? atoi(argv[6]) : 2;
	mode = argc > 7 ? argv[7] : "plain";
	if (type == GGML_TYPE_COUNT)
		return fail("unknown TYPE");
	if (rows < 1 || cols < 1 || n < 1 || reps < 1 || threads < 1 ||
	    cols % ggml_blck_size(type) || (strcmp(mode, "plain") &&
					     strcmp(mode, "repack")))
		return fail("bad ROWS, COLS, N, REPS, THREADS or mode");

	ggml_backend_t be = ggml_backend_cpu_init();
	ggml_backend_buffer_type_t wtype;
	struct ggml_init_params ip = { 8 * ggml_tensor_overhead() +
					       ggml_graph_overhead(),
				       NULL, true };
	struct ggml_context *cw, *cx;
	struct ggml_tensor *w, *x, *y;
	struct ggml_cgraph *graph;
	ggml_backend_buffer_t bw, bx;

	if (!be)
		return fail("no CPU backend");
	ggml_backend_cpu_set_n_threads(be, threads);
	wtype = ggml_backend_get_default_buffer_type(be);
	if (!strcmp(mode, "repack") && !(wtype = repack_type(be)))
		return fail("this ggml has no CPU_REPACK buffer");
	cw = ggml_init(ip);
	cx = ggml_init(ip);
	w = ggml_new_tensor_2d(cw, type, cols, rows);
	x = ggml_new_tensor_2d(cx, GGML_TYPE_F32, cols, n);
	y = ggml_mul_mat(cx, w, x);
	graph = ggml_new_graph(cx);
	ggml_build_forward_expand(graph, y);
	bw = ggml_backend_alloc_ctx_tensors_from_buft(cw, wtype);
	bx = ggml_backend_alloc_ctx_tensors(cx, be);
	if (!bw || !bx)
		return fail("out of memory");
	if (!strcmp(mode, "repack") &&
	    !ggml_backend_dev_supports_op(ggml_backend_get_device(be), y)) {
		/* llama.cpp's own test before it repacks a weight */
		ggml_backend_buffer_free(bw);
		w->buffer = NULL;
		w->data = NULL;
		w->extra = NULL;
		if (!(bw = ggml_backend_alloc_ctx_tensors(cw, be)))
			return fail("out of memory");
		mode = "plain(norepack)";
	}
	ggml_backend_buffer_set_usage(bw, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);

	size_t wbytes = ggml_row_size(type, cols) * rows;
	float *wf = malloc(sizeof(float) * rows * cols);
	float *xf = malloc(sizeof(float) * cols * n);
	void *wq = malloc(wbytes);
	double *t = malloc(sizeof(double) * reps);

	if (!wf || !xf || !wq || !t)
		return fail("out of memory");
	for (int64_t i = 0; i < rows * cols; i++)
		wf[i] = uniform(&seed);
	for (int64_t i = 0; i < cols * n; i++)
		xf[i] = uniform(&seed);
	ggml_quantize_chunk(type, wf, wq, 0, rows, cols, NULL);
	ggml_backend_tensor_set(w, wq, 0, wbytes); /* repacks, in repack */
	ggml_backend_tensor_set(x, xf, 0, sizeof(float) * cols * n);
	for (int i = 0; i < 2; i++) /* warm-up: work buffers, caches */
		if (ggml_backend_graph_compute(be, graph) != GGML_STATUS_SUCCESS)
			return fail("compute failed");
	for (int i = 0; i < reps; i++) {
		double t0 = now_ms();

		ggml_backend_graph_compute(be, graph);
		t[i] = now_ms() - t0;
	}
	qsort(t, reps, sizeof(double), by_value);
	double med = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;

	printf("ggml %s rows=%lld cols=%lld n=%lld threads=%d mode=%s reps=%d "
	       "ms=%.4f gflops=%.2f min_ms=%.4f\n", ggml_type_name(type),
	       (long long)rows, (long long)cols, (long long)n, threads, mode,
	       reps, med, 2.0 * rows * cols * n / (med * 1e6), t[0]);
	free(t);
	free(wf);
	free(xf);
	free(wq);
	ggml_backend_buffer_free(bw);
	ggml_backend_buffer_free(bx);
	ggml_free(cw);
	ggml_free(cx);
	ggml_backend_free(be);
	return 0;
}
