/* dist.h: probability distributions of times and sizes, read from JSON.
 *
 *   0.06                                      constant
 *   {"dist": "constant", "value": 0.06}
 *   {"dist": "uniform", "min": 0.04, "max": 0.08}
 *   {"dist": "exponential", "mean": 5}
 *   {"dist": "normal", "mean": 0.06, "sd": 0.01}      clamped to the range
 *   {"dist": "lognormal", "mean": 0.06, "sd": 0.015}  of the variable itself
 *   {"dist": "gamma", "mean": 0.06, "cv": 0.5}
 *   {"dist": "pareto", "xm": 0.05, "alpha": 2.5}      P(X > x) = (xm/x)^alpha
 *   {"dist": "empirical", "file": "rtt.txt"}          one sample a line
 */
#ifndef HS_DIST_H
#define HS_DIST_H

#include <gsl/gsl_rng.h>
#include <stddef.h>

#include "jx.h"

enum dist_kind {
	DIST_CONSTANT,
	DIST_UNIFORM,
	DIST_EXPONENTIAL,
	DIST_NORMAL,
	DIST_LOGNORMAL,
	DIST_GAMMA,
	DIST_PARETO,
	DIST_EMPIRICAL,
};

/* A spread relative to the mean (a gamma's cv, a lognormal's sd / mean)
 * is at most DIST_CV_MAX, and a gamma's cv at least DIST_CV_MIN: past
 * them a shape parameter is 0 or infinite, and the mean not a number */
#define DIST_CV_MIN 1e-6
#define DIST_CV_MAX 1e6
#define DIST_CV ((struct jx_range){ DIST_CV_MIN, DIST_CV_MAX, false, false })

struct dist {
	enum dist_kind kind;
	double a, b;      /* sampler parameters, by kind: value; min, max; mean;
			     mean, sd; mu, sigma of log; shape, scale; xm, alpha */
	double lo;        /* draws are clamped to >= lo (normal only) */
	double *samples;  /* (n_samples) owned: empirical draws */
	size_t n_samples;
};

/* Reads obj[key] (obj at ptr) as a distribution whose every draw lies in
 * range r; def is the JSON text of the default, or NULL if required. An
 * empirical file is resolved against the document's folder. On success the
 * caller releases out with dist_release. */
int dist_read(struct jx *x, json_t *obj, const char *ptr, const char *key,
	      struct jx_range r, const char *def, struct dist *out);
void dist_release(struct dist *d);

/* A constant distribution (no release needed). */
struct dist dist_constant(double v);

double dist_sample(const struct dist *d, gsl_rng *r);

/* Analytic mean and variance (infinite where the moment does not exist;
 * before clamping, for normal). */
double dist_mean(const struct dist *d);
double dist_var(const struct dist *d);
/* The largest draw, INFINITY where there is none. */
double dist_max(const struct dist *d);

#endif
