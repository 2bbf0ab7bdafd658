/* kern_avx2.c: W4A16, W4A8, W8A16 and FP16 kernels for x86-64 with AVX2,
 * FMA and F16C (compiled with those flags; kern.c checks the CPU before
 * use).
 *
 * W4A16: 32 bytes of codes are two chunks (64 weights) in 8 lanes: lanes 0-3
 * hold the words of chunk A, lanes 4-7 those of chunk B, and step t of 8
 * takes nibble t of every lane, i.e. weights 4t..4t+3 of A and of B, which
 * is how kern.c orders the activations. A code q becomes the float 1 + q/16
 * by placing it under an exponent of 0 (bits 19..22 of 0x3F800000): a shift,
 * an and, an or; no conversion instruction. So each lane sums
 * P = sum (1 + q/16) x, and a group contributes
 *     s sum q x + b sum x = 16 s P + (b - 16 s) SX,
 * with SX, the group's activation sum, prepared once per call: q4_row,
 * for blocks of 8 tokens or more on short rows (dig_takes) where the
 * weights are not packed for the integer path (further down), and the
 * groups the activations' digits cannot hold. Other batches take each
 * token from its digits (further down, with the plain avx512 set's G = 32
 * and 64 below 4 tokens; avx-vnni's sums them with vpdpbusd). Where the
 * weights are packed (the models, `bench kernels`), both sets' exact
 * products take the digits over the integer path's panels at every batch
 * (at the end). The set's FP16 conversion, FP32 product and attention follow,
 * shared by the AVX-512 sets. */
#include "kern.h"
#include "f16.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

/* The 8 vectors 1 + q/16 of a pair of chunks. */
static inline void codes_to_f(__m256i w, __m256 f[8])
{
	const __m256i mask = _mm256_set1_epi32(0x00780000);
	const __m256i one = _mm256_set1_epi32(0x3F800000);

	/* keep w in a register: folded into each shift as a memory operand,
	 * the codes would be loaded eight times */
	__asm__("" : "+v"(w));
#define STEP(t, shifted)                                                      \
	f[t] = _mm256_castsi256_ps(                                           \
		_mm256_or_si256(_mm256_and_si256(shifted, mask), one))
	STEP(0, _mm256_slli_epi32(w, 19));
	STEP(1, _mm256_slli_epi32(w, 15));
	STEP(2, _mm256_slli_epi32(w, 11));
	STEP(3, _mm256_slli_epi32(w, 7));
	STEP(4, _mm256_slli_epi32(w, 3));
	STEP(5, _mm256_srli_epi32(w, 1));
	STEP(6, _mm256_srli_epi32(w, 5));
	STEP(7, _mm256_srli_epi32(w, 9));
#undef STEP
}

static inline float hsum(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v),
			      _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* The head (struct q4_head: scale, bias) at p, as bits */
static inline int32_t head_word(const uint8_t *p)
{
	int32_t h;

	memcpy(&h, p, Q4_HEAD_BYTES);
	return h;
}

/* The head (scale, bias) at p as floats [s, b, 0, 0]. */
static inline __m128 header(const uint8_t *p)
{
	return _mm_cvtph_ps(_mm_cvtsi32_si128(head_word(p)));
}

/* Codes of chunk pair (a, b); b NULL: zero codes (a row's odd last chunk). */
static inline __m256i load_pair(const uint8_t *a, const uint8_t *b)
{
	__m128i lo = _mm_loadu_si128((const __m128i *)a);
	__m128i hi = b ? _mm_loadu_si128((const __m128i *)b) : _mm_setzero_si128();

	return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* P = sum (1 + q/16) x over a pair of chunks, lanewise: the code vectors f
 * against the pair's 64 activations at xp, in two chains. */
static inline __m256 pair_dot(const __m256 f[8], const float *xp)
{
	__m256 p = _mm256_mul_ps(f[0], _mm256_loadu_ps(xp));
	__m256 q = _mm256_mul_ps(f[1], _mm256_loadu_ps(xp + 8));

	p = _mm256_fmadd_ps(f[2], _mm256_loadu_ps(xp + 16), p);
	q = _mm256_fmadd_ps(f[3], _mm256_loadu_ps(xp + 24), q);
	p = _mm256_fmadd_ps(f[4], _mm256_loadu_ps(xp + 32), p);
	q = _mm256_fmadd_ps(f[5], _mm256_loadu_ps(xp + 40), q);
	p = _mm256_fmadd_ps(f[6], _mm256_loadu_ps(xp + 48), p);
	q = _mm256_fmadd_ps(f[7], _mm256_loadu_ps(xp + 56), q);
	return _mm256_add_ps(p, q);
}

/* (b - 16 s) SX of the 16 tokens of a block (their sums at sxt) added to
 * corr, the group's head h */
static inline void bias_terms(__m128 h, const float *sxt, __m256 corr[2])
{
	const __m256 k = _mm256_set1_ps(_mm_cvtss_f32(_mm_movehdup_ps(h)) -
					16 * _mm_cvtss_f32(h));

	corr[0] = _mm256_fmadd_ps(k, _mm256_load_ps(sxt), corr[0]);
	corr[1] = _mm256_fmadd_ps(k, _mm256_load_ps(sxt + 8), corr[1]);
}

/* One row, the block of up to n tokens from i0 (n 8 or 16, i0 a multiple
 * of n: within one block of x->sxb). Per pair: header lanes,
 * code vectors, then each token. acc[i] sums s P lanewise; corr sums
 * (b - 16 s) SX, token i0 + i in lane (i0 + i) % 16 (x->sxb). */
static void q4_row(const struct q4_matrix *w, const struct kern_x *x, int r,
		   int i0, int n, float *y)
{
	const uint8_t *row = w->data + (size_t)r * w->row_bytes;
	const int g = w->group, m = x->m, chunks = w->ngroups * (g / 32);
	const int lg = 2 - q4_span_log(g); /* 1 << lg chunks a group, of 4 a span */
	const int lane0 = i0 % 16;
	const float *sxt = x->sxb + (size_t)(i0 - lane0) * x->ngroups;
	const int mi = m - i0 < n ? m - i0 : n;
	__m256 acc[16], corr[2];
	float cl[16];

	for (int i = 0; i < mi; i++)
		acc[i] = _mm256_setzero_ps();
	corr[0] = corr[1] = _mm256_setzero_ps();
	for (int c = 0; c < chunks; c += 2) {
		const int ga = c >> lg, gb = (c + 1) >> lg;
		/* c even: chunk c + 1 follows in the same span */
		const uint8_t *qa = row + q4_chunk_at(w, c);
		const uint8_t *qb = c + 1 < chunks ? qa + 16 : NULL;
		__m256 f[8], sv;
		__m128 ha = header(row + q4_head_at(w, ga)), hb;

		PREFETCH(qa, 32);
		hb = !qb ? _mm_setzero_ps() : gb == ga ? ha :
		     header(row + q4_head_at(w, gb));
		codes_to_f(load_pair(qa, qb), f);
		sv = _mm256_insertf128_ps(
			_mm256_castps128_ps256(_mm_broadcastss_ps(ha)),
			_mm_broadcastss_ps(hb), 1);
		for (int i = 0; i < mi; i++) {
			const float *xp = x->xf + (size_t)(i0 + i) * x->stride +
					  (size_t)c * 32;

			acc[i] = _mm256_fmadd_ps(sv, pair_dot(f, xp), acc[i]);
		}
		/* a group's bias terms once, at its first chunk */
		if (!(c & ((1 << lg) - 1)))
			bias_terms(ha, sxt + (size_t)16 * ga, corr);
		if (qb && gb != ga)
			bias_terms(hb, sxt + (size_t)16 * gb, corr);
	}
	_mm256_storeu_ps(cl, corr[0]);
	_mm256_storeu_ps(cl + 8, corr[1]);
	for (int i = 0; i < mi; i++)
		y[(size_t)(i0 + i) * w->n + r] = 16 * hsum(acc[i]) +
						 cl[lane0 + i];
}

/* ---- batch 1 from the activations' digits (kern.h's kern_dig_*) ----
 * kern_avx512.c's integer method on 8 lanes, for groups of 32, 64 and 128,
 * through vpmaddubsw (unsigned codes times signed bytes, two products
 * summed into each 16-bit lane), or in the avx-vnni set through vpdpbusd
 * (four into each 32-bit lane: dig_dot). A group's values become integers
 * v = x / u, u = 2^(e - 22) for the smallest e with max |x| < 2^e, split
 * into signed bytes v = 65536 d2 + 256 d1 + d0 (d2 in [-64, 64]); up to
 * KERN_DIG_FIXES values with bits below u (far smaller than the group's
 * largest: FP16 has 11 significant bits) are rounded and keep their
 * residuals, and a group with more takes the float method (u 0, digits 0).
 * Each token has its own (dig_takes). A token's digits
 * are, for each pair of chunks p (64 values: the span a vector of codes
 * covers), DIG_PAIR bytes: d2, d1 and d0, each as 32 bytes under the
 * pair's low nibbles and 32 under its high ones (xf's vector t holds
 * weight 4t + l of chunk h in lane 4h + l, and code byte b of lane j holds
 * weights 8b + l and 8b + 4 + l: so byte b of lane j is vector 2b's lane j
 * under the low nibbles, vector 2b + 1's under the high ones). A row's
 * group then costs, for each pair, a load, 3 instructions to decode and 6
 * products with 6 sums, where the float method takes 24 to decode and 9
 * products; sums widen once a group. */
#define DIG_PAIR 192

/* Each token takes the batch-1 path from its own digits in turn below
 * DIG_FLOAT_TOKENS tokens, and at any batch where a row holds
 * DIG_LONG_ROW weights or more; else the tokens take q4_row's float loop
 * (a pair's codes decoded once for 8 or 16 tokens). Digits a token cost a fixed
 * ~30 cycles a row and token, which short rows do not amortise: hot on one
 * thread (EPYC Zen 4, --kernel avx2, 2026-12-06) the loop took 19-25% more
 * time than the digits at 4 tokens at every shape timed, 14-18% more at 8
 * and 7-12% at 16 on rows of 4096, but 5-20% less from 8 tokens on rows of
 * 576 (docs/performance.md). SmolLM2-135M's two-token step (group 32, one
 * thread) took 49.2-51.7 ms through the loop, 40-42 ms a token at a time
 * by the float method and 34-37 ms from digits (EPYC AVX2, 2026-12-05). */
#define DIG_FLOAT_TOKENS 8
#define DIG_LONG_ROW 2048

static inline bool dig_takes(int m, int k)
{
	return m < DIG_FLOAT_TOKENS || k >= DIG_LONG_ROW;
}

/* Pairs of chunks a token's digits cover */
static inline int dig_pairs(const struct kern_x *x)
{
	return (x->ngroups * x->group + 63) / 64;
}

/* Lanewise max of a vector over each group the pair spans: its 4-lane
 * half (G = 32) or all 8 */
static inline __m256 group_max(__m256 m, int G)
{
	m = _mm256_max_ps(m, _mm256_permute_ps(m, 0xB1));
	m = _mm256_max_ps(m, _mm256_permute_ps(m, 0x4E));
	return G == 32 ? m : _mm256_max_ps(m, _mm256_permute2f128_ps(m, m, 1));
}

/* A pair's digits dt (vector t, lane 4c + l: column 32c + 4t + l's digit
 * k in dt[t][k]) as planes (kern_x.dig_planes): digit k of the pair's
 * column j at d + k kpad + j. Packing vectors t and t + 1 to words, then
 * those of t + 2 and t + 3 with them to bytes (saturating, so exact:
 * digits are bytes), puts lanes 0-3 of vectors 4h .. 4h + 3 in order in
 * the low 128 bits (columns 16h ..) and their lanes 4-7 in the high ones
 * (32 + 16h ..). */
static inline void dig_planes(__m256i dt[8][3], int8_t *d, int kpad)
{
	for (int k = 0; k < 3; k++) {
		__m256i b[2];

		for (int h = 0; h < 2; h++)
			b[h] = _mm256_packs_epi16(
				_mm256_packs_epi32(dt[4 * h][k], dt[4 * h + 1][k]),
				_mm256_packs_epi32(dt[4 * h + 2][k], dt[4 * h + 3][k]));
		_mm256_storeu_si256((__m256i *)(d + (size_t)k * kpad),
				    _mm256_permute2x128_si256(b[0], b[1], 0x20));
		_mm256_storeu_si256((__m256i *)(d + (size_t)k * kpad + 32),
				    _mm256_permute2x128_si256(b[0], b[1], 0x31));
	}
}

/* One span (a pair at G <= 64, two at G = 128) of token i's xf from pair
 * p0: its groups' units and digits (in the row kernels' order, or as
 * planes), and their extras counted into *nx */
static void dig_span(struct kern_x *x, int i, int p0, int np, int *nx)
{
	const __m256 sign = _mm256_set1_ps(-0.0f);
	const __m256i byte = _mm256_set1_epi32(255);
	const int G = x->group;
	const float *xp = x->xf + (size_t)i * x->stride + (size_t)p0 * 64;
	float *us = kern_dig_us(x, i);
	__m256 v[16], m = _mm256_setzero_ps(), scale, unit;
	__m256i iv[16], e, keep;
	int inexact[16], count[2] = { 0, 0 }, groups = G == 32 ? 2 : 1;

	for (int t = 0; t < 8 * np; t++) {
		v[t] = _mm256_load_ps(xp + 8 * t);
		m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[t]));
	}
	m = group_max(m, G);
	/* e = exponent(max) - 126, or 0 for a group of zeros */
	e = _mm256_and_si256(_mm256_sub_epi32(_mm256_srli_epi32(
					_mm256_castps_si256(m), 23),
					_mm256_set1_epi32(126)),
			     _mm256_castps_si256(_mm256_cmp_ps(
				m, _mm256_setzero_ps(), _CMP_GT_OQ)));
	scale = _mm256_castsi256_ps(_mm256_slli_epi32(
		_mm256_sub_epi32(_mm256_set1_epi32(22 + 127), e), 23));
	unit = _mm256_castsi256_ps(_mm256_slli_epi32(
		_mm256_add_epi32(_mm256_set1_epi32(127 - 22), e), 23));
	for (int t = 0; t < 8 * np; t++) {
		__m256 y = _mm256_mul_ps(v[t], scale);

		iv[t] = _mm256_cvtps_epi32(y);
		inexact[t] = _mm256_movemask_ps(_mm256_cmp_ps(
			_mm256_cvtepi32_ps(iv[t]), y, _CMP_NEQ_UQ));
		if (G == 32) {
			count[0] += __builtin_popcount(inexact[t] & 15);
			count[1] += __builtin_popcount(inexact[t] >> 4);
		} else {
			count[0] += __builtin_popcount(inexact[t]);
		}
	}
	/* lanes of a group with too many inexact values: u 0, digits 0 */
	{
		const int k0 = -(count[0] <= KERN_DIG_FIXES);
		const int k1 = -(count[groups - 1] <= KERN_DIG_FIXES);

		keep = _mm256_setr_epi32(k0, k0, k0, k0, k1, k1, k1, k1);
	}
	unit = _mm256_and_ps(unit, _mm256_castsi256_ps(keep));
	for (int gi = 0; gi < groups; gi++) {
		int g = G == 32 ? 2 * p0 + gi : p0 * 64 / G;
		float u = _mm256_cvtss_f32(_mm256_permutevar8x32_ps(
			unit, _mm256_set1_epi32(4 * gi)));
		struct kern_dig_extra *ex;

		if (g >= x->ngroups)
			break;
		us[2 * g] = u;
		us[2 * g + 1] = x->sx[(size_t)i * x->ngroups + g];
		if (count[gi] == 0)
			continue;
		ex = kern_dig_extra_new(x, i, nx, g);
		if (u == 0)
			continue;
		for (int t = 0; t < 8 * np; t++) {
			const int l0 = G == 32 ? 4 * gi : 0, l1 = G == 32 ? l0 + 4 : 8;
			float xv[8];
			int32_t qv[8];

			if (!(inexact[t] >> l0 & ((1 << (l1 - l0)) - 1)))
				continue;
			_mm256_storeu_ps(xv, v[t]);
			_mm256_storeu_si256((__m256i *)qv, iv[t]);
			for (int ln = l0; ln < l1; ln++) {
				if (!(inexact[t] >> ln & 1))
					continue;
				/* vector t of the span, lane ln: pair t / 8,
				 * chunk ln / 4, weight 4 (t % 8) + ln % 4 */
				kern_dig_fix(ex, (G == 32 ? 0 : 64 * (t / 8) +
						  32 * (ln / 4)) +
						 4 * (t % 8) + ln % 4,
					     xv[ln] - (float)qv[ln] * u);
			}
		}
	}
	for (int p = 0; p < np; p++) {
		__m256i dt[8][3];
		int8_t *d = kern_dig_at(x, i) + (size_t)(p0 + p) * DIG_PAIR;

		for (int t = 0; t < 8; t++) {
			__m256i q = _mm256_and_si256(iv[8 * p + t], keep);

			for (int k = 0; k < 2; k++) {
				dt[t][k] = _mm256_srai_epi32(_mm256_slli_epi32(q, 24), 24);
				q = _mm256_srai_epi32(_mm256_sub_epi32(q, dt[t][k]), 8);
			}
			dt[t][2] = q;
		}
		if (x->dig_planes) {
			dig_planes(dt, kern_dig_at(x, i) + (size_t)(p0 + p) * 64,
				   x->kpad);
			continue;
		}
		for (int h = 0; h < 2; h++)
			for (int k = 0; k < 3; k++) {
				__m256i b = _mm256_and_si256(dt[h][k], byte);

				b = _mm256_or_si256(b, _mm256_slli_epi32(
					_mm256_and_si256(dt[2 + h][k], byte), 8));
				b = _mm256_or_si256(b, _mm256_slli_epi32(
					_mm256_and_si256(dt[4 + h][k], byte), 16));
				b = _mm256_or_si256(b, _mm256_slli_epi32(dt[6 + h][k], 24));
				_mm256_store_si256((__m256i *)(d + 64 * (2 - k) + 32 * h), b);
			}
	}
}

/* Each token's digits, where dig_takes says, or as planes at any count */
static void digits(struct kern_x *x)
{
	const int G = x->group, span = G == 128 ? 2 : 1;
	const int pairs = dig_pairs(x);

	if (!dig_takes(x->m, x->k) && !x->dig_planes)
		return;
	kern_dig_alloc(x);
	for (int i = 0; i < x->m; i++) {
		int nx = 0;

		for (int p0 = 0; p0 < pairs; p0 += span)
			dig_span(x, i, p0, pairs - p0 < span ? pairs - p0 : span, &nx);
		*kern_dig_count(x, i) = nx;
	}
}

/* A pair's codes z against its digits at d: s[k] (k = 0, 1, 2: d2, d1, d0)
 * gets the 16-bit sums of digit k under the low and the high nibbles,
 * added (first: set) */
static inline __attribute__((always_inline)) void
pair_digits(__m256i z, const int8_t *d, __m256i s[3], const int first)
{
	const __m256i low = _mm256_set1_epi8(0x0f);
	const __m256i lo = _mm256_and_si256(z, low);
	const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(z, 4), low);

	_Pragma("GCC unroll 3")
	for (int k = 0; k < 3; k++) {
		__m256i p = _mm256_add_epi16(
			_mm256_maddubs_epi16(lo, _mm256_load_si256(
				(const __m256i *)(d + 64 * k))),
			_mm256_maddubs_epi16(hi, _mm256_load_si256(
				(const __m256i *)(d + 64 * k + 32))));

		s[k] = first ? p : _mm256_add_epi16(s[k], p);
	}
}

/* 65536 s[0] + 256 s[1] + s[2] in 32-bit lanes, for 16-bit lanes of at
 * most 16 products of a code (15 at most) by a digit (|d| <= 128), and
 * 32-bit lanes of at most 32 codes by |v| <= 2^22 (x / u rounded, kern.h):
 * a row's two pairs (a group of 128; 8 products, 16 codes) or a panel's
 * chunk (dig_token; 16 and 32) */
static inline __m256i widen(const __m256i s[3])
{
	_Static_assert(16 * 15 * 128 < 32768,
		       "16-bit sums of digits do not overflow");
	_Static_assert(32LL * 15 * (1 << 22) < 2147483647LL,
		       "a 32-bit lane's sum q.v does not overflow");
	const __m256i ones = _mm256_set1_epi16(1);
	__m256i t = _mm256_add_epi32(_mm256_madd_epi16(s[0], _mm256_set1_epi16(256)),
				     _mm256_madd_epi16(s[1], ones));

	return _mm256_add_epi32(_mm256_slli_epi32(t, 8),
				_mm256_madd_epi16(s[2], ones));
}

/* 65536 s[0] + 256 s[1] + s[2], for 32-bit sums of a digit each (2, 1,
 * 0), of at most 32 codes by |v| <= 2^22 (widen's bound) */
static inline __m256i dig_join(const __m256i s[3])
{
	const __m256i v = _mm256_add_epi32(_mm256_slli_epi32(s[0], 16),
					   _mm256_slli_epi32(s[1], 8));

	return _mm256_add_epi32(v, s[2]);
}

/* vpdpbusd (KERN_VNNI_FORM's) as an instruction, not an intrinsic: the
 * functions that hold it serve avx2 too, and run it only in the avx-vnni
 * set's instances (vnni, a constant where inlined), which kern.c picks
 * only on a CPU that has it; and a build of either form compiles the
 * same code around it */
static inline __m256i dpbusd_insn(__m256i acc, __m256i u8, __m256i s8)
{
	__asm__(KERN_VNNI_FORM "vpdpbusd %2, %1, %0"
		: "+x"(acc) : "x"(u8), "x"(s8));
	return acc;
}

/* q.v in 32-bit lanes over np (1 or 2) pairs of chunks, their codes z[p]
 * against the digits at d + p DIG_PAIR: with vnni, vpdpbusd sums four
 * products into each 32-bit lane exactly, ((q.d2) 256 + q.d1) 256 + q.d0
 * (under 2^30, as widen's); without, vpmaddubsw's 16-bit sums widened
 * once (pair_digits, widen) */
static inline __attribute__((always_inline)) __m256i
dig_dot(const __m256i z[2], const int8_t *d, const int np, const int vnni)
{
	const __m256i low = _mm256_set1_epi8(0x0f);
	__m256i s[3], lo[2], hi[2];

	if (!vnni) {
		pair_digits(z[0], d, s, 1);
		if (np == 2)
			pair_digits(z[1], d + DIG_PAIR, s, 0);
		return widen(s);
	}
	for (int p = 0; p < np; p++) {
		lo[p] = _mm256_and_si256(z[p], low);
		hi[p] = _mm256_and_si256(_mm256_srli_epi16(z[p], 4), low);
	}
	/* three chains, one a digit, joined at the end: one chain through
	 * all six products waits on each (measured slower) */
	_Pragma("GCC unroll 3")
	for (int k = 0; k < 3; k++) {
		s[k] = _mm256_setzero_si256();
		_Pragma("GCC unroll 2")
		for (int p = 0; p < np; p++) {
			const int8_t *dk = d + (size_t)p * DIG_PAIR + 64 * k;

			s[k] = dpbusd_insn(s[k], lo[p],
					  _mm256_load_si256((const __m256i *)dk));
			s[k] = dpbusd_insn(s[k], hi[p], _mm256_load_si256(
						  (const __m256i *)(dk + 32)));
		}
	}
	return dig_join(s);
}

/* sum q x over group g (its codes at q) by the float method: 16 (P - SX),
 * P = sum (1 + q/16) x */
static float group_qx(const struct q4_matrix *w, const struct kern_dig_tok *t,
		      const uint8_t *q, int g)
{
	__m256 f[8], p = _mm256_setzero_ps();
	float lanes[8], sum = 0;

	if (w->group == 32) { /* the chunk's half of its pair */
		__m128i c = _mm_loadu_si128((const __m128i *)q);

		codes_to_f(g & 1 ? _mm256_inserti128_si256(_mm256_setzero_si256(), c, 1) :
				   _mm256_zextsi128_si256(c), f);
		_mm256_storeu_ps(lanes, pair_dot(f, t->xf + (size_t)g / 2 * 64));
		for (int l = 4 * (g & 1); l < 4 * (g & 1) + 4; l++)
			sum += lanes[l];
		return 16 * (sum - t->sx[g]);
	}
	for (int pi = 0; pi < w->group / 64; pi++) {
		codes_to_f(_mm256_loadu_si256((const __m256i *)(q + 32 * pi)), f);
		p = _mm256_add_ps(p, pair_dot(f, t->xf + (size_t)g * w->group + 64 * pi));
	}
	return 16 * (hsum(p) - t->sx[g]);
}

/* One span of G = 64 or 128 from digits (pairs = G / 64 and its n groups
 * constants where inlined), at b, its first group's [u, SX] at usg: its
 * heads [s0 b0 s1 b1] times [u0 SX0 u1 SX1] in hu, then a group's sums
 * widened once and *acc += float(sum q v) (s u); *corr's odd lanes sum
 * the bias terms b sum(x) */
static inline __attribute__((always_inline)) void
span_dig_pairs(const uint8_t *b, const int n, const int pairs,
	       const float *usg, const int8_t *d, const int vnni, __m256 *acc,
	       __m128 *corr)
{
	const uint8_t *q = b + Q4_HEAD_BYTES * n;
	__m128 hu;

	PREFETCH(b, 64 + Q4_HEAD_BYTES * n);
	hu = n == 2 ? _mm_mul_ps(_mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)b)),
				 _mm_loadu_ps(usg)) :
		      _mm_mul_ps(header(b), _mm_castsi128_ps(_mm_loadl_epi64(
						    (const __m128i *)usg)));
	*corr = _mm_add_ps(*corr, hu);
	for (int j = 0; j < n; j++, d += pairs * DIG_PAIR) {
		/* group j's s u, from lane 2j */
		const __m128 su = j ? _mm_movehl_ps(hu, hu) : hu;
		__m256i z[2];

		for (int p = 0; p < pairs; p++)
			z[p] = _mm256_loadu_si256((const __m256i *)(q +
				32 * (pairs * j + p)));
		*acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dig_dot(z, d, pairs, vnni)),
				       _mm256_broadcastss_ps(su), *acc);
	}
}

/* Batch 1 from digits, G = 64 or 128 (pairs = G / 64, a constant where
 * inlined): whole spans, then a row's short last one */
static inline __attribute__((always_inline)) void
row1_dig_pairs(const struct q4_matrix *w, const struct kern_dig_tok *t, int r,
	       const int pairs, const int vnni, float *y)
{
	const uint8_t *row = w->data + (size_t)r * w->row_bytes;
	const int per = 2 / pairs, whole = w->ngroups / per; /* groups a span */
	__m256 acc = _mm256_setzero_ps();
	__m128 corr = _mm_setzero_ps();

	for (int sp = 0; sp < whole; sp++)
		span_dig_pairs(row + (size_t)sp * w->span_bytes, per, pairs,
			       t->us + 2 * per * sp,
			       t->d + (size_t)sp * 2 * DIG_PAIR, vnni, &acc, &corr);
	if (whole * per < w->ngroups) /* G = 64: one group */
		span_dig_pairs(row + (size_t)whole * w->span_bytes, 1, pairs,
			       t->us + 2 * per * whole,
			       t->d + (size_t)whole * 2 * DIG_PAIR, vnni, &acc,
			       &corr);
	corr = _mm_movehdup_ps(corr); /* lanes 1 and 3 */
	corr = _mm_add_ss(corr, _mm_movehl_ps(corr, corr));
	y[r] = hsum(acc) + _mm_cvtss_f32(corr) +
	       (t->nx ? kern_dig_rest(w, t, r, group_qx) : 0);
}

/* Tokens t[0 .. n) by their digits, row r each into y[i ystride + r] */
typedef void row1_dig_fn(const struct q4_matrix *w,
			 const struct kern_dig_tok *t, int n, int r, float *y,
			 size_t ystride);

/* G = 64 or 128: a group one or two pairs */
static inline __attribute__((always_inline)) void
row1_dig_64(const struct q4_matrix *w, const struct kern_dig_tok *t, int r,
	    const int vnni, float *y)
{
	if (w->group == 128)
		row1_dig_pairs(w, t, r, 2, vnni, y);
	else
		row1_dig_pairs(w, t, r, 1, vnni, y);
}

/* Batch 1 from digits, G = 32: a pair of chunks is two groups. A span of
 * n <= 4 groups a step (at b), its heads converted at once, h = [s0 b0 s1
 * b1 s2 b2 s3 b3], times [u0, SX0, u1, SX1, ...]: the odd lanes are the
 * bias terms, the even ones each group's s u, picked into its pair's half.
 * Past group n heads, [u, SX] and codes are zero. */
static inline __attribute__((always_inline)) void
g32_dig_step(const uint8_t *b, const int n, const float *usp,
	     const int8_t *d, const int vnni, __m256 *acc, __m256 *corr)
{
	const __m256i pick[2] = { _mm256_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2),
				  _mm256_setr_epi32(4, 4, 4, 4, 6, 6, 6, 6) };
	const uint8_t *q = b + Q4_HEAD_BYTES * n;
	__m256 hu;

	PREFETCH(b, (int)q4_span_bytes(32));
	hu = _mm256_mul_ps(_mm256_cvtph_ps(n == 4 ?
		_mm_loadu_si128((const __m128i *)b) :
		_mm_setr_epi32(head_word(b), n > 1 ? head_word(b + 4) : 0,
			       n > 2 ? head_word(b + 8) : 0, 0)),
		_mm256_load_ps(usp));
	*corr = _mm256_add_ps(*corr, hu);
	_Pragma("GCC unroll 2")
	for (int p = 0; 2 * p < n; p++, d += DIG_PAIR) {
		const uint8_t *qa = q + 32 * p;
		const __m256i z[2] = { 2 * p + 1 < n ?
				       _mm256_loadu_si256((const __m256i *)qa) :
				       load_pair(qa, NULL),
				       _mm256_setzero_si256() };

		*acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dig_dot(z, d, 1, vnni)),
				       _mm256_permutevar8x32_ps(hu, pick[p]), *acc);
	}
}

static inline __attribute__((always_inline)) void
row1_dig_32(const struct q4_matrix *w, const struct kern_dig_tok *t, int r,
	    const int vnni, float *y)
{
	const uint8_t *row = w->data + (size_t)r * w->row_bytes;
	const size_t sb = w->span_bytes;
	const int ng = w->ngroups;
	const float *us = t->us;
	__m256 acc = _mm256_setzero_ps(), corr = _mm256_setzero_ps();
	int gi;

	for (gi = 0; gi + 4 <= ng; gi += 4) {
		const int8_t *d = t->d + (size_t)gi / 2 * DIG_PAIR;

		/* avx2's d opaque, so a register of its own: else each
		 * vpmaddubsw takes it as an indexed memory operand, which
		 * Intel cores issue as two micro-ops, not one (the G = 32 row
		 * 4-6% faster hot on avx2; avx-vnni, which loads its digits
		 * apart, was 4-9% slower from memory with it: Xeon, 2026-12-05) */
		if (!vnni)
			__asm__("" : "+r"(d));
		g32_dig_step(row + (size_t)gi / 4 * sb, 4, us + 2 * gi, d, vnni,
			     &acc, &corr);
	}
	if (ng - gi == 2)
		g32_dig_step(row + (size_t)gi / 4 * sb, 2, us + 2 * gi,
			     t->d + (size_t)gi / 2 * DIG_PAIR, vnni, &acc, &corr);
	else if (gi < ng)
		g32_dig_step(row + (size_t)gi / 4 * sb, ng - gi, us + 2 * gi,
			     t->d + (size_t)gi / 2 * DIG_PAIR, vnni, &acc, &corr);
	y[r] = hsum(_mm256_add_ps(acc, _mm256_blend_ps(_mm256_setzero_ps(),
							corr, 0xAA))) +
	       (t->nx ? kern_dig_rest(w, t, r, group_qx) : 0);
}

/* The row kernels of each set, each token's in turn: avx2's through
 * vpmaddubsw, avx-vnni's through vpdpbusd */
#define ROW_KERNEL(name, body, vnni)                                           \
	static void name(const struct q4_matrix *w,                            \
			 const struct kern_dig_tok *t, int n, int r, float *y, \
			 size_t ystride)                                       \
	{                                                                      \
		for (int i = 0; i < n; i++)                                    \
			body(w, &t[i], r, vnni, y + (size_t)i * ystride);      \
	}
ROW_KERNEL(row1_dig32, row1_dig_32, 0)
ROW_KERNEL(row1_dig64, row1_dig_64, 0)
ROW_KERNEL(row1_dig32_vnni, row1_dig_32, 1)
ROW_KERNEL(row1_dig64_vnni, row1_dig_64, 1)

/* Tokens q4_by takes at a time: at most DIG_BLOCK_TOKENS, whose digits
 * (3 bytes a value) fit DIG_BLOCK_BYTES, so that they stay in a core's L2
 * while its rows pass (each row's codes then from L1 after the first
 * token) */
#define DIG_BLOCK_TOKENS 16
/* The float loop's blocks, 16 or 8 tokens: 8 where their activations fit
 * this (of L1's 32 KB, the rest for the rows' codes) and 16 tokens' do
 * not. From L1 its token loop took 4.9-5.1 cycles a pair and token, from L2
 * 7.5-10.6 (a scratch copy, EPYC Zen 4, 2026-12-06: 576 columns in blocks
 * of 8 and 16); the kernel then took 15-20% less time at 16 and 64 tokens
 * at 49152x576 (SmolLM2's classifier shape). Blocks of 4 on rows of 1536
 * (in L1) took 6-9% more: the codes' decoding, once a pair for a block,
 * weighs more. */
#define FLOAT_BLOCK_BYTES ((size_t)28 << 10)
#define DIG_BLOCK_BYTES ((size_t)256 << 10)

static inline __attribute__((always_inline)) void
q4_by(const struct q4_matrix *w, const struct kern_x *x, float *y, int r0,
      int r1, row1_dig_fn *dig)
{
	const size_t fit = DIG_BLOCK_BYTES / (3 * (size_t)w->ngroups * w->group);
	const int block = fit < 1 ? 1 : fit > DIG_BLOCK_TOKENS ? DIG_BLOCK_TOKENS
							: (int)fit;
	struct kern_dig_tok t[DIG_BLOCK_TOKENS];

	if (!x->dig) { /* blocks dig_takes leaves to the float loop */
		/* a block's activations stay in L1 while the rows pass where
		 * 16 tokens' or 8's fit FLOAT_BLOCK_BYTES, else 16 tokens'
		 * in L2; a row at a time over every block would stream all m
		 * tokens' from L3 for each row */
		const size_t token = x->stride * sizeof(float);
		const int n = 16 * token > FLOAT_BLOCK_BYTES &&
			      8 * token <= FLOAT_BLOCK_BYTES ? 8 : 16;

		for (int i0 = 0; i0 < x->m; i0 += n)
			for (int r = r0; r < r1; r++)
				q4_row(w, x, r, i0, n, y);
		return;
	}
	for (int i0 = 0; i0 < x->m; i0 += block) {
		const int n = x->m - i0 < block ? x->m - i0 : block;

		for (int i = 0; i < n; i++)
			t[i] = kern_dig_tok(x, i0 + i);
		for (int r = r0; r < r1; r++)
			dig(w, t, n, r, y + (size_t)i0 * w->n, (size_t)w->n);
	}
}

static void q4(const struct q4_matrix *w, const struct kern_x *x, float *y,
	       int r0, int r1)
{
	q4_by(w, x, y, r0, r1, w->group == 32 ? row1_dig32 : row1_dig64);
}

static void q4_vnni(const struct q4_matrix *w, const struct kern_x *x,
		    float *y, int r0, int r1)
{
	q4_by(w, x, y, r0, r1, w->group == 32 ? row1_dig32_vnni : row1_dig64_vnni);
}

/* W8A16: 8 int8 weights at a time, sign-extended and converted. */
void kern_avx2_q8(const struct q8_matrix *w, const struct kern_x *x, float *y,
	       int r0, int r1)
{
	for (int r = r0; r < r1; r++) {
		const struct q8_block *b =
			(const struct q8_block *)(w->data + (size_t)r * w->row_bytes);

		for (int i = 0; i < x->m; i++) {
			const float *xp = x->xf + (size_t)i * x->stride;
			__m256 acc = _mm256_setzero_ps();

			for (int gi = 0; gi < w->ngroups; gi++, xp += 32) {
				__m256 p = _mm256_setzero_ps();

				if (i == 0)
					PREFETCH(&b[gi], (int)sizeof(b[gi]));
				for (int j = 0; j < 32; j += 8) {
					__m128i v = _mm_loadl_epi64(
						(const __m128i *)(b[gi].q + j));
					__m256 q = _mm256_cvtepi32_ps(
						_mm256_cvtepi8_epi32(v));

					p = _mm256_fmadd_ps(q, _mm256_loadu_ps(xp + j), p);
				}
				acc = _mm256_fmadd_ps(
					_mm256_set1_ps(_cvtsh_ss(b[gi].scale)), p, acc);
			}
			y[(size_t)i * w->n + r] = hsum(acc);
		}
	}
}

/* FP16 weights: 16 at a time, converted with F16C. */
void kern_avx2_f16(const uint16_t *w, int n, const struct kern_x *x, float *y,
		int r0, int r1)
{
	const int k = x->k, k16 = k / 16 * 16;

	for (int r = r0; r < r1; r++) {
		const uint16_t *wr = w + (size_t)r * k;

		for (int i = 0; i < x->m; i++) {
			const float *xp = x->xf + (size_t)i * x->stride;
			__m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
			float tail = 0;
			int c;

			for (c = 0; c < k16; c += 16) {
				__m256 w0, w1;

				if (i == 0 && c % 32 == 0)
					PREFETCH(wr + c, 64);
				w0 = _mm256_cvtph_ps(
					_mm_loadu_si128((const __m128i *)(wr + c)));
				w1 = _mm256_cvtph_ps(
					_mm_loadu_si128((const __m128i *)(wr + c + 8)));

				a0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xp + c), a0);
				a1 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(xp + c + 8), a1);
			}
			for (; c < k; c++)
				tail += _cvtsh_ss(wr[c]) * xp[c];
			y[(size_t)i * n + r] = hsum(_mm256_add_ps(a0, a1)) + tail;
		}
	}
}

/* kern.f32 (FP32 weights and activations) in kern_dot_f32's order, bit
 * for bit: a vector of 8 running sums an output (column c in lane c % 8,
 * each product rounded, then added: no FMA), the columns past the last
 * multiple of 8 summed apart, then the 8 lanes added to them in turn (the
 * Makefile's -ffp-contract=off: no compiler fuses a scalar product or a
 * vector mul and add either, GCC or clang). Register tiles of
 * F32_R rows by F32_T tokens, each row's load meeting both tokens and each
 * token's every row; tokens in blocks of F32_TB, whose activations stay in
 * L2 while a tile's rows stay in L1 (the weights read from memory once a
 * block: SmolLM2-135M's FP32 classifier is 113 MB). */
#define F32_R 4
#define F32_T 2
#define F32_TB 64

static inline __attribute__((always_inline)) void
f32_tile(const float *w, int n, int k, const float *x, float *y, int r, int i,
	 const int R, const int T)
{
	const int k8 = k / 8 * 8;
	__m256 acc[F32_R][F32_T];

	_Pragma("GCC unroll 4")
	for (int a = 0; a < R; a++)
		_Pragma("GCC unroll 2")
		for (int t = 0; t < T; t++)
			acc[a][t] = _mm256_setzero_ps();
	for (int c = 0; c < k8; c += 8) {
		__m256 xv[F32_T];

		_Pragma("GCC unroll 2")
		for (int t = 0; t < T; t++)
			xv[t] = _mm256_loadu_ps(x + (size_t)(i + t) * k + c);
		_Pragma("GCC unroll 4")
		for (int a = 0; a < R; a++) {
			const __m256 wv = _mm256_loadu_ps(w + (size_t)(r + a) * k + c);

			_Pragma("GCC unroll 2")
			for (int t = 0; t < T; t++)
				acc[a][t] = _mm256_add_ps(acc[a][t],
							  _mm256_mul_ps(wv, xv[t]));
		}
	}
	for (int a = 0; a < R; a++)
		for (int t = 0; t < T; t++) {
			const float *wr = w + (size_t)(r + a) * k;
			const float *xr = x + (size_t)(i + t) * k;
			float lanes[8], sum = 0;

			for (int c = k8; c < k; c++)
				sum += wr[c] * xr[c];
			_mm256_storeu_ps(lanes, acc[a][t]);
			for (int q = 0; q < 8; q++)
				sum += lanes[q];
			y[(size_t)(i + t) * n + r + a] = sum;
		}
}

/* Rows r .. r + R - 1 against tokens [i0, i1) */
static inline __attribute__((always_inline)) void
f32_rows_of(const float *w, int n, int k, const float *x, float *y, int r,
	    int i0, int i1, const int R)
{
	int i = i0;

	for (; i + F32_T <= i1; i += F32_T)
		f32_tile(w, n, k, x, y, r, i, R, F32_T);
	for (; i < i1; i++)
		f32_tile(w, n, k, x, y, r, i, R, 1);
}

static void f32(const float *w, int n, int k, const float *x, int m, float *y,
		int r0, int r1)
{
	for (int i0 = 0; i0 < m; i0 += F32_TB) {
		const int i1 = m - i0 < F32_TB ? m : i0 + F32_TB;
		int r = r0;

		for (; r + F32_R <= r1; r += F32_R)
			f32_rows_of(w, n, k, x, y, r, i0, i1, F32_R);
		for (; r < r1; r++)
			f32_rows_of(w, n, k, x, y, r, i0, i1, 1);
	}
}

/* Columns c .. c+3 of p converted to their place in xf; returned widened
 * to double for the group's sum */
static inline __m256d put4(const uint16_t *p, int c, int interleave, float *xf)
{
	__m128 v = _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)p));

	_mm_storeu_ps(xf + kern_x_place(c, interleave), v);
	return _mm256_cvtps_pd(v);
}

/* kern.load with F16C, 8 columns a step, each group summed in double in
 * two chains (exact in any order, kern.c); at the end of the row the last
 * step reads a zero-padded copy, and its zeros land in xf's padding */
void kern_avx2_load(const uint16_t *x, int k, int group, int interleave,
		    float *xf, float *sx)
{
	for (int g = 0; g * group < k; g++) {
		int c1 = (g + 1) * group < k ? (g + 1) * group : k;
		__m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
		__m128d h;

		for (int c = g * group; c < c1; c += 8) {
			uint16_t tail[8] = { 0 };
			const uint16_t *p = x + c;

			if (c1 - c < 8) {
				memcpy(tail, p, (size_t)(c1 - c) * sizeof(*p));
				p = tail;
			}
			s0 = _mm256_add_pd(s0, put4(p, c, interleave, xf));
			s1 = _mm256_add_pd(s1, put4(p + 4, c + 4, interleave, xf));
		}
		s0 = _mm256_add_pd(s0, s1);
		h = _mm_add_pd(_mm256_castpd256_pd128(s0),
			       _mm256_extractf128_pd(s0, 1));
		sx[g] = (float)(_mm_cvtsd_f64(h) + _mm_cvtsd_f64(_mm_unpackhi_pd(h, h)));
	}
}

/* kern.a8_load with F16C, a block of 32 columns a step: the largest
 * magnitude by a tree of maxima (exact in any order), the codes as
 * q4_a8_block rounds them (|v| + 1/2 truncated, v's sign put back), the
 * group sums in double as the portable load. k not a multiple of the
 * block: the portable load. */
void kern_avx2_a8_load(const uint16_t *x, int k, int group, int T, int8_t *q,
		       float *unit, float *sum)
{
	const __m256 sign = _mm256_set1_ps(-0.0f), half = _mm256_set1_ps(0.5f);
	/* the packs leave quads 0 2 4 6 | 1 3 5 7: back to column order */
	const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
	__m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();

	if (k % Q4_A8_BLOCK) {
		kern_a8_load(x, k, group, T, q, unit, sum);
		return;
	}
	for (int c = 0; c < k; c += Q4_A8_BLOCK) {
		__m256 v[4], m;
		__m256i t[4], b;
		__m128 h;
		float amax, inv;

		for (int i = 0; i < 4; i++) {
			v[i] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + c + 8 * i)));
			s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(v[i])));
			s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(v[i], 1)));
		}
		m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v[0]),
						_mm256_andnot_ps(sign, v[1])),
				  _mm256_max_ps(_mm256_andnot_ps(sign, v[2]),
						_mm256_andnot_ps(sign, v[3])));
		h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
		h = _mm_max_ps(h, _mm_movehl_ps(h, h));
		amax = _mm_cvtss_f32(_mm_max_ss(h, _mm_shuffle_ps(h, h, 1)));
		inv = amax > 0 ? 127 / amax : 0;
		unit[(size_t)(c / Q4_A8_BLOCK) * T] = amax / 127;
		for (int i = 0; i < 4; i++) {
			__m256 p = _mm256_mul_ps(v[i], _mm256_set1_ps(inv));

			t[i] = _mm256_sign_epi32(_mm256_cvttps_epi32(_mm256_add_ps(
					_mm256_andnot_ps(sign, p), half)),
				_mm256_castps_si256(p));
		}
		b = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(
			_mm256_packs_epi32(t[0], t[1]), _mm256_packs_epi32(t[2], t[3])),
			order);
		if (T == 1) {
			_mm256_storeu_si256((__m256i *)(q + c), b);
		} else {
			int32_t w[8];

			_mm256_storeu_si256((__m256i *)w, b);
			for (int i = 0; i < 8; i++)
				memcpy(q + (size_t)(c / 4 + i) * 4 * T, &w[i], 4);
		}
		if ((c + Q4_A8_BLOCK) % group == 0 || c + Q4_A8_BLOCK == k) {
			__m256d s = _mm256_add_pd(s0, s1);
			__m128d d = _mm_add_pd(_mm256_castpd256_pd128(s),
					       _mm256_extractf128_pd(s, 1));

			sum[(size_t)(c / group) * T] =
				(float)(_mm_cvtsd_f64(d) + _mm_cvtsd_f64(_mm_unpackhi_pd(d, d)));
			s0 = s1 = _mm256_setzero_pd();
		}
	}
}

/* kern.to_f16 with F16C, 8 values a step, rounding to nearest even as
 * f16_from_f32 does (F16C ignores DAZ and FTZ: an FP32 subnormal becomes a
 * signed zero either way); a step holding a NaN goes the portable way,
 * which keeps no payload. Shared by the AVX-512 sets. */
void kern_avx2_to_f16(const float *x, size_t n, uint16_t *h)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		__m256 v = _mm256_loadu_ps(x + i);

		if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
			for (size_t j = i; j < i + 8; j++)
				h[j] = f16_from_f32(x[j]);
		else
			_mm_storeu_si128((__m128i *)(h + i),
					 _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT |
							    _MM_FROUND_NO_EXC));
	}
	for (; i < n; i++)
		h[i] = f16_from_f32(x[i]);
}

/* ---- the quantiser (kern.quantize), shared by the AVX-512 sets ----
 * q4_quantize's bytes, 8 weights a step: a group's least, greatest
 * and largest |value| in vectors (the same values in any order; zeros and
 * subnormals among them q4_head_of takes as +0), its head through F16C's
 * conversions (f16.h's bits: kern_avx2_to_f16), each code by the same
 * subtraction and division as the portable loop, clamped to [0, 15] and
 * then rounded halves up (round((w - b) / s) clamped: the same code), and
 * a chunk's 32 codes into its four words at once (q4.h: lanes l and l + 4
 * of step b, weights 8b + l and 8b + 4 + l of the chunk, go to byte b of
 * word l, low and high nibble). */
static uint16_t f16c_to16(float v)
{
	return (uint16_t)_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

static float f16c_to32(uint16_t h)
{
	return _cvtsh_ss(h);
}

/* The greatest (most) or least of v's 8 lanes */
static inline float extreme8(__m256 v, int most)
{
#define PICK(a, b) (most ? _mm_max_ps(a, b) : _mm_min_ps(a, b))
	__m128 h = PICK(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	h = PICK(h, _mm_movehl_ps(h, h));
	return _mm_cvtss_f32(PICK(h, _mm_movehdup_ps(h)));
#undef PICK
}

void kern_avx2_quantize(const float *x, int G, enum q4_kind kind, uint8_t *h,
			uint8_t *q)
{
	const __m256 sign = _mm256_set1_ps(-0.0f);
	__m256 lo = _mm256_loadu_ps(x), hi = lo, am = _mm256_andnot_ps(sign, lo);
	struct q4_head hd;
	float sc;

	for (int j = 8; j < G; j += 8) {
		__m256 v = _mm256_loadu_ps(x + j);

		lo = _mm256_min_ps(lo, v);
		hi = _mm256_max_ps(hi, v);
		am = _mm256_max_ps(am, _mm256_andnot_ps(sign, v));
	}
	hd = q4_head_of(extreme8(lo, 0), extreme8(hi, 1), extreme8(am, 1), kind,
			f16c_to16, f16c_to32);
	memcpy(h, &hd, sizeof(hd));
	sc = f16c_to32(hd.scale);
	if (!(sc > 0)) {
		memset(q, 0, (size_t)G / 2);
		return;
	}
	const __m256 s = _mm256_set1_ps(sc);
	const __m256 b = _mm256_set1_ps(f16c_to32(hd.bias));
	const __m256 top = _mm256_set1_ps(15), half = _mm256_set1_ps(0.5f);

	for (int c = 0; c < G; c += 32) {
		__m256i word = _mm256_setzero_si256();

		for (int t = 0; t < 4; t++) {
			__m256 v = _mm256_div_ps(_mm256_sub_ps(
				_mm256_loadu_ps(x + c + 8 * t), b), s);
			__m256i whole;

			v = _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), top);
			whole = _mm256_cvttps_epi32(v);
			/* + 1 (a mask's -1 subtracted) where the rest is 0.5 or more */
			whole = _mm256_sub_epi32(whole, _mm256_castps_si256(_mm256_cmp_ps(
				_mm256_sub_ps(v, _mm256_cvtepi32_ps(whole)), half,
				_CMP_GE_OQ)));
			word = _mm256_or_si256(word, _mm256_slli_epi32(whole, 8 * t));
		}
		_mm_storeu_si128((__m128i *)(q + c / 2), _mm_or_si128(
			_mm256_castsi256_si128(word),
			_mm_slli_epi32(_mm256_extracti128_si256(word, 1), 4)));
	}
}

/* ---- attention (kern_attend_fn), shared by the AVX-512 sets ----
 * Scores four positions at a time (four chains, summed across lanes
 * together), exp in vectors, then the weighted values: 64 columns at a
 * time in eight accumulators over every position, scaled by 1 / sum at the
 * end. */

/* e^x lanewise, x <= 0 (a score minus the largest): Cephes' expf, a
 * degree-6 polynomial in r = x - n ln 2 times 2^n; below -87.3 (2^-126)
 * the result is flushed there; NaN stays NaN (vmaxps returns its second
 * operand when either is NaN). */
static inline __m256 exp_neg(__m256 x)
{
	const __m256 ln2_hi = _mm256_set1_ps(0.693359375f),
		     ln2_lo = _mm256_set1_ps(-2.12194440e-4f);
	__m256 n, r, p;

	x = _mm256_max_ps(_mm256_set1_ps(-87.33654f), x);
	n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
			    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	r = _mm256_fnmadd_ps(n, ln2_hi, x);
	r = _mm256_fnmadd_ps(n, ln2_lo, r);
	p = _mm256_set1_ps(1.9875691500e-4f);
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
	p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1)));
	return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(
		_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23)));
}

/* [sum a0, sum a1, sum a2, sum a3] */
static inline __m128 hsum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3)
{
	__m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));

	return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

/* out[0 .. 8 nb) += sum_p att[p] v_p[0 .. 8 nb) over n positions, nb <= 8
 * (a constant where inlined: the accumulators stay in registers) */
static inline __attribute__((always_inline)) void
weigh(const float *att, const float *vc, int n, size_t stride, const int nb,
      float *out)
{
	__m256 acc[8];

	for (int j = 0; j < nb; j++)
		acc[j] = _mm256_loadu_ps(out + 8 * j);
	for (int p = 0; p < n; p++) {
		const __m256 a = _mm256_broadcast_ss(att + p);
		const float *v = vc + (size_t)p * stride;

		for (int j = 0; j < nb; j++)
			acc[j] = _mm256_fmadd_ps(a, _mm256_loadu_ps(v + 8 * j), acc[j]);
	}
	for (int j = 0; j < nb; j++)
		_mm256_storeu_ps(out + 8 * j, acc[j]);
}

/* Scores scale q . k_p of positions [p, end) into att, four at a time
 * (then one at a time past the last four: p to end a multiple of 4 but
 * at the end), their running maxima in *mx4 and *mx */
static void scores(const float *q, const float *kc, int p, int end, int hs,
		   size_t stride, __m128 sc, float *att, __m128 *mx4, float *mx)
{
	for (; p + 4 <= end; p += 4) {
		const float *k = kc + (size_t)p * stride;
		__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
		__m128 s;

		for (int i = 0; i < hs; i += 8) {
			const __m256 qv = _mm256_loadu_ps(q + i);

			a0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k + i), a0);
			a1 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k + stride + i), a1);
			a2 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k + 2 * stride + i), a2);
			a3 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k + 3 * stride + i), a3);
		}
		s = _mm_mul_ps(hsum4(a0, a1, a2, a3), sc);
		_mm_storeu_ps(att + p, s);
		*mx4 = _mm_max_ps(*mx4, s);
	}
	for (; p < end; p++) {
		const float *k = kc + (size_t)p * stride;
		__m256 a = _mm256_setzero_ps();

		for (int i = 0; i < hs; i += 8)
			a = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(k + i), a);
		att[p] = hsum(a) * _mm_cvtss_f32(sc);
		*mx = att[p] > *mx ? att[p] : *mx;
	}
}

/* Positions a block: a block's keys, then its values (16 KB at heads of
 * 64 values), stay in L1 while each head of the group takes them, so the
 * cache is read from memory once for the group, not once a head */
#define ATTEND_BLOCK 64

void kern_avx2_attend(const float *q, int nq, const float *kc, const float *vc,
		      int n, int hs, size_t stride, float scale, float *att,
		      float *out)
{
	const __m128 sc = _mm_set1_ps(scale);
	__m128 mx4[KERN_ATTEND_QMAX];
	float mx[KERN_ATTEND_QMAX], inv[KERN_ATTEND_QMAX];

	for (int j = 0; j < nq; j++) {
		mx4[j] = _mm_set1_ps(-INFINITY);
		mx[j] = -INFINITY;
	}
	for (int p = 0; p < n; p += ATTEND_BLOCK)
		for (int j = 0; j < nq; j++)
			scores(q + (size_t)j * hs, kc, p,
			       n - p < ATTEND_BLOCK ? n : p + ATTEND_BLOCK, hs,
			       stride, sc, att + (size_t)j * n, &mx4[j], &mx[j]);
	for (int j = 0; j < nq; j++) {
		float *aj = att + (size_t)j * n, m[4], top, sum = 0;
		__m256 sum8 = _mm256_setzero_ps();
		int p;

		_mm_storeu_ps(m, mx4[j]);
		top = m[0] > m[1] ? m[0] : m[1];
		top = top > m[2] ? top : m[2];
		top = top > m[3] ? top : m[3];
		top = mx[j] > top ? mx[j] : top;
		for (p = 0; p + 8 <= n; p += 8) {
			__m256 e = exp_neg(_mm256_sub_ps(_mm256_loadu_ps(aj + p),
							 _mm256_set1_ps(top)));

			_mm256_storeu_ps(aj + p, e);
			sum8 = _mm256_add_ps(sum8, e);
		}
		if (p < n) {
			float t[8] = { 0 };

			memcpy(t, aj + p, sizeof(float) * (size_t)(n - p));
			_mm256_storeu_ps(t, exp_neg(_mm256_sub_ps(_mm256_loadu_ps(t),
								  _mm256_set1_ps(top))));
			memcpy(aj + p, t, sizeof(float) * (size_t)(n - p));
			for (int i = 0; i < n - p; i++)
				sum += t[i];
		}
		inv[j] = 1 / (sum + hsum(sum8));
	}
	memset(out, 0, sizeof(float) * (size_t)nq * hs);
	for (int p = 0; p < n; p += ATTEND_BLOCK) {
		int m = n - p < ATTEND_BLOCK ? n - p : ATTEND_BLOCK, c;

		for (int j = 0; j < nq; j++) {
			const float *aj = att + (size_t)j * n + p;
			const float *v = vc + (size_t)p * stride;
			float *o = out + (size_t)j * hs;

			for (c = 0; c + 64 <= hs; c += 64)
				weigh(aj, v + c, m, stride, 8, o + c);
			if (c < hs)
				weigh(aj, v + c, m, stride, (hs - c) / 8, o + c);
		}
	}
	for (int j = 0; j < nq; j++)
		for (int c = 0; c < hs; c += 8)
			_mm256_storeu_ps(out + (size_t)j * hs + c,
					 _mm256_mul_ps(_mm256_loadu_ps(out + (size_t)j * hs + c),
						       _mm256_set1_ps(inv[j])));
}

/* ---- the integer path (256 bits; "avx2" and "avx-vnni") ----
 * kern_avx512.c's method on 8 lanes (AVX2 has 16 vector registers): a
 * panel of PANEL rows in two halves of HALF, its octet o two vectors side
 * by side (64 bytes), half h's holding in lane j the four code bytes of
 * row 8h + j for columns 8o .. 8o+7 (a byte shuffle a chunk, an 8 x 8
 * transpose of words); tiles of TILE tokens (kern_tiles), each token's
 * four codes broadcast against a half's codes: into vpdpbusd with
 * AVX-VNNI, through vpmaddubsw and vpmaddwd without. Each activation block
 * ends with f += float(sum q a) (s u), each group with f += b sum(x), the
 * products s u formed per token. Each broadcast meets both halves, in
 * W4A8's tiles and in the exact products from digits (dig_run). */
#define HALF 8
#define PANEL 16
#define TILE 4

/* 8 x 8 words: out[j] lane i = in[i] lane j */
static inline void transpose8(__m256i v[8])
{
	__m256i t[8], u[8];

	for (int i = 0; i < 8; i += 2) {
		t[i] = _mm256_unpacklo_epi32(v[i], v[i + 1]);
		t[i + 1] = _mm256_unpackhi_epi32(v[i], v[i + 1]);
	}
	for (int i = 0; i < 8; i += 4) {
		u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
		u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
		u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
		u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
	}
	/* u[4a + q] lane L (of two): column 4L + q of rows 4a .. 4a+3 */
	for (int q = 0; q < 4; q++) {
		v[q] = _mm256_permute2x128_si256(u[q], u[4 + q], 0x20);
		v[4 + q] = _mm256_permute2x128_si256(u[q], u[4 + q], 0x31);
	}
}

/* The codes of rows [r, r + rows) of w (rows <= HALF; the rest zero)
 * into half h of pn */
static void a8_pack_half(const struct q4_matrix *w, int r, int rows, int kq,
			 struct kern_panel *pn, int h)
{
	const __m256i order = _mm256_setr_epi8(
		0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
		0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
	const int chunks = w->ngroups * (w->group / 32);

	/* a pair of chunks at a time: 8 octets */
	for (int c = 0; c < kq / 32; c += 2) {
		__m256i v[8];

		for (int j = 0; j < HALF; j++) {
			const uint8_t *rowp = w->data + (size_t)(r + j) * w->row_bytes;
			__m128i part[2];

			for (int q = 0; q < 2; q++) {
				int cq = c + q;

				part[q] = j < rows && cq < chunks ?
					_mm_loadu_si128((const __m128i *)(rowp +
						q4_chunk_at(w, cq))) :
					_mm_setzero_si128();
			}
			v[j] = _mm256_shuffle_epi8(_mm256_set_m128i(part[1], part[0]),
						   order);
		}
		transpose8(v);
		for (int o = 0; o < 8; o++)
			_mm256_store_si256((__m256i *)(pn->codes +
						       (size_t)(4 * c + o) * PANEL +
						       HALF * h),
					   v[o]);
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

/* Group g's FP16 scales or biases of half h of a panel (v: the panel's
 * scale or bias), 8 rows as FP32 */
static inline __m256 half_heads(const uint16_t *v, int g, int h)
{
	_Static_assert(HALF % 8 == 0, "a half's FP16 scales and biases "
		       "16-byte aligned, as _mm_load_si128 wants");
	return _mm256_cvtph_ps(
		_mm_load_si128((const __m128i *)(v + g * PANEL + HALF * h)));
}

static inline int32_t word(const int8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* One activation block (Q4_A8_BLOCK columns, BLOCK_OCTETS octets) of a
 * panel against T tokens: a[h][t] lane j = sum of row 8h + j's codes
 * times token t's activation codes over the block, each half-octet's four
 * codes meeting the token's four broadcast (once for both halves) by
 * MAC(a[h][t], codes, activations). Two ways (a macro: a function would
 * be compiled for one target). The loop over octets stays a loop:
 * unrolled, GCC formed a block's 32 products before summing any and
 * spilled them, and 4096x4096 by 64 tokens on one thread took 16.0-16.2
 * ms against 11.9-13.5 (EPYC AVX2, 2026-12-05, the two alternating). */
#define BLOCK_OCTETS (Q4_A8_BLOCK / 8)
#define BLOCK_BODY(MAC)                                                        \
	do {                                                                   \
		const __m256i low = _mm256_set1_epi8(0x0f);                    \
		_Pragma("GCC unroll 4")                                        \
		for (int t = 0; t < T; t++)                                    \
			a[0][t] = a[1][t] = _mm256_setzero_si256();            \
		for (int o = 0; o < BLOCK_OCTETS; o++, cw += PANEL,            \
			 aq += 8 * T) {                                        \
			__m256i lo[2], hi[2];                                  \
                                                                               \
			PREFETCH_AHEAD(cw, 64, KERN_PANEL_PREFETCH_BYTES);     \
			for (int h = 0; h < 2; h++) {                          \
				const __m256i z = _mm256_load_si256(           \
					(const __m256i *)(cw + HALF * h));     \
                                                                               \
				lo[h] = _mm256_and_si256(z, low);              \
				hi[h] = _mm256_and_si256(                      \
					_mm256_srli_epi16(z, 4), low);         \
			}                                                      \
			_Pragma("GCC unroll 4")                                \
			for (int t = 0; t < T; t++) {                          \
				const __m256i xl = _mm256_set1_epi32(          \
					word(aq + 4 * t));                     \
				const __m256i xh = _mm256_set1_epi32(          \
					word(aq + 4 * T + 4 * t));             \
                                                                               \
				for (int h = 0; h < 2; h++) {                  \
					MAC(a[h][t], lo[h], xl);               \
					MAC(a[h][t], hi[h], xh);               \
				}                                              \
			}                                                      \
		}                                                              \
	} while (0)

/* With AVX-VNNI: one vpdpbusd a half-octet, half and token. */
#define MAC_VNNI(acc, c, v) ((acc) = dpbusd_insn((acc), (c), (v)))
static inline __attribute__((always_inline)) void
block_vnni(const int32_t *cw, const int8_t *aq, const int T,
	   __m256i a[2][TILE])
{
	BLOCK_BODY(MAC_VNNI);
}

/* With AVX2 alone: vpmaddubsw (codes 0..15 unsigned, activations signed)
 * gives 16-bit sums of two products, |sum| <= 2 x 15 x 127 = 3810, never
 * saturating; a block's 8 of them per word stay within 30480 < 2^15, so
 * the block is summed in 16 bits and widened once (vpmaddwd by ones) */
#define MAC_MADD(acc, c, v)                                                    \
	((acc) = _mm256_add_epi16((acc), _mm256_maddubs_epi16((c), (v))))
static inline __attribute__((always_inline)) void
block_madd(const int32_t *cw, const int8_t *aq, const int T,
	   __m256i a[2][TILE])
{
	_Static_assert(Q4_A8_BLOCK / 4 * 2 * 15 * 127 < 32768,
		       "a block's 16-bit sums do not saturate");
	const __m256i ones = _mm256_set1_epi16(1);

	BLOCK_BODY(MAC_MADD);
	_Pragma("GCC unroll 4")
	for (int t = 0; t < T; t++)
		for (int h = 0; h < 2; h++)
			a[h][t] = _mm256_madd_epi16(a[h][t], ones);
}

/* One panel against one tile of T tokens, each block's integers by
 * BLOCK_DOT: y rows r .. r + rows - 1. The body of the two micro-kernels,
 * which differ in their target (a macro: a function would be compiled
 * for one). */
#define A8_MICRO_BODY(BLOCK_DOT)                                               \
	do {                                                                   \
		__m256 f[2][TILE];                                             \
                                                                               \
		_Pragma("GCC unroll 4")                                        \
		for (int t = 0; t < T; t++)                                    \
			f[0][t] = f[1][t] = _mm256_setzero_ps();               \
		for (int g = 0; g < ngroups; g++, as += T) {                   \
			__m256 sv[2], bv[2];                                   \
                                                                               \
			for (int h = 0; h < 2; h++) {                          \
				sv[h] = half_heads(pn->scale, g, h);           \
				bv[h] = half_heads(pn->bias, g, h);            \
			}                                                      \
			for (int j = 0; j < group / Q4_A8_BLOCK; j++, au += T,  \
				 cw += BLOCK_OCTETS * PANEL,                    \
				 aq += BLOCK_OCTETS * 8 * T) {                  \
				__m256i a[2][TILE];                            \
                                                                               \
				BLOCK_DOT(cw, aq, T, a);                       \
				_Pragma("GCC unroll 4")                        \
				for (int t = 0; t < T; t++)                    \
					for (int h = 0; h < 2; h++)            \
						f[h][t] = _mm256_fmadd_ps(     \
							_mm256_cvtepi32_ps(a[h][t]), \
							_mm256_mul_ps(sv[h],   \
							_mm256_set1_ps(au[t])), \
							f[h][t]);              \
			}                                                      \
			_Pragma("GCC unroll 4")                                \
			for (int t = 0; t < T; t++)                            \
				for (int h = 0; h < 2; h++)                    \
					f[h][t] = _mm256_fmadd_ps(bv[h],       \
						_mm256_set1_ps(as[t]), f[h][t]); \
		}                                                              \
		for (int t = 0; t < T; t++)                                    \
			for (int h = 0; h < 2 && HALF * h < rows; h++) {       \
				float out[HALF];                               \
                                                                               \
				_mm256_storeu_ps(out, f[h][t]);                \
				memcpy(y + (size_t)t * ystride + HALF * h, out, \
				       sizeof(float) * (size_t)kern_half_rows( \
					       rows, HALF, h));                \
			}                                                      \
	} while (0)

static inline __attribute__((always_inline)) void
a8_micro_vnni(const struct kern_panel *pn, const int8_t *aq, const float *au,
	      const float *as, int ngroups, int group, const int T, float *y,
	      size_t ystride, int rows)
{
	const int32_t *cw = pn->codes;

	A8_MICRO_BODY(block_vnni);
}

static inline __attribute__((always_inline)) void
a8_micro_madd(const struct kern_panel *pn, const int8_t *aq, const float *au,
	      const float *as, int ngroups, int group, const int T, float *y,
	      size_t ystride, int rows)
{
	const int32_t *cw = pn->codes;

	A8_MICRO_BODY(block_madd);
}

static void a8_tile_vnni(const struct kern_panel *pn, const int8_t *aq,
			 const float *au, const float *as, int T, int ngroups,
			 int group, float *y, size_t ystride, int rows)
{
	KERN_TILE_DISPATCH(a8_micro_vnni, TILE);
}

static void a8_tile_madd(const struct kern_panel *pn, const int8_t *aq,
			 const float *au, const float *as, int T, int ngroups,
			 int group, float *y, size_t ystride, int rows)
{
	KERN_TILE_DISPATCH(a8_micro_madd, TILE);
}

/* ---- exact products from digits over the integer path's panels
 * (kern_q4_gemm_packed; "avx2" and "avx-vnni") ----
 * kern_avx512.c's method on 8 lanes: the rows packed as a8_pack packs them
 * (an octet of a row's codes a 32-bit word, a half's 8 rows a vector), the
 * digits as planes (dig_planes): the octet's four low nibbles meet its
 * columns 0-3, the high ones 4-7, so a plane's 8 bytes from column 8o are
 * the octet's two words of digits, broadcast, each against both halves.
 * vpmaddubsw's 16-bit sums of a digit add up over a chunk (4 octets, 16
 * products of a code by a digit, at most 30720) and widen to the chunk's
 * exact sum q.v in 32-bit lanes (32 codes by |v| <= 2^22, under 2^31; a
 * row a lane); avx-vnni's vpdpbusd sums a digit's products in 32-bit
 * lanes, joined without widening (dig_join). Then sum += s u float(q.v) a
 * chunk and b SX a group. A group's scales, units and bias terms are a few
 * instructions for 16 rows, where the row kernels (ROW_KERNEL) spend as
 * many on each row, and each row's lanes are summed once at its end. A
 * token at a time: a second token's six sums would not fit AVX2's 16
 * registers. */

/* The codes of column c (0 .. 7) of an octet, a half's 8 rows' words at
 * cw, as FP32: byte c % 4's low nibble for c < 4, its high one past */
static inline __m256 octet_codes(const int32_t *cw, int c)
{
	return _mm256_cvtepi32_ps(_mm256_and_si256(
		_mm256_srli_epi32(_mm256_load_si256((const __m256i *)cw),
				  8 * (c & 3) + 4 * (c >> 2)),
		_mm256_set1_epi32(15)));
}

/* Token t's extras (kern_dig_extra) over half h of panel pn: each group's
 * s times its residuals' sum of q r, or at u 0 its float method's q.x
 * (xf's values), 8 rows a vector, added to sum */
static __m256 dig_extras(const struct kern_panel *pn, int h,
			 const struct q4_matrix *w, const struct kern_dig_tok *t,
			 __m256 sum)
{
	const int G = w->group;

	for (int i = 0; i < t->nx; i++) {
		const struct kern_dig_extra *e = &t->ex[i];
		const int32_t *cw = pn->codes + (size_t)e->g * (G / 8) * PANEL +
				    HALF * h;
		/* the float method's columns: every one of a group of u 0 */
		const int fc = t->us[2 * e->g] == 0 ? G : 0;
		__m256 qr = _mm256_setzero_ps();

		for (int c = 0; c < fc; c++) {
			const int col = e->g * G + c;

			qr = _mm256_fmadd_ps(
				octet_codes(cw + (c / 8) * PANEL, c % 8),
				_mm256_set1_ps(t->xf[kern_x_place(col & ~3,
						     kern_avx2.interleave) +
						     (col & 3)]),
				qr);
		}
		for (int f = 0; f < e->n; f++)
			qr = _mm256_fmadd_ps(
				octet_codes(cw + (e->col[f] / 8) * PANEL,
					    e->col[f] % 8),
				_mm256_set1_ps(e->r[f]), qr);
		sum = _mm256_fmadd_ps(half_heads(pn->scale, e->g, h), qr, sum);
	}
	return sum;
}

/* One chunk (4 octets) of a panel's codes from cw against a token's
 * digits from d (planes kpad bytes apart): s[k][h] (k = 0, 1, 2:
 * digits 2, 1, 0, widen's order; h the half) gains the products, as
 * 16-bit sums through vpmaddubsw, or with vnni as 32-bit ones through
 * vpdpbusd. In assembly: the six sums, four vectors of codes, a digit, a
 * product and the mask take 13 of AVX2's 16 registers, and GCC 12, given
 * the same in intrinsics, spilled a sum to the stack (the loop then waited
 * on it) or loaded the codes twice and rebuilt the mask each octet: hot on
 * one thread, 4096x4096, G = 128, 0.52-0.60 ms a product, where clang's
 * build of the same C took 0.46-0.47 and this 0.43 (EPYC Zen 4,
 * 2026-12-06, two panels of 8 rows then read side by side). */
#define DIG_MADD(code, sum)                                                    \
	"vpmaddubsw %[b], %[" code "], %[t]\n\t"                               \
	"vpaddw %[t], %[" sum "], %[" sum "]\n\t"
#define DIG_VNNI(code, sum)                                                    \
	KERN_VNNI_FORM "vpdpbusd %[b], %[" code "], %[" sum "]\n\t"
#define DIG_DIGIT(MAC, o, at, s0, s1)                                          \
	"vpbroadcastd " #o "*8" at ", %[b]\n\t"                                \
	MAC("lo0", s0) MAC("lo1", s1)                                          \
	"vpbroadcastd " #o "*8+4" at ", %[b]\n\t"                              \
	MAC("hi0", s0) MAC("hi1", s1)
#define DIG_CODES(at, lo, hi)                                                  \
	"vmovdqa " at "(%[cw]), %[" lo "]\n\t"                                 \
	"vpsrlw $4, %[" lo "], %[" hi "]\n\t"                                  \
	"vpand %[low], %[" lo "], %[" lo "]\n\t"                               \
	"vpand %[low], %[" hi "], %[" hi "]\n\t"
#define DIG_OCTET(MAC, o)                                                      \
	DIG_CODES(#o "*64", "lo0", "hi0") DIG_CODES(#o "*64+32", "lo1", "hi1") \
	DIG_DIGIT(MAC, o, "(%[d],%[pl],2)", "s20", "s21")                       \
	DIG_DIGIT(MAC, o, "(%[d],%[pl],1)", "s10", "s11")                       \
	DIG_DIGIT(MAC, o, "(%[d])", "s00", "s01")
#define DIG_CHUNK(MAC)                                                         \
	__asm__(DIG_OCTET(MAC, 0) DIG_OCTET(MAC, 1) DIG_OCTET(MAC, 2)          \
		DIG_OCTET(MAC, 3)                                              \
		: [s20] "+x"(s[0][0]), [s21] "+x"(s[0][1]),                    \
		  [s10] "+x"(s[1][0]), [s11] "+x"(s[1][1]),                    \
		  [s00] "+x"(s[2][0]), [s01] "+x"(s[2][1]),                    \
		  [lo0] "=&x"(lo0), [hi0] "=&x"(hi0), [lo1] "=&x"(lo1),        \
		  [hi1] "=&x"(hi1), [b] "=&x"(b), [t] "=&x"(t)                 \
		: [cw] "r"(cw), [d] "r"(d), [pl] "r"(kpad), [low] "x"(low),    \
		  "m"(*(chunk_codes *)cw), "m"(*(chunk_digits *)d),            \
		  "m"(*(chunk_digits *)(d + kpad)),                            \
		  "m"(*(chunk_digits *)(d + 2 * kpad)))
static inline __attribute__((always_inline)) void
dig_chunk(const int32_t *cw, const int8_t *d, size_t kpad, __m256i low,
	  __m256i s[3][2], const int vnni)
{
	_Static_assert(PANEL == 2 * HALF && HALF == 8,
		       "an octet: two vectors of 8 rows' words, 64 bytes");
	typedef const char chunk_codes[4 * PANEL * sizeof(int32_t)];
	typedef const char chunk_digits[32];
	__m256i lo0, hi0, lo1, hi1, b, t;

	if (vnni)
		DIG_CHUNK(DIG_VNNI); /* t unused */
	else
		DIG_CHUNK(DIG_MADD);
}
#undef DIG_CHUNK
#undef DIG_OCTET
#undef DIG_CODES
#undef DIG_DIGIT
#undef DIG_VNNI
#undef DIG_MADD

/* Panel pn against one token's digits tk: the first `rows` of its rows to
 * y (vnni: the avx-vnni set's instance) */
static inline __attribute__((always_inline)) void
dig_token(const struct kern_panel *pn, const struct q4_matrix *w, int rows,
	  const struct kern_dig_tok *tk, float *y, const int vnni)
{
	const __m256i low = _mm256_set1_epi8(0x0f);
	const int chunks = w->group / 32;
	const int32_t *cw = pn->codes;
	const int8_t *d = tk->d;
	__m256 sum[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() };

	for (int g = 0; g < w->ngroups; g++) {
		const __m256 u = _mm256_set1_ps(tk->us[2 * g]);
		__m256 su[2]; /* the group's s u, each half's rows */

		for (int h = 0; h < 2; h++)
			su[h] = _mm256_mul_ps(u, half_heads(pn->scale, g, h));
		for (int c = 0; c < chunks; c++, cw += 4 * PANEL, d += 32) {
			__m256i s[3][2];

			_Pragma("GCC unroll 3")
			for (int k = 0; k < 3; k++)
				s[k][0] = s[k][1] = _mm256_setzero_si256();
			PREFETCH_AHEAD(cw, 4 * PANEL * (int)sizeof(int32_t),
				       KERN_PANEL_PREFETCH_BYTES);
			dig_chunk(cw, d, (size_t)tk->kpad, low, s, vnni);
			_Pragma("GCC unroll 2")
			for (int h = 0; h < 2; h++) {
				const __m256i sh[3] = { s[0][h], s[1][h], s[2][h] };
				const __m256i qv = vnni ? dig_join(sh) : widen(sh);

				sum[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(qv),
							 su[h], sum[h]);
			}
		}
		const __m256 sx = _mm256_set1_ps(tk->us[2 * g + 1]);

		_Pragma("GCC unroll 2")
		for (int h = 0; h < 2; h++)
			sum[h] = _mm256_fmadd_ps(half_heads(pn->bias, g, h), sx,
						 sum[h]);
	}
	for (int h = 0; h < 2 && HALF * h < rows; h++) {
		float out[HALF];

		if (tk->nx)
			sum[h] = dig_extras(pn, h, w, tk, sum[h]);
		_mm256_storeu_ps(out, sum[h]);
		memcpy(y + HALF * h, out,
		       sizeof(float) * (size_t)kern_half_rows(rows, HALF, h));
	}
}

/* kern_dig_run_fn: each of the T tokens in turn (the panel's codes from
 * cache after the first: 32 KB at 4096 columns), avx2's and avx-vnni's */
#define DIG_RUN(name, vnni)                                                    \
	static void name(const struct kern_panel *pn,                          \
			 const struct q4_matrix *w, int rows,                  \
			 const struct kern_dig_tok *t, int T, float *y,        \
			 size_t ystride)                                       \
	{                                                                      \
		for (int i = 0; i < T; i++)                                    \
			dig_token(pn, w, rows, &t[i],                          \
				  y + (size_t)i * ystride, vnni);              \
	}
DIG_RUN(dig_run, 0)
DIG_RUN(dig_run_vnni, 1)
#undef DIG_RUN

const struct kern kern_avx2 = { .name = "avx2", .interleave = 2, .q4 = q4,
			       .q8 = kern_avx2_q8, .f16 = kern_avx2_f16,
			       .f32 = f32, .sx_blocks = 1,
			       .a8_pack = a8_pack, .a8_run = a8_tile_madd,
			       .a8_panel = PANEL, .a8_panels = 1,
			       .a8_tile = TILE, .digits = digits,
			       .digit_groups = 32 | 64 | 128,
			       .dig_run = dig_run,
			       .load = kern_avx2_load,
			       .a8_load = kern_avx2_a8_load,
			       .attend = kern_avx2_attend,
			       .to_f16 = kern_avx2_to_f16,
			       .quantize = kern_avx2_quantize };
const struct kern kern_avx_vnni = { .name = "avx-vnni", .interleave = 2,
				   .q4 = q4_vnni, .q8 = kern_avx2_q8,
				   .f16 = kern_avx2_f16, .f32 = f32,
				   .sx_blocks = 1, .a8_pack = a8_pack,
				   .a8_run = a8_tile_vnni, .a8_panel = PANEL,
				   .a8_panels = 1, .a8_tile = TILE,
				   .digits = digits,
				   .digit_groups = 32 | 64 | 128,
				   .dig_run = dig_run_vnni,
				   .load = kern_avx2_load,
				   .a8_load = kern_avx2_a8_load,
				   .attend = kern_avx2_attend,
				   .to_f16 = kern_avx2_to_f16,
				   .quantize = kern_avx2_quantize };
