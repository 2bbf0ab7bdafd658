/* sketch.h: quantiles of positive values with a bounded relative error.
 *
 * Values are counted in logarithmic buckets (as in DDSketch): a quantile is
 * returned with relative error at most SK_REL_ERR, whatever the number of
 * values; zeros (the gaps between tokens committed together) are counted
 * exactly apart. Memory grows with the span of the values, not their count:
 * about 230 buckets per decade (4 bytes each); the first SK_SMALL non-zero
 * values are kept as they are (a tenant's few TTFTs take 128 bytes, not a
 * bucket for every 2% between the least and the greatest), and answer as
 * their buckets would. An exact sketch (a request's TTFT and TPOT: one
 * value a request) keeps up to SK_EXACT_MAX as they are and answers with
 * them: values closer than SK_REL_ERR share a bucket, and a planner reads
 * a p99 below the mean of 300 TTFTs within 0.3% of each other as wrong,
 * which 8 bytes a request avoids. Past them, the buckets of the last few
 * values wait inside the sketch and are counted SK_PEND at a time: count[]
 * lies apart from its owner and misses the cache, and a tenant's values
 * bunch in a line or two of it. */
#ifndef HS_SKETCH_H
#define HS_SKETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SK_REL_ERR 0.01
#define SK_SMALL 16
#define SK_PEND 6
/* An exact sketch keeps up to this many non-zero values (32 MB) */
#define SK_EXACT_MAX (UINT32_C(1) << 22)

struct sketch {
	uint32_t *count;  /* (n_buckets) owned; bucket i is index lo + i;
			     NULL while the values are small's */
	double *small;    /* (cap_small) owned: the non-zero values, n_small
			     of them, until there are more than SK_SMALL (an
			     exact sketch's: SK_EXACT_MAX); then NULL */
	bool exact;       /* quantiles are the values' own while small[]
			     holds them all */
	int32_t lo;       /* index of count[0] */
	uint32_t n_buckets, n_small, cap_small, n_pend;
	int32_t pend[SK_PEND]; /* bucket indices of values counted but not
				  in count[] yet, n_pend of them (only
				  once count[] exists) */
	uint64_t n, zeros;
	double sum, min, max;
};

void sk_init(struct sketch *s);
/* An exact sketch: up to SK_EXACT_MAX non-zero values (merged ones too)
 * its quantiles are the order statistics themselves, past them the
 * buckets' (a sketch merged into one that counts in buckets counts so). */
void sk_init_exact(struct sketch *s);
void sk_release(struct sketch *s);
void sk_reset(struct sketch *s);   /* empties it, keeps the memory */
void sk_add(struct sketch *s, double v); /* v >= 0 */
/* n values of 0 at once */
static inline void sk_add_zeros(struct sketch *s, uint64_t n)
{
	if (n == 0)
		return;
	s->n += n;
	s->zeros += n;
	s->min = 0 < s->min ? 0 : s->min;
	s->max = 0 > s->max ? 0 : s->max;
}
void sk_merge(struct sketch *into, const struct sketch *from);

/* The q-quantile (q in [0, 1]) by nearest rank, the value of rank
 * ceil(q n) (1-based; the least for q = 0): the smallest value with a
 * share q of the values at or below it, so that a p99 of fewer than 100
 * values is their largest. That order statistic itself from an exact
 * sketch that holds its values, else within SK_REL_ERR of it; 0 when
 * empty. */
double sk_quantile(const struct sketch *s, double q);
double sk_mean(const struct sketch *s);

#endif
