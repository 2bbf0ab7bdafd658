/* f16.h: IEEE half precision <-> single, portable and exact (round to
 * nearest even), for formats and references; kernels use the ISA's own
 * conversions. And FP16 weights' reference kernel, the dense baseline. */
#ifndef HS_F16_H
#define HS_F16_H

#include <stdint.h>
#include <string.h>

static inline float f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f;
	uint32_t man = h & 0x3ff, bits;
	float f;

	if (exp == 0x1f) {
		bits = sign | 0x7f800000 | (man << 13);
	} else if (exp == 0) {
		f = (float)man * 0x1p-24f; /* subnormal (or zero) */
		return sign ? -f : f;
	} else {
		bits = sign | ((exp + 112) << 23) | (man << 13);
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

static inline uint16_t f16_from_f32(float f)
{
	uint32_t x, sign, exp, man;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000;
	exp = (x >> 23) & 0xff;
	man = x & 0x7fffff;
	if (exp == 0xff) /* inf or nan */
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
	if (exp > 142) /* overflow */
		return (uint16_t)(sign | 0x7c00);
	if (exp < 113) { /* subnormal half, or zero */
		uint32_t shift, m, r;

		if (exp < 102)
			return (uint16_t)sign;
		m = man | 0x800000;
		shift = 126 - exp;
		r = m >> shift;
		/* round to nearest even on the bits shifted out */
		if ((m & ((1u << shift) - 1)) > (1u << (shift - 1)) ||
		    ((m & ((1u << shift) - 1)) == (1u << (shift - 1)) && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	{
		uint32_t h = sign | ((exp - 112) << 10) | (man >> 13);
		uint32_t rest = man & 0x1fff;

		if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
			h++; /* may carry into the exponent: still correct */
		return (uint16_t)h;
	}
}

/* y (m x n) = x (m x k, FP16) times W^T for FP16 weights w (n x k), each
 * dot product summed in k order in FP32. Rows [r0, r1) only. */
void f16_gemm_ref(const uint16_t *w, int n, int k, const uint16_t *x, int m,
		  float *y, int r0, int r1);

#endif
