/* kern_avx512.c: the W4A16 kernel for AVX-512 (F, VL, BW; compiled with
 * those flags, checked at run time by kern.c). The method is kern_avx2.c's,
 * on 16 lanes: 64 bytes of codes are four chunks, lanes 4j..4j+3 holding the
 * words of chunk j, and one ternary-logic instruction does the and and the
 * or that turn a shifted code into the float 1 + q/16. A group contributes
 * 16 s P + (b - 16 s) SX. */
#include "kern.h"

#include <immintrin.h>
#include <string.h>

#define AND_OR 0xEA /* ternary logic: (a & b) | c */

static inline void codes_to_f(__m512i w, __m512 f[8])
{
	const __m512i mask = _mm512_set1_epi32(0x00780000);
	const __m512i one = _mm512_set1_epi32(0x3F800000);

	/* keep w in a register: folded into each shift as a memory operand,
	 * the codes would be loaded eight times */
	__asm__("" : "+v"(w));
#define STEP(t, shifted)                                                      \
	f[t] = _mm512_castsi512_ps(                                           \
		_mm512_ternarylogic_epi32(shifted, mask, one, AND_OR))
	STEP(0, _mm512_slli_epi32(w, 19));
	STEP(1, _mm512_slli_epi32(w, 15));
	STEP(2, _mm512_slli_epi32(w, 11));
	STEP(3, _mm512_slli_epi32(w, 7));
	STEP(4, _mm512_slli_epi32(w, 3));
	STEP(5, _mm512_srli_epi32(w, 1));
	STEP(6, _mm512_srli_epi32(w, 5));
	STEP(7, _mm512_srli_epi32(w, 9));
#undef STEP
}

/* [s, b] of the block at p */
static inline void header(const uint8_t *p, float *s, float *b)
{
	int32_t h;
	__m128 v;

	memcpy(&h, p, 4);
	v = _mm_cvtph_ps(_mm_cvtsi32_si128(h));
	*s = _mm_cvtss_f32(v);
	*b = _mm_cvtss_f32(_mm_movehdup_ps(v));
}

/* Batch 1, G = 128: one group a vector of codes; registers only. */
static void row1_g128(const struct q4_matrix *w, const struct kern_x *x, int r,
		      float *y)
{
	const uint8_t *row = w->data + (size_t)r * w->row_bytes;
	const float *xp = x->xf;
	__m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
	float corr = 0;

	for (int g = 0; g < w->ngroups; g++, xp += 128) {
		const uint8_t *b = row + (size_t)g * w->block_bytes;
		__m512 f[8], p, q;
		float s, bias;

		PREFETCH(b, 68);
		header(b, &s, &bias);
		codes_to_f(_mm512_loadu_si512(b + 4), f);
		p = _mm512_mul_ps(f[0], _mm512_loadu_ps(xp));
		q = _mm512_mul_ps(f[1], _mm512_loadu_ps(xp + 16));
		p = _mm512_fmadd_ps(f[2], _mm512_loadu_ps(xp + 32), p);
		q = _mm512_fmadd_ps(f[3], _mm512_loadu_ps(xp + 48), q);
		p = _mm512_fmadd_ps(f[4], _mm512_loadu_ps(xp + 64), p);
		q = _mm512_fmadd_ps(f[5], _mm512_loadu_ps(xp + 80), q);
		p = _mm512_fmadd_ps(f[6], _mm512_loadu_ps(xp + 96), p);
		q = _mm512_fmadd_ps(f[7], _mm512_loadu_ps(xp + 112), q);
		acc0 = _mm512_fmadd_ps(_mm512_set1_ps(s), p, acc0);
		acc1 = _mm512_fmadd_ps(_mm512_set1_ps(s), q, acc1);
		corr += (bias - 16 * s) * x->sx[g];
	}
	y[r] = 16 * _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) + corr;
}

/* Any G, m tokens: per quad of chunks, the scale of each lane's group. */
static void row(const struct q4_matrix *w, const struct kern_x *x, int r,
		float *y)
{
	const uint8_t *rowp = w->data + (size_t)r * w->row_bytes;
	const int g = w->group, m = x->m, chunks = w->ngroups * (g / 32);
	const __m512i lane_chunk = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1,
						    1, 1, 0, 0, 0, 0);
	__m512 acc[16];
	float corr[16];

	for (int i0 = 0; i0 < m; i0 += 16) {
		int mi = m - i0 < 16 ? m - i0 : 16;

		for (int i = 0; i < mi; i++) {
			acc[i] = _mm512_setzero_ps();
			corr[i] = 0;
		}
		for (int c = 0; c < chunks; c += 4) {
			float s[4] = { 0 }, bias[4] = { 0 };
			__m128i part[4];
			__m512i codes;
			__m512 f[8], sv;

			PREFETCH(rowp + (size_t)(c * 32 / g) * w->block_bytes, 64);
			for (int j = 0; j < 4; j++) {
				int cj = c + j, grp = cj * 32 / g;
				const uint8_t *b = rowp + (size_t)grp * w->block_bytes;

				if (cj >= chunks) {
					part[j] = _mm_setzero_si128();
					continue;
				}
				part[j] = _mm_loadu_si128((const __m128i *)(b + 4 +
							   (size_t)(cj * 32 % g) / 2));
				header(b, &s[j], &bias[j]);
				if (cj * 32 % g == 0)
					for (int i = 0; i < mi; i++)
						corr[i] += (bias[j] - 16 * s[j]) *
							   x->sx[(size_t)(i0 + i) *
								 x->ngroups + grp];
			}
			codes = _mm512_inserti32x4(_mm512_castsi128_si512(part[0]),
						   part[1], 1);
			codes = _mm512_inserti32x4(codes, part[2], 2);
			codes = _mm512_inserti32x4(codes, part[3], 3);
			codes_to_f(codes, f);
			sv = _mm512_permutexvar_ps(lane_chunk,
						   _mm512_castps128_ps512(
							   _mm_loadu_ps(s)));
			for (int i = 0; i < mi; i++) {
				const float *xp = x->xf + (size_t)(i0 + i) * x->kpad +
						  (size_t)c * 32;
				__m512 p = _mm512_mul_ps(f[0], _mm512_loadu_ps(xp));

				for (int t = 1; t < 8; t++)
					p = _mm512_fmadd_ps(f[t],
							    _mm512_loadu_ps(xp + 16 * t), p);
				acc[i] = _mm512_fmadd_ps(sv, p, acc[i]);
			}
		}
		for (int i = 0; i < mi; i++)
			y[(size_t)(i0 + i) * w->n + r] =
				16 * _mm512_reduce_add_ps(acc[i]) + corr[i];
	}
}

static void q4(const struct q4_matrix *w, const struct kern_x *x, float *y,
	       int r0, int r1)
{
	for (int r = r0; r < r1; r++) {
		if (x->m == 1 && w->group == 128)
			row1_g128(w, x, r, y);
		else
			row(w, x, r, y);
	}
}

const struct kern kern_avx512 = { "avx512", 4, q4, kern_avx2_q8, kern_avx2_f16 };
