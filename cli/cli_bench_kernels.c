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
	"                                [--quick] [--json]\n"
	"\n"
	"W4A16 (group G, default 128), W8A16 and FP16 GEMV/GEMM at the LLaMA-2-7B\n"
	"layer shapes (rows x columns) for batch 1, 4 and 16, on 1 and 2 threads\n"
	"(or N), beside STREAM copy and triad, and a read-only pass (what a GEMV\n"
	"does), measured in the same run (best of 5 passes each). Each timing\n"
	"cycles through copies of the matrix adding up to twice the last-level\n"
	"cache, so weights come from memory (the three formats' copies are held\n"
	"at once, 6 x the cache, beside STREAM's 12 x). The three formats are\n"
	"timed in 5 rounds of a STREAM triad pass and a pass of each (the order\n"
	"rotates); every figure is the median over the rounds (a shared\n"
	"machine's bandwidth drifts; ratios of neighbours in time do not):\n"
	"seconds, %triad (GB/s over the round's triad) and xFP16 (FP16's seconds\n"
	"over these). %read is against the read pass above.\n"
	"\n"
	"  --threads N  only N threads\n"
	"  --group G    W4A16 group size: 32, 64 or 128\n"
	"  --batch B    only batch B (1, 4 or 16)\n"
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct kbench_opts o = { kern_best(), 0, 128, 0, false, false };
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
			if (cli_long("--batch", optarg, 1, 16, &num))
				return CLI_BAD_INPUT;
			o.batch = (int)num;
			break;
		case 'j':
			o.json = true;
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
