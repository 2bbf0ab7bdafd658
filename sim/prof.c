/* prof.c: strict readers of edge and acceptance profiles.
 *
 * The readers check what the simulator relies on and what a hand-edited or
 * truncated profile gets wrong: every field present, tables with strictly
 * increasing axes and positive times (prefill times non-decreasing in
 * tokens), a fit without negative terms, the model's dimensions equal to
 * those of its named shape, and an acceptance trace whose mean is the alpha
 * the profile states. */
#include "prof.h"

#include "accept.h"
#include "fs.h"
#include "jx.h"
#include "shape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <glob.h>
#include <string.h>
#include <unistd.h>

static int read_provenance(struct jx *x, json_t *doc)
{
	static const char *const keys[] = { "machine", "cpu", "date", "commit",
		"command", "note", "build", NULL };
	json_t *v = json_object_get(doc, "provenance");
	const char *s;

	if (!v)
		return jx_fail(x, "/provenance", "an object with machine, date, "
			       "commit and command", NULL);
	return jx_object(x, v, "/provenance", keys) < 0 ||
	       jx_str(x, v, "/provenance", "machine", NULL, &s) < 0 ||
	       jx_str(x, v, "/provenance", "date", NULL, &s) < 0 ||
	       jx_str(x, v, "/provenance", "commit", NULL, &s) < 0 ||
	       jx_str(x, v, "/provenance", "command", NULL, &s) < 0 ||
	       jx_str(x, v, "/provenance", "build", "", &s) < 0 ? -1 : 0;
}

/* /model: its dimensions must be those of its name when the name is a
 * shape hybridspec knows. */
static int read_model(struct jx *x, json_t *doc, struct prof_edge *p)
{
	static const char *const keys[] = { "name", "dim", "hidden", "layers",
		"heads", "kv_heads", "vocab", "weights", "path", NULL };
	static const char *const weights[] = { "trained", "synthetic", "none",
					       NULL };
	static const char *const dims[] = { "dim", "hidden", "layers", "heads",
		"kv_heads", "vocab" };
	json_t *v = json_object_get(doc, "model");
	const struct shape *s;
	const char *name;
	long long d[6];
	int w;

	if (!json_is_object(v))
		return jx_fail(x, "/model", "an object", v);
	if (jx_object(x, v, "/model", keys) < 0 ||
	    jx_str(x, v, "/model", "name", NULL, &name) < 0 ||
	    jx_enum(x, v, "/model", "weights", weights, NULL, &w) < 0)
		return -1;
	for (int i = 0; i < 6; i++)
		if (jx_int(x, v, "/model", dims[i], 1, 1 << 24, JX_REQUIRED_INT,
			   &d[i]) < 0)
			return -1;
	if ((s = shape_find(name))) {
		const int want[6] = { s->dim, s->hidden, s->n_layers, s->n_heads,
				      s->n_kv_heads, s->vocab };

		for (int i = 0; i < 6; i++)
			if (d[i] != want[i]) {
				char p_[JX_PTR_MAX], msg[96];

				snprintf(msg, sizeof(msg), "%d, the %s of %s",
					 want[i], dims[i], name);
				return jx_fail(x, jx_child(p_, "/model", dims[i]),
					       msg, json_object_get(v, dims[i]));
			}
	}
	snprintf(p->model, sizeof(p->model), "%s", name);
	p->vocab = (int)d[5];
	return 0;
}

/* obj at ptr = {axis: [...], "seconds": [...]} of equal lengths; times > 0,
 * non-decreasing when monotone. */
static int read_series(struct jx *x, json_t *doc, const char *key,
		       const char *axis, bool monotone)
{
	const char *keys[] = { axis, "seconds", NULL };
	json_t *v = json_object_get(doc, key);
	double *a = NULL, *t = NULL;
	size_t na, nt;
	char p[JX_PTR_MAX], q[JX_PTR_MAX];
	int rc = -1;

	jx_child(p, "", key);
	if (!json_is_object(v))
		return jx_fail(x, p, "an object", v);
	if (jx_object(x, v, p, keys) < 0 ||
	    jx_nums(x, v, p, axis, JX_POS, 1, &a, &na) < 0 ||
	    jx_nums(x, v, p, "seconds", JX_POS, monotone ? 0 : -1, &t, &nt) < 0)
		goto out;
	if (nt != na) {
		char want[64];

		snprintf(want, sizeof(want), "%zu times, one per entry of %s",
			 na, axis);
		jx_fail(x, jx_child(q, p, "seconds"), want,
			json_object_get(v, "seconds"));
		goto out;
	}
	rc = 0;
out:
	free(a);
	free(t);
	return rc;
}

/* The optional "power": busy_w required in it, idle_w and battery_wh
 * where known, and the source of the figures. Nothing is added to doc. */
static int read_power(struct jx *x, json_t *doc, struct prof_edge *p)
{
	static const char *const keys[] = { "busy_w", "idle_w", "battery_wh",
		"source", NULL };
	json_t *v = json_object_get(doc, "power");
	const char *src;

	if (!v)
		return 0;
	if (!json_is_object(v))
		return jx_fail(x, "/power", "an object", v);
	return jx_object(x, v, "/power", keys) < 0 ||
	       jx_num(x, v, "/power", "busy_w", JX_POS, JX_REQUIRED,
		      &p->power_busy_w) < 0 ||
	       (json_object_get(v, "idle_w") &&
		jx_num(x, v, "/power", "idle_w", JX_NONNEG, JX_REQUIRED,
		       &p->power_idle_w) < 0) ||
	       (json_object_get(v, "battery_wh") &&
		jx_num(x, v, "/power", "battery_wh", JX_POS, JX_REQUIRED,
		       &p->battery_wh) < 0) ||
	       jx_str(x, v, "/power", "source", NULL, &src) < 0 ? -1 : 0;
}

static int read_fit(struct jx *x, json_t *doc, struct prof_edge *p)
{
	static const char *const keys[] = { "draft_base_s", "draft_per_ctx_s",
		"prefill_base_s", "prefill_per_token_s",
		"draft_max_rel_residual", "prefill_max_rel_residual",
		"draft_pair_s", NULL };
	json_t *v = json_object_get(doc, "fit");
	double r;

	if (!json_is_object(v))
		return jx_fail(x, "/fit", "an object", v);
	return jx_object(x, v, "/fit", keys) < 0 ||
	       jx_num(x, v, "/fit", "draft_base_s", JX_POS, JX_REQUIRED,
		      &p->draft_base_s) < 0 ||
	       jx_num(x, v, "/fit", "draft_per_ctx_s", JX_NONNEG, JX_REQUIRED,
		      &p->draft_per_ctx_s) < 0 ||
	       jx_num(x, v, "/fit", "prefill_base_s", JX_NONNEG, JX_REQUIRED,
		      &p->prefill_base_s) < 0 ||
	       jx_num(x, v, "/fit", "prefill_per_token_s", JX_POS, JX_REQUIRED,
		      &p->prefill_per_token_s) < 0 ||
	       jx_num(x, v, "/fit", "draft_pair_s", JX_NONNEG, 0,
		      &p->draft_pair_s) < 0 ||
	       jx_num(x, v, "/fit", "draft_max_rel_residual", JX_NONNEG,
		      JX_REQUIRED, &r) < 0 ||
	       jx_num(x, v, "/fit", "prefill_max_rel_residual", JX_NONNEG,
		      JX_REQUIRED, &r) < 0 ? -1 : 0;
}

int prof_kind_check(const char *file, const json_t *doc, const char *want,
		    struct err *e)
{
	static const char *const kinds[][2] = {
		{ "edge", "an edge profile" },
		{ "acceptance", "an acceptance profile" },
		{ "verify", "a verify-cost table" },
		{ "published-acceptance", "a published acceptance figure" },
	};
	const char *got = json_string_value(json_object_get(doc, "kind"));
	const char *got_what = NULL, *want_what = NULL;

	if (!got || !strcmp(got, want))
		return 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!strcmp(kinds[i][0], got))
			got_what = kinds[i][1];
		if (!strcmp(kinds[i][0], want))
			want_what = kinds[i][1];
	}
	HS_ASSERT(want_what != NULL);
	if (!got_what)
		return 0;
	return err_set(e, "%s: %s (\"kind\": \"%s\"), where %s was expected",
		       file, got_what, got, want_what);
}

const char *const prof_band_names[PROF_NBANDS] = { "decode", "prefill" };

/* A derived profile's held-out bands, where its derivation has them
 * (calib derive writes them; older profiles lack them; a band of no
 * figures has no ends) */
static int read_bands(struct jx *x, json_t *doc, struct prof_edge *p)
{
	const struct jx_range above = { -1, INFINITY, true, false };

	for (int k = 0; k < PROF_NBANDS; k++) {
		struct prof_band *b = &p->band[k];
		char ptr[64];
		json_t *v;

		snprintf(ptr, sizeof(ptr), "/derivation/held_out/%s",
			 prof_band_names[k]);
		v = jx_at(doc, ptr);
		if (!v)
			continue;
		if (!json_is_object(v))
			return jx_fail(x, ptr, "an object: the held-out errors' "
				       "lowest and highest", v);
		/* a band of no figures has no ends */
		if (!json_object_get(v, "lowest") &&
		    json_is_integer(json_object_get(v, "figures")) &&
		    !json_integer_value(json_object_get(v, "figures")))
			continue;
		if (jx_num(x, v, ptr, "lowest", above, JX_REQUIRED,
			   &b->lowest) < 0 ||
		    jx_num(x, v, ptr, "highest", above, JX_REQUIRED,
			   &b->highest) < 0)
			return -1;
		if (b->highest < b->lowest) {
			jx_fail(x, ptr, "highest no lower than lowest", v);
			return -1;
		}
		b->has = true;
	}
	return 0;
}

int prof_edge_parse(json_t *doc, const char *path, struct prof_edge *p,
		    struct err *e)
{
	static const char *const keys[] = { "kind", "device", "derived",
		"derivation", "model", "quant", "threads", "kernel",
		"prefill_activations", "decode_activations", "stream_gbs",
		"peak_gflops", "int8_gops",
		"draft", "prefill", "fit", "power", "provenance", NULL };
	static const char *const kinds[] = { "edge", NULL };
	static const char *const acts_keys[] = { "prefill_activations",
						 "decode_activations", NULL };
	struct jx x = { .file = path, .err = e };
	const char *s;
	long long threads;
	double gbs, gflops;
	int kind;

	*p = (struct prof_edge){ 0 };
	if (prof_kind_check(path, doc, "edge", e) < 0 ||
	    jx_object(&x, doc, "", keys) < 0 ||
	    jx_enum(&x, doc, "", "kind", kinds, NULL, &kind) < 0 ||
	    jx_str(&x, doc, "", "device", NULL, &s) < 0 ||
	    jx_bool(&x, doc, "", "derived", -1, &p->derived) < 0)
		return -1;
	snprintf(p->device, sizeof(p->device), "%s", s);
	if (p->derived && !json_is_object(json_object_get(doc, "derivation"))) {
		jx_fail(&x, "/derivation", "an object saying how the profile "
			"was derived (it says \"derived\": true)",
			json_object_get(doc, "derivation"));
		return -1;
	}
	if (read_model(&x, doc, p) < 0 ||
	    jx_str(&x, doc, "", "quant", NULL, &s) < 0 ||
	    jx_int(&x, doc, "", "threads", 1, 1 << 16, JX_REQUIRED_INT,
		   &threads) < 0 ||
	    jx_num(&x, doc, "", "stream_gbs", JX_POS, JX_REQUIRED, &gbs) < 0 ||
	    jx_num(&x, doc, "", "peak_gflops", JX_POS, JX_REQUIRED, &gflops) < 0 ||
	    read_series(&x, doc, "draft", "ctx", false) < 0 ||
	    read_series(&x, doc, "prefill", "tokens", true) < 0 ||
	    read_fit(&x, doc, p) < 0 || read_power(&x, doc, p) < 0 ||
	    read_provenance(&x, doc) < 0)
		return -1;
	if (read_bands(&x, doc, p) < 0)
		return -1;
	p->stream_Bps = 1e9 * gbs;
	p->peak_flops = 1e9 * gflops;
	/* checked where given (calib derive reads them); profiles written
	 * before the integer path lack them */
	if (json_object_get(doc, "int8_gops") &&
	    jx_num(&x, doc, "", "int8_gops", JX_NONNEG, JX_REQUIRED, &gbs) < 0)
		return -1;
	/* each optional: profiles before int8 draft steps lack the second */
	for (const char *const *k = acts_keys; *k; k++) {
		static const char *const acts[] = { "int8", "fp16", "fp32",
						    "int4", NULL };
		int a;

		if (json_object_get(doc, *k) &&
		    jx_enum(&x, doc, "", *k, acts, NULL, &a) < 0)
			return -1;
	}
	return 0;
}

int prof_edge_load(const char *path, struct prof_edge *p, struct err *e)
{
	json_t *doc = jx_load(path, e);
	int rc;

	*p = (struct prof_edge){ 0 };
	if (!doc)
		return -1;
	rc = prof_edge_parse(doc, path, p, e);
	json_decref(doc);
	return rc;
}

int prof_accept_load(const char *path, struct prof_accept *p, struct err *e)
{
	static const char *const keys[] = { "kind", "target", "draft",
		"target_quant", "draft_quant", "text", "tokens", "ppl",
		"ppl_draft", "alpha_greedy", "alpha_stochastic", "temperature",
		"mean_accepted_per_gamma", "window", "burst", "bits", "provenance",
		NULL };
	static const char *const kinds[] = { "acceptance", NULL };
	struct jx x = { .file = path, .err = e };
	json_t *doc = jx_load(path, e), *ea;
	struct acc_trace t;
	const char *bits;
	double d;
	int kind, rc = -1;

	*p = (struct prof_accept){ 0 };
	if (!doc)
		return -1;
	if (prof_kind_check(path, doc, "acceptance", e) < 0 ||
	    jx_object(&x, doc, "", keys) < 0 ||
	    jx_enum(&x, doc, "", "kind", kinds, NULL, &kind) < 0 ||
	    jx_num(&x, doc, "", "alpha_greedy", JX_UNIT, JX_REQUIRED,
		   &p->alpha) < 0 ||
	    jx_num(&x, doc, "", "alpha_stochastic", JX_UNIT, JX_REQUIRED,
		   &d) < 0 ||
	    jx_str(&x, doc, "", "bits", NULL, &bits) < 0)
		goto out;
	ea = json_object_get(doc, "mean_accepted_per_gamma");
	if (!json_is_object(ea) || json_object_size(ea) == 0 ||
	    json_object_size(ea) > 64) {
		jx_fail(&x, "/mean_accepted_per_gamma", "an object of 1 to 64 "
			"entries \"1\", \"2\", ...", ea);
		goto out;
	}
	for (int g = 1; g <= (int)json_object_size(ea); g++) {
		char key[16];

		snprintf(key, sizeof(key), "%d", g);
		if (jx_num(&x, ea, "/mean_accepted_per_gamma", key,
			   (struct jx_range){ 1, g + 1, false, false },
			   JX_REQUIRED, &p->mean_accepted[g]) < 0)
			goto out;
		p->max_gamma = g;
	}
	if (read_provenance(&x, doc) < 0)
		goto out;
	{
		const char *draft = json_string_value(json_object_get(doc, "draft"));
		const char *target = json_string_value(json_object_get(doc, "target"));
		const char *txt = json_string_value(json_object_get(doc, "text"));
		const char *base = txt && strrchr(txt, '/') ? strrchr(txt, '/') + 1 : txt;

		snprintf(p->source, sizeof(p->source), "%s against %s on %s",
			 draft ? draft : "a draft", target ? target : "its target",
			 base ? base : "a text");
		/* the models, their formats (NAME:Q) apart */
		snprintf(p->target, sizeof(p->target), "%.*s",
			 target ? (int)strcspn(target, ":") : 0,
			 target ? target : "");
		snprintf(p->draft, sizeof(p->draft), "%.*s",
			 draft ? (int)strcspn(draft, ":") : 0, draft ? draft : "");
	}
	jx_path(&x, bits, p->bits, sizeof(p->bits));
	if (acc_trace_load(&t, p->bits, e) < 0)
		goto out;
	d = t.alpha;
	acc_trace_release(&t);
	/* the trace is the greedy agreement the profile averages: equal to
	 * the printed digits */
	if (fabs(d - p->alpha) > 1e-6) {
		char want[1100];

		snprintf(want, sizeof(want), "%.6f, the mean of the bits in %s",
			 d, p->bits);
		jx_fail(&x, "/alpha_greedy", want,
			json_object_get(doc, "alpha_greedy"));
		goto out;
	}
	rc = 0;
out:
	json_decref(doc);
	return rc;
}

const char *prof_published_dir(void)
{
	static char dir[4200];
	const char *d = getenv("HYBRIDSPEC_ACCEPTANCE");

	return d && *d ? d : fs_repo_dir("results/calib/acceptance", dir,
					 sizeof(dir));
}

/* ", NAME" for each figure in dir, into buf */
static void published_names(const char *dir, char *buf, size_t n)
{
	char pat[4300];
	size_t at = 0;
	glob_t gl;

	*buf = 0;
	snprintf(pat, sizeof(pat), "%s/*.json", dir);
	if (glob(pat, 0, NULL, &gl) != 0)
		return;
	for (size_t i = 0; i < gl.gl_pathc && at + 80 < n; i++) {
		const char *b = strrchr(gl.gl_pathv[i], '/') + 1;

		at += (size_t)snprintf(buf + at, n - at, "%s%.*s", i ? ", " : "",
				       (int)(strlen(b) - 5), b);
	}
	globfree(&gl);
}

int prof_published_load(const char *name, struct prof_published *p,
			struct err *e)
{
	static const char *const keys[] = { "kind", "name", "target", "draft",
		"target_shape", "draft_shape", "draft_quant", "dataset",
		"sampling", "metric", "value", "gamma", "alpha", "alpha_from",
		"source", "quote", "tier", NULL };
	static const char *const kinds[] = { "published-acceptance", NULL };
	const char *dir = prof_published_dir(), *target, *draft, *src, *ts, *ds;
	const char *text;
	double num;
	char path[4300], known[1024];
	struct jx x = { .file = path, .err = e };
	json_t *doc;
	int kind, rc = -1;

	*p = (struct prof_published){ 0 };
	if (!*name || strchr(name, '/') || strlen(name) >= sizeof(p->name))
		return err_set(e, "'%s': expected the name of a published figure "
			       "in %s", name, dir);
	snprintf(path, sizeof(path), "%s/%s.json", dir, name);
	if (access(path, F_OK) != 0) {
		published_names(dir, known, sizeof(known));
		return err_set(e, "no published acceptance figure '%s' (known in "
			       "%s: %s)", name, dir, *known ? known : "none");
	}
	if (!(doc = jx_load(path, e)))
		return -1;
	if (jx_object(&x, doc, "", keys) < 0 ||
	    jx_enum(&x, doc, "", "kind", kinds, NULL, &kind) < 0 ||
	    jx_num(&x, doc, "", "alpha", JX_UNIT, JX_REQUIRED, &p->alpha) < 0 ||
	    jx_str(&x, doc, "", "target", NULL, &target) < 0 ||
	    jx_str(&x, doc, "", "draft", NULL, &draft) < 0 ||
	    jx_str(&x, doc, "", "source", NULL, &src) < 0 ||
	    jx_str(&x, doc, "", "alpha_from", NULL, &text) < 0 ||
	    jx_str(&x, doc, "", "quote", NULL, &text) < 0 ||
	    jx_str(&x, doc, "", "tier", "", &text) < 0 ||
	    jx_num(&x, doc, "", "value", JX_POS, 1, &num) < 0 ||
	    (!json_is_null(json_object_get(doc, "gamma")) &&
	     jx_num(&x, doc, "", "gamma", JX_POS, 1, &num) < 0))
		goto out;
	ts = json_string_value(json_object_get(doc, "target_shape"));
	ds = json_string_value(json_object_get(doc, "draft_shape"));
	if ((ts && !shape_find(ts)) || (ds && !shape_find(ds))) {
		jx_fail(&x, ts && !shape_find(ts) ? "/target_shape" :
			"/draft_shape", "a built-in shape's name or null",
			json_object_get(doc, ts && !shape_find(ts) ?
					"target_shape" : "draft_shape"));
		goto out;
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->target, sizeof(p->target), "%s", ts ? ts : target);
	snprintf(p->draft, sizeof(p->draft), "%s", ds ? ds : draft);
	snprintf(p->source, sizeof(p->source), "published %s: %.80s against "
		 "%.60s, %.120s", name, draft, target, src);
	rc = 0;
out:
	json_decref(doc);
	return rc;
}
