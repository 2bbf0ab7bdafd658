/* gload.h: a Llama model and its tokenizer from a GGUF file (llama.cpp's
 * format), the weights dequantised exactly to FP32 (ggq.h). */
#ifndef HS_GLOAD_H
#define HS_GLOAD_H

#include "llama.h"
#include "tok.h"

/* Loads general.architecture "llama": the config from llama.* metadata,
 * every tensor's shape checked against it (a tensor missing, of another
 * shape, or one a Llama does not have is an error naming the file and the
 * tensor), the classifier tied to the embeddings when the file has no
 * output.weight. Q and K rows are in the order llama.cpp's converter
 * writes (each head's rotary pairs adjacent), so RoPE rotates adjacent
 * pairs. The tokenizer as tok_load_gguf. On error nothing is left to
 * release. */
int llama_load_gguf(struct llama *m, struct tok *t, const char *path,
		    struct err *e);

#endif
