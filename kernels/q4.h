/* q4.h: the W4A16 weight format, its quantisers, and the reference kernels.
 *
 * A matrix of n rows (outputs) by k columns (the reduction) is stored row
 * after row; a row is ceil(k / G) groups of G weights, G = 32, 64 or 128.
 * A group has a head, an FP16 scale s and an FP16 bias b, and G 4-bit codes
 * q; a weight is w = s q + b. Symmetric quantisation stores b = -8 s (q - 8
 * in [-8, 7]); asymmetric stores the group's minimum as b. The groups lie
 * in spans of 128 weights (128 / G groups; a row's last span may hold
 * fewer): a span is its groups' heads, then their codes, group after
 * group, so that a span's codes are 64 contiguous bytes (fewer in a short
 * last span) at every group size, and its heads one load before them. At
 * G = 128 a span is one group, head then codes. Codes come in chunks of 32
 * weights (16 bytes, four 32-bit little-endian words): word l holds in
 * bits 4t .. 4t+3 the code of weight 4t + l of the chunk (t = 0 .. 7), so
 * four lanes of one shift read four consecutive weights. The columns past
 * k of the last group have code 0 and meet zero activations.
 *
 * Activations are FP16 (IEEE half, stored as uint16_t), m tokens of k; results
 * and accumulation are FP32. */
#ifndef HS_Q4_H
#define HS_Q4_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* The head of every group, its FP16 scale and bias */
struct q4_head {
	uint16_t scale, bias;
};
#define Q4_HEAD_BYTES 4
_Static_assert(sizeof(struct q4_head) == Q4_HEAD_BYTES,
	       "a q4 group's head is its two FP16 values, unpadded");

enum q4_kind { Q4_SYM, Q4_ASYM };

#define Q4_SPAN 128 /* weights a span */

struct q4_matrix {
	int n, k, group, ngroups;
	size_t span_bytes, row_bytes; /* a whole span's, a row's */
	uint8_t *data; /* (n x row_bytes) owned, 64-byte aligned */
};

/* log2 of the groups a span holds at group size G (32, 64, 128: 2, 1,
 * 0): the helpers below take shifts and masks, not divisions, as the
 * kernels call them in their loops */
static inline int q4_span_log(int G)
{
	return 2 - G / 64;
}

/* Bytes of a whole span at group size G: 128 / G heads, 64 of codes */
static inline size_t q4_span_bytes(int G)
{
	return ((size_t)1 << q4_span_log(G)) * Q4_HEAD_BYTES + Q4_SPAN / 2;
}

/* Groups in span s of a row of ngroups groups of G: 128 / G, or fewer in
 * the last */
static inline int q4_span_count(int G, int ngroups, int s)
{
	const int lg = q4_span_log(G), left = ngroups - (s << lg);

	return left < 1 << lg ? left : 1 << lg;
}

/* Where group g's head, and its codes, lie in a row of ngroups groups of
 * G: offsets every row of a matrix shares */
static inline size_t q4_head_place(int G, int g)
{
	const int lg = q4_span_log(G);

	return (size_t)(g >> lg) * q4_span_bytes(G) +
	       (size_t)(g & ((1 << lg) - 1)) * Q4_HEAD_BYTES;
}

static inline size_t q4_codes_place(int G, int ngroups, int g)
{
	const int lg = q4_span_log(G);

	return (size_t)(g >> lg) * q4_span_bytes(G) +
	       (size_t)q4_span_count(G, ngroups, g >> lg) * Q4_HEAD_BYTES +
	       (size_t)(g & ((1 << lg) - 1)) * (size_t)(G / 2);
}

/* The same for m's rows: groups in span s, where span s's codes start,
 * where group g's head and codes lie */
static inline int q4_span_groups(const struct q4_matrix *m, int s)
{
	return q4_span_count(m->group, m->ngroups, s);
}

static inline size_t q4_span_codes_at(const struct q4_matrix *m, int s)
{
	return (size_t)s * m->span_bytes +
	       (size_t)q4_span_groups(m, s) * Q4_HEAD_BYTES;
}

static inline size_t q4_head_at(const struct q4_matrix *m, int g)
{
	return q4_head_place(m->group, g);
}

static inline size_t q4_codes_at(const struct q4_matrix *m, int g)
{
	return q4_codes_place(m->group, m->ngroups, g);
}

/* Where chunk c (weights 32c .. 32c+31 of a row) lies in a row */
static inline size_t q4_chunk_at(const struct q4_matrix *m, int c)
{
	return q4_span_codes_at(m, c / 4) + (size_t)(c % 4) * 16;
}

/* Allocates an n x k matrix (n, k >= 1) in groups of g (32, 64 or 128),
 * every code 0 and every scale and bias 0. */
void q4_init(struct q4_matrix *m, int n, int k, int g);
void q4_release(struct q4_matrix *m);

/* Round-to-nearest quantisation of w (n x k, row-major FP32, finite) into
 * m: each group's head by q4_head_of, each weight's code round((w - b) /
 * s) (halves away from zero) in [0, 15], every code 0 where s is 0. */
void q4_quantize(struct q4_matrix *m, const float *w, enum q4_kind kind);
/* The same for group g of row r, its q4_group_len values at x (the codes
 * past them 0) */
void q4_quantize_group(struct q4_matrix *m, int r, int g, const float *x,
		       enum q4_kind kind);

/* Columns of m's group g: its group size, or fewer where k ends in it */
static inline int q4_group_len(const struct q4_matrix *m, int g)
{
	return m->k - g * m->group < m->group ? m->k - g * m->group : m->group;
}

/* The head q4_quantize gives a group of len values at x (q4_head_of of
 * their extremes) */
struct q4_head q4_group_head(const float *x, int len, enum q4_kind kind);

/* A group's head from its least and greatest values and largest |value|
 * (lo, hi, amax), through to16 and to32 (f16_from_f32 and f16_to_f32, or
 * an instruction set's conversions with their bits): the quantisers' one
 * definition. Symmetric: scale amax / 7, bias -8 scale. Asymmetric: scale
 * (hi - lo) / 15, bias lo, where an extreme that is a zero or an FP32
 * subnormal counts as +0: vectors find the least of several zeros in no
 * fixed order, and a thread that flushes denormals (kern_flush_denormals:
 * the pools' workers) reads a subnormal as a zero of its sign, so that
 * otherwise the bias's sign would depend on both. The comparison reads
 * the same either way. */
static inline struct q4_head q4_head_of(float lo, float hi, float amax,
					enum q4_kind kind,
					uint16_t (*to16)(float),
					float (*to32)(uint16_t))
{
	struct q4_head h;

	if (kind == Q4_SYM) {
		h.scale = to16(amax / 7);
		h.bias = to16(-8 * to32(h.scale));
	} else {
		lo = fabsf(lo) < 0x1p-126f ? 0.0f : lo;
		hi = fabsf(hi) < 0x1p-126f ? 0.0f : hi;
		h.scale = to16((hi - lo) / 15);
		h.bias = to16(lo);
	}
	return h;
}
/* The weights m stands for, FP32, n x k. */
void q4_dequantize(const struct q4_matrix *m, float *w);

/* Code, scale and bias of weight (row, col); the format's definition. */
int q4_code(const struct q4_matrix *m, int row, int col);
void q4_set(struct q4_matrix *m, int row, int col, int code);

/* The byte (from the codes' start) and shift of weight j (0 .. G-1) of a
 * group's codes, and its code, the group's codes at q: the layout above,
 * inline for the kernels that look up a few codes */
static inline void q4_where(int j, size_t *byte, int *shift)
{
	int chunk = j / 32, e = j % 32, t = e / 4, l = e % 4;

	*byte = (size_t)chunk * 16 + (size_t)l * 4 + (size_t)t / 2;
	*shift = 4 * (t % 2);
}

static inline int q4_group_code(const uint8_t *q, int j)
{
	size_t byte;
	int shift;

	q4_where(j, &byte, &shift);
	return q[byte] >> shift & 15;
}

/* Reference: y (m x n) = x (m x k, FP16) times W^T, each dot product summed
 * in k order in FP32 from w = s q + b. Rows [r0, r1) only. */
void q4_gemm_ref(const struct q4_matrix *w, const uint16_t *x, int m, float *y,
		 int r0, int r1);

/* roundf(v) (to nearest, halves away from zero), inline: at -O2 without
 * SSE4.1 roundf is a call, and the quantisers take one a weight. Exact:
 * below 2^23 v - trunc(v) is exact; from there v is a whole number (or
 * not finite) already. No branch on which way v rounds: a load's hundred
 * million weights mispredicted half of them. */
static inline float q4_round(float v)
{
	float t, d;

	if (!(fabsf(v) < 0x1p23f))
		return v;
	t = (float)(int32_t)v;
	d = v - t;
	/* v's sign on a zero too, as roundf(-0.3) is -0 */
	return copysignf(t + (float)(d >= 0.5f) - (float)(d <= -0.5f), v);
}

/* the larger of a and |x|, as fmaxf(a, fabsf(x)) for a >= 0 (a NaN x
 * leaves a), inline */
static inline float q4_amax(float a, float x)
{
	return fabsf(x) > a ? fabsf(x) : a;
}

/* The integer paths' activations (kern.h's a8_run kernels), as llama.cpp's
 * Q8_0: a token's k values in blocks of Q4_A8_BLOCK columns, each block as
 * int8 codes a = round(x / u) (halves away from zero) in [-127, 127] with
 * one FP32 unit
 * u = max |x| / 127 (0, and every code 0, for a block of zeros). The codes
 * go to q in column order, zero past k up to a whole block; the units to
 * unit, ceil(k / Q4_A8_BLOCK) of them. (Blocks of a whole group of 128
 * were tried: SmolLM2-135M's perplexity rose 20% over FP16 activations,
 * against 2.6% with blocks of 32 at G = 32.) */
#define Q4_A8_BLOCK 32
void q4_a8_quantize(const uint16_t *x, int k, int8_t *q, float *unit);
/* One block of that: its n <= Q4_A8_BLOCK values x into Q4_A8_BLOCK codes
 * q (zero past n); returns its unit. Every kernel's quantisation of the
 * activations must give these bits. */
float q4_a8_block(const uint16_t *x, int n, int8_t *q);

/* Reference of the W4A8 product the integer kernels compute: per group of
 * weights, s sum_j u_j sum(q a)_j + b sum(x) over its activation blocks j,
 * the code products summed exactly in integers, each block's in FP32 in
 * order, sum(x) exact (then rounded once to FP32); groups summed in order
 * in FP32. Rows [r0, r1) of y (m x n); x is m x k FP16. */
void q4_gemm_a8_ref(const struct q4_matrix *w, const uint16_t *x, int m,
		    float *y, int r0, int r1);

/* W4A4: activations quantised per token to 4 bits (symmetric, scale
 * max|x| / 7), written back as FP16 values, so that any W4A16 kernel then
 * computes the W4A4 product. x is m x k, in place. */
void q4_quantize_activations(uint16_t *x, int m, int k);

#endif
