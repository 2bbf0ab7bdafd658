/* pool.c: workers wait for a new generation of work; the caller takes part
 * in it and waits until every piece of it is done.
 *
 * The rows are split into one range a thread, as evenly as align allows,
 * and a range into up to KPOOL_PIECES pieces (pieces of at least
 * KPOOL_PIECE_UNITS units of align rows; a short range is one piece). A
 * thread takes its own range's pieces in order, then what is left of the
 * others': a thread the system did not run in time (another process on
 * its core) leaves its range to the others instead of holding every call
 * up for a time slice; on a quiet machine each thread runs its own range,
 * as one range a thread would. Each range's next piece is an atomic word,
 * its generation in the high half, so a worker that wakes after its
 * generation ended can take nothing from the next one; `left` counts the
 * pieces not yet done, and the thread that finishes the last signals.
 *
 * Both sides first watch the counter they wait on for up to
 * KPOOL_SPIN_NS, then sleep on a condition variable: a forward pass calls
 * the pool hundreds of times a token, back to back, and waking a sleeping
 * thread costs 10-40 us here (measured), a few percent of a 4096-row GEMV.
 * gen changes only under mu; it is atomic so that the spins may read it
 * without it. */
#include "pool.h"

#include "err.h"
#include "mem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define KPOOL_SPIN_NS 100000
#define KPOOL_PIECES 4
#define KPOOL_PIECE_UNITS 128

struct kpool_next {
	_Alignas(64) atomic_ullong w; /* NEXT_WORD: gen, pieces, the next */
};

struct kpool {
	int n;                  /* threads, the caller included */
	pthread_t *th;          /* (n - 1) workers */
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	atomic_ulong gen;       /* bumped for each kpool_run */
	struct kpool_next *next; /* (n) of each range, a cache line each:
				    written by the threads that take its
				    pieces, its owner first */
	atomic_ulong left;      /* pieces of gen not yet done */
	int quit;
	void (*fn)(void *, int, int);
	void *ctx;
	int rows, align;
	void (*thread_init)(void); /* run first on each worker, or NULL */
};

/* Range i's units of align rows: [*u0, *u1) */
static void units_of(const struct kpool *p, int i, int *u0, int *u1)
{
	int units = (p->rows + p->align - 1) / p->align;

	*u0 = (int)((long)units * i / p->n);
	*u1 = (int)((long)units * (i + 1) / p->n);
}

static int pieces_of(int units)
{
	int k = units / KPOOL_PIECE_UNITS;

	return k < 1 ? (units > 0) : k > KPOOL_PIECES ? KPOOL_PIECES : k;
}

/* Runs piece j of range i's k */
static void run_piece(const struct kpool *p, int i, int j, int k)
{
	int u0, u1, r0, r1;

	units_of(p, i, &u0, &u1);
	r0 = (u0 + (int)((long)(u1 - u0) * j / k)) * p->align;
	r1 = (u0 + (int)((long)(u1 - u0) * (j + 1) / k)) * p->align;
	if (r1 > p->rows)
		r1 = p->rows;
	if (r0 < r1)
		p->fn(p->ctx, r0, r1);
}

/* The word of a range's next piece: its generation's low 32 bits, its
 * pieces, the next of them. A thread reads a range's rows only once it
 * has taken one of its pieces, which keeps the generation from ending. */
#define NEXT_WORD(g, k, j) \
	((unsigned long long)((g) & 0xffffffffUL) << 32 | \
	 (unsigned long long)(k) << 16 | (unsigned long long)(j))

/* Takes and runs the pieces of generation g that are left, range `own`
 * first; counts them off `left` once at the end (a word both sides write
 * once a call, not once a piece), and whoever brings it to 0 signals
 * `done` */
static void take_pieces(struct kpool *p, unsigned long g, int own)
{
	const unsigned long long tag = NEXT_WORD(g, 0, 0);
	unsigned long did = 0;

	for (int d = 0; d < p->n; d++) {
		const int i = (own + d) % p->n;
		atomic_ullong *nx = &p->next[i].w;
		unsigned long long w = atomic_load_explicit(nx, memory_order_acquire);

		while ((w & ~0xffffffffULL) == tag &&
		       (w & 0xffff) < (w >> 16 & 0xffff)) {
			if (!atomic_compare_exchange_weak_explicit(
				    nx, &w, w + 1, memory_order_acq_rel,
				    memory_order_acquire))
				continue;
			run_piece(p, i, (int)(w & 0xffff), (int)(w >> 16 & 0xffff));
			did++;
			w = atomic_load_explicit(nx, memory_order_acquire);
		}
	}
	if (did && atomic_fetch_sub_explicit(&p->left, did,
					     memory_order_acq_rel) == did) {
		pthread_mutex_lock(&p->mu);
		pthread_cond_signal(&p->done);
		pthread_mutex_unlock(&p->mu);
	}
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Watches *v for up to KPOOL_SPIN_NS; whether (*v == val) came to be
 * `equal` (a new generation: gen != seen; the pieces done: left == 0). */
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
		pthread_mutex_unlock(&p->mu);
		take_pieces(p, seen, i);
		pthread_mutex_lock(&p->mu);
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
	p->next = xcalloc64((size_t)threads * sizeof(*p->next));
	for (int i = 0; i < threads; i++)
		atomic_init(&p->next[i].w, 0);
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
	free(p->next);
	free(p->th);
	free(p);
}

void kpool_run(struct kpool *p, void (*fn)(void *ctx, int r0, int r1),
	       void *ctx, int n, int align)
{
	unsigned long g, total = 0;

	if (!p || p->n == 1) {
		fn(ctx, 0, n);
		return;
	}
	pthread_mutex_lock(&p->mu);
	p->fn = fn;
	p->ctx = ctx;
	p->rows = n;
	p->align = align;
	g = p->gen + 1;
	for (int i = 0; i < p->n; i++) {
		int u0, u1, k;

		units_of(p, i, &u0, &u1);
		k = pieces_of(u1 - u0);
		total += (unsigned long)k;
		atomic_store_explicit(&p->next[i].w, NEXT_WORD(g, k, 0),
				      memory_order_release);
	}
	atomic_store_explicit(&p->left, total, memory_order_release);
	p->gen = g;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	take_pieces(p, g, 0);
	if (spin_until(&p->left, 0, true))
		return;
	pthread_mutex_lock(&p->mu);
	while (atomic_load_explicit(&p->left, memory_order_acquire) > 0)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

int kpool_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
}
