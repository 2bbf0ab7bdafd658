/* wake.c: the wake-up table, read and interpolated. Invariant: idle_s
 * strictly increases, every entry is finite and >= 0, and n is 0 exactly
 * when both arrays are NULL. */
#include "wake.h"

#include <stdio.h>
#include <stdlib.h>

int wake_read(struct jx *x, json_t *obj, const char *ptr, struct wake *out)
{
	static const char *const keys[] = { "idle_s", "extra_s", NULL };
	char p[JX_PTR_MAX];
	json_t *v = json_object_get(obj, "wake");
	size_t ne = 0;

	*out = (struct wake){ 0 };
	if (!v)
		return 0;
	jx_child(p, ptr, "wake");
	if (jx_object(x, v, p, keys) < 0 ||
	    jx_nums(x, v, p, "idle_s", JX_NONNEG, 1, &out->idle_s,
		    &out->n) < 0 ||
	    jx_nums(x, v, p, "extra_s", JX_NONNEG, -1, &out->extra_s,
		    &ne) < 0) {
		wake_release(out);
		return -1;
	}
	if (ne != out->n) {
		char got[64], ep[JX_PTR_MAX];

		snprintf(got, sizeof(got), "%zu numbers, one an idle_s", out->n);
		wake_release(out);
		return jx_fail(x, jx_child(ep, p, "extra_s"), got,
			       json_object_get(v, "extra_s"));
	}
	return 0;
}

void wake_release(struct wake *w)
{
	free(w->idle_s);
	free(w->extra_s);
	*w = (struct wake){ 0 };
}

double wake_extra_s(const struct wake *w, double idle_s)
{
	double x0 = 0, y0 = 0;

	if (!w->n || idle_s <= 0)
		return 0;
	for (size_t i = 0; i < w->n; i++) {
		double x1 = w->idle_s[i], y1 = w->extra_s[i];

		if (idle_s <= x1)
			return x1 > x0 ? y0 + (y1 - y0) * (idle_s - x0) / (x1 - x0)
				       : y1;
		x0 = x1;
		y0 = y1;
	}
	return y0;
}
