/* q8.c: the W8A16 format and its reference kernel, by definition.
 *
 * A row is ngroups blocks of 32 weights (row_bytes = 34 ngroups; the
 * last block zero-padded past k), each w = scale q with |q| <= 127; the
 * reference kernel reads exactly that, in FP32, so the fast kernels are
 * checked against it. */
#include "q8.h"
#include "q4.h"

#include "err.h"
#include "mem.h"
#include "f16.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void q8_init(struct q8_matrix *m, int n, int k)
{
	HS_ASSERT(n >= 1 && k >= 1);
	m->n = n;
	m->k = k;
	m->ngroups = (k + 31) / 32;
	m->row_bytes = (size_t)m->ngroups * sizeof(struct q8_block);
	m->data = xcalloc64(m->row_bytes * (size_t)n);
}

void q8_release(struct q8_matrix *m)
{
	free(m->data);
	memset(m, 0, sizeof(*m));
}

static struct q8_block *block_at(const struct q8_matrix *m, int row, int g)
{
	return (struct q8_block *)(m->data + (size_t)row * m->row_bytes) + g;
}

void q8_quantize(struct q8_matrix *m, const float *w)
{
	for (int r = 0; r < m->n; r++) {
		for (int g = 0; g < m->ngroups; g++) {
			struct q8_block *b = block_at(m, r, g);
			const float *x = w + (size_t)r * m->k + (size_t)g * 32;
			int len = m->k - g * 32 < 32 ? m->k - g * 32 : 32;
			float amax = 0, s;

			for (int j = 0; j < len; j++)
				amax = q4_amax(amax, x[j]);
			b->scale = f16_from_f32(amax / 127);
			s = f16_to_f32(b->scale);
			for (int j = 0; j < 32; j++) {
				float q = j < len && s > 0 ? q4_round(x[j] / s) : 0;

				b->q[j] = (int8_t)(q < -127 ? -127 : q > 127 ? 127 : q);
			}
		}
	}
}

void q8_dequantize(const struct q8_matrix *m, float *w)
{
	for (int r = 0; r < m->n; r++)
		for (int c = 0; c < m->k; c++) {
			const struct q8_block *b = block_at(m, r, c / 32);

			w[(size_t)r * m->k + c] = f16_to_f32(b->scale) * b->q[c % 32];
		}
}

void q8_gemm_ref(const struct q8_matrix *w, const uint16_t *x, int m, float *y,
		 int r0, int r1)
{
	for (int r = r0; r < r1; r++)
		for (int i = 0; i < m; i++) {
			float acc = 0;

			for (int c = 0; c < w->k; c++) {
				const struct q8_block *b = block_at(w, r, c / 32);

				acc += f16_to_f32(b->scale) * b->q[c % 32] *
				       f16_to_f32(x[(size_t)i * w->k + c]);
			}
			y[(size_t)i * w->n + r] = acc;
		}
}
