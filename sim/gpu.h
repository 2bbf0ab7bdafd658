/* gpu.h: the figures of a GPU and of the link between the GPUs of a
 * replica: presets by name, each from its datasheet, or given in a config
 * (cfg.c reads them into the same structs). */
#ifndef HS_GPU_H
#define HS_GPU_H

struct gpu_spec {
	char name[64];
	double mem_bw_Bps;   /* peak HBM/GDDR bandwidth, bytes per second */
	double fp16_flops;   /* peak dense FP16 tensor FLOP/s (no sparsity) */
	double fp8_flops;    /* peak dense FP8 tensor FLOP/s; 0: no FP8 tensor
				cores (FP8 weights run weight-only at the
				FP16 rate) */
	double mem_bytes;    /* device memory */
	double power_idle_w; /* drawn idle; 0: not known */
	double power_max_w;  /* board power limit (TDP/TBP); 0: not known */
	double usd_per_hour; /* rental price; 0: not given */
	const char *link;    /* static: the link preset its servers use */
	const char *source;  /* static: the datasheet, or NULL (given) */
	const char *market;  /* static: where the idle power and the price
				come from, and the price's date; or NULL */
};

/* The preset a config, a plan or calib takes when none is named */
#define GPU_PRESET_DEFAULT "H100-SXM"

/* The named preset, or NULL. Borrowed from a static table. */
const struct gpu_spec *gpu_preset_find(const char *name);
const char *const *gpu_preset_names(void); /* NULL-terminated */

/* A number format of weights or of the KV cache: its bytes an element
 * (scales included) and whether its matrix products run at the GPU's FP8
 * rate (where it has one) or at FP16 (4-bit weights are widened to FP16:
 * W4A16). A row of gpu.c's table. */
struct gpu_dtype {
	char name[8];
	double bytes;
	int fp8_math;
	const char *meaning; /* static */
};

const struct gpu_dtype *gpu_dtype_find(const char *name); /* or NULL */
const char *const *gpu_dtype_names(void); /* NULL-terminated */
/* The dense FLOP/s one GPU g reaches on weights of format d (NULL:
 * products in FP16). */
double gpu_dtype_flops(const struct gpu_dtype *d, const struct gpu_spec *g);

/* A link between the GPUs of a tensor-parallel replica. A ring all-reduce
 * of B bytes over tp GPUs takes
 *   latency_s + 2 (tp - 1) step_s + 2 (tp - 1) / tp x B / bw_Bps. */
struct gpu_link {
	char name[32];
	double bw_Bps;     /* per direction, one GPU */
	double latency_s;  /* fixed cost of one all-reduce */
	double step_s;     /* added by each of the ring's 2 (tp - 1) steps */
	const char *source; /* static, or NULL (given) */
};

const struct gpu_link *gpu_link_find(const char *name);
const char *const *gpu_link_names(void); /* NULL-terminated */

/* Seconds of one ring all-reduce of bytes over tp GPUs (0 when tp is 1). */
double gpu_allreduce_s(const struct gpu_link *l, int tp, double bytes);

#endif
