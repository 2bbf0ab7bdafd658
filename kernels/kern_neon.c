/* kern_neon.c: W4A16, W8A16 and FP16 kernels for aarch64 NEON: "neon" with
 * FP32 arithmetic, "neon-fp16" with FP16 arithmetic for W4A16, "neon-dot"
 * and "neon-i8mm" the FP32 kernels with an integer path for blocks of
 * tokens (sdot; smmla) and one for fewer than four tokens from the
 * activations' exact digits (sdot). A chunk's four code words are one
 * vector: step t takes nibble t of every lane, weights 4t..4t+3, so
 * activations stay in column order. A group contributes s sum q x + b SX
 * (SX prepared once per call). */
#include "kern.h"

#include <arm_neon.h>
#include <string.h>

/* An FP16 value's bits as a float, and back (FCVT) */
static float fcvt_to32(uint16_t u)
{
	__fp16 h;

	memcpy(&h, &u, sizeof(h));
	return (float)h;
}

static uint16_t fcvt_to16(float v)
{
	__fp16 h = (__fp16)v;
	uint16_t u;

	memcpy(&u, &h, sizeof(u));
	return u;
}

static inline float header_f(const uint8_t *p, int i)
{
	uint16_t u;

	memcpy(&u, p + 2 * i, sizeof(u));
	return fcvt_to32(u);
}

/* Four FP16 values at p (a panel's scales or biases) as floats */
static inline float32x4_t half4(const uint16_t *p)
{
	return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}

/* sum over a chunk of q x, with x the chunk's 32 activations */
static inline float32x4_t chunk_dot(const uint8_t *q, const float *x,
				    float32x4_t p)
{
	uint32x4_t w = vld1q_u32((const uint32_t *)q);
	const uint32x4_t m = vdupq_n_u32(15);

#define STEP(t)                                                                \
	p = vfmaq_f32(p, vcvtq_f32_u32(vandq_u32(vshrq_n_u32(w, 4 * (t)), m)), \
		      vld1q_f32(x + 4 * (t)))
	p = vfmaq_f32(p, vcvtq_f32_u32(vandq_u32(w, m)), vld1q_f32(x));
	STEP(1);
	STEP(2);
	STEP(3);
	STEP(4);
	STEP(5);
	STEP(6);
	STEP(7);
#undef STEP
	return p;
}

static void q4(const struct q4_matrix *w, const struct kern_x *x, float *y,
	       int r0, int r1)
{
	const int cpg = w->group / 32;

	for (int r = r0; r < r1; r++) {
		const uint8_t *row = w->data + (size_t)r * w->row_bytes;

		for (int i = 0; i < x->m; i++) {
			const float *xp = x->xf + (size_t)i * x->stride;
			const float *sx = x->sx + (size_t)i * x->ngroups;
			float acc = 0;

			for (int g = 0; g < w->ngroups; g++) {
				const uint8_t *h = row + q4_head_at(w, g);
				const uint8_t *q = row + q4_codes_at(w, g);
				float32x4_t p = vdupq_n_f32(0);

				for (int c = 0; c < cpg; c++)
					p = chunk_dot(q + 16 * c,
						      xp + (size_t)(g * cpg + c) * 32, p);
				acc += header_f(h, 0) * vaddvq_f32(p) +
				       header_f(h, 1) * sx[g];
			}
			y[(size_t)i * w->n + r] = acc;
		}
	}
}

static void q8(const struct q8_matrix *w, const struct kern_x *x, float *y,
	       int r0, int r1)
{
	for (int r = r0; r < r1; r++) {
		const struct q8_block *b =
			(const struct q8_block *)(w->data + (size_t)r * w->row_bytes);

		for (int i = 0; i < x->m; i++) {
			const float *xp = x->xf + (size_t)i * x->stride;
			float acc = 0;

			for (int g = 0; g < w->ngroups; g++, xp += 32) {
				float32x4_t p = vdupq_n_f32(0);
				__fp16 s;

				for (int j = 0; j < 32; j += 8) {
					int16x8_t v = vmovl_s8(vld1_s8(b[g].q + j));

					p = vfmaq_f32(p, vcvtq_f32_s32(vmovl_s16(
							      vget_low_s16(v))),
						      vld1q_f32(xp + j));
					p = vfmaq_f32(p, vcvtq_f32_s32(vmovl_s16(
							      vget_high_s16(v))),
						      vld1q_f32(xp + j + 4));
				}
				memcpy(&s, &b[g].scale, 2);
				acc += (float)s * vaddvq_f32(p);
			}
			y[(size_t)i * w->n + r] = acc;
		}
	}
}

static void f16(const uint16_t *w, int n, const struct kern_x *x, float *y,
		int r0, int r1)
{
	const int k = x->k, k8 = k / 8 * 8;

	for (int r = r0; r < r1; r++) {
		const __fp16 *wr = (const __fp16 *)(w + (size_t)r * k);

		for (int i = 0; i < x->m; i++) {
			const float *xp = x->xf + (size_t)i * x->stride;
			float32x4_t a = vdupq_n_f32(0), b = vdupq_n_f32(0);
			float tail = 0;
			int c;

			for (c = 0; c < k8; c += 8) {
				float16x8_t v = vld1q_f16(wr + c);

				a = vfmaq_f32(a, vcvt_f32_f16(vget_low_f16(v)),
					      vld1q_f32(xp + c));
				b = vfmaq_f32(b, vcvt_f32_f16(vget_high_f16(v)),
					      vld1q_f32(xp + c + 4));
			}
			for (; c < k; c++)
				tail += (float)wr[c] * xp[c];
			y[(size_t)i * n + r] = vaddvq_f32(vaddq_f32(a, b)) + tail;
		}
	}
}

/* ---- FP16 arithmetic (ARMv8.2-A FP16; kern.c checks HWCAP_ASIMDHP) ----
 * Codes become exact FP16 integers; the products of a group and their sum
 * are FP16, the group's s sum q x + b SX and the sum over groups FP32. */
#pragma GCC push_options
#pragma GCC target("arch=armv8.2-a+fp16")

/* Codes of steps t and t+1 of a chunk as 8 FP16 lanes (weights 4t..4t+7). */
static inline float16x8_t codes(uint32x4_t w, int t)
{
	const uint32x4_t m = vdupq_n_u32(15);
	uint32x4_t a = vandq_u32(vshlq_u32(w, vdupq_n_s32(-4 * t)), m);
	uint32x4_t b = vandq_u32(vshlq_u32(w, vdupq_n_s32(-4 * (t + 1))), m);

	return vcvtq_f16_u16(vcombine_u16(vmovn_u32(a), vmovn_u32(b)));
}

static void q4_fp16(const struct q4_matrix *w, const struct kern_x *x, float *y,
	       int r0, int r1)
{
	const int cpg = w->group / 32;

	for (int r = r0; r < r1; r++) {
		const uint8_t *row = w->data + (size_t)r * w->row_bytes;

		for (int i = 0; i < x->m; i++) {
			const __fp16 *xp = (const __fp16 *)(x->x16 + (size_t)i * x->k);
			const float *sx = x->sx + (size_t)i * x->ngroups;
			float acc = 0;

			for (int g = 0; g < w->ngroups; g++) {
				const uint8_t *h = row + q4_head_at(w, g);
				const uint8_t *q = row + q4_codes_at(w, g);
				float16x8_t p = vdupq_n_f16(0);
				float part;

				for (int c = 0; c < cpg; c++) {
					uint32x4_t wc = vld1q_u32(
						(const uint32_t *)(q + 16 * c));
					int base = (g * cpg + c) * 32;

					for (int t = 0; t < 8; t += 2) {
						float16x8_t xv;

						if (base + 4 * t + 8 <= x->k) {
							xv = vld1q_f16(xp + base + 4 * t);
						} else {
							__fp16 tmp[8] = { 0 };

							for (int j = 0; j < 8 &&
							     base + 4 * t + j < x->k; j++)
								tmp[j] = xp[base + 4 * t + j];
							xv = vld1q_f16(tmp);
						}
						p = vfmaq_f16(p, codes(wc, t), xv);
					}
				}
				part = vaddvq_f32(vaddq_f32(vcvt_f32_f16(vget_low_f16(p)),
							    vcvt_f32_f16(vget_high_f16(p))));
				acc += header_f(h, 0) * part + header_f(h, 1) * sx[g];
			}
			y[(size_t)i * w->n + r] = acc;
		}
	}
}

#pragma GCC pop_options

/* ---- the integer path: W4A8 batches (ARMv8.2-A dot product; kern.c
 * checks HWCAP_ASIMDDP) ----
 * sdot multiplies signed bytes, four products into each 32-bit lane; the
 * codes (0 .. 15) are signed bytes too. A lane is a row: a thread packs
 * PANEL rows into a panel whose two vectors for octet o (columns 8o ..
 * 8o+7) hold in lane j the four code bytes of row j that carry them (q4.h:
 * byte 4l + b of a chunk holds columns 8b + l low and 8b + 4 + l high, so
 * a table lookup a chunk puts each octet's bytes together). Their low
 * nibbles meet one token's codes of columns 8o .. 8o+3 (one lane of a
 * vector of TILE tokens' words, kern_tiles), the high ones 8o+4 .. 8o+7.
 * A block ends with fg += float(sum q a) u, a group with
 * f += fg s + b sum(x), as the AVX-512 path. */
#pragma GCC push_options
#pragma GCC target("arch=armv8.2-a+dotprod")

#define PANEL 8
#define TILE 4


/* The codes of rows [r, r + rows) of w (rows <= PANEL; the rest zero)
 * into pn */
static void a8_pack(const struct q4_matrix *w, int r, int rows, int kq,
		    struct kern_panel *pn)
{
	static const uint8_t order[16] = { 0, 4, 8, 12, 1, 5, 9, 13,
					   2, 6, 10, 14, 3, 7, 11, 15 };
	const uint8x16_t idx = vld1q_u8(order);
	const int G = w->group, chunks = w->ngroups * (G / 32);

	memset(pn->codes, 0, sizeof(int32_t) * (size_t)kq / 8 * PANEL);
	for (int j = 0; j < rows; j++) {
		const uint8_t *rowp = w->data + (size_t)(r + j) * w->row_bytes;

		for (int c = 0; c < chunks; c++) {
			const uint8_t *b = rowp + q4_chunk_at(w, c);
			uint32x4_t v = vreinterpretq_u32_u8(
				vqtbl1q_u8(vld1q_u8(b), idx));
			int32_t *o = pn->codes + (size_t)4 * c * PANEL + j;

			vst1q_lane_u32((uint32_t *)o, v, 0);
			vst1q_lane_u32((uint32_t *)(o + PANEL), v, 1);
			vst1q_lane_u32((uint32_t *)(o + 2 * PANEL), v, 2);
			vst1q_lane_u32((uint32_t *)(o + 3 * PANEL), v, 3);
		}
	}
}

/* Token t (a constant, below T) of the tile: its sums in a[..][t] */
#define DOT4(t)                                                                \
	do {                                                                   \
		if (T > (t)) {                                                 \
			a[0][t] = vdotq_laneq_s32(a[0][t], lo0, xl, t);        \
			a[0][t] = vdotq_laneq_s32(a[0][t], hi0, xh, t);        \
			a[1][t] = vdotq_laneq_s32(a[1][t], lo1, xl, t);        \
			a[1][t] = vdotq_laneq_s32(a[1][t], hi1, xh, t);        \
		}                                                              \
	} while (0)
#define UNIT4(t)                                                               \
	do {                                                                   \
		if (T > (t))                                                   \
			for (int h = 0; h < 2; h++)                            \
				fg[h][t] = vfmaq_laneq_f32(fg[h][t],           \
					vcvtq_f32_s32(a[h][t]), uv, t);        \
	} while (0)
#define GROUP4(t)                                                              \
	do {                                                                   \
		if (T > (t))                                                   \
			for (int h = 0; h < 2; h++) {                          \
				f[h][t] = vfmaq_f32(f[h][t], fg[h][t], sv[h]); \
				f[h][t] = vfmaq_laneq_f32(f[h][t], bv[h], sm, t); \
			}                                                      \
	} while (0)

/* One panel against one tile of T tokens: y rows r .. r + rows - 1 */
static inline __attribute__((always_inline)) void
a8_micro(const struct kern_panel *pn, const int8_t *aq, const float *au,
	 const float *as, int ngroups, int group, const int T, float *y,
	 size_t ystride, int rows)
{
	const uint8x16_t low = vdupq_n_u8(15);
	const int32_t *cw = pn->codes;
	float32x4_t f[2][TILE];

	for (int h = 0; h < 2; h++)
		for (int t = 0; t < TILE; t++)
			f[h][t] = vdupq_n_f32(0);
	for (int g = 0; g < ngroups; g++, as += T) {
		float32x4_t fg[2][TILE], sv[2], bv[2], sm = vld1q_f32(as);

		for (int h = 0; h < 2; h++)
			for (int t = 0; t < TILE; t++)
				fg[h][t] = vdupq_n_f32(0);
		for (int j = 0; j < group / Q4_A8_BLOCK; j++, au += T) {
			int32x4_t a[2][TILE];
			float32x4_t uv = vld1q_f32(au);

			for (int h = 0; h < 2; h++)
				for (int t = 0; t < TILE; t++)
					a[h][t] = vdupq_n_s32(0);
			for (int o = 0; o < Q4_A8_BLOCK / 8; o++, cw += PANEL,
				 aq += 8 * T) {
				uint8x16_t w0 = vld1q_u8((const uint8_t *)cw);
				uint8x16_t w1 = vld1q_u8((const uint8_t *)(cw + 4));
				int8x16_t lo0 = vreinterpretq_s8_u8(vandq_u8(w0, low));
				int8x16_t hi0 = vreinterpretq_s8_u8(vshrq_n_u8(w0, 4));
				int8x16_t lo1 = vreinterpretq_s8_u8(vandq_u8(w1, low));
				int8x16_t hi1 = vreinterpretq_s8_u8(vshrq_n_u8(w1, 4));
				int8x16_t xl = vld1q_s8(aq), xh = vld1q_s8(aq + 4 * T);

				DOT4(0);
				DOT4(1);
				DOT4(2);
				DOT4(3);
			}
			UNIT4(0);
			UNIT4(1);
			UNIT4(2);
			UNIT4(3);
		}
		for (int h = 0; h < 2; h++) {
			sv[h] = half4(pn->scale + g * PANEL + 4 * h);
			bv[h] = half4(pn->bias + g * PANEL + 4 * h);
		}
		GROUP4(0);
		GROUP4(1);
		GROUP4(2);
		GROUP4(3);
	}
	for (int t = 0; t < T; t++) {
		float out[PANEL];

		vst1q_f32(out, f[0][t]);
		vst1q_f32(out + 4, f[1][t]);
		memcpy(y + (size_t)t * ystride, out, sizeof(float) * (size_t)rows);
	}
}

#undef DOT4
#undef UNIT4
#undef GROUP4

static void a8_tile(const struct kern_panel *pn, const int8_t *aq,
		    const float *au, const float *as, int T, int ngroups,
		    int group, float *y, size_t ystride, int rows)
{
	KERN_TILE_DISPATCH(a8_micro, TILE);
}

/* ---- batch 1 to 3 from the activations' digits (kern.h's kern_dig_*) ----
 * kern_avx2.c's method on sdot, for groups of 32, 64 and 128: a group's
 * values become integers v = x / u, u = 2^(e - 22) for the smallest e
 * with max |x| < 2^e, in signed bytes v = 65536 d2 + 256 d1 + d0; sdot
 * multiplies the codes (0 .. 15, signed bytes too) by the digits, four
 * products into each 32-bit lane, exactly, and a group's three sums
 * combine in 32 bits (a lane's 8 codes a chunk, 32 at G = 128, by |v| <
 * 2^22: under 2^31). A token's digits are, for each chunk (32 values),
 * DIGN_CHUNK bytes: d2, d1 and d0, each as 16 bytes under the chunk's low
 * nibbles and 16 under its high ones (code byte 4l + b holds columns
 * 8b + l and 8b + 4 + l, q4.h: so byte b of lane l is column 4(2b) + l's
 * digit under the low nibbles, column 4(2b + 1) + l's under the high
 * ones). Values with bits below u
 * keep their residuals, up to KERN_DIG_FIXES a group; a group with more
 * takes the float method (u 0, digits 0). */
#define DIGN_CHUNK 96
_Static_assert(128 / 4 * 15 * ((1 << 22) + 128) < 2147483647,
	       "a group's sum of codes by digits fits 32 bits");

/* One group g of token i: its unit, digits and extra (counted into *nx) */
static void dign_group(struct kern_x *x, int i, int g, int *nx)
{
	const int G = x->group, nv = G / 4;
	const float *xp = x->xf + (size_t)i * x->stride + (size_t)g * G;
	int8_t *d = kern_dig_at(x, i) + (size_t)g * G / 32 * DIGN_CHUNK;
	float *us = kern_dig_us(x, i);
	float32x4_t v[32], m = vdupq_n_f32(0);
	int32x4_t iv[32];
	uint32x4_t inexact[32];
	float scale, u;
	int count = 0;

	for (int t = 0; t < nv; t++) {
		v[t] = vld1q_f32(xp + 4 * t);
		m = vmaxq_f32(m, vabsq_f32(v[t]));
	}
	u = kern_dig_unit(vmaxvq_f32(m));
	scale = 1 / u; /* a power of two: exact */
	for (int t = 0; t < nv; t++) {
		float32x4_t y = vmulq_f32(v[t], vdupq_n_f32(scale));

		iv[t] = vcvtnq_s32_f32(y);
		inexact[t] = vmvnq_u32(vceqq_f32(vcvtq_f32_s32(iv[t]), y));
		count += (int)vaddvq_u32(vshrq_n_u32(inexact[t], 31));
	}
	us[2 * g] = count > KERN_DIG_FIXES ? 0 : u;
	us[2 * g + 1] = x->sx[(size_t)i * x->ngroups + g];
	if (count) {
		struct kern_dig_extra *ex = kern_dig_extra_new(x, i, nx, g);

		if (count > KERN_DIG_FIXES)
			return; /* u 0, digits 0 (zeroed) */
		for (int t = 0; t < nv; t++) {
			float xv[4];
			int32_t qv[4];
			uint32_t in[4];

			vst1q_u32(in, inexact[t]);
			vst1q_f32(xv, v[t]);
			vst1q_s32(qv, iv[t]);
			for (int l = 0; l < 4; l++)
				if (in[l])
					kern_dig_fix(ex, 4 * t + l,
						     xv[l] - (float)qv[l] * u);
		}
	}
	for (int c = 0; c < G / 32; c++, d += DIGN_CHUNK) {
		int32x4_t dt[8][3];

		for (int t = 0; t < 8; t++) {
			int32x4_t q = iv[8 * c + t];

			for (int k = 0; k < 2; k++) {
				dt[t][k] = vshrq_n_s32(vshlq_n_s32(q, 24), 24);
				q = vshrq_n_s32(vsubq_s32(q, dt[t][k]), 8);
			}
			dt[t][2] = q;
		}
		for (int h = 0; h < 2; h++)
			for (int k = 0; k < 3; k++) {
				const int32x4_t byte = vdupq_n_s32(255);
				int32x4_t b = vandq_s32(dt[h][k], byte);

				b = vorrq_s32(b, vshlq_n_s32(vandq_s32(dt[2 + h][k], byte), 8));
				b = vorrq_s32(b, vshlq_n_s32(vandq_s32(dt[4 + h][k], byte), 16));
				b = vorrq_s32(b, vshlq_n_s32(dt[6 + h][k], 24));
				vst1q_s32((int32_t *)(d + 32 * (2 - k) + 16 * h), b);
			}
	}
}

/* Each token's digits, below KERN_DIG_TOKENS tokens */
static void dign(struct kern_x *x)
{
	if (x->m >= KERN_DIG_TOKENS)
		return;
	kern_dig_alloc(x);
	for (int i = 0; i < x->m; i++) {
		int nx = 0;

		for (int g = 0; g < x->ngroups; g++)
			dign_group(x, i, g, &nx);
		*kern_dig_count(x, i) = nx;
	}
}

/* sum q x over group g (its codes at q) by the float method */
static float dign_qx(const struct q4_matrix *w, const struct kern_dig_tok *t,
		     const uint8_t *q, int g)
{
	float32x4_t p = vdupq_n_f32(0);

	for (int c = 0; c < w->group / 32; c++)
		p = chunk_dot(q + 16 * c,
			      t->xf + (size_t)g * w->group + 32 * c, p);
	return vaddvq_f32(p);
}

/* Row r against token t's digits into y[r] */
static void dign_row(const struct q4_matrix *w, const struct kern_dig_tok *t,
		     int r, float *y)
{
	const uint8_t *row = w->data + (size_t)r * w->row_bytes;
	const uint8x16_t low = vdupq_n_u8(15);
	const int8_t *d = t->d;
	float32x4_t acc = vdupq_n_f32(0);
	float corr = 0;

	for (int g = 0; g < w->ngroups; g++) {
		const uint8_t *h = row + q4_head_at(w, g);
		const uint8_t *q = row + q4_codes_at(w, g);
		int32x4_t s2 = vdupq_n_s32(0), s1 = s2, s0 = s2;

		for (int c = 0; c < w->group / 32; c++, d += DIGN_CHUNK) {
			uint8x16_t z = vld1q_u8(q + 16 * c);
			int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(z, low));
			int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(z, 4));

			s2 = vdotq_s32(vdotq_s32(s2, lo, vld1q_s8(d)), hi,
				       vld1q_s8(d + 16));
			s1 = vdotq_s32(vdotq_s32(s1, lo, vld1q_s8(d + 32)), hi,
				       vld1q_s8(d + 48));
			s0 = vdotq_s32(vdotq_s32(s0, lo, vld1q_s8(d + 64)), hi,
				       vld1q_s8(d + 80));
		}
		s2 = vaddq_s32(vshlq_n_s32(vaddq_s32(vshlq_n_s32(s2, 8), s1), 8), s0);
		acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s2),
				  header_f(h, 0) * t->us[2 * g]);
		corr += header_f(h, 1) * t->us[2 * g + 1];
	}
	y[r] = vaddvq_f32(acc) + corr +
	       (t->nx ? kern_dig_rest(w, t, r, dign_qx) : 0);
}

/* q4 with each token's digits where it has them (dign) */
static void q4_dig(const struct q4_matrix *w, const struct kern_x *x, float *y,
		   int r0, int r1)
{
	struct kern_dig_tok t[KERN_DIG_TOKENS];

	if (!x->dig) {
		q4(w, x, y, r0, r1);
		return;
	}
	for (int i = 0; i < x->m; i++)
		t[i] = kern_dig_tok(x, i);
	for (int r = r0; r < r1; r++)
		for (int i = 0; i < x->m; i++)
			dign_row(w, &t[i], r, y + (size_t)i * w->n);
}

#pragma GCC pop_options

/* ---- the same with the 8-bit matrix multiply (ARMv8.6-A i8mm; kern.c
 * checks HWCAP2_I8MM) ----
 * smmla multiplies a 2 x 8 matrix of signed bytes by the transpose of
 * another, into a 2 x 2 of 32-bit sums: rows (r, r+1) against tokens
 * (t, t+1), 8 columns. The panel is the sdot path's (a8_pack); a zip of an
 * octet's low and high code words gives a pair of rows' 8 codes, a zip of
 * the tile's two quads a pair of tokens'. Sums are 2 x 2 blocks, scaled
 * per block by (s_r u_t) and per group by b_r sum(x)_t, and written back
 * out of the blocks at the end. */
#pragma GCC push_options
#pragma GCC target("arch=armv8.2-a+i8mm")

static inline __attribute__((always_inline)) void
mm_micro(const struct kern_panel *pn, const int8_t *aq, const float *au,
	 const float *as, int ngroups, int group, const int T, float *y,
	 size_t ystride, int rows)
{
	const uint8x16_t low = vdupq_n_u8(15);
	const int32_t *cw = pn->codes;
	float32x4_t f[4][2]; /* [row pair][token pair] */

	for (int p = 0; p < 4; p++)
		f[p][0] = f[p][1] = vdupq_n_f32(0);
	for (int g = 0; g < ngroups; g++, as += T) {
		float32x4_t s03 = half4(pn->scale + g * PANEL);
		float32x4_t s47 = half4(pn->scale + g * PANEL + 4);
		const float32x4_t sr[4] = { vzip1q_f32(s03, s03),
					    vzip2q_f32(s03, s03),
					    vzip1q_f32(s47, s47),
					    vzip2q_f32(s47, s47) };

		for (int j = 0; j < group / Q4_A8_BLOCK; j++, au += T) {
			int32x4_t a[4][2];
			float32x4_t uv = vld1q_f32(au);
			const float32x4_t ut[2] = {
				vcombine_f32(vget_low_f32(uv), vget_low_f32(uv)),
				vcombine_f32(vget_high_f32(uv), vget_high_f32(uv)) };

			for (int p = 0; p < 4; p++)
				a[p][0] = a[p][1] = vdupq_n_s32(0);
			for (int o = 0; o < Q4_A8_BLOCK / 8; o++, cw += PANEL,
				 aq += 8 * T) {
				uint32x4_t w0 = vld1q_u32((const uint32_t *)cw);
				uint32x4_t w1 = vld1q_u32((const uint32_t *)(cw + 4));
				uint32x4_t l0 = vandq_u32(w0, vreinterpretq_u32_u8(low));
				uint32x4_t h0 = vreinterpretq_u32_u8(vshrq_n_u8(
					vreinterpretq_u8_u32(w0), 4));
				uint32x4_t l1 = vandq_u32(w1, vreinterpretq_u32_u8(low));
				uint32x4_t h1 = vreinterpretq_u32_u8(vshrq_n_u8(
					vreinterpretq_u8_u32(w1), 4));
				const int8x16_t rp[4] = {
					vreinterpretq_s8_u32(vzip1q_u32(l0, h0)),
					vreinterpretq_s8_u32(vzip2q_u32(l0, h0)),
					vreinterpretq_s8_u32(vzip1q_u32(l1, h1)),
					vreinterpretq_s8_u32(vzip2q_u32(l1, h1)) };
				uint32x4_t xl = vld1q_u32((const uint32_t *)aq);
				uint32x4_t xh = vld1q_u32((const uint32_t *)(aq + 4 * T));
				const int8x16_t tp[2] = {
					vreinterpretq_s8_u32(vzip1q_u32(xl, xh)),
					vreinterpretq_s8_u32(vzip2q_u32(xl, xh)) };

				for (int p = 0; p < 4; p++) {
					a[p][0] = vmmlaq_s32(a[p][0], rp[p], tp[0]);
					if (T > 2)
						a[p][1] = vmmlaq_s32(a[p][1], rp[p], tp[1]);
				}
			}
			for (int p = 0; p < 4; p++)
				for (int q = 0; q < (T > 2 ? 2 : 1); q++)
					f[p][q] = vfmaq_f32(f[p][q], vcvtq_f32_s32(a[p][q]),
							    vmulq_f32(sr[p], ut[q]));
		}
		float32x4_t b03 = half4(pn->bias + g * PANEL);
		float32x4_t b47 = half4(pn->bias + g * PANEL + 4);
		const float32x4_t br[4] = { vzip1q_f32(b03, b03),
					    vzip2q_f32(b03, b03),
					    vzip1q_f32(b47, b47),
					    vzip2q_f32(b47, b47) };
		float32x4_t sv = vld1q_f32(as);
		const float32x4_t st[2] = {
			vcombine_f32(vget_low_f32(sv), vget_low_f32(sv)),
			vcombine_f32(vget_high_f32(sv), vget_high_f32(sv)) };

		for (int p = 0; p < 4; p++)
			for (int q = 0; q < (T > 2 ? 2 : 1); q++)
				f[p][q] = vfmaq_f32(f[p][q], br[p], st[q]);
	}
	/* block (p, q) lane 2i + k: row 2p + i, token 2q + k */
	for (int t = 0; t < T; t++) {
		float out[PANEL], lanes[4];

		for (int p = 0; p < 4; p++) {
			vst1q_f32(lanes, f[p][t / 2]);
			out[2 * p] = lanes[t % 2];
			out[2 * p + 1] = lanes[2 + t % 2];
		}
		memcpy(y + (size_t)t * ystride, out, sizeof(float) * (size_t)rows);
	}
}

static void mm_tile(const struct kern_panel *pn, const int8_t *aq,
		    const float *au, const float *as, int T, int ngroups,
		    int group, float *y, size_t ystride, int rows)
{
	KERN_TILE_DISPATCH(mm_micro, TILE);
}

#pragma GCC pop_options

/* kern.quantize: q4_quantize's bytes, kern_avx2.c's method on 4
 * lanes: a group's extremes in vectors, its head through FCVT (f16.h's
 * bits: a conversion to FP16 ignores FZ16; an FP32 subnormal that FZ
 * flushes becomes the signed zero f16_from_f32 gives it), a code by the
 * portable loop's subtraction and division, clamped, then rounded halves
 * up; step t (weights 4t .. 4t+3 of a chunk) into nibble t of the
 * chunk's four words. */
static void quantize(const float *x, int G, enum q4_kind kind, uint8_t *h,
		     uint8_t *q)
{
	float32x4_t lo = vld1q_f32(x), hi = lo, am = vabsq_f32(lo);
	struct q4_head hd;
	float s;

	for (int j = 4; j < G; j += 4) {
		float32x4_t v = vld1q_f32(x + j);

		lo = vminq_f32(lo, v);
		hi = vmaxq_f32(hi, v);
		am = vmaxq_f32(am, vabsq_f32(v));
	}
	hd = q4_head_of(vminvq_f32(lo), vmaxvq_f32(hi), vmaxvq_f32(am), kind,
			fcvt_to16, fcvt_to32);
	memcpy(h, &hd, sizeof(hd));
	s = fcvt_to32(hd.scale);
	if (!(s > 0)) {
		memset(q, 0, (size_t)G / 2);
		return;
	}
	const float32x4_t sv = vdupq_n_f32(s), b = vdupq_n_f32(fcvt_to32(hd.bias));
	const float32x4_t zero = vdupq_n_f32(0), top = vdupq_n_f32(15);
	const float32x4_t half = vdupq_n_f32(0.5f);

	for (int c = 0; c < G; c += 32) {
		uint32x4_t word = vdupq_n_u32(0);

		for (int t = 0; t < 8; t++) {
			float32x4_t v = vdivq_f32(vsubq_f32(vld1q_f32(x + c + 4 * t), b), sv);
			uint32x4_t whole;

			v = vminq_f32(vmaxq_f32(v, zero), top);
			whole = vreinterpretq_u32_s32(vcvtq_s32_f32(v));
			/* + 1 (a mask's all ones subtracted) where the rest is
			 * 0.5 or more */
			whole = vsubq_u32(whole, vcgeq_f32(vsubq_f32(
				v, vcvtq_f32_u32(whole)), half));
			word = vorrq_u32(word, vshlq_u32(whole, vdupq_n_s32(4 * t)));
		}
		vst1q_u32((uint32_t *)(q + c / 2), word);
	}
}

const struct kern kern_neon = { .name = "neon", .q4 = q4, .q8 = q8,
			       .f16 = f16, .quantize = quantize };
const struct kern kern_neon_dot = { .name = "neon-dot", .q4 = q4_dig,
				    .q8 = q8, .f16 = f16, .a8_pack = a8_pack,
				    .a8_run = a8_tile, .a8_panel = PANEL,
				    .a8_panels = 1, .a8_tile = TILE,
				    .digits = dign,
				    .digit_groups = 32 | 64 | 128,
				    .quantize = quantize };
const struct kern kern_neon_i8mm = { .name = "neon-i8mm", .q4 = q4_dig,
				     .q8 = q8, .f16 = f16, .a8_pack = a8_pack,
				     .a8_run = mm_tile, .a8_panel = PANEL,
				     .a8_panels = 1, .a8_tile = TILE,
				     .digits = dign,
				     .digit_groups = 32 | 64 | 128,
				     .quantize = quantize };
const struct kern kern_neon_fp16 = { .name = "neon-fp16", .q4 = q4_fp16,
				     .q8 = q8, .f16 = f16, .quantize = quantize };
