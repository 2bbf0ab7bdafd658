/* linear.h: a weight matrix of a model layer in one of the storage formats,
 * and y = x W^T through the kernels.
 *
 * FP32 runs through kern_f32_gemm, every output bit for bit kern_dot_f32
 * (the reference forward, whatever the set and the batch); every other
 * format turns the FP32 activations into FP16 (A16) and runs the kernel
 * set given. */
#ifndef HS_LINEAR_H
#define HS_LINEAR_H

#include "kern.h"

#include <stdbool.h>

enum lin_format {
	LIN_F32,
	LIN_F16,
	LIN_W8A16,
	LIN_W4A16,
	LIN_W4A4, /* W4A16 weights, activations quantised per token to 4 bits */
};
#define LIN_NFORMATS (LIN_W4A4 + 1)

/* A format as the tools name and price it: lin_formats[f] describes f. */
struct lin_format_info {
	const char *name;  /* canonical text: "w4a16" */
	const char *alias; /* another spelling taken, or NULL */
	bool grouped;      /* W4: takes a group size, sym/asym and GPTQ */
	double bits;       /* bits a weight, less a W4 group's scale and bias */
	const char *acts;  /* what the kernels multiply the weights by */
};
extern const struct lin_format_info lin_formats[LIN_NFORMATS];

/* The format named s (its name or alias): 0, or -1 where none is. */
int lin_format_find(const char *s, enum lin_format *f);
/* Bits a weight of f takes at group size group: 32, 16, 8.5 (W8A16: an
 * FP16 scale a block of 32), 4 + 32 / group (W4: an FP16 scale and bias a
 * group). */
double lin_format_bits(enum lin_format f, int group);

struct linear {
	enum lin_format format;
	int n, k;            /* outputs, inputs */
	float *f32;          /* (n x k) owned: LIN_F32 */
	uint16_t *f16;       /* (n x k) owned: LIN_F16 */
	struct q8_matrix q8; /* LIN_W8A16 */
	struct q4_matrix q4; /* LIN_W4A16, LIN_W4A4 */
	struct kern_a8w *a8; /* owned, or NULL: q4 packed for one kernel
				set's integer path and its digits over
				panels (lin_pack_a8) */
};

/* Takes ownership of w (n x k, FP32, malloc'd) as FP32 weights. */
void lin_init_f32(struct linear *l, float *w, int n, int k);
/* Weights w (n x k, FP32, borrowed) into l in format f, not LIN_F32
 * (lin_init_f32 takes those): the W4 formats by kern_q4_quantize (kn's
 * quantiser on p's threads; q4_quantize's bytes whatever kn and p), FP16
 * by kern_to_f16. */
void lin_init_from(struct linear *l, const float *w, int n, int k,
		   enum lin_format f, int group, enum q4_kind kind,
		   const struct kern *kn, struct kpool *p);
/* Converts an FP32 layer to another format in place (frees the FP32), as
 * lin_init_from. */
void lin_convert(struct linear *l, enum lin_format f, int group,
		 enum q4_kind kind, const struct kern *kn, struct kpool *p);
void lin_release(struct linear *l);
/* Packs a W4A16 layer's weights once for kn's integer path (kern_a8w_new,
 * on p's threads), which lin_apply then reads instead of packing them at
 * each call, and for kn's exact products where it has dig_run; any
 * other layer, or kn NULL or without an integer path, drops
 * the pack. */
void lin_pack_a8(struct linear *l, const struct kern *kn, struct kpool *p);

/* The weights as FP32 (n x k), whatever the format. Caller frees. */
float *lin_weights(const struct linear *l);

/* y (m x n) = x (m x k) W^T. kn may be NULL for LIN_F32. int8: a W4A16
 * layer takes kn's integer path where kn has one (kn->a8_run: activations
 * quantised to int8 a group, as llama.cpp's products do, so W4A8's
 * accuracy, not W4A16's); the caller decides by m (llama.c: blocks of
 * KERN_A8_MIN_BATCH or more tokens, and decode steps where asked). */
void lin_apply(const struct linear *l, const float *x, int m, float *y,
	       const struct kern *kn, struct kpool *p, bool int8);

#endif
