/* cost.h: how long one cloud iteration (a batch) takes on a GPU.
 *
 * Roofline: max(bytes / (eta_bw BW), flops / (eta_flops F)) + overhead, with
 * bytes = every weight once + the KV cache of every sequence in the batch +
 * the K and V written for the new tokens, and flops = 2 params tokens +
 * 4 layers dim (tokens x context) for attention. Table: seconds measured by
 * `calib gpu` on a grid of batch tokens x context length, interpolated
 * bilinearly (linearly extrapolated in tokens past the grid, clamped in
 * context). */
#ifndef HS_COST_H
#define HS_COST_H

#include "cfg.h"

struct cost_batch {
	long tokens;         /* tokens processed in the iteration */
	long seqs;           /* sequences (requests) in it */
	double ctx_sum;      /* sum over sequences of their cached context */
	double tok_ctx_sum;  /* sum over sequences of tokens x context */
};

struct cost {
	double weight_bytes;      /* all weights, bytes */
	double params;
	double kv_bytes_per_tok;  /* K and V of one token, all layers, FP16 */
	double attn_flops;        /* per token per context position */
	double peak_bw_Bps, peak_flops;
	double eta_bw, eta_flops, overhead_s;
	const struct vtab *table; /* borrowed from the config; NULL: roofline */
	const char *gpu;          /* borrowed: the GPU's name, for reports */
};

/* From the cloud section of a config (which must outlive c): the roofline,
 * or the table the config read. */
void cost_init(struct cost *c, const struct cfg_cloud *cloud);

/* Seconds of one iteration; bytes and flops moved (roofline terms, for
 * MBU and MFU) are stored when the pointers are not NULL. */
double cost_iter_s(const struct cost *c, const struct cost_batch *b,
		   double *bytes, double *flops);

#endif
