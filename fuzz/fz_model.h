/* fz_model.h: what the model-loader targets do with a model that loaded:
 * one token's forward pass when the model is small enough to run in a
 * fuzzing iteration, then release. */
#ifndef HS_FZ_MODEL_H
#define HS_FZ_MODEL_H

#include <stdlib.h>

#include "llama.h"
#include "mem.h"

static inline void fz_model_use(struct llama *m)
{
	const struct llama_config *c = &m->c;

	if ((double)c->n_layers * c->seq_len * c->dim <= 1 << 20 &&
	    (double)c->n_heads * c->seq_len <= 1 << 20) {
		struct llama_state st;
		float *logits = xmalloc(sizeof(float) * (size_t)c->vocab);
		int tok = c->vocab > 1;

		llama_state_init(&st, c, 1);
		llama_forward(m, &st, &tok, 1, 0, logits);
		llama_state_release(&st);
		free(logits);
	}
	llama_release(m);
}

#endif
