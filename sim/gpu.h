/* gpu.h: datasheet constants of the GPUs the roofline knows by name. */
#ifndef HS_GPU_H
#define HS_GPU_H

struct gpu_preset {
	const char *name;
	double mem_bw_Bps;  /* peak HBM/GDDR bandwidth, bytes per second */
	double fp16_flops;  /* peak dense FP16 tensor-core FLOP/s */
	double mem_bytes;   /* device memory */
	const char *source;
};

/* The named preset, or NULL. Borrowed from a static table. */
const struct gpu_preset *gpu_preset_find(const char *name);
const char *const *gpu_preset_names(void); /* NULL-terminated */

#endif
