/* cost.c: an iteration priced by operator (optab.h: a measured table the
 * cost copies, or one it derives), by the roofline, or by interpolation in
 * a measured verify table (vtab.h) it borrows from the config. */
#include "cost.h"

#include <stdlib.h>
#include <string.h>

void cost_init_model(struct cost *c, const struct cfg_cloud *cloud,
		     const struct shape *model, double bytes_per_weight,
		     const struct gpu_dtype *dtype, const struct vtab *table,
		     const struct optab *measured)
{
	/* the GPU as the weights' products see it: at the FP8 rate where
	 * they are FP8 and it has one */
	struct gpu_spec spec = cloud->gpu.spec;

	spec.fp16_flops = gpu_dtype_flops(dtype, &cloud->gpu.spec);
	*c = (struct cost){
		.model = *model,
		.bytes_per_weight = bytes_per_weight,
		.kv_bytes_per_tok = cloud->kv_dtype->bytes *
				    shape_kv_elems_per_token(model),
		.attn_flops = shape_attn_flops(model),
		.active_params = shape_active_params(model),
		.dense_params = shape_params(model),
		.peak_bw_Bps = cloud->tp * cloud->gpu.spec.mem_bw_Bps,
		.peak_flops = cloud->tp * spec.fp16_flops,
		.eta_bw = cloud->gpu.eta_bw,
		.eta_flops = cloud->gpu.eta_flops,
		.overhead_s = cloud->gpu.overhead_s,
		.tp = cloud->tp,
		.link = cloud->link,
		.table = table && table->nt ? table : NULL,
		.gpu = cloud->gpu.spec.name,
	};
	if (c->table)
		return;
	c->by_ops = measured || cloud->gpu.pricing == PRICING_DERIVED;
	if (measured)
		c->ops = *measured;
	else if (c->by_ops) {
		struct gcurve curve;

		gcurve_for(&curve, &spec);
		optab_derive(&c->ops, model, bytes_per_weight, &spec,
			     cloud->tp, &cloud->link, &curve);
	}
	c->ops.overhead_s = cloud->gpu.overhead_s;
}

void cost_init(struct cost *c, const struct cfg_cloud *cloud)
{
	cost_init_model(c, cloud, &cloud->model, cloud->weight_bytes,
			cloud->weight_dtype, &cloud->gpu.vtab,
			cloud->gpu.ops.tp ? &cloud->gpu.ops : NULL);
}

void cost_init_draft(struct cost *c, const struct cfg_cloud *cloud,
		     const struct cfg_draft *d)
{
	cost_init_model(c, cloud, &d->model, d->weight_bytes, NULL, &d->table,
			NULL);
	c->overhead_s = 0;
	c->ops.overhead_s = 0;
}

/* Index i with a[i] <= v < a[i+1] (clamped to [0, n-2]), and the weight of
 * a[i+1]; extrapolates (w > 1) when allowed. */
static size_t bracket(const double *a, size_t n, double v, int extrapolate,
		      double *w)
{
	size_t i = 0;

	if (n == 1) {
		*w = 0;
		return 0;
	}
	while (i + 2 < n && v >= a[i + 1])
		i++;
	*w = (v - a[i]) / (a[i + 1] - a[i]);
	if (*w < 0)
		*w = 0;
	if (*w > 1 && !extrapolate)
		*w = 1;
	return i;
}

/* grid g of t (its sec or pre) at tokens x ctx */
static double table_at(const struct vtab *t, const double *g, double tokens,
		       double ctx)
{
	double wt, wc, lo, hi;
	size_t i = bracket(t->tok, t->nt, tokens, 1, &wt);
	size_t j = bracket(t->ctx, t->nc, ctx, 0, &wc);
	size_t i1 = t->nt > 1 ? i + 1 : i, j1 = t->nc > 1 ? j + 1 : j;

	lo = g[i * t->nc + j] * (1 - wc) + g[i * t->nc + j1] * wc;
	hi = g[i1 * t->nc + j] * (1 - wc) + g[i1 * t->nc + j1] * wc;
	return lo + (hi - lo) * wt;
}

double cost_table_batch_s(const struct vtab *t, const struct cost_batch *b)
{
	double tok = (double)b->tokens, ctx = b->seqs ? b->ctx_sum / (double)b->seqs
						      : 0;
	double v = table_at(t, t->sec, tok, ctx), share;

	if (!t->pre || b->logits >= b->tokens)
		return v;
	share = (double)b->logits / tok;
	return share * v + (1 - share) * table_at(t, t->pre, tok, ctx);
}

const char *cost_pricing(const struct cost *c)
{
	if (c->table)
		return "a verify table measured on the GPU (calib gpu)";
	if (c->by_ops)
		return c->ops.pricing;
	return "the roofline: max(bytes / (eta_bw BW), FLOPs / (eta_flops "
	       "F)) + overhead_s, from datasheet peaks";
}

const char *cost_pricing_kind(const struct cost *c)
{
	return c->table ? "verify table"
	       : !c->by_ops ? "roofline"
	       : c->ops.measured ? "measured" : "derived";
}

double cost_allreduce_s(const struct cost *c, long tokens)
{
	return 2.0 * c->model.n_layers *
	       gpu_allreduce_s(&c->link, c->tp, 2.0 * tokens * c->model.dim);
}

/* The parameters a batch of tok > 0 tokens reads: all of a dense model's
 * (kept), the experts its tokens pick of a mixture's (shape.h). */
static double params_read(const struct cost *c, double tok)
{
	return c->model.n_experts ? shape_params_read(&c->model, tok)
				  : c->dense_params;
}

/* The efficiencies are held at the grid's last point past it. */
static double ops_iter_s(const struct cost *c, const struct cost_batch *b)
{
	const struct optab *t = &c->ops;
	double tok = (double)b->tokens, last = gcurve_tok[GCURVE_N - 1];
	double te = tok < last ? tok : last, s;

	s = gcurve_at(t->layers_s, tok) + gcurve_at(t->allreduce_s, tok) +
	    t->overhead_s +
	    c->kv_bytes_per_tok * (b->ctx_sum + tok) /
		    (t->curve.eta_bw * c->peak_bw_Bps) +
	    c->attn_flops * b->tok_ctx_sum /
		    (gcurve_at(t->curve.eta_flops, te) * c->peak_flops);
	if (b->logits > 0) {
		double vd = (double)c->model.vocab * c->model.dim;
		double l = b->logits < last ? (double)b->logits : last;
		double tb = vd * c->bytes_per_weight / c->peak_bw_Bps;
		double tf = 2 * vd * (double)b->logits / c->peak_flops;

		s += (tb > tf ? tb : tf) / gcurve_at(t->curve.eff, l);
	}
	return s;
}

double cost_iter_s(const struct cost *c, const struct cost_batch *b,
		   double *bytes, double *flops)
{
	double tok = (double)b->tokens;
	double by = tok > 0 ? params_read(c, tok) * c->bytes_per_weight +
				      c->kv_bytes_per_tok * (b->ctx_sum + tok)
			    : 0;
	double fl = 2 * c->active_params * tok +
		    c->attn_flops * b->tok_ctx_sum;
	double t;

	if (bytes)
		*bytes = by;
	if (flops)
		*flops = fl;
	if (c->table)
		return b->tokens <= 0 ? 0 : cost_table_batch_s(c->table, b);
	if (b->tokens <= 0)
		return 0;
	if (c->by_ops)
		return ops_iter_s(c, b);
	t = by / (c->eta_bw * c->peak_bw_Bps);
	if (fl / (c->eta_flops * c->peak_flops) > t)
		t = fl / (c->eta_flops * c->peak_flops);
	return t + c->overhead_s + cost_allreduce_s(c, b->tokens);
}
