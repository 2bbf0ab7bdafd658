/* rate.h: a Poisson group's request rate, constant or piecewise constant
 * over time (a rate table over the day, repeating with a period), times a
 * scale; the next arrival of the non-homogeneous Poisson process it makes.
 * Config: "rate_per_s": X, or {"at_s": [0, ...], "per_s": [...],
 * "period_s": P}; "rate_scale": S (docs/config.md). */
#ifndef HS_RATE_H
#define HS_RATE_H

#include <gsl/gsl_rng.h>
#include <stddef.h>

#include "jx.h"

/* A rate a second is 0 or in [RATE_MIN_PER_S, RATE_MAX_PER_S] (one a
 * 31.7 years to a billion a second), and so is a scale: below, the gaps
 * between arrivals would be infinite and no request would come */
#define RATE_MIN_PER_S 1e-9
#define RATE_MAX_PER_S 1e9
#define RATE_RANGE \
	((struct jx_range){ RATE_MIN_PER_S, RATE_MAX_PER_S, false, false })

/* A segment of a table lasts at least RATE_SEGMENT_MIN_S (a period's last
 * too), and a period at most RATE_PERIOD_MAX_S: a time within the
 * simulator's bound then finds its segment exactly */
#define RATE_SEGMENT_MIN_S 1e-3
#define RATE_PERIOD_MAX_S 1e9

struct rate_table {
	size_t n;          /* segments */
	double *at_s;      /* (n) owned: each one's start, at_s[0] = 0,
			      increasing */
	double *per_s;     /* (n) owned: its rate of one tenant, >= 0 */
	double period_s;   /* the table repeats with it; 0: the last rate
			      holds for ever */
	double scale;      /* every rate times it */
};

/* obj's "rate_per_s" (required) and "rate_scale" (default 1), as the
 * header says. 0, or -1 with x's error (pointer, expected, got). */
int rate_read(struct jx *x, json_t *obj, const char *ptr,
	      struct rate_table *out);
void rate_release(struct rate_table *r);

/* The mean rate of one tenant: over a period, over the table's span when
 * the last rate is 0, else the last rate (what lasts). */
double rate_mean(const struct rate_table *r);

/* Where the rate falls to 0 for ever (no period, the table ending in 0s:
 * the first of them), or INFINITY where it never does */
double rate_zero_from_s(const struct rate_table *r);
/* The arrivals one tenant can expect from from_s to rate_zero_from_s
 * (INFINITY where the rate never falls to 0 for ever) */
double rate_arrivals_bound(const struct rate_table *r, double from_s);

/* The first arrival after now_s (INFINITY: none, the rate 0 for ever),
 * drawn from g: an exponential gap at each segment's rate, restarted at
 * its end (the process is memoryless); past a whole period without one,
 * the periods' arrivals skipped at once. A constant rate draws exactly
 * one exponential. */
double rate_next_s(const struct rate_table *r, double now_s, gsl_rng *g);

#endif
