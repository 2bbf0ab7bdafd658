/* rate.c: piecewise-constant rates (rate.h). The table holds segments in
 * order of their start; a time past the period wraps into it, so the
 * segment of t is the last whose start is at or before t mod period. */
#include "rate.h"
#include "mem.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>

int rate_read(struct jx *x, json_t *obj, const char *ptr,
	      struct rate_table *out)
{
	static const char *const keys[] = { "at_s", "per_s", "period_s", NULL };
	json_t *v = json_object_get(obj, "rate_per_s");
	char p[JX_PTR_MAX];
	size_t n = 0;
	bool any = false;

	*out = (struct rate_table){ .scale = 1 };
	if (jx_num(x, obj, ptr, "rate_scale", RATE_RANGE, 1, &out->scale) < 0)
		return -1;
	if (!json_is_object(v)) {
		out->n = 1;
		out->at_s = xcalloc(1, sizeof(double));
		out->per_s = xcalloc(1, sizeof(double));
		return jx_num(x, obj, ptr, "rate_per_s", RATE_RANGE, JX_REQUIRED,
			      out->per_s);
	}
	jx_child(p, ptr, "rate_per_s");
	if (jx_object(x, v, p, keys) < 0 ||
	    jx_nums(x, v, p, "at_s", JX_NONNEG, 1, &out->at_s, &out->n) < 0 ||
	    jx_nums(x, v, p, "per_s", JX_NONNEG, -1, &out->per_s, &n) < 0 ||
	    jx_num(x, v, p, "period_s", JX_NONNEG, 0, &out->period_s) < 0) {
		rate_release(out);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		any |= out->per_s[i] > 0;
		if (out->per_s[i] > 0 && !jx_in_range(out->per_s[i], RATE_RANGE)) {
			char q[JX_PTR_MAX + 32], rs[64], want[96];

			snprintf(q, sizeof(q), "%s/per_s/%zu", p, i);
			snprintf(want, sizeof(want), "a rate of 0 or %s",
				 jx_range_str(rs, RATE_RANGE));
			rate_release(out);
			return jx_fail(x, q, want,
				       json_array_get(json_object_get(v, "per_s"), i));
		}
	}
	for (size_t i = 1; i < out->n; i++)
		if (!(out->at_s[i] - out->at_s[i - 1] >= RATE_SEGMENT_MIN_S)) {
			char q[JX_PTR_MAX + 32], want[96];

			snprintf(q, sizeof(q), "%s/at_s/%zu", p, i);
			snprintf(want, sizeof(want), "a time at least %g s past "
				 "the one before (%g s)", RATE_SEGMENT_MIN_S,
				 out->at_s[i - 1]);
			rate_release(out);
			return jx_fail(x, q, want,
				       json_array_get(json_object_get(v, "at_s"), i));
		}
	if (out->at_s[0] != 0 || n != out->n || !any ||
	    (out->period_s > 0 && !(out->period_s - out->at_s[out->n - 1] >=
				    RATE_SEGMENT_MIN_S)) ||
	    out->period_s > RATE_PERIOD_MAX_S) {
		const char *want = out->at_s[0] != 0 ? "at_s starting at 0"
			: n != out->n ? "as many per_s as at_s"
			: !any ? "a rate above 0 somewhere"
			: out->period_s > RATE_PERIOD_MAX_S
				? "a period_s of at most 1e+09 s"
				: "a period_s at least 0.001 s past the last at_s";

		rate_release(out);
		return jx_fail(x, p, want, v);
	}
	return 0;
}

void rate_release(struct rate_table *r)
{
	free(r->at_s);
	free(r->per_s);
	*r = (struct rate_table){ 0 };
}

double rate_mean(const struct rate_table *r)
{
	double sum = 0, span;

	if (r->period_s == 0 && r->per_s[r->n - 1] > 0)
		return r->scale * r->per_s[r->n - 1];
	/* segment i lasts to the next one's start, the last to the period's
	 * end (without a period the last is 0 here: it adds nothing) */
	span = r->period_s > 0 ? r->period_s : r->at_s[r->n - 1];
	for (size_t i = 0; i < r->n; i++) {
		double end = i + 1 < r->n ? r->at_s[i + 1] : span;

		sum += r->per_s[i] * (end - r->at_s[i]);
	}
	return span > 0 ? r->scale * sum / span : r->scale * r->per_s[0];
}

/* The first of the table's last run of 0 rates (n where it ends above 0) */
static size_t zero_tail(const struct rate_table *r)
{
	size_t k = r->n;

	while (k > 0 && r->per_s[k - 1] == 0)
		k--;
	return k;
}

double rate_zero_from_s(const struct rate_table *r)
{
	size_t k = zero_tail(r);

	return r->period_s > 0 || k == r->n ? INFINITY : r->at_s[k];
}

double rate_arrivals_bound(const struct rate_table *r, double from_s)
{
	const size_t k = zero_tail(r);
	double sum = 0;

	if (!isfinite(rate_zero_from_s(r)))
		return INFINITY;
	for (size_t i = 0; i < k; i++) {
		double lo = fmax(r->at_s[i], from_s), hi = r->at_s[i + 1];

		sum += hi > lo ? r->per_s[i] * (hi - lo) : 0;
	}
	return r->scale * sum;
}

/* The rate at t (scaled), and in *end where its segment ends, after t
 * (INFINITY: the last of a table without a period). The period's start
 * and the segments' ends are compared in absolute time, as the walks make
 * t of them: t set to an end rounded a hair short of it still moves on. */
static double rate_at(const struct rate_table *r, double t, double *end)
{
	const double p = r->period_s;
	double base = p > 0 ? p * floor(t / p) : 0;
	size_t k = 0;

	if (p > 0 && base > t)
		base -= p;
	if (p > 0 && base + p <= t)
		base += p;
	while (k + 1 < r->n && base + r->at_s[k + 1] <= t)
		k++;
	*end = k + 1 < r->n ? base + r->at_s[k + 1]
	       : p > 0 ? base + p : INFINITY;
	return r->scale * r->per_s[k];
}

/* The first arrival after t, a segment boundary a whole period past the
 * last arrival: a fresh unit exponential e (memoryless) less the whole
 * periods' arrivals it spans (lambda each), the rest spent segment by
 * segment; so a period of rare arrivals costs one step, not one a period. */
static double skip_periods(const struct rate_table *r, double t, gsl_rng *g)
{
	double lambda = rate_mean(r) * r->period_s; /* rate_mean: scaled */
	double e = gsl_ran_exponential(g, 1), m = floor(e / lambda);

	t += m * r->period_s;
	e = fmax(0, e - m * lambda);
	for (;;) {
		double end, rate = rate_at(r, t, &end), len = end - t;

		if (rate * len > e)
			return t + e / rate;
		e -= rate * len;
		t = end;
	}
}

double rate_next_s(const struct rate_table *r, double now_s, gsl_rng *g)
{
	double t = now_s, from = now_s;

	for (;;) {
		double end, rate = rate_at(r, t, &end);

		if (rate > 0) {
			double next = t + gsl_ran_exponential(g, 1 / rate);

			if (next < end)
				return next;
		}
		if (!isfinite(end))
			return INFINITY;
		t = end;
		if (r->period_s > 0 && t - from >= r->period_s)
			return skip_periods(r, t, g);
	}
}
