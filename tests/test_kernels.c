/* test_kernels.c: every kernel this build and CPU run, against the
 * reference, on fresh random data of many shapes; the formats' round trips.
 * libc only: the same file runs on aarch64 under qemu. */
#include "harness.h"

#include "err.h"
#include "f16.h"
#include "kern.h"

#include <stdlib.h>
#include <string.h>

/* Tolerances, relative to sum |w x| of each output (named as in ggml). */
#define MAX_FP32_KERNEL_ERR 1e-5 /* FP32 arithmetic, any summation order */
#define MAX_FP16_KERNEL_ERR 2e-3 /* FP16 products and group sums */
/* an activation outlier meeting a zero weight: the float method factors a
 * group into s (16 + q) x and (b - 16 s) x, which carry the outlier and
 * cancel (seen: avx2 1.0e-3 off on one output, one outlier of 30000 on
 * zero weights among values near 1) */
#define MAX_OUTLIER_ERR 5e-3

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static double uniform(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545F4914F6CDD1Du) >> 11) * 0x1p-53;
}

/* Roughly normal (sum of four uniforms), never exactly zero in practice. */
static float gauss(float sd)
{
	return (float)((uniform() + uniform() + uniform() + uniform() - 2) *
		       1.7320508 * sd);
}

static void fill_weights(float *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		w[i] = gauss(0.05f) + (i % 97 == 0 ? 0.3f : 0.0f); /* outliers */
}

static void fill_acts(uint16_t *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = f16_from_f32(gauss(1.0f));
}

/* The quantisers' inline rounding is roundf, bit for bit: halves of
 * either sign, the float below a half, the edges of 2^23 and 2^31,
 * infinities, a NaN, and random values of every magnitude. */
static void inline_round_is_roundf(void)
{
	static const float edges[] = {
		0.0f, 0.5f, 1.5f, 2.5f, 0.49999997f, 0.50000006f, 14.5f, 15.5f,
		8388607.5f, 0x1p23f, 0x1p23f + 2, 0x1p31f, 0x1p31f + 256, 1e30f,
		INFINITY, 0x1p-149f, 127.49999f, 126.5f,
	};
	int bad = 0;
	float first = 0;

	for (int i = 0; i < 200000 + 2 * (int)(sizeof(edges) / sizeof(edges[0])); i++) {
		float v = i < 200000 ? (float)(uniform() * 2 - 1) *
				       ldexpf(1, (int)(uniform() * 70) - 30)
				     : edges[(i - 200000) / 2] * ((i % 2) ? -1 : 1);
		float a = q4_round(v), b = roundf(v);

		if (memcmp(&a, &b, sizeof(a)) && bad++ == 0)
			first = v;
	}
	CHECK_MSG(!bad, "%d values round otherwise, the first %a", bad,
		  (double)first);
	CHECK(isnan(q4_round(NAN)));
	CHECK(q4_amax(2, NAN) == 2 && q4_amax(2, -3) == 3 && q4_amax(0, -0.0f) == 0);
}

static void fp16_round_trip(void)
{
	int bad = 0;

	for (uint32_t h = 0; h < 65536; h++) {
		uint16_t back = f16_from_f32(f16_to_f32((uint16_t)h));

		if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
			continue; /* NaN payloads */
		bad += back != h;
	}
	CHECK_MSG(bad == 0, "%d halves do not survive a round trip", bad);
	CHECK(f16_from_f32(1.0f) == 0x3c00 && f16_from_f32(-2.0f) == 0xc000);
	CHECK(f16_from_f32(65520.0f) == 0x7c00);            /* rounds to inf */
	CHECK(f16_from_f32(1.0f + 0x1p-11f) == 0x3c00);     /* tie to even */
	CHECK(f16_from_f32(1.0f + 3 * 0x1p-11f) == 0x3c02); /* tie to even */
	CHECK(f16_to_f32(0x0001) == 0x1p-24f);
}

/* Round trip: every weight within half a step (plus the FP16 rounding of
 * the scale and bias) of its original. */
static void q4_round_trip(void)
{
	static const int shapes[][2] = { { 3, 31 }, { 5, 100 }, { 2, 257 },
					  { 4, 128 } };

	for (int kind = 0; kind < 2; kind++)
		for (int g = 32; g <= 128; g *= 2)
			for (size_t s = 0; s < 4; s++) {
				int n = shapes[s][0], k = shapes[s][1], bad = 0;
				float *w = malloc(sizeof(float) * n * k);
				float *d = malloc(sizeof(float) * n * k);
				struct q4_matrix m;

				fill_weights(w, (size_t)n * k);
				q4_init(&m, n, k, g);
				q4_quantize(&m, w, kind);
				q4_dequantize(&m, d);
				for (int r = 0; r < n; r++)
					for (int c = 0; c < k; c++) {
						const uint8_t *b = m.data + r * m.row_bytes +
								   q4_head_at(&m, c / g);
						uint16_t h[2];
						float sc, err;

						memcpy(h, b, 4);
						sc = f16_to_f32(h[0]);
						err = fabsf(w[r * k + c] - d[r * k + c]);
						if (!(err <= sc / 2 + 16 * sc * 0x1p-10f +
							     fabsf(f16_to_f32(h[1])) *
								     0x1p-10f))
							bad++;
					}
				CHECK_MSG(bad == 0, "%s g%d %dx%d: %d weights off",
					  kind ? "asym" : "sym", g, n, k, bad);
				q4_release(&m);
				free(w);
				free(d);
			}
}

/* The quantiser's grid on values that fall on halves: with a group's
 * minimum 0 and maximum 15 (asymmetric: scale 1, bias 0) a value rounds
 * half away from zero, as roundf, and clamps to [0, 15]. */
static void q4_halves(void)
{
	static const float v[] = { 0, 15, 2.5f, 0.5f, 14.5f, 7.4999995f, 0.49999997f,
				   1.5f, 11.5f, 3 };
	static const int want[] = { 0, 15, 3, 1, 15, 7, 0, 2, 12, 3 };
	const int k = (int)(sizeof(v) / sizeof(v[0]));
	struct q4_matrix m;
	int bad = 0;

	q4_init(&m, 1, k, 32);
	q4_quantize(&m, v, Q4_ASYM);
	for (int c = 0; c < k; c++)
		bad += q4_code(&m, 0, c) != want[c];
	CHECK_MSG(bad == 0, "%d of %d codes off the grid", bad, k);
	q4_release(&m);
}

/* The span layout of q4.h, byte by byte: each span's heads, then its
 * codes as 64 contiguous bytes (fewer in a short last span), whatever the
 * group size; the rows exactly as long as their groups. */
static void q4_span_layout(void)
{
	static const int ks[] = { 31, 129, 200, 576, 1000 };

	for (int g = 32; g <= 128; g *= 2)
		for (size_t s = 0; s < sizeof(ks) / sizeof(ks[0]); s++) {
			const int n = 3, k = ks[s], per = 128 / g;
			struct q4_matrix m;
			int bad = 0;

			q4_init(&m, n, k, g);
			for (int r = 0; r < n; r++)
				for (int c = 0; c < k; c++)
					q4_set(&m, r, c, (r + 7 * c) % 16);
			for (int r = 0; r < n; r++)
				for (int gi = 0; gi < m.ngroups; gi++) {
					uint16_t h[2] = { (uint16_t)(r * 1000 + gi),
							  (uint16_t)(gi + 1) };

					memcpy(m.data + (size_t)r * m.row_bytes +
						       (size_t)(gi / per) * (4 * per + 64) +
						       4 * (gi % per), h, 4);
				}
			CHECK(m.row_bytes == (size_t)m.ngroups * (4 + g / 2));
			for (int r = 0; r < n; r++)
				for (int c = 0; c < k; c++) {
					const int sp = c / 128, left = m.ngroups - sp * per;
					const int in = left < per ? left : per;
					size_t at = (size_t)sp * (4 * per + 64) + 4 * in;
					size_t byte;
					int shift;
					uint16_t h[2];

					q4_where(c % 128, &byte, &shift);
					at += byte;
					bad += at >= m.row_bytes ||
					       (m.data[(size_t)r * m.row_bytes + at] >>
							shift & 15) != (r + 7 * c) % 16;
					memcpy(h, m.data + (size_t)r * m.row_bytes +
						       q4_head_at(&m, c / g), 4);
					bad += h[0] != r * 1000 + c / g ||
					       h[1] != c / g + 1;
				}
			CHECK_MSG(bad == 0, "g%d k %d: %d codes or heads out of place",
				  g, k, bad);
			q4_release(&m);
		}
}

static void q8_round_trip(void)
{
	int n = 7, k = 77, bad = 0;
	float *w = malloc(sizeof(float) * n * k), *d = malloc(sizeof(float) * n * k);
	struct q8_matrix m;

	fill_weights(w, (size_t)n * k);
	q8_init(&m, n, k);
	q8_quantize(&m, w);
	q8_dequantize(&m, d);
	for (int r = 0; r < n; r++)
		for (int c = 0; c < k; c++) {
			const struct q8_block *b =
				(const struct q8_block *)(m.data + r * m.row_bytes) +
				c / 32;
			float sc = f16_to_f32(b->scale);

			bad += !(fabsf(w[r * k + c] - d[r * k + c]) <=
				 sc / 2 + 127 * sc * 0x1p-10f);
		}
	CHECK(bad == 0);
	q8_release(&m);
	free(w);
	free(d);
}

/* sum |w x| of output (i, r), the scale of the tolerance */
static float magnitude(const float *w, const uint16_t *x, int k, int i, int r)
{
	float s = 0;

	for (int c = 0; c < k; c++)
		s += fabsf(w[(size_t)r * k + c] * f16_to_f32(x[(size_t)i * k + c]));
	return s;
}

static int compare(const char *what, const float *y, const float *ref,
		   const float *wd, const uint16_t *x, int m, int n, int k,
		   double tol)
{
	int bad = 0;

	for (int i = 0; i < m; i++)
		for (int r = 0; r < n; r++) {
			double e = fabs(y[i * n + r] - ref[i * n + r]);
			double lim = tol * magnitude(wd, x, k, i, r) + 1e-30;

			if (!(e <= lim)) {
				if (bad++ < 3)
					t_fail(__FILE__, __LINE__, "%s: y[%d][%d] = "
					       "%.9g, reference %.9g (limit %.3g)",
					       what, i, r, y[i * n + r],
					       ref[i * n + r], lim);
			}
		}
	return bad;
}

static const int shapes[][2] = {
	{ 1, 1 }, { 3, 31 }, { 7, 33 }, { 9, 64 }, { 17, 100 }, { 5, 129 },
	{ 31, 257 }, { 6, 200 }, { 64, 512 }, { 13, 1000 }, { 4, 4096 },
};

/* Every kernel, format, group size, shape and batch 1..16; the integer
 * paths (a8_run) against q4_gemm_a8_ref at batches 1 .. 8 (a tile of each
 * length a micro-kernel has) and over several tiles (its integer sums are
 * exact, so only FP32 rounding may differ), with the weights packed ahead
 * (kern_a8w_new, as many bytes as the weights where they need no
 * padding) at odd batches and as the call goes at even ones. */
static void kernels_match_reference(void)
{
	const char *const *names = kern_available();
	struct kpool *pool = kern_pool_new(3);
	const uint64_t seed = rng_state;

	for (const char *const *nm = names; *nm; nm++) {
		const struct kern *kn = kern_find(*nm);
		double tol = strcmp(*nm, "neon-fp16") ? MAX_FP32_KERNEL_ERR
						      : MAX_FP16_KERNEL_ERR;
		int bad = 0;

		rng_state = seed; /* every kernel meets the same data */

		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
			int n = shapes[s][0], k = shapes[s][1];
			float *w = malloc(sizeof(float) * n * k);
			float *wd = malloc(sizeof(float) * n * k);
			uint16_t *x = malloc(sizeof(uint16_t) * 40 * k);
			uint16_t *w16 = malloc(sizeof(uint16_t) * n * k);
			float *y = malloc(sizeof(float) * 40 * n);
			float *ref = malloc(sizeof(float) * 40 * n);
			struct q8_matrix m8;
			char what[96];

			fill_weights(w, (size_t)n * k);
			fill_acts(x, (size_t)16 * k);
			/* tokens 16 .. 39, for the integer paths' tiles, from the
			 * first 16 (the random sequence of the rest stays) */
			for (size_t i = (size_t)16 * k; i < (size_t)40 * k; i++)
				x[i] = x[(i * 7) % ((size_t)16 * k)] ^ 0x8000;
			for (int g = 32; g <= 128; g *= 2)
				for (int kind = 0; kind < 2; kind++) {
					struct q4_matrix m4;

					q4_init(&m4, n, k, g);
					q4_quantize(&m4, w, kind);
					q4_dequantize(&m4, wd);
					for (int mb = 1; mb <= 16; mb += mb < 4 ? 1 : 5) {
						q4_gemm_ref(&m4, x, mb, ref, 0, n);
						memset(y, 0xff, sizeof(float) * 16 * n);
						kern_q4_gemm(kn, s % 2 ? pool : NULL, &m4,
							     x, mb, y);
						snprintf(what, sizeof(what),
							 "%s w4a16 %s g%d %dx%d m%d", *nm,
							 kind ? "asym" : "sym", g, n, k,
							 mb);
						bad += compare(what, y, ref, wd, x, mb,
							       n, k, tol);
					}
					struct kern_a8w *pw = kn->a8_run ?
						kern_a8w_new(kn, s % 2 ? NULL : pool, &m4) : NULL;

					/* the packed copy holds what the weights
					 * hold, codes and FP16 heads, where no
					 * padding adds to it */
					if (pw && n % kn->a8_panel == 0 &&
					    k % 128 == 0)
						CHECK_MSG(pw->bytes == (size_t)n *
							  m4.row_bytes, "%s g%d "
							  "%dx%d: panels of %zu "
							  "bytes, weights %zu", *nm,
							  g, n, k, pw->bytes,
							  (size_t)n * m4.row_bytes);

					for (int mb = 1; pw && mb <= 40;
					     mb += mb < 8 ? 1 : 8) {
						q4_gemm_a8_ref(&m4, x, mb, ref, 0, n);
						memset(y, 0xff, sizeof(float) * 40 * n);
						kern_q4_gemm_a8(kn, s % 2 ? pool : NULL,
								&m4, mb % 2 ? pw : NULL,
								x, mb, y);
						snprintf(what, sizeof(what),
							 "%s w4a8 %s g%d %dx%d m%d", *nm,
							 kind ? "asym" : "sym", g, n, k,
							 mb);
						bad += compare(what, y, ref, wd, x, mb,
							       n, k, MAX_FP32_KERNEL_ERR);
					}
					/* the exact path from digits over the
					 * panels, where the set has one */
					for (int mb = 1; pw && kn->dig_run && mb <= 40;
					     mb += mb < 8 ? 1 : 8) {
						q4_gemm_ref(&m4, x, mb, ref, 0, n);
						memset(y, 0xff, sizeof(float) * 40 * n);
						kern_q4_gemm_packed(kn, s % 2 ? pool : NULL,
								    &m4, pw, x, mb, y);
						snprintf(what, sizeof(what),
							 "%s w4a16 panels %s g%d %dx%d m%d",
							 *nm, kind ? "asym" : "sym", g,
							 n, k, mb);
						bad += compare(what, y, ref, wd, x, mb,
							       n, k, tol);
					}
					kern_a8w_free(pw);
					q4_release(&m4);
				}
			q8_init(&m8, n, k);
			q8_quantize(&m8, w);
			q8_dequantize(&m8, wd);
			for (int i = 0; i < n * k; i++)
				w16[i] = f16_from_f32(w[i]);
			for (int mb = 1; mb <= 16; mb += 5) {
				q8_gemm_ref(&m8, x, mb, ref, 0, n);
				memset(y, 0xff, sizeof(float) * 16 * n);
				kern_q8_gemm(kn, pool, &m8, x, mb, y);
				snprintf(what, sizeof(what), "%s w8a16 %dx%d m%d", *nm,
					 n, k, mb);
				bad += compare(what, y, ref, wd, x, mb, n, k,
					       MAX_FP32_KERNEL_ERR);
				for (int i = 0; i < n * k; i++)
					wd[i] = f16_to_f32(w16[i]);
				f16_gemm_ref(w16, n, k, x, mb, ref, 0, n);
				memset(y, 0xff, sizeof(float) * 16 * n);
				kern_f16_gemm(kn, pool, w16, n, k, x, mb, y);
				snprintf(what, sizeof(what), "%s fp16 %dx%d m%d", *nm,
					 n, k, mb);
				bad += compare(what, y, ref, wd, x, mb, n, k,
					       MAX_FP32_KERNEL_ERR);
				q8_dequantize(&m8, wd);
			}
			q8_release(&m8);
			free(w);
			free(wd);
			free(x);
			free(w16);
			free(y);
			free(ref);
		}
		printf("    kernel %s: %s\n", *nm, bad ? "MISMATCH" : "matches");
	}
	kpool_free(pool);
}

/* A tolerance that passes anything proves nothing: a kernel reading one
 * code wrong must fail it. */
static void tolerance_catches_one_code(void)
{
	int n = 2, k = 256, caught = 1;
	float *w = malloc(sizeof(float) * n * k), *wd = malloc(sizeof(float) * n * k);
	uint16_t *x = malloc(sizeof(uint16_t) * k);
	float y[2], ref[2];
	struct q4_matrix m;

	fill_weights(w, (size_t)n * k);
	fill_acts(x, (size_t)k);
	/* the wrong code meets an activation of 1 and is 8 steps off, so the
	 * error it makes does not depend on the random draws */
	x[100] = f16_from_f32(1.0f);
	q4_init(&m, n, k, 64);
	q4_quantize(&m, w, Q4_ASYM);
	q4_dequantize(&m, wd);
	q4_gemm_ref(&m, x, 1, ref, 0, n);
	q4_set(&m, 1, 100, (q4_code(&m, 1, 100) + 8) % 16);
	for (const char *const *nm = kern_available(); *nm; nm++) {
		kern_q4_gemm(kern_find(*nm), NULL, &m, x, 1, y);
		caught &= fabs(y[1] - ref[1]) > MAX_FP16_KERNEL_ERR *
							magnitude(wd, x, k, 0, 1);
	}
	CHECK(caught);
	q4_release(&m);
	free(w);
	free(wd);
	free(x);
}

/* W4A4: activations land on a 4-bit grid per token, within half a step. */
static void w4a4_activations(void)
{
	int m = 3, k = 200, bad = 0;
	uint16_t *x = malloc(sizeof(uint16_t) * m * k), *q = malloc(sizeof(uint16_t) * m * k);

	fill_acts(x, (size_t)m * k);
	memcpy(q, x, sizeof(uint16_t) * m * k);
	q4_quantize_activations(q, m, k);
	for (int i = 0; i < m; i++) {
		float amax = 0, s;

		for (int c = 0; c < k; c++)
			amax = fmaxf(amax, fabsf(f16_to_f32(x[i * k + c])));
		s = amax / 7;
		for (int c = 0; c < k; c++) {
			float v = f16_to_f32(q[i * k + c]), code = v / s;

			bad += fabsf(code - roundf(code)) > 0.01f || code < -8.01f ||
			       code > 7.01f ||
			       fabsf(v - f16_to_f32(x[i * k + c])) > s / 2 * 1.01f;
		}
	}
	CHECK(bad == 0);
	free(x);
	free(q);
}

/* Every kernel but neon-fp16 (FP16 products and sums: its own tolerance)
 * on `tokens` tokens against the reference within tol; the count of
 * misses */
static int q4_all_kernels(const char *label, const struct q4_matrix *m,
			  const uint16_t *x, int tokens, const float *wd,
			  double tol)
{
	float *y = malloc(sizeof(float) * m->n * tokens);
	float *ref = malloc(sizeof(float) * m->n * tokens);
	int bad = 0;

	q4_gemm_ref(m, x, tokens, ref, 0, m->n);
	for (const char *const *nm = kern_available(); *nm; nm++) {
		const struct kern *kn = kern_find(*nm);
		struct kern_a8w *pw;
		char what[96];

		if (!strcmp(*nm, "neon-fp16"))
			continue;
		pw = kn->dig_run ? kern_a8w_new(kn, NULL, m) : NULL;
		/* the rows, and the packed panels where the set has digits
		 * on them */
		for (int packed = 0; packed < 1 + !!pw; packed++) {
			memset(y, 0xff, sizeof(float) * m->n * tokens);
			/* no pack: kern_q4_gemm's product */
			kern_q4_gemm_packed(kn, NULL, m, packed ? pw : NULL, x,
					    tokens, y);
			snprintf(what, sizeof(what), "%s%s %s", *nm,
				 packed ? " panels" : "", label);
			bad += compare(what, y, ref, wd, x, tokens, m->n, m->k,
				       tol);
		}
		kern_a8w_free(pw);
	}
	free(y);
	free(ref);
	return bad;
}

/* Activations of every magnitude from 2^-24 to 2 mixed in each group: a
 * kernel that turns a group into fixed point (avx2, avx512-vnni) must
 * still match the reference as FP32 arithmetic does, at every group size,
 * for one such token and for three (an ordinary one, with few groups
 * beyond their digits, then such a token and its values in reverse: avx2
 * takes each token's own digits below four).
 * Not neon-fp16 (q4_all_kernels): its FP16 arithmetic has a tolerance of
 * its own. */
static void wide_activations(void)
{
	int n = 37, k = 1000;
	float *w = malloc(sizeof(float) * n * k), *wd = malloc(sizeof(float) * n * k);
	uint16_t *x = malloc(sizeof(uint16_t) * 3 * k);

	rng_state = 0x2545f4914f6cdd1du; /* the same draws on every CPU */
	fill_weights(w, (size_t)n * k);
	for (int c = 0; c < k; c++) {
		int e = (int)(uniform() * 25) - 24;
		float mag = ldexpf(1.0f + (float)uniform(), e);

		x[k + c] = f16_from_f32(uniform() < 0.5 ? -mag : mag);
	}
	x[k + 6] = f16_from_f32(0x1p-24f);
	for (int c = 0; c < k; c++)
		x[2 * k + c] = x[2 * k - 1 - c];
	fill_acts(x, (size_t)k);
	for (int g = 32; g <= 128; g *= 2) {
		struct q4_matrix m;
		char what[48];

		q4_init(&m, n, k, g);
		q4_quantize(&m, w, Q4_ASYM);
		q4_dequantize(&m, wd);
		for (int tokens = 1; tokens <= 3; tokens += 2) {
			snprintf(what, sizeof(what), "wide activations g%d m%d", g,
				 tokens);
			CHECK(q4_all_kernels(what, &m, tokens == 1 ? x + k : x,
					     tokens, wd, MAX_FP32_KERNEL_ERR) == 0);
		}
		q4_release(&m);
	}
	free(w);
	free(wd);
	free(x);
}

/* An outlier of 30000 among activations of about 1, meeting weights of
 * exactly zero (symmetric code 8): it adds nothing to sum |w x|, but the
 * float method's s (16 + q) and (b - 16 s) terms carry it and cancel, so
 * the kernels are held to MAX_OUTLIER_ERR here; avx512-vnni, whose digits
 * cannot hold such a group exactly, must be no worse than avx512. */
static void outlier_meets_zero_weight(void)
{
	int n = 16, k = 256;
	float *w = malloc(sizeof(float) * n * k), *wd = malloc(sizeof(float) * n * k);
	uint16_t *x = malloc(sizeof(uint16_t) * k);
	float y[16], ref[16], err[2] = { 0 };
	const struct kern *pair[2] = { kern_find("avx512"),
				       kern_find("avx512-vnni") };
	struct q4_matrix m;

	rng_state = 0x9e3779b97f4a7c15u;
	fill_weights(w, (size_t)n * k);
	fill_acts(x, (size_t)k);
	for (int r = 0; r < n; r++)
		w[(size_t)r * k + 5] = 0;
	x[5] = f16_from_f32(30000.0f);
	q4_init(&m, n, k, 128);
	q4_quantize(&m, w, Q4_SYM);
	q4_dequantize(&m, wd);
	CHECK(q4_all_kernels("outlier on a zero weight", &m, x, 1, wd,
			     MAX_OUTLIER_ERR) == 0);
	if (pair[0] && pair[1]) {
		q4_gemm_ref(&m, x, 1, ref, 0, n);
		for (int p = 0; p < 2; p++) {
			kern_q4_gemm(pair[p], NULL, &m, x, 1, y);
			for (int r = 0; r < n; r++)
				err[p] += fabsf(y[r] - ref[r]);
		}
		CHECK_MSG(err[1] <= 1.5f * err[0] + 1e-6f,
			  "avx512-vnni off by %g in all, avx512 by %g", err[1],
			  err[0]);
	} else {
		t_skip("outlier on a zero weight, avx512-vnni against avx512: "
		       "this CPU does not run both");
	}
	q4_release(&m);
	free(w);
	free(wd);
	free(x);
}

/* The residuals of a kernel with digits, at each group size it serves.
 * The first group (of 32, so of every size): an outlier of 30000 on a
 * weight of exactly zero that is also the group's smallest (asymmetric:
 * code 0, bias 0, so it enters no term at all), values on the grid the
 * digits hold (multiples of 2^-7) and KERN_DIG_FIXES that are not (0.3,
 * -0.7, 1.1). Digits and residuals hold the group exactly, so the kernel
 * must match the reference as FP32 arithmetic does (the float method
 * cannot here: its s (16 + q) x and (b - 16 s) x carry the outlier and
 * cancel; without the residuals avx512-vnni is 3e-5 of sum |w x| off).
 * Then one more such value (0.9): the group takes the float method, the
 * outlier now on a nonzero weight (within the tolerance again). */
static void digit_residuals(void)
{
	int n = 16, k = 128, kernels = 0;
	float *w = malloc(sizeof(float) * n * k), *wd = malloc(sizeof(float) * n * k);
	uint16_t *x = malloc(sizeof(uint16_t) * k);
	float y[16], ref[16];

	rng_state = 0x243f6a8885a308d3u;
	for (int i = 0; i < n * k; i++)
		w[i] = (float)uniform() * 0.1f + 0.01f;
	for (int r = 0; r < n; r++)
		w[(size_t)r * k + 5] = 0;
	for (int c = 0; c < k; c++)
		x[c] = f16_from_f32((float)((int)(uniform() * 601) - 300) / 128);
	x[5] = f16_from_f32(30000.0f);
	x[9] = f16_from_f32(0.3f);
	x[17] = f16_from_f32(-0.7f);
	x[29] = f16_from_f32(1.1f);
	for (int more = 0; more < 2; more++) {
		if (more) {
			x[22] = f16_from_f32(0.9f);
			for (int r = 0; r < n; r++)
				w[(size_t)r * k + 5] = 0.05f;
		}
		for (const char *const *nm = kern_available(); *nm; nm++) {
			const struct kern *kn = kern_find(*nm);

			if (!kn->digits)
				continue;
			kernels += !more;
			for (int g = 32; g <= 128; g *= 2) {
				struct q4_matrix m;
				char what[64];

				if (!(kn->digit_groups & g))
					continue;
				q4_init(&m, n, k, g);
				q4_quantize(&m, w, Q4_ASYM);
				q4_dequantize(&m, wd);
				q4_gemm_ref(&m, x, 1, ref, 0, n);
				kern_q4_gemm(kn, NULL, &m, x, 1, y);
				snprintf(what, sizeof(what), "%s residuals g%d%s", *nm,
					 g, more ? ", one too many" : "");
				CHECK(compare(what, y, ref, wd, x, 1, n, k,
					      MAX_FP32_KERNEL_ERR) == 0);
				if (kn->dig_run) {
					struct kern_a8w *pw = kern_a8w_new(kn, NULL, &m);

					kern_q4_gemm_packed(kn, NULL, &m, pw, x, 1, y);
					snprintf(what, sizeof(what),
						 "%s residuals over panels g%d%s", *nm,
						 g, more ? ", one too many" : "");
					CHECK(compare(what, y, ref, wd, x, 1, n, k,
						      MAX_FP32_KERNEL_ERR) == 0);
					kern_a8w_free(pw);
				}
				q4_release(&m);
			}
		}
	}
	if (!kernels)
		t_skip("residuals: this CPU runs no kernel with digits");
	free(w);
	free(wd);
	free(x);
}

/* An infinite or NaN activation makes every output non-finite, as in the
 * reference, in every kernel, those that turn values into integers too. */
static void nonfinite_activations(void)
{
	static const uint16_t specials[] = { 0x7c00, 0xfc00, 0x7e00 };
	int n = 9, k = 300;
	float *w = malloc(sizeof(float) * n * k);
	uint16_t *x = malloc(sizeof(uint16_t) * k);
	float y[9], ref[9];

	fill_weights(w, (size_t)n * k);
	for (int g = 32; g <= 128; g *= 2) {
		struct q4_matrix m;

		q4_init(&m, n, k, g);
		q4_quantize(&m, w, Q4_SYM);
		for (size_t sp = 0; sp < sizeof(specials) / sizeof(specials[0]); sp++) {
			fill_acts(x, (size_t)k);
			x[200] = specials[sp];
			q4_gemm_ref(&m, x, 1, ref, 0, n);
			for (const char *const *nm = kern_available(); *nm; nm++) {
				const struct kern *kn = kern_find(*nm);
				struct kern_a8w *pw = kn->dig_run ?
					kern_a8w_new(kn, NULL, &m) : NULL;

				for (int packed = 0; packed < 1 + !!pw; packed++) {
					kern_q4_gemm_packed(kn, NULL, &m,
							    packed ? pw : NULL, x, 1, y);
					for (int r = 0; r < n; r++)
						CHECK_MSG(!isfinite(ref[r]) &&
							  !isfinite(y[r]),
							  "%s%s g%d, activation 0x%04x: "
							  "y[%d] = %g, reference %g", *nm,
							  packed ? " over panels" : "", g,
							  specials[sp], r, y[r], ref[r]);
				}
				kern_a8w_free(pw);
			}
		}
		q4_release(&m);
	}
	free(w);
	free(x);
}

/* Whether a and b are the same float, bit for bit, any NaN matching any. */
static int same_float(float a, float b)
{
	return isnan(a) ? isnan(b) : !memcmp(&a, &b, sizeof(a));
}

/* A set's own q4 that writes NaN everywhere: what lend_rule's sets run
 * when kern_q4_gemm keeps them */
static void nan_q4(const struct q4_matrix *w, const struct kern_x *x, float *y,
		   int r0, int r1)
{
	for (int i = 0; i < x->m; i++)
		for (int r = r0; r < r1; r++)
			y[(size_t)i * w->n + r] = NAN;
}

/* kern.lend: a set lends its products of fewer than KERN_DIG_TOKENS
 * tokens at the group sizes it names, and only those (the AVX-512 sets
 * lend G = 32 and 64 to the AVX2 set). A set whose own q4 writes NaN,
 * lending G = 32 to the reference: at G = 32 below four tokens the
 * reference's results, at four tokens and at G = 128 NaN. */
static void lend_rule(void)
{
	const struct kern set = { .name = "nan", .q4 = nan_q4,
				  .lend = kern_find("ref"), .lend_groups = 32 };
	int n = 5, k = 128;
	float *w = malloc(sizeof(float) * n * k), y[20], ref[20];
	uint16_t *x = malloc(sizeof(uint16_t) * 4 * k);

	fill_weights(w, (size_t)n * k);
	fill_acts(x, (size_t)4 * k);
	for (int g = 32; g <= 128; g *= 4)
		for (int m = 1; m <= 4; m++) {
			struct q4_matrix q;
			int lent = g == 32 && m < KERN_DIG_TOKENS, bad = 0;

			q4_init(&q, n, k, g);
			q4_quantize(&q, w, Q4_ASYM);
			q4_gemm_ref(&q, x, m, ref, 0, n);
			kern_q4_gemm(&set, NULL, &q, x, m, y);
			for (int i = 0; i < m * n; i++)
				bad += lent ? !same_float(y[i], ref[i]) : !isnan(y[i]);
			CHECK_MSG(bad == 0, "g%d, %d tokens: %d of %d outputs not %s",
				  g, m, bad, m * n, lent ? "the lender's" : "the set's own");
			q4_release(&q);
		}
	free(w);
	free(x);
}

/* A set's digits over panels that writes NaN everywhere, for packed_rule */
static void nan_dig_run(const struct kern_panel *pn, const struct q4_matrix *w,
			int rows, const struct kern_dig_tok *t, int T, float *y,
			size_t ystride)
{
	(void)pn, (void)w, (void)t;
	for (int j = 0; j < T; j++)
		for (int i = 0; i < rows; i++)
			y[(size_t)j * ystride + i] = NAN;
}

static void no_pack(const struct q4_matrix *w, int r, int rows, int kq,
		    struct kern_panel *pn)
{
	(void)w, (void)r, (void)rows, (void)kq, (void)pn;
}

static void no_tile(const struct kern_panel *pn, const int8_t *aq,
		    const float *au, const float *as, int T, int ngroups,
		    int group, float *y, size_t ystride, int rows)
{
	(void)pn, (void)aq, (void)au, (void)as, (void)T, (void)ngroups;
	(void)group, (void)y, (void)ystride, (void)rows;
}

static void alloc_digits(struct kern_x *x)
{
	if (x->m < KERN_DIG_TOKENS || x->dig_planes)
		kern_dig_alloc(x);
}

/* kern_q4_gemm_packed takes the set's dig_run at the group sizes it has
 * digits for, with its own set's panels, at any count of tokens, and
 * kern_q4_gemm's product otherwise: a set whose dig_run writes NaN (its
 * q4 the reference's) gives NaN there only, the reference's bits
 * elsewhere. */
static void packed_rule(void)
{
	const struct kern set = { .name = "nan-panels",
				  .q4 = kern_find("ref")->q4,
				  .a8_pack = no_pack, .a8_run = no_tile,
				  .a8_panel = 8, .a8_panels = 1, .a8_tile = 1,
				  .digits = alloc_digits, .digit_groups = 32,
				  .dig_run = nan_dig_run };
	struct kern other = set;
	int n = 13, k = 160;
	float *w = malloc(sizeof(float) * n * k), y[7 * 13], ref[7 * 13];
	uint16_t *x = malloc(sizeof(uint16_t) * 7 * k);

	fill_weights(w, (size_t)n * k);
	fill_acts(x, (size_t)7 * k);
	for (int g = 32; g <= 128; g *= 4) {
		struct q4_matrix q;
		struct kern_a8w *own, *another;

		q4_init(&q, n, k, g);
		q4_quantize(&q, w, Q4_ASYM);
		own = kern_a8w_new(&set, NULL, &q);
		another = kern_a8w_new(&other, NULL, &q);
		for (int m = 1; m <= 7; m++)
			for (int c = 0; c < 3; c++) {
				const struct kern_a8w *pw = c == 0 ? own :
							    c == 1 ? another : NULL;
				int nan = g == 32 && c == 0;
				int bad = 0;

				q4_gemm_ref(&q, x, m, ref, 0, n);
				kern_q4_gemm_packed(&set, NULL, &q, pw, x, m, y);
				for (int i = 0; i < m * n; i++)
					bad += nan ? !isnan(y[i]) :
						     !same_float(y[i], ref[i]);
				CHECK_MSG(bad == 0, "g%d, %d tokens, %s: %d of %d "
					  "outputs not %s", g, m,
					  c == 0 ? "its panels" : c == 1 ?
					  "another set's panels" : "no panels",
					  bad, m * n, nan ? "dig_run's" :
					  "kern_q4_gemm's");
			}
		kern_a8w_free(own);
		kern_a8w_free(another);
		q4_release(&q);
	}
	free(w);
	free(x);
}

/* Whether kn's digits call takes m tokens of k activations at group g */
static bool digits_take(const struct kern *kn, int m, int k, int g)
{
	uint16_t *x = calloc((size_t)m * k, sizeof(uint16_t));
	struct kern_x kx;
	bool took;

	kern_x_init(&kx, kn, x, m, k, g, kn->interleave);
	kn->digits(&kx);
	took = kx.dig != NULL;
	kern_x_release(&kx);
	free(x);
	return took;
}

/* Outputs of kn's product of m tokens (over pw's panels, or pw NULL
 * through its rows: kern_q4_gemm) into y that differ from each token's
 * alone, bit for bit (q at most 64 rows) */
static int differ_alone(const struct kern *kn, const struct q4_matrix *q,
			const struct kern_a8w *pw, const uint16_t *x, int m,
			float *y)
{
	float one[64];
	int bad = 0;

	HS_ASSERT(q->n <= 64);
	kern_q4_gemm_packed(kn, NULL, q, pw, x, m, y);
	for (int i = 0; i < m; i++) {
		kern_q4_gemm_packed(kn, NULL, q, pw, x + (size_t)i * q->k, 1, one);
		for (int r = 0; r < q->n; r++)
			bad += !same_float(one[r], y[(size_t)i * q->n + r]);
	}
	return bad;
}

/* Where a set's exact product goes by digits (over panels at any batch,
 * and through the rows of avx2 and avx-vnni token by token at the batches
 * their digits call takes) each token's result is what it gets alone, bit
 * for bit, whatever the batch and the tiles or blocks it falls in (so a
 * verify block's logits are each position's decode step's), shapes with
 * short panels and short spans among them; 6 and 20 tokens, the last past
 * a block of the rows' 16 */
static void token_alone(void)
{
	static const int sizes[][2] = { { 45, 4160 }, { 64, 576 } };
	static const int batches[] = { 6, 20 };
	int checked = 0;

	for (const char *const *nm = kern_available(); *nm; nm++) {
		const struct kern *kn = kern_find(*nm);

		if (!kn->dig_run && !kn->digits)
			continue;
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			const int n = sizes[s][0], k = sizes[s][1], mmax = 20;
			float *w = malloc(sizeof(float) * n * k);
			float *y = malloc(sizeof(float) * mmax * n);
			uint16_t *x = malloc(sizeof(uint16_t) * mmax * k);

			fill_weights(w, (size_t)n * k);
			fill_acts(x, (size_t)mmax * k);
			for (int g = 32; g <= 128; g *= 2) {
				struct q4_matrix q;
				struct kern_a8w *pw;

				q4_init(&q, n, k, g);
				q4_quantize(&q, w, Q4_ASYM);
				pw = kn->dig_run ? kern_a8w_new(kn, NULL, &q) : NULL;
				for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
					const int m = batches[b];
					int bad;

					if (pw) {
						checked++;
						bad = differ_alone(kn, &q, pw, x, m, y);
						CHECK_MSG(bad == 0, "%s over panels g%d "
							  "%dx%d, %d tokens: %d of %d "
							  "outputs differ from the token's "
							  "alone", *nm, g, n, k, m, bad, m * n);
					}
					if (!(kn->digit_groups & g) ||
					    !digits_take(kn, m, k, g))
						continue;
					checked++;
					bad = differ_alone(kn, &q, NULL, x, m, y);
					CHECK_MSG(bad == 0, "%s by rows g%d %dx%d, %d "
						  "tokens: %d of %d outputs differ from "
						  "the token's alone", *nm, g, n, k, m,
						  bad, m * n);
				}
				kern_a8w_free(pw);
				q4_release(&q);
			}
			free(w);
			free(y);
			free(x);
		}
	}
	if (!checked)
		t_skip("this CPU runs no kernel set that takes digits past "
		       "four tokens");
}

/* A kernel's own activation load (kern.load) writes what the portable code
 * writes, bit for bit: values in the kernel's order, and group sums that
 * are exact before their rounding, whatever the order of summing. The
 * values are random FP16 bit patterns (every magnitude from subnormal to
 * 65504 in one group, where a sum in float would depend on its order),
 * some infinite or NaN. */
static void load_matches_portable(void)
{
	static const int ks[] = { 1, 3, 4, 7, 9, 31, 33, 100, 128, 129, 255,
				  300, 4096, 4097, 11008 };
	static const int groups[] = { 32, 64, 128 };
	int kmax = 11008, m = 3, loads = 0;
	uint16_t *x = malloc(sizeof(uint16_t) * m * kmax);

	for (int i = 0; i < m * kmax; i++) {
		uint16_t h = (uint16_t)(uniform() * 65536);

		if ((h & 0x7c00) == 0x7c00 && uniform() < 0.99)
			h ^= 0x4000; /* a few infinities and NaNs, not 1 in 32 */
		x[i] = h;
	}
	for (const char *const *nm = kern_available(); *nm; nm++) {
		const struct kern *kn = kern_find(*nm);

		if (!kn->load)
			continue;
		loads++;
		for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++)
			for (size_t gi = 0; gi < 3; gi++)
				for (int il = 0; il <= kn->interleave; il += kn->interleave) {
					struct kern_x a, b;
					int bad = 0;

					kern_x_init(&a, kn, x, m, ks[ki], groups[gi], il);
					kern_x_init(&b, NULL, x, m, ks[ki], groups[gi], il);
					for (int i = 0; i < m * a.stride; i++)
						bad += !same_float(a.xf[i], b.xf[i]);
					for (int i = 0; i < m * a.ngroups; i++)
						bad += !same_float(a.sx[i], b.sx[i]);
					CHECK_MSG(!bad, "%s, k %d, G %d, interleave %d: "
						  "%d values or sums differ from the "
						  "portable load", *nm, ks[ki],
						  groups[gi], il, bad);
					kern_x_release(&a);
					kern_x_release(&b);
				}
	}
	if (!loads)
		t_skip("no kernel on this CPU has its own load");
	free(x);
}

/* kern_f32_gemm, every set's and the portable loop, on 1 and 3 threads:
 * every output is kern_dot_f32 of its row and token bit for bit, at row
 * and column counts off the kernels' tiles and batches past a token
 * block (so a batch gives each token its own forward's logits). */
static void f32_is_dot_order(void)
{
	static const int dims[][3] = { { 1, 1, 1 }, { 5, 7, 3 }, { 9, 64, 2 },
				       { 13, 100, 67 }, { 64, 576, 70 },
				       { 3, 1000, 129 } };
	struct kpool *pool = kern_pool_new(3);
	const char *const *names = kern_available();

	for (size_t s = 0; s < sizeof(dims) / sizeof(dims[0]); s++) {
		const int n = dims[s][0], k = dims[s][1], m = dims[s][2];
		float *w = malloc(sizeof(float) * n * k);
		float *x = malloc(sizeof(float) * m * k);
		float *y = malloc(sizeof(float) * m * n);

		fill_weights(w, (size_t)n * k);
		for (int i = 0; i < m * k; i++)
			x[i] = (float)(uniform() * 8 - 4);
		for (int set = -1; set < 0 || names[set]; set++)
			for (int th = 0; th < 2; th++) {
				const struct kern *kn = set < 0 ? NULL : kern_find(names[set]);
				int bad = 0;

				memset(y, 0xff, sizeof(float) * m * n);
				kern_f32_gemm(kn, th ? pool : NULL, w, n, k, x, m, y);
				for (int i = 0; i < m; i++)
					for (int r = 0; r < n; r++) {
						float want = kern_dot_f32(w + (size_t)r * k,
									  x + (size_t)i * k, k);

						bad += memcmp(&want, &y[(size_t)i * n + r],
							      sizeof(want)) != 0;
					}
				CHECK_MSG(bad == 0, "%s, %dx%d by %d tokens, %d "
					  "thread(s): %d outputs differ from "
					  "kern_dot_f32", kn ? kn->name : "portable",
					  n, k, m, th ? 3 : 1, bad);
			}
		free(w);
		free(x);
		free(y);
	}
	kpool_free(pool);
}

/* A kernel set's own FP16 conversion (kern.to_f16) is f16_from_f32 bit
 * for bit, with denormals flushed as the forward runs: random bit patterns
 * (every class), FP16's edges (overflow, its smallest values, ties that
 * round to even), FP32 subnormals, NaNs with payloads, at every place of a
 * step of 8 and in a tail. */
static void to_f16_matches_portable(void)
{
	static const float edges[] = {
		65504.0f, 65519.0f, 65520.0f, 1e6f, 0x1p-14f, 0x1p-24f, 0x1p-25f,
		0x1.8p-24f, 0x1.8p-25f, 0x1.0002p-25f, 0x1.ff8p-15f, 1.00048828125f,
		1.00146484375f, 0x1p-130f, 0x1p-149f, 0.0f, 1.0f / 3, 2049.0f,
		2051.0f, INFINITY,
	};
	enum { N = 4099 };
	float *x = malloc(sizeof(float) * N);
	uint16_t a[N], b[N];
	int sets = 0;

	kern_flush_denormals();
	for (int i = 0; i < N; i++) {
		uint32_t bits = (uint32_t)(uniform() * 4294967296.0);

		if (i % 3 == 0) { /* mostly FP16's range */
			float f = (float)(uniform() * 2 - 1) *
				  ldexpf(1, (int)(uniform() * 44) - 28);

			memcpy(&bits, &f, sizeof(bits));
		}
		memcpy(&x[i], &bits, sizeof(bits));
	}
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		x[2 * i] = edges[i];
		x[2 * i + 1] = -edges[i];
	}
	for (int i = 0; i < 8; i++) { /* NaNs with payloads */
		uint32_t nan = 0x7f800001u + (uint32_t)i * 0x10203u;

		memcpy(&x[100 + 9 * i], &nan, sizeof(nan));
	}
	for (const char *const *nm = kern_available(); *nm; nm++) {
		const struct kern *kn = kern_find(*nm);
		int bad = 0, first = -1;

		if (!kn->to_f16)
			continue;
		sets++;
		kern_to_f16(kn, x, N, a);
		kern_to_f16(NULL, x, N, b);
		for (int i = 0; i < N; i++)
			if (a[i] != b[i] && bad++ == 0)
				first = i;
		CHECK_MSG(!bad, "%s: %d of %d values differ; the first %a: "
			  "0x%04x, portable 0x%04x", *nm, bad, N,
			  first < 0 ? 0.0 : (double)x[first], first < 0 ? 0 : a[first],
			  first < 0 ? 0 : b[first]);
	}
	if (!sets)
		t_skip("no kernel on this CPU has its own FP16 conversion");
	free(x);
}

/* The calling thread's floating-point controls (MXCSR, FPCR), to run a
 * test with denormals kept and then flushed as the pools' workers flush
 * them (kern_flush_denormals), and to restore them */
#if defined(__x86_64__)
#include <xmmintrin.h>
typedef unsigned fp_controls;
static fp_controls fp_controls_get(void) { return _mm_getcsr(); }
static void fp_controls_set(fp_controls c) { _mm_setcsr(c); }
#define FP_KEEP_DENORMALS(c) ((c) & ~0x8040u) /* FTZ, DAZ */
#elif defined(__aarch64__)
typedef uint64_t fp_controls;
static fp_controls fp_controls_get(void)
{
	uint64_t c;

	__asm__ volatile("mrs %0, fpcr" : "=r"(c));
	return c;
}
static void fp_controls_set(fp_controls c)
{
	__asm__ volatile("msr fpcr, %0" : : "r"(c));
}
#define FP_KEEP_DENORMALS(c) ((c) & ~(UINT64_C(1) << 24)) /* FZ */
#endif

/* Row r of a quantiser's test matrix (k values): every group of 32 a case
 * of its own, by r and the group's place: random values of a row's own
 * magnitude, zeros of both signs, a constant, one value among zeros, FP32
 * subnormals of both signs among zeros, values near FP16's largest and
 * beyond it, values whose scale is an FP16 subnormal, and codes exactly
 * half way between two (the asymmetric grid 0 .. 15/16 step 1/16 and the
 * symmetric one of amax 7/16, where (w - b) / s is a whole number and a
 * half). */
static void quantize_case(float *w, int r, int k)
{
	for (int c = 0; c < k; c++) {
		int g = c / 32, j = c % 32, kind = (r * 7 + g) % 11;
		float v;

		switch (kind) {
		case 0: v = (j & 1) ? 0.0f : -0.0f; break;
		case 1: v = 0.25f; break;
		case 2: v = j == 5 ? -3.0f : (j & 2) ? 0.0f : -0.0f; break;
		case 3: v = (float)(j % 3) * 0x1p-140f * (j & 1 ? -1 : 1); break;
		case 4: v = 60000.0f * (float)(uniform() * 2 - 1); break;
		case 5: v = j == 0 ? 0 : j == 1 ? 15 / 16.0f
			  : (float)((j % 15) + 0.5) / 16; break;
		case 6: v = j == 0 ? 7 / 16.0f
			  : (float)((j % 14) + 1 - 7.5) / 16; break;
		case 7: v = 1e-6f * (float)(uniform() * 2 - 1); break;
		case 8: v = 1e6f * (float)(uniform() * 2 - 1); break;
		default: v = gauss(ldexpf(1, r % 13 - 8)); break;
		}
		w[(size_t)r * k + c] = v;
	}
}

/* A kernel set's own quantiser (kern.quantize) writes q4_quantize's bytes:
 * every group size and kind, rows whose k ends inside a group, the cases
 * of quantize_case, on one thread and on three, the calling thread (which
 * runs the portable code, and a share of the rows) keeping denormals, then
 * flushing them, as the pools' workers always do. */
static void quantize_matches_portable(void)
{
	static const int qshapes[][2] = { { 9, 300 }, { 4, 31 }, { 18, 512 },
					 { 3, 4096 + 96 } };
	struct kpool *pool = kern_pool_new(3);
	int sets = 0;
#ifdef FP_KEEP_DENORMALS
	const fp_controls was = fp_controls_get();
#endif

	for (int flushed = 0; flushed < 2; flushed++)
	for (const char *const *nm = kern_available(); *nm; nm++) {
		const struct kern *kn = kern_find(*nm);

		if (!kn->quantize)
			continue;
#ifdef FP_KEEP_DENORMALS
		if (flushed)
			kern_flush_denormals();
		else
			fp_controls_set(FP_KEEP_DENORMALS(was));
#endif
		sets++;
		for (size_t si = 0; si < sizeof(qshapes) / sizeof(qshapes[0]); si++) {
			const int n = qshapes[si][0], k = qshapes[si][1];
			float *w = malloc(sizeof(float) * (size_t)n * k);

			for (int r = 0; r < n; r++)
				quantize_case(w, r, k);
			for (int G = 32; G <= 128; G *= 2)
				for (int kind = Q4_SYM; kind <= Q4_ASYM; kind++)
					for (int th = 0; th < 2; th++) {
						struct q4_matrix a, b;
						size_t bytes, first = 0;
						int bad = 0;

						q4_init(&a, n, k, G);
						q4_init(&b, n, k, G);
						q4_quantize(&a, w, (enum q4_kind)kind);
						kern_q4_quantize(kn, th ? pool : NULL, &b,
								 w, (enum q4_kind)kind);
						bytes = a.row_bytes * (size_t)n;
						for (size_t i = 0; i < bytes; i++)
							if (a.data[i] != b.data[i] && bad++ == 0)
								first = i;
						CHECK_MSG(!bad, "%s, %dx%d, G = %d, %s, %d "
							  "thread(s), the caller %s denormals: "
							  "%d of %zu bytes differ; "
							  "the first, byte %zu of row %zu: "
							  "0x%02x, portable 0x%02x", *nm, n, k,
							  G, kind == Q4_SYM ? "sym" : "asym",
							  th ? 3 : 1,
							  flushed ? "flushing" : "keeping",
							  bad, bytes,
							  first % a.row_bytes,
							  first / a.row_bytes, b.data[first],
							  a.data[first]);
						q4_release(&a);
						q4_release(&b);
					}
			free(w);
		}
	}
#ifdef FP_KEEP_DENORMALS
	fp_controls_set(was);
#endif
	if (!sets)
		t_skip("no kernel on this CPU has its own quantiser");
	kpool_free(pool);
}

/* A kernel set's own attention (kern.attend) against the portable one
 * (kern_attend with no set) within 1e-5 of the output's largest value:
 * contexts of 1 .. 200 positions (every remainder of its blocks of 4 and
 * 8), heads of 8 .. 128 values, a stride wider than the head, scores
 * from small to large (the softmax near one-hot); a NaN in the query
 * stays NaN, and a score far below the others weighs nothing. */
#define ATTEND_TOL 1e-5
static void attend_matches_portable(void)
{
	static const int ns[] = { 1, 2, 3, 4, 5, 7, 8, 9, 12, 33, 200 };
	static const int hss[] = { 8, 64, 72, 128 };
	const size_t stride = 136;
	float *kc = malloc(sizeof(float) * 200 * stride);
	float *vc = malloc(sizeof(float) * 200 * stride);
	float q[128], att[200], a[128], b[128];
	int sets = 0;

	for (size_t i = 0; i < 200 * stride; i++) {
		kc[i] = gauss(1.0f);
		vc[i] = gauss(1.0f);
	}
	for (const char *const *nm = kern_available(); *nm; nm++) {
		const struct kern *kn = kern_find(*nm);

		if (!kn->attend)
			continue;
		sets++;
		for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++)
			for (size_t hi = 0; hi < sizeof(hss) / sizeof(hss[0]); hi++)
				for (int sd = 0; sd < 3; sd++) {
					int n = ns[ni], hs = hss[hi];
					float top = 0, err = 0;

					for (int i = 0; i < hs; i++)
						q[i] = gauss(sd == 0 ? 0.1f : sd == 1 ? 1.0f : 8.0f);
					kern_attend(kn, q, 1, kc, vc, n, hs, stride,
						    0.125f, att, a);
					kern_attend(NULL, q, 1, kc, vc, n, hs, stride,
						    0.125f, att, b);
					for (int i = 0; i < hs; i++) {
						top = fmaxf(top, fabsf(b[i]));
						err = fmaxf(err, fabsf(a[i] - b[i]));
					}
					CHECK_MSG(err <= ATTEND_TOL * top,
						  "%s, %d positions, head %d, "
						  "scores' sd %d: %g off (largest %g)",
						  *nm, n, hs, sd, err, top);
				}
		/* a NaN in the query */
		for (int i = 0; i < 64; i++)
			q[i] = gauss(1.0f);
		q[5] = NAN;
		kern_attend(kn, q, 1, kc, vc, 9, 64, stride, 0.125f, att, a);
		CHECK_MSG(isnan(a[0]) && isnan(a[63]), "%s: a NaN query gave %g",
			  *nm, a[0]);
		/* one position 200 below the others: e^-200 is nothing */
		for (int i = 0; i < 64; i++)
			q[i] = i ? 0 : 1;
		memcpy(kc + 3 * stride, kc, sizeof(float) * 64);
		kc[3 * stride] = kc[0] - 1600; /* scaled by 1/8: 200 below */
		kern_attend(kn, q, 1, kc, vc, 9, 64, stride, 0.125f, att, a);
		kern_attend(NULL, q, 1, kc, vc, 9, 64, stride, 0.125f, att, b);
		CHECK_MSG(fabsf(a[0] - b[0]) <= ATTEND_TOL * fabsf(b[0]) + 1e-6f,
			  "%s: %g against %g", *nm, a[0], b[0]);
	}
	if (!sets)
		t_skip("no kernel on this CPU has its own attention");
	free(kc);
	free(vc);
}

/* Heads that share a KV head, taken at once, each get bit for bit what
 * they get alone, in a set's own attention and the portable one: 1 to 7
 * heads, contexts around its blocks of 64 positions, a stride wider than
 * the head. */
static void attend_grouped_is_each_head(void)
{
	static const int ns[] = { 1, 5, 63, 64, 65, 130, 200 };
	static const int nqs[] = { 2, 3, 7 };
	const size_t stride = 136;
	float *kc = malloc(sizeof(float) * 200 * stride);
	float *vc = malloc(sizeof(float) * 200 * stride);
	float q[7 * 72], att[7 * 200], a[7 * 72], b[72];

	for (size_t i = 0; i < 200 * stride; i++) {
		kc[i] = gauss(1.0f);
		vc[i] = gauss(1.0f);
	}
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		q[i] = gauss(1.0f);
	for (const char *const *nm = kern_available(); *nm; nm++) {
		const struct kern *kn = kern_find(*nm);

		for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++)
			for (size_t gi = 0; gi < sizeof(nqs) / sizeof(nqs[0]); gi++)
				for (int hs = 64; hs <= 72; hs += 8) {
					int n = ns[ni], nq = nqs[gi], same = 1;

					kern_attend(kn, q, nq, kc, vc, n, hs, stride,
						    0.125f, att, a);
					for (int j = 0; j < nq; j++) {
						kern_attend(kn, q + j * hs, 1, kc, vc, n,
							    hs, stride, 0.125f, att, b);
						same &= !memcmp(a + j * hs, b,
								sizeof(float) * hs);
					}
					CHECK_MSG(same, "%s: %d heads at once, %d "
						  "positions, head %d: not each "
						  "head's own", *nm, nq, n, hs);
				}
	}
	free(kc);
	free(vc);
}

/* A kernel's own integer-path load (kern.a8_load) writes what
 * kern_a8_load writes, bit for bit, at every place of a tile, and nothing
 * past k: finite FP16 values of every magnitude (the group sums' order
 * would show), blocks of zeros and blocks holding one value. */
static void a8_load_matches_portable(void)
{
	static const int ks[] = { 32, 64, 96, 100, 576, 4096, 11008 };
	static const int groups[] = { 32, 64, 128 };
	const int kmax = 11008, qb = kmax + 64, nb = kmax / 32 + 8;
	uint16_t *x = malloc(sizeof(uint16_t) * kmax);
	int8_t *q[2];
	float *u[2], *s[2];
	int loads = 0;

	for (int i = 0; i < kmax; i++) {
		uint16_t h = (uint16_t)(uniform() * 65536);

		x[i] = (h & 0x7c00) == 0x7c00 ? h ^ 0x4000 : h;
		if (i >= 64 && i < 96)
			x[i] = f16_from_f32(0);
		if (i >= 96 && i < 128)
			x[i] = f16_from_f32(i == 101 ? -3.5f : 0);
	}
	for (int v = 0; v < 2; v++) {
		q[v] = malloc((size_t)4 * qb);
		u[v] = malloc(sizeof(float) * 4 * nb);
		s[v] = malloc(sizeof(float) * 4 * nb);
	}
	for (const char *const *nm = kern_available(); *nm; nm++) {
		const struct kern *kn = kern_find(*nm);

		if (!kn->a8_load)
			continue;
		loads++;
		for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++)
			for (size_t gi = 0; gi < 3; gi++)
				for (int T = 1; T <= 4; T++) {
					int bad = 0;

					for (int v = 0; v < 2; v++) {
						memset(q[v], 0x55, (size_t)4 * qb);
						memset(u[v], 0x55, sizeof(float) * 4 * nb);
						memset(s[v], 0x55, sizeof(float) * 4 * nb);
					}
					for (int t = 0; t < T; t++) {
						kn->a8_load(x, ks[ki], groups[gi], T,
							    q[0] + 4 * t, u[0] + t, s[0] + t);
						kern_a8_load(x, ks[ki], groups[gi], T,
							     q[1] + 4 * t, u[1] + t, s[1] + t);
					}
					bad += memcmp(q[0], q[1], (size_t)4 * qb) != 0;
					bad += memcmp(u[0], u[1], sizeof(float) * 4 * nb) != 0;
					bad += memcmp(s[0], s[1], sizeof(float) * 4 * nb) != 0;
					CHECK_MSG(!bad, "%s, k %d, G %d, T %d: %d of codes, "
						  "units, sums differ from kern_a8_load",
						  *nm, ks[ki], groups[gi], T, bad);
				}
	}
	if (!loads)
		t_skip("no kernel on this CPU has its own integer-path load");
	for (int v = 0; v < 2; v++) {
		free(q[v]);
		free(u[v]);
		free(s[v]);
	}
	free(x);
}

/* The W4A8 reference against W4A16: each activation moves by at most half
 * its group's unit (max |x| / 254), so an output moves by at most
 * sum |w| max|x| / 254 over its groups; and it does move (the activations
 * were quantised), while a group of zeros has unit 0 and codes 0. */
static void a8_quantisation_bound(void)
{
	const int n = 19, k = 300, m = 3, g = 64, ng = (k + g - 1) / g;
	float *w = malloc(sizeof(float) * n * k), *wd = malloc(sizeof(float) * n * k);
	uint16_t *x = malloc(sizeof(uint16_t) * m * k);
	float y8[3 * 19], y16[3 * 19], unit[10];
	int8_t q[5 * 64];
	struct q4_matrix m4;
	int moved = 0, bad = 0;

	fill_weights(w, (size_t)n * k);
	fill_acts(x, (size_t)m * k);
	q4_init(&m4, n, k, g);
	q4_quantize(&m4, w, Q4_ASYM);
	q4_dequantize(&m4, wd);
	q4_gemm_a8_ref(&m4, x, m, y8, 0, n);
	q4_gemm_ref(&m4, x, m, y16, 0, n);
	for (int i = 0; i < m; i++)
		for (int r = 0; r < n; r++) {
			double bound = 0;

			for (int gi = 0; gi < ng; gi++) {
				double amax = 0, wsum = 0;

				for (int c = gi * g; c < k && c < (gi + 1) * g; c++) {
					double v = fabs(f16_to_f32(x[i * k + c]));

					amax = v > amax ? v : amax;
					wsum += fabs(wd[r * k + c]);
				}
				bound += wsum * amax / 254;
			}
			double e = fabs(y8[i * n + r] - y16[i * n + r]);

			bad += !(e <= bound * (1 + 1e-4) + 1e-6);
			moved += e > 0;
		}
	CHECK(bad == 0);
	CHECK(moved > n * m / 2);
	for (int c = 0; c < k; c++)
		x[c] = c < g ? f16_from_f32(0) : x[c];
	q4_a8_quantize(x, k, q, unit);
	CHECK(unit[0] == 0 && unit[1] == 0 && unit[2] > 0);
	bad = 0;
	for (int c = 0; c < g; c++)
		bad += q[c] != 0;
	for (int c = g; c < ng * g; c++)
		bad += c < k ? q[c] == -128 : q[c] != 0;
	CHECK(bad == 0);
	q4_release(&m4);
	free(w);
	free(wd);
	free(x);
}

const struct tcase kernel_tests[] = {
	{ "kernels: the quantisers' inline round is roundf's", inline_round_is_roundf },
	{ "kernels: FP16 conversion round trip", fp16_round_trip },
	{ "kernels: W4A16 quantisation within half a step", q4_round_trip },
	{ "kernels: W4A16's spans: heads, then 64 bytes of codes", q4_span_layout },
	{ "kernels: W4A16 codes round halves up, as roundf", q4_halves },
	{ "kernels: W8A16 quantisation within half a step", q8_round_trip },
	{ "kernels: every kernel matches the reference", kernels_match_reference },
	{ "kernels: the tolerance catches one wrong code",
	  tolerance_catches_one_code },
	{ "kernels: W4A4 activations on a 4-bit grid", w4a4_activations },
	{ "kernels: activations of every FP16 magnitude", wide_activations },
	{ "kernels: an outlier activation meeting zero weights",
	  outlier_meets_zero_weight },
	{ "kernels: a kernel with digits holds a group exactly with residuals",
	  digit_residuals },
	{ "kernels: a non-finite activation stays non-finite",
	  nonfinite_activations },
	{ "kernels: a kernel's own activation load is the portable one",
	  load_matches_portable },
	{ "kernels: a kernel's own integer-path load is the portable one",
	  a8_load_matches_portable },
	{ "kernels: a kernel's own FP16 conversion is the portable one's",
	  to_f16_matches_portable },
	{ "kernels: an FP32 product sums each output in kern_dot_f32's order",
	  f32_is_dot_order },
	{ "kernels: a set lends its small batches at the groups it names",
	  lend_rule },
	{ "kernels: the exact product over panels where the set has one, "
	  "kern_q4_gemm's elsewhere", packed_rule },
	{ "kernels: by digits a token's result is its own, whatever the "
	  "batch", token_alone },
	{ "kernels: a kernel's own quantiser writes the portable one's bytes",
	  quantize_matches_portable },
	{ "kernels: a kernel's own attention is the portable one's",
	  attend_matches_portable },
	{ "kernels: heads sharing a KV head at once are each head's own",
	  attend_grouped_is_each_head },
	{ "kernels: W4A8 moves an output by at most half a unit a group",
	  a8_quantisation_bound },
	{ 0 },
};
