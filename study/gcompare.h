/* gcompare.h: a verify-cost table that `calib gpu` measured on a GPU, point
 * by point against what the simulator charges for the same forwards
 * ("hybridspec gpu compare"): priced by the operator table that another
 * GPU of the same class has in the tables folder (measured there by
 * others: results/calib/gpu holds Vidur's profiles), and by the derived
 * costs of the measured GPU's own preset. No step overhead on either side:
 * `calib gpu` times the GPU's forwards alone. Nothing is fitted. */
#ifndef HS_GCOMPARE_H
#define HS_GCOMPARE_H

#include <jansson.h>
#include <stdio.h>

#include "err.h"

/* One point of the table: ceil(tokens / 5) sequences of at most 5 tokens
 * at cached context ctx, as calib gpu runs them. */
struct gcompare_row {
	double tokens, ctx;
	double measured_s, against_s, own_s;
};

struct gcompare {
	char gpu[64];       /* the measured GPU's preset, e.g. "H200" */
	char against[64];   /* the preset priced by its table */
	char model[64], dtype[16]; /* the weights: fp16 or int4 */
	char against_pricing[256], own_pricing[256]; /* cost_pricing's words */
	struct gcompare_row *rows; /* (n) owned, the table's order */
	size_t n;
};

/* Reads the table at path (a calib gpu output: "gpu", "model",
 * "provenance"/"quant"); gpu names its preset when the table's GPU name
 * does not (NULL: the name less "NVIDIA "); against is the preset priced by
 * DIR/AGAINST-MODEL-tp1.json (derived when DIR lacks it). 0, or -1 with
 * e's message (g empty). */
int gcompare_run(struct gcompare *g, const char *path, const char *gpu,
		 const char *against, const char *tables, struct err *e);
void gcompare_release(struct gcompare *g);

void gcompare_print(const struct gcompare *g, FILE *f);
json_t *gcompare_json(const struct gcompare *g); /* new reference */

#endif
