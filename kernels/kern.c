/* kern.c: activation preparation, the reference kernel, dispatch.
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
 * same bits); one with a digits call also gets dig and unit at batch 1 and
 * G = 128 (its own form of the activations, made from xf; NULL otherwise).
 */
#include "kern.h"

#include "err.h"
#include "mem.h"
#include "f16.h"
#include "pool.h"

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
	kx->unit = NULL;
	kx->tiles = (struct kern_tiles){ 0 };
	if (kn && kn->digits && m == 1 && group == 128 &&
	    interleave == kn->interleave) {
		kx->dig = xcalloc64((size_t)kx->ngroups * KERN_DIGIT_BYTES);
		kx->unit = xcalloc((size_t)kx->ngroups, sizeof(float));
		kn->digits(kx);
	}
}

void kern_x_release(struct kern_x *kx)
{
	free(kx->xf);
	free(kx->sx);
	free(kx->dig);
	free(kx->unit);
	free(kx->tiles.q);
	free(kx->tiles.unit);
	free(kx->tiles.sum);
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
	a->kq = (kx->ngroups * (group / 32) + 3) / 4 * 128;
	a->nblk = a->kq / Q4_A8_BLOCK;
	a->q = xcalloc64((size_t)m * a->kq + 64);
	a->unit = xcalloc64(sizeof(float) * (size_t)m * a->nblk + 64);
	a->sum = xcalloc64(sizeof(float) * (size_t)m * kx->ngroups + 64);
	kpool_run(p, a8_tiles, &j, (m + a->tile - 1) / a->tile, 1);
}

void kern_a8_rows(const struct q4_matrix *w, const struct kern_x *x, float *y,
		  int r0, int r1, int panel, int panels, kern_pack_fn *pack,
		  kern_tile_fn *run)
{
	const struct kern_tiles *a = &x->tiles;
	const int kq = a->kq, tile = a->tile;
	struct kern_panel pn[8];

	HS_ASSERT(panels >= 1 && panels <= 8);
	for (int p = 0; p < panels; p++) {
		/* up to two words a row an octet: codes split in nibbles */
		pn[p].codes = xcalloc64(sizeof(int32_t) * (size_t)kq / 8 * panel * 2);
		pn[p].scale = xcalloc64(sizeof(float) * (size_t)w->ngroups * panel);
		pn[p].bias = xcalloc64(sizeof(float) * (size_t)w->ngroups * panel);
	}
	for (int rb = r0; rb < r1; rb += panels * panel) {
		int np = 0;

		for (; np < panels && rb + np * panel < r1; np++) {
			int r = rb + np * panel;

			pack(w, r, r1 - r < panel ? r1 - r : panel, kq, &pn[np]);
		}
		for (int i0 = 0; i0 < x->m; i0 += tile)
			for (int p = 0; p < np; p++) {
				int r = rb + p * panel;

				run(&pn[p], a->q + (size_t)i0 * kq,
				    a->unit + (size_t)i0 * a->nblk,
				    a->sum + (size_t)i0 * w->ngroups,
				    x->m - i0 < tile ? x->m - i0 : tile, w->ngroups,
				    w->group, y + (size_t)i0 * w->n + r, (size_t)w->n,
				    r1 - r < panel ? r1 - r : panel);
			}
	}
	for (int p = 0; p < panels; p++) {
		free(pn[p].codes);
		free(pn[p].scale);
		free(pn[p].bias);
	}
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

static void ref_q4_a8(const struct q4_matrix *w, const struct kern_x *x,
		      float *y, int r0, int r1)
{
	q4_gemm_a8_ref(w, x->x16, x->m, y, r0, r1);
}

static const struct kern kern_ref = { .name = "ref", .q4 = ref_q4,
				      .q8 = ref_q8, .f16 = ref_f16,
				      .q4_a8 = ref_q4_a8 };

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
	if (k == &kern_avx_vnni)
		return cpu_runs(&kern_avx2) && __builtin_cpu_supports("avxvnni");
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
	if (k == &kern_neon_i8mm)
		return (getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0;
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

struct job {
	const struct kern *kn;
	const void *w;
	int n;
	struct kern_x x;
	float *y;
	int what; /* 4, 8, 16, or 48 (W4A8) */
};

static void run_rows(void *ctx, int r0, int r1)
{
	struct job *j = ctx;

	if (j->what == 4)
		j->kn->q4(j->w, &j->x, j->y, r0, r1);
	else if (j->what == 48)
		j->kn->q4_a8(j->w, &j->x, j->y, r0, r1);
	else if (j->what == 8)
		j->kn->q8(j->w, &j->x, j->y, r0, r1);
	else
		j->kn->f16(j->w, j->n, &j->x, j->y, r0, r1);
}

void kern_q4_gemm(const struct kern *kn, struct kpool *p,
		  const struct q4_matrix *w, const uint16_t *x, int m, float *y)
{
	struct job j = { .kn = kn, .w = w, .n = w->n, .y = y, .what = 4 };

	kern_x_init(&j.x, kn, x, m, w->k, w->group, kn->interleave);
	kpool_run(p, run_rows, &j, w->n, 4);
	kern_x_release(&j.x);
}

void kern_q4_gemm_a8(const struct kern *kn, struct kpool *p,
		     const struct q4_matrix *w, const uint16_t *x, int m,
		     float *y)
{
	struct job j = { .kn = kn, .w = w, .n = w->n, .y = y, .what = 48 };

	HS_ASSERT(kn->q4_a8);
	a8_x_init(&j.x, kn, p, x, m, w->k, w->group);
	kpool_run(p, run_rows, &j, w->n, 16);
	kern_x_release(&j.x);
}

void kern_q8_gemm(const struct kern *kn, struct kpool *p,
		  const struct q8_matrix *w, const uint16_t *x, int m, float *y)
{
	struct job j = { .kn = kn, .w = w, .n = w->n, .y = y, .what = 8 };

	kern_x_init(&j.x, kn, x, m, w->k, 32, 0);
	kpool_run(p, run_rows, &j, w->n, 4);
	kern_x_release(&j.x);
}

void kern_f16_gemm(const struct kern *kn, struct kpool *p, const uint16_t *w,
		   int n, int k, const uint16_t *x, int m, float *y)
{
	struct job j = { .kn = kn, .w = w, .n = n, .y = y, .what = 16 };

	kern_x_init(&j.x, kn, x, m, k, 32, 0);
	kpool_run(p, run_rows, &j, n, 4);
	kern_x_release(&j.x);
}
