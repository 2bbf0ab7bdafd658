/* ebench.c: the engine's benchmarks (ebench.h).
 *
 * Hold model: N events pending; each step pops the earliest and pushes one
 * at now + Exp(1). The offsets are drawn before the clock starts (a ring of
 * 2^20 draws), so the figure is the queue's own cost, not the sampler's.
 *
 * M/M/1, the model of cimba's benchmark/MM1_single.c: one million
 * customers arrive at rate 0.9 and are served FIFO at rate 1; two events
 * each (arrival, departure) on the project's event queue, the times drawn
 * as they are needed from two of its random streams (the sampler's cost is
 * in the figure, as it is in cimba's). The waiting customers' arrival
 * times are a ring. */
#include "ebench.h"

#include "eq.h"
#include "mem.h"
#include "ring.h"
#include "rng.h"
#include "rt.h"

#include <gsl/gsl_randist.h>
#include <stdint.h>
#include <stdlib.h>

#define OFFSETS (1u << 20) /* the hold model's drawn offsets, a power of 2 */

/* Events per second of the hold model with n pending events. */
static double hold_events_per_s(size_t n, long long steps)
{
	gsl_rng *r = rng_new(42, rng_stream_id("bench/engine"));
	double *off = xmalloc(OFFSETS * sizeof(double)), t, t0;
	struct eq q;
	struct eq_event ev = { 0 };
	unsigned k = 0;

	for (unsigned i = 0; i < OFFSETS; i++)
		off[i] = gsl_ran_exponential(r, 1.0);
	eq_init(&q);
	for (size_t i = 0; i < n; i++) {
		ev.id = (uint32_t)i;
		eq_post(&q, off[k++ & (OFFSETS - 1)], 0, ev);
	}
	t0 = rt_now_s();
	for (long long s = 0; s < steps; s++) {
		eq_pop(&q, &t, &ev);
		eq_post(&q, t + off[k++ & (OFFSETS - 1)], 0, ev);
	}
	t = rt_now_s() - t0;
	eq_release(&q);
	free(off);
	rng_free(r);
	return (double)steps / t;
}

static void hold_rows(long long steps, bool json, FILE *f)
{
	static const size_t pending[] = { 1000, 100000, 1000000 };

	if (json)
		fprintf(f, "{\"rows\": [");
	else
		fprintf(f, "%10s %16s\n", "pending", "events/s");
	for (size_t i = 0; i < sizeof(pending) / sizeof(pending[0]); i++) {
		double eps = hold_events_per_s(pending[i], steps);

		if (json)
			fprintf(f, "%s{\"pending\": %zu, \"events_per_s\": %.0f}",
				i ? ", " : "", pending[i], eps);
		else
			fprintf(f, "%10zu %16.3e\n", pending[i], eps);
		fflush(f);
	}
	if (json)
		fprintf(f, "]}\n");
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

static void mm1_row(bool json, FILE *f)
{
	const double lambda = 0.9, mu = 1.0;
	struct mm1_result r = mm1_run(1000000, lambda, mu);

	if (json)
		fprintf(f, "{\"customers\": %llu, \"events\": %llu, \"wall_s\": %.6f, "
			"\"events_per_s\": %.0f, \"mean_in_system_s\": %.6f, "
			"\"expected_s\": %.6f}\n", (unsigned long long)r.customers,
			(unsigned long long)r.events, r.wall_s, r.events / r.wall_s,
			r.mean_in_system_s, 1 / (mu - lambda));
	else
		fprintf(f, "M/M/1, %llu customers, arrival rate %g, service rate %g: "
			"%llu events in %.3f s, %.3e events/s; mean time in system "
			"%.4f (1 / (mu - lambda) = %.4f)\n",
			(unsigned long long)r.customers, lambda, mu,
			(unsigned long long)r.events, r.wall_s, r.events / r.wall_s,
			r.mean_in_system_s, 1 / (mu - lambda));
}

void ebench_run(const struct ebench_opts *o, FILE *f)
{
	if (o->mm1)
		mm1_row(o->json, f);
	else
		hold_rows(o->steps, o->json, f);
}
