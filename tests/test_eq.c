/* test_eq.c: the event queue's order, cancellation and bookkeeping. */
#include "harness.h"

#include "eq.h"
#include "rng.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static struct eq_event ev(uint32_t id)
{
	return (struct eq_event){ .kind = 1, .id = id, .arg = 1000u + id };
}

/* Equal times run by priority, then first in, first out. */
static void tie_rule(void)
{
	struct eq q;
	struct eq_event e;
	double t;
	static const uint32_t want[] = { 3, 1, 4, 0, 2, 5 };

	eq_init(&q);
	eq_push(&q, 1.0, 5, ev(0));
	eq_push(&q, 1.0, 2, ev(1));
	eq_push(&q, 1.0, 5, ev(2));
	eq_push(&q, 0.5, 9, ev(3));
	eq_push(&q, 1.0, 2, ev(4));
	eq_push(&q, 2.0, 0, ev(5));
	for (size_t i = 0; i < 6; i++) {
		CHECK(eq_pop(&q, &t, &e));
		CHECK_MSG(e.id == want[i], "pop %zu: got %u, want %u", i, e.id,
			  want[i]);
		CHECK(e.arg == 1000u + e.id);
	}
	CHECK(!eq_pop(&q, &t, &e));
	eq_release(&q);
}

/* Many events at one time come out in insertion order, across refills. */
static void fifo_at_one_time(void)
{
	struct eq q;
	struct eq_event e;
	double t;
	uint32_t next = 0;

	eq_init(&q);
	for (uint32_t i = 0; i < 5000; i++)
		eq_push(&q, 3.0, 0, ev(i));
	for (uint32_t i = 0; i < 2500; i++) {
		CHECK(eq_pop(&q, &t, &e) && e.id == next++);
		eq_push(&q, 3.0, 0, ev(5000 + i)); /* same time, later in */
	}
	while (eq_pop(&q, &t, &e))
		if (e.id != next++)
			break;
	CHECK_MSG(next == 7500, "order broke at %u", next);
	eq_release(&q);
}

static void cancellation(void)
{
	struct eq q;
	struct eq_event e;
	double t;
	uint64_t h[4];

	eq_init(&q);
	for (uint32_t i = 0; i < 4; i++)
		h[i] = eq_push(&q, 1.0 + i, 0, ev(i));
	CHECK(eq_size(&q) == 4);
	CHECK(eq_cancel(&q, h[1]));
	CHECK(!eq_cancel(&q, h[1])); /* twice */
	CHECK(eq_size(&q) == 3);
	CHECK(eq_pop(&q, &t, &e) && e.id == 0);
	CHECK(!eq_cancel(&q, h[0])); /* already ran */
	CHECK(!eq_cancel(&q, EQ_NONE));
	/* the slot of event 0 is reused: its old handle must not match */
	h[0] = eq_push(&q, 10.0, 0, ev(9));
	CHECK(eq_pop(&q, &t, &e) && e.id == 2 && t == 3.0);
	CHECK(eq_cancel(&q, h[3]));
	CHECK(eq_pop(&q, &t, &e) && e.id == 9 && t == 10.0);
	CHECK(!eq_pop(&q, &t, &e));
	CHECK(eq_size(&q) == 0);
	eq_release(&q);
}

struct ref {
	double t;
	int prio;
	uint64_t seq;
	uint32_t id;
	uint64_t handle;
	int live;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio - y->prio;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Posted events outlive the sweep of cancelled ones and keep their order
 * among pushed ones. */
static void posted_survive_sweeps(void)
{
	uint64_t h[300];
	struct eq q;
	struct eq_event e;
	double t;
	uint32_t next = 0;
	bool in_order = true;

	eq_init(&q);
	for (uint32_t i = 0; i < 300; i++) {
		if (i % 3 == 0)
			eq_post(&q, 1.0 + i / 3, 0, ev(i / 3));
		else
			h[i] = eq_push(&q, 0.5 + i, 0, ev(1000 + i));
	}
	for (uint32_t i = 0; i < 300; i++)
		if (i % 3)
			CHECK(eq_cancel(&q, h[i]));
	CHECK(eq_size(&q) == 100);
	eq_post(&q, 0.25, 0, ev(500)); /* before all */
	CHECK(eq_pop(&q, &t, &e) && e.id == 500 && t == 0.25);
	while (eq_pop(&q, &t, &e))
		in_order &= e.id == next && t == 1.0 + next++;
	CHECK(in_order && next == 100);
	eq_release(&q);
}

/* Random pushes and posts (many ties), pops and cancellations against a
 * sorted list. */
static void random_against_reference(void)
{
	enum { N = 4096 };
	gsl_rng *r = rng_new(7, rng_stream_id("test/eq"));
	struct ref *all = calloc(N, sizeof(*all));
	struct eq q;
	struct eq_event e;
	double now = 0, t;
	size_t n = 0, popped = 0, mismatches = 0;

	eq_init(&q);
	while (n < N) {
		double u = gsl_rng_uniform(r);

		if (u < 0.55) { /* push: coarse times make many ties */
			struct ref *x = &all[n];

			x->t = now + (double)gsl_rng_uniform_int(r, 50) * 0.25;
			x->prio = (int)gsl_rng_uniform_int(r, 3);
			x->seq = n;
			x->id = (uint32_t)n;
			x->live = 1;
			if (u < 0.2) { /* posted: no handle */
				eq_post(&q, x->t, x->prio, ev(x->id));
				x->handle = EQ_NONE;
			} else {
				x->handle = eq_push(&q, x->t, x->prio,
						    ev(x->id));
			}
			n++;
		} else if (u < 0.62 && n) { /* cancel a random event */
			struct ref *x = &all[gsl_rng_uniform_int(r, n)];
			bool can = x->live == 1 && x->handle != EQ_NONE;

			CHECK(eq_cancel(&q, x->handle) == can);
			if (can)
				x->live = 0;
		} else if (eq_pop(&q, &t, &e)) {
			/* must be the least live event of the reference */
			struct ref *best = NULL;

			for (size_t i = 0; i < n; i++)
				if (all[i].live == 1 &&
				    (!best || ref_cmp(&all[i], best) < 0))
					best = &all[i];
			if (!best || best->id != e.id || best->t != t)
				mismatches++;
			if (best)
				best->live = 2;
			now = t;
			popped++;
		}
	}
	/* drain, comparing with a sort of what is left */
	{
		struct ref *left = calloc(n, sizeof(*left));
		size_t m = 0;

		for (size_t i = 0; i < n; i++)
			if (all[i].live == 1)
				left[m++] = all[i];
		qsort(left, m, sizeof(*left), ref_cmp);
		CHECK(eq_size(&q) == m);
		for (size_t i = 0; i < m; i++) {
			if (!eq_pop(&q, &t, &e) || e.id != left[i].id ||
			    t != left[i].t)
				mismatches++;
		}
		CHECK(!eq_pop(&q, &t, &e));
		free(left);
	}
	CHECK_MSG(mismatches == 0, "%zu pops out of order", mismatches);
	CHECK(popped > 1000);
	eq_release(&q);
	free(all);
	rng_free(r);
}

/* Large random runs: the popped sequence is sorted and complete. */
static void large_hold_model_sorted(void)
{
	gsl_rng *r = rng_new(11, rng_stream_id("test/eq/hold"));
	struct eq q;
	struct eq_event e;
	double t, last = 0;
	uint64_t *seen = calloc(300000 / 64 + 1, sizeof(uint64_t));
	size_t bad = 0, cancelled = 0;
	uint64_t handles[64] = { 0 };

	eq_init(&q);
	for (uint32_t i = 0; i < 100000; i++)
		eq_push(&q, gsl_rng_uniform(r) * 5, 0, ev(i));
	for (uint32_t i = 100000; i < 300000; i++) {
		CHECK(eq_pop(&q, &t, &e));
		if (t < last)
			bad++;
		last = t;
		seen[e.id / 64] |= UINT64_C(1) << (e.id % 64);
		handles[i % 64] = eq_push(&q, t + gsl_rng_uniform(r) * 3,
					  (int)(i % 2), ev(i));
		if (i % 7 == 0 && eq_cancel(&q, handles[(i * 13) % 64]))
			cancelled++;
	}
	while (eq_pop(&q, &t, &e)) {
		if (t < last)
			bad++;
		last = t;
		seen[e.id / 64] |= UINT64_C(1) << (e.id % 64);
	}
	{
		size_t count = 0;

		for (size_t i = 0; i < 300000 / 64 + 1; i++)
			count += (size_t)__builtin_popcountll(seen[i]);
		CHECK_MSG(count + cancelled == 300000,
			  "popped %zu + cancelled %zu != pushed 300000", count,
			  cancelled);
	}
	CHECK_MSG(bad == 0, "%zu pops went back in time", bad);
	eq_release(&q);
	free(seen);
	rng_free(r);
}

/* Bursts of events at one time, landing in a different bucket each epoch:
 * the buckets must not each keep the largest burst they ever held, or memory
 * grows with the length of the run instead of the pending events. */
static void memory_follows_pending(void)
{
	gsl_rng *r = rng_new(12, rng_stream_id("test/eq/bursts"));
	struct eq q;
	struct eq_event e;
	double t;
	size_t nodes = 0, most = 0;

	eq_init(&q);
	for (uint32_t i = 0; i < 2000; i++)
		eq_push(&q, gsl_rng_uniform(r) * 3, 0, ev(i));
	for (uint32_t i = 0; i < 1000000 && eq_pop(&q, &t, &e); i++) {
		if (eq_size(&q) > most)
			most = eq_size(&q);
		if (e.id >= 2000)
			continue; /* a burst event ends */
		eq_push(&q, t + gsl_rng_uniform(r) * 3, 0, ev(e.id));
		if (i % 1000 == 0) {
			double at = t + 1 + gsl_rng_uniform(r);

			for (uint32_t k = 0; k < 300; k++)
				eq_push(&q, at, 0, ev(2000 + k));
		}
	}
	nodes = (size_t)q.chunks_cap * EQ_CHUNK + q.run.cap + q.cap;
	CHECK_MSG(nodes <= 4 * most, "the queue holds room for %zu nodes, "
		  "for at most %zu pending", nodes, most);
	eq_release(&q);
	rng_free(r);
}

/* Scheduling in the past is a bug: the process aborts. */
static void past_aborts(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		struct eq q;
		struct eq_event e;
		double t;

		freopen("/dev/null", "w", stderr);
		eq_init(&q);
		eq_push(&q, 2.0, 0, ev(0));
		eq_pop(&q, &t, &e);
		eq_push(&q, 1.0, 0, ev(1));
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
}

/* Crowds of distinct times far narrower than a bucket, pushed out of
 * order (so that the bucket's slices cannot part them), among events spread
 * wide: they come out in time order. */
static void crowds_in_one_bucket(void)
{
	gsl_rng *r = rng_new(13, rng_stream_id("test/eq/crowds"));
	struct eq q;
	struct eq_event e;
	double t, last = -1;
	size_t popped = 0, bad = 0;

	eq_init(&q);
	for (uint32_t i = 0; i < 4000; i++)
		eq_push(&q, gsl_rng_uniform(r) * 100, 0, ev(i));
	for (uint32_t c = 0; c < 5; c++)
		for (uint32_t k = 0; k < 3000; k++) /* descending times */
			eq_push(&q, 20.0 * c + 1 + (3000 - k) * 1e-12, 0,
				ev(4000 + c * 3000 + k));
	while (eq_pop(&q, &t, &e)) {
		bad += t < last;
		last = t;
		popped++;
	}
	CHECK_MSG(bad == 0, "%zu pops went back in time", bad);
	CHECK(popped == 4000 + 5 * 3000);
	eq_release(&q);
	rng_free(r);
}

const struct tcase eq_tests[] = {
	{ "eq: scheduling in the past aborts", past_aborts },
	{ "eq: equal times run by priority then FIFO", tie_rule },
	{ "eq: FIFO among 7500 events at one time", fifo_at_one_time },
	{ "eq: cancellation and stale handles", cancellation },
	{ "eq: random pushes, posts, pops, cancels match a sorted reference",
	  random_against_reference },
	{ "eq: posted events outlive sweeps of cancelled ones",
	  posted_survive_sweeps },
	{ "eq: 300k-event hold model pops in time order, none lost",
	  large_hold_model_sorted },
	{ "eq: memory follows the pending events, not the run's length",
	  memory_follows_pending },
	{ "eq: crowds of distinct times in one bucket pop in order",
	  crowds_in_one_bucket },
	{ 0 },
};
