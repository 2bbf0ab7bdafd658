/* kern.c: activation preparation, the reference kernel, dispatch, and the
 * portable forms of the calls a set may bring its own of (the FP16
 * conversion, attention, the FP32 dot product they share with models/).
 *
 * Prepared activations: xf holds each token's k values as FP32, zero-padded
 * to kpad (whole groups, a multiple of 128), tokens `stride` = kpad + 16
 * floats apart: at a stride of a multiple of 4 KB (kpad 4096) the tokens'
 * values at one column fall in one L1 set, and 16 tokens thrash its ways
 * (measured: batch-16 W4A16 GEMM 6x slower per token than batch 1). A
 * kernel that reads c chunks of codes at a time (c = kern.interleave: 2 for
 * AVX2, 4 for AVX-512; 0 or 1: columns in order) wants each span of 32c
 * columns stored as 8 rows of 4c: chunk 0 [4t..4t+3], chunk 1 [4t..4t+3],
 * ... for t = 0 .. 7, matching the code layout of q4.h read 4c lanes at a
 * time (kern_x_place). sx holds each group's sum, exact before its one
 * rounding to FP32. A kernel with a load call fills both its own way (the
 * same bits). For a W4A16 product, a set with a digits call may also make
 * dig for a group size it serves, at the batches it takes them (its own
 * form of the activations, made from xf; NULL otherwise).
 *
 * An integer path reads its weights as panels of the kernel's own layout
 * (kern.a8_pack): packed at each call a block of panels at a time, or once
 * for all calls (struct kern_a8w), the panels then end to end, panel i
 * holding rows [i P, i P + P) for the kernel's P = a8_panel, so that a
 * thread's rows (a multiple of a8_panels panels from the pool) start on a
 * panel. Packing at each call took two thirds of the time at 4 tokens.
 * A set with digits on panels (kern.dig_run) runs the exact W4A16
 * products on the same packed panels (kern_q4_gemm_packed), its digits
 * made as planes, each panel meeting every tile of up to three tokens in
 * turn.
 */
#include "kern.h"

#include "err.h"
#include "mem.h"
#include "f16.h"
#include "pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <xmmintrin.h>
#endif
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

/* The portable load (kern.load): each group's sum in double, which holds
 * it exactly in any order (FP16 values are multiples of 2^-24 under 2^16,
 * at most 128 of them: under 2^47 units of 2^-24, and a double has 53
 * bits), so a vector load summing in another order gives the same float */
static void load(const uint16_t *x, int k, int group, int interleave,
		 float *xf, float *sx)
{
	for (int g = 0; g * group < k; g++) {
		int c1 = (g + 1) * group < k ? (g + 1) * group : k;
		double sum = 0;

		for (int c = g * group; c < c1; c++) {
			float v = f16_to_f32(x[c]);

			xf[kern_x_place(c & ~3, interleave) + (c & 3)] = v;
			sum += v;
		}
		sx[g] = (float)sum;
	}
}

void kern_x_init(struct kern_x *kx, const struct kern *kn, const uint16_t *x,
		 int m, int k, int group, int interleave)
{
	void (*fill)(const uint16_t *, int, int, int, float *, float *) =
		kn && kn->load ? kn->load : load;

	kx->x16 = x;
	kx->m = m;
	kx->k = k;
	kx->group = group;
	kx->ngroups = (k + group - 1) / group;
	kx->kpad = (kx->ngroups * group + 127) / 128 * 128; /* whole groups */
	kx->stride = kx->kpad + 16;
	/* 64-byte aligned: a vector load of the activations then never
	 * straddles two cache lines (at k = 11008 they come from L2) */
	kx->xf = xcalloc64((size_t)m * kx->stride * sizeof(float));
	kx->sx = xcalloc((size_t)m * kx->ngroups, sizeof(float));
	for (int i = 0; i < m; i++)
		fill(x + (size_t)i * k, k, group, interleave,
		     kx->xf + (size_t)i * kx->stride,
		     kx->sx + (size_t)i * kx->ngroups);
	kx->dig = NULL;
	kx->dig_planes = false;
	kx->sxb = NULL;
	kx->tiles = (struct kern_tiles){ 0 };
}

/* kern_x.sxb from x->sx (kern.h) */
static float *sx_in_blocks(const struct kern_x *x)
{
	const int blocks = (x->m + 15) / 16;
	float *b = xcalloc64(sizeof(float) * 16 * (size_t)blocks * x->ngroups);

	for (int i = 0; i < x->m; i++)
		for (int g = 0; g < x->ngroups; g++)
			b[16 * ((size_t)(i / 16) * x->ngroups + g) + i % 16] =
				x->sx[(size_t)i * x->ngroups + g];
	return b;
}

void kern_x_release(struct kern_x *kx)
{
	free(kx->xf);
	free(kx->sx);
	free(kx->dig);
	free(kx->sxb);
	free(kx->tiles.q);
	free(kx->tiles.unit);
	free(kx->tiles.sum);
}

/* The parts of one token's share of x->dig (kern.h): the digits' bytes
 * (3 a value, values rounded up to 128), the groups of [u, sum x] (rounded
 * up to four), and the whole, a multiple of 64 bytes */
static size_t dig_digit_bytes(const struct kern_x *x)
{
	return 3 * (((size_t)x->ngroups * x->group + 127) / 128 * 128);
}

static size_t dig_us_groups(const struct kern_x *x)
{
	return ((size_t)x->ngroups + 3) / 4 * 4;
}

static size_t dig_bytes(const struct kern_x *x)
{
	return (dig_digit_bytes(x) + sizeof(float) * 2 * dig_us_groups(x) +
		sizeof(int32_t) +
		sizeof(struct kern_dig_extra) * (size_t)x->ngroups + 63) / 64 * 64;
}

float kern_dig_unit(float top)
{
	uint32_t bits;
	int e = 0;
	float u;

	memcpy(&bits, &top, sizeof(bits));
	if (top > 0) /* FP32 normal: FP16's smallest is 2^-24 */
		e = (int)(bits >> 23) - 126;
	bits = (uint32_t)(e - 22 + 127) << 23;
	memcpy(&u, &bits, sizeof(u));
	return u;
}

void kern_dig_alloc(struct kern_x *x)
{
	x->dig = xcalloc64(dig_bytes(x) * (size_t)x->m);
}

int8_t *kern_dig_at(const struct kern_x *x, int i)
{
	return x->dig + dig_bytes(x) * (size_t)i;
}

float *kern_dig_us(const struct kern_x *x, int i)
{
	return (float *)(kern_dig_at(x, i) + dig_digit_bytes(x));
}

int32_t *kern_dig_count(const struct kern_x *x, int i)
{
	return (int32_t *)(kern_dig_us(x, i) + 2 * dig_us_groups(x));
}

struct kern_dig_extra *kern_dig_extras(const struct kern_x *x, int i)
{
	return (struct kern_dig_extra *)(kern_dig_count(x, i) + 1);
}

struct kern_dig_tok kern_dig_tok(const struct kern_x *x, int i)
{
	return (struct kern_dig_tok){
		.d = kern_dig_at(x, i),
		.us = kern_dig_us(x, i), .ex = kern_dig_extras(x, i),
		.nx = *kern_dig_count(x, i),
		.xf = x->xf + (size_t)i * x->stride,
		.sx = x->sx + (size_t)i * x->ngroups, .kpad = x->kpad };
}

struct kern_dig_extra *kern_dig_extra_new(const struct kern_x *x, int i,
					  int *nx, int g)
{
	struct kern_dig_extra *e = kern_dig_extras(x, i) + (*nx)++;

	*e = (struct kern_dig_extra){
		.g = g, .head = (int32_t)q4_head_place(x->group, g),
		.codes = (int32_t)q4_codes_place(x->group, x->ngroups, g) };
	return e;
}

void kern_dig_fix(struct kern_dig_extra *e, int at, float r)
{
	HS_ASSERT(e->n < KERN_DIG_FIXES);
	e->col[e->n] = at;
	e->r[e->n++] = r;
}

float kern_dig_rest(const struct q4_matrix *w, const struct kern_dig_tok *t,
		    int r, kern_dig_qx_fn *qx)
{
	const struct kern_dig_extra *ex = t->ex;
	const uint8_t *row = w->data + (size_t)r * w->row_bytes;
	float sum = 0;

	for (int i = 0; i < t->nx; i++) {
		const uint8_t *q = row + ex[i].codes;
		uint16_t s;
		float qr = 0;

		if (t->us[2 * ex[i].g] == 0)
			qr = qx(w, t, q, ex[i].g);
		for (int f = 0; f < ex[i].n; f++)
			qr += (float)q4_group_code(q, ex[i].col[f]) * ex[i].r[f];
		memcpy(&s, row + ex[i].head, sizeof(s));
		sum += f16_to_f32(s) * qr;
	}
	return sum;
}

void kern_a8_load(const uint16_t *x, int k, int group, int T, int8_t *q,
		  float *unit, float *sum)
{
	const int B = Q4_A8_BLOCK;

	for (int j = 0; j * B < k; j++) {
		int8_t b[Q4_A8_BLOCK];

		unit[(size_t)j * T] = q4_a8_block(x + j * B, k - j * B < B ?
						  k - j * B : B, b);
		for (int h = 0; h < B / 4; h++)
			memcpy(q + ((size_t)j * B / 4 + h) * 4 * T, b + 4 * h, 4);
	}
	for (int g = 0; g * group < k; g++) {
		int c1 = (g + 1) * group < k ? (g + 1) * group : k;
		double s = 0;

		for (int c = g * group; c < c1; c++)
			s += f16_to_f32(x[c]);
		sum[(size_t)g * T] = (float)s;
	}
}

/* kq of kern_tiles for a matrix of k columns in groups of `group` */
static int a8_kq(int k, int group)
{
	return ((k + group - 1) / group * (group / 32) + 3) / 4 * 128;
}

struct a8_job {
	struct kern_x *kx;
	void (*fill)(const uint16_t *, int, int, int, int8_t *, float *,
		     float *);
};

/* Tiles [t0, t1) (of x->tiles.tile tokens) of an integer path's
 * activations, a token at a time into the tile layout (zero from the
 * allocation past k) */
static void a8_tiles(void *ctx, int t0, int t1)
{
	const struct a8_job *j = ctx;
	const struct kern_x *kx = j->kx;
	const struct kern_tiles *a = &kx->tiles;

	for (int ti = t0; ti < t1; ti++) {
		int i0 = ti * a->tile;
		int T = kx->m - i0 < a->tile ? kx->m - i0 : a->tile;

		for (int t = 0; t < T; t++)
			j->fill(kx->x16 + (size_t)(i0 + t) * kx->k, kx->k,
				kx->group, T, a->q + (size_t)i0 * a->kq + 4 * t,
				a->unit + (size_t)i0 * a->nblk + t,
				a->sum + (size_t)i0 * kx->ngroups + t);
	}
}

/* kx for kn's integer path, on p's threads: the tiles only (no xf) */
static void a8_x_init(struct kern_x *kx, const struct kern *kn,
		      struct kpool *p, const uint16_t *x, int m, int k, int group)
{
	struct kern_tiles *a = &kx->tiles;
	struct a8_job j = { kx, kn->a8_load ? kn->a8_load : kern_a8_load };

	*kx = (struct kern_x){ .x16 = x, .m = m, .k = k, .group = group };
	kx->ngroups = (k + group - 1) / group;
	a->tile = kn->a8_tile > 0 ? kn->a8_tile : 1;
	a->kq = a8_kq(k, group);
	a->nblk = a->kq / Q4_A8_BLOCK;
	a->q = xcalloc64((size_t)m * a->kq + 64);
	a->unit = xcalloc64(sizeof(float) * (size_t)m * a->nblk + 64);
	a->sum = xcalloc64(sizeof(float) * (size_t)m * kx->ngroups + 64);
	kpool_run(p, a8_tiles, &j, (m + a->tile - 1) / a->tile, 1);
}

/* kn's integer path's packed panels: `count` of them, each of kq / 8
 * octets of a word a row and ngroups FP16 scales and biases a row, laid
 * end to end in three allocations of *bytes in all (bytes may be NULL). A
 * group's scales start 2 x a8_panel bytes after the last's, from a
 * 64-byte aligned start: 16-byte aligned at 8 rows a panel, 64 at 32. */
static struct kern_panel *panels_new(const struct kern *kn, int count, int kq,
				     int ngroups, int32_t **codes,
				     uint16_t **scale, uint16_t **bias,
				     size_t *bytes)
{
	struct kern_panel *pn;
	const int panel = kn->a8_panel;
	const size_t nc = (size_t)kq / 8 * panel, ns = (size_t)ngroups * panel;

	HS_ASSERT(panel % 8 == 0);
	pn = xcalloc((size_t)count, sizeof(*pn));
	*codes = xcalloc64(sizeof(int32_t) * nc * count);
	*scale = xcalloc64(sizeof(uint16_t) * ns * count);
	*bias = xcalloc64(sizeof(uint16_t) * ns * count);
	for (int i = 0; i < count; i++)
		pn[i] = (struct kern_panel){ *codes + nc * i, *scale + ns * i,
					     *bias + ns * i };
	if (bytes)
		*bytes = (sizeof(int32_t) * nc + 2 * sizeof(uint16_t) * ns) *
			 (size_t)count;
	return pn;
}

struct pack_job {
	const struct kern *kn;
	const struct q4_matrix *w;
	struct kern_a8w *a;
};

/* Rows [r, r + rows) of w into pn by kn (rows at most its panel's): the
 * codes by kn's a8_pack, each group's head as FP16 bits here (the rest
 * zero) */
static void panel_pack(const struct kern *kn, const struct q4_matrix *w,
		       int r, int rows, int kq, struct kern_panel *pn)
{
	const int P = kn->a8_panel;

	memset(pn->scale, 0, sizeof(uint16_t) * (size_t)w->ngroups * P);
	memset(pn->bias, 0, sizeof(uint16_t) * (size_t)w->ngroups * P);
	for (int j = 0; j < rows; j++)
		for (int g = 0; g < w->ngroups; g++) {
			struct q4_head h;

			memcpy(&h, w->data + (size_t)(r + j) * w->row_bytes +
			       q4_head_at(w, g), sizeof(h));
			pn->scale[g * P + j] = h.scale;
			pn->bias[g * P + j] = h.bias;
		}
	kn->a8_pack(w, r, rows, kq, pn);
}

static void pack_panels(void *ctx, int p0, int p1)
{
	const struct pack_job *j = ctx;
	const int P = j->kn->a8_panel, kq = a8_kq(j->w->k, j->w->group);

	for (int i = p0; i < p1; i++)
		panel_pack(j->kn, j->w, i * P, j->w->n - i * P < P ?
			   j->w->n - i * P : P, kq, &j->a->pn[i]);
}

struct kern_a8w *kern_a8w_new(const struct kern *kn, struct kpool *p,
			      const struct q4_matrix *w)
{
	struct kern_a8w *a = xmalloc(sizeof(*a));
	struct pack_job j = { kn, w, a };

	HS_ASSERT(kn->a8_run);
	*a = (struct kern_a8w){ .kn = kn, .n = w->n, .k = w->k,
				.group = w->group,
				.panels = (w->n + kn->a8_panel - 1) / kn->a8_panel };
	a->pn = panels_new(kn, a->panels, a8_kq(w->k, w->group), w->ngroups,
			   &a->codes, &a->scale, &a->bias, &a->bytes);
	kpool_run(p, pack_panels, &j, a->panels, 1);
	return a;
}

void kern_a8w_free(struct kern_a8w *a)
{
	if (!a)
		return;
	free(a->pn);
	free(a->codes);
	free(a->scale);
	free(a->bias);
	free(a);
}

/* Rows [r0, r1) (r0 a multiple of the panel) of y = x W^T by kn's integer
 * path: kn->a8_panels panels at a time, each meeting each of x's tiles in
 * turn; packed as it goes (pw NULL) or taken from pw */
static void a8_rows(const struct kern *kn, const struct q4_matrix *w,
		    const struct kern_a8w *pw, const struct kern_x *x, float *y,
		    int r0, int r1)
{
	const struct kern_tiles *a = &x->tiles;
	const int kq = a->kq, tile = a->tile, panel = kn->a8_panel;
	const int panels = kn->a8_panels;
	struct kern_panel *own = NULL;
	int32_t *codes = NULL;
	uint16_t *scale = NULL, *bias = NULL;

	HS_ASSERT(r0 % panel == 0);
	if (!pw)
		own = panels_new(kn, panels, kq, w->ngroups, &codes, &scale,
				 &bias, NULL);
	for (int rb = r0; rb < r1; rb += panels * panel) {
		const struct kern_panel *pn = pw ? pw->pn + rb / panel : own;
		int np = 0;

		for (; np < panels && rb + np * panel < r1; np++) {
			int r = rb + np * panel;

			if (!pw)
				panel_pack(kn, w, r, r1 - r < panel ? r1 - r : panel,
					    kq, &own[np]);
		}
		for (int i0 = 0; i0 < x->m; i0 += tile)
			for (int p = 0; p < np; p++) {
				int r = rb + p * panel;

				kn->a8_run(&pn[p], a->q + (size_t)i0 * kq,
					   a->unit + (size_t)i0 * a->nblk,
					   a->sum + (size_t)i0 * w->ngroups,
					   x->m - i0 < tile ? x->m - i0 : tile,
					   w->ngroups, w->group,
					   y + (size_t)i0 * w->n + r, (size_t)w->n,
					   r1 - r < panel ? r1 - r : panel);
			}
	}
	free(own);
	free(codes);
	free(scale);
	free(bias);
}

/* Rows [r0, r1) (r0 a multiple of the panel) of y = x W^T from x's digits
 * (as planes) over pw's panels, by kn's dig_run: each panel against every
 * tile of up to KERN_DIG_TOKENS - 1 tokens in turn (the panel's codes from
 * memory once, then from cache) */
static void dig_rows(const struct kern *kn, const struct q4_matrix *w,
		     const struct kern_a8w *pw, const struct kern_x *x, float *y,
		     int r0, int r1)
{
	enum { TILE = KERN_DIG_TOKENS - 1 };
	const int P = kn->a8_panel;

	HS_ASSERT(r0 % P == 0);
	for (int r = r0; r < r1; r += P)
		for (int i0 = 0; i0 < x->m; i0 += TILE) {
			struct kern_dig_tok t[TILE];
			const int T = x->m - i0 < TILE ? x->m - i0 : TILE;

			for (int i = 0; i < T; i++)
				t[i] = kern_dig_tok(x, i0 + i);
			kn->dig_run(&pw->pn[r / P], w, r1 - r < P ? r1 - r : P, t,
				    T, y + (size_t)i0 * w->n + r, (size_t)w->n);
		}
}

float kern_dot_f32(const float *a, const float *b, int n)
{
	float acc[8] = { 0 }, sum = 0;
	int i = 0;

	for (; i + 8 <= n; i += 8)
		for (int j = 0; j < 8; j++)
			acc[j] += a[i + j] * b[i + j];
	for (; i < n; i++)
		sum += a[i] * b[i];
	for (int j = 0; j < 8; j++)
		sum += acc[j];
	return sum;
}

static void attend1(const float *q, const float *kc, const float *vc, int n,
		    int hs, size_t stride, float scale, float *att, float *out)
{
	float mx = -INFINITY, sum = 0;
	/* a local sum that no store can alias */
	float acc[KERN_HEAD_MAX];

	for (int p = 0; p < n; p++) {
		att[p] = kern_dot_f32(q, kc + (size_t)p * stride, hs) * scale;
		mx = fmaxf(mx, att[p]);
	}
	for (int p = 0; p < n; p++) {
		att[p] = expf(att[p] - mx);
		sum += att[p];
	}
	memset(acc, 0, sizeof(float) * hs);
	for (int p = 0; p < n; p++) {
		const float *v = vc + (size_t)p * stride;
		float a = att[p] / sum;
		int i = 0;

		/* blocks of 8: a fixed shape the compiler turns into vector
		 * operations */
		for (; i + 8 <= hs; i += 8)
			for (int l = 0; l < 8; l++)
				acc[i + l] += a * v[i + l];
		for (; i < hs; i++)
			acc[i] += a * v[i];
	}
	memcpy(out, acc, sizeof(float) * hs);
}

/* the portable attention: a head at a time */
static void attend_ref(const float *q, int nq, const float *kc,
		       const float *vc, int n, int hs, size_t stride,
		       float scale, float *att, float *out)
{
	for (int j = 0; j < nq; j++)
		attend1(q + (size_t)j * hs, kc, vc, n, hs, stride, scale,
			att + (size_t)j * n, out + (size_t)j * hs);
}

void kern_to_f16(const struct kern *kn, const float *x, size_t n, uint16_t *h)
{
	if (kn && kn->to_f16) {
		kn->to_f16(x, n, h);
		return;
	}
	for (size_t i = 0; i < n; i++)
		h[i] = f16_from_f32(x[i]);
}

struct quantize_job {
	const struct kern *kn;
	struct q4_matrix *m;
	const float *w;
	enum q4_kind kind;
};

static void quantize_rows(void *ctx, int r0, int r1)
{
	const struct quantize_job *j = ctx;
	struct q4_matrix *m = j->m;
	const int G = m->group;
	const int whole = j->kn && j->kn->quantize ? m->k / G : 0;

	for (int r = r0; r < r1; r++) {
		const float *w = j->w + (size_t)r * m->k;
		uint8_t *row = m->data + (size_t)r * m->row_bytes;

		for (int g = 0; g < whole; g++)
			j->kn->quantize(w + (size_t)g * G, G, j->kind,
					row + q4_head_at(m, g),
					row + q4_codes_at(m, g));
		for (int g = whole; g < m->ngroups; g++)
			q4_quantize_group(m, r, g, w + (size_t)g * G, j->kind);
	}
}

void kern_q4_quantize(const struct kern *kn, struct kpool *p,
		      struct q4_matrix *m, const float *w, enum q4_kind kind)
{
	struct quantize_job j = { kn, m, w, kind };

	kpool_run(p, quantize_rows, &j, m->n, 1);
}

void kern_attend(const struct kern *kn, const float *q, int nq,
		 const float *kc, const float *vc, int n, int hs, size_t stride,
		 float scale, float *att, float *out)
{
	HS_ASSERT(n >= 1 && hs >= 1 && hs <= KERN_HEAD_MAX && nq >= 1 &&
		  nq <= KERN_ATTEND_QMAX);
	(kn && kn->attend && hs % 8 == 0 ? kn->attend : attend_ref)(
		q, nq, kc, vc, n, hs, stride, scale, att, out);
}

static void ref_q4(const struct q4_matrix *w, const struct kern_x *x, float *y,
		   int r0, int r1)
{
	q4_gemm_ref(w, x->x16, x->m, y, r0, r1);
}

static void ref_q8(const struct q8_matrix *w, const struct kern_x *x, float *y,
		   int r0, int r1)
{
	q8_gemm_ref(w, x->x16, x->m, y, r0, r1);
}

static void ref_f16(const uint16_t *w, int n, const struct kern_x *x, float *y,
		    int r0, int r1)
{
	f16_gemm_ref(w, n, x->k, x->x16, x->m, y, r0, r1);
}

static const struct kern kern_ref = { .name = "ref", .q4 = ref_q4,
				      .q8 = ref_q8, .f16 = ref_f16 };

#if defined(__x86_64__)
/* F16C from CPUID leaf 1: clang before 16 has no
 * __builtin_cpu_supports("f16c") */
static int has_f16c(void)
{
	unsigned a, b, c, d;

	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#endif

static int cpu_runs(const struct kern *k)
{
#if defined(__x86_64__)
	if (k == &kern_avx512_vnni)
		return cpu_runs(&kern_avx512) &&
		       __builtin_cpu_supports("avx512vnni");
	if (k == &kern_avx512)
		return __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512vl") &&
		       __builtin_cpu_supports("avx512bw");
	if (k == &kern_avx_vnni) /* the form kern.h's KERN_VNNI_FORM gives */
		return cpu_runs(&kern_avx2) &&
#ifdef KERN_VNNI_EVEX
		       __builtin_cpu_supports("avx512vnni") &&
		       __builtin_cpu_supports("avx512vl");
#else
		       __builtin_cpu_supports("avxvnni");
#endif
	if (k == &kern_avx2)
		return __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("fma") &&
		       has_f16c();
#endif
#if defined(__aarch64__)
	if (k == &kern_neon_fp16)
		return (getauxval(AT_HWCAP) & HWCAP_ASIMDHP) != 0;
	if (k == &kern_neon_dot)
		return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
	if (k == &kern_neon_i8mm) /* and sdot, for its batch 1 (every
				      i8mm core has it: ARMv8.4-A on) */
		return (getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0 &&
		       (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
	if (k == &kern_neon)
		return 1;
#endif
	return k == &kern_ref;
}

static const struct kern *const all[] = {
#if defined(__x86_64__)
	&kern_avx512_vnni, &kern_avx512, &kern_avx_vnni, &kern_avx2,
#endif
#if defined(__aarch64__)
	&kern_neon_i8mm, &kern_neon_dot, &kern_neon_fp16, &kern_neon,
#endif
	&kern_ref,
};

const struct kern *kern_find(const char *name)
{
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(all[i]->name, name) && cpu_runs(all[i]))
			return all[i];
	return NULL;
}

void kern_flush_denormals(void)
{
#if defined(__x86_64__)
	_mm_setcsr(_mm_getcsr() | 0x8040); /* FTZ (bit 15) | DAZ (bit 6) */
#elif defined(__aarch64__)
	uint64_t fpcr;

	__asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
	__asm__ volatile("msr fpcr, %0" : : "r"(fpcr | (1u << 24)));
#endif
}

struct kpool *kern_pool_new(int threads)
{
	return kpool_new(threads, kern_flush_denormals);
}

const struct kern *kern_best(void)
{
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (cpu_runs(all[i]) && strcmp(all[i]->name, "neon-fp16"))
			return all[i];
	return &kern_ref;
}

const char *const *kern_available(void)
{
	static const char *names[8];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (cpu_runs(all[i]))
			names[n++] = all[i]->name;
	names[n] = NULL;
	return names;
}

/* A product on the pool: rows(j, r0, r1) computes rows [r0, r1) of y */
struct job {
	const struct kern *kn;
	const void *w;
	const struct kern_a8w *pw; /* W4A8 and digits over panels: NULL, or
				      w packed */
	int n;
	struct kern_x x;
	float *y;
	void (*rows)(const struct job *j, int r0, int r1);
};

static void q4_job(const struct job *j, int r0, int r1)
{
	j->kn->q4(j->w, &j->x, j->y, r0, r1);
}

static void a8_job(const struct job *j, int r0, int r1)
{
	a8_rows(j->kn, j->w, j->pw, &j->x, j->y, r0, r1);
}

static void dig_job(const struct job *j, int r0, int r1)
{
	dig_rows(j->kn, j->w, j->pw, &j->x, j->y, r0, r1);
}

static void q8_job(const struct job *j, int r0, int r1)
{
	j->kn->q8(j->w, &j->x, j->y, r0, r1);
}

static void f16_job(const struct job *j, int r0, int r1)
{
	j->kn->f16(j->w, j->n, &j->x, j->y, r0, r1);
}

static void run_rows(void *ctx, int r0, int r1)
{
	const struct job *j = ctx;

	j->rows(j, r0, r1);
}

void kern_q4_gemm(const struct kern *kn, struct kpool *p,
		  const struct q4_matrix *w, const uint16_t *x, int m, float *y)
{
	struct job j = { .w = w, .n = w->n, .y = y, .rows = q4_job };

	if (kn->lend && m < KERN_DIG_TOKENS && (kn->lend_groups & w->group))
		kn = kn->lend;
	j.kn = kn;
	kern_x_init(&j.x, kn, x, m, w->k, w->group, kn->interleave);
	if (kn->digits && (kn->digit_groups & w->group))
		kn->digits(&j.x);
	if (!j.x.dig && kn->sx_blocks)
		j.x.sxb = sx_in_blocks(&j.x);
	kpool_run(p, run_rows, &j, w->n, 4);
	kern_x_release(&j.x);
}

void kern_q4_gemm_packed(const struct kern *kn, struct kpool *p,
			 const struct q4_matrix *w, const struct kern_a8w *pw,
			 const uint16_t *x, int m, float *y)
{
	struct job j = { .kn = kn, .w = w, .pw = pw, .n = w->n, .y = y,
			 .rows = dig_job };

	if (!kn->dig_run || !pw || pw->kn != kn ||
	    !(kn->digit_groups & w->group)) {
		kern_q4_gemm(kn, p, w, x, m, y);
		return;
	}
	HS_ASSERT(pw->n == w->n && pw->k == w->k && pw->group == w->group);
	kern_x_init(&j.x, kn, x, m, w->k, w->group, kn->interleave);
	j.x.dig_planes = true;
	kn->digits(&j.x);
	HS_ASSERT(j.x.dig);
	kpool_run(p, run_rows, &j, w->n, kn->a8_panel);
	kern_x_release(&j.x);
}

void kern_q4_gemm_a8(const struct kern *kn, struct kpool *p,
		     const struct q4_matrix *w, const struct kern_a8w *pw,
		     const uint16_t *x, int m, float *y)
{
	struct job j = { .kn = kn, .w = w, .pw = pw, .n = w->n, .y = y,
			 .rows = a8_job };

	HS_ASSERT(kn->a8_run);
	HS_ASSERT(!pw || (pw->kn == kn && pw->n == w->n && pw->k == w->k &&
			  pw->group == w->group));
	a8_x_init(&j.x, kn, p, x, m, w->k, w->group);
	kpool_run(p, run_rows, &j, w->n, kn->a8_panel * kn->a8_panels);
	kern_x_release(&j.x);
}

void kern_q8_gemm(const struct kern *kn, struct kpool *p,
		  const struct q8_matrix *w, const uint16_t *x, int m, float *y)
{
	struct job j = { .kn = kn, .w = w, .n = w->n, .y = y, .rows = q8_job };

	kern_x_init(&j.x, kn, x, m, w->k, 32, 0);
	kpool_run(p, run_rows, &j, w->n, 4);
	kern_x_release(&j.x);
}

struct f32_job {
	kern_f32_fn *f32;
	const float *w, *x;
	int n, k, m;
	float *y;
};

/* The portable kern.f32: the tokens in fours, so that each weight row is
 * read once for four of them, each of the four summed in kern_dot_f32's
 * order; the rest by kern_dot_f32. */
static void f32_ref(const float *w, int n, int k, const float *x, int m,
		    float *y, int r0, int r1)
{
	int i = 0;

	for (; i + 4 <= m; i += 4) {
		const float *x0 = x + (size_t)i * k, *x1 = x0 + k, *x2 = x1 + k,
			    *x3 = x2 + k;

		for (int r = r0; r < r1; r++) {
			const float *wr = w + (size_t)r * k;
			float a0[8] = { 0 }, a1[8] = { 0 }, a2[8] = { 0 },
			      a3[8] = { 0 }, s[4] = { 0 };
			int c = 0;

			for (; c + 8 <= k; c += 8)
				for (int q = 0; q < 8; q++) {
					a0[q] += wr[c + q] * x0[c + q];
					a1[q] += wr[c + q] * x1[c + q];
					a2[q] += wr[c + q] * x2[c + q];
					a3[q] += wr[c + q] * x3[c + q];
				}
			for (; c < k; c++) {
				s[0] += wr[c] * x0[c];
				s[1] += wr[c] * x1[c];
				s[2] += wr[c] * x2[c];
				s[3] += wr[c] * x3[c];
			}
			for (int q = 0; q < 8; q++) {
				s[0] += a0[q];
				s[1] += a1[q];
				s[2] += a2[q];
				s[3] += a3[q];
			}
			for (int b = 0; b < 4; b++)
				y[(size_t)(i + b) * n + r] = s[b];
		}
	}
	for (; i < m; i++)
		for (int r = r0; r < r1; r++)
			y[(size_t)i * n + r] = kern_dot_f32(w + (size_t)r * k,
							    x + (size_t)i * k, k);
}

static void f32_rows(void *ctx, int r0, int r1)
{
	const struct f32_job *j = ctx;

	j->f32(j->w, j->n, j->k, j->x, j->m, j->y, r0, r1);
}

void kern_f32_gemm(const struct kern *kn, struct kpool *p, const float *w,
		   int n, int k, const float *x, int m, float *y)
{
	struct f32_job j = { kn && kn->f32 ? kn->f32 : f32_ref, w, x, n, k, m,
			     y };

	kpool_run(p, f32_rows, &j, n, 4);
}

void kern_f16_gemm(const struct kern *kn, struct kpool *p, const uint16_t *w,
		   int n, int k, const uint16_t *x, int m, float *y)
{
	struct job j = { .kn = kn, .w = w, .n = n, .y = y, .rows = f16_job };

	kern_x_init(&j.x, kn, x, m, k, 32, 0);
	kpool_run(p, run_rows, &j, n, 4);
	kern_x_release(&j.x);
}
