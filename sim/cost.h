/* cost.h: how long one cloud iteration (a batch) takes on a replica of tp
 * GPUs, for one model.
 *
 * By operator (the default): a measured operator table, or one derived
 * from the fitted efficiency curves (optab.h says how it prices).
 * Roofline (a config's /cloud/gpu/pricing "roofline"):
 *   max(bytes / (eta_bw BW), flops / (eta_flops F)) + overhead +
 * all-reduces, with BW and F the replica's (tp GPUs), bytes = the weights
 * the batch reads once (a mixture of experts: the experts its tokens are
 * expected to touch) + the KV cache of every sequence in the batch + the
 * K and V written for the new tokens, flops = 2 x the weights a token runs
 * through x tokens + attention's per token and cached position, and, when
 * tp > 1, two ring all-reduces a layer of tokens x dim FP16 activations
 * (gpu_allreduce_s). Table: seconds measured by `calib gpu` on a grid of
 * batch tokens x context length, interpolated bilinearly (linearly
 * extrapolated in tokens past the grid, clamped in context). A batch of no
 * tokens of the model costs nothing: the model does not run. */
#ifndef HS_COST_H
#define HS_COST_H

#include "cfg.h"
#include "optab.h"

struct cost_batch {
	long tokens;         /* tokens processed in the iteration */
	long seqs;           /* sequences (requests) in it */
	double ctx_sum;      /* sum over sequences of their cached context */
	double tok_ctx_sum;  /* sum over sequences of tokens x context */
	long logits;         /* positions whose logits are computed: every
				token verified or decoded, a prompt's last */
};

struct cost {
	struct shape model;
	double bytes_per_weight;
	double kv_bytes_per_tok;  /* K and V of one token, all layers */
	double attn_flops;        /* per token per context position */
	double active_params;     /* the model's, a token (shape.h) */
	double dense_params;      /* all its parameters, read by any batch
				     of a dense model (no experts) */
	double peak_bw_Bps, peak_flops; /* of the replica: tp GPUs (FLOP/s
					   at the weights' format) */
	double eta_bw, eta_flops, overhead_s;
	int tp;
	struct gpu_link link;
	const struct vtab *table; /* borrowed from the config; NULL: none */
	bool by_ops;              /* priced by ops, not by the roofline */
	struct optab ops;         /* when by_ops */
	const char *gpu;          /* borrowed: the GPU's name, for reports */
};

/* The model on the cloud's replicas (a config's cloud, which must outlive
 * c), in bytes_per_weight, its products at dtype's FLOP rate on the GPU
 * (gpu.h; NULL: FP16), its KV cache in the cloud's kv_dtype: from table when it has
 * points (borrowed), else from measured when not NULL (copied), else as
 * the cloud's pricing says (derived operators or the roofline). */
void cost_init_model(struct cost *c, const struct cfg_cloud *cloud,
		     const struct shape *model, double bytes_per_weight,
		     const struct gpu_dtype *dtype, const struct vtab *table,
		     const struct optab *measured);
/* The target: /cloud/model and the table the config read, if any. */
void cost_init(struct cost *c, const struct cfg_cloud *cloud);
/* A draft model on the cloud's replicas (cloud_spec: d, which must outlive
 * c), its products in FP16: its passes run inside the target's iteration
 * (the proposer steps of one engine step), so they pay no fixed overhead
 * of their own (a measured table keeps what it measured). */
void cost_init_draft(struct cost *c, const struct cfg_cloud *cloud,
		     const struct cfg_draft *d);

/* Seconds of one iteration; bytes and flops moved (roofline terms, for
 * MBU and MFU) are stored when the pointers are not NULL. */
double cost_iter_s(const struct cost *c, const struct cost_batch *b,
		   double *bytes, double *flops);

/* A batch from a table (b->tokens >= 1): its verify time, interpolated in
 * tokens and the batch's mean cached context and extrapolated in tokens
 * past the last row; where the table has a prefill grid, the share of the
 * batch's tokens that compute no logits (a prompt's rows before its last)
 * priced from that grid, the rest from the verify one. */
double cost_table_batch_s(const struct vtab *t, const struct cost_batch *b);

/* What prices c's iterations, for reports (borrowed from c, or static),
 * and its kind in a word: "measured", "derived", "roofline" or "verify
 * table" (static). */
const char *cost_pricing(const struct cost *c);
const char *cost_pricing_kind(const struct cost *c);

/* The all-reduce share of cost_iter_s for tokens (0 at tp 1). */
double cost_allreduce_s(const struct cost *c, long tokens);

#endif
