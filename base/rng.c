/* rng.c: xoshiro256++ as a GSL generator type, and stream seeding.
 *
 * State: four 64-bit words, never all zero (splitmix64 of any seed gives a
 * non-zero word first). get returns the top 32 bits (max 2^32 - 1, which every
 * gsl_ran_* function accepts); get_double uses the top 53 bits. The seed of a
 * stream is splitmix64(run_seed) xor splitmix64(~stream_id): distinct pairs
 * give distinct seeds except with probability about 2^-64. */
#include "rng.h"

#include "err.h"

#include <stdarg.h>
#include <stdio.h>

struct xoshiro {
	uint64_t s[4]; /* as struct rng_stream's state */
};

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t next64(struct xoshiro *x)
{
	uint64_t *s = x->s;
	uint64_t r = rotl(s[0] + s[3], 23) + s[0];
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

static void xo_set(void *state, unsigned long seed)
{
	struct xoshiro *x = state;
	uint64_t sm = seed;

	for (int i = 0; i < 4; i++)
		x->s[i] = rng_splitmix64(&sm);
}

static unsigned long xo_get(void *state)
{
	return (unsigned long)(next64(state) >> 32);
}

static double xo_get_double(void *state)
{
	return (double)(next64(state) >> 11) * 0x1.0p-53;
}

static const gsl_rng_type xoshiro_type = {
	"xoshiro256++", 0xffffffffUL, 0, sizeof(struct xoshiro),
	xo_set, xo_get, xo_get_double,
};

const gsl_rng_type *rng_xoshiro256pp = &xoshiro_type;

uint64_t rng_stream_id(const char *fmt, ...)
{
	char name[512];
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * UINT64_C(0x100000001b3);
	return h;
}

static unsigned long stream_seed(uint64_t run_seed, uint64_t stream_id)
{
	_Static_assert(sizeof(unsigned long) == 8, "64-bit seeds need LP64");
	uint64_t a = run_seed, b = ~stream_id;

	return (unsigned long)(rng_splitmix64(&a) ^ rng_splitmix64(&b));
}

gsl_rng *rng_new(uint64_t run_seed, uint64_t stream_id)
{
	gsl_rng *r = gsl_rng_alloc(rng_xoshiro256pp);

	if (!r)
		hs_abort(__FILE__, __LINE__, "out of memory");
	gsl_rng_set(r, stream_seed(run_seed, stream_id));
	return r;
}

gsl_rng *rng_stream_init(struct rng_stream *st, uint64_t run_seed,
			 uint64_t stream_id)
{
	_Static_assert(sizeof(st->state) == sizeof(struct xoshiro),
		       "a stream holds a xoshiro256++ state");
	st->gen = (gsl_rng){ .type = rng_xoshiro256pp, .state = st->state };
	gsl_rng_set(&st->gen, stream_seed(run_seed, stream_id));
	return &st->gen;
}

void rng_free(gsl_rng *r)
{
	gsl_rng_free(r);
}
