/* cli_bench_kernels.c: "hybridspec bench kernels", the command line of
 * kbench_run (kernels/kbench.h). */
#include "cli.h"

#include "kbench.h"
#include "kern.h"

#include <stdio.h>
#include <stdlib.h>

static const struct opt_cmd kbench_cmd = {
	.name = "bench kernels",
	.usage = "[--threads N] [--group G] [--kernel K]\n"
		 " [--batch B] [--shape RxC] [--hot]\n"
		 " [--row-kernels] [--quick] [--json]",
	.about = "W4A16 (group G, default 128), W8A16, FP16 and, where the kernel set has\n"
		 "an integer path, W4A8 (the W4A16 weights with activations quantised to\n"
		 "int8 in blocks of 32) GEMV/GEMM at the LLaMA-2-7B layer shapes (rows x\n"
		 "columns) for batch 1, 4 and 16 (64 and 512 too at 4096x4096 and\n"
		 "11008x4096), on 1 and 2 threads (or N), beside STREAM copy and triad, a\n"
		 "read-only pass (what a GEMV does), the FP32 FMA peak and the int8 peak\n"
		 "of the instruction the set's integer path multiplies with (none where\n"
		 "this build times none for the set), measured in the same run (best of 5\n"
		 "passes each). Below batch 64 each timing cycles through copies of the\n"
		 "matrix adding up to twice the last-level cache, so weights come from\n"
		 "memory (the formats' copies are held at once, beside STREAM's 12 x the\n"
		 "cache); from 64 on, and with --hot, one copy, hot in the cache. The\n"
		 "formats are timed in 5 rounds of a STREAM triad pass and a pass of each\n"
		 "(the order rotates); every figure is the median over the rounds (a\n"
		 "shared machine's bandwidth drifts; ratios of neighbours in time do not):\n"
		 "seconds, %triad (GB/s over the round's triad), xFP16 (FP16's seconds\n"
		 "over these), GFLOP/s (2 x rows x columns x batch a second) and %peak (of\n"
		 "the int8 peak for W4A8, of the FMA peak for the rest). %read is against\n"
		 "the read pass above. W4A16 reads the integer path's packed panels where\n"
		 "the set multiplies the activations' digits on them (avx512-vnni,\n"
		 "avx-vnni, avx2), as the models do; --row-kernels times it on the row\n"
		 "kernels too (w4a16-rows: the weights as q4.h lays them, unpacked), in\n"
		 "the same rounds.\n",
	.exit_status = "0 done, 2 bad usage",
	/* --quick is one shape at batch 1 */
	.conflicts = { { "quick", "batch" }, { "quick", "shape" } },
};

/* "11008x4096" into o->rows and o->cols (struct kbench_opts *) */
static int parse_shape(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	struct kbench_opts *o = dest;
	int rows, cols;

	if (sscanf(arg, "%dx%d%c", &rows, &cols, &(char){ 0 }) != 2 || rows < 1 ||
	    cols < 1 || rows > 1 << 20 || cols > 1 << 20 ||
	    (double)rows * cols > (double)(1 << 30)) {
		snprintf(why, OPT_WHY_BYTES, "expected ROWSxCOLUMNS (e.g. 11008x4096, "
			 "each at most 1048576, at most 2^30 weights), got \"%s\"",
			 arg);
		return -1;
	}
	o->rows = rows;
	o->cols = cols;
	return 0;
}

int cli_bench_kernels(int argc, char **argv)
{
	static const char *const batches[] = { "1", "4", "16", "64", "512", NULL };
	struct kbench_opts o = { .group = 128, .kern = kern_best() };
	long long threads = 0;
	int batch = -1, rc;
	struct err e;
	struct opt rows[] = {
		CLI_OPT_THREADS(&threads, 64, "only N threads, 1 to 64 (default: 1 and 2)"),
		CLI_OPT_GROUP(&o.group, "W4A16 group size: 32, 64 or 128 (default 128)"),
		OPT_CHOICE("batch", 0, &batch, "B", batches,
			   "only batch B (1, 4, 16, 64 or 512)"),
		OPT_PARSE("shape", 0, &o, "RxC", parse_shape,
			  "only this shape (every batch; a small one\n"
			  "needs --hot)"),
		OPT_FLAG("hot", 0, &o.hot,
			 "one copy of each matrix: weights hot in the cache (and\n"
			 "STREAM over 32 MB arrays: the cache's bandwidth too)"),
		OPT_FLAG("row-kernels", 0, &o.row_kernels,
			 "W4A16 on the row kernels too, unpacked, printed as\n"
			 "w4a16-rows (avx512-vnni, avx-vnni or avx2)"),
		CLI_OPT_KERNEL(&o.kern),
		CLI_OPT_QUICK(&o.quick, "one shape, batch 1, shorter timings (a smoke test)"),
		CLI_OPT_JSON(&o.json, "{\"stream_gbs\": X, \"rows\": [{\"kernel\": \"w4a16\",\n"
			     " \"shape\": ..., \"triad_share\": X,\n"
			     " \"speedup_over_fp16\": X}]}"),
		OPT_END,
	};

	if ((rc = opt_parse(&kbench_cmd, rows, &argc, argv)) != OPT_GO)
		return rc;
	o.threads = (int)threads;
	o.batch = batch < 0 ? 0 : atoi(batches[batch]);
	if (kbench_check(&o, &e) < 0)
		return cli_fail("bench kernels: %s", e.msg);
	kbench_run(&o);
	return CLI_OK;
}
