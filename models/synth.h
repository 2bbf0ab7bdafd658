/* synth.h: models with random weights of a named shape, for timing shapes
 * whose weights are not here. Their outputs mean nothing; their bytes and
 * arithmetic are those of the real model in the same format. */
#ifndef HS_SYNTH_H
#define HS_SYNTH_H

#include <stdint.h>

#include "llama.h"
#include "mload.h"

/* Builds m (released with llama_release) of config c in format q from
 * seed. Fails, saying why, for GPTQ (it needs trained weights) and when the
 * model and a KV cache of c->seq_len positions would not fit in 85% of the
 * machine's memory. */
int synth_llama(struct llama *m, const struct llama_config *c,
		const struct quant *q, uint64_t seed, struct err *e);

/* Bytes synth_llama allocates for c in q, with one KV cache of seq_len. */
double synth_bytes(const struct llama_config *c, const struct quant *q);

/* Fills positions [0, upto) of st's KV cache with random values, as if a
 * prompt of upto tokens had been run (for timing a step at that context). */
void synth_cache(struct llama_state *st, const struct llama_config *c,
		 int upto, uint64_t seed);

#endif
