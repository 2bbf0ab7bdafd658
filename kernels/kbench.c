/* kbench.c: "hybridspec bench kernels": W4A16 against FP16 and W8A16 (and
 * W4A8 where the set has an integer path) at the LLaMA-2-7B layer shapes,
 * beside the memory bandwidth measured in the same run (STREAM copy and
 * triad) and the compute peaks: FMA chains in the CPU's widest vectors,
 * and chains of the instruction the set's integer path multiplies with
 * (int8_chains, a row a set).
 *
 * Weights are synthetic (random codes, scales and values: a kernel's time
 * does not depend on them, and they are never zero). Each measurement cycles
 * through enough copies of the matrix that the working set is at least twice
 * the last-level cache, so every call streams its weights from memory (at
 * most COPIES_MAX copies: a shape too small for that is refused, or timed
 * hot in the cache, one copy, where asked). */
#define _DEFAULT_SOURCE /* sysconf cache sizes */
#include "kbench.h"

#include "err.h"
#include "mem.h"
#include "f16.h"
#include "kern.h"
#include "rng.h"
#include "rt.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the synthetic weights' and activations' sequence (rng_splitmix64) */
static uint64_t fill_state = 0x243f6a8885a308d3u;

static uint64_t next(void)
{
	return rng_splitmix64(&fill_state);
}

/* The last-level cache that CPU 0 shares, as Linux reports it, else as
 * the C library does: on an EPYC VM (2026-12-06) glibc's figure was the
 * whole package's L3 (320 MB), Linux's the 32 MB the VM's cores share */
static size_t llc_bytes(void)
{
	long v = -1;
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");

	if (f) {
		if (fscanf(f, "%ldK", &v) != 1)
			v = -1;
		fclose(f);
		if (v > 0)
			return (size_t)v * 1024;
	}
#ifdef _SC_LEVEL3_CACHE_SIZE
	v = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
	if (v > 0)
		return (size_t)v;
	return 64u << 20; /* unknown: assume a large one */
}

/* ---- STREAM ---- */

enum { COPY = KSTREAM_COPY, TRIAD = KSTREAM_TRIAD, READ = KSTREAM_READ };

struct stream_arg {
	double *a, *b, *c;
	size_t lo, hi;
	int op;
	double sum;
};

static void *stream_part(void *p)
{
	struct stream_arg *s = p;
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0;

	switch (s->op) {
	case TRIAD:
		for (size_t i = s->lo; i < s->hi; i++)
			s->a[i] = s->b[i] + 3.0 * s->c[i];
		break;
	case COPY:
		for (size_t i = s->lo; i < s->hi; i++)
			s->c[i] = s->a[i];
		break;
	case READ: /* four sums: the adds' latency must not be the limit */
		for (size_t i = s->lo; i + 4 <= s->hi; i += 4) {
			s0 += s->b[i];
			s1 += s->b[i + 1];
			s2 += s->b[i + 2];
			s3 += s->b[i + 3];
		}
		s->sum = s0 + s1 + s2 + s3;
		break;
	}
	return NULL;
}

/* STREAM's arrays, kept for the passes paired with kernel timings */
struct kstream {
	double *a, *b, *c;
	size_t n;
};

static void kstream_init(struct kstream *s, size_t bytes)
{
	s->n = (bytes ? bytes : 4 * llc_bytes()) / sizeof(double);
	/* the weights' allocator (huge pages, err.h): the kernels and STREAM
	 * meet the same TLB */
	s->a = xcalloc64(s->n * sizeof(double));
	s->b = xcalloc64(s->n * sizeof(double));
	s->c = xcalloc64(s->n * sizeof(double));
	for (size_t i = 0; i < s->n; i++) {
		s->a[i] = 1.0;
		s->b[i] = 2.0;
		s->c[i] = 0.5;
	}
}

static void kstream_release(struct kstream *s)
{
	free(s->a);
	free(s->b);
	free(s->c);
}

/* One pass, GB/s with STREAM's byte counts (copy 16, triad 24 B an
 * element) and 8 B an element for a read-only pass (what a GEMV does). */
static double stream_pass(const struct kstream *s, int threads, int op)
{
	const double bytes = op == TRIAD ? 24.0 : op == COPY ? 16.0 : 8.0;
	pthread_t th[64];
	struct stream_arg args[64];
	double t = rt_now_s();

	for (int i = 0; i < threads; i++) {
		args[i] = (struct stream_arg){ s->a, s->b, s->c,
			s->n * i / threads, s->n * (i + 1) / threads, op, 0 };
		if (i)
			pthread_create(&th[i], NULL, stream_part, &args[i]);
	}
	stream_part(&args[0]);
	for (int i = 1; i < threads; i++)
		pthread_join(th[i], NULL);
	t = rt_now_s() - t;
	return bytes * (double)s->n / t / 1e9;
}

/* best of 5 passes of each */
static void stream_best(const struct kstream *s, int threads, double gbs[3])
{
	for (int op = COPY; op <= READ; op++) {
		gbs[op] = 0;
		for (int rep = 0; rep < 5; rep++) {
			double g = stream_pass(s, threads, op);

			gbs[op] = g > gbs[op] ? g : gbs[op];
		}
	}
}

void kbench_stream(int threads, size_t bytes, double gbs[3])
{
	struct kstream s;

	kstream_init(&s, bytes);
	stream_best(&s, threads, gbs);
	kstream_release(&s);
}

/* ---- peak FMA rate ---- */

#define FMA_CHAINS 12 /* more than latency x throughput: the units stay busy */
#define FMA_ITERS 10000000L

#define FMA_LOOP(v)                                                            \
	do {                                                                   \
		v acc[FMA_CHAINS], mul, add;                                   \
		for (int i_ = 0; i_ < FMA_CHAINS; i_++)                        \
			for (size_t l_ = 0; l_ < sizeof(v) / 4; l_++)          \
				acc[i_][l_] = 1.0f + 0.001f * i_;              \
		for (size_t l_ = 0; l_ < sizeof(v) / 4; l_++) {                \
			mul[l_] = 0.999999f;                                   \
			add[l_] = 1e-7f;                                       \
		}                                                              \
		for (long it_ = 0; it_ < FMA_ITERS; it_++) {                   \
			_Pragma("GCC unroll 16")                               \
			for (int i_ = 0; i_ < FMA_CHAINS; i_++)                \
				acc[i_] = acc[i_] * mul + add;                 \
		}                                                              \
		for (int i_ = 1; i_ < FMA_CHAINS; i_++)                        \
			acc[0] += acc[i_];                                     \
		return acc[0][0] * 0 + 2.0 * FMA_CHAINS * FMA_ITERS *          \
		       (sizeof(v) / 4);                                        \
	} while (0)

typedef float v4f __attribute__((vector_size(16)));
static double fma_v4(void)
{
	FMA_LOOP(v4f);
}

#if defined(__x86_64__)
/* GCC does not fuse a * b + c under -std=c11: the intrinsics do */
#define FMA_X86(vt, set1, fmadd, add)                                          \
	do {                                                                   \
		vt acc[FMA_CHAINS], mul = set1(0.999999f), c = set1(1e-7f);    \
		float out[sizeof(vt) / 4];                                     \
		for (int i_ = 0; i_ < FMA_CHAINS; i_++)                        \
			acc[i_] = set1(1.0f + 0.001f * i_);                    \
		for (long it_ = 0; it_ < FMA_ITERS; it_++) {                   \
			_Pragma("GCC unroll 16")                               \
			for (int i_ = 0; i_ < FMA_CHAINS; i_++)                \
				acc[i_] = fmadd(acc[i_], mul, c);              \
		}                                                              \
		for (int i_ = 1; i_ < FMA_CHAINS; i_++)                        \
			acc[0] = add(acc[0], acc[i_]);                         \
		memcpy(out, &acc[0], sizeof(out));                             \
		return out[0] * 0 + 2.0 * FMA_CHAINS * FMA_ITERS *             \
		       (sizeof(vt) / 4);                                       \
	} while (0)

__attribute__((target("avx2,fma"))) static double fma_v8(void)
{
	FMA_X86(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps);
}
__attribute__((target("avx512f"))) static double fma_v16(void)
{
	FMA_X86(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps);
}
#endif

/* the widest FMA chains this CPU runs */
static double (*fma_fn(void))(void)
{
#if defined(__x86_64__)
	if (__builtin_cpu_supports("avx512f"))
		return fma_v16;
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return fma_v8;
#endif
	return fma_v4;
}

/* A thread of best_rate: runs chain, which returns its operation count */
struct rate_arg {
	double (*chain)(void);
	double ops;
};

static void *rate_thread(void *arg)
{
	struct rate_arg *r = arg;

	r->ops = r->chain();
	return NULL;
}

/* best of 5 runs of chain on `threads` threads at once: operations a
 * second, in billions */
static double best_rate(int threads, double (*chain)(void))
{
	double best = 0;

	HS_ASSERT(threads >= 1 && threads <= 64);
	for (int rep = 0; rep < 5; rep++) {
		pthread_t th[64];
		struct rate_arg r[64];
		double t = rt_now_s(), sum = 0;

		for (int i = 0; i < threads; i++)
			r[i] = (struct rate_arg){ chain, 0 };
		for (int i = 1; i < threads; i++)
			pthread_create(&th[i], NULL, rate_thread, &r[i]);
		rate_thread(&r[0]);
		for (int i = 1; i < threads; i++)
			pthread_join(th[i], NULL);
		t = rt_now_s() - t;
		for (int i = 0; i < threads; i++)
			sum += r[i].ops;
		if (sum / t / 1e9 > best)
			best = sum / t / 1e9;
	}
	return best;
}

double kbench_flops(int threads)
{
	return best_rate(threads, fma_fn());
}

/* ---- peak int8 dot-product rate ---- */

#if defined(__x86_64__)
/* DOT_CHAINS chains of vpdpbusd (64 byte products a vector), of its
 * 256-bit AVX-VNNI form (32), or of vpmaddubsw and a 16-bit add (32: what
 * the avx2 set's integer path does a half-octet), in named registers: GCC keeps
 * an array of vectors in memory across the opaque statement that stops it
 * from summing a chain in one step (it knows the instruction) */
#define DOT_CHAINS 12
#define DOT_X86(vt, set1, dot, lanes)                                          \
	do {                                                                   \
		vt a = set1(0x01020304), b = set1(0x05060708);                 \
		vt c0 = set1(0), c1 = set1(1), c2 = set1(2), c3 = set1(3);     \
		vt c4 = set1(4), c5 = set1(5), c6 = set1(6), c7 = set1(7);     \
		vt c8 = set1(8), c9 = set1(9), c10 = set1(10), c11 = set1(11); \
		int32_t out[lanes];                                            \
		for (long it_ = 0; it_ < FMA_ITERS; it_++) {                   \
			c0 = dot(c0, a, b);                                    \
			c1 = dot(c1, a, b);                                    \
			c2 = dot(c2, a, b);                                    \
			c3 = dot(c3, a, b);                                    \
			c4 = dot(c4, a, b);                                    \
			c5 = dot(c5, a, b);                                    \
			c6 = dot(c6, a, b);                                    \
			c7 = dot(c7, a, b);                                    \
			c8 = dot(c8, a, b);                                    \
			c9 = dot(c9, a, b);                                    \
			c10 = dot(c10, a, b);                                  \
			c11 = dot(c11, a, b);                                  \
			__asm__ volatile("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3),   \
				"+v"(c4), "+v"(c5), "+v"(c6), "+v"(c7),        \
				"+v"(c8), "+v"(c9), "+v"(c10), "+v"(c11));     \
		}                                                              \
		c0 = dot(dot(dot(c0, c1, b), dot(c2, c3, b), b),               \
			 dot(dot(c4, c5, b), dot(c6, c7, b), b), b);           \
		c0 = dot(c0, dot(dot(c8, c9, b), dot(c10, c11, b), b), b);     \
		memcpy(out, &c0, sizeof(out));                                 \
		return out[0] * 0 + 2.0 * 4 * (lanes) * DOT_CHAINS * FMA_ITERS; \
	} while (0)

__attribute__((target("avx512f,avx512vnni"))) static double dot_v64(void)
{
	DOT_X86(__m512i, _mm512_set1_epi32, _mm512_dpbusd_epi32, 16);
}
__attribute__((target("avx2," KERN_VNNI_TARGET))) static double dot_v32(void)
{
	DOT_X86(__m256i, _mm256_set1_epi32, KERN_VNNI_DPBUSD, 8);
}
/* c + c b (c's bytes unsigned): the chain's own value in the product, so
 * that the product of the constants is not taken out of the loop */
__attribute__((target("avx2"))) static inline __m256i
maddubs_add(__m256i c, __m256i a, __m256i b)
{
	(void)a;
	return _mm256_add_epi16(c, _mm256_maddubs_epi16(c, b));
}
__attribute__((target("avx2"))) static double dot_madd(void)
{
	DOT_X86(__m256i, _mm256_set1_epi32, maddubs_add, 8);
}
#endif

/* Each x86 set with an integer path and the chain of the instruction its
 * inner loop multiplies with (kern_avx2.c, kern_avx512.c): a set's own
 * peak, not the CPU's widest (EPYC Zen 4, 2026-12-06: vpmaddubsw's chains
 * 334-372 GOP/s on one thread, vpdpbusd's in 512 bits 469-470) */
static const struct {
	const struct kern *set;
	const char *op;
	double (*chain)(void);
} int8_chains[] = {
#if defined(__x86_64__)
	{ &kern_avx512_vnni, "vpdpbusd (512 bits)", dot_v64 },
	{ &kern_avx_vnni, "vpdpbusd (256 bits)", dot_v32 },
	{ &kern_avx2, "vpmaddubsw", dot_madd },
#endif
	{ NULL, NULL, NULL },
};

/* kn's row of int8_chains: its index, or that of the closing NULL row */
static int int8_row(const struct kern *kn)
{
	int i = 0;

	while (int8_chains[i].set && int8_chains[i].set != kn)
		i++;
	return i;
}

const char *kbench_int8_op(const struct kern *kn)
{
	return int8_chains[int8_row(kn)].op;
}

double kbench_int8(const struct kern *kn, int threads)
{
	const int i = int8_row(kn);

	return int8_chains[i].set ? best_rate(threads, int8_chains[i].chain) : 0;
}

/* ---- the kernels ---- */

/* W4A8: the W4A16 matrices through the integer path; W4A16_ROWS: the
 * same on the row kernels, unpacked (kbench_opts.row_kernels) */
enum what { W4A16, W8A16, FP16, W4A8, W4A16_ROWS, NWHAT };
static const char *const what_names[NWHAT] = { "w4a16", "w8a16", "fp16",
					       "w4a8", "w4a16-rows" };

struct mats {
	enum what what;
	int n, k, copies;
	struct q4_matrix *q4;
	struct q8_matrix *q8;
	uint16_t **f16;
	struct kern_a8w **a8; /* W4A8, and W4A16 where the set has digits
				 over panels: q4's copies packed for the
				 kernel (W4A8's, shared) */
	size_t bytes; /* of one copy, as the kernel reads it */
};

/* The most copies of one matrix a set holds: a tiny shape's set of
 * millions would cost more in allocations than in weights */
#define COPIES_MAX 65536

/* The bytes of one n x k matrix of what, as the kernel reads it */
static size_t mat_bytes(enum what what, int n, int k, int group)
{
	struct q4_matrix one;
	size_t bytes;

	if (what == W8A16)
		return (size_t)n * ((k + 31) / 32) * sizeof(struct q8_block);
	if (what != W4A16)
		return (size_t)n * k * 2;
	q4_init(&one, n, k, group);
	bytes = one.row_bytes * (size_t)n;
	q4_release(&one);
	return bytes;
}

/* The copies that fill min_set bytes (0: one, hot in the cache; else at
 * least two) */
static size_t copies_of(size_t bytes, size_t min_set)
{
	size_t copies = (min_set + bytes - 1) / bytes, least = min_set ? 2 : 1;

	return copies < least ? least : copies;
}

/* The working set of each measurement: twice the last-level cache (0:
 * one copy, hot) */
static size_t set_bytes(const struct kbench_opts *o)
{
	return o->quick ? 64u << 20 : o->hot ? 0 : 2 * llc_bytes();
}

int kbench_check(const struct kbench_opts *o, struct err *e)
{
	size_t set = set_bytes(o);

	if (o->row_kernels && !(o->kern->dig_run && o->kern->a8_run))
		return err_set(e, "--row-kernels: kernel set %s has no panels "
			       "for its W4A16: it runs on the row kernels "
			       "already (avx512-vnni, avx-vnni and avx2 have "
			       "panels: --kernel avx2 on any AVX2 CPU)",
			       o->kern->name);

	for (int w = 0; o->rows && w < 3; w++) {
		size_t bytes = mat_bytes((enum what)w, o->rows, o->cols, o->group);

		if (copies_of(bytes, set) > COPIES_MAX)
			return err_set(e, "--shape %dx%d: a %s matrix of %zu bytes "
				       "would take %zu copies to fill %zu MiB "
				       "(twice the last-level cache), more than "
				       "the %d kept: name a larger shape, or "
				       "add --hot to time one copy in the "
				       "cache", o->rows, o->cols, what_names[w],
				       bytes, copies_of(bytes, set),
				       set >> 20, COPIES_MAX);
	}
	return 0;
}

static void mats_init(struct mats *m, enum what what, int n, int k, int group,
		      size_t min_set)
{
	m->what = what;
	m->n = n;
	m->k = k;
	m->bytes = mat_bytes(what, n, k, group);
	HS_ASSERT(copies_of(m->bytes, min_set) <= COPIES_MAX);
	m->copies = (int)copies_of(m->bytes, min_set);
	m->q4 = what == W4A16 ? xcalloc((size_t)m->copies, sizeof(*m->q4)) : NULL;
	m->q8 = what == W8A16 ? xcalloc((size_t)m->copies, sizeof(*m->q8)) : NULL;
	m->f16 = what == FP16 ? xcalloc((size_t)m->copies, sizeof(*m->f16)) : NULL;
	m->a8 = NULL;
	for (int c = 0; c < m->copies; c++) {
		uint8_t *data;
		size_t words;

		if (what == W4A16) {
			q4_init(&m->q4[c], n, k, group);
			data = m->q4[c].data;
		} else if (what == W8A16) {
			q8_init(&m->q8[c], n, k);
			data = m->q8[c].data;
		} else {
			data = (uint8_t *)(m->f16[c] = xcalloc64(m->bytes));
		}
		words = m->bytes / 8;
		for (size_t i = 0; i < words; i++) {
			uint64_t v = next();

			memcpy(data + 8 * i, &v, 8);
		}
		/* sane scales and values: FP16 in [2^-8, 2^-7) or small ints */
		if (what == W4A16) {
			for (int r = 0; r < n; r++)
				for (int g = 0; g < m->q4[c].ngroups; g++) {
					uint16_t h[2] = { (uint16_t)(0x1c00 | (next() & 0x3ff)),
							  (uint16_t)(0x9c00 | (next() & 0x3ff)) };

					memcpy(data + r * m->q4[c].row_bytes +
						       q4_head_at(&m->q4[c], g), h, 4);
				}
		} else if (what == W8A16) {
			for (size_t b = 0; b < m->bytes / sizeof(struct q8_block); b++)
				((struct q8_block *)data)[b].scale =
					(uint16_t)(0x1c00 | (next() & 0x3ff));
		} else {
			uint16_t *h = (uint16_t *)data;

			for (size_t i = 0; i < (size_t)n * k; i++)
				h[i] = (uint16_t)((h[i] & 0x83ff) | 0x1c00);
		}
	}
}

static void mats_release(struct mats *m)
{
	for (int c = 0; c < m->copies; c++) {
		if (m->q4)
			q4_release(&m->q4[c]);
		if (m->q8)
			q8_release(&m->q8[c]);
		if (m->f16)
			free(m->f16[c]);
	}
	free(m->q4);
	free(m->q8);
	free(m->f16);
}

static void call(const struct kern *kn, struct kpool *p, struct mats *m, int c,
		 const uint16_t *x, int batch, float *y)
{
	if (m->what == W4A16)
		kern_q4_gemm_packed(kn, p, &m->q4[c], m->a8 ? m->a8[c] : NULL,
				    x, batch, y);
	else if (m->what == W4A16_ROWS)
		kern_q4_gemm(kn, p, &m->q4[c], x, batch, y);
	else if (m->what == W4A8)
		kern_q4_gemm_a8(kn, p, &m->q4[c], m->a8[c], x, batch, y);
	else if (m->what == W8A16)
		kern_q8_gemm(kn, p, &m->q8[c], x, batch, y);
	else
		kern_f16_gemm(kn, p, m->f16[c], m->n, m->k, x, batch, y);
}

static void sort5(double *t)
{
	for (int i = 1; i < 5; i++)
		for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
			double v = t[j];

			t[j] = t[j - 1];
			t[j - 1] = v;
		}
}

/* From this batch on a call is bound by arithmetic: timed on one copy,
 * its weights hot in the cache (cycling 2 x the cache's worth of copies
 * would take minutes a pass, and memory is not what it waits on) */
#define HOT_BATCH 64

static int copies_timed(const struct mats *m, int batch)
{
	return batch < HOT_BATCH ? m->copies : 1;
}

/* Seconds per call over one pass of at least min_s of calls (and every
 * copy timed once) */
static double pass_s(const struct kern *kn, struct kpool *p, struct mats *m,
		     const uint16_t *x, int batch, float *y, double min_s)
{
	int copies = copies_timed(m, batch);
	double t0 = rt_now_s(), el;
	long calls = 0;

	do {
		call(kn, p, m, (int)(calls % copies), x, batch, y);
		calls++;
		el = rt_now_s() - t0;
	} while (el < min_s || calls < copies);
	return el / (double)calls;
}

struct timing {
	double sec;     /* a call, median of the rounds */
	double share;   /* GB/s over the round's triad GB/s, median */
	double speedup; /* FP16's seconds over these, median of the rounds */
};

/* The nw formats at one batch on p's threads, after a warm-up pass over
 * each one's copies: 5 rounds, each a STREAM triad pass, then a pass of
 * each format (at least min_s / 5 of calls; the order rotates between
 * rounds). Every figure is a median over the rounds of a ratio of
 * neighbours in time: the bandwidth of a shared machine drifts within a
 * run, and medians of passes timed apart drift with it. */
static void time_rounds(const struct kern *kn, struct kpool *p,
			struct mats m[], int nw, const uint16_t *x, int batch,
			float *y, double min_s, const struct kstream *st,
			int threads, struct timing out[])
{
	double t[NWHAT][5], share[NWHAT][5], up[NWHAT][5];

	for (int w = 0; w < nw; w++)
		for (int c = 0; c < copies_timed(&m[w], batch); c++)
			call(kn, p, &m[w], c, x, batch, y);
	for (int rep = 0; rep < 5; rep++) {
		double triad = stream_pass(st, threads, TRIAD);

		for (int o = 0; o < nw; o++) {
			int w = (o + rep) % nw;

			t[w][rep] = pass_s(kn, p, &m[w], x, batch, y, min_s / 5);
			share[w][rep] = (double)m[w].bytes / t[w][rep] / 1e9 /
					triad;
		}
		for (int w = 0; w < nw; w++)
			up[w][rep] = t[FP16][rep] / t[w][rep];
	}
	for (int w = 0; w < nw; w++) {
		sort5(t[w]);
		sort5(share[w]);
		sort5(up[w]);
		out[w] = (struct timing){ t[w][2], share[w][2], up[w][2] };
	}
}

/* GFLOP/s of a call of m tokens through n x k (2 m n k operations) */
static double gflops(int n, int k, int m, double sec)
{
	return 2.0 * n * k * m / sec / 1e9;
}

void kbench_run(const struct kbench_opts *o)
{
	static const int shapes[][2] = { { 4096, 4096 }, { 11008, 4096 },
					 { 4096, 11008 }, { 32000, 4096 } };
	/* batches 64 and 512 (prefill) at the first two shapes only */
	static const int batches[] = { 1, 4, 16, 64, 512 };
	enum { NB = sizeof(batches) / sizeof(batches[0]), BIG_SHAPES = 2 };
	int threads_only = o->threads, group = o->group, quick = o->quick;
	int json = o->json, batch_only = o->batch;
	const struct kern *kn = o->kern;
	const char *op = kbench_int8_op(kn);
	int nw = o->row_kernels ? 5 : kn->a8_run ? 4 : 3, nshapes = quick ? 1 : 4;
	size_t llc = llc_bytes(), set = set_bytes(o);
	double stream[2][3] = { { 0 } }, fma[2], dot[2];
	struct kstream st;
	int tlist[2] = { 1, 2 }, nt = 2;
	bool first = true;

	HS_ASSERT(!o->row_kernels || (kn->dig_run && kn->a8_run)); /* kbench_check */
	if (threads_only) {
		tlist[0] = threads_only;
		nt = 1;
	}
	/* STREAM over arrays of 4 x the last-level cache each, kept for the
	 * triad passes beside the kernels' */
	kstream_init(&st, quick || o->hot ? 32u << 20 : 0);
	for (int i = 0; i < nt; i++) {
		stream_best(&st, tlist[i], stream[i]);
		fma[i] = kbench_flops(tlist[i]);
		dot[i] = kbench_int8(kn, tlist[i]);
		if (!json)
			printf("%d thread%s: stream copy %.1f GB/s, triad %.1f GB/s, "
			       "read %.1f GB/s; peak FP32 FMA %.1f GFLOP/s, int8 "
			       "(%s) %.1f GOP/s\n", tlist[i], tlist[i] > 1 ? "s" : "",
			       stream[i][COPY], stream[i][TRIAD], stream[i][READ],
			       fma[i], op ? op : "none timed for this set", dot[i]);
	}
	if (json)
		printf("{\"kernel_set\": \"%s\", \"int8_op\": %s%s%s, \"group\": %d, "
		       "\"llc_bytes\": %zu, \"stream_gbs\": %.2f, \"stream\": [",
		       kn->name, op ? "\"" : "", op ? op : "null", op ? "\"" : "",
		       group, llc, stream[nt - 1][TRIAD]);
	for (int i = 0; json && i < nt; i++)
		printf("%s{\"threads\": %d, \"copy_gbs\": %.2f, \"triad_gbs\": %.2f, "
		       "\"read_gbs\": %.2f, \"fma_gflops\": %.1f, "
		       "\"int8_gops\": %.1f}", i ? ", " : "", tlist[i],
		       stream[i][COPY], stream[i][TRIAD], stream[i][READ], fma[i],
		       dot[i]);
	if (json)
		printf("], \"rows\": [");
	else
		printf("%-10s %-12s %5s %7s %12s %8s %7s %7s %7s %8s %6s  (kernels: "
		       "%s, W4A16 g%d)\n", "kernel", "shape", "batch", "threads",
		       "seconds", "GB/s", "%triad", "%read", "xFP16", "GFLOP/s",
		       "%peak", kn->name, group);
	for (int s = 0; s < (o->rows ? 1 : nshapes); s++) {
		int n = o->rows ? o->rows : shapes[s][0];
		int k = o->rows ? o->cols : shapes[s][1];
		uint16_t *x = xmalloc(sizeof(uint16_t) * 512 * k);
		float *y = xmalloc(sizeof(float) * 512 * n);
		struct mats m[NWHAT];

		for (int i = 0; i < 512 * k; i++)
			x[i] = f16_from_f32((float)(next() % 2001) / 1000.0f - 1.0f +
					    0.0001f);
		for (int w = 0; w < 3; w++)
			mats_init(&m[w], (enum what)w, n, k, group, set);
		m[W4A8] = m[W4A16]; /* the same weights; released once */
		m[W4A8].what = W4A8;
		m[W4A8].a8 = NULL;
		if (nw >= 4) {
			m[W4A8].a8 = xcalloc((size_t)m[W4A8].copies,
					     sizeof(*m[W4A8].a8));
			for (int c = 0; c < m[W4A8].copies; c++)
				m[W4A8].a8[c] = kern_a8w_new(kn, NULL, &m[W4A8].q4[c]);
			m[W4A8].bytes = m[W4A8].a8[0]->bytes;
			/* the exact products read the same panels where the
			 * set has digits on them, as the models do (the rows'
			 * bytes but for padding to whole panels) */
			if (kn->dig_run)
				m[W4A16].a8 = m[W4A8].a8;
		}
		m[W4A16_ROWS] = m[W4A16]; /* unpacked: the rows' own bytes */
		m[W4A16_ROWS].what = W4A16_ROWS;
		m[W4A16_ROWS].a8 = NULL;
		for (int bi = 0; bi < (quick ? 1 : NB); bi++) {
			if ((batch_only && batches[bi] != batch_only) ||
			    (batches[bi] > 16 && s >= BIG_SHAPES && !o->rows))
				continue;
			for (int i = 0; i < nt; i++) {
				struct kpool *p = kern_pool_new(tlist[i]);
				struct timing tm[NWHAT];

				/* W4A8 at every batch: the models take it from
				 * batch 4 on by default, and below under
				 * --decode-acts int8 */
				time_rounds(kn, p, m, nw, x, batches[bi], y,
					    quick ? 0.05 : 0.4, &st, tlist[i], tm);
				kpool_free(p);
				for (int w = 0; w < nw; w++) {
					double gbs = (double)m[w].bytes / tm[w].sec / 1e9;
					double gf = gflops(n, k, batches[bi], tm[w].sec);
					double peak = w == W4A8 ? dot[i] : fma[i];

					if (json)
						printf("%s{\"kernel\": \"%s\", \"shape\": "
						       "\"%dx%d\", \"batch\": %d, "
						       "\"threads\": %d, \"seconds\": %.6g, "
						       "\"gbs\": %.3f, \"triad_share\": %.4f, "
						       "\"speedup_over_fp16\": %.3f, "
						       "\"gflops\": %.2f, \"peak_share\": %.4f}",
						       first ? "" : ", ", what_names[w], n, k,
						       batches[bi], tlist[i], tm[w].sec, gbs,
						       tm[w].share, tm[w].speedup, gf,
						       peak > 0 ? gf / peak : 0);
					else
						printf("%-10s %5dx%-6d %5d %7d %12.6f %8.2f "
						       "%6.0f%% %6.0f%% %6.2fx %8.1f %5.0f%%\n",
						       what_names[w], n, k, batches[bi],
						       tlist[i], tm[w].sec, gbs,
						       100 * tm[w].share,
						       100 * gbs / stream[i][READ],
						       tm[w].speedup, gf,
						       peak > 0 ? 100 * gf / peak : 0);
					first = false;
				}
				fflush(stdout);
			}
		}
		for (int w = 0; w < 3; w++)
			mats_release(&m[w]);
		for (int c = 0; m[W4A8].a8 && c < m[W4A8].copies; c++)
			kern_a8w_free(m[W4A8].a8[c]);
		free(m[W4A8].a8);
		free(x);
		free(y);
	}
	kstream_release(&st);
	if (json)
		printf("]}\n");
}
