/* fz_shape.c: a model's shape from its description (shape_load,
 * models/shape.h): an input that starts with "GGUF" is a GGUF file, any
 * other a config.json. A shape that loads is counted as the roofline
 * counts it. */
#include "fz.h"

#include "shape.h"

static int fz_shape(const uint8_t *data, size_t size)
{
	bool gguf = size >= 4 && !memcmp(data, "GGUF", 4);
	const char *path = fz_put(gguf ? "m.gguf" : "config.json", data, size);
	int gemm[SHAPE_GEMMS][2];
	struct shape s;
	struct err e;

	if (shape_load(&s, path, &e) < 0)
		return -1;
	(void)shape_params(&s);
	(void)shape_params_read(&s, 7);
	(void)shape_kv_elems_per_token(&s);
	(void)shape_gemms(&s, gemm);
	return 0;
}

FZ_TARGET(fz_shape)
