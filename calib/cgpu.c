/* cgpu.c: the verify-cost table of a GPU without a GPU: the simulator's
 * roofline evaluated on a grid, from datasheet constants and the default
 * efficiencies, marked uncalibrated. A table measured by `calib gpu` on a
 * real GPU (the CUDA kernels) replaces it where one is lent. */
#include "calib.h"

#include "cost.h"
#include "gpu.h"
#include "shape.h"

#include <string.h>

/* verification blocks of gamma + 1 = 5 tokens: a batch of t tokens holds
 * ceil(t / 5) sequences */
#define ROOFLINE_BLOCK 5

json_t *calib_gpu_roofline(const char *gpu, const char *shape,
			   const json_t *prov, struct err *e)
{
	static const int toks[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512,
				    1024, 2048, 4096 };
	static const int ctxs[] = { 128, 256, 512, 1024, 2048, 4096 };
	struct cfg_cloud cl = { .weight_bytes = 2,
		.gpu = { .eta_bw = 0.8, .eta_flops = 0.6, .overhead_s = 0.0005 } };
	const struct gpu_preset *g = gpu_preset_find(gpu);
	json_t *tok = json_array(), *ctx = json_array(), *rows = json_array();
	struct cost c;

	if (!g || !(cl.model = shape_find(shape))) {
		json_decref(tok);
		json_decref(ctx);
		json_decref(rows);
		return err_set(e, "unknown %s '%s'", g ? "shape" : "GPU",
			       g ? shape : gpu), NULL;
	}
	cl.gpu.preset = g->name;
	if (cost_init(&c, &cl, e) < 0)
		return NULL;
	for (size_t j = 0; j < sizeof(ctxs) / sizeof(ctxs[0]); j++)
		json_array_append_new(ctx, json_integer(ctxs[j]));
	for (size_t i = 0; i < sizeof(toks) / sizeof(toks[0]); i++) {
		json_t *row = json_array();
		long seqs = (toks[i] + ROOFLINE_BLOCK - 1) / ROOFLINE_BLOCK;

		json_array_append_new(tok, json_integer(toks[i]));
		for (size_t j = 0; j < sizeof(ctxs) / sizeof(ctxs[0]); j++) {
			struct cost_batch b = { toks[i], seqs,
				(double)seqs * ctxs[j],
				(double)toks[i] * ctxs[j] };

			json_array_append_new(row,
					      json_real(cost_iter_s(&c, &b, NULL,
								    NULL)));
		}
		json_array_append_new(rows, row);
	}
	cost_release(&c);
	return json_pack("{s:s,s:s,s:s,s:b,s:s,s:o,s:o,s:o,s:O}", "kind",
			 "verify", "gpu", g->name, "model", shape, "calibrated", 0,
			 "method", "uncalibrated: the roofline max(bytes / (0.8 "
			 "BW), flops / (0.6 FLOP/s)) + 0.5 ms from datasheet "
			 "constants (sim/gpu.c), sequences of 5 tokens (gamma "
			 "4); no GPU was measured",
			 "tokens", tok, "ctx", ctx, "seconds", rows,
			 "provenance", prov);
}
