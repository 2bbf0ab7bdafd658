/* f16.c: the FP16 weights' reference kernel (the conversions are inline
 * in f16.h). Weights row-major n x k, activations m x k, y m x n. */
#include "f16.h"

#include <stddef.h>

void f16_gemm_ref(const uint16_t *w, int n, int k, const uint16_t *x, int m,
		  float *y, int r0, int r1)
{
	for (int r = r0; r < r1; r++)
		for (int i = 0; i < m; i++) {
			float acc = 0;

			for (int c = 0; c < k; c++)
				acc += f16_to_f32(w[(size_t)r * k + c]) *
				       f16_to_f32(x[(size_t)i * k + c]);
			y[(size_t)i * n + r] = acc;
		}
}
