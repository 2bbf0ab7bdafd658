/* gcompare.c: a measured verify table against the simulator's prices
 * (gcompare.h). Each side is a config of one replica at tp 1 running the
 * table's model, parsed as any config is, and its cost_iter_s on the
 * point's batch; the rows keep the table's order (tokens, then context).
 * Invariant: rows holds one row a point of the table, all three seconds
 * positive. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "gcompare.h"

#include "cfg.h"
#include "cost.h"
#include "jx.h"
#include "mem.h"
#include "order.h"
#include "vtab.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_TOKENS 5 /* calib gpu's verify blocks (CALIB_GPU_BLOCK) */

/* The pricing of one side: preset's GPU, FP16 or INT4 weights, no step
 * overhead, the operator table in tables when there is one. */
static int side_init(struct cfg *c, struct cost *k, const char *preset,
		     const char *model, const char *dtype, const char *tables,
		     struct err *e)
{
	json_t *gpu = json_pack("{s:s, s:f}", "preset", preset, "overhead_s",
				0.0);

	if (tables)
		json_object_set_new(gpu, "tables", json_string(tables));
	json_t *doc = json_pack(
		"{s:s, s:i, s:{s:s}, s:[{s:s, s:i, s:{s:s, s:i, s:i, s:i, s:i, "
		"s:i}, s:{s:f, s:f, s:f}}], s:{s:i, s:s, s:s, s:i, s:o}}",
		"name", "gpu-compare", "seed", 1, "protocol", "kind",
		"cloud_only", "tenants", "name", "t", "count", 1, "workload",
		"arrival", "closed", "requests", 1, "prompt_tokens", 16,
		"output_tokens", 16, "think_s", 0, "start_s", 0, "wan", "rtt_s",
		0.01, "up_bps", 1e9, "down_bps", 1e9, "cloud",
		"replicas", 1, "model", model, "weight_dtype", dtype, "tp", 1,
		"gpu", gpu);

	char what[96];

	snprintf(what, sizeof(what), "the pricing of %s", preset);
	if (cfg_parse(c, doc, what, NULL, 0, NULL, e) < 0)
		return -1;
	cost_init(k, &c->cloud);
	return 0;
}

static double price_s(const struct cost *k, double tokens, double ctx)
{
	long t = (long)tokens, seqs = (t + BLOCK_TOKENS - 1) / BLOCK_TOKENS;

	return cost_iter_s(k, &(struct cost_batch){ t, seqs, seqs * ctx,
						     tokens * ctx, t },
			   NULL, NULL);
}

int gcompare_run(struct gcompare *g, const char *path, const char *gpu,
		 const char *against, const char *tables, struct err *e)
{
	json_t *doc = jx_load(path, e), *prov;
	const char *name, *model, *quant;
	struct vtab t = { 0 };
	struct cfg ca, co;
	struct cost ka, ko;
	char dir[PATH_MAX];
	int sides = 0, rc = -1;

	memset(g, 0, sizeof(*g));
	if (!doc)
		return -1;
	name = json_string_value(json_object_get(doc, "gpu"));
	model = json_string_value(json_object_get(doc, "model"));
	prov = json_object_get(doc, "provenance");
	quant = json_string_value(json_object_get(prov, "quant"));
	if (!name || !model || !json_is_true(json_object_get(doc, "calibrated"))) {
		err_set(e, "%s: expected a table that calib gpu measured "
			"(\"gpu\", \"model\", \"calibrated\": true)", path);
		goto out;
	}
	if (!json_is_string(json_object_get(prov, "gpu_device"))) {
		err_set(e, "%s: expected a table that calib gpu measured on a "
			"GPU (its provenance names the gpu_device), got one of "
			"%s (calib cpu --verify times a CPU)", path, name);
		goto out;
	}
	snprintf(g->gpu, sizeof(g->gpu), "%s", gpu ? gpu
		 : strncmp(name, "NVIDIA ", 7) ? name : name + 7);
	snprintf(g->against, sizeof(g->against), "%s", against);
	snprintf(g->model, sizeof(g->model), "%s", model);
	snprintf(g->dtype, sizeof(g->dtype), "%s",
		 quant && !strncmp(quant, "w4a16", 5) ? "int4" : "fp16");
	if (tables && !realpath(tables, dir)) {
		err_set(e, "--tables %s: no such folder", tables);
		goto out;
	}
	if (vtab_parse(&t, doc, path, model, e) < 0)
		goto out;
	/* a side that cannot be priced: the table's model or GPU, or the
	 * preset it is held against, named where it was given */
	if (side_init(&ca, &ka, against, g->model, g->dtype,
		      tables ? dir : NULL, e) < 0) {
		if (strstr(e->msg, "/cloud/model"))
			err_prefix(e, "%s: /model", path);
		else
			err_prefix(e, "--against %s", against);
		goto out;
	}
	sides = 1;
	if (side_init(&co, &ko, g->gpu, g->model, g->dtype, NULL, e) < 0) {
		if (gpu)
			err_prefix(e, "--gpu %s", gpu);
		else
			err_prefix(e, "%s: /gpu", path);
		goto out;
	}
	sides = 2;
	snprintf(g->against_pricing, sizeof(g->against_pricing), "%s",
		 cost_pricing(&ka));
	snprintf(g->own_pricing, sizeof(g->own_pricing), "%s",
		 cost_pricing(&ko));
	g->rows = xcalloc(t.nt * t.nc, sizeof(*g->rows));
	for (size_t i = 0; i < t.nt; i++)
		for (size_t j = 0; j < t.nc; j++)
			g->rows[g->n++] = (struct gcompare_row){
				t.tok[i], t.ctx[j], t.sec[i * t.nc + j],
				price_s(&ka, t.tok[i], t.ctx[j]),
				price_s(&ko, t.tok[i], t.ctx[j]) };
	rc = 0;
out:
	if (sides > 0)
		cfg_release(&ca);
	if (sides > 1)
		cfg_release(&co);
	vtab_release(&t);
	json_decref(doc);
	if (rc < 0)
		gcompare_release(g);
	return rc;
}

void gcompare_release(struct gcompare *g)
{
	free(g->rows);
	memset(g, 0, sizeof(*g));
}

static double rel(double predicted, double measured)
{
	return predicted / measured - 1;
}

/* median and worst |predicted / measured - 1| of one side */
static void spread(const struct gcompare *g, int own, double *med,
		   double *worst)
{
	double *d = xmalloc(sizeof(double) * (g->n ? g->n : 1));

	*worst = 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct gcompare_row *r = &g->rows[i];

		d[i] = fabs(rel(own ? r->own_s : r->against_s, r->measured_s));
		*worst = fmax(*worst, d[i]);
	}
	*med = g->n ? order_median(d, g->n) : 0;
	free(d);
}

void gcompare_print(const struct gcompare *g, FILE *f)
{
	double m, w;

	fprintf(f, "%s on %s (%s weights), measured by calib gpu, against:\n"
		"  %s: %s\n  %s: %s\n\n%7s %7s %11s %11s %8s %11s %8s\n",
		g->model, g->gpu, g->dtype, g->against, g->against_pricing,
		g->gpu, g->own_pricing, "tokens", "ctx", "measured ms",
		g->against, "diff", g->gpu, "diff");
	for (size_t i = 0; i < g->n; i++) {
		const struct gcompare_row *r = &g->rows[i];

		fprintf(f, "%7.0f %7.0f %11.3f %11.3f %+7.1f%% %11.3f %+7.1f%%\n",
			r->tokens, r->ctx, 1e3 * r->measured_s,
			1e3 * r->against_s, 100 * rel(r->against_s, r->measured_s),
			1e3 * r->own_s, 100 * rel(r->own_s, r->measured_s));
	}
	spread(g, 0, &m, &w);
	fprintf(f, "\n%s: median |diff| %.1f%%, worst %.1f%%\n", g->against,
		100 * m, 100 * w);
	spread(g, 1, &m, &w);
	fprintf(f, "%s: median |diff| %.1f%%, worst %.1f%%\n", g->gpu, 100 * m,
		100 * w);
}

json_t *gcompare_json(const struct gcompare *g)
{
	json_t *rows = json_array();
	double ma, wa, mo, wo;

	for (size_t i = 0; i < g->n; i++) {
		const struct gcompare_row *r = &g->rows[i];

		json_array_append_new(rows, json_pack(
			"{s:f, s:f, s:f, s:f, s:f}", "tokens", r->tokens, "ctx",
			r->ctx, "measured_s", r->measured_s, "against_s",
			r->against_s, "own_s", r->own_s));
	}
	spread(g, 0, &ma, &wa);
	spread(g, 1, &mo, &wo);
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:{s:f, s:f, "
			 "s:f, s:f}}", "gpu", g->gpu, "model", g->model,
			 "dtype", g->dtype, "against", g->against,
			 "against_pricing", g->against_pricing, "own_pricing",
			 g->own_pricing, "rows", rows, "summary",
			 "against_median", ma, "against_worst", wa,
			 "own_median", mo, "own_worst", wo);
}
