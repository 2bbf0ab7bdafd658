/* ggq.h: the tensor types of ggml (the library behind llama.cpp and the
 * GGUF format) and their exact dequantisation to FP32.
 *
 * A row of a tensor is a run of blocks; a block of `block` weights takes
 * `bytes` bytes. Every definition follows ggml's reference dequantisers
 * (ggml-quants.c, dequantize_row_*): FP16 scales are widened to FP32 and
 * each weight is computed in FP32 exactly as written there, so the FP32
 * weights are the ones llama.cpp's reference path sees. */
#ifndef HS_GGQ_H
#define HS_GGQ_H

#include <stddef.h>
#include <stdint.h>

/* ggml's type ids (ggml.h, enum ggml_type): the ones this reader knows.
 * The numbers are the file format's. */
#define GGQ_TYPES(X)                   \
	X(F32, 0, "f32", 1, 4)          \
	X(F16, 1, "f16", 1, 2)          \
	X(Q4_0, 2, "q4_0", 32, 18)      \
	X(Q4_1, 3, "q4_1", 32, 20)      \
	X(Q5_0, 6, "q5_0", 32, 22)      \
	X(Q5_1, 7, "q5_1", 32, 24)      \
	X(Q8_0, 8, "q8_0", 32, 34)      \
	X(Q4_K, 12, "q4_k", 256, 144)   \
	X(Q5_K, 13, "q5_k", 256, 176)   \
	X(Q6_K, 14, "q6_k", 256, 210)   \
	X(BF16, 30, "bf16", 1, 2)

enum ggq_type {
#define X(NAME, ID, STR, BLOCK, BYTES) GGQ_##NAME = ID,
	GGQ_TYPES(X)
#undef X
};

struct ggq_info {
	const char *name; /* "q4_1" */
	int block;        /* weights a block */
	int bytes;        /* bytes a block */
	/* y[0..n) from the blocks at x; n a multiple of block */
	void (*dequant)(const uint8_t *x, float *y, long n);
};

/* The type with file id `id`, or NULL for one this reader does not know
 * (ggml's Q2_K, Q3_K, IQ*, ...). Borrowed, static. */
const struct ggq_info *ggq_find(uint32_t id);

/* Bytes of a row of n weights of type t (n a multiple of t->block). */
size_t ggq_row_bytes(const struct ggq_info *t, long n);

#endif
