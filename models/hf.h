/* hf.h: Hugging Face Llama checkpoints into a struct llama (models/hf.c). */
#ifndef HS_HF_H
#define HS_HF_H

#include "err.h"
#include "llama.h"

/* Loads a Hugging Face LlamaForCausalLM folder: config.json and
 * model.safetensors (F32, F16 or BF16; tied or separate lm_head), every
 * tensor's shape checked against the config; its tokenizer.json is tok's
 * (tok_load_hf). 0, or -1 with a message naming the file and what is
 * wrong. */
int hf_load(struct llama *m, const char *dir, struct err *e);

#endif
