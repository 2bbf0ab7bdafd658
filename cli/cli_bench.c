/* cli_bench.c: "hybridspec bench", a table of benchmarks, and "bench
 * engine", the command line of ebench_run (sim/ebench.h). */
#include "cli.h"
#include "cli_sub.h"

#include "ebench.h"

#include <limits.h>
#include <stdio.h>

static const struct opt_cmd engine_cmd = {
	.name = "bench engine",
	.usage = "[--json] [--steps N]\n"
		 "--mm1 [--json]",
	.about = "Hold model on the event queue: N events pending (1e3, 1e5, 1e6); each\n"
		 "step pops the earliest event and schedules one at an exponentially\n"
		 "distributed offset. Prints events (pop + push) per second, one core.\n"
		 "--mm1: the M/M/1 queue of cimba's MM1_single benchmark (one million\n"
		 "customers, arrival rate 0.9, service rate 1, FIFO): wall time, events,\n"
		 "events/s and the mean time in system against 1 / (mu - lambda) = 10.\n"
		 "scripts/bench-mm1.sh times it beside cimba's, alternating.\n",
	.exit_status = "0 done, 2 bad usage",
	.conflicts = { { "mm1", "steps" } }, /* its customers are fixed */
};

static int bench_engine(int argc, char **argv)
{
	struct ebench_opts o = { .steps = 10000000 };
	struct opt rows[] = {
		CLI_OPT_JSON(&o.json, "one JSON object:\n{\"rows\": [{\"pending\": N, "
			     "\"events_per_s\": X}]}"),
		OPT_INT("steps", 0, &o.steps, "N", 10000, LLONG_MAX,
			"steps timed per row, at least 10000: fewer time the\n"
			"clock and a cold cache, not the queue (default 10000000)"),
		OPT_FLAG("mm1", 0, &o.mm1, "the M/M/1 queue instead of the hold model"),
		OPT_END,
	};
	int rc;

	if ((rc = opt_parse(&engine_cmd, rows, &argc, argv)) != OPT_GO)
		return rc;
	ebench_run(&o, stdout);
	return CLI_OK;
}

static const struct cli_sub benches[] = {
	{ "engine", bench_engine, "events per second of the event queue (hold model)" },
	{ "kernels", cli_bench_kernels,
	  "W4A16 against FP16 and W8A16 GEMV/GEMM, beside STREAM" },
	{ "gpu", cli_bench_gpu, "the W4A16 tensor-core GEMM against cuBLAS FP16 (a GPU)" },
	{ NULL, NULL, NULL },
};

static const struct cli_subs bench_subs = {
	.name = "bench",
	.exit_status = "0 done, 2 bad usage (each SUB: hybridspec bench SUB --help)",
	.subs = benches,
};

int cli_bench(int argc, char **argv)
{
	return cli_sub_run(&bench_subs, argc, argv);
}
