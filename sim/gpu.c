/* gpu.c: the preset table (dense FP16, no sparsity, from each datasheet). */
#include "gpu.h"

#include <string.h>

static const struct gpu_preset presets[] = {
	{ "H100-SXM", 3.35e12, 989.4e12, 80e9,
	  "NVIDIA H100 Tensor Core GPU datasheet (SXM5)" },
	{ "H200", 4.8e12, 989.4e12, 141e9,
	  "NVIDIA H200 Tensor Core GPU datasheet (SXM)" },
	{ "A100-80G", 2.039e12, 312e12, 80e9,
	  "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM)" },
	{ "L4", 300e9, 121e12, 24e9, "NVIDIA L4 Tensor Core GPU datasheet" },
};

static const char *const names[] = { "H100-SXM", "H200", "A100-80G", "L4",
				     NULL };

const struct gpu_preset *gpu_preset_find(const char *name)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (!strcmp(presets[i].name, name))
			return &presets[i];
	return NULL;
}

const char *const *gpu_preset_names(void)
{
	return names;
}
