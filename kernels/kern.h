/* kern.h: the kernels by instruction set, and the calls that run them on a
 * thread pool.
 *
 * Every kernel computes y (m x n, FP32) = x (m x k, FP16) times W^T for a
 * range of output rows, from activations the caller prepared once for all
 * rows (struct kern_x). "ref" is the specification (q4.h, q8.h); "avx2"
 * (x86-64 with AVX2, FMA and F16C; in integers from the activations'
 * exact digits, a token at a time: at any batch over the integer path's
 * panels, kern_q4_gemm_packed, and on the rows below eight tokens, or at
 * any batch on rows of 2048 weights or more), "avx512" (AVX-512 F, VL
 * and BW: 16 lanes and one-instruction bit selects; lends G = 32 and 64
 * below four tokens to avx2), "avx512-vnni" (the same, below four tokens in
 * AVX512-VNNI integer dot products from the activations' digits, and at
 * any batch over the integer path's panels: kern_q4_gemm_packed), "neon"
 * (aarch64, FP32 arithmetic), "neon-fp16" (aarch64 with FP16 arithmetic:
 * products and sums within a group in FP16, groups summed in FP32),
 * "neon-dot" and "neon-i8mm" (the FP32 kernels, with an integer path for
 * blocks of tokens through sdot or smmla, and digits through sdot below
 * four tokens) must match it within the tolerances of
 * tests/test_kernels.c; the integer paths (a8_run: avx2 through
 * vpmaddubsw, avx-vnni: the AVX2 set with 256-bit VNNI, also for its
 * digits, avx512-vnni, neon-dot, neon-i8mm) must match q4_gemm_a8_ref. */
#ifndef HS_KERN_H
#define HS_KERN_H

#include <stdbool.h>
#include <stdint.h>

#include "pool.h"
#include "q4.h"
#include "q8.h"

/* An integer path's activations (q4_a8_quantize) in tiles of the
 * kernel's a8_tile tokens (the last tile: the rest), for one pointer with
 * fixed offsets to reach a tile's tokens: the tile from token i0 has its
 * codes at q + i0 * kq, for each column quad (4 columns, kq / 4 of them:
 * whole quads of chunks) its tokens' 4 codes one after the other; its
 * units at unit + i0 * nblk, for each activation block its tokens'; its
 * group sums at sum + i0 * ngroups, likewise. All owned, with 64 bytes to
 * spare (a kernel may load a whole vector of a short tile). */
struct kern_tiles {
	int8_t *q;
	float *unit, *sum;
	int kq, nblk, tile;
};

struct kern_x {
	const uint16_t *x16; /* borrowed: the FP16 input, m x k */
	float *xf;           /* owned: m rows of kpad values, in the kernel's
				order, stride floats apart (kern.c) */
	float *sx;           /* owned: m x ngroups, sums of x over each group */
	int8_t *dig;         /* owned, or NULL: for a W4A16 product by a
				kernel with a digits call, at a group size
				it serves and the batches it takes them,
				its own form of the activations */
	float *sxb;          /* owned, or NULL: for a W4A16 product without
				dig by a set with sx_blocks, sx 16 tokens
				at a time: tokens [16 b, 16 b + 16)'s sums
				of group g at 16 (b ngroups + g), token
				16 b + i in lane i, zero past m */
	struct kern_tiles tiles; /* for an integer (a8_run) call, else all
				    NULL */
	bool dig_planes;     /* dig's digits as planes, for a dig_run call:
				three of kpad bytes (d0, d1, d2), each value's
				in its column's place; else the set's row
				order */
	int m, k, kpad, stride, group, ngroups;
};

/* A panel of an integer path: `rows` rows' codes packed by the kernel
 * (kq / 8 octets of `rows` 32-bit words, 64-byte aligned: a row's eight
 * codes of an octet in one word, as nibbles), their scales and biases
 * (FP16 bits as the heads hold them, ngroups x rows: group g's from g x
 * rows on, the first 64-byte aligned). Owned. */
struct kern_panel {
	int32_t *codes;
	uint16_t *scale, *bias;
};

/* The rows of half h of a panel's first `rows` rows, laid in halves of
 * `half` rows: 0 .. half */
static inline int kern_half_rows(int rows, int half, int h)
{
	int n = rows - half * h;

	return n < 0 ? 0 : n > half ? half : n;
}

/* An integer path's two parts: pack the codes of rows [r, r + rows) of w
 * into pn (rows at most the panel's; the rest zero; kern.c fills the
 * scales and biases), and run a packed panel against a tile of T tokens
 * (its codes aq, units au and sums as, kern_tiles), writing y[t * ystride
 * + j] for its rows j < rows. */
typedef void kern_pack_fn(const struct q4_matrix *w, int r, int rows, int kq,
			  struct kern_panel *pn);
typedef void kern_tile_fn(const struct kern_panel *pn, const int8_t *aq,
			  const float *au, const float *as, int T, int ngroups,
			  int group, float *y, size_t ystride, int rows);

struct kern_dig_tok;
/* The first `rows` rows of panel pn (at most the panel's) of w's rows
 * packed, against the T tokens of t (T < KERN_DIG_TOKENS, their digits as
 * planes): y[j ystride + i] for the panel's row i and token j,
 * kern_q4_gemm's product from the same digits, the groups' extras
 * included (from the panel's codes and scales; w for its shape only) */
typedef void kern_dig_run_fn(const struct kern_panel *pn,
			     const struct q4_matrix *w, int rows,
			     const struct kern_dig_tok *t, int T, float *y,
			     size_t ystride);

/* nq heads of one query that share a KV head (grouped-query attention),
 * q and out nq x hs, a head after another: out_j = the softmax over
 * positions 0 .. n-1 of scale q_j . k_p, weighting v_p, with k_p at kc + p
 * stride and v_p at vc + p stride; att (nq x n floats) is scratch. Each
 * head's output is, bit for bit, what it gets alone (nq 1): the heads
 * share only the reads of the cache. 1 <= nq <= KERN_ATTEND_QMAX, hs <=
 * KERN_HEAD_MAX, and a multiple of 8 for a kernel set's own (kern_attend). */
typedef void kern_attend_fn(const float *q, int nq, const float *kc,
			    const float *vc, int n, int hs, size_t stride,
			    float scale, float *att, float *out);
#define KERN_HEAD_MAX 512
#define KERN_ATTEND_QMAX 16
/* rows [r0, r1) of y (m x n) = x (m x k) W^T, FP32 weights and activations */
typedef void kern_f32_fn(const float *w, int n, int k, const float *x, int m,
			 float *y, int r0, int r1);

struct kern {
	const char *name;
	int interleave; /* chunks of codes read at once (kern.c's order) */
	void (*q4)(const struct q4_matrix *w, const struct kern_x *x, float *y,
		   int r0, int r1);
	void (*q8)(const struct q8_matrix *w, const struct kern_x *x, float *y,
		   int r0, int r1);
	void (*f16)(const uint16_t *w, int n, const struct kern_x *x, float *y,
		    int r0, int r1);
	/* NULL, or rows [r0, r1) of y (m x n) = x (m x k) W^T in FP32, every
	 * output kern_dot_f32 of its row and token bit for bit */
	kern_f32_fn *f32;
	/* NULL, or the integer path: y = x W^T from x->tiles (activations
	 * quantised to int8 in blocks, q4.h's q4_gemm_a8_ref) by kern.c's
	 * driver, which packs rows into panels of a8_panel rows (a multiple
	 * of 8; their codes by a8_pack, their heads itself), a8_panels of
	 * them at a time, and runs each panel against each tile
	 * of a8_tile tokens in turn (a8_run; the tiles then stream from far
	 * once a block of rows) */
	kern_pack_fn *a8_pack;
	kern_tile_fn *a8_run;
	int a8_panel, a8_panels, a8_tile;
	/* NULL, or (for the group sizes in digit_groups: 32, 64 and 128
	 * OR-ed) allocates and fills x->dig from x->xf at the batches it
	 * takes them (x->m; else leaves it NULL), and at any batch as
	 * planes (x->dig_planes, for dig_run) */
	void (*digits)(struct kern_x *x);
	int digit_groups;
	/* NULL, or exact products from the digits over the integer path's
	 * packed panels, up to KERN_DIG_TOKENS - 1 tokens a call
	 * (kern_q4_gemm_packed; the digits then as planes, for every token,
	 * kern_x.dig_planes) */
	kern_dig_run_fn *dig_run;
	/* NULL, or the set that runs this one's W4A16 products of fewer
	 * than KERN_DIG_TOKENS tokens at the group sizes in lend_groups
	 * (32, 64 and 128 OR-ed), where this set has no batch-1 path of its
	 * own */
	const struct kern *lend;
	int lend_groups;
	/* its W4A16 products without digits sum 16 tokens' bias terms in
	 * one vector, from kern_x.sxb (made once a call by kern.c) */
	int sx_blocks;
	/* NULL, or one token's k activations into xf (zeroed, kpad values) in
	 * the order of kern_x_place for that interleave, and each group's sum
	 * into sx: bit for bit what kern.c's portable code writes */
	void (*load)(const uint16_t *x, int k, int group, int interleave,
		     float *xf, float *sx);
	/* NULL, or an integer path's load: kern_a8_load's bits, faster */
	void (*a8_load)(const uint16_t *x, int k, int group, int T, int8_t *q,
			float *unit, float *sum);
	/* NULL (the portable code), or kern_attend's attention with vectors */
	kern_attend_fn *attend;
	/* NULL, or kern_to_f16's conversion: f16_from_f32's bits, faster */
	void (*to_f16)(const float *x, size_t n, uint16_t *h);
	/* NULL, or a whole group's G values at x into its head at h and its
	 * codes at q: q4_quantize's bytes, faster (kern_q4_quantize) */
	void (*quantize)(const float *x, int G, enum q4_kind kind, uint8_t *h,
			 uint8_t *q);
};

/* One token's k activations (FP16) into its place in a tile of T tokens
 * (kern_tiles): the codes of column quad h at q + 4 T h, block j's unit at
 * unit[T j] (q4_a8_block's), group g's sum at sum[T g] (exact, then rounded
 * once to FP32); past k nothing is written. The portable integer-path load
 * that every kern.a8_load must match bit for bit. */
void kern_a8_load(const uint16_t *x, int k, int group, int T, int8_t *q,
		  float *unit, float *sum);

/* Where column c (a multiple of 4) of a token's activations goes in xf for
 * a kernel reading that many chunks at once (kern.c): columns c .. c+3 go
 * to the 4 floats from there. */
static inline int kern_x_place(int c, int interleave)
{
	int e;

	if (interleave < 2)
		return c;
	e = c & (32 * interleave - 1);
	return c - e + ((e & 31) >> 2) * 4 * interleave + (e >> 5) * 4;
}

/* Prepares x (m x k, FP16, borrowed by kx until kern_x_release) for kn's
 * kernels reading interleave chunks at once (0: columns in order), with
 * groups of group columns (32, 64 or 128); kn NULL: the portable code. */
void kern_x_init(struct kern_x *kx, const struct kern *kn, const uint16_t *x,
		 int m, int k, int group, int interleave);
void kern_x_release(struct kern_x *kx);

/* ---- a digits call's form of the activations (kern_avx2.c,
 * kern_avx512.c, kern_neon.c)
 * Each group's values as integers v = x / u (u a power of two, |v| <
 * 2^22, so every value within 2^11 of the group's largest is exact) in
 * three signed byte digits, in the kernel's own order. Token i's part of
 * kern_x.dig, a fixed size apart: the digits (3 bytes a value, values
 * rounded up to 128), [u, sum x] a group (groups rounded up to four), the
 * count of the groups that need more than their digits, and for each its
 * struct kern_dig_extra. */
#define KERN_DIG_FIXES 3
/* Below this many tokens every digits call gives each token its own
 * digits (avx2's and avx-vnni's at more too: kern_avx2.c's dig_takes),
 * and a kernel runs each token by its digits in turn, a row at a time
 * (the row's weights read from memory once, then from cache) */
#define KERN_DIG_TOKENS 4

/* A group that needs more than its digits: the float method (u 0), or up
 * to KERN_DIG_FIXES residuals x - u v (exact in FP32) of the values with
 * bits below u, each with its column in the group */
struct kern_dig_extra {
	int32_t g, n;                  /* the group; residuals, 0 .. FIXES */
	int32_t head, codes;           /* where its head and codes lie in a row */
	int32_t col[KERN_DIG_FIXES];   /* the value's column in the group
					  (its code: q4_group_code) */
	float r[KERN_DIG_FIXES];
};

/* What a kernel reads of one token: its digits, [u, sum x] a group, its
 * extras, and its activations and group sums (for the float method) */
struct kern_dig_tok {
	const int8_t *d;
	const float *us;
	const struct kern_dig_extra *ex;
	int nx;
	const float *xf, *sx;
	int kpad; /* x->kpad: digit k of column j at d + k kpad + j, as planes */
};

/* The unit u = 2^(e - 22) of a group whose largest magnitude is top, e
 * the smallest with top < 2^e (2^-22 for a group of zeros; top an FP16
 * value as FP32, or not finite). */
float kern_dig_unit(float top);
/* Allocates x->dig for x->m tokens, zeroed. */
void kern_dig_alloc(struct kern_x *x);
/* Token i's digits, [u, sum x] pairs, count of extras and extras. */
int8_t *kern_dig_at(const struct kern_x *x, int i);
float *kern_dig_us(const struct kern_x *x, int i);
int32_t *kern_dig_count(const struct kern_x *x, int i);
struct kern_dig_extra *kern_dig_extras(const struct kern_x *x, int i);
struct kern_dig_tok kern_dig_tok(const struct kern_x *x, int i);
/* A new extra of token i for its group g, counted into *nx (zero
 * residuals: the float method until kern_dig_fix adds one) */
struct kern_dig_extra *kern_dig_extra_new(const struct kern_x *x, int i,
					  int *nx, int g);
/* Adds to e the residual r of the value at place `at` of group e->g. */
void kern_dig_fix(struct kern_dig_extra *e, int at, float r);
/* sum q x over group g of a row (its codes at q) by a kernel's float
 * method, token t's activations */
typedef float kern_dig_qx_fn(const struct q4_matrix *w,
			     const struct kern_dig_tok *t, const uint8_t *q,
			     int g);
/* Row r's part that token t's digits do not give: s q.x by qx for a group
 * of u 0, s q.r over the residuals of the others. */
float kern_dig_rest(const struct q4_matrix *w, const struct kern_dig_tok *t,
		    int r, kern_dig_qx_fn *qx);

/* The body of an integer path's kern_tile_fn: its micro-kernel, called
 * as micro(pn, aq, au, as, ngroups, group, n, y, ystride, rows) with n = T
 * a constant 1 .. max (the path's a8_tile, at most 8), so that the
 * micro-kernel's loops over tokens unroll */
#define KERN_TILE_CASE(micro, n, max)                                          \
	case n:                                                                \
		if (n <= (max))                                                \
			micro(pn, aq, au, as, ngroups, group, n, y, ystride,   \
			      rows);                                           \
		break
#define KERN_TILE_DISPATCH(micro, max)                                         \
	do {                                                                   \
		_Static_assert((max) >= 1 && (max) <= 8,                       \
			       "a tile of 1 to 8 tokens");                     \
		switch (T) {                                                   \
			KERN_TILE_CASE(micro, 1, max);                         \
			KERN_TILE_CASE(micro, 2, max);                         \
			KERN_TILE_CASE(micro, 3, max);                         \
			KERN_TILE_CASE(micro, 4, max);                         \
			KERN_TILE_CASE(micro, 5, max);                         \
			KERN_TILE_CASE(micro, 6, max);                         \
			KERN_TILE_CASE(micro, 7, max);                         \
			KERN_TILE_CASE(micro, 8, max);                         \
		}                                                              \
	} while (0)

/* The kernel of that name if this build has it and this CPU runs it, else
 * NULL. Borrowed from a static table. */
const struct kern *kern_find(const char *name);
/* The fastest kernel this CPU runs. */
const struct kern *kern_best(void);
/* Every kernel this build and CPU run, NULL-terminated. */
const char *const *kern_available(void);

/* y = x W^T on p's threads (p NULL: the calling thread only). */
void kern_q4_gemm(const struct kern *kn, struct kpool *p,
		  const struct q4_matrix *w, const uint16_t *x, int m, float *y);
void kern_q8_gemm(const struct kern *kn, struct kpool *p,
		  const struct q8_matrix *w, const uint16_t *x, int m, float *y);
void kern_f16_gemm(const struct kern *kn, struct kpool *p, const uint16_t *w,
		   int n, int k, const uint16_t *x, int m, float *y);
/* y = x W^T with FP32 weights and activations, every output bit for bit
 * kern_dot_f32 of its row and token (so a token's result never depends on
 * the batch), by kn's f32 call (kn NULL or without one: the portable
 * loop) on p's threads */
void kern_f32_gemm(const struct kern *kn, struct kpool *p, const float *w,
		   int n, int k, const float *x, int m, float *y);
/* From this many tokens the models take an integer path (linear.c) */
#define KERN_A8_MIN_BATCH 4

/* w's rows packed once for kn's integer path (kn->a8_run set): the
 * panels each call would otherwise pack again (llama.cpp likewise repacks
 * its Q4_0 weights at load): half a byte a weight and 4 bytes a group,
 * as w's own (the rows padded to whole panels, the columns to whole
 * spans), besides them.
 * Borrows kn; w may be released first. Caller frees with kern_a8w_free. */
struct kern_a8w {
	const struct kern *kn;
	int n, k, group, panels; /* w's shape; ceil(n / kn->a8_panel) */
	struct kern_panel *pn;   /* owned: panels of them, pointing into */
	int32_t *codes;          /* owned: every panel's codes, then */
	uint16_t *scale, *bias;  /* owned: their scales and biases */
	size_t bytes;            /* of codes, scale and bias together */
};
struct kern_a8w *kern_a8w_new(const struct kern *kn, struct kpool *p,
			      const struct q4_matrix *w);
void kern_a8w_free(struct kern_a8w *a);

/* y = x W^T with the activations quantised to int8 a group, by kn's
 * integer path (kn->a8_run must be set): q4_gemm_a8_ref's product. pw:
 * NULL (the rows packed as the call goes), or w packed by kern_a8w_new for
 * kn. */
void kern_q4_gemm_a8(const struct kern *kn, struct kpool *p,
		     const struct q4_matrix *w, const struct kern_a8w *pw,
		     const uint16_t *x, int m, float *y);

/* y = x W^T with exact FP16 activations, from w packed by kern_a8w_new
 * for kn (pw, borrowed): by kn's dig_run where kn has one for w's group
 * size, every token from its own digits (kern_q4_gemm's product below
 * KERN_DIG_TOKENS tokens, the sums in another order: within FP32 rounding
 * of it, and each token's result whatever the batch); else, or pw NULL or
 * another set's, kern_q4_gemm. */
void kern_q4_gemm_packed(const struct kern *kn, struct kpool *p,
			 const struct q4_matrix *w, const struct kern_a8w *pw,
			 const uint16_t *x, int m, float *y);

/* q4_quantize(m, w, kind) bit for bit, by kn's own quantiser where it has
 * one (kn NULL: the portable code; a group that k cuts short always), on
 * p's threads (NULL: one) */
void kern_q4_quantize(const struct kern *kn, struct kpool *p,
		      struct q4_matrix *m, const float *w, enum q4_kind kind);

/* kn's attention (kern_attend_fn; kn NULL or without one: the portable
 * code, the scores by kern_dot_f32, exp from libm) */
void kern_attend(const struct kern *kn, const float *q, int nq,
		 const float *kc, const float *vc, int n, int hs, size_t stride,
		 float scale, float *att, float *out);

/* h[i] = f16_from_f32(x[i]), i < n, bit for bit, by kn's own conversion
 * where it has one (kn NULL: the portable code) */
void kern_to_f16(const struct kern *kn, const float *x, size_t n, uint16_t *h);

/* sum a[i] b[i], i < n, in a fixed order: eight running sums over i mod 8
 * (one vector register), then the tail, then the eight in turn. The FP32
 * product and the portable attention's scores both use it, so a result
 * never depends on its neighbours or the blocking. */
float kern_dot_f32(const float *a, const float *b, int n);

/* Flushes denormal floats to zero on the calling thread (x86: FTZ and DAZ
 * in MXCSR; aarch64: FZ in FPCR), as inference engines do: real attention
 * underflows to denormals, whose arithmetic is up to 100x slower on x86,
 * so without this a step's time would depend on the text (measured: real
 * generation 7-15% slower than random-cache timing of the same steps). */
void kern_flush_denormals(void);

/* A pool of threads (pool.h) for the kernels: each worker flushes denormals
 * first, as the thread that runs the forward pass does. */
struct kpool *kern_pool_new(int threads);

/* The instruction-set kernels, defined where their ISA is compiled. */
extern const struct kern kern_avx2, kern_avx_vnni, kern_avx512,
	kern_avx512_vnni, kern_neon, kern_neon_fp16, kern_neon_dot,
	kern_neon_i8mm;

/* Software prefetch of the weights KERN_PREFETCH_BYTES ahead of p, n bytes
 * (rounded up to lines), into L2 (prefetcht1), not L1: a row's loads
 * depend on long chains of arithmetic, and the out-of-order window alone
 * keeps too few bytes in flight to keep memory busy (measured: from 4.5
 * to 7.3 GB/s on one core with 1536 bytes; 4096 then took batch-1 W4A16
 * from 60-75% to 61-84% of the paired triad on 2 threads and FP16 from
 * 84-99% to 92-105%, two A/B rounds, Xeon 2 vCPUs, 2026-11-30; 8192 was
 * no better). Into L1, four streams' 16 KB ahead and a token's digits
 * (12 KB at 4096 columns) overfill a 32 KB L1 (Zen 4's; the Xeon's is 48
 * KB). Into L2 on the EPYC (Zen 4), 2026-12-06, batch 1 on 2 threads,
 * two rounds alternating: avx512-vnni G = 128 76-90% of the paired triad
 * to 86-92% over the four shapes (4096x4096 0.30-0.34 ms to 0.27-0.28,
 * 32000x4096 2.07-2.18 to 1.94-2.00, the others unchanged); FP16 63-87%
 * to 90-95%. */
#define KERN_PREFETCH_BYTES 4096
#define PREFETCH(p, n) PREFETCH_AHEAD(p, n, KERN_PREFETCH_BYTES)

/* The integer path's panels (W4A8, and the digits on them) ask further
 * ahead: an octet of a panel takes few cycles, and 4 KB is then less time
 * ahead than memory takes. 11008x4096 from memory, G = 128, a token, three
 * rounds alternating (EPYC Zen 4, 2026-12-06): avx512-vnni's exact
 * product 1.05-1.14 ms to 0.79-0.92 on one thread, 0.70-0.75 to 0.72-0.78
 * on two (within the rounds' spread), its W4A8 0.46-0.83 to 0.40-0.43 on
 * one; avx2's exact 1.23-1.26 to 1.16-1.18 on one, 0.69-0.76 to 0.60-0.63
 * on two; 8 KB between the two. */
#define KERN_PANEL_PREFETCH_BYTES 16384
#define PREFETCH_AHEAD(p, n, ahead)                                            \
	do {                                                                   \
		for (int pf_ = 0; pf_ < (n); pf_ += 64)                        \
			__builtin_prefetch((const char *)(p) + (ahead) + pf_,  \
					   0, 2);                              \
	} while (0)

/* The avx-vnni set's vpdpbusd on 256 bits: AVX-VNNI's VEX form; or, in a
 * build with KERN_VNNI_EVEX, AVX-512 VNNI's EVEX form, the same operation
 * on the same registers, so that the set runs where AVX-512 VNNI is and
 * AVX-VNNI is not (Zen 4): the Makefile's EVEX_TEST, or a whole binary to
 * time it (`CFLAGS=-DKERN_VNNI_EVEX make BUILD=build/evex`); kern.c asks
 * the CPU for the form built. KERN_VNNI_FORM prefixes the instruction in
 * inline assembly (the set's kernels); KERN_VNNI_TARGET and
 * KERN_VNNI_DPBUSD are GCC's target and intrinsic (kbench's peak). */
#ifdef KERN_VNNI_EVEX
#define KERN_VNNI_FORM "%{evex%} "
#define KERN_VNNI_TARGET "avx512vnni,avx512vl"
#define KERN_VNNI_DPBUSD _mm256_dpbusd_epi32
#else
#define KERN_VNNI_FORM "%{vex%} "
#define KERN_VNNI_TARGET "avxvnni"
#define KERN_VNNI_DPBUSD _mm256_dpbusd_avx_epi32
#endif

/* The AVX2 W8A16 and FP16 kernels and activation load, which the AVX-512
 * sets share (bound by memory, not arithmetic). */
void kern_avx2_q8(const struct q8_matrix *w, const struct kern_x *x, float *y,
		  int r0, int r1);
void kern_avx2_f16(const uint16_t *w, int n, const struct kern_x *x, float *y,
		   int r0, int r1);
void kern_avx2_load(const uint16_t *x, int k, int group, int interleave,
		    float *xf, float *sx);
void kern_avx2_a8_load(const uint16_t *x, int k, int group, int T, int8_t *q,
		       float *unit, float *sum);
kern_attend_fn kern_avx2_attend;
void kern_avx2_to_f16(const float *x, size_t n, uint16_t *h);
void kern_avx2_quantize(const float *x, int G, enum q4_kind kind, uint8_t *h,
			uint8_t *q);

#endif
