/* cli_bench_kernels.c: "hybridspec bench kernels", the command line of
 * kbench_run (kernels/kbench.h). */
#include "cli.h"

#include "kbench.h"
#include "kern.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char kbench_help[] =
	"usage: hybridspec bench kernels [--threads N] [--group G] [--kernel K]\n"
	"                                [--batch B] [--shape RxC] [--hot]\n"
	"                                [--quick] [--json]\n"
	"\n"
	"W4A16 (group G, default 128), W8A16, FP16 and, where the kernel set has\n"
	"an integer path, W4A8 (the W4A16 weights with activations quantised to\n"
	"int8 in blocks of 32) GEMV/GEMM at the LLaMA-2-7B layer shapes (rows x\n"
	"columns) for batch 1, 4 and 16 (64 and 512 too at 4096x4096 and\n"
	"11008x4096), on 1 and 2 threads (or N), beside STREAM copy and triad, a\n"
	"read-only pass (what a GEMV does) and the FP32 FMA and int8 dot-product\n"
	"peaks, measured in the same run (best of 5 passes each). Below batch 64\n"
	"each timing cycles through copies of the matrix adding up to twice the\n"
	"last-level cache, so weights come from memory (the formats' copies are\n"
	"held at once, beside STREAM's 12 x the cache); from 64 on, and with\n"
	"--hot, one copy, hot in the cache. The formats are timed in 5 rounds of\n"
	"a STREAM triad pass and a pass of each (the order rotates); every figure\n"
	"is the median over the rounds (a shared machine's bandwidth drifts;\n"
	"ratios of neighbours in time do not): seconds, %triad (GB/s over the\n"
	"round's triad), xFP16 (FP16's seconds over these), GFLOP/s (2 x rows x\n"
	"columns x batch a second) and %peak (of the int8 peak for W4A8, of the\n"
	"FMA peak for the rest). %read is against the read pass above.\n"
	"\n"
	"  --threads N  only N threads\n"
	"  --group G    W4A16 group size: 32, 64 or 128\n"
	"  --batch B    only batch B (1, 4, 16, 64 or 512)\n"
	"  --shape RxC  only this shape (every batch)\n"
	"  --hot        one copy of each matrix: weights hot in the cache (and\n"
	"               STREAM over 32 MB arrays: the cache's bandwidth too)\n"
	"  --kernel K   kernel set (default: the best this CPU runs)\n"
	"  --quick      one shape, batch 1, shorter timings (a smoke test)\n"
	"  --json       {\"stream_gbs\": X, \"rows\": [{\"kernel\": \"w4a16\", "
	"\"shape\": ..., \"triad_share\": X,\n"
	"               \"speedup_over_fp16\": X}]}\n"
	"\nexit status: 0 done, 2 bad usage\n";

int cli_bench_kernels(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "group", required_argument, NULL, 'g' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "quick", no_argument, NULL, 'q' },
		{ "batch", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "shape", required_argument, NULL, 's' },
		{ "hot", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct kbench_opts o = { .kern = kern_best(), .group = 128 };
	long long num;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 't':
			if (cli_long("--threads", optarg, 1, 64, &num))
				return CLI_BAD_INPUT;
			o.threads = (int)num;
			break;
		case 'g':
			if (cli_group(optarg, &o.group))
				return CLI_BAD_INPUT;
			break;
		case 'k':
			if (!(o.kern = kern_find(optarg)))
				return cli_fail("--kernel: '%s' is not a kernel this "
						"build and CPU run", optarg);
			break;
		case 'q':
			o.quick = true;
			break;
		case 'b':
			if (cli_long("--batch", optarg, 1, 512, &num))
				return CLI_BAD_INPUT;
			if (num != 1 && num != 4 && num != 16 && num != 64 &&
			    num != 512)
				return cli_fail("--batch: expected 1, 4, 16, 64 or "
						"512, got %lld", num);
			o.batch = (int)num;
			break;
		case 'j':
			o.json = true;
			break;
		case 's':
			if (sscanf(optarg, "%dx%d%c", &o.rows, &o.cols, &(char){ 0 }) != 2 ||
			    o.rows < 1 || o.cols < 1 || o.rows > 1 << 20 ||
			    o.cols > 1 << 20)
				return cli_fail("--shape: expected ROWSxCOLUMNS (e.g. "
						"11008x4096), got '%s'", optarg);
			break;
		case 'H':
			o.hot = true;
			break;
		case 'h':
			fputs(kbench_help, stdout);
			return CLI_OK;
		default:
			fputs(kbench_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc) {
		fputs(kbench_help, stderr);
		return CLI_BAD_INPUT;
	}
	kbench_run(&o);
	return CLI_OK;
}
