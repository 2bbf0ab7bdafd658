/* fz_cost.c: the measured verify-cost table (vtab_load, sim/vtab.h) for
 * LLaMA-2-7B on an H100, then the cost of a few batches read from it
 * (cost_init, sim/cost.h). */
#include "fz.h"

#include "cost.h"
#include "shape.h"

static int fz_cost(const uint8_t *data, size_t size)
{
	struct cfg_cloud cl;
	struct cost c;
	struct err e;

	cfg_cloud_default(&cl, "H100-SXM", shape_find("llama2-7b"));
	if (vtab_load(&cl.gpu.vtab, fz_put("table-in.json", data, size),
		      "llama2-7b", &e) < 0)
		return -1;
	cost_init(&c, &cl);
	for (long t = 1; t <= 8192; t *= 8) {
		struct cost_batch b = { .tokens = t, .seqs = 1 + t / 5,
					.ctx_sum = 300.0 * (double)t,
					.tok_ctx_sum = 1500.0 * (double)t };
		double bytes, flops;

		(void)cost_iter_s(&c, &b, &bytes, &flops);
	}
	vtab_release(&cl.gpu.vtab);
	return 0;
}

FZ_TARGET(fz_cost)
