/* gcurve.c: the curves fitted on measured operator profiles, and the curve
 * of a GPU without one. A row's arrays are on gcurve_tok; the rows are
 * what `hybridspec calib import-profiles` prints for the profiles it read
 * (their source is the row's from), and tests/test_gcurve.c holds them to
 * the committed results/calib/gpu/curves.json it wrote beside them. */
#include "gcurve.h"

#include "gpu.h"
#include "shape.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

const double gcurve_tok[GCURVE_N] = { 1, 2, 4, 8, 16, 24, 32, 48, 64, 96,
	128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096 };

/* Fitted by calib import-profiles on microsoft/vidur's profiles (see
 * each row's from); regenerate with that command, never by hand. */
static const struct gcurve fitted[] = {
	{ "A100-80G", 0.7752,
	  { 0.0051, 0.0102, 0.0202, 0.0399, 0.0789, 0.1181, 0.1547,
	   0.2291, 0.3079, 0.3912, 0.5311, 0.5305, 0.6634, 0.6888,
	   0.6971, 0.7083, 0.6818, 0.7296, 0.7452, 0.7397, 0.7407 },
	  { 0.7383, 0.7383, 0.7371, 0.7303, 0.7226, 0.7108, 0.7060,
	   0.6988, 0.7049, 0.5963, 0.6051, 0.5057, 0.6292, 0.6601,
	   0.6613, 0.6788, 0.6377, 0.6805, 0.7092, 0.7025, 0.7086 },
	  "fitted on A100-80G profiles of Meta-Llama-3-70B, Meta-Llama-"
	  "3-8B, Llama-2-7b-hf, Llama-2-70b-hf, Qwen-72B, internlm-20b,"
	  " CodeLlama-34b-Instruct-hf" },
	{ "H100-SXM", 0.8615,
	  { 0.0029, 0.0058, 0.0118, 0.0236, 0.0465, 0.0686, 0.0906,
	   0.1382, 0.1800, 0.2501, 0.3444, 0.4241, 0.6004, 0.5168,
	   0.6914, 0.6329, 0.6457, 0.6936, 0.7161, 0.7191, 0.7134 },
	  { 0.8142, 0.8050, 0.8198, 0.8198, 0.8070, 0.7938, 0.7892,
	   0.7977, 0.7832, 0.7274, 0.7499, 0.6200, 0.6497, 0.4554,
	   0.6436, 0.5857, 0.6068, 0.6297, 0.6573, 0.6400, 0.6477 },
	  "fitted on H100-SXM profiles of Llama-2-7b-hf, Llama-2-70b-hf"
	  ", Qwen-72B, internlm-20b, CodeLlama-34b-Instruct-hf" },
	{ "A40", 0.7684,
	  { 0.0036, 0.0074, 0.0147, 0.0293, 0.0577, 0.0825, 0.1126,
	   0.1672, 0.2163, 0.3086, 0.4108, 0.5076, 0.6235, 0.6517,
	   0.6590, 0.7679, 0.7420, 0.7833, 0.7778, 0.7656, 0.7405 },
	  { 0.7617, 0.7775, 0.7754, 0.7705, 0.7598, 0.7313, 0.7479,
	   0.7403, 0.7177, 0.6774, 0.6738, 0.5520, 0.5996, 0.6263,
	   0.6269, 0.7282, 0.7099, 0.7502, 0.7432, 0.7178, 0.7012 },
	  "fitted on A40 profiles of Llama-2-7b-hf, Llama-2-70b-hf, Qwe"
	  "n-72B, internlm-20b, CodeLlama-34b-Instruct-hf" },
	{ "", 0, { 0 }, { 0 }, "" }
};

const struct gcurve *gcurve_fitted(void)
{
	return fitted;
}

double gcurve_interp(const double *x, const double *y, size_t n, double v)
{
	size_t i = 0;

	if (n == 1 || v <= x[0])
		return y[0];
	while (i + 2 < n && v >= x[i + 1])
		i++;
	return y[i] + (y[i + 1] - y[i]) * (v - x[i]) / (x[i + 1] - x[i]);
}

double gcurve_at(const double *arr, double tokens)
{
	return gcurve_interp(gcurve_tok, arr, GCURVE_N, tokens);
}

static double ridge(const struct gpu_spec *g)
{
	return g->fp16_flops / g->mem_bw_Bps;
}

void gcurve_average(struct gcurve *c, const struct gpu_spec *g,
		    const struct gcurve *rows)
{
	size_t n = 0, len;

	*c = (struct gcurve){ 0 };
	snprintf(c->gpu, sizeof(c->gpu), "%s", g->name);
	len = (size_t)snprintf(c->from, sizeof(c->from), "derived from");
	for (const struct gcurve *f = rows; f->gpu[0]; f++, n++) {
		double scale = ridge(gpu_preset_find(f->gpu)) / ridge(g);

		c->eta_bw += f->eta_bw;
		for (size_t i = 0; i < GCURVE_N; i++) {
			/* held at the fitted grid's ends, not drawn on past
			 * them: a GPU of a far lower ridge reads far out, where
			 * a line through the last two points left (0, 1] */
			double at = gcurve_tok[i] * scale,
			       last = gcurve_tok[GCURVE_N - 1];

			at = at < last ? at : last;
			c->eff[i] += gcurve_at(f->eff, at);
			c->eta_flops[i] += gcurve_at(f->eta_flops, at);
		}
		if (len < sizeof(c->from))
			len += (size_t)snprintf(c->from + len,
						sizeof(c->from) - len, "%s %s",
						n ? "," : "", f->gpu);
	}
	assert(n > 0);
	c->eta_bw /= (double)n;
	for (size_t i = 0; i < GCURVE_N; i++) {
		c->eff[i] /= (double)n;
		c->eta_flops[i] /= (double)n;
	}
}

void gcurve_for(struct gcurve *c, const struct gpu_spec *g)
{
	for (const struct gcurve *f = fitted; f->gpu[0]; f++)
		if (!strcmp(f->gpu, g->name)) {
			*c = *f;
			return;
		}
	gcurve_average(c, g, fitted);
}

void gcurve_body(const struct shape *m, double bytes_per_weight, int tp,
		 double tokens, double *bytes, double *flops)
{
	double ends = (double)m->vocab * m->dim * (m->tied ? 1 : 2);

	*bytes = (shape_params_read(m, tokens) - ends) * bytes_per_weight / tp;
	*flops = 2 * (shape_active_params(m) - ends) * tokens / tp;
}

double gcurve_roofline_s(const struct gpu_spec *g, double bytes,
			 double flops)
{
	double tb = bytes / g->mem_bw_Bps, tf = flops / g->fp16_flops;

	return tb > tf ? tb : tf;
}
