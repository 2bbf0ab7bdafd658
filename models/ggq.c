/* ggq.c: one dequantiser a type, and the table that names them. A block
 * is read byte by byte (little-endian FP16 scales), so the code does not
 * depend on the host's struct packing or alignment. */
#include "ggq.h"

#include "f16.h"

#include <string.h>

static float half(const uint8_t *p)
{
	return f16_to_f32((uint16_t)(p[0] | p[1] << 8));
}

static void dq_F32(const uint8_t *x, float *y, long n)
{
	memcpy(y, x, sizeof(float) * (size_t)n);
}

static void dq_F16(const uint8_t *x, float *y, long n)
{
	for (long i = 0; i < n; i++)
		y[i] = half(x + 2 * i);
}

static void dq_BF16(const uint8_t *x, float *y, long n)
{
	for (long i = 0; i < n; i++) {
		uint32_t b = (uint32_t)(x[2 * i] | x[2 * i + 1] << 8) << 16;

		memcpy(&y[i], &b, sizeof(float));
	}
}

/* Q4_0: d, then 16 bytes: weight j in the low nibble of byte j, weight
 * j + 16 in its high nibble; w = (q - 8) d. */
static void dq_Q4_0(const uint8_t *x, float *y, long n)
{
	for (long b = 0; b < n / 32; b++, x += 18, y += 32) {
		float d = half(x);

		for (int j = 0; j < 16; j++) {
			y[j] = (float)((x[2 + j] & 0x0F) - 8) * d;
			y[j + 16] = (float)((x[2 + j] >> 4) - 8) * d;
		}
	}
}

/* Q4_1: d, m, then the nibbles of Q4_0; w = q d + m. */
static void dq_Q4_1(const uint8_t *x, float *y, long n)
{
	for (long b = 0; b < n / 32; b++, x += 20, y += 32) {
		float d = half(x), m = half(x + 2);

		for (int j = 0; j < 16; j++) {
			y[j] = (float)(x[4 + j] & 0x0F) * d + m;
			y[j + 16] = (float)(x[4 + j] >> 4) * d + m;
		}
	}
}

/* The fifth bits of Q5_0/Q5_1: a little-endian 32-bit word, bit j for
 * weight j. */
static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Q5_0: d, qh, 16 bytes of low nibbles as Q4_0; w = (q - 16) d. */
static void dq_Q5_0(const uint8_t *x, float *y, long n)
{
	for (long b = 0; b < n / 32; b++, x += 22, y += 32) {
		float d = half(x);
		uint32_t qh = le32(x + 2);

		for (int j = 0; j < 16; j++) {
			int h0 = (qh >> j) << 4 & 0x10, h1 = qh >> (j + 12) & 0x10;

			y[j] = (float)(((x[6 + j] & 0x0F) | h0) - 16) * d;
			y[j + 16] = (float)(((x[6 + j] >> 4) | h1) - 16) * d;
		}
	}
}

/* Q5_1: d, m, qh, nibbles; w = q d + m. */
static void dq_Q5_1(const uint8_t *x, float *y, long n)
{
	for (long b = 0; b < n / 32; b++, x += 24, y += 32) {
		float d = half(x), m = half(x + 2);
		uint32_t qh = le32(x + 4);

		for (int j = 0; j < 16; j++) {
			int h0 = (qh >> j) << 4 & 0x10, h1 = qh >> (j + 12) & 0x10;

			y[j] = (float)((x[8 + j] & 0x0F) | h0) * d + m;
			y[j + 16] = (float)((x[8 + j] >> 4) | h1) * d + m;
		}
	}
}

/* Q8_0: d, 32 signed bytes; w = q d. */
static void dq_Q8_0(const uint8_t *x, float *y, long n)
{
	for (long b = 0; b < n / 32; b++, x += 34, y += 32) {
		float d = half(x);

		for (int j = 0; j < 32; j++)
			y[j] = (float)(int8_t)x[2 + j] * d;
	}
}

/* The 6-bit scale and min of sub-block j (0..7) of a Q4_K or Q5_K block,
 * packed in 12 bytes (ggml's get_scale_min_k4). */
static void scale_min_k4(int j, const uint8_t *q, int *sc, int *m)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*sc = (q[j + 4] & 0x0F) | (q[j - 4] >> 6) << 4;
		*m = (q[j + 4] >> 4) | (q[j] >> 6) << 4;
	}
}

/* The scales and mins of sub-blocks is and is + 1, times d and dmin. */
static void pair_k4(int is, const uint8_t *sc, float d, float dmin, float *d1,
		    float *m1, float *d2, float *m2)
{
	int s, m;

	scale_min_k4(is, sc, &s, &m);
	*d1 = d * (float)s;
	*m1 = dmin * (float)m;
	scale_min_k4(is + 1, sc, &s, &m);
	*d2 = d * (float)s;
	*m2 = dmin * (float)m;
}

/* Q4_K: d, dmin, 12 bytes of scales, 128 bytes of nibbles. Eight
 * sub-blocks of 32; each 64 weights share 32 bytes, low nibbles first;
 * w = d sc q - dmin m. */
static void dq_Q4_K(const uint8_t *x, float *y, long n)
{
	for (long b = 0; b < n / 256; b++, x += 144) {
		float d = half(x), dmin = half(x + 2);
		const uint8_t *sc = x + 4, *q = x + 16;

		for (int j = 0, is = 0; j < 256; j += 64, is += 2, q += 32) {
			float d1, m1, d2, m2;

			pair_k4(is, sc, d, dmin, &d1, &m1, &d2, &m2);
			for (int l = 0; l < 32; l++)
				*y++ = d1 * (float)(q[l] & 0x0F) - m1;
			for (int l = 0; l < 32; l++)
				*y++ = d2 * (float)(q[l] >> 4) - m2;
		}
	}
}

/* Q5_K: d, dmin, 12 bytes of scales, 32 bytes of fifth bits (bit 2i and
 * 2i + 1 of byte l for the i-th pair of sub-blocks), 128 of nibbles. */
static void dq_Q5_K(const uint8_t *x, float *y, long n)
{
	for (long b = 0; b < n / 256; b++, x += 176) {
		float d = half(x), dmin = half(x + 2);
		const uint8_t *sc = x + 4, *qh = x + 16, *ql = x + 48;
		unsigned u1 = 1, u2 = 2;

		for (int j = 0, is = 0; j < 256;
		     j += 64, is += 2, ql += 32, u1 <<= 2, u2 <<= 2) {
			float d1, m1, d2, m2;

			pair_k4(is, sc, d, dmin, &d1, &m1, &d2, &m2);
			for (int l = 0; l < 32; l++)
				*y++ = d1 * (float)((ql[l] & 0x0F) +
						    (qh[l] & u1 ? 16 : 0)) - m1;
			for (int l = 0; l < 32; l++)
				*y++ = d2 * (float)((ql[l] >> 4) +
						    (qh[l] & u2 ? 16 : 0)) - m2;
		}
	}
}

/* Q6_K: 128 bytes of low nibbles, 64 of high bit pairs, 16 signed scales
 * (one per 16 weights), then d; w = d sc (q - 32). */
static void dq_Q6_K(const uint8_t *x, float *y, long n)
{
	for (long b = 0; b < n / 256; b++, x += 210) {
		const uint8_t *ql = x, *qh = x + 128;
		const int8_t *sc = (const int8_t *)(x + 192);
		float d = half(x + 208);

		for (int h = 0; h < 256; h += 128, y += 128, ql += 64, qh += 32,
			 sc += 8)
			for (int l = 0; l < 32; l++) {
				int is = l / 16;
				int q1 = ((ql[l] & 0x0F) | (qh[l] & 3) << 4) - 32;
				int q2 = ((ql[l + 32] & 0x0F) | (qh[l] >> 2 & 3) << 4) - 32;
				int q3 = ((ql[l] >> 4) | (qh[l] >> 4 & 3) << 4) - 32;
				int q4 = ((ql[l + 32] >> 4) | (qh[l] >> 6 & 3) << 4) - 32;

				y[l] = d * (float)sc[is] * (float)q1;
				y[l + 32] = d * (float)sc[is + 2] * (float)q2;
				y[l + 64] = d * (float)sc[is + 4] * (float)q3;
				y[l + 96] = d * (float)sc[is + 6] * (float)q4;
			}
	}
}


static const struct {
	uint32_t id;
	struct ggq_info info;
} types[] = {
#define X(NAME, ID, STR, BLOCK, BYTES) { ID, { STR, BLOCK, BYTES, dq_##NAME } },
	GGQ_TYPES(X)
#undef X
};

const struct ggq_info *ggq_find(uint32_t id)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].id == id)
			return &types[i].info;
	return NULL;
}

size_t ggq_row_bytes(const struct ggq_info *t, long n)
{
	return (size_t)(n / t->block) * (size_t)t->bytes;
}
