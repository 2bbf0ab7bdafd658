/* q4.c: the W4A16 format by definition: quantisers, code access, and the
 * scalar reference every other kernel is checked against. */
#include "q4.h"

#include "err.h"
#include "mem.h"
#include "f16.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void q4_init(struct q4_matrix *m, int n, int k, int g)
{
	HS_ASSERT(n >= 1 && k >= 1 && (g == 32 || g == 64 || g == 128));
	m->n = n;
	m->k = k;
	m->group = g;
	m->ngroups = (k + g - 1) / g;
	m->span_bytes = q4_span_bytes(g);
	m->row_bytes = (size_t)m->ngroups * (Q4_HEAD_BYTES + (size_t)g / 2);
	m->data = xcalloc64(m->row_bytes * (size_t)n);
}

void q4_release(struct q4_matrix *m)
{
	free(m->data);
	memset(m, 0, sizeof(*m));
}

/* Group grp of a row: its head, its codes */
static uint8_t *group_head(const struct q4_matrix *m, int row, int grp)
{
	return m->data + (size_t)row * m->row_bytes + q4_head_at(m, grp);
}

static uint8_t *group_codes(const struct q4_matrix *m, int row, int grp)
{
	return m->data + (size_t)row * m->row_bytes + q4_codes_at(m, grp);
}

int q4_code(const struct q4_matrix *m, int row, int col)
{
	return q4_group_code(group_codes(m, row, col / m->group), col % m->group);
}

void q4_set(struct q4_matrix *m, int row, int col, int code)
{
	uint8_t *q = group_codes(m, row, col / m->group);
	size_t byte;
	int shift;

	HS_ASSERT(code >= 0 && code <= 15);
	q4_where(col % m->group, &byte, &shift);
	q[byte] = (uint8_t)((q[byte] & ~(15 << shift)) | code << shift);
}

static void header(const struct q4_matrix *m, int row, int grp, float *s,
		   float *b)
{
	struct q4_head h;

	memcpy(&h, group_head(m, row, grp), sizeof(h));
	*s = f16_to_f32(h.scale);
	*b = f16_to_f32(h.bias);
}

/* G codes (one a byte, in column order) into a group's G / 2 bytes, as q4.h
 * lays them: byte 4l + b of a chunk holds weights 4(2b) + l (low nibble)
 * and 4(2b + 1) + l (high) */
static void pack_codes(const uint8_t *cq, int G, uint8_t *q)
{
	for (int c = 0; c < G / 32; c++)
		for (int i = 0; i < 16; i++) {
			const uint8_t *e = cq + 32 * c + 8 * (i % 4) + i / 4;

			q[16 * c + i] = (uint8_t)(e[0] | e[4] << 4);
		}
}

struct q4_head q4_group_head(const float *x, int len, enum q4_kind kind)
{
	float lo = x[0], hi = x[0], amax = 0;

	/* comparisons, not fminf and fmaxf (calls): x is finite */
	for (int j = 0; j < len; j++) {
		lo = x[j] < lo ? x[j] : lo;
		hi = x[j] > hi ? x[j] : hi;
		amax = q4_amax(amax, x[j]);
	}
	return q4_head_of(lo, hi, amax, kind, f16_from_f32, f16_to_f32);
}

void q4_quantize_group(struct q4_matrix *m, int r, int g, const float *x,
		       enum q4_kind kind)
{
	const int len = q4_group_len(m, g);
	const struct q4_head h = q4_group_head(x, len, kind);
	const float s = f16_to_f32(h.scale), b = f16_to_f32(h.bias);
	uint8_t cq[128] = { 0 }; /* the codes, one a byte (0 past len) */

	memcpy(group_head(m, r, g), &h, sizeof(h));
	if (s > 0)
		for (int j = 0; j < len; j++) {
			float c = q4_round((x[j] - b) / s);

			/* a NaN (weights beyond FP16's range) to 0 */
			cq[j] = (uint8_t)(c > 0 ? (c < 15 ? c : 15) : 0);
		}
	pack_codes(cq, m->group, group_codes(m, r, g));
}

void q4_quantize(struct q4_matrix *m, const float *w, enum q4_kind kind)
{
	for (int r = 0; r < m->n; r++, w += m->k)
		for (int g = 0; g < m->ngroups; g++)
			q4_quantize_group(m, r, g, w + (size_t)g * m->group,
					  kind);
}

void q4_dequantize(const struct q4_matrix *m, float *w)
{
	for (int r = 0; r < m->n; r++)
		for (int g = 0; g < m->ngroups; g++) {
			const uint8_t *q = group_codes(m, r, g);
			const int c0 = g * m->group;
			const int len = q4_group_len(m, g);
			float s, b;

			header(m, r, g, &s, &b);
			for (int j = 0; j < len; j++)
				w[(size_t)r * m->k + c0 + j] =
					s * (float)q4_group_code(q, j) + b;
		}
}

void q4_gemm_ref(const struct q4_matrix *w, const uint16_t *x, int m, float *y,
		 int r0, int r1)
{
	for (int r = r0; r < r1; r++) {
		for (int i = 0; i < m; i++) {
			float acc = 0;

			for (int c = 0; c < w->k; c++) {
				float s, b;

				header(w, r, c / w->group, &s, &b);
				acc += (s * (float)q4_code(w, r, c) + b) *
				       f16_to_f32(x[(size_t)i * w->k + c]);
			}
			y[(size_t)i * w->n + r] = acc;
		}
	}
}

float q4_a8_block(const uint16_t *x, int n, int8_t *q)
{
	float amax = 0, inv;

	for (int c = 0; c < n; c++)
		amax = q4_amax(amax, f16_to_f32(x[c]));
	inv = amax > 0 ? 127 / amax : 0;
	for (int c = 0; c < Q4_A8_BLOCK; c++) {
		float v = c < n ? f16_to_f32(x[c]) * inv : 0;

		/* to nearest, halves away from zero (inline, where lrintf is
		 * a call) */
		q[c] = (int8_t)(v >= 0 ? (int)(v + 0.5f) : -(int)(0.5f - v));
	}
	return amax / 127;
}

void q4_a8_quantize(const uint16_t *x, int k, int8_t *q, float *unit)
{
	const int B = Q4_A8_BLOCK;

	for (int j = 0; j * B < k; j++)
		unit[j] = q4_a8_block(x + j * B, k - j * B < B ? k - j * B : B,
				      q + j * B);
}

void q4_gemm_a8_ref(const struct q4_matrix *w, const uint16_t *x, int m,
		    float *y, int r0, int r1)
{
	const int B = Q4_A8_BLOCK;
	int8_t *q = xmalloc((size_t)w->ngroups * w->group);
	float *unit = xmalloc(sizeof(float) * (size_t)w->ngroups * w->group / B);

	for (int i = 0; i < m; i++) {
		const uint16_t *xi = x + (size_t)i * w->k;

		q4_a8_quantize(xi, w->k, q, unit);
		for (int r = r0; r < r1; r++) {
			float acc = 0;

			for (int g = 0; g < w->ngroups; g++) {
				int c0 = g * w->group;
				int c1 = c0 + w->group < w->k ? c0 + w->group : w->k;
				float part = 0;
				double sum = 0;
				float s, b;

				header(w, r, g, &s, &b);
				for (int j = c0; j < c1; j += B) {
					int32_t dot = 0;

					for (int c = j; c < c1 && c < j + B; c++)
						dot += q4_code(w, r, c) * q[c];
					part += unit[j / B] * (float)dot;
				}
				for (int c = c0; c < c1; c++)
					sum += f16_to_f32(xi[c]);
				acc += s * part + b * (float)sum;
			}
			y[(size_t)i * w->n + r] = acc;
		}
	}
	free(q);
	free(unit);
}

void q4_quantize_activations(uint16_t *x, int m, int k)
{
	for (int i = 0; i < m; i++) {
		uint16_t *row = x + (size_t)i * k;
		float amax = 0, s;

		for (int c = 0; c < k; c++)
			amax = q4_amax(amax, f16_to_f32(row[c]));
		s = amax / 7;
		for (int c = 0; c < k; c++) {
			float q = s > 0 ? q4_round(f16_to_f32(row[c]) / s) : 0;

			q = q < -8 ? -8 : q > 7 ? 7 : q;
			row[c] = f16_from_f32(q * s);
		}
	}
}
