/* cli_bench.c: "hybridspec bench", and the engine's benchmarks.
 *
 * Hold model: N events pending; each step pops the earliest and pushes one
 * at now + Exp(1). The offsets are drawn before the clock starts (a ring of
 * 2^20 draws), so the figure is the queue's own cost, not the sampler's.
 *
 * M/M/1 (--mm1), the model of cimba's benchmark/MM1_single.c: one million
 * customers arrive at rate 0.9 and are served FIFO at rate 1; two events
 * each (arrival, departure) on the project's event queue, the times drawn
 * as they are needed from two of its random streams (the sampler's cost is
 * in the figure, as it is in cimba's). The waiting customers' arrival
 * times are a ring. */
#include "cli.h"
#include "rt.h"

#include "eq.h"
#include "err.h"
#include "mem.h"
#include "ring.h"
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
		eq_post(&q, off[k++ & (RING - 1)], 0, ev);
	}
	t0 = rt_now_s();
	for (long long s = 0; s < steps; s++) {
		eq_pop(&q, &t, &ev);
		eq_post(&q, t + off[k++ & (RING - 1)], 0, ev);
	}
	t = rt_now_s() - t0;
	eq_release(&q);
	free(off);
	rng_free(r);
	return (double)steps / t;
}

RING_DEFINE(tring, double) /* arrival times of the customers waiting */

enum { MM1_ARRIVE, MM1_DEPART };

struct mm1_result {
	double wall_s, mean_in_system_s;
	uint64_t events, customers;
};

/* The M/M/1 queue of n customers at rates lambda and mu. */
static struct mm1_result mm1_run(uint64_t n, double lambda, double mu)
{
	gsl_rng *ra = rng_new(42, rng_stream_id("bench/mm1/arrive"));
	gsl_rng *rs = rng_new(42, rng_stream_id("bench/mm1/serve"));
	struct mm1_result res = { 0 };
	struct tring waiting = { 0 };
	struct eq_event ev = { 0 };
	uint64_t arrived = 0;
	double t, sum = 0, t0 = rt_now_s();
	bool busy = false;
	struct eq q;

	eq_init(&q);
	eq_post(&q, gsl_ran_exponential(ra, 1 / lambda), 0,
		(struct eq_event){ .kind = MM1_ARRIVE });
	while (eq_pop(&q, &t, &ev)) {
		res.events++;
		if (ev.kind == MM1_ARRIVE) {
			tring_push(&waiting, t);
			if (++arrived < n)
				eq_post(&q, t + gsl_ran_exponential(ra, 1 / lambda), 0,
					(struct eq_event){ .kind = MM1_ARRIVE });
		} else {
			sum += t - tring_pop(&waiting);
			res.customers++;
			busy = false;
		}
		if (!busy && waiting.n) {
			busy = true;
			eq_post(&q, t + gsl_ran_exponential(rs, 1 / mu), 0,
				(struct eq_event){ .kind = MM1_DEPART });
		}
	}
	res.wall_s = rt_now_s() - t0;
	res.mean_in_system_s = sum / (double)res.customers;
	eq_release(&q);
	tring_release(&waiting);
	rng_free(ra);
	rng_free(rs);
	return res;
}

static int bench_mm1(bool json)
{
	const double lambda = 0.9, mu = 1.0;
	struct mm1_result r = mm1_run(1000000, lambda, mu);

	if (json)
		printf("{\"customers\": %llu, \"events\": %llu, \"wall_s\": %.6f, "
		       "\"events_per_s\": %.0f, \"mean_in_system_s\": %.6f, "
		       "\"expected_s\": %.6f}\n", (unsigned long long)r.customers,
		       (unsigned long long)r.events, r.wall_s, r.events / r.wall_s,
		       r.mean_in_system_s, 1 / (mu - lambda));
	else
		printf("M/M/1, %llu customers, arrival rate %g, service rate %g: "
		       "%llu events in %.3f s, %.3e events/s; mean time in system "
		       "%.4f (1 / (mu - lambda) = %.4f)\n",
		       (unsigned long long)r.customers, lambda, mu,
		       (unsigned long long)r.events, r.wall_s, r.events / r.wall_s,
		       r.mean_in_system_s, 1 / (mu - lambda));
	return CLI_OK;
}

static const char engine_help[] =
	"usage: hybridspec bench engine [--json] [--steps N]\n"
	"       hybridspec bench engine --mm1 [--json]\n"
	"\n"
	"Hold model on the event queue: N events pending (1e3, 1e5, 1e6); each\n"
	"step pops the earliest event and schedules one at an exponentially\n"
	"distributed offset. Prints events (pop + push) per second, one core.\n"
	"--mm1: the M/M/1 queue of cimba's MM1_single benchmark (one million\n"
	"customers, arrival rate 0.9, service rate 1, FIFO): wall time, events,\n"
	"events/s and the mean time in system against 1 / (mu - lambda) = 10.\n"
	"scripts/bench-mm1.sh times it beside cimba's, alternating.\n"
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
		{ "mm1", no_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const size_t pending[] = { 1000, 100000, 1000000 };
	long long steps = 10000000;
	bool json = false, mm1 = false;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			json = true;
			break;
		case 'm':
			mm1 = true;
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
	if (mm1)
		return bench_mm1(json);
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
