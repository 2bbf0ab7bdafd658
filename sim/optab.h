/* optab.h: one iteration's cost priced by operator, for one model on one
 * replica of tp GPUs (docs/gpu-costs.md). An iteration of T tokens over
 * sequences whose cached contexts sum to C (and tokens x context to X), of
 * which L positions are sampled, costs (cost.c)
 *   layers_s(T) + allreduce_s(T)                 the grid (gcurve_tok)
 * + KV bytes (C + T) / tp / (eta_bw BW)          attention's cache read
 * + attention FLOPs X / tp / (eta_flops(T) F)    prefill attention
 * + roofline of the classifier at L / eff(L)     the logits
 * + overhead_s                                   the server's own step
 * with BW and F one GPU's datasheet peaks. Measured: layers_s and
 * allreduce_s from an imported operator profile, the curve fitted on the
 * same GPU's profiles (calib import-profiles writes these tables).
 * Derived: layers_s = the layers' roofline / eff, all-reduces from the
 * link's model (gpu.h), the curve from gcurve_for. */
#ifndef HS_OPTAB_H
#define HS_OPTAB_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"
#include "gcurve.h"

struct gpu_link;
struct gpu_spec;
struct shape;

struct optab {
	struct gcurve curve;
	double layers_s[GCURVE_N];    /* every layer and the embedding */
	double allreduce_s[GCURVE_N]; /* 2 x layers all-reduces of T x dim
					 FP16 activations (0 at tp 1) */
	double overhead_s;
	int tp;
	bool measured;               /* imported, not derived */
	char gpu[64], model[64];
	char pricing[448];           /* what priced it, for reports */
};

/* The server's step overhead a table takes unless a config gives its own,
 * and where it was measured. */
extern const double optab_overhead_s;
extern const char optab_overhead_source[];

/* Reads doc (borrowed; "kind": "ops"), named path in messages, as the table
 * of model. 0, or -1 with "PATH: /POINTER: expected ..., got ..." in e. */
int optab_parse(struct optab *t, json_t *doc, const char *path,
		const char *model, struct err *e);
int optab_load(struct optab *t, const char *path, const char *model,
	       struct err *e);
/* The table as JSON (a new reference); extra (borrowed, may be NULL) adds
 * its keys (provenance, sources). */
json_t *optab_json(const struct optab *t, const json_t *extra);

/* The table of model m at bytes_per_weight on tp GPUs g linked by l,
 * derived from curve c (all borrowed). */
void optab_derive(struct optab *t, const struct shape *m,
		  double bytes_per_weight, const struct gpu_spec *g, int tp,
		  const struct gpu_link *l, const struct gcurve *c);

#endif
