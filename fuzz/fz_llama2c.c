/* fz_llama2c.c: llama2.c checkpoints (llama_load_llama2c, models/llama.h);
 * a model that loads and is small also runs one token forward. */
#include "fz.h"

#include "fz_model.h"

static int fz_llama2c(const uint8_t *data, size_t size)
{
	struct llama m;
	struct err e;

	if (llama_load_llama2c(&m, fz_put("model.bin", data, size), &e) < 0)
		return -1;
	fz_model_use(&m);
	return 0;
}

FZ_TARGET(fz_llama2c)
