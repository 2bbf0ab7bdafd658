/* cost.c: the roofline, and interpolation in a measured table (vtab.h),
 * which the cost borrows from the config that read it. */
#include "cost.h"

#include "gpu.h"

#include <stdlib.h>
#include <string.h>

void cost_init(struct cost *c, const struct cfg_cloud *cloud)
{
	const struct shape *s = cloud->model;
	const struct gpu_preset *g = gpu_preset_find(cloud->gpu.preset);

	*c = (struct cost){
		.params = shape_params(s),
		.kv_bytes_per_tok = 2 * shape_kv_elems_per_token(s),
		.attn_flops = 4.0 * s->n_layers * s->dim,
		.peak_bw_Bps = g->mem_bw_Bps,
		.peak_flops = g->fp16_flops,
		.eta_bw = cloud->gpu.eta_bw,
		.eta_flops = cloud->gpu.eta_flops,
		.overhead_s = cloud->gpu.overhead_s,
		.gpu = g->name,
	};
	c->weight_bytes = c->params * cloud->weight_bytes;
	if (cloud->gpu.vtab.nt) {
		c->table = &cloud->gpu.vtab;
		c->gpu = c->table->gpu;
	}
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

static double table_s(const struct vtab *t, double tokens, double ctx)
{
	double wt, wc, lo, hi;
	size_t i = bracket(t->tok, t->nt, tokens, 1, &wt);
	size_t j = bracket(t->ctx, t->nc, ctx, 0, &wc);
	size_t i1 = t->nt > 1 ? i + 1 : i, j1 = t->nc > 1 ? j + 1 : j;

	lo = t->sec[i * t->nc + j] * (1 - wc) + t->sec[i * t->nc + j1] * wc;
	hi = t->sec[i1 * t->nc + j] * (1 - wc) + t->sec[i1 * t->nc + j1] * wc;
	return lo + (hi - lo) * wt;
}

double cost_iter_s(const struct cost *c, const struct cost_batch *b,
		   double *bytes, double *flops)
{
	double by = c->weight_bytes +
		    c->kv_bytes_per_tok * (b->ctx_sum + (double)b->tokens);
	double fl = 2 * c->params * (double)b->tokens +
		    c->attn_flops * b->tok_ctx_sum;
	double t;

	if (bytes)
		*bytes = by;
	if (flops)
		*flops = fl;
	if (c->table)
		return table_s(c->table, (double)b->tokens,
			       b->seqs ? b->ctx_sum / (double)b->seqs : 0);
	t = by / (c->eta_bw * c->peak_bw_Bps);
	if (fl / (c->eta_flops * c->peak_flops) > t)
		t = fl / (c->eta_flops * c->peak_flops);
	return t + c->overhead_s;
}
