/* gpu.c: the preset tables. Bandwidth, dense FP16 and memory are each
 * GPU's datasheet figures (tensor cores, no sparsity); power is the
 * datasheet's board limit. Idle power and prices are not on datasheets:
 * presets leave them 0 (not known) and a config gives them. */
#include "gpu.h"

#include <stddef.h>
#include <string.h>

#define NV "NVIDIA "
static const struct gpu_spec presets[] = {
	{ "H100-SXM", 3.35e12, 989.4e12, 80e9, 0, 700, 0, "nvlink4",
	  NV "H100 Tensor Core GPU datasheet (SXM5): 3.35 TB/s, FP16 1,979 "
	  "TFLOPS with sparsity, 80 GB, up to 700 W" },
	{ "H100-PCIe", 2.0e12, 756.5e12, 80e9, 0, 350, 0, "pcie5",
	  NV "H100 Tensor Core GPU datasheet (PCIe): 2 TB/s, FP16 1,513 TFLOPS "
	  "with sparsity, 80 GB, 300-350 W" },
	{ "H200", 4.8e12, 989.4e12, 141e9, 0, 700, 0, "nvlink4",
	  NV "H200 Tensor Core GPU datasheet (SXM): 4.8 TB/s, FP16 1,979 "
	  "TFLOPS with sparsity, 141 GB, up to 700 W" },
	{ "B200", 8.0e12, 2.25e15, 180e9, 0, 1000, 0, "nvlink5",
	  NV "HGX B200 datasheet, per GPU: 8 TB/s, FP16 4.5 PFLOPS with "
	  "sparsity, 1,440 GB over 8 GPUs, 1,000 W" },
	{ "A100-80G", 2.039e12, 312e12, 80e9, 0, 400, 0, "nvlink3",
	  NV "A100 Tensor Core GPU datasheet (80GB SXM): 2,039 GB/s, FP16 312 "
	  "TFLOPS, 400 W" },
	{ "A100-40G", 1.555e12, 312e12, 40e9, 0, 400, 0, "nvlink3",
	  NV "A100 Tensor Core GPU datasheet (40GB SXM): 1,555 GB/s, FP16 312 "
	  "TFLOPS, 400 W" },
	{ "L40S", 864e9, 362.05e12, 48e9, 0, 350, 0, "pcie4",
	  NV "L40S datasheet: 864 GB/s, FP16 tensor 362.05 TFLOPS (733 with "
	  "sparsity), 48 GB GDDR6, 350 W" },
	{ "L4", 300e9, 121e12, 24e9, 0, 72, 0, "pcie4",
	  NV "L4 Tensor Core GPU datasheet: 300 GB/s, FP16 242 TFLOPS with "
	  "sparsity, 24 GB, 72 W" },
	{ "RTX-4090", 1008e9, 165.2e12, 24e9, 0, 450, 0, "pcie4",
	  NV "Ada GPU architecture whitepaper, GeForce RTX 4090: 1,008 GB/s, "
	  "FP16 tensor with FP32 accumulate 165.2 TFLOPS, 24 GB, 450 W" },
	{ "MI300X", 5.3e12, 1307.4e12, 192e9, 0, 750, 0, "xgmi",
	  "AMD Instinct MI300X data sheet: 5.3 TB/s, FP16 1,307.4 TFLOPS "
	  "(dense), 192 GB HBM3, 750 W" },
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

/* The row of tab (n rows of size bytes, each starting with its name, a
 * char array) called name, or NULL; and the names, NULL-terminated, into
 * names (n + 1). Both tables are read through these. */
_Static_assert(offsetof(struct gpu_spec, name) == 0, "a preset starts with "
	       "its name");
_Static_assert(offsetof(struct gpu_link, name) == 0, "a link starts with its "
	       "name");

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

double gpu_allreduce_s(const struct gpu_link *l, int tp, double bytes)
{
	if (tp <= 1)
		return 0;
	return l->latency_s + 2.0 * (tp - 1) * l->step_s +
	       2.0 * (tp - 1) / tp * bytes / l->bw_Bps;
}
