/* gpu.c: the preset tables (GPUs, links, number formats). Bandwidth,
 * dense FP16 and FP8 (half the datasheet's sparse figure) and memory are each
 * GPU's datasheet figures (tensor cores, no sparsity); power is the
 * datasheet's board limit. Idle power and prices are not on datasheets:
 * each preset's market string says where its come from; a price not
 * found with a date is 0 (not known), and a config gives it. */
#include "gpu.h"

#include <stddef.h>
#include <string.h>

#define NV "NVIDIA "
/* Idle power is what nvidia-smi (rocm-smi) shows with no work and no memory
 * in use, as published in logs and issues; prices are on-demand, dated. */
#define RUNPOD "; price: RunPod secure cloud on-demand, runpod.io/pricing " \
	"as read 2026-09-25 (transcribed in github.com/tgarg01/silybench-data," \
	" derived/csv/gpu_prices.csv)"
static const struct gpu_spec presets[] = {
	{ "H100-SXM", 3.35e12, 989.4e12, 1978.9e12, 80e9, 70, 700, 3.49, "nvlink4",
	  NV "H100 Tensor Core GPU datasheet (SXM5): 3.35 TB/s, FP16 1,979 "
	  "TFLOPS and FP8 3,958 TFLOPS with sparsity, 80 GB, up to 700 W",
	  "idle: nvidia-smi at 0% use, 1 MiB in use, a 4-GPU node read 70, "
	  "70, 73, 72 W (driver 560.35.05, 2025-11-09), single GPUs 67-71 W" RUNPOD },
	{ "H100-PCIe", 2.0e12, 756.5e12, 1513e12, 80e9, 48, 350, 2.89, "pcie5",
	  NV "H100 Tensor Core GPU datasheet (PCIe): 2 TB/s, FP16 1,513 TFLOPS "
	  "and FP8 3,026 TFLOPS with sparsity, 80 GB, 300-350 W",
	  "idle: nvidia-smi at 0% use, 1 MiB in use, 46 and 49 W" RUNPOD },
	{ "H200", 4.8e12, 989.4e12, 1978.9e12, 141e9, 75, 700, 4.59, "nvlink4",
	  NV "H200 Tensor Core GPU datasheet (SXM): 4.8 TB/s, FP16 1,979 "
	  "TFLOPS and FP8 3,958 TFLOPS with sparsity, 141 GB, up to 700 W",
	  "idle: nvidia-smi at 0% use, 0-1 MiB in use, 73 and 76 W" RUNPOD },
	{ "B200", 8.0e12, 2.25e15, 4.5e15, 180e9, 137, 1000, 6.79, "nvlink5",
	  NV "HGX B200 datasheet, per GPU: 8 TB/s, FP16 4.5 PFLOPS and FP8 9 "
	  "PFLOPS with sparsity, 1,440 GB over 8 GPUs, 1,000 W",
	  "idle: \"air cooled B200 idle power draw 137W\", "
	  "github.com/ROCm/legacy-rocm-build/issues/5219 (2025-08-21); "
	  "nvidia-smi elsewhere 136-141 W" RUNPOD },
	{ "A100-80G", 2.039e12, 312e12, 0, 80e9, 62, 400, 1.59, "nvlink3",
	  NV "A100 Tensor Core GPU datasheet (80GB SXM): 2,039 GB/s, FP16 312 "
	  "TFLOPS, no FP8, no FP8, 400 W",
	  "idle: nvidia-smi at 0% use, 0-4 MiB in use, 62, 62, 65 W at the "
	  "400 W cap" RUNPOD },
	{ "A100-40G", 1.555e12, 312e12, 0, 40e9, 50, 400, 1.99, "nvlink3",
	  NV "A100 Tensor Core GPU datasheet (40GB SXM): 1,555 GB/s, FP16 312 "
	  "TFLOPS, 400 W",
	  "idle: nvidia-smi at 0% use, 0-7 MiB in use, 42-57 W (median of "
	  "five 50 W); price: Lambda on-demand 1x A100 SXM 40GB, "
	  "lambda.ai/pricing as read 2026-09-25" },
	{ "A40", 696e9, 149.7e12, 0, 48e9, 0, 300, 0, "pcie4",
	  NV "A40 datasheet: 696 GB/s, FP16 tensor 149.7 TFLOPS (299.4 with "
	  "sparsity), no FP8, 48 GB GDDR6, 300 W",
	  "no idle power or dated price found: give them in the config" },
	{ "L40S", 864e9, 362.05e12, 733e12, 48e9, 33, 350, 1.09, "pcie4",
	  NV "L40S datasheet: 864 GB/s, FP16 tensor 362.05 TFLOPS (733 with "
	  "sparsity), FP8 733 TFLOPS (1,466 with sparsity), 48 GB GDDR6, 350 W",
	  "idle: nvidia-smi in P8 at 0% use, 22-36 W (median of five 33 W)" RUNPOD },
	{ "L4", 300e9, 121e12, 242.5e12, 24e9, 13, 72, 0, "pcie4",
	  NV "L4 Tensor Core GPU datasheet: 300 GB/s, FP16 242 TFLOPS and "
	  "FP8 485 TFLOPS with sparsity, 24 GB, 72 W",
	  "idle: nvidia-smi in P8 at 0% use, 11-16 W (median of six 12.5 "
	  "W); no dated price found" },
	{ "RTX-4090", 1008e9, 165.2e12, 330.3e12, 24e9, 16, 450, 0.74, "pcie4",
	  NV "Ada GPU architecture whitepaper, GeForce RTX 4090: 1,008 GB/s, "
	  "FP16 tensor with FP32 accumulate 165.2 TFLOPS, FP8 330.3, 24 GB, 450 W",
	  "idle: nvidia-smi in P8, no display, 5-22 W (median 16 W)" RUNPOD },
	{ "MI300X", 5.3e12, 1307.4e12, 2614.9e12, 192e9, 160, 750, 2.59, "xgmi",
	  "AMD Instinct MI300X data sheet: 5.3 TB/s, FP16 1,307.4 TFLOPS "
	  "and FP8 2,614.9 (dense), 192 GB HBM3, 750 W",
	  "idle: rocm-smi socket power at 0% VRAM, 154-176 W; price: "
	  "DigitalOcean list price, 2026-10-07" },
};
#define N_PRESETS (sizeof(presets) / sizeof(presets[0]))

/* Latencies from NCCL's tuning model (src/graph/tuning.cc, ring, LL
 * protocol): 6.6 us a collective, 0.6 us a step over NVLink, 1.0 us over
 * PCIe; xGMI taken as PCIe's. */
#define NCCL_RING "; latency from NCCL's tuning model (ring, LL)"
static const struct gpu_link links[] = {
	{ "nvlink3", 300e9, 6.6e-6, 0.6e-6,
	  NV "A100 datasheet: NVLink 600 GB/s (both directions)" NCCL_RING },
	{ "nvlink4", 450e9, 6.6e-6, 0.6e-6,
	  NV "H100 datasheet: NVLink 900 GB/s (both directions)" NCCL_RING },
	{ "nvlink5", 900e9, 6.6e-6, 0.6e-6,
	  NV "HGX B200 datasheet: NVLink 1.8 TB/s a GPU (both directions)"
	  NCCL_RING },
	{ "pcie4", 31.5e9, 6.6e-6, 1.0e-6,
	  "PCI Express 4.0 x16: 16 GT/s x 16 lanes, 128b/130b" NCCL_RING },
	{ "pcie5", 63.0e9, 6.6e-6, 1.0e-6,
	  "PCI Express 5.0 x16: 32 GT/s x 16 lanes, 128b/130b" NCCL_RING },
	{ "xgmi", 448e9, 6.6e-6, 1.0e-6,
	  "AMD Instinct MI300X data sheet: Infinity Fabric 896 GB/s a GPU "
	  "(both directions)" NCCL_RING },
};
#define N_LINKS (sizeof(links) / sizeof(links[0]))

static const struct gpu_dtype dtypes[] = {
	{ "fp16", 2, 0, "FP16 or BF16" },
	{ "fp8", 1, 1, "FP8 (E4M3) with a per-tensor scale, as vLLM's "
	  "fp8 weights and kv_cache_dtype fp8" },
	{ "int4", 0.53125, 0, "4-bit integers with an FP16 scale and zero a "
	  "group of 128 (4.25 bits an element; AWQ/GPTQ layout), widened to "
	  "FP16 for the products" },
};
#define N_DTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

/* The row of tab (n rows of size bytes, each starting with its name, a
 * char array) called name, or NULL; and the names, NULL-terminated, into
 * names (n + 1). The tables are read through these. */
_Static_assert(offsetof(struct gpu_spec, name) == 0, "a preset starts with "
	       "its name");
_Static_assert(offsetof(struct gpu_link, name) == 0, "a link starts with its "
	       "name");
_Static_assert(offsetof(struct gpu_dtype, name) == 0, "a format starts "
	       "with its name");

static const void *row_named(const void *tab, size_t n, size_t size,
			     const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp((const char *)tab + i * size, name))
			return (const char *)tab + i * size;
	return NULL;
}

static const char *const *row_names(const char **names, const void *tab,
				    size_t n, size_t size)
{
	if (!names[0])
		for (size_t i = 0; i < n; i++)
			names[i] = (const char *)tab + i * size;
	return names;
}

const struct gpu_spec *gpu_preset_find(const char *name)
{
	return row_named(presets, N_PRESETS, sizeof(*presets), name);
}

const char *const *gpu_preset_names(void)
{
	static const char *names[N_PRESETS + 1];

	return row_names(names, presets, N_PRESETS, sizeof(*presets));
}

const struct gpu_link *gpu_link_find(const char *name)
{
	return row_named(links, N_LINKS, sizeof(*links), name);
}

const char *const *gpu_link_names(void)
{
	static const char *names[N_LINKS + 1];

	return row_names(names, links, N_LINKS, sizeof(*links));
}

const struct gpu_dtype *gpu_dtype_find(const char *name)
{
	return row_named(dtypes, N_DTYPES, sizeof(*dtypes), name);
}

const char *const *gpu_dtype_names(void)
{
	static const char *names[N_DTYPES + 1];

	return row_names(names, dtypes, N_DTYPES, sizeof(*dtypes));
}

double gpu_dtype_flops(const struct gpu_dtype *d, const struct gpu_spec *g)
{
	return d && d->fp8_math && g->fp8_flops > 0 ? g->fp8_flops
						    : g->fp16_flops;
}

double gpu_allreduce_s(const struct gpu_link *l, int tp, double bytes)
{
	if (tp <= 1)
		return 0;
	return l->latency_s + 2.0 * (tp - 1) * l->step_s +
	       2.0 * (tp - 1) / tp * bytes / l->bw_Bps;
}
