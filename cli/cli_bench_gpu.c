/* cli_bench_gpu.c: "hybridspec bench gpu", the command line of gbench_run
 * (kernels/gbench.h) over the named models' layer shapes. */
#include "cli.h"

#include "err.h"
#include "gbench.h"
#include "shape.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char gbench_help[] =
	"usage: hybridspec bench gpu [--json] [--models LIST] [--group G]\n"
	"                            [--reps N] [--quick]\n"
	"\n"
	"On GPU 0: for each layer shape of the models (dim x dim, kv x dim,\n"
	"hidden x dim, dim x hidden, vocab x dim) and M = 1, 2, 4, ..., 256\n"
	"tokens: the W4A16 kernel (kernels/cuda) and cuBLAS FP16 (FP32\n"
	"accumulation): seconds (median of N runs, CUDA events, L2 flushed\n"
	"before each), GB/s of weights read, TFLOP/s, and the speedup over\n"
	"cuBLAS; first the device's copy bandwidth (read + write) and its FP16\n"
	"GEMM peak (8192^3, cuBLAS).\n"
	"\n"
	"  --models LIST  comma-separated shapes (default llama2-7b,llama2-13b,\n"
	"                 llama2-70b)\n"
	"  --group G      W4A16 group: 32, 64 or 128 (default 128)\n"
	"  --reps N       timed runs a point (default 30)\n"
	"  --quick        llama2-7b only, M = 1, 16, 256, 10 runs\n"
	"  --json         {\"gpu\": NAME, \"copy_gbs\": X, \"f16_peak_tflops\": X,\n"
	"                  \"rows\": [{\"kernel\": \"w4a16\", \"model\": ...,\n"
	"                  \"shape\": \"11008x4096\", \"m\": 1, \"seconds\": S,\n"
	"                  \"gbs\": G, \"tflops\": T, \"speedup\": X}, ...]}\n"
	"\nexit status: 0 done, 2 bad usage, or no usable GPU, or a CUDA error (the\n"
	"message says which)\n";

int cli_bench_gpu(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "models", required_argument, NULL, 'M' },
		{ "group", required_argument, NULL, 'g' },
		{ "reps", required_argument, NULL, 'r' },
		{ "quick", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char models[256] = "llama2-7b,llama2-13b,llama2-70b";
	struct gbench_gemm gemms[8 * SHAPE_GEMMS];
	struct gbench_opts o = { gemms, 0, 128, 30, false, false };
	int nm = 0, ch;
	long long num;
	struct err e;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'M':
			if (strlen(optarg) >= sizeof(models))
				return cli_fail("--models: list too long");
			strcpy(models, optarg);
			break;
		case 'g':
			if (cli_group(optarg, &o.group))
				return CLI_BAD_INPUT;
			break;
		case 'r':
			if (cli_long("--reps", optarg, 1, 100000, &num))
				return CLI_BAD_INPUT;
			o.reps = (int)num;
			break;
		case 'q':
			o.quick = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			fputs(gbench_help, stdout);
			return CLI_OK;
		default:
			fputs(gbench_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc) {
		fputs(gbench_help, stderr);
		return CLI_BAD_INPUT;
	}
	if (o.quick) {
		strcpy(models, "llama2-7b");
		o.reps = 10;
	}
	for (char *tok = strtok(models, ","); tok; tok = strtok(NULL, ",")) {
		const struct shape *s = shape_find(tok);
		int g[SHAPE_GEMMS][2], n;

		if (!s)
			return cli_fail("--models: unknown shape '%s'", tok);
		if (nm++ == 8)
			return cli_fail("--models: at most 8");
		n = shape_gemms(s, g);
		for (int j = 0; j < n; j++)
			gemms[o.n_gemms++] = (struct gbench_gemm){ s->name, g[j][0],
								   g[j][1] };
	}
	if (gbench_run(&o, &e) < 0)
		return cli_fail("bench gpu: %s", e.msg);
	return CLI_OK;
}
