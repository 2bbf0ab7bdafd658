/* kern_avx512.c: the W4A16 kernels for AVX-512 (F, VL, BW; compiled with
 * those flags, checked at run time by kern.c). "avx512" is kern_avx2.c's
 * method on 16 lanes: 64 bytes of codes are four chunks, lanes 4j..4j+3
 * holding the words of chunk j, and one ternary-logic instruction does the
 * and and the or that turn a shifted code into the float 1 + q/16. A group
 * contributes 16 s P + (b - 16 s) SX. Its products of fewer than four
 * tokens at G = 32 and 64 go to the AVX2 set (kern.lend), whose path from
 * the activations' digits serves every group size; its own batch-1 path is
 * for G = 128. "avx512-vnni" (AVX512-VNNI too, enabled per function) is
 * the same but below four tokens, at every group size, multiplies codes by
 * the activations' fixed-point digits in integers (digits, rows_dig): the
 * float method there needed as many vector instructions per byte as this
 * machine's cores could retire while memory delivered it. Two or three
 * tokens (an async edge's two-token step, a short verify block) share each
 * span's decoded codes, so the rows stream from memory once with every
 * token's products beside the stream. Where the weights are packed for
 * the integer path (kern_a8w), the same digits meet the panels instead,
 * at any count of tokens (dig_run, kern_q4_gemm_packed): a vector then
 * holds 16 rows, not a row's 128 columns, and a group's scales, units and
 * bias terms take a few instructions for all of them; 6 vpdpbusd a token
 * and 128 weights, where the float method takes 8 FMAs. */
#include "kern.h"

#include "mem.h"

#include <immintrin.h>
#include <string.h>

#define AND_OR 0xEA /* ternary logic: (a & b) | c */
#define INTERLEAVE 4 /* chunks of codes the sets read at once (kern.h) */

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

/* [s, b] of the head at p */
static inline void header(const uint8_t *p, float *s, float *b)
{
	int32_t h;
	__m128 v;

	memcpy(&h, p, 4);
	v = _mm_cvtph_ps(_mm_cvtsi32_si128(h));
	*s = _mm_cvtss_f32(v);
	*b = _mm_cvtss_f32(_mm_movehdup_ps(v));
}

/* sum over t of f[t] * xp[16t .. 16t+15], in two chains of four (written
 * out: as a loop, GCC kept f in memory and made one chain of eight, and the
 * batched kernel ran at a fifth of its arithmetic rate) */
static inline __m512 dot8(const __m512 f[8], const float *xp)
{
	__m512 p = _mm512_mul_ps(f[0], _mm512_loadu_ps(xp));
	__m512 q = _mm512_mul_ps(f[1], _mm512_loadu_ps(xp + 16));

	p = _mm512_fmadd_ps(f[2], _mm512_loadu_ps(xp + 32), p);
	q = _mm512_fmadd_ps(f[3], _mm512_loadu_ps(xp + 48), q);
	p = _mm512_fmadd_ps(f[4], _mm512_loadu_ps(xp + 64), p);
	q = _mm512_fmadd_ps(f[5], _mm512_loadu_ps(xp + 80), q);
	p = _mm512_fmadd_ps(f[6], _mm512_loadu_ps(xp + 96), p);
	q = _mm512_fmadd_ps(f[7], _mm512_loadu_ps(xp + 112), q);
	return _mm512_add_ps(p, q);
}

/* Batch 1 reads STREAMS rows at once, far apart: a thread's range split
 * into STREAMS parts, row i of each. The hardware prefetchers then follow
 * STREAMS streams of weights instead of one and keep more of memory's
 * bandwidth busy; the rows share each load of the activations. Measured
 * standalone (2 threads, huge pages, median of 11 rounds, GB/s over the
 * paired triad): 4096x11008 from 86% with one row to 93, 95 and 98% with
 * 2, 3 and 4; 4096x4096 from 91% to 96, 99 and 93%. */
#define STREAMS 4

/* Rows [r0, r1) by fn(w, x, r, h, nrows, y): r, r + h, ... at once */
#define BY_STREAMS(fn, w, x, y, r0, r1)                                        \
	do {                                                                   \
		int h_ = ((r1) - (r0)) / STREAMS;                              \
		for (int r_ = (r0); r_ < (r0) + h_; r_++)                      \
			fn(w, x, r_, h_, STREAMS, y);                          \
		for (int r_ = (r0) + STREAMS * h_; r_ < (r1); r_++)            \
			fn(w, x, r_, 0, 1, y);                                 \
	} while (0)

/* Rows r, r + h, ..., r + (nrows - 1) h: their starts, and zero sums */
static inline __attribute__((always_inline)) void
streams_begin(const struct q4_matrix *w, int r, int h, int nrows,
	      const uint8_t *row[], __m512 acc[])
{
	for (int i = 0; i < nrows; i++) {
		row[i] = w->data + (size_t)(r + i * h) * w->row_bytes;
		acc[i] = _mm512_setzero_ps();
	}
}

/* One group of G = 128 (a span, at b) of a row by the float method, its
 * activations at xp (sum sx): adds 16 s P to *acc and (b - 16 s) SX to
 * *corr */
static inline __attribute__((always_inline)) void
group_f(const uint8_t *b, const float *xp, float sx, __m512 *acc, float *corr)
{
	__m512 f[8];
	float s, bias;

	PREFETCH(b, 68);
	header(b, &s, &bias);
	codes_to_f(_mm512_loadu_si512(b + Q4_HEAD_BYTES), f);
	*acc = _mm512_fmadd_ps(_mm512_set1_ps(16 * s), dot8(f, xp), *acc);
	*corr += (bias - 16 * s) * sx;
}

/* Group g of nrows rows by the float method */
static inline __attribute__((always_inline)) void
group_float(const struct q4_matrix *w, const struct kern_x *x, int g,
	    const uint8_t *const row[], const int nrows, __m512 acc[],
	    float corr[])
{
	_Pragma("GCC unroll 4")
	for (int i = 0; i < nrows; i++)
		group_f(row[i] + (size_t)g * w->span_bytes, /* a span a group */
			x->xf + (size_t)g * 128, x->sx[g], &acc[i], &corr[i]);
}

/* Batch 1, G = 128: rows r, r + h, ..., r + (nrows - 1) h, one group a
 * vector of codes, registers only. */
static inline __attribute__((always_inline)) void
rows1_g128(const struct q4_matrix *w, const struct kern_x *x, int r, int h,
	   const int nrows, float *y)
{
	const uint8_t *row[STREAMS];
	__m512 acc[STREAMS];
	float corr[STREAMS];

	streams_begin(w, r, h, nrows, row, acc);
	for (int i = 0; i < nrows; i++)
		corr[i] = 0;
	for (int g = 0; g < w->ngroups; g++)
		group_float(w, x, g, row, nrows, acc, corr);
	for (int i = 0; i < nrows; i++)
		y[r + i * h] = _mm512_reduce_add_ps(acc[i]) + corr[i];
}

/* ---- "avx512-vnni": batch 1 from the activations' digits (kern.h's
 * kern_dig_*), groups of 32, 64 and 128 ----
 * A group's values become integers v = x / u, u = 2^(e - 22) for the
 * smallest e with max |x| < 2^e, so |v| < 2^22 and every value within 2^11
 * of the group's largest is exact (FP16 has 11 significant bits); up to
 * KERN_DIG_FIXES values with bits below u are rounded and keep their
 * residuals, and a group with more takes the float method (u 0, digits 0).
 * Below KERN_DIG_TOKENS tokens each token has its own. v = 65536 d2 +
 * 256 d1 + d0 in signed bytes (d2 in [-64, 64]). The digits follow xf's
 * spans of 128 values (four chunks: one group at G = 128, two at 64, four
 * at 32): a span's DIG_SPAN bytes hold d2, d1 and d0, each as 64 bytes in
 * the order of the low nibbles of the span's 64 code bytes (chunk c's 16 at
 * 16c), then 64 in the order of the high ones. Code byte 16c + 4l + b
 * holds weights 32c + 8b + l (low) and 32c + 8b + 4 + l (high) of the span
 * (q4.h), and xf's vector t holds weight 32c + 4t + l in lane 4c + l
 * (kern.c), so the low nibbles' bytes are vectors t = 0, 2, 4, 6 a byte
 * each in every 32-bit lane, the high ones' t = 1, 3, 5, 7. vpdpbusd
 * (unsigned bytes times signed bytes, four products into each 32-bit lane)
 * then sums codes times digits exactly: ((q.d2) 256 + q.d1) 256 + q.d0 =
 * q.v, under 2^29 in a lane (8 codes of at most 15 times |v| < 2^22). A
 * span takes 3 instructions to decode and 8 to multiply, where the float
 * method takes 16 and 9; a group's sum is s u q.v + b sum(x), and
 * kern_dig_rest adds s q.r over its residuals or s q.x by the float method
 * (group_qx). A value that is not finite makes its group's sum (SX), and
 * so every output, not finite, as in the reference. */
#define DIG_SPAN 384

/* Lanewise max over each group of a span: a chunk's 4 lanes (G = 32), two
 * chunks' 8 (64) or all 16 (128) */
static inline __m512 span_group_max(__m512 m, int G)
{
	m = _mm512_max_ps(m, _mm512_permute_ps(m, 0xB1));
	m = _mm512_max_ps(m, _mm512_permute_ps(m, 0x4E));
	if (G >= 64)
		m = _mm512_max_ps(m, _mm512_shuffle_f32x4(m, m, 0xB1));
	if (G == 128)
		m = _mm512_max_ps(m, _mm512_shuffle_f32x4(m, m, 0x4E));
	return m;
}

/* A span's digits dt (vector t, lane 4c + l: column 32c + 4t + l's digit
 * k in dt[t][k]) as planes (kern_x.dig_planes): digit k of the span's
 * column j at d + k kpad + j. Byte 4c + l of vector t's bytes goes to
 * 32c + 4t + l: words of four vectors side by side, then taken in the
 * planes' order. */
static inline void dig_planes(__m512i dt[8][3], int8_t *d, int kpad)
{
	const __m512i at = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5,
					     9, 13, 17, 21, 25, 29);
	const __m512i two = _mm512_set1_epi32(2);

	for (int k = 0; k < 3; k++) {
		__m512i v[2];

		for (int h = 0; h < 2; h++) { /* vectors 4h .. 4h + 3 */
			v[h] = _mm512_castsi128_si512(
				_mm512_cvtepi32_epi8(dt[4 * h][k]));
			for (int t = 1; t < 4; t++)
				v[h] = _mm512_mask_broadcast_i32x4(
					v[h], (__mmask16)(0xfu << (4 * t)),
					_mm512_cvtepi32_epi8(dt[4 * h + t][k]));
		}
		_mm512_store_si512(d + (size_t)k * kpad,
				   _mm512_permutex2var_epi32(v[0], at, v[1]));
		_mm512_store_si512(d + (size_t)k * kpad + 64,
				   _mm512_permutex2var_epi32(
					   v[0], _mm512_add_epi32(at, two), v[1]));
	}
}

/* Span sp of token i: its groups' [u, sum x], extras (counted into *nx)
 * and digits (in the row order of rows_dig, or as planes) */
static void dig_span(struct kern_x *x, int i, int sp, int *nx)
{
	const int G = x->group, per = 128 / G, L = 16 / per; /* lanes a group */
	const __mmask16 glanes = (__mmask16)((1u << L) - 1);
	const __m512i byte = _mm512_set1_epi32(255);
	const float *xp = x->xf + (size_t)i * x->stride + (size_t)sp * 128;
	float *us = kern_dig_us(x, i), units[16];
	int8_t *d = kern_dig_at(x, i) + (size_t)sp * DIG_SPAN;
	__m512 v[8], m = _mm512_setzero_ps(), scale, unit;
	__m512i iv[8], dt[8][3], e;
	__mmask16 inexact[8], keep = 0;
	int count[4] = { 0, 0, 0, 0 };

	for (int t = 0; t < 8; t++) {
		v[t] = _mm512_load_ps(xp + 16 * t);
		m = _mm512_max_ps(m, _mm512_abs_ps(v[t]));
	}
	m = span_group_max(m, G);
	/* e = exponent(max) - 126, or 0 for a group of zeros (kern_dig_unit) */
	e = _mm512_maskz_sub_epi32(_mm512_cmp_ps_mask(m, _mm512_setzero_ps(),
						      _CMP_GT_OQ),
				   _mm512_srli_epi32(_mm512_castps_si512(m), 23),
				   _mm512_set1_epi32(126));
	scale = _mm512_castsi512_ps(_mm512_slli_epi32(
		_mm512_sub_epi32(_mm512_set1_epi32(22 + 127), e), 23));
	unit = _mm512_castsi512_ps(_mm512_slli_epi32(
		_mm512_add_epi32(_mm512_set1_epi32(127 - 22), e), 23));
	for (int t = 0; t < 8; t++) {
		__m512 y = _mm512_mul_ps(v[t], scale);

		iv[t] = _mm512_cvtps_epi32(y);
		inexact[t] = _mm512_cmp_ps_mask(_mm512_cvtepi32_ps(iv[t]), y,
						_CMP_NEQ_UQ);
		for (int c = 0; c < per; c++)
			count[c] += __builtin_popcount(inexact[t] >> (L * c) & glanes);
	}
	for (int c = 0; c < per; c++) /* a group with too many: u 0, digits 0 */
		if (count[c] <= KERN_DIG_FIXES)
			keep |= (__mmask16)(glanes << (L * c));
	_mm512_storeu_ps(units, _mm512_maskz_mov_ps(keep, unit));
	for (int c = 0; c < per && sp * per + c < x->ngroups; c++) {
		const int g = sp * per + c;
		const float u = units[L * c];
		struct kern_dig_extra *ex;

		us[2 * g] = u;
		us[2 * g + 1] = x->sx[(size_t)i * x->ngroups + g];
		if (count[c] == 0)
			continue;
		ex = kern_dig_extra_new(x, i, nx, g);
		if (u == 0)
			continue;
		for (int t = 0; t < 8; t++) {
			float xv[16];
			int32_t qv[16];

			if (!(inexact[t] >> (L * c) & glanes))
				continue;
			_mm512_storeu_ps(xv, v[t]);
			_mm512_storeu_si512(qv, iv[t]);
			for (int ln = L * c; ln < L * (c + 1); ln++)
				if (inexact[t] >> ln & 1) /* weight 32 (ln / 4) + 4 t
							     + ln % 4 of the span */
					kern_dig_fix(ex, (32 * (ln / 4) + 4 * t +
							  ln % 4) % G,
						     xv[ln] - (float)qv[ln] * u);
		}
	}
	for (int t = 0; t < 8; t++) {
		__m512i q = _mm512_maskz_mov_epi32(keep, iv[t]);

		for (int k = 0; k < 2; k++) {
			dt[t][k] = _mm512_srai_epi32(_mm512_slli_epi32(q, 24), 24);
			q = _mm512_srai_epi32(_mm512_sub_epi32(q, dt[t][k]), 8);
		}
		dt[t][2] = q;
	}
	if (x->dig_planes) {
		dig_planes(dt, kern_dig_at(x, i) + (size_t)sp * 128, x->kpad);
		return;
	}
	for (int h = 0; h < 2; h++)
		for (int k = 0; k < 3; k++) {
			__m512i b0 = _mm512_and_si512(dt[h][k], byte);
			__m512i b1 = _mm512_and_si512(dt[2 + h][k], byte);
			__m512i b2 = _mm512_and_si512(dt[4 + h][k], byte);
			__m512i b3 = dt[6 + h][k];

			b0 = _mm512_or_si512(b0, _mm512_slli_epi32(b1, 8));
			b0 = _mm512_or_si512(b0, _mm512_slli_epi32(b2, 16));
			b0 = _mm512_or_si512(b0, _mm512_slli_epi32(b3, 24));
			_mm512_store_si512(d + 128 * (2 - k) + 64 * h, b0);
		}
}

/* Each token's digits, below KERN_DIG_TOKENS tokens, or as planes at any
 * count */
static void digits(struct kern_x *x)
{
	const int spans = (x->ngroups * x->group + 127) / 128;

	if (x->m >= KERN_DIG_TOKENS && !x->dig_planes)
		return;
	kern_dig_alloc(x);
	for (int i = 0; i < x->m; i++) {
		int nx = 0;

		for (int sp = 0; sp < spans; sp++)
			dig_span(x, i, sp, &nx);
		*kern_dig_count(x, i) = nx;
	}
}

/* sum q x over group g (its codes at q) by the float method: 16 (P - SX)
 * over the group's lanes of its span, P = sum (1 + q/16) x */
static float group_qx(const struct q4_matrix *w, const struct kern_dig_tok *t,
		      const uint8_t *q, int g)
{
	const int G = w->group, per = 128 / G, c0 = g % per * (G / 32);
	const __mmask16 lanes = (__mmask16)(((1u << (G / 8)) - 1) << (4 * c0));
	__m512 f[8];

	/* the group's chunks in their lanes: lane 4 c0 is q's first word */
	codes_to_f(_mm512_maskz_loadu_epi32(lanes, q - 16 * c0), f);
	return 16 * (_mm512_mask_reduce_add_ps(
			     lanes, dot8(f, t->xf + (size_t)(g / per) * 128)) -
		     t->sx[g]);
}

/* A span's codes (chunk c in bytes 16c ..), the span at b, and in *heads
 * the [s, b] of its n groups (32-bit lane j: group j's, as FP16; zero past
 * n): a load each, masked in a row's short last span, reading no byte past
 * it. (When each group's head sat before its codes, a span of G = 32 took
 * six 32-byte loads, three blends, a permute and an insert; EPYC Zen 4,
 * 2026-12-06, hot on one thread at 4096x4096, G = 32's codes from one load
 * took 13% less time and its heads from one 11% less, in experiments that
 * broke the result.) */
static inline __attribute__((always_inline)) __m512i
span_codes(const uint8_t *b, const int G, int n, __m128i *heads)
{
	if (G == 128) {
		int32_t hw;

		memcpy(&hw, b, sizeof(hw));
		*heads = _mm_cvtsi32_si128(hw);
	} else if (n == 128 / G) {
		*heads = G == 32 ? _mm_loadu_si128((const __m128i *)b) :
				   _mm_loadl_epi64((const __m128i *)b);
	} else {
		*heads = _mm_maskz_loadu_epi32((__mmask8)((1u << n) - 1), b);
		return _mm512_maskz_loadu_epi32(
			(__mmask16)((1u << (n * G / 8)) - 1), b + Q4_HEAD_BYTES * n);
	}
	return _mm512_loadu_si512(b + Q4_HEAD_BYTES * n);
}

/* The tokens of a product from digits, for BY_STREAMS */
struct dig_toks {
	struct kern_dig_tok t[KERN_DIG_TOKENS];
	int m;
};

/* The span `at` bytes into each of nrows rows (n groups: 128 / G but in a
 * row's last), span sp of ntok tokens' digits and [u, SX] pairs: each
 * row's codes decoded once, then multiplied by every token's digits (so
 * the rows stream from memory once, the tokens' products beside the
 * stream). The span's heads [s0 b0 s1 b1 ..] times a token's [u0 SX0 u1
 * SX1 ..]: the even lanes are each group's s u, spread over its lanes of
 * the span; the odd ones are the bias terms, summed in corr. */
__attribute__((target("avx512vnni"))) static inline
__attribute__((always_inline)) void
span_rows(const uint8_t *const row[], const int nrows, size_t at,
	  const int G, const int n, const struct dig_toks *dt, const int ntok,
	  int sp, __m512 acc[][STREAMS], __m256 corr[][STREAMS])
{
	const __m512i low = _mm512_set1_epi8(0x0f);
	const __m512i spread = G == 32 ? _mm512_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2,
							   4, 4, 4, 4, 6, 6, 6, 6) :
			       _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0,
						 2, 2, 2, 2, 2, 2, 2, 2);
	const int sb = (int)q4_span_bytes(G);
	__m256 usv[KERN_DIG_TOKENS];

	for (int j = 0; j < ntok; j++) {
		const float *us = dt->t[j].us + 2 * sp * (128 / G);

		usv[j] = G == 32 ? _mm256_loadu_ps(us) :
			 G == 64 ? _mm256_zextps128_ps256(_mm_loadu_ps(us)) :
			 _mm256_zextps128_ps256(_mm_castsi128_ps(
				 _mm_loadl_epi64((const __m128i *)us)));
	}
	_Pragma("GCC unroll 4")
	for (int i = 0; i < nrows; i++) {
		const uint8_t *b = row[i] + at;
		__m512i codes, lo, hi;
		__m128i heads;
		__m256 hh;

		PREFETCH(b, sb);
		codes = span_codes(b, G, n, &heads);
		hh = _mm256_cvtph_ps(heads);
		lo = _mm512_and_si512(codes, low);
		hi = _mm512_and_si512(_mm512_srli_epi16(codes, 4), low);
		_Pragma("GCC unroll 3")
		for (int j = 0; j < ntok; j++) {
			const int8_t *d = dt->t[j].d + (size_t)sp * DIG_SPAN;
			const __m256 hu = _mm256_mul_ps(hh, usv[j]);
			__m512i v;

			corr[j][i] = _mm256_add_ps(corr[j][i], hu);
			v = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo,
						_mm512_load_si512(d));
			v = _mm512_dpbusd_epi32(v, hi, _mm512_load_si512(d + 64));
			v = _mm512_slli_epi32(v, 8);
			v = _mm512_dpbusd_epi32(v, lo, _mm512_load_si512(d + 128));
			v = _mm512_dpbusd_epi32(v, hi, _mm512_load_si512(d + 192));
			v = _mm512_slli_epi32(v, 8);
			v = _mm512_dpbusd_epi32(v, lo, _mm512_load_si512(d + 256));
			v = _mm512_dpbusd_epi32(v, hi, _mm512_load_si512(d + 320));
			acc[j][i] = _mm512_fmadd_ps(
				_mm512_cvtepi32_ps(v),
				G == 128 ? _mm512_broadcastss_ps(_mm256_castps256_ps128(hu)) :
				_mm512_permutexvar_ps(spread, _mm512_castps256_ps512(hu)),
				acc[j][i]);
		}
	}
}

/* Batch 1 to 3 from digits at group G, the ntok tokens of dt: rows r, r +
 * h, ..., r + (nrows - 1) h into y; whole spans, then a row's last if it
 * is short */
__attribute__((target("avx512vnni"))) static inline
__attribute__((always_inline)) void
rows_dig(const struct q4_matrix *w, const struct dig_toks *dt, const int ntok,
	 int r, int h, const int nrows, const int G, float *y)
{
	const int per = 128 / G, whole = w->ngroups / per;
	const size_t sb = w->span_bytes;
	const uint8_t *row[STREAMS];
	__m512 acc[KERN_DIG_TOKENS][STREAMS];
	__m256 corr[KERN_DIG_TOKENS][STREAMS];
	int sp;

	for (int j = 0; j < ntok; j++)
		streams_begin(w, r, h, nrows, row, acc[j]);
	for (int j = 0; j < ntok; j++)
		for (int i = 0; i < nrows; i++)
			corr[j][i] = _mm256_setzero_ps();
	for (sp = 0; sp < whole; sp++)
		span_rows(row, nrows, sp * sb, G, per, dt, ntok, sp, acc, corr);
	if (sp * per < w->ngroups)
		span_rows(row, nrows, sp * sb, G, w->ngroups - sp * per, dt, ntok,
			  sp, acc, corr);
	for (int j = 0; j < ntok; j++)
		for (int i = 0; i < nrows; i++) {
			const struct kern_dig_tok *t = &dt->t[j];
			const __m256 odd = _mm256_blend_ps(_mm256_setzero_ps(),
							   corr[j][i], 0xAA);

			y[(size_t)j * w->n + r + i * h] = _mm512_reduce_add_ps(
				_mm512_add_ps(acc[j][i], _mm512_castps256_ps512(odd))) +
				(t->nx ? kern_dig_rest(w, t, r + i * h, group_qx) : 0);
		}
}

/* rows_dig for dt's 1, 2 or 3 tokens (a constant count in each call) */
__attribute__((target("avx512vnni"))) static inline
__attribute__((always_inline)) void
rows_dig_toks(const struct q4_matrix *w, const struct dig_toks *dt, int r,
	      int h, const int nrows, const int G, float *y)
{
	_Static_assert(KERN_DIG_TOKENS == 4, "1 to 3 tokens here");
	if (dt->m == 1)
		rows_dig(w, dt, 1, r, h, nrows, G, y);
	else if (dt->m == 2)
		rows_dig(w, dt, 2, r, h, nrows, G, y);
	else
		rows_dig(w, dt, 3, r, h, nrows, G, y);
}

/* rows_dig_toks at group G, on STREAMS rows or 1 */
#define ROWS_DIG(G)                                                           \
	__attribute__((target("avx512vnni"))) static void rows_dig##G(          \
		const struct q4_matrix *w, const struct dig_toks *dt, int r,   \
		int h, const int nrows, float *y)                              \
	{                                                                      \
		if (nrows == STREAMS)                                          \
			rows_dig_toks(w, dt, r, h, STREAMS, G, y);             \
		else                                                           \
			rows_dig_toks(w, dt, r, h, 1, G, y);                   \
	}
ROWS_DIG(32)
ROWS_DIG(64)
ROWS_DIG(128)
#undef ROWS_DIG

/* The quad of chunks c .. c+3 of a row (128 weights along k, lanes 4j ..
 * 4j+3 holding chunk c+j) decoded into f, with the scale of each lane's
 * group in *sv; a group that starts in the quad adds its bias term to
 * *corr, lane i for token i of the block, from sxt (group g's sums for the
 * block's 16 tokens at 16 g). */
static inline void quad(const struct q4_matrix *w, const uint8_t *rowp, int c,
			const float *sxt, __m512 *corr, __m512 f[8], __m512 *sv)
{
	const int g = w->group, sp = c / 4;
	const uint8_t *b = rowp + (size_t)sp * w->span_bytes;
	const __m512i lane_chunk = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1,
						    1, 1, 0, 0, 0, 0);
	float s[4] = { 0 }, bias;
	__m512i codes;

	if (g == 128) { /* the quad is one group */
		/* a row's next quad comes a tile's worth of rows later: four
		 * spans ahead is far enough (PREFETCH's distance, tuned for a
		 * row read straight through, fetched lines L1 lost again) */
		__builtin_prefetch(b + 4 * w->span_bytes);
		__builtin_prefetch(b + 4 * w->span_bytes + 64);
		header(b, &s[0], &bias);
		*corr = _mm512_fmadd_ps(_mm512_set1_ps(bias - 16 * s[0]),
					_mm512_load_ps(sxt + (size_t)16 * (c / 4)),
					*corr);
		codes_to_f(_mm512_loadu_si512(b + Q4_HEAD_BYTES), f);
		*sv = _mm512_set1_ps(s[0]);
		return;
	}
	const int cpg = g / 32, n = q4_span_groups(w, sp); /* chunks a group */
	float hv[8]; /* [s0 b0 s1 b1 ..] */
	__m128i heads;

	PREFETCH(b, 64);
	codes = span_codes(b, g, n, &heads);
	_mm256_storeu_ps(hv, _mm256_cvtph_ps(heads));
	for (int j = 0; j < n; j++) { /* group j of the span, chunks cpg j .. */
		s[cpg * j] = s[cpg * j + cpg - 1] = hv[2 * j];
		*corr = _mm512_fmadd_ps(_mm512_set1_ps(hv[2 * j + 1] - 16 * hv[2 * j]),
					_mm512_load_ps(sxt + (size_t)16 *
						       (sp * (4 / cpg) + j)),
					*corr);
	}
	codes_to_f(codes, f);
	*sv = _mm512_permutexvar_ps(lane_chunk,
				    _mm512_castps128_ps512(_mm_loadu_ps(s)));
}

/* Any G, m tokens, rows [r0, r1) in tiles of up to 16 rows. The loop over
 * quads of chunks is outside the loop over the tile's rows: the
 * activations of a quad (16 tokens x 128 values, 8 KB) stay in L1 while
 * every row of the tile meets them, instead of streaming a whole row's
 * worth from L2 for each row; the partial sums (rows x tokens vectors,
 * 16 KB) stay in L1 too. Each row's codes are decoded once per quad, for
 * all the tokens. A row's bias terms sum in one vector, a token a lane
 * (x->sxb). */
static void tile(const struct q4_matrix *w, const struct kern_x *x, int r0,
		 int r1, float *y)
{
	const int chunks = w->ngroups * (w->group / 32), m = x->m;
	__m512 acc[16][16], corr[16];

	for (int i0 = 0; i0 < m; i0 += 16) {
		const float *sxt = x->sxb + (size_t)i0 * x->ngroups;
		int mi = m - i0 < 16 ? m - i0 : 16;

		for (int t0 = r0; t0 < r1; t0 += 16) {
			int rows = r1 - t0 < 16 ? r1 - t0 : 16;

			for (int j = 0; j < rows; j++) {
				for (int i = 0; i < mi; i++)
					acc[j][i] = _mm512_setzero_ps();
				corr[j] = _mm512_setzero_ps();
			}
			for (int c = 0; c < chunks; c += 4) {
				const float *xq = x->xf + (size_t)i0 * x->stride +
						  (size_t)c * 32;

				for (int j = 0; j < rows; j++) {
					const uint8_t *rowp = w->data +
						(size_t)(t0 + j) * w->row_bytes;
					__m512 f[8], sv;

					quad(w, rowp, c, sxt, &corr[j], f, &sv);
					for (int i = 0; i < mi; i++) {
						const float *xp = xq + (size_t)i * x->stride;

						acc[j][i] = _mm512_fmadd_ps(sv, dot8(f, xp),
									    acc[j][i]);
					}
				}
			}
			for (int j = 0; j < rows; j++) {
				float cj[16];

				_mm512_storeu_ps(cj, corr[j]);
				for (int i = 0; i < mi; i++)
					y[(size_t)(i0 + i) * w->n + t0 + j] =
						16 * _mm512_reduce_add_ps(acc[j][i]) +
						cj[i];
			}
		}
	}
}

static void q4(const struct q4_matrix *w, const struct kern_x *x, float *y,
	       int r0, int r1)
{
	if (x->m > 1 || w->group != 128) {
		tile(w, x, r0, r1, y);
		return;
	}
	BY_STREAMS(rows1_g128, w, x, y, r0, r1);
}

/* q4 from the activations' digits where they have them */
__attribute__((target("avx512vnni"))) static void
q4_vnni(const struct q4_matrix *w, const struct kern_x *x, float *y, int r0,
	int r1)
{
	struct dig_toks dt = { .m = x->m };

	if (!x->dig) { /* KERN_DIG_TOKENS tokens or more */
		q4(w, x, y, r0, r1);
		return;
	}
	for (int i = 0; i < x->m; i++)
		dt.t[i] = kern_dig_tok(x, i);
	if (w->group == 32)
		BY_STREAMS(rows_dig32, w, &dt, y, r0, r1);
	else if (w->group == 64)
		BY_STREAMS(rows_dig64, w, &dt, y, r0, r1);
	else
		BY_STREAMS(rows_dig128, w, &dt, y, r0, r1);
}

/* ---- kern.f32: FP32 weights and activations, kern_dot_f32's order ----
 * kern_avx2.c's f32 on 16 lanes: a vector holds two tokens' 8
 * running sums (token 2p in lanes 0-7, 2p + 1 in 8-15, each lane still
 * column c % 8 of its token, products rounded, then added), so every
 * output stays kern_dot_f32 of its row and token bit for bit; a row's 8
 * weights are broadcast to both halves. The activations of each token
 * pair are first laid side by side, 8 columns of each in turn. Register
 * tiles of F32_R rows by F32_P pairs, tokens in blocks of F32_TB as in
 * kern_avx2.c. */
#define F32_R 4
#define F32_P 4
#define F32_TB 64

static inline __attribute__((always_inline)) void
f32_tile16(const float *w, int n, int k, const float *x, const float *xp,
	   float *y, int r, int i, int i1, const int R, const int P)
{
	const int k8 = k / 8 * 8;
	__m512 acc[F32_R][F32_P];

	_Pragma("GCC unroll 4")
	for (int a = 0; a < R; a++)
		_Pragma("GCC unroll 4")
		for (int q = 0; q < P; q++)
			acc[a][q] = _mm512_setzero_ps();
	for (int c = 0; c < k8; c += 8) {
		__m512 xv[F32_P];

		_Pragma("GCC unroll 4")
		for (int q = 0; q < P; q++)
			xv[q] = _mm512_loadu_ps(xp + (size_t)q * 2 * k8 + 2 * c);
		_Pragma("GCC unroll 4")
		for (int a = 0; a < R; a++) {
			const __m512 wv = _mm512_castpd_ps(_mm512_broadcast_f64x4(
				_mm256_castps_pd(_mm256_loadu_ps(
					w + (size_t)(r + a) * k + c))));

			_Pragma("GCC unroll 4")
			for (int q = 0; q < P; q++)
				acc[a][q] = _mm512_add_ps(acc[a][q],
							  _mm512_mul_ps(wv, xv[q]));
		}
	}
	for (int a = 0; a < R; a++)
		for (int q = 0; q < P; q++) {
			float lanes[16];

			_mm512_storeu_ps(lanes, acc[a][q]);
			for (int h = 0; h < 2 && i + 2 * q + h < i1; h++) {
				const int t = i + 2 * q + h;
				const float *wr = w + (size_t)(r + a) * k;
				const float *xr = x + (size_t)t * k;
				float sum = 0;

				for (int c = k8; c < k; c++)
					sum += wr[c] * xr[c];
				for (int l = 0; l < 8; l++)
					sum += lanes[8 * h + l];
				y[(size_t)t * n + r + a] = sum;
			}
		}
}

/* Rows r .. r + R - 1 against the tokens [i0, i1) laid out in xp */
static inline __attribute__((always_inline)) void
f32_rows16(const float *w, int n, int k, const float *x, const float *xp,
	   float *y, int r, int i0, int i1, const int R)
{
	const int pairs = (i1 - i0 + 1) / 2, k8 = k / 8 * 8;
	int q = 0;

	for (; q + F32_P <= pairs; q += F32_P)
		f32_tile16(w, n, k, x, xp + (size_t)q * 2 * k8, y, r, i0 + 2 * q,
			   i1, R, F32_P);
	for (; q < pairs; q++)
		f32_tile16(w, n, k, x, xp + (size_t)q * 2 * k8, y, r, i0 + 2 * q,
			   i1, R, 1);
}

static void f32(const float *w, int n, int k, const float *x, int m, float *y,
		int r0, int r1)
{
	const int k8 = k / 8 * 8, tb = m < F32_TB ? (m + 1) / 2 * 2 : F32_TB;
	float *xp = xcalloc64(sizeof(float) * (size_t)tb * (k8 + 8));

	for (int i0 = 0; i0 < m; i0 += F32_TB) {
		const int i1 = m - i0 < F32_TB ? m : i0 + F32_TB;
		int r = r0;

		/* pair q's 8 columns from c: token i0 + 2q's, then the next
		 * token's (zero past i1) */
		for (int t = i0; t < i0 + (i1 - i0 + 1) / 2 * 2; t++)
			for (int c = 0; c < k8; c += 8)
				for (int l = 0; l < 8; l++)
					xp[(size_t)(t - i0) / 2 * 2 * k8 + 2 * c +
					   8 * ((t - i0) % 2) + l] =
						t < i1 ? x[(size_t)t * k + c + l] : 0;
		for (; r + F32_R <= r1; r += F32_R)
			f32_rows16(w, n, k, x, xp, y, r, i0, i1, F32_R);
		for (; r < r1; r++)
			f32_rows16(w, n, k, x, xp, y, r, i0, i1, 1);
	}
	free(xp);
}

/* ---- the integer path: W4A8 batches (prefill, CPU verification) ----
 *
 * vpdpbusd multiplies unsigned bytes by signed bytes, four products into
 * each 32-bit lane. A lane is a row here: a thread packs PANEL rows at a
 * time into a panel, two vectors of HALF rows, each holding for octet o
 * (columns 8o .. 8o+7) in lane j the four code bytes of row j that carry
 * those columns. In q4.h's order byte 4l + b of a chunk holds columns
 * 8b + l (low nibble) and 8b + 4 + l (high), so one byte shuffle a chunk
 * and a 16 x 16 transpose of words gather them, and the panel keeps the
 * code bytes as they are: the loop splits each vector into its low
 * nibbles (columns 8o .. 8o+3) and its high ones (8o+4 .. 8o+7), an AND
 * and a shift, once for every token of the tile. Each token's four
 * activation codes, broadcast, meet both halves. The panel had held the
 * halves a byte each, so that the loop decoded nothing: twice the bytes,
 * read from memory at every call the weights are not hot. Nibbles, on
 * Zen 4 (EPYC 2 vCPUs, 2 threads, from memory below 64 tokens, the two
 * binaries alternating, 2026-12-06): 4096x4096 at 1 token 0.42-0.57 to
 * 0.27-0.36 ms, at 4 0.62-0.71 to 0.32-0.33, at 16 1.10-1.30 to 0.81-0.90,
 * at 64 3.4-3.6 to 3.1-3.9, at 512 25-32 to 24-27; 11008x4096 at 1
 * token 1.45-1.56 to 0.80-0.95, at 64 8.7-15.3 to 8.0-8.3, at 512
 * 66-69 to 63-66. Not measured on a Xeon; llvm-mca's Ice Lake server
 * model (LLVM 14) puts an octet of a 6-token tile at 19.6 cycles with
 * byte codes and 19.5 with nibbles. The activations are packed
 * too, in tiles of TILE tokens (kern.h's kern_tiles). A tile's integer
 * sums (a block) and a group's float sums stay in registers for a panel's
 * whole row: a block ends with f += float(sum q a) u, a group with
 * sum += s f + b sum(x) (sum, the results, in registers or spilled once
 * a group), one multiply a block fewer than scaling each block by s u.
 * vpdpbusd takes 5 cycles and two start a cycle here, so 10 or more
 * chains of sums keep both ports busy: TILE 6 gives 12. Measured against
 * the block-scaled form with TILE 4 (8 chains), 11008x4096 on 2 threads,
 * three alternating rounds (Xeon 2 vCPUs, 2026-12-03, the panels then a
 * byte a code): 1.77-1.85 ms against 1.96-2.02 at 16 tokens, 5.40-6.06
 * against 6.41-6.57 at 64, 43.7-44.7 against 47.0-48.2 at 512; this form
 * with TILE 4 took 1.90-1.95, 5.67-6.35 and 44.5-44.8, with TILE 8 (48
 * vectors of sums for 32 registers) 1.73-1.86, 6.03-6.42 and 46.1-47.3.
 * A panel's codes (64 KB at 4096 columns; 128 KB as bytes) come from L2
 * at every tile, and at the first from memory: the loop asks for them
 * KERN_PANEL_PREFETCH_BYTES ahead (at KERN_PREFETCH_BYTES then,
 * 11008x4096 x 64, byte codes: 6.18-6.57 ms against 6.47-7.29 in three
 * pairs; no change at 16 and 512 tokens, nor at 4096x4096, where the
 * weights stay in L3). */
#define HALF 16  /* rows a vector */
#define PANEL 32 /* two vectors of rows, each activation word meeting both */
#define TILE 6
#define PANELS 2 /* panels packed at once, each meeting a tile in turn: the
		    activations stream from far once a block of 64 rows */
#define OCTETS (Q4_A8_BLOCK / 8) /* octets an activation block */

/* 16 x 16 words: out[j] lane i = in[i] lane j */
static inline void transpose16(__m512i v[16])
{
	__m512i t[16], u[16];

	for (int i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_epi32(v[i], v[i + 1]);
		t[i + 1] = _mm512_unpackhi_epi32(v[i], v[i + 1]);
	}
	for (int i = 0; i < 16; i += 4) {
		u[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
		u[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
		u[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
		u[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
	}
	/* u[4a + q] lane L: column 4L + q of rows 4a .. 4a+3 */
	for (int q = 0; q < 4; q++) {
		__m512i v0 = _mm512_shuffle_i32x4(u[q], u[4 + q], 0x44);
		__m512i v1 = _mm512_shuffle_i32x4(u[q], u[4 + q], 0xEE);
		__m512i w0 = _mm512_shuffle_i32x4(u[8 + q], u[12 + q], 0x44);
		__m512i w1 = _mm512_shuffle_i32x4(u[8 + q], u[12 + q], 0xEE);

		v[q] = _mm512_shuffle_i32x4(v0, w0, 0x88);
		v[4 + q] = _mm512_shuffle_i32x4(v0, w0, 0xDD);
		v[8 + q] = _mm512_shuffle_i32x4(v1, w1, 0x88);
		v[12 + q] = _mm512_shuffle_i32x4(v1, w1, 0xDD);
	}
}

/* The codes of rows [r, r + rows) of w (rows <= HALF; the rest zero)
 * into half h of pn: each octet's code bytes, as the rows hold them */
static void a8_pack_half(const struct q4_matrix *w, int r, int rows, int kq,
			 struct kern_panel *pn, int h)
{
	/* dword b of a chunk: its bytes b, 4 + b, 8 + b, 12 + b */
	const __m512i order = _mm512_broadcast_i32x4(_mm_setr_epi8(
		0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
	const int G = w->group, per = 128 / G;

	/* the rows are read side by side, a span at a time (a quad of
	 * chunks; kern.c packs the heads) */
	for (int c = 0; c < kq / 32; c += 4) {
		const int sp = c / 4;
		/* none where kq runs past the row's spans */
		const int n = sp * per < w->ngroups ? q4_span_groups(w, sp) : 0;
		__m512i v[16];

		for (int j = 0; j < HALF; j++) {
			const uint8_t *b = w->data + (size_t)(r + j) * w->row_bytes +
					   (size_t)sp * w->span_bytes;
			__m128i heads;

			if (j >= rows || n == 0) {
				v[j] = _mm512_setzero_si512();
				continue;
			}
			__builtin_prefetch(b + 2048);
			v[j] = _mm512_shuffle_epi8(span_codes(b, G, n, &heads),
						   order);
		}
		transpose16(v);
		for (int o = 0; o < 16; o++)
			_mm512_store_si512(pn->codes + (size_t)(4 * c + o) * 2 *
					   HALF + HALF * h, v[o]);
	}
}

/* The codes of rows [r, r + rows) of w (rows <= PANEL; the rest zero)
 * into pn */
static void a8_pack(const struct q4_matrix *w, int r, int rows, int kq,
		    struct kern_panel *pn)
{
	for (int h = 0; h < 2; h++)
		a8_pack_half(w, r + HALF * h, kern_half_rows(rows, HALF, h), kq,
			     pn, h);
}

/* The word at p, broadcast */
static inline __m512i word(const int8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return _mm512_set1_epi32(v);
}

/* The octet of a panel at cw (two halves' vectors of 16 rows' words): each
 * half's low nibbles in lo, its high ones in hi, as unsigned bytes; and
 * the weights KERN_PANEL_PREFETCH_BYTES ahead asked for */
static inline __attribute__((always_inline)) void
octet_nibbles(const int32_t *cw, __m512i lo[2], __m512i hi[2])
{
	const __m512i low = _mm512_set1_epi8(0x0f);

	for (int h = 0; h < 2; h++) {
		const __m512i z = _mm512_load_si512(cw + HALF * h);

		lo[h] = _mm512_and_si512(z, low);
		hi[h] = _mm512_and_si512(_mm512_srli_epi16(z, 4), low);
	}
	PREFETCH_AHEAD(cw, 2 * HALF * (int)sizeof(*cw),
		       KERN_PANEL_PREFETCH_BYTES);
}

/* Group g's FP16 scales or biases of half h of a panel (v: the panel's
 * scale or bias), as floats */
static inline __m512 half_heads(const uint16_t *v, int g, int h)
{
	_Static_assert(HALF % 16 == 0, "a half's FP16 scales and biases "
		       "32-byte aligned, as _mm256_load_si256 wants");
	return _mm512_cvtph_ps(_mm256_load_si256(
		(const __m256i *)(v + g * PANEL + HALF * h)));
}

/* Group g's scales sv and biases bv of both halves of panel pn */
static inline void panel_heads(const struct kern_panel *pn, int g,
			       __m512 sv[2], __m512 bv[2])
{
	for (int h = 0; h < 2; h++) {
		sv[h] = half_heads(pn->scale, g, h);
		bv[h] = half_heads(pn->bias, g, h);
	}
}

/* One panel against one tile of T tokens: y rows r .. r + rows - 1 of the
 * tile's tokens. f is a group's sum of u float(sum q a) over its blocks;
 * sum, the results so far, gains s f + b sum(x) at each group's end and is
 * stored to y at the last */
__attribute__((target("avx512vnni"))) static inline
__attribute__((always_inline)) void
a8_micro(const struct kern_panel *pn, const int8_t *aq, const float *au,
	 const float *as, int ngroups, int group, const int T, float *y,
	 size_t ystride, int rows)
{
	const __mmask16 keep[2] = {
		(__mmask16)(rows >= HALF ? 0xffff : (1u << rows) - 1),
		(__mmask16)(rows <= HALF ? 0 : (1u << (rows - HALF)) - 1) };
	const int32_t *cw = pn->codes;
	__m512 sum[2][TILE];

	_Pragma("GCC unroll 8")
	for (int t = 0; t < T; t++)
		sum[0][t] = sum[1][t] = _mm512_setzero_ps();
	for (int g = 0; g < ngroups; g++, as += T) {
		__m512 f[2][TILE];

		_Pragma("GCC unroll 8")
		for (int t = 0; t < T; t++)
			f[0][t] = f[1][t] = _mm512_setzero_ps();
		for (int j = 0; j < group / Q4_A8_BLOCK; j++, au += T) {
			__m512i a[2][TILE];

			_Pragma("GCC unroll 8")
			for (int t = 0; t < T; t++)
				a[0][t] = a[1][t] = _mm512_setzero_si512();
			_Pragma("GCC unroll 4")
			for (int o = 0; o < OCTETS; o++, cw += 2 * HALF,
				 aq += 8 * T) {
				__m512i lo[2], hi[2];

				octet_nibbles(cw, lo, hi);
				_Pragma("GCC unroll 8")
				for (int t = 0; t < T; t++) {
					const __m512i xl = word(aq + 4 * t);
					const __m512i xh = word(aq + 4 * T + 4 * t);

					a[0][t] = _mm512_dpbusd_epi32(a[0][t], lo[0], xl);
					a[1][t] = _mm512_dpbusd_epi32(a[1][t], lo[1], xl);
					a[0][t] = _mm512_dpbusd_epi32(a[0][t], hi[0], xh);
					a[1][t] = _mm512_dpbusd_epi32(a[1][t], hi[1], xh);
				}
			}
			_Pragma("GCC unroll 8")
			for (int t = 0; t < T; t++) {
				const __m512 u = _mm512_set1_ps(au[t]);

				f[0][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a[0][t]),
							  u, f[0][t]);
				f[1][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a[1][t]),
							  u, f[1][t]);
			}
		}
		__m512 sv[2], bv[2];

		panel_heads(pn, g, sv, bv);

		_Pragma("GCC unroll 8")
		for (int t = 0; t < T; t++) {
			const __m512 sx = _mm512_set1_ps(as[t]);

			for (int h = 0; h < 2; h++)
				sum[h][t] = _mm512_fmadd_ps(bv[h], sx,
					_mm512_fmadd_ps(sv[h], f[h][t], sum[h][t]));
		}
	}
	_Pragma("GCC unroll 8")
	for (int t = 0; t < T; t++)
		for (int h = 0; h < 2; h++)
			_mm512_mask_storeu_ps(y + (size_t)t * ystride + HALF * h,
					      keep[h], sum[h][t]);
}

/* a8_micro for a tile of T = 1 .. TILE tokens */
__attribute__((target("avx512vnni"))) static void
a8_tile(const struct kern_panel *pn, const int8_t *aq, const float *au,
	const float *as, int T, int ngroups, int group, float *y, size_t ystride,
	int rows)
{
	KERN_TILE_DISPATCH(a8_micro, TILE);
}

/* ---- exact products from digits over the integer path's panels
 * (kern_q4_gemm_packed), a tile of 1 to 3 tokens a call ----
 * The rows packed as a8_pack packs them (an octet of a row's codes a
 * 32-bit word, 16 rows a vector), the digits as planes (dig_planes): the
 * octet's four low nibbles meet its columns 0-3, the high ones 4-7 (q4.h's
 * order within a chunk), so a plane's 8 bytes from column 8o are the
 * octet's two words of digits, broadcast. Each digit's sums stay apart, in
 * 32-bit lanes, a row a lane, over a group (at most 128 x 15 x 128 < 2^18),
 * and join in FP32 at its end: f = 65536 a2 + 256 a1 + a0, then sum += s u
 * f + b SX. So the vector holds 16 rows and a group's scales, units and
 * bias terms are a few instructions for all of them, where rows_dig, a
 * row's 128 columns a vector, spends as many on each row and span:
 * 4096x4096, one thread, hot (EPYC Zen 4, 2026-12-06), 253-254 us a
 * product against rows_dig's 405-409 at G = 128, 282-287 against 394-397
 * at 32, both 6 vpdpbusd a row and span (docs/performance.md). */
#define DIG_T (KERN_DIG_TOKENS - 1)

/* The codes of column c (0 .. 7) of an octet, 16 rows' words at cw, as
 * FP32: byte c % 4's low nibble for c < 4, its high one past */
static inline __m512 octet_codes(const int32_t *cw, int c)
{
	return _mm512_cvtepi32_ps(_mm512_and_si512(
		_mm512_srli_epi32(_mm512_load_si512(cw), 8 * (c & 3) + 4 * (c >> 2)),
		_mm512_set1_epi32(15)));
}

/* Token t's extras (kern_dig_extra) over panel pn: each group's s times
 * its residuals' sum of q r, or at u 0 its float method's q.x (xf's
 * values), 16 rows a vector, added to sum (the halves' results) */
static void dig_extras(const struct kern_panel *pn, const struct q4_matrix *w,
		       const struct kern_dig_tok *t, __m512 sum[2])
{
	const int G = w->group;

	for (int i = 0; i < t->nx; i++) {
		const struct kern_dig_extra *e = &t->ex[i];
		const int32_t *cw = pn->codes + (size_t)e->g * (G / 8) * 2 * HALF;
		/* the float method's columns: every one of a group of u 0 */
		const int fc = t->us[2 * e->g] == 0 ? G : 0;
		__m512 qr[2] = { _mm512_setzero_ps(), _mm512_setzero_ps() };

		for (int c = 0; c < fc; c++) {
			const int col = e->g * G + c;
			const __m512 xv = _mm512_set1_ps(
				t->xf[kern_x_place(col & ~3, INTERLEAVE) + (col & 3)]);

			for (int h = 0; h < 2; h++)
				qr[h] = _mm512_fmadd_ps(
					octet_codes(cw + (c / 8) * 2 * HALF + HALF * h,
						    c % 8), xv, qr[h]);
		}
		for (int f = 0; f < e->n; f++)
			for (int h = 0; h < 2; h++)
				qr[h] = _mm512_fmadd_ps(
					octet_codes(cw + (e->col[f] / 8) * 2 * HALF +
						    HALF * h, e->col[f] % 8),
					_mm512_set1_ps(e->r[f]), qr[h]);
		for (int h = 0; h < 2; h++)
			sum[h] = _mm512_fmadd_ps(half_heads(pn->scale, e->g, h),
						 qr[h], sum[h]);
	}
}

__attribute__((target("avx512vnni"))) static inline
__attribute__((always_inline)) void
dig_micro(const struct kern_panel *pn, const struct q4_matrix *w, int rows,
	  const struct kern_dig_tok *tk, const int T, float *y, size_t ystride)
{
	const __mmask16 keep[2] = {
		(__mmask16)(rows >= HALF ? 0xffff : (1u << rows) - 1),
		(__mmask16)(rows <= HALF ? 0 : (1u << (rows - HALF)) - 1) };
	const int G = w->group, kpad = tk[0].kpad;
	const int32_t *cw = pn->codes;
	__m512 sum[DIG_T][2];

	_Pragma("GCC unroll 3")
	for (int t = 0; t < T; t++)
		sum[t][0] = sum[t][1] = _mm512_setzero_ps();
	for (int g = 0; g < w->ngroups; g++) {
		__m512i a[3][2][DIG_T];

		_Pragma("GCC unroll 3")
		for (int t = 0; t < T; t++)
			_Pragma("GCC unroll 3")
			for (int k = 0; k < 3; k++)
				a[k][0][t] = a[k][1][t] = _mm512_setzero_si512();
		_Pragma("GCC unroll 4")
		for (int o = g * G / 8; o < (g + 1) * G / 8; o++, cw += 2 * HALF) {
			__m512i lo[2], hi[2];

			octet_nibbles(cw, lo, hi);
			_Pragma("GCC unroll 3")
			for (int t = 0; t < T; t++)
				_Pragma("GCC unroll 3")
				for (int k = 0; k < 3; k++) {
					const int8_t *d = tk[t].d + (size_t)k * kpad +
							  8 * (size_t)o;
					const __m512i xl = word(d), xh = word(d + 4);

					a[k][0][t] = _mm512_dpbusd_epi32(a[k][0][t], lo[0], xl);
					a[k][1][t] = _mm512_dpbusd_epi32(a[k][1][t], lo[1], xl);
					a[k][0][t] = _mm512_dpbusd_epi32(a[k][0][t], hi[0], xh);
					a[k][1][t] = _mm512_dpbusd_epi32(a[k][1][t], hi[1], xh);
				}
		}
		__m512 sv[2], bv[2];

		panel_heads(pn, g, sv, bv);

		_Pragma("GCC unroll 3")
		for (int t = 0; t < T; t++) {
			const __m512 u = _mm512_set1_ps(tk[t].us[2 * g]);
			const __m512 sx = _mm512_set1_ps(tk[t].us[2 * g + 1]);

			_Pragma("GCC unroll 2")
			for (int h = 0; h < 2; h++) {
				const __m512 f = _mm512_fmadd_ps(
					_mm512_cvtepi32_ps(a[2][h][t]),
					_mm512_set1_ps(65536.0f),
					_mm512_fmadd_ps(_mm512_cvtepi32_ps(a[1][h][t]),
							_mm512_set1_ps(256.0f),
							_mm512_cvtepi32_ps(a[0][h][t])));

				sum[t][h] = _mm512_fmadd_ps(
					bv[h], sx,
					_mm512_fmadd_ps(_mm512_mul_ps(sv[h], u), f,
							sum[t][h]));
			}
		}
	}
	for (int t = 0; t < T; t++) {
		if (tk[t].nx)
			dig_extras(pn, w, &tk[t], sum[t]);
		for (int h = 0; h < 2; h++)
			_mm512_mask_storeu_ps(y + (size_t)t * ystride + HALF * h,
					      keep[h], sum[t][h]);
	}
}

/* dig_micro for 1 .. DIG_T tokens (a constant count in each call) */
__attribute__((target("avx512vnni"))) static void
dig_run(const struct kern_panel *pn, const struct q4_matrix *w, int rows,
	const struct kern_dig_tok *t, int T, float *y, size_t ystride)
{
	_Static_assert(DIG_T == 3, "1 to 3 tokens here");
	if (T == 1)
		dig_micro(pn, w, rows, t, 1, y, ystride);
	else if (T == 2)
		dig_micro(pn, w, rows, t, 2, y, ystride);
	else
		dig_micro(pn, w, rows, t, 3, y, ystride);
}

/* ---- FP16 weights at batch ----
 * From F16_BATCH tokens each row's weights are converted once for a tile
 * of F16_T tokens, not once a token: F16_R rows x F16_T tokens of sums in
 * registers, 16 columns a step (a row's 16 weights through vcvtph2ps, a
 * token's 16 activations from xf), the rows of a block of F16_ROWS (in
 * L2) meeting every tile in turn. Each row's weights are prefetched half
 * KERN_PREFETCH_BYTES ahead (4096x4096 x 4, 2 threads: 0.78-0.83 ms
 * without, 0.64 ms with; 11008x4096 x 4: 2.98 against 2.15 ms; 0.66 and
 * 2.33 ms a whole KERN_PREFETCH_BYTES ahead; AMD EPYC 2 vCPUs,
 * 2026-12-02). */
#define F16_BATCH 4
#define F16_R 4
#define F16_T 6
#define F16_ROWS 64

static inline __attribute__((always_inline)) void
f16_micro(const uint16_t *w, int k, const struct kern_x *x, int r, const int R,
	  int i0, const int T, float *y, int n)
{
	__m512 acc[F16_R][F16_T];
	const int k16 = k / 16 * 16;

	_Pragma("GCC unroll 8")
	for (int j = 0; j < R; j++)
		_Pragma("GCC unroll 8")
		for (int t = 0; t < T; t++)
			acc[j][t] = _mm512_setzero_ps();
	for (int c = 0; c < k; c += 16) {
		/* past k: no weights (the next row's), activations are 0 */
		const __mmask16 keep = c < k16 ? 0xffff :
					 (__mmask16)((1u << (k - c)) - 1);
		__m512 wv[F16_R];

		_Pragma("GCC unroll 8")
		for (int j = 0; j < R; j++) {
			if (!(c & 31))
				__builtin_prefetch(w + (size_t)(r + j) * k + c +
						   KERN_PREFETCH_BYTES / 2);
			wv[j] = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(keep,
				w + (size_t)(r + j) * k + c));
		}
		_Pragma("GCC unroll 8")
		for (int t = 0; t < T; t++) {
			__m512 xv = _mm512_loadu_ps(x->xf + (size_t)(i0 + t) *
						    x->stride + c);

			_Pragma("GCC unroll 8")
			for (int j = 0; j < R; j++)
				acc[j][t] = _mm512_fmadd_ps(wv[j], xv, acc[j][t]);
		}
	}
	_Pragma("GCC unroll 8")
	for (int j = 0; j < R; j++)
		_Pragma("GCC unroll 8")
		for (int t = 0; t < T; t++)
			y[(size_t)(i0 + t) * n + r + j] = _mm512_reduce_add_ps(acc[j][t]);
}

/* f16_micro with R and T constants: F16_R rows, or one at a time for the
 * last few of a block */
static void f16_tile(const uint16_t *w, int k, const struct kern_x *x, int r,
		     int R, int i0, int T, float *y, int n)
{
	for (int j = 0; j < R; j += R == F16_R ? F16_R : 1) {
		const int rows = R == F16_R ? F16_R : 1;

		switch (T) {
#define CASE(t)                                                                \
	case t:                                                                \
		if (rows == F16_R)                                             \
			f16_micro(w, k, x, r + j, F16_R, i0, t, y, n);         \
		else                                                           \
			f16_micro(w, k, x, r + j, 1, i0, t, y, n);             \
		break;
			CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6)
#undef CASE
		}
	}
}

static void f16(const uint16_t *w, int n, const struct kern_x *x, float *y,
		int r0, int r1)
{
	if (x->m < F16_BATCH) {
		kern_avx2_f16(w, n, x, y, r0, r1);
		return;
	}
	for (int rb = r0; rb < r1; rb += F16_ROWS) {
		int re = rb + F16_ROWS < r1 ? rb + F16_ROWS : r1;

		for (int i0 = 0; i0 < x->m; i0 += F16_T) {
			int T = x->m - i0 < F16_T ? x->m - i0 : F16_T;

			for (int r = rb; r < re; r += F16_R)
				f16_tile(w, x->k, x, r, re - r < F16_R ? re - r : F16_R,
					 i0, T, y, n);
		}
	}
}

const struct kern kern_avx512 = { .name = "avx512", .interleave = INTERLEAVE,
				  .q4 = q4, .q8 = kern_avx2_q8, .f16 = f16,
				  .f32 = f32, .sx_blocks = 1,
				  .lend = &kern_avx2, .lend_groups = 32 | 64,
				  .load = kern_avx2_load,
				  .attend = kern_avx2_attend,
				  .to_f16 = kern_avx2_to_f16,
				  .quantize = kern_avx2_quantize };
const struct kern kern_avx512_vnni = { .name = "avx512-vnni",
				       .interleave = INTERLEAVE,
				       .q4 = q4_vnni, .q8 = kern_avx2_q8,
				       .f16 = f16, .f32 = f32, .sx_blocks = 1,
				       .a8_pack = a8_pack,
				       .a8_run = a8_tile, .a8_panel = PANEL,
				       .a8_panels = PANELS, .a8_tile = TILE,
				       .digits = digits,
				       .digit_groups = 32 | 64 | 128,
				       .dig_run = dig_run,
				       .load = kern_avx2_load,
				       .a8_load = kern_avx2_a8_load,
				       .attend = kern_avx2_attend,
				       .to_f16 = kern_avx2_to_f16,
				       .quantize = kern_avx2_quantize };
