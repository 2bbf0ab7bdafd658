/* vtab.c: reading a verify-cost table.
 *
 * A table is {"kind": "verify", "gpu": NAME, "model": SHAPE, "tokens": [t0 <
 * t1 < ...], "ctx": [c0 < c1 < ...],
 * "seconds": [[s(t0,c0), s(t0,c1), ...], ...]}, every time > 0 and
 * non-decreasing in tokens; sec[i * nc + j] = s(tok[i], ctx[j]). */
#include "vtab.h"

#include "jx.h"
#include "mem.h"
#include "prof.h"

#include <stdlib.h>
#include <string.h>

int vtab_parse(struct vtab *c, json_t *doc, const char *path,
	       const char *model, struct err *e)
{
	static const char *const keys[] = { "kind", "gpu", "model", "calibrated",
		"method", "tokens", "ctx", "seconds", "provenance", NULL };
	static const char *const kinds[] = { "verify", NULL };
	struct jx x = { .file = path, .err = e };
	json_t *rows;
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
	rows = json_object_get(doc, "seconds");
	if (!json_is_array(rows) || json_array_size(rows) != c->nt) {
		jx_fail(&x, "/seconds", "an array with a row per entry of "
			"/tokens", rows);
		goto out;
	}
	c->sec = xcalloc(c->nt * c->nc, sizeof(double));
	for (size_t i = 0; i < c->nt; i++) {
		json_t *row = json_array_get(rows, i);
		char p[JX_PTR_MAX], q[JX_PTR_MAX];

		jx_index(p, "/seconds", i);
		if (!json_is_array(row) || json_array_size(row) != c->nc) {
			jx_fail(&x, p, "an array with a time per entry of /ctx",
				row);
			goto out;
		}
		for (size_t j = 0; j < c->nc; j++) {
			json_t *v = json_array_get(row, j);
			double s = json_number_value(v);

			if (!json_is_number(v) || !(s > 0) ||
			    (i && s < c->sec[(i - 1) * c->nc + j])) {
				jx_fail(&x, jx_index(q, p, j), "a time > 0 s, "
					"not less than the one for fewer tokens",
					v);
				goto out;
			}
			c->sec[i * c->nc + j] = s;
		}
	}
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
	free(t->gpu);
	*t = (struct vtab){ 0 };
}
