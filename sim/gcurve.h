/* gcurve.h: how close a GPU comes to its datasheet on a transformer layer,
 * over the tokens of an iteration: curves fitted on measured operator
 * profiles (calib import-profiles), compiled in (gcurve.c), and the curve
 * derived from them for a GPU that has none (docs/gpu-costs.md). */
#ifndef HS_GCURVE_H
#define HS_GCURVE_H

#include <stddef.h>

struct gpu_spec;
struct shape;

/* The grid every curve and operator table is on: tokens of an iteration. */
enum { GCURVE_N = 21 };
extern const double gcurve_tok[GCURVE_N];

struct gcurve {
	char gpu[64];             /* the GPU it is of */
	double eta_bw;            /* linear operators at one token: bytes /
				     (time x peak bandwidth) */
	double eta_flops[GCURVE_N]; /* linear operators at T tokens: FLOPs /
				       (time x peak FP16) */
	double eff[GCURVE_N];     /* a layer at T tokens: its roofline at the
				     datasheet peaks / its time */
	char from[256];           /* "fitted on GPU profiles of MODELS" or
				     "derived from GPU, GPU, ..." */
};

/* The fitted curves (NULL-terminated rows of a static table). */
const struct gcurve *gcurve_fitted(void);
/* The curve for g from rows (NULL-terminated by an empty gpu; each a
 * preset's): the curves averaged at the same tokens relative to each GPU's
 * ridge point (peak FP16 / bandwidth: a layer at T tokens is as far from
 * its ridge as one at T r'/r on a GPU of ridge r'). rows has one or more. */
void gcurve_average(struct gcurve *c, const struct gpu_spec *g,
		    const struct gcurve *rows);
/* g's fitted curve, or gcurve_average of the fitted ones. */
void gcurve_for(struct gcurve *c, const struct gpu_spec *g);

/* y (n >= 1 values over x, increasing) at v: linear, held at y[0] below
 * x[0], extrapolated past the last point. */
double gcurve_interp(const double *x, const double *y, size_t n, double v);
/* gcurve_interp of one of a curve's arrays over gcurve_tok at tokens. */
double gcurve_at(const double *arr, double tokens);

/* Bytes and FLOPs of a model's layers (no embedding, no classifier) on one
 * GPU of tp, for an iteration of tokens tokens at bytes_per_weight. */
void gcurve_body(const struct shape *m, double bytes_per_weight, int tp,
		 double tokens, double *bytes, double *flops);
/* The same at g's datasheet peaks: max(bytes / BW, flops / F). */
double gcurve_roofline_s(const struct gpu_spec *g, double bytes,
			 double flops);

#endif
