/* pool.c: workers wait for a new generation of work; the caller runs
 * range 0 itself and waits until `pending` drops to zero. A generation
 * counter, not a flag, tells workers that work is new. Both sides first
 * watch the counter they wait on for up to KPOOL_SPIN_NS, then sleep on a
 * condition variable: a forward pass calls the pool hundreds of times a
 * token, back to back, and waking a sleeping thread costs 10-40 us here
 * (measured), a few percent of a 4096-row GEMV. gen and pending change
 * only under mu; they are atomic so that the spins may read them without
 * it. */
#include "pool.h"

#include "err.h"
#include "mem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#define KPOOL_SPIN_NS 100000

struct kpool {
	int n;                  /* threads, the caller included */
	pthread_t *th;          /* (n - 1) workers */
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	atomic_ulong gen;       /* bumped for each kpool_run */
	atomic_ulong pending;   /* workers still busy with gen */
	int quit;
	void (*fn)(void *, int, int);
	void *ctx;
	int rows, align;
	void (*thread_init)(void); /* run first on each worker, or NULL */
};

static void range(const struct kpool *p, int i, int *r0, int *r1)
{
	int units = (p->rows + p->align - 1) / p->align;

	*r0 = (int)((long)units * i / p->n) * p->align;
	*r1 = (int)((long)units * (i + 1) / p->n) * p->align;
	if (*r1 > p->rows)
		*r1 = p->rows;
	if (*r0 > p->rows)
		*r0 = p->rows;
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Watches *v for up to KPOOL_SPIN_NS; whether (*v == val) came to be
 * `equal` (a new generation: gen != seen; the workers done: pending == 0). */
static bool spin_until(atomic_ulong *v, unsigned long val, bool equal)
{
	long long end = now_ns() + KPOOL_SPIN_NS;

	do {
		for (int i = 0; i < 64; i++)
			if ((atomic_load_explicit(v, memory_order_acquire) ==
			     val) == equal)
				return true;
	} while (now_ns() < end);
	return false;
}

struct worker_arg {
	struct kpool *p;
	int i;
};

static void *worker(void *arg)
{
	struct worker_arg *wa = arg;
	struct kpool *p = wa->p;
	int i = wa->i;
	unsigned long seen = 0;

	free(wa);
	if (p->thread_init)
		p->thread_init();
	pthread_mutex_lock(&p->mu);
	for (;;) {
		int r0, r1;

		while (p->gen == seen && !p->quit) {
			pthread_mutex_unlock(&p->mu);
			bool fresh = spin_until(&p->gen, seen, false);
			pthread_mutex_lock(&p->mu);
			if (!fresh && p->gen == seen && !p->quit)
				pthread_cond_wait(&p->go, &p->mu);
		}
		if (p->quit)
			break;
		seen = p->gen;
		range(p, i, &r0, &r1);
		pthread_mutex_unlock(&p->mu);
		if (r0 < r1)
			p->fn(p->ctx, r0, r1);
		pthread_mutex_lock(&p->mu);
		if (--p->pending == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct kpool *kpool_new(int threads, void (*thread_init)(void))
{
	struct kpool *p = xcalloc(1, sizeof(*p));

	HS_ASSERT(threads >= 1);
	p->n = threads;
	p->thread_init = thread_init;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	p->th = xcalloc((size_t)threads, sizeof(*p->th));
	for (int i = 1; i < threads; i++) {
		struct worker_arg *wa = xmalloc(sizeof(*wa));

		wa->p = p;
		wa->i = i;
		if (pthread_create(&p->th[i - 1], NULL, worker, wa) != 0)
			hs_abort(__FILE__, __LINE__, "cannot start a thread");
	}
	return p;
}

void kpool_free(struct kpool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	for (int i = 1; i < p->n; i++)
		pthread_join(p->th[i - 1], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	free(p->th);
	free(p);
}

void kpool_run(struct kpool *p, void (*fn)(void *ctx, int r0, int r1),
	       void *ctx, int n, int align)
{
	int r0, r1;

	if (!p || p->n == 1) {
		fn(ctx, 0, n);
		return;
	}
	pthread_mutex_lock(&p->mu);
	p->fn = fn;
	p->ctx = ctx;
	p->rows = n;
	p->align = align;
	p->pending = p->n - 1;
	p->gen++;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	range(p, 0, &r0, &r1);
	if (r0 < r1)
		fn(ctx, r0, r1);
	spin_until(&p->pending, 0, true);
	pthread_mutex_lock(&p->mu);
	while (p->pending > 0)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}
