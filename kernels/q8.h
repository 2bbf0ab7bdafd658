/* q8.h: the W8A16 baseline format: blocks of 32 int8 weights with an FP16
 * scale, w = s q; symmetric, round to nearest, s = max|w| / 127. */
#ifndef HS_Q8_H
#define HS_Q8_H

#include <stddef.h>
#include <stdint.h>

struct q8_block {
	uint16_t scale; /* FP16 */
	int8_t q[32];
};
_Static_assert(sizeof(struct q8_block) == 34, "q8 block: 34 bytes");

struct q8_matrix {
	int n, k, ngroups;
	size_t row_bytes;
	uint8_t *data; /* (n x row_bytes) owned */
};

void q8_init(struct q8_matrix *m, int n, int k);
void q8_release(struct q8_matrix *m);
void q8_quantize(struct q8_matrix *m, const float *w);
void q8_dequantize(const struct q8_matrix *m, float *w);
void q8_gemm_ref(const struct q8_matrix *w, const uint16_t *x, int m, float *y,
		 int r0, int r1);

#endif
