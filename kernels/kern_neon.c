/* kern_neon.c: W4A16, W8A16 and FP16 kernels for aarch64 NEON: "neon" with
 * FP32 arithmetic, "neon-fp16" with FP16 arithmetic for W4A16. A chunk's four code words are one vector: step t takes nibble
 * t of every lane, weights 4t..4t+3, so activations stay in column order.
 * A group contributes s sum q x + b SX (SX prepared once per call). */
#include "kern.h"

#include <arm_neon.h>
#include <string.h>

static inline float header_f(const uint8_t *p, int i)
{
	__fp16 h;

	memcpy(&h, p + 2 * i, 2);
	return (float)h;
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
				const uint8_t *b = row + (size_t)g * w->block_bytes;
				float32x4_t p = vdupq_n_f32(0);

				for (int c = 0; c < cpg; c++)
					p = chunk_dot(b + Q4_HEAD_BYTES + 16 * c,
						      xp + (size_t)(g * cpg + c) * 32, p);
				acc += header_f(b, 0) * vaddvq_f32(p) +
				       header_f(b, 1) * sx[g];
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
				const uint8_t *b = row + (size_t)g * w->block_bytes;
				float16x8_t p = vdupq_n_f16(0);
				float part;

				for (int c = 0; c < cpg; c++) {
					uint32x4_t wc = vld1q_u32(
						(const uint32_t *)(b + Q4_HEAD_BYTES + 16 * c));
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
				acc += header_f(b, 0) * part + header_f(b, 1) * sx[g];
			}
			y[(size_t)i * w->n + r] = acc;
		}
	}
}

#pragma GCC pop_options

const struct kern kern_neon = { .name = "neon", .q4 = q4, .q8 = q8,
			       .f16 = f16 };
const struct kern kern_neon_fp16 = { .name = "neon-fp16", .q4 = q4_fp16,
				     .q8 = q8, .f16 = f16 };
