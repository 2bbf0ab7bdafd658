/* pool.h: a fixed set of worker threads that split a range of rows. */
#ifndef HS_POOL_H
#define HS_POOL_H

struct kpool;

/* threads >= 1 (the caller is one of them); each worker first calls
 * thread_init (NULL: none), to set up what the callers' threads have (kern.h's
 * kern_pool_new passes the denormal flush). Caller frees with kpool_free. */
struct kpool *kpool_new(int threads, void (*thread_init)(void));
void kpool_free(struct kpool *p);
/* The CPUs online, at least 1 and at most 4096 */
int kpool_cpus(void);

/* Calls fn(ctx, r0, r1) on disjoint ranges covering [0, n) (rows in
 * multiples of align, the last range excepted), on every thread, and
 * returns when all are done: a thread's share of the rows, in up to four
 * pieces that a thread done with its own may take over (pool.c). p may
 * be NULL: one thread. */
void kpool_run(struct kpool *p, void (*fn)(void *ctx, int r0, int r1),
	       void *ctx, int n, int align);

#endif
