/* vtab.c: reading a verify-cost table.
 *
 * A table is {"kind": "verify", "gpu": NAME, "model": SHAPE, "tokens": [t0 <
 * t1 < ...], "ctx": [c0 < c1 < ...],
 * "seconds": [[s(t0,c0), s(t0,c1), ...], ...]}, every time > 0 and
 * non-decreasing in tokens; sec[i * nc + j] = s(tok[i], ctx[j]); and
 * optionally "prefill_seconds" on the same grid (pre[i * nc + j]): a
 * prompt's chunk of that many tokens at that context, no logits. */
#include "vtab.h"

#include "jx.h"
#include "mem.h"
#include "prof.h"

#include <stdlib.h>
#include <string.h>

/* doc's grid `key` (a row per entry of c's tokens, a time per entry of
 * its contexts, > 0 and non-decreasing in tokens) into *out (owned by c) */
static int grid(struct jx *x, json_t *doc, const char *key,
		const struct vtab *c, double **out)
{
	json_t *rows = json_object_get(doc, key);
	char at[JX_PTR_MAX];
	double *g;

	snprintf(at, sizeof(at), "/%s", key);
	if (!json_is_array(rows) || json_array_size(rows) != c->nt)
		return jx_fail(x, at, "an array with a row per entry of "
			       "/tokens", rows);
	*out = g = xcalloc(c->nt * c->nc, sizeof(double));
	for (size_t i = 0; i < c->nt; i++) {
		json_t *row = json_array_get(rows, i);
		char p[JX_PTR_MAX], q[JX_PTR_MAX];

		jx_index(p, at, i);
		if (!json_is_array(row) || json_array_size(row) != c->nc)
			return jx_fail(x, p, "an array with a time per entry "
				       "of /ctx", row);
		for (size_t j = 0; j < c->nc; j++) {
			json_t *v = json_array_get(row, j);
			double s = json_number_value(v);

			if (!json_is_number(v) || !(s > 0) ||
			    (i && s < g[(i - 1) * c->nc + j]))
				return jx_fail(x, jx_index(q, p, j), "a time > 0 s, "
					       "not less than the one for fewer "
					       "tokens", v);
			g[i * c->nc + j] = s;
		}
	}
	return 0;
}

int vtab_parse(struct vtab *c, json_t *doc, const char *path,
	       const char *model, struct err *e)
{
	static const char *const keys[] = { "kind", "gpu", "model", "calibrated",
		"method", "tokens", "ctx", "seconds", "prefill_seconds",
		"prefill_method", "provenance", NULL };
	static const char *const kinds[] = { "verify", NULL };
	struct jx x = { .file = path, .err = e };
	const char *gpu, *tmodel;
	char want[96];
	int kind, rc = -1;

	*c = (struct vtab){ 0 };
	if (prof_kind_check(path, doc, "verify", e) < 0 ||
	    jx_object(&x, doc, "", keys) < 0 ||
	    jx_enum(&x, doc, "", "kind", kinds, "verify", &kind) < 0 ||
	    jx_str(&x, doc, "", "model", model, &tmodel) < 0)
		goto out;
	if (strcmp(tmodel, model)) {
		snprintf(want, sizeof(want), "\"%s\", the config's /cloud/model",
			 model);
		jx_fail(&x, "/model", want, json_object_get(doc, "model"));
		goto out;
	}
	if (jx_str(&x, doc, "", "gpu", NULL, &gpu) < 0 ||
	    jx_nums(&x, doc, "", "tokens", JX_POS, 1, &c->tok, &c->nt) < 0 ||
	    jx_nums(&x, doc, "", "ctx", JX_POS, 1, &c->ctx, &c->nc) < 0)
		goto out;
	c->gpu = xstrdup(gpu);
	if (grid(&x, doc, "seconds", c, &c->sec) < 0 ||
	    (json_object_get(doc, "prefill_seconds") &&
	     grid(&x, doc, "prefill_seconds", c, &c->pre) < 0))
		goto out;
	rc = 0;
out:
	if (rc < 0)
		vtab_release(c);
	return rc;
}

int vtab_load(struct vtab *t, const char *path, const char *model,
	      struct err *e)
{
	json_t *doc = jx_load(path, e);
	int rc;

	*t = (struct vtab){ 0 };
	if (!doc)
		return -1;
	rc = vtab_parse(t, doc, path, model, e);
	json_decref(doc);
	return rc;
}

void vtab_release(struct vtab *t)
{
	free(t->tok);
	free(t->ctx);
	free(t->sec);
	free(t->pre);
	free(t->gpu);
	*t = (struct vtab){ 0 };
}
