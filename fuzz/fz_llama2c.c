/* fz_llama2c.c: llama2.c checkpoints (llama_load_llama2c, models/llama.h);
 * a model that loads and is small also runs one token forward. */
#include "fz.h"

#include "llama.h"

static int fz_llama2c(const uint8_t *data, size_t size)
{
	struct llama m;
	struct err e;
	const struct llama_config *c = &m.c;

	if (llama_load_llama2c(&m, fz_put("model.bin", data, size), &e) < 0)
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

FZ_TARGET(fz_llama2c)
