/* gptq.c: GPTQ-style quantisation (Frantar et al., 2022) into the W4A16
 * format of kernels/q4.h.
 *
 * For a layer W (n x k) with input Hessian H = sum x x^T (k x k, damped by
 * 1% of its mean diagonal), let U be the upper Cholesky factor of H^-1.
 * Columns are quantised in order; entering a group, each row's scale and
 * bias are chosen (as q4_quantize does) from the group's current weights;
 * column j's error e = (w - q(w)) / U[j][j] is then subtracted, times
 * U[j][c], from every later column c of the row. */
#include "gptq.h"
#include "llama.h"

#include "f16.h"
#include "mem.h"

#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct hess {
	const struct linear *l; /* borrowed */
	double *h;              /* (k x k) owned */
};

struct calib {
	struct hess *v;
	int n, cap;
};

static void observe(void *ctx, const struct linear *l, const float *x, int n)
{
	struct calib *c = ctx;
	struct hess *hs = NULL;
	int k = l->k;

	for (int i = 0; i < c->n; i++)
		if (c->v[i].l == l)
			hs = &c->v[i];
	if (!hs) {
		if (c->n == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 16;
			c->v = xrealloc(c->v, sizeof(*c->v) * (size_t)c->cap);
		}
		hs = &c->v[c->n++];
		hs->l = l;
		hs->h = xcalloc((size_t)k * k, sizeof(double));
	}
	for (int t = 0; t < n; t++) {
		const float *xt = x + (size_t)t * k;

		for (int a = 0; a < k; a++) {
			double xa = xt[a];

			if (xa == 0)
				continue;
			for (int b = 0; b <= a; b++)
				hs->h[(size_t)a * k + b] += xa * xt[b];
		}
	}
}

void gptq_layer(struct linear *l, double *h, int group, enum q4_kind kind,
		struct q4_matrix *out)
{
	const int n = l->n, k = l->k;
	gsl_matrix_view H = gsl_matrix_view_array(h, (size_t)k, (size_t)k);
	double damp = 0;
	float *w = l->f32;

	for (int a = 0; a < k; a++)
		for (int b = 0; b < a; b++)
			h[(size_t)b * k + a] = h[(size_t)a * k + b];
	for (int a = 0; a < k; a++)
		damp += h[(size_t)a * k + a];
	damp = 0.01 * damp / k + 1e-8;
	for (int a = 0; a < k; a++) {
		if (h[(size_t)a * k + a] == 0) /* a dead input: its weights go */
			for (int r = 0; r < n; r++)
				w[(size_t)r * k + a] = 0;
		h[(size_t)a * k + a] += damp;
	}
	/* U, upper factor of H^-1: H^-1 = L L^T, U = L^T */
	gsl_set_error_handler_off();
	HS_ASSERT(gsl_linalg_cholesky_decomp1(&H.matrix) == 0);
	HS_ASSERT(gsl_linalg_cholesky_invert(&H.matrix) == 0);
	HS_ASSERT(gsl_linalg_cholesky_decomp1(&H.matrix) == 0);
	q4_init(out, n, k, group);
	for (int r = 0; r < n; r++) {
		float *row = w + (size_t)r * k;
		float s = 0, b = 0;

		for (int j = 0; j < k; j++) {
			double u = gsl_matrix_get(&H.matrix, (size_t)j, (size_t)j);
			float c, q, err;

			if (j % group == 0) {
				/* from the group's weights as the errors so
				 * far have left them */
				const struct q4_head hd = q4_group_head(
					row + j, q4_group_len(out, j / group), kind);

				memcpy(out->data + (size_t)r * out->row_bytes +
					       q4_head_at(out, j / group),
				       &hd, sizeof(hd));
				s = f16_to_f32(hd.scale);
				b = f16_to_f32(hd.bias);
			}
			c = s > 0 ? roundf((row[j] - b) / s) : 0;
			c = c < 0 ? 0 : c > 15 ? 15 : c;
			q4_set(out, r, j, (int)c);
			q = s * c + b;
			err = (float)((row[j] - q) / u);
			/* U upper = L^T: U[j][c] = L[c][j] */
			for (int cc = j + 1; cc < k; cc++)
				row[cc] -= err * (float)gsl_matrix_get(&H.matrix,
								       (size_t)cc,
								       (size_t)j);
		}
	}
}

void gptq_quantize(struct llama *m, enum lin_format f, int group,
			 enum q4_kind kind, const int *calib, int n)
{
	struct calib c = { 0 };
	struct llama_state s;
	int win = m->c.seq_len;
	float *lg = xmalloc(sizeof(float) * (size_t)win * m->c.vocab);

	HS_ASSERT(f == LIN_W4A16 || f == LIN_W4A4);
	m->observe = observe;
	m->observe_ctx = &c;
	llama_state_init(&s, &m->c, win);
	for (int at = 0; at < n; at += win)
		llama_forward(m, &s, calib + at, n - at < win ? n - at : win, 0, lg);
	llama_state_release(&s);
	free(lg);
	m->observe = NULL;
	m->observe_ctx = NULL;
	for (int i = 0; i < c.n; i++) {
		struct linear *l = (struct linear *)c.v[i].l;
		struct q4_matrix q;

		if (l == &m->cls) { /* the classifier keeps its precision */
			free(c.v[i].h);
			continue;
		}
		gptq_layer(l, c.v[i].h, group, kind, &q);
		free(l->f32);
		l->f32 = NULL;
		l->q4 = q;
		l->format = f;
		free(c.v[i].h);
	}
	free(c.v);
}
