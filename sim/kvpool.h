/* kvpool.h: a paged KV cache counted in blocks, as vLLM counts it.
 *
 * A pool of `blocks` blocks of `block_tokens` tokens; sequences hold whole
 * blocks (each its own count, `held`), `used` in all, `peak` the most ever
 * held at once. The simulator's replicas and the real verifier keep one
 * each: the block arithmetic is here once, while who is preempted, and
 * what that does to a request, stays theirs. */
#ifndef HS_KVPOOL_H
#define HS_KVPOOL_H

#include <stdbool.h>
#include <stdint.h>

struct kvpool {
	int64_t blocks, block_tokens; /* the pool */
	int64_t used, peak;           /* blocks held now, and at most */
};

/* An empty pool of blocks blocks of block_tokens (>= 1) tokens. */
void kvpool_init(struct kvpool *p, int64_t blocks, int64_t block_tokens);

/* The blocks tokens tokens fill. */
int64_t kvpool_blocks_of(const struct kvpool *p, int64_t tokens);

/* Whether n more blocks fit with keep_free (a watermark) still free; and
 * whether they would in the pool empty. */
bool kvpool_fits(const struct kvpool *p, int64_t n, int64_t keep_free);
bool kvpool_holds(const struct kvpool *p, int64_t n, int64_t keep_free);

/* A sequence holding *held blocks takes n more; gives all of them back;
 * keeps only the blocks of tokens tokens (never takes more). */
void kvpool_take(struct kvpool *p, int32_t *held, int64_t n);
void kvpool_free(struct kvpool *p, int32_t *held);
void kvpool_trim(struct kvpool *p, int32_t *held, int64_t tokens);

/* Blocks for a sequence holding *held to hold tokens. While the pool is
 * short, preempt(ctx) frees another sequence's blocks (kvpool_free), or
 * this one's, and says which: true for this one, and then grow returns
 * false having taken nothing (vLLM's recompute preemption). */
bool kvpool_grow(struct kvpool *p, int32_t *held, int64_t tokens,
		 bool (*preempt)(void *ctx), void *ctx);

#endif
