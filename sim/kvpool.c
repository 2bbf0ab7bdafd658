/* kvpool.c: block counts of a paged KV cache (kvpool.h).
 *
 * Invariant: 0 <= used <= blocks, used is the sum of the sequences' held
 * counts, and peak >= used. */
#include "kvpool.h"

#include "err.h"

void kvpool_init(struct kvpool *p, int64_t blocks, int64_t block_tokens)
{
	HS_ASSERT(blocks >= 0 && block_tokens >= 1);
	*p = (struct kvpool){ .blocks = blocks, .block_tokens = block_tokens };
}

int64_t kvpool_blocks_of(const struct kvpool *p, int64_t tokens)
{
	return (tokens + p->block_tokens - 1) / p->block_tokens;
}

bool kvpool_fits(const struct kvpool *p, int64_t n, int64_t keep_free)
{
	return p->used + n + keep_free <= p->blocks;
}

bool kvpool_holds(const struct kvpool *p, int64_t n, int64_t keep_free)
{
	return n + keep_free <= p->blocks;
}

void kvpool_take(struct kvpool *p, int32_t *held, int64_t n)
{
	*held += (int32_t)n;
	p->used += n;
	if (p->used > p->peak)
		p->peak = p->used;
}

void kvpool_free(struct kvpool *p, int32_t *held)
{
	p->used -= *held;
	*held = 0;
}

void kvpool_trim(struct kvpool *p, int32_t *held, int64_t tokens)
{
	int64_t keep = kvpool_blocks_of(p, tokens);

	if (*held > keep) {
		p->used -= *held - keep;
		*held = (int32_t)keep;
	}
}

bool kvpool_grow(struct kvpool *p, int32_t *held, int64_t tokens,
		 bool (*preempt)(void *ctx), void *ctx)
{
	int64_t want = kvpool_blocks_of(p, tokens) - *held;

	if (want <= 0)
		return true;
	while (!kvpool_fits(p, want, 0))
		if (preempt(ctx))
			return false;
	kvpool_take(p, held, want);
	return true;
}
