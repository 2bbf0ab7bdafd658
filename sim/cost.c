/* cost.c: the roofline and the measured table.
 *
 * A table is {"kind": "verify", "gpu": NAME, "model": SHAPE, "tokens": [t0 <
 * t1 < ...], "ctx": [c0 < c1 < ...],
 * "seconds": [[s(t0,c0), s(t0,c1), ...], ...]}, every time > 0 and
 * non-decreasing in tokens; sec[i * nc + j] = s(tok[i], ctx[j]). */
#include "cost.h"

#include "gpu.h"
#include "jx.h"
#include "mem.h"
#include "prof.h"

#include <stdlib.h>
#include <string.h>

static int read_table(struct cost *c, const char *path, const char *model,
		      struct err *e)
{
	static const char *const keys[] = { "kind", "gpu", "model", "calibrated",
		"method", "tokens", "ctx", "seconds", "provenance", NULL };
	static const char *const kinds[] = { "verify", NULL };
	struct jx x = { .file = path, .err = e };
	json_t *doc = jx_load(path, e), *rows;
	const char *gpu, *tmodel;
	char want[96];
	int kind, rc = -1;

	if (!doc)
		return -1;
	if (prof_kind_check(path, doc, "verify", e) < 0 ||
	    jx_object(&x, doc, "", keys) < 0 ||
	    jx_enum(&x, doc, "", "kind", kinds, "verify", &kind) < 0 ||
	    jx_str(&x, doc, "", "model", model, &tmodel) < 0)
		goto out;
	if (strcmp(tmodel, model)) {
		snprintf(want, sizeof(want), "\"%s\", the config's /cloud/model",
			 model);
		jx_fail(&x, "/model", want, json_object_get(doc, "model"));
		goto out;
	}
	if (jx_str(&x, doc, "", "gpu", NULL, &gpu) < 0 ||
	    jx_nums(&x, doc, "", "tokens", JX_POS, 1, &c->tok, &c->nt) < 0 ||
	    jx_nums(&x, doc, "", "ctx", JX_POS, 1, &c->ctx, &c->nc) < 0)
		goto out;
	free(c->gpu);
	c->gpu = xstrdup(gpu);
	rows = json_object_get(doc, "seconds");
	if (!json_is_array(rows) || json_array_size(rows) != c->nt) {
		jx_fail(&x, "/seconds", "an array with a row per entry of "
			"/tokens", rows);
		goto out;
	}
	c->sec = xcalloc(c->nt * c->nc, sizeof(double));
	for (size_t i = 0; i < c->nt; i++) {
		json_t *row = json_array_get(rows, i);
		char p[JX_PTR_MAX], q[JX_PTR_MAX];

		jx_index(p, "/seconds", i);
		if (!json_is_array(row) || json_array_size(row) != c->nc) {
			jx_fail(&x, p, "an array with a time per entry of /ctx",
				row);
			goto out;
		}
		for (size_t j = 0; j < c->nc; j++) {
			json_t *v = json_array_get(row, j);
			double s = json_number_value(v);

			if (!json_is_number(v) || !(s > 0) ||
			    (i && s < c->sec[(i - 1) * c->nc + j])) {
				jx_fail(&x, jx_index(q, p, j), "a time > 0 s, "
					"not less than the one for fewer tokens",
					v);
				goto out;
			}
			c->sec[i * c->nc + j] = s;
		}
	}
	rc = 0;
out:
	json_decref(doc);
	return rc;
}

int cost_init(struct cost *c, const struct cfg_cloud *cloud, struct err *e)
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
		.gpu = xstrdup(g->name),
	};
	c->weight_bytes = c->params * cloud->weight_bytes;
	if (cloud->gpu.table &&
	    read_table(c, cloud->gpu.table, s->name, e) < 0) {
		cost_release(c);
		return -1;
	}
	return 0;
}

void cost_release(struct cost *c)
{
	free(c->tok);
	free(c->ctx);
	free(c->sec);
	free(c->gpu);
	*c = (struct cost){ 0 };
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

static double table_s(const struct cost *c, double tokens, double ctx)
{
	double wt, wc, lo, hi;
	size_t i = bracket(c->tok, c->nt, tokens, 1, &wt);
	size_t j = bracket(c->ctx, c->nc, ctx, 0, &wc);
	size_t i1 = c->nt > 1 ? i + 1 : i, j1 = c->nc > 1 ? j + 1 : j;

	lo = c->sec[i * c->nc + j] * (1 - wc) + c->sec[i * c->nc + j1] * wc;
	hi = c->sec[i1 * c->nc + j] * (1 - wc) + c->sec[i1 * c->nc + j1] * wc;
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
	if (c->tok)
		return table_s(c, (double)b->tokens,
			       b->seqs ? b->ctx_sum / (double)b->seqs : 0);
	t = by / (c->eta_bw * c->peak_bw_Bps);
	if (fl / (c->eta_flops * c->peak_flops) > t)
		t = fl / (c->eta_flops * c->peak_flops);
	return t + c->overhead_s;
}
