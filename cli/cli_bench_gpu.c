/* cli_bench_gpu.c: "hybridspec bench gpu", the command line of gbench_run
 * (kernels/gbench.h) over the named models' layer shapes. */
#include "cli.h"

#include "err.h"
#include "gbench.h"
#include "shape.h"

#include <stdio.h>
#include <string.h>

enum { MODELS_MAX = 8 };

static const struct opt_cmd gbench_cmd = {
	.name = "bench gpu",
	.usage = "[--json] [--models LIST] [--group G]\n"
		 " [--reps N] [--quick]",
	.about = "On GPU 0: for each layer shape of the models (dim x dim, kv x dim,\n"
		 "hidden x dim, dim x hidden, vocab x dim) and M = 1, 2, 4, ..., 256\n"
		 "tokens: the W4A16 kernels (kernels/cuda: tensor cores, \"w4a16\", and\n"
		 "at M <= 4 the GEMV, \"w4a16-gemv\") and cuBLAS FP16 (FP32\n"
		 "accumulation): seconds (median of N runs, CUDA events, L2 flushed\n"
		 "before each), GB/s of weights read, TFLOP/s, and the speedup over\n"
		 "cuBLAS; first the device's copy bandwidth (read + write) and its FP16\n"
		 "GEMM peak (8192^3, cuBLAS).\n",
	.exit_status = "0 done, 2 bad usage, or no usable GPU, or a CUDA error (the\n"
		       "message says which)",
};

/* The layer GEMMs of the models named */
struct gemms {
	struct gbench_gemm v[MODELS_MAX * SHAPE_GEMMS];
	int n;
};

/* "llama2-7b,llama2-13b" into the shapes' GEMMs (struct gemms *) */
static int parse_models(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	struct gemms *g = dest;
	char name[64];
	int models = 0;

	g->n = 0;
	for (const char *p = arg; *p; p += *p == ',') {
		size_t len = strcspn(p, ",");
		const struct shape *s;
		int gemm[SHAPE_GEMMS][2], n;

		snprintf(name, sizeof(name), "%.*s", (int)len, p);
		p += len;
		if (!(s = shape_find(name))) {
			snprintf(why, OPT_WHY_BYTES, "expected shape names separated "
				 "by commas, got \"%s\" (no shape is called \"%s\")",
				 arg, name);
			return -1;
		}
		if (models++ == MODELS_MAX) {
			snprintf(why, OPT_WHY_BYTES, "expected at most %d shapes, got "
				 "\"%s\"", MODELS_MAX, arg);
			return -1;
		}
		n = shape_gemms(s, gemm);
		for (int j = 0; j < n; j++)
			g->v[g->n++] = (struct gbench_gemm){ s->name, gemm[j][0],
							     gemm[j][1] };
	}
	return 0;
}

int cli_bench_gpu(int argc, char **argv)
{
	struct gemms gemms = { .n = 0 };
	struct gbench_opts o = { .group = 128 };
	long long reps = 30;
	char why[OPT_WHY_BYTES];
	struct err e;
	struct opt rows[] = {
		OPT_PARSE("models", 0, &gemms, "LIST", parse_models,
			  "at most 8 comma-separated shapes (default llama2-7b,\n"
			  "llama2-13b,llama2-70b)"),
		CLI_OPT_GROUP(&o.group, "W4A16 group: 32, 64 or 128 (default 128)"),
		CLI_OPT_REPS(&reps, 100000, "timed runs a point, 1 to 100000 (default 30)"),
		CLI_OPT_QUICK(&o.quick, "llama2-7b only, M = 1, 16, 256, 10 runs"),
		CLI_OPT_JSON(&o.json,
			     "{\"gpu\": NAME, \"copy_gbs\": X, \"f16_peak_tflops\": X,\n"
			     " \"rows\": [{\"kernel\": \"w4a16\", \"model\": ...,\n"
			     " \"shape\": \"11008x4096\", \"m\": 1, \"seconds\": S,\n"
			     " \"gbs\": G, \"tflops\": T, \"speedup\": X}, ...]}"),
		OPT_END,
	};
	int rc;

	if ((rc = opt_parse(&gbench_cmd, rows, &argc, argv)) != OPT_GO)
		return rc;
	if ((o.quick || !opt_given(rows, "models")) &&
	    parse_models(o.quick ? "llama2-7b" : "llama2-7b,llama2-13b,llama2-70b",
			 &gemms, why) < 0)
		HS_ASSERT(!"the default models are shapes");
	o.gemms = gemms.v;
	o.n_gemms = gemms.n;
	o.reps = o.quick ? 10 : (int)reps;
	if (gbench_run(&o, &e) < 0)
		return cli_fail("bench gpu: %s", e.msg);
	return CLI_OK;
}
