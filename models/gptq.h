/* gptq.h: GPTQ-style quantisation (Frantar et al., 2022) of a model's
 * layers into the W4A16 (or W4A4) format of kernels/q4.h (models/gptq.c). */
#ifndef HS_GPTQ_H
#define HS_GPTQ_H

#include "llama.h"
#include "q4.h"

/* Quantises every linear layer of m's blocks (not the classifier, which
 * keeps its precision) to W4A16 or W4A4 in groups of `group`: column by
 * column, each column's rounding error is spread over the columns not yet
 * quantised through the inverse Hessian of the layer's inputs, H = sum x
 * x^T over the calibration tokens (calib[0..n), run through the FP32
 * model). */
void gptq_quantize(struct llama *m, enum lin_format f, int group,
		   enum q4_kind kind, const int *calib, int n);

/* One layer: quantises l's FP32 weights (which it changes: they absorb the
 * error compensation) into out, given h, the k x k input Hessian with its
 * lower triangle filled (it is overwritten). */
void gptq_layer(struct linear *l, double *h, int group, enum q4_kind kind,
		struct q4_matrix *out);

#endif
