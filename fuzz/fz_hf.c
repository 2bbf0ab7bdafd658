/* fz_hf.c: Hugging Face model folders (llama_load_hf, models/llama.h). An
 * input that starts with '{' is config.json, a NUL byte, then
 * model.safetensors; any other is model.safetensors beside a fixed tiny
 * config. A model that loads and is small also runs one token forward. */
#include "fz.h"

#include "llama.h"

static const char fz_hf_config[] =
	"{\"hidden_size\": 8, \"intermediate_size\": 16, \"num_hidden_layers\": 1,"
	" \"num_attention_heads\": 2, \"num_key_value_heads\": 1,"
	" \"vocab_size\": 16, \"max_position_embeddings\": 32,"
	" \"tie_word_embeddings\": true}\n";

static int fz_hf(const uint8_t *data, size_t size)
{
	const uint8_t *nul = size && data[0] == '{' ? memchr(data, 0, size)
						   : NULL;
	struct llama m;
	struct err e;
	const struct llama_config *c = &m.c;

	if (nul) {
		fz_put("config.json", data, (size_t)(nul - data));
		fz_put("model.safetensors", nul + 1, size - (size_t)(nul - data) - 1);
	} else {
		fz_put_text("config.json", fz_hf_config);
		fz_put("model.safetensors", data, size);
	}
	if (llama_load_hf(&m, fz_dir(), &e) < 0)
		return -1;
	if ((double)c->n_layers * c->seq_len * c->dim <= 1 << 20 &&
	    (double)c->n_heads * c->seq_len <= 1 << 20) {
		struct llama_state st;
		float *logits = xmalloc(sizeof(float) * (size_t)c->vocab);
		int tok = c->vocab > 1;

		llama_state_init(&st, c, 1);
		llama_forward(&m, &st, &tok, 1, 0, logits);
		llama_state_release(&st);
		free(logits);
	}
	llama_release(&m);
	return 0;
}

FZ_TARGET(fz_hf)
