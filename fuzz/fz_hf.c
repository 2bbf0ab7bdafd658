/* fz_hf.c: Hugging Face model folders (hf_load, models/hf.h). An
 * input that starts with '{' is config.json, a NUL byte, then
 * model.safetensors; any other is model.safetensors beside a fixed tiny
 * config. A model that loads and is small also runs one token forward. */
#include "fz.h"

#include "fz_model.h"
#include "hf.h"

static const char fz_hf_config[] =
	"{\"model_type\": \"llama\", \"hidden_size\": 8,"
	" \"intermediate_size\": 16, \"num_hidden_layers\": 1,"
	" \"num_attention_heads\": 2, \"num_key_value_heads\": 1,"
	" \"vocab_size\": 16, \"max_position_embeddings\": 32,"
	" \"tie_word_embeddings\": true}\n";

static int fz_hf(const uint8_t *data, size_t size)
{
	const uint8_t *nul = size && data[0] == '{' ? memchr(data, 0, size)
						   : NULL;
	struct llama m;
	struct err e;

	if (nul) {
		fz_put("config.json", data, (size_t)(nul - data));
		fz_put("model.safetensors", nul + 1, size - (size_t)(nul - data) - 1);
	} else {
		fz_put_text("config.json", fz_hf_config);
		fz_put("model.safetensors", data, size);
	}
	if (hf_load(&m, fz_dir(), &e) < 0)
		return -1;
	fz_model_use(&m);
	return 0;
}

FZ_TARGET(fz_hf)
