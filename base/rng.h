/* rng.h: independent random streams.
 *
 * Every random source (a tenant's RTT, its request lengths, its acceptance
 * bits, ...) owns one GSL generator seeded from (run seed, stream id). The
 * stream id is a hash of a stable name such as "phones/3/rtt", so adding a
 * tenant or a group never changes the numbers another stream draws, and the
 * same seed always gives the same numbers. */
#ifndef HS_RNG_H
#define HS_RNG_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

/* The generator type behind every stream: xoshiro256++ with a 64-bit seed
 * (GSL's own generators take 32 bits, too few for 10^5 tenants × streams). */
extern const gsl_rng_type *rng_xoshiro256pp;

#define RNG_SPLITMIX_STEP UINT64_C(0x9e3779b97f4a7c15)

/* splitmix64: the next of a cheap 64-bit sequence from *x (which it
 * advances); the seeder of every stream, and filler where statistical
 * quality does not matter (synthetic weights: inline, a draw a weight). */
static inline uint64_t rng_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += RNG_SPLITMIX_STEP);

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* The state n calls of rng_splitmix64 leave from state x, at once: a
 * sequence drawn in pieces, each from its own start, is the one drawn in
 * turn. */
static inline uint64_t rng_splitmix64_skip(uint64_t x, uint64_t n)
{
	return x + n * RNG_SPLITMIX_STEP;
}

/* A stream id from a stable name (64-bit FNV-1a), formatted printf-style. */
uint64_t rng_stream_id(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* A new generator for (run_seed, stream_id). Caller frees with rng_free. */
gsl_rng *rng_new(uint64_t run_seed, uint64_t stream_id);
void rng_free(gsl_rng *r);

/* A stream kept in place: the generator and its state in one block, for a
 * caller holding many streams beside the rest of their owner's state (one
 * place for the cache, no allocation, nothing to free). The generator
 * points into the block, so the block must not move once initialised. */
struct rng_stream {
	gsl_rng gen;          /* gen.state == state */
	uint64_t state[4];    /* xoshiro256++ */
};

/* Seeds *st for (run_seed, stream_id), the numbers rng_new's generator
 * draws; returns its generator (*st's). */
gsl_rng *rng_stream_init(struct rng_stream *st, uint64_t run_seed,
			 uint64_t stream_id);

#endif
