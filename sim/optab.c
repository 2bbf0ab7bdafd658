/* optab.c: reading, writing and deriving operator tables.
 *
 * A table is {"kind": "ops", "gpu", "model", "tp", "measured", "pricing",
 * "overhead_s", "tokens": gcurve_tok, "layers_s", "allreduce_s", "eta_bw",
 * "eta_flops", "eff", "curve"} plus what the writer adds (provenance, the
 * profiles' source); every array is on gcurve_tok, layers_s non-decreasing
 * and > 0, the efficiencies in (0, 1]. */
#include "optab.h"

#include "gpu.h"
#include "jx.h"
#include "prof.h"
#include "shape.h"

#include <stdlib.h>
#include <string.h>

/* vLLM's own step: the GPU idles while the CPU copies the sampled tokens
 * back, detokenizes, builds the outputs and schedules the next step */
const double optab_overhead_s = 0.004;
const char optab_overhead_source[] = "vLLM RFC #6854 (github.com/"
	"vllm-project/vllm/issues/6854, 2024-07-26, vLLM 0.5.3, single-step "
	"scheduling, Llama-3-8B on one GPU in its PR #7000): \"Each "
	"highlighted redbox is about 4ms of GPU bubble ... For baseline, this "
	"overhead is incurred on every decode\" (its text: 5-13 ms)";

/* The array doc[key] into out (GCURVE_N), each in r, non-decreasing when
 * rising. */
static int read_grid(struct jx *x, json_t *doc, const char *key,
		     struct jx_range r, int rising, double *out)
{
	double *v = NULL;
	size_t n = 0;
	char p[JX_PTR_MAX], want[96];

	if (jx_nums(x, doc, "", key, r, rising ? 0 : -1, &v, &n) < 0)
		return -1;
	if (n != GCURVE_N) {
		free(v);
		snprintf(want, sizeof(want), "%d numbers, one for each of "
			 "/tokens", GCURVE_N);
		return jx_fail(x, jx_child(p, "", key), want,
			       json_object_get(doc, key));
	}
	memcpy(out, v, sizeof(double) * GCURVE_N);
	free(v);
	return 0;
}

static int read_names(struct jx *x, json_t *doc, const char *model,
		      struct optab *t)
{
	const char *gpu, *m, *pricing, *from;
	char want[96];

	if (jx_str(x, doc, "", "model", model, &m) < 0)
		return -1;
	if (strcmp(m, model)) {
		snprintf(want, sizeof(want), "\"%s\", the model it prices",
			 model);
		return jx_fail(x, "/model", want, json_object_get(doc, "model"));
	}
	if (jx_str(x, doc, "", "gpu", NULL, &gpu) < 0 ||
	    jx_str(x, doc, "", "pricing", NULL, &pricing) < 0 ||
	    jx_str(x, doc, "", "curve", NULL, &from) < 0)
		return -1;
	snprintf(t->gpu, sizeof(t->gpu), "%s", gpu);
	snprintf(t->model, sizeof(t->model), "%s", m);
	snprintf(t->pricing, sizeof(t->pricing), "%s", pricing);
	snprintf(t->curve.gpu, sizeof(t->curve.gpu), "%s", gpu);
	snprintf(t->curve.from, sizeof(t->curve.from), "%s", from);
	return 0;
}

int optab_parse(struct optab *t, json_t *doc, const char *path,
		const char *model, struct err *e)
{
	static const char *const keys[] = { "kind", "gpu", "model", "tp",
		"measured", "pricing", "overhead_s", "overhead_source",
		"tokens", "layers_s", "allreduce_s", "eta_bw", "eta_flops",
		"eff", "curve", "source", "provenance", NULL };
	static const struct jx_range eta = { 0, 1, true, false };
	struct jx x = { .file = path, .err = e };
	double tok[GCURVE_N];
	long long tp;

	*t = (struct optab){ 0 };
	if (prof_kind_check(path, doc, "ops", e) < 0 ||
	    jx_object(&x, doc, "", keys) < 0 || read_names(&x, doc, model, t) < 0 ||
	    jx_int(&x, doc, "", "tp", 1, 64, JX_REQUIRED_INT, &tp) < 0 ||
	    jx_bool(&x, doc, "", "measured", -1, &t->measured) < 0 ||
	    jx_num(&x, doc, "", "overhead_s", JX_NONNEG, JX_REQUIRED,
		   &t->overhead_s) < 0 ||
	    jx_num(&x, doc, "", "eta_bw", eta, JX_REQUIRED, &t->curve.eta_bw) < 0 ||
	    read_grid(&x, doc, "tokens", JX_POS, 1, tok) < 0 ||
	    read_grid(&x, doc, "layers_s", JX_POS, 1, t->layers_s) < 0 ||
	    read_grid(&x, doc, "allreduce_s", JX_NONNEG, 0,
		      t->allreduce_s) < 0 ||
	    read_grid(&x, doc, "eta_flops", eta, 0, t->curve.eta_flops) < 0 ||
	    read_grid(&x, doc, "eff", eta, 0, t->curve.eff) < 0)
		return -1;
	t->tp = (int)tp;
	for (size_t i = 0; i < GCURVE_N; i++)
		if (tok[i] != gcurve_tok[i]) {
			char p[JX_PTR_MAX], want[64];

			snprintf(want, sizeof(want), "%g (the grid of "
				 "docs/gpu-costs.md)", gcurve_tok[i]);
			return jx_fail(&x, jx_index(p, "/tokens", i), want,
				       json_array_get(json_object_get(doc,
						      "tokens"), i));
		}
	return 0;
}

int optab_load(struct optab *t, const char *path, const char *model,
	       struct err *e)
{
	json_t *doc = jx_load(path, e);
	int rc;

	*t = (struct optab){ 0 };
	if (!doc)
		return -1;
	rc = optab_parse(t, doc, path, model, e);
	json_decref(doc);
	return rc;
}

static json_t *grid(const double *v)
{
	json_t *a = json_array();

	for (size_t i = 0; i < GCURVE_N; i++)
		json_array_append_new(a, json_real(v[i]));
	return a;
}

json_t *optab_json(const struct optab *t, const json_t *extra)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:b, s:s, s:s, s:f, s:s}",
			      "kind", "ops", "gpu", t->gpu, "model", t->model,
			      "tp", t->tp, "measured", t->measured, "pricing",
			      t->pricing, "curve", t->curve.from, "overhead_s",
			      t->overhead_s, "overhead_source",
			      optab_overhead_source);

	json_object_set_new(o, "tokens", grid(gcurve_tok));
	json_object_set_new(o, "layers_s", grid(t->layers_s));
	json_object_set_new(o, "allreduce_s", grid(t->allreduce_s));
	json_object_set_new(o, "eta_bw", json_real(t->curve.eta_bw));
	json_object_set_new(o, "eta_flops", grid(t->curve.eta_flops));
	json_object_set_new(o, "eff", grid(t->curve.eff));
	if (extra)
		json_object_update(o, (json_t *)extra);
	return o;
}

void optab_derive(struct optab *t, const struct shape *m,
		  double bytes_per_weight, const struct gpu_spec *g, int tp,
		  const struct gpu_link *l, const struct gcurve *c)
{
	*t = (struct optab){ .tp = tp, .overhead_s = optab_overhead_s,
			     .curve = *c };
	snprintf(t->gpu, sizeof(t->gpu), "%s", g->name);
	snprintf(t->model, sizeof(t->model), "%s", m->name);
	snprintf(t->pricing, sizeof(t->pricing), "derived: the layers' "
		 "roofline over the efficiency curve %.240s", t->curve.from);
	for (size_t i = 0; i < GCURVE_N; i++) {
		double by, fl;

		gcurve_body(m, bytes_per_weight, tp, gcurve_tok[i], &by, &fl);
		t->layers_s[i] = gcurve_roofline_s(g, by, fl) / t->curve.eff[i];
		/* non-decreasing, as a table's must be: where the curve's
		 * efficiency rises faster than the roofline's time (the
		 * memory-bound batches), more tokens keep the fewer's time */
		if (i && t->layers_s[i] < t->layers_s[i - 1])
			t->layers_s[i] = t->layers_s[i - 1];
		t->allreduce_s[i] = 2.0 * m->n_layers *
			gpu_allreduce_s(l, tp, 2.0 * gcurve_tok[i] * m->dim);
	}
}
