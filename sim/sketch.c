/* sketch.c: counts in buckets of a cheap logarithm.
 *
 * L(v) = e + f for v = 2^e (1 + f), 0 <= f < 1 (read off the bits of the
 * double), is increasing and its slope against log2 v lies in [ln 2, 2 ln 2).
 * Bucket i holds the values with floor(L(v) / w) = i, w = ln g and
 * g = (1 + a) / (1 - a), a = SK_REL_ERR: a bucket then spans at most a
 * factor e^w = g, and answering 2 lo hi / (lo + hi) for it is within a of
 * every value in it (DDSketch's linearly interpolated mapping). count[] is
 * dense between the least and greatest index seen. Until a sketch holds
 * more than SK_SMALL non-zero values (an exact one SK_EXACT_MAX) it keeps
 * them in small[] instead (no count[]), and a quantile picks the order
 * statistic among them and answers its bucket's value, the same answer as
 * from the counts (an exact sketch: the value). After that a
 * value's bucket index goes to pend[] first, and the SK_PEND there go into
 * count[] at once; a quantile counts pend[] as if it were in count[]. So
 * every answer is the one without pend[]. */
#include "sketch.h"

#include "err.h"
#include "mem.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static double width(void)
{
	static double w;

	if (w == 0)
		w = log((1 + SK_REL_ERR) / (1 - SK_REL_ERR));
	return w;
}

static double approx_log2(double v)
{
	uint64_t b;

	memcpy(&b, &v, sizeof(b));
	return (double)((int)(b >> 52) - 1023) +
	       (double)(b & ((UINT64_C(1) << 52) - 1)) * 0x1p-52;
}

static double inverse(double l)
{
	double e = floor(l);

	return ldexp(1 + (l - e), (int)e);
}

void sk_init(struct sketch *s)
{
	*s = (struct sketch){ .min = INFINITY, .max = -INFINITY };
}

void sk_init_exact(struct sketch *s)
{
	sk_init(s);
	s->exact = true;
}

void sk_release(struct sketch *s)
{
	free(s->count);
	free(s->small);
	sk_init(s);
}

/* Keeps the memory, and counts in buckets if it did. */
void sk_reset(struct sketch *s)
{
	uint32_t *c = s->count;
	double *small = s->small;
	uint32_t nb = s->n_buckets, cap = s->cap_small;
	int32_t lo = s->lo;
	bool exact = s->exact;

	if (c)
		memset(c, 0, nb * sizeof(*c));
	sk_init(s);
	s->count = c;
	s->small = small;
	s->cap_small = cap;
	s->n_buckets = nb;
	s->lo = lo;
	s->exact = exact;
}

/* The bucket of v > 0: floor(L(v) / w), |L(v) / w| < 2^17, by truncation,
 * one less below zero. */
static int32_t bucket_of(double v)
{
	double l = approx_log2(v) / width();
	int32_t i = (int32_t)l;

	return i - ((double)i > l);
}

static inline bool covered(const struct sketch *s, int32_t i)
{
	return s->count && i >= s->lo && i < s->lo + (int32_t)s->n_buckets;
}

/* Makes bucket index i addressable. */
static void cover(struct sketch *s, int32_t i)
{
	int32_t lo, hi;
	uint32_t nb;
	uint32_t *c;

	if (covered(s, i))
		return;
	if (!s->count) {
		lo = i - 8;
		hi = i + 8;
	} else {
		lo = i < s->lo ? i - 16 : s->lo;
		hi = i >= s->lo + (int32_t)s->n_buckets
			     ? i + 16 : s->lo + (int32_t)s->n_buckets;
	}
	nb = (uint32_t)(hi - lo);
	c = xcalloc(nb, sizeof(*c));
	if (s->count)
		memcpy(c + (s->lo - lo), s->count, s->n_buckets * sizeof(*c));
	free(s->count);
	s->count = c;
	s->lo = lo;
	s->n_buckets = nb;
}

/* Counts one value in bucket index i, count[] made to cover it. */
static void count_index(struct sketch *s, int32_t i)
{
	if (!covered(s, i))
		cover(s, i);
	s->count[i - s->lo]++;
}

/* Moves the small values to buckets, for good. */
static void to_buckets(struct sketch *s)
{
	for (uint32_t k = 0; k < s->n_small; k++)
		count_index(s, bucket_of(s->small[k]));
	free(s->small);
	s->small = NULL;
	s->n_small = s->cap_small = 0;
}

/* Moves pend[] into count[] (out of line: once in SK_PEND values). */
static __attribute__((noinline)) void count_pending(struct sketch *s)
{
	for (uint32_t k = 0; k < s->n_pend; k++)
		count_index(s, s->pend[k]);
	s->n_pend = 0;
}

/* Counts v > 0 while count[] is NULL: in small[] (grown by doubling from
 * SK_SMALL), or in buckets from the one past its bound on. */
static __attribute__((noinline)) void count_small(struct sketch *s, double v)
{
	if (s->n_small < (s->exact ? SK_EXACT_MAX : SK_SMALL)) {
		if (s->n_small == s->cap_small) {
			s->cap_small = s->cap_small ? 2 * s->cap_small : SK_SMALL;
			s->small = xrealloc(s->small, s->cap_small *
							      sizeof(*s->small));
		}
		s->small[s->n_small++] = v;
		return;
	}
	to_buckets(s);
	s->pend[s->n_pend++] = bucket_of(v);
}

/* Counts v > 0 (n, sum, min and max are the caller's). */
static inline __attribute__((always_inline)) void
count_value(struct sketch *s, double v)
{
	if (!s->count) {
		count_small(s, v);
		return;
	}
	s->pend[s->n_pend++] = bucket_of(v);
	if (s->n_pend == SK_PEND)
		count_pending(s);
}

void sk_add(struct sketch *s, double v)
{
	HS_ASSERT(v >= 0 && v < INFINITY);
	s->n++;
	s->sum += v;
	s->min = v < s->min ? v : s->min;
	s->max = v > s->max ? v : s->max;
	if (v == 0)
		s->zeros++;
	else
		count_value(s, v);
}

void sk_merge(struct sketch *into, const struct sketch *from)
{
	if (from->n == 0)
		return;
	into->n += from->n;
	into->zeros += from->zeros;
	into->sum += from->sum;
	into->min = from->min < into->min ? from->min : into->min;
	into->max = from->max > into->max ? from->max : into->max;
	for (uint32_t k = 0; k < from->n_small; k++)
		count_value(into, from->small[k]);
	for (uint32_t k = 0; k < from->n_buckets; k++) {
		if (!from->count[k])
			continue;
		if (!into->count)
			to_buckets(into);
		cover(into, from->lo + (int32_t)k);
		into->count[from->lo + (int32_t)k - into->lo] += from->count[k];
	}
	for (uint32_t k = 0; k < from->n_pend; k++) {
		if (!into->count)
			to_buckets(into);
		count_index(into, from->pend[k]);
	}
}

/* What a quantile in bucket i answers: within SK_REL_ERR of every value in
 * it, and never outside what was seen. */
static double bucket_value(const struct sketch *s, int32_t k)
{
	double i = k;
	double lo = inverse(i * width()), hi = inverse((i + 1) * width());
	double v = 2 * lo * hi / (lo + hi);

	return v < s->min ? s->min : v > s->max ? s->max : v;
}

static int cmp_index(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* The bucket of the non-zero value of rank r (0-based, r below their
 * number) among count[] and pend[]: a walk over the buckets that takes
 * pend[], sorted, in its place. */
static int32_t rank_bucket(const struct sketch *s, uint64_t r)
{
	int32_t p[SK_PEND];
	uint32_t m = s->n_pend, j = 0;
	uint64_t seen = 0;

	memcpy(p, s->pend, m * sizeof(*p));
	qsort(p, m, sizeof(*p), cmp_index);
	for (uint32_t k = 0; k < s->n_buckets; k++) {
		int32_t i = s->lo + (int32_t)k;

		for (; j < m && p[j] < i; j++)
			if (++seen > r)
				return p[j];
		seen += s->count[k];
		for (; j < m && p[j] == i; j++)
			seen++;
		if (seen > r)
			return i;
	}
	HS_ASSERT(j < m && r - seen < m - j);
	return p[j + (r - seen)];
}

/* The value of rank r (0-based, r < n) among v, v unchanged: a copy
 * partitioned about its median of three until the rank's place holds it
 * (Hoare's selection; expected linear time) */
static double select_rank(const double *v, uint32_t n, uint64_t r)
{
	double *w = xmalloc(n * sizeof(*w)), x;
	uint32_t lo = 0, hi = n - 1;

	memcpy(w, v, n * sizeof(*w));
	while (lo < hi) {
		double a = w[lo], b = w[lo + (hi - lo) / 2], c = w[hi];
		double p = a < b ? (b < c ? b : a < c ? c : a)
				 : (a < c ? a : b < c ? c : b);
		uint32_t i = lo, j = hi;

		for (;;) { /* w[lo..i) <= p, w(j..hi] >= p */
			while (w[i] < p)
				i++;
			while (w[j] > p)
				j--;
			if (i >= j)
				break;
			x = w[i];
			w[i++] = w[j];
			w[j--] = x;
		}
		/* [lo, j] <= p <= [j + 1, hi] */
		if (r <= j)
			hi = j;
		else
			lo = j + 1;
	}
	x = w[lo];
	free(w);
	return x;
}

double sk_quantile(const struct sketch *s, double q)
{
	uint64_t rank;
	double k;

	if (s->n == 0)
		return 0;
	/* nearest rank: ceil(q n), 1-based (a hair below q n first: q = 0.99
	 * of 100 values is rank 99, not 100, whatever the last bit of q) */
	k = ceil(q * (double)s->n * (1 - 1e-12));
	rank = k < 1 ? 0 : (uint64_t)k - 1;
	if (rank < s->zeros)
		return 0;
	if (!s->count) { /* the order statistic among the small values */
		double x = select_rank(s->small, s->n_small, rank - s->zeros);

		return s->exact ? x : bucket_value(s, bucket_of(x));
	}
	return bucket_value(s, rank_bucket(s, rank - s->zeros));
}

double sk_mean(const struct sketch *s)
{
	return s->n ? s->sum / (double)s->n : 0;
}
