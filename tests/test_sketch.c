/* test_sketch.c: quantiles within the stated relative error. */
#include "harness.h"

#include "rng.h"
#include "sketch.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Every quantile is within SK_REL_ERR of the exact order statistic, for
 * values spread over ten decades, with zeros mixed in. */
static void quantiles_within_bound(void)
{
	enum { N = 200000 };
	static const double qs[] = { 0, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99,
				     0.999, 1 };
	gsl_rng *r = rng_new(5, rng_stream_id("test/sketch"));
	double *v = malloc(N * sizeof(double));
	struct sketch s, a, b;
	double sum = 0;

	sk_init(&s);
	sk_init(&a);
	sk_init(&b);
	for (int i = 0; i < N; i++) {
		double u = gsl_rng_uniform(r);

		v[i] = u < 0.2 ? 0 : exp(gsl_ran_gaussian(r, 3.0) - 5);
		sum += v[i];
		sk_add(&s, v[i]);
		sk_add(i % 2 ? &a : &b, v[i]);
	}
	sk_merge(&a, &b);
	qsort(v, N, sizeof(double), cmp);
	for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		/* nearest rank: ceil(q N), 1-based (the least for q = 0) */
		double exact = v[qs[k] > 0 ? (size_t)ceil(qs[k] * N) - 1 : 0];

		CHECK_MSG(fabs(sk_quantile(&s, qs[k]) - exact) <=
				  SK_REL_ERR * exact,
			  "q %.3f: %.9g, exact %.9g", qs[k],
			  sk_quantile(&s, qs[k]), exact);
		CHECK(sk_quantile(&a, qs[k]) == sk_quantile(&s, qs[k]));
	}
	CHECK_NEAR(sk_mean(&s), sum / N, 1e-9 * sum / N);
	CHECK(s.n == N && a.n == N);
	sk_reset(&s);
	CHECK(s.n == 0 && sk_quantile(&s, 0.5) == 0);
	sk_add(&s, 3.0);
	CHECK_NEAR(sk_quantile(&s, 0.5), 3.0, 3.0 * SK_REL_ERR);
	sk_release(&s);
	sk_release(&a);
	sk_release(&b);
	free(v);
	rng_free(r);
}

/* Zeros added at once count as the same zeros added one by one. */
static void zeros_at_once(void)
{
	static const double vals[] = { 0.5, 0, 2, 0, 0, 7 };
	static const uint64_t runs[] = { 3, 0, 1, 5, 2, 0 };
	struct sketch one, many;

	sk_init(&one);
	sk_init(&many);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		sk_add(&one, vals[i]);
		sk_add(&many, vals[i]);
		for (uint64_t k = 0; k < runs[i]; k++)
			sk_add(&one, 0);
		sk_add_zeros(&many, runs[i]);
	}
	CHECK(one.n == many.n && one.zeros == many.zeros && many.zeros == 14);
	CHECK(one.min == many.min && one.max == many.max &&
	      one.sum == many.sum);
	for (double q = 0; q <= 1; q += 0.05)
		CHECK_MSG(sk_quantile(&one, q) == sk_quantile(&many, q),
			  "q %.2f: %.9g one by one, %.9g at once", q,
			  sk_quantile(&one, q), sk_quantile(&many, q));
	sk_release(&one);
	sk_release(&many);
}

/* A few values kept as they are answer as their buckets would: the same
 * values in a sketch that counts in buckets (one reset after it had many)
 * give the same quantiles, and so does a merge of small and counted ones. */
static void small_answers_as_buckets(void)
{
	gsl_rng *r = rng_new(6, rng_stream_id("test/sketch/small"));

	for (uint32_t m = 1; m <= 2 * SK_SMALL + 2; m++) {
		struct sketch small, counted, merged, half;
		size_t bad = 0;

		sk_init(&small);
		sk_init(&counted);
		sk_init(&merged);
		sk_init(&half);
		for (uint32_t k = 0; k <= SK_SMALL; k++)
			sk_add(&counted, 1.0 + k);
		sk_reset(&counted); /* counts in buckets from now on */
		for (uint32_t k = 0; k < m; k++) {
			double v = k % 5 == 0 ? 0 : exp(gsl_ran_gaussian(r, 4));

			sk_add(&small, v);
			sk_add(&counted, v);
			sk_add(k % 2 ? &merged : &half, v);
		}
		sk_merge(&merged, &half);
		CHECK(m > SK_SMALL || small.count == NULL);
		for (double q = 0; q <= 1.0001; q += 0.01)
			bad += sk_quantile(&small, q) != sk_quantile(&counted, q) ||
			       sk_quantile(&merged, q) != sk_quantile(&counted, q);
		CHECK_MSG(bad == 0, "%zu of 101 quantiles differ at %u values",
			  bad, m);
		sk_release(&small);
		sk_release(&counted);
		sk_release(&merged);
		sk_release(&half);
	}
	rng_free(r);
}

/* The value of nearest rank ceil(q n) among the sorted v (n >= 1) */
static double nearest_rank(const double *v, size_t n, double q)
{
	double k = ceil(q * (double)n * (1 - 1e-12));

	return v[k < 1 ? 0 : (size_t)k - 1];
}

/* An exact sketch answers the order statistics themselves: 300 values
 * within 0.3% of each other (a paper run's TTFTs, which buckets 2% wide
 * answered with one value, below their mean), ties, zeros and values over
 * decades; split in two and merged, the same; merged into a sketch that
 * counts in buckets, within its bound. */
static void exact_answers_exactly(void)
{
	gsl_rng *r = rng_new(7, rng_stream_id("test/sketch/exact"));
	static const size_t sizes[] = { 1, 2, 17, 300, 5000 };

	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		size_t n = sizes[z], bad = 0;
		double *v = malloc(n * sizeof(double));
		struct sketch s, a, b, c;

		sk_init_exact(&s);
		sk_init_exact(&a);
		sk_init_exact(&b);
		sk_init(&c);
		for (size_t k = 0; k <= SK_SMALL; k++)
			sk_add(&c, 1.0 + (double)k);
		sk_reset(&c); /* counts in buckets from now on */
		for (size_t i = 0; i < n; i++) {
			v[i] = z == 3 ? 21.67 + 0.06 * gsl_rng_uniform(r)
			       : i % 7 == 0 ? 0 : i % 5 == 0 ? 2.5
			       : exp(gsl_ran_gaussian(r, 3));
			sk_add(&s, v[i]);
			sk_add(i % 2 ? &a : &b, v[i]);
			sk_add(&c, v[i]);
		}
		sk_merge(&a, &b);
		qsort(v, n, sizeof(double), cmp);
		for (double q = 0; q <= 1.0001; q += 0.005) {
			double want = nearest_rank(v, n, q > 1 ? 1 : q);

			bad += sk_quantile(&s, q) != want ||
			       sk_quantile(&a, q) != want ||
			       !(fabs(sk_quantile(&c, q) - want) <=
				 SK_REL_ERR * want);
		}
		CHECK_MSG(bad == 0, "%zu of 201 quantiles of %zu values wrong",
			  bad, n);
		if (z == 3)
			CHECK(sk_quantile(&s, 0.99) >= sk_mean(&s));
		sk_release(&s);
		sk_release(&a);
		sk_release(&b);
		sk_release(&c);
		free(v);
	}
	rng_free(r);
}

const struct tcase sketch_tests[] = {
	{ "sketch: quantiles within the relative error bound",
	  quantiles_within_bound },
	{ "sketch: zeros added at once count as one by one", zeros_at_once },
	{ "sketch: a few values kept exactly answer as their buckets",
	  small_answers_as_buckets },
	{ "sketch: an exact sketch answers the order statistics",
	  exact_answers_exactly },
	{ 0 },
};
