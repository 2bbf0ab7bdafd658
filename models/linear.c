/* linear.c: formats of a layer and their products.
 *
 * A layer holds its weights in exactly one format's buffer (f32, f16, q8
 * or q4; the others empty); lin_convert, from FP32 only, frees the FP32.
 * a8, the W4A16 weights packed once for a kernel set's integer path,
 * exists only beside q4 of a W4A16 layer (lin_pack_a8 makes no other):
 * lin_apply reads it where it is, of the same kernel set, for the integer
 * path (which packs at each call where not) and for the exact products
 * from digits where the set has them on panels (kern_q4_gemm_packed,
 * which takes q4's rows where not). */
#include "linear.h"

#include "err.h"
#include "mem.h"
#include "f16.h"

#include <stdlib.h>
#include <string.h>

const struct lin_format_info lin_formats[LIN_NFORMATS] = {
	[LIN_F32] = { "f32", "fp32", false, 32, "fp32" },
	[LIN_F16] = { "f16", "fp16", false, 16, "fp16" },
	[LIN_W8A16] = { "w8a16", NULL, false, 8 + 16.0 / 32, "fp16" },
	[LIN_W4A16] = { "w4a16", NULL, true, 4, "fp16" },
	[LIN_W4A4] = { "w4a4", NULL, true, 4, "int4" },
};

int lin_format_find(const char *s, enum lin_format *f)
{
	for (int i = 0; i < LIN_NFORMATS; i++) {
		const struct lin_format_info *r = &lin_formats[i];

		if (!strcmp(s, r->name) || (r->alias && !strcmp(s, r->alias))) {
			*f = (enum lin_format)i;
			return 0;
		}
	}
	return -1;
}

double lin_format_bits(enum lin_format f, int group)
{
	return lin_formats[f].bits + (lin_formats[f].grouped ? 32.0 / group : 0);
}

void lin_init_f32(struct linear *l, float *w, int n, int k)
{
	memset(l, 0, sizeof(*l));
	l->format = LIN_F32;
	l->n = n;
	l->k = k;
	l->f32 = w;
}

void lin_init_from(struct linear *l, const float *w, int n, int k,
		   enum lin_format f, int group, enum q4_kind kind,
		   const struct kern *kn, struct kpool *p)
{
	const size_t nk = (size_t)n * k;

	HS_ASSERT(f != LIN_F32);
	memset(l, 0, sizeof(*l));
	l->format = f;
	l->n = n;
	l->k = k;
	switch (f) {
	case LIN_F32: /* asserted above */
		break;
	case LIN_F16:
		l->f16 = xcalloc64(sizeof(uint16_t) * nk);
		kern_to_f16(kn, w, nk, l->f16);
		break;
	case LIN_W8A16:
		q8_init(&l->q8, n, k);
		q8_quantize(&l->q8, w);
		break;
	case LIN_W4A16:
	case LIN_W4A4:
		q4_init(&l->q4, n, k, group);
		kern_q4_quantize(kn, p, &l->q4, w, kind);
		break;
	}
}

void lin_convert(struct linear *l, enum lin_format f, int group,
		 enum q4_kind kind, const struct kern *kn, struct kpool *p)
{
	float *w = l->f32;

	HS_ASSERT(l->format == LIN_F32);
	if (f == LIN_F32)
		return;
	lin_init_from(l, w, l->n, l->k, f, group, kind, kn, p);
	free(w);
}

void lin_release(struct linear *l)
{
	free(l->f32);
	free(l->f16);
	if (l->q8.data)
		q8_release(&l->q8);
	if (l->q4.data)
		q4_release(&l->q4);
	kern_a8w_free(l->a8);
	memset(l, 0, sizeof(*l));
}

void lin_pack_a8(struct linear *l, const struct kern *kn, struct kpool *p)
{
	kern_a8w_free(l->a8);
	l->a8 = l->format == LIN_W4A16 && kn && kn->a8_run ?
			kern_a8w_new(kn, p, &l->q4) : NULL;
}

float *lin_weights(const struct linear *l)
{
	float *w = xmalloc(sizeof(float) * (size_t)l->n * l->k);

	switch (l->format) {
	case LIN_F32:
		memcpy(w, l->f32, sizeof(float) * (size_t)l->n * l->k);
		break;
	case LIN_F16:
		for (size_t i = 0; i < (size_t)l->n * l->k; i++)
			w[i] = f16_to_f32(l->f16[i]);
		break;
	case LIN_W8A16:
		q8_dequantize(&l->q8, w);
		break;
	case LIN_W4A16:
	case LIN_W4A4:
		q4_dequantize(&l->q4, w);
		break;
	}
	return w;
}

void lin_apply(const struct linear *l, const float *x, int m, float *y,
	       const struct kern *kn, struct kpool *p, bool int8)
{
	uint16_t *xh;

	if (l->format == LIN_F32) {
		kern_f32_gemm(kn, p, l->f32, l->n, l->k, x, m, y);
		return;
	}
	xh = xmalloc(sizeof(uint16_t) * (size_t)m * l->k);
	kern_to_f16(kn, x, (size_t)m * l->k, xh);
	switch (l->format) {
	case LIN_F16:
		kern_f16_gemm(kn, p, l->f16, l->n, l->k, xh, m, y);
		break;
	case LIN_W8A16:
		kern_q8_gemm(kn, p, &l->q8, xh, m, y);
		break;
	case LIN_W4A4:
		q4_quantize_activations(xh, m, l->k);
		kern_q4_gemm(kn, p, &l->q4, xh, m, y);
		break;
	case LIN_W4A16:
		if (int8 && kn->a8_run)
			kern_q4_gemm_a8(kn, p, &l->q4, l->a8 && l->a8->kn == kn ?
					l->a8 : NULL, xh, m, y);
		else
			kern_q4_gemm_packed(kn, p, &l->q4, l->a8, xh, m, y);
		break;
	case LIN_F32:
		break;
	}
	free(xh);
}
