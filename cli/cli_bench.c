/* cli_bench.c: "hybridspec bench", and the engine's hold-model benchmark.
 *
 * Hold model: N events pending; each step pops the earliest and pushes one
 * at now + Exp(1). The offsets are drawn before the clock starts (a ring of
 * 2^20 draws), so the figure is the queue's own cost, not the sampler's. */
#include "cli.h"
#include "rt.h"

#include "eq.h"
#include "err.h"
#include "mem.h"
#include "rng.h"

#include <getopt.h>
#include <limits.h>
#include <gsl/gsl_randist.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING (1u << 20)

/* Events per second of the hold model with n pending events. */
static double hold_events_per_s(size_t n, long long steps)
{
	gsl_rng *r = rng_new(42, rng_stream_id("bench/engine"));
	double *off = xmalloc(RING * sizeof(double)), t, t0;
	struct eq q;
	struct eq_event ev = { 0 };
	unsigned k = 0;

	for (unsigned i = 0; i < RING; i++)
		off[i] = gsl_ran_exponential(r, 1.0);
	eq_init(&q);
	for (size_t i = 0; i < n; i++) {
		ev.id = (uint32_t)i;
		eq_push(&q, off[k++ & (RING - 1)], 0, ev);
	}
	t0 = rt_now_s();
	for (long long s = 0; s < steps; s++) {
		eq_pop(&q, &t, &ev);
		eq_push(&q, t + off[k++ & (RING - 1)], 0, ev);
	}
	t = rt_now_s() - t0;
	eq_release(&q);
	free(off);
	rng_free(r);
	return (double)steps / t;
}

static const char engine_help[] =
	"usage: hybridspec bench engine [--json] [--steps N]\n"
	"\n"
	"Hold model on the event queue: N events pending (1e3, 1e5, 1e6); each\n"
	"step pops the earliest event and schedules one at an exponentially\n"
	"distributed offset. Prints events (pop + push) per second, one core.\n"
	"\n"
	"  --json     one JSON object: {\"rows\": [{\"pending\": N, "
	"\"events_per_s\": X}]}\n"
	"  --steps N  steps timed per row (default 10000000)\n"
	"\nexit status: 0 done, 2 bad usage\n";

static int bench_engine(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "steps", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const size_t pending[] = { 1000, 100000, 1000000 };
	long long steps = 10000000;
	bool json = false;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			json = true;
			break;
		case 's':
			if (cli_long("--steps", optarg, 1, LLONG_MAX, &steps))
				return CLI_BAD_INPUT;
			break;
		case 'h':
			fputs(engine_help, stdout);
			return CLI_OK;
		default:
			fputs(engine_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc) {
		fputs(engine_help, stderr);
		return CLI_BAD_INPUT;
	}
	if (json)
		printf("{\"rows\": [");
	else
		printf("%10s %16s\n", "pending", "events/s");
	for (size_t i = 0; i < sizeof(pending) / sizeof(pending[0]); i++) {
		double eps = hold_events_per_s(pending[i], steps);

		if (json)
			printf("%s{\"pending\": %zu, \"events_per_s\": %.0f}",
			       i ? ", " : "", pending[i], eps);
		else
			printf("%10zu %16.3e\n", pending[i], eps);
		fflush(stdout);
	}
	if (json)
		printf("]}\n");
	return CLI_OK;
}

static const char bench_help[] =
	"usage: hybridspec bench WHAT [options]\n"
	"\n"
	"  engine   events per second of the event queue (hold model)\n"
	"  kernels  W4A16 against FP16 and W8A16 GEMV/GEMM, beside STREAM\n"
	"  gpu      the W4A16 tensor-core GEMM against cuBLAS FP16 (a GPU)\n"
	"\nexit status: 0 done, 2 bad usage (each WHAT: hybridspec bench WHAT --help)\n";

int cli_bench(int argc, char **argv)
{
	if (argc < 2) {
		fputs(bench_help, stderr);
		return CLI_BAD_INPUT;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(bench_help, stdout);
		return CLI_OK;
	}
	if (!strcmp(argv[1], "engine"))
		return bench_engine(argc - 1, argv + 1);
	if (!strcmp(argv[1], "kernels"))
		return cli_bench_kernels(argc - 1, argv + 1);
	if (!strcmp(argv[1], "gpu"))
		return cli_bench_gpu(argc - 1, argv + 1);
	fputs(bench_help, stderr);
	return cli_fail("bench: unknown benchmark '%s'", argv[1]);
}
