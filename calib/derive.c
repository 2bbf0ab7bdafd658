/* derive.c: edge profiles for devices that cannot be run here, from a
 * profile measured here and a device file (results/calib/devices/: the
 * device library; docs/calib.md).
 *
 * Two steps. First the datasheet: a draft step streams every weight once,
 * so its times scale by (STREAM triad here / the device's sustained
 * bandwidth: a measured figure, else DEVICE_STREAM_FRACTION of its DRAM
 * peak); a prefill is bound by arithmetic, so its times scale by the ratio
 * of the peaks of the arithmetic it ran (the int8 dot-product peaks when
 * the profile's blocks took the integer path, else the FP32 FMA peaks).
 * Then the published llama.cpp CPU figures of the device (those "used"):
 * the datasheet profile predicts each (decode: a draft step at context
 * FIGURE_CTX times the figure's weight bytes over the profile model's;
 * prefill: a prompt token times the parameters' ratio), and the median of
 * published over predicted time, for decode and for prefill apart, is the
 * device's correction, applied to every time. A device without a figure
 * takes the median correction of the library's devices that have one.
 * Every step, figure and error goes into the profile's "derivation".
 *
 * A calib_device owns its parsed file (doc); its figures point into it. */
#define _DEFAULT_SOURCE /* DT_REG */
#include "calib.h"

#include "jx.h"
#include "mem.h"
#include "prof.h"
#include "shape.h"
#include "order.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEVICE_STREAM_FRACTION 0.75
#define FIGURE_CTX 64     /* tg128: a mean context of 64 */
#define FIGURE_PROMPT 512 /* pp512: a prefill's base over 512 tokens */

const char *calib_device_dir(void)
{
	const char *d = getenv("HYBRIDSPEC_DEVICES");

	return d && *d ? d : "results/calib/devices";
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **calib_device_names(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = xcalloc(1, sizeof(char *));
	size_t n = 0;

	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len > 5 && !strcmp(de->d_name + len - 5, ".json")) {
			names = xrealloc(names, (n + 2) * sizeof(char *));
			names[n] = xstrdup(de->d_name);
			names[n++][len - 5] = 0;
			names[n] = NULL;
		}
	}
	if (d)
		closedir(d);
	qsort(names, n, sizeof(char *), by_name);
	return names;
}

void calib_device_names_free(char **names)
{
	for (char **p = names; p && *p; p++)
		free(*p);
	free(names);
}

/* obj[key] as an optional positive number: 0 where absent */
static int opt_pos(struct jx *x, json_t *obj, const char *ptr,
		   const char *key, double *out)
{
	*out = 0;
	return json_object_get(obj, key) ?
		       jx_num(x, obj, ptr, key, JX_POS, JX_REQUIRED, out) : 0;
}

static int read_figure(struct jx *x, json_t *v, const char *ptr,
		       struct calib_figure *f)
{
	static const char *const keys[] = { "model", "params", "weight_bytes",
		"quant", "backend", "threads", "test", "tokens_per_s", "source",
		"quote", "note", "use", NULL };
	static const char *const tests[] = { "pp", "tg", NULL };
	const char *s;
	long long th;
	int test;

	if (!json_is_object(v))
		return jx_fail(x, ptr, "an object (a published figure)", v);
	if (jx_object(x, v, ptr, keys) < 0 ||
	    jx_str(x, v, ptr, "model", NULL, &f->model) < 0 ||
	    jx_num(x, v, ptr, "params", JX_POS, JX_REQUIRED, &f->params) < 0 ||
	    jx_num(x, v, ptr, "weight_bytes", JX_POS, JX_REQUIRED,
		   &f->weight_bytes) < 0 ||
	    jx_str(x, v, ptr, "quant", NULL, &f->quant) < 0 ||
	    jx_str(x, v, ptr, "backend", NULL, &f->backend) < 0 ||
	    jx_int(x, v, ptr, "threads", 0, 1024, JX_REQUIRED_INT, &th) < 0 ||
	    jx_enum(x, v, ptr, "test", tests, NULL, &test) < 0 ||
	    jx_num(x, v, ptr, "tokens_per_s", JX_POS, JX_REQUIRED,
		   &f->tokens_per_s) < 0 ||
	    jx_str(x, v, ptr, "source", NULL, &f->source) < 0 ||
	    jx_str(x, v, ptr, "note", "", &s) < 0 ||
	    jx_str(x, v, ptr, "quote", "", &s) < 0 ||
	    jx_bool(x, v, ptr, "use", 1, &f->used) < 0)
		return -1;
	if (!*f->source) {
		char p[JX_PTR_MAX];

		return jx_fail(x, jx_child(p, ptr, "source"),
			       "where the figure was published", NULL);
	}
	f->prefill = test == 0;
	f->threads = (int)th;
	f->used = f->used && !strcmp(f->backend, "cpu");
	return 0;
}

int calib_device_load(struct calib_device *d, const char *name_or_path,
		      const char *dir, struct err *e)
{
	static const char *const keys[] = { "kind", "name", "class", "cpu",
		"memory", "threads", "peak_gbs", "sustained_gbs", "fp32_gflops",
		"int8_gops", "power_busy_w", "power_idle_w", "sources",
		"published", "notes", "why_not", NULL };
	static const char *const kinds[] = { "device", NULL };
	static const char *const classes[] = CALIB_CLASSES;
	struct jx x = { .file = d->path, .err = e };
	json_t *pub, *v;
	long long th;
	int k, cpu_figs = 0;
	size_t i;

	*d = (struct calib_device){ 0 };
	if (strchr(name_or_path, '/') || strstr(name_or_path, ".json")) {
		snprintf(d->path, sizeof(d->path), "%s", name_or_path);
	} else {
		char **names = calib_device_names(dir), known[1024] = "";
		size_t n = 0;
		bool found = false;

		for (char **p = names; *p; p++) {
			found |= !strcmp(*p, name_or_path);
			if (n < sizeof(known) - 80)
				n += (size_t)snprintf(known + n, sizeof(known) - n,
						      "%s%s", p == names ? "" : ", ",
						      *p);
		}
		calib_device_names_free(names);
		if (!found)
			return err_set(e, "unknown device '%s' (known in %s: %s; or "
				       "give a device file)", name_or_path, dir,
				       n ? known : "none"), -1;
		snprintf(d->path, sizeof(d->path), "%s/%s.json", dir, name_or_path);
	}
	if (!(d->doc = jx_load(d->path, e)))
		return -1;
	v = d->doc;
	if (jx_object(&x, v, "", keys) < 0 ||
	    jx_enum(&x, v, "", "kind", kinds, NULL, &k) < 0 ||
	    jx_str(&x, v, "", "name", NULL, &d->name) < 0 ||
	    jx_enum(&x, v, "", "class", classes, NULL, &d->cls) < 0 ||
	    jx_int(&x, v, "", "threads", 1, 1024, JX_REQUIRED_INT, &th) < 0 ||
	    jx_num(&x, v, "", "peak_gbs", JX_POS, JX_REQUIRED, &d->peak_gbs) < 0 ||
	    opt_pos(&x, v, "", "sustained_gbs", &d->sustained_gbs) < 0 ||
	    jx_num(&x, v, "", "fp32_gflops", JX_POS, JX_REQUIRED,
		   &d->fp32_gflops) < 0 ||
	    jx_num(&x, v, "", "int8_gops", JX_NONNEG, 0, &d->int8_gops) < 0 ||
	    opt_pos(&x, v, "", "power_busy_w", &d->power_busy_w) < 0 ||
	    opt_pos(&x, v, "", "power_idle_w", &d->power_idle_w) < 0)
		goto fail;
	if (!json_is_object(json_object_get(v, "sources"))) {
		jx_fail(&x, "/sources", "an object: where each figure comes from",
			json_object_get(v, "sources"));
		goto fail;
	}
	d->threads = (int)th;
	pub = json_object_get(v, "published");
	if (pub && !json_is_array(pub)) {
		jx_fail(&x, "/published", "an array of published figures", pub);
		goto fail;
	}
	if (json_array_size(pub) > CALIB_MAX_FIGURES) {
		jx_fail(&x, "/published", "at most 32 figures", pub);
		goto fail;
	}
	json_array_foreach(pub, i, v) {
		char p[JX_PTR_MAX];

		snprintf(p, sizeof(p), "/published/%zu", i);
		if (read_figure(&x, v, p, &d->fig[d->nfig]) < 0)
			goto fail;
		cpu_figs += d->fig[d->nfig++].used;
	}
	if (!cpu_figs && jx_str(&x, d->doc, "", "why_not", NULL,
				&(const char *){ NULL }) < 0) {
		err_set(e, "%.800s: /why_not: expected why the device has no "
			"published CPU figure to correct by (none of /published "
			"is a used \"cpu\" one)", d->path);
		goto fail;
	}
	return 0;
fail:
	json_decref(d->doc);
	d->doc = NULL;
	return -1;
}

void calib_device_release(struct calib_device *d)
{
	json_decref(d->doc);
	*d = (struct calib_device){ 0 };
}

/* ---- the derivation ---- */

/* What a profile's model weighs: block-layer and classifier weights (the
 * embedding table, of which a step reads one row, left out) and bytes */
struct pmodel {
	double params, bytes;
};

static int profile_model(const json_t *measured, const char *path,
			 struct pmodel *pm, struct err *e)
{
	const json_t *m = json_object_get(measured, "model");
	double dim = json_number_value(json_object_get(m, "dim"));
	double hid = json_number_value(json_object_get(m, "hidden"));
	double layers = json_number_value(json_object_get(m, "layers"));
	double heads = json_number_value(json_object_get(m, "heads"));
	double kvh = json_number_value(json_object_get(m, "kv_heads"));
	double vocab = json_number_value(json_object_get(m, "vocab"));
	struct quant q;

	if (quant_parse(json_string_value(json_object_get(measured, "quant")),
			&q, e) < 0)
		return err_set(e, "%s: /quant: %s", path, e->msg), -1;
	pm->params = layers * (2 * dim * dim + 2 * dim * dim * kvh / heads +
			       3 * dim * hid) + vocab * dim;
	pm->bytes = pm->params * quant_bits(&q) / 8;
	return 0;
}

/* The two scales of step one and their reasons */
struct ratios {
	double bw, compute;
	double dev_gbs;    /* the device's sustained bandwidth taken */
	bool int8;         /* compute is the int8 peaks' ratio */
};

static int ratios(const json_t *measured, const char *path,
		  const struct calib_device *d, struct ratios *r, struct err *e)
{
	double here_gbs = json_number_value(json_object_get(measured,
							    "stream_gbs"));
	double here_fma = json_number_value(json_object_get(measured,
							    "peak_gflops"));
	double here_int8 = json_number_value(json_object_get(measured,
							     "int8_gops"));
	const char *acts = json_string_value(json_object_get(measured,
							      "prefill_activations"));

	r->dev_gbs = d->sustained_gbs ? d->sustained_gbs
				      : DEVICE_STREAM_FRACTION * d->peak_gbs;
	r->bw = here_gbs / r->dev_gbs;
	r->int8 = acts && !strcmp(acts, "int8");
	if (r->int8 && (here_int8 <= 0 || d->int8_gops <= 0))
		return err_set(e, "%s: its prefill took the integer path, but %s",
			       path, here_int8 <= 0 ?
			       "it has no int8_gops (measure it again)" :
			       "the device file gives no int8_gops"), -1;
	r->compute = r->int8 ? here_int8 / d->int8_gops
			     : here_fma / d->fp32_gflops;
	return 0;
}

/* seconds a token of figure f by a profile with fit (draft base and slope,
 * prefill per token, already scaled) */
static double predict_s(const struct calib_figure *f, const double fit[4],
			const struct pmodel *pm)
{
	if (f->prefill)
		return (fit[2] / FIGURE_PROMPT + fit[3]) * f->params / pm->params;
	return (fit[0] + FIGURE_CTX * fit[1]) * f->weight_bytes / pm->bytes;
}

/* The device's correction for prefill (which 1) or decode (0): the median
 * of published over datasheet-predicted seconds over its used figures but
 * `skip` (-1: none); 0 when it has none */
static double own_factor(const struct calib_device *d, int which,
			 const double fit[4], const struct pmodel *pm, int skip)
{
	double v[CALIB_MAX_FIGURES];
	int n = 0;

	for (int i = 0; i < d->nfig; i++)
		if (d->fig[i].used && d->fig[i].prefill == which && i != skip)
			v[n++] = 1 / d->fig[i].tokens_per_s /
				 predict_s(&d->fig[i], fit, pm);
	return n ? order_median(v, (size_t)n) : 0;
}

/* fit[] of `measured` scaled by the ratios */
static void datasheet_fit(const json_t *measured, const struct ratios *r,
			  double fit[4])
{
	const json_t *f = json_object_get(measured, "fit");

	fit[0] = r->bw * json_number_value(json_object_get(f, "draft_base_s"));
	fit[1] = r->bw * json_number_value(json_object_get(f, "draft_per_ctx_s"));
	fit[2] = r->compute * json_number_value(json_object_get(f,
								 "prefill_base_s"));
	fit[3] = r->compute * json_number_value(json_object_get(f,
								 "prefill_per_token_s"));
}

/* The library's correction: the median over its devices (but the one
 * named skip) of each one's own correction; 0 where none has figures.
 * n[which] gets how many devices it came from. */
static void library_factor(const json_t *measured, const char *path,
			   const char *dir, const char *skip, double out[2],
			   int n[2])
{
	char **names = calib_device_names(dir);
	double v[2][64];
	struct pmodel pm;
	struct err e;

	n[0] = n[1] = 0;
	if (profile_model(measured, path, &pm, &e) == 0)
		for (char **p = names; *p; p++) {
			struct calib_device d;
			struct ratios r;
			double fit[4];

			if (calib_device_load(&d, *p, dir, &e) < 0)
				continue; /* a bad file is named when used */
			if (strcmp(d.name, skip) &&
			    ratios(measured, path, &d, &r, &e) == 0) {
				datasheet_fit(measured, &r, fit);
				for (int w = 0; w < 2; w++) {
					double f = own_factor(&d, w, fit, &pm, -1);

					if (f > 0 && n[w] < 64)
						v[w][n[w]++] = f;
				}
			}
			calib_device_release(&d);
		}
	calib_device_names_free(names);
	for (int w = 0; w < 2; w++)
		out[w] = n[w] ? order_median(v[w], (size_t)n[w]) : 0;
}

/* a copy of {axis, seconds} with every time multiplied by r */
static json_t *scaled(const json_t *series, const char *axis, double r)
{
	json_t *t = json_array(), *src = json_object_get(series, "seconds");
	size_t i;
	json_t *v;

	json_array_foreach(src, i, v)
		json_array_append_new(t, json_real(json_number_value(v) * r));
	return json_pack("{s:O,s:o}", axis, json_object_get(series, axis),
			 "seconds", t);
}

int calib_device_errors(const json_t *measured, const char *path,
			const struct calib_device *d, const char *dir,
			struct calib_error *out, struct err *e)
{
	struct pmodel pm;
	struct ratios r;
	double fit[4], lib[2], all[2];
	int nlib[2], n = 0;

	if (profile_model(measured, path, &pm, e) < 0 ||
	    ratios(measured, path, d, &r, e) < 0)
		return -1;
	datasheet_fit(measured, &r, fit);
	library_factor(measured, path, dir, d->name, lib, nlib);
	for (int w = 0; w < 2; w++)
		all[w] = own_factor(d, w, fit, &pm, -1);
	for (int i = 0; i < d->nfig; i++) {
		const struct calib_figure *f = &d->fig[i];
		double t = predict_s(f, fit, &pm), own;

		if (!f->used)
			continue;
		own = own_factor(d, f->prefill, fit, &pm, i);
		out[n++] = (struct calib_error){
			.fig = f,
			.datasheet = 1 / t / f->tokens_per_s - 1,
			.own = own > 0 ? 1 / (t * own) / f->tokens_per_s - 1 : NAN,
			.library = lib[f->prefill] > 0 ?
				1 / (t * lib[f->prefill]) / f->tokens_per_s - 1 : NAN,
			.derived = 1 / (t * all[f->prefill]) / f->tokens_per_s - 1,
		};
	}
	return n;
}

json_t *calib_derive(const json_t *measured, const char *from_path,
		     const struct calib_device *d, const char *dir,
		     const json_t *prov, struct err *e)
{
	const json_t *fit = json_object_get(measured, "fit");
	double f[4], corr[2], lib[2], own[2];
	int nlib[2];
	struct pmodel pm;
	struct ratios r;
	json_t *out, *figs = json_array(), *cor;

	if (json_is_true(json_object_get(measured, "derived")))
		return json_decref(figs), err_set(e, "%s: is itself derived; "
			"derive from a measured profile", from_path), NULL;
	if (profile_model(measured, from_path, &pm, e) < 0 ||
	    ratios(measured, from_path, d, &r, e) < 0)
		return json_decref(figs), NULL;
	datasheet_fit(measured, &r, f);
	library_factor(measured, from_path, dir, d->name, lib, nlib);
	for (int w = 0; w < 2; w++) {
		own[w] = own_factor(d, w, f, &pm, -1);
		corr[w] = own[w] > 0 ? own[w] : lib[w] > 0 ? lib[w] : 1;
	}
	for (int i = 0; i < d->nfig; i++) {
		const struct calib_figure *g = &d->fig[i];
		double t = predict_s(g, f, &pm);

		json_array_append_new(figs, json_pack(
			"{s:s,s:s,s:s,s:s,s:f,s:b,s:f,s:f,s:s}", "model", g->model,
			"quant", g->quant, "backend", g->backend, "test",
			g->prefill ? "pp" : "tg", "published_tokens_per_s",
			g->tokens_per_s, "used", g->used,
			"datasheet_tokens_per_s", 1 / t,
			"derived_tokens_per_s", 1 / (t * corr[g->prefill]),
			"source", g->source));
	}
	cor = json_object();
	for (int w = 0; w < 2; w++) {
		char from[160];

		if (own[w] > 0)
			snprintf(from, sizeof(from), "the device's own published "
				 "CPU figures (median)");
		else if (lib[w] > 0)
			snprintf(from, sizeof(from), "the median correction of %d "
				 "devices of the library with figures", nlib[w]);
		else
			snprintf(from, sizeof(from), "none: no device of the library "
				 "has a figure");
		json_object_set_new(cor, w ? "prefill" : "decode", json_pack(
			"{s:f,s:s}", "factor", corr[w], "from", from));
	}
	out = json_deep_copy(measured);
	json_object_set_new(out, "device", json_string(d->name));
	json_object_set_new(out, "derived", json_true());
	json_object_set_new(out, "stream_gbs", json_real(r.dev_gbs));
	json_object_set_new(out, "peak_gflops", json_real(d->fp32_gflops));
	json_object_set_new(out, "int8_gops", json_real(d->int8_gops));
	json_object_set_new(out, "threads", json_integer(d->threads));
	json_object_set_new(out, "draft", scaled(json_object_get(measured,
		"draft"), "ctx", r.bw * corr[0]));
	json_object_set_new(out, "prefill", scaled(json_object_get(measured,
		"prefill"), "tokens", r.compute * corr[1]));
	json_object_set_new(out, "fit", json_pack(
		"{s:f,s:f,s:f,s:f,s:O,s:O}", "draft_base_s", f[0] * corr[0],
		"draft_per_ctx_s", f[1] * corr[0], "prefill_base_s", f[2] * corr[1],
		"prefill_per_token_s", f[3] * corr[1], "draft_max_rel_residual",
		json_object_get(fit, "draft_max_rel_residual"),
		"prefill_max_rel_residual",
		json_object_get(fit, "prefill_max_rel_residual")));
	if (d->power_busy_w > 0) { /* the device file's, with its source */
		json_t *pw = json_pack("{s:f}", "busy_w", d->power_busy_w);
		const json_t *src = json_object_get(json_object_get(d->doc,
			"sources"), "power");

		if (d->power_idle_w > 0)
			json_object_set_new(pw, "idle_w", json_real(d->power_idle_w));
		json_object_set_new(pw, "source", json_string(
			json_is_string(src) ? json_string_value(src) :
			"the device file gives none"));
		json_object_set_new(out, "power", pw);
	}
	json_object_set_new(out, "derivation", json_pack(
		"{s:s,s:s,s:s,s:f,s:f,s:s,s:f,s:f,s:o,s:o,s:s,s:O,s:O}",
		"from", from_path, "device_file", d->path, "measured_device",
		json_string_value(json_object_get(measured, "device")),
		"bandwidth_ratio", r.bw, "compute_ratio", r.compute,
		"compute_peaks", r.int8 ? "int8 dot product" : "FP32 FMA",
		"device_sustained_gbs", r.dev_gbs, "device_stream_fraction",
		d->sustained_gbs ? 0 : DEVICE_STREAM_FRACTION,
		"correction", cor, "figures", figs,
		"method", "datasheet: draft times x STREAM here / the device's "
		"sustained bandwidth (its measured figure, else 0.75 of its DRAM "
		"peak); prefill x the ratio of the peaks of the arithmetic it ran. "
		"correction: the median of published over datasheet-predicted "
		"seconds a token of the device's llama.cpp CPU figures (decode at "
		"context 64 scaled by weight bytes, prefill by parameters), else "
		"the median of the library's devices' corrections",
		"device", d->doc, "measured_provenance",
		json_object_get(measured, "provenance")));
	json_object_set(out, "provenance", (json_t *)prov);
	return out;
}

/* A measured profile read strictly (a bad field is named), then as JSON;
 * NULL with the message. */
static json_t *measured_load(const char *path, struct err *e)
{
	struct prof_edge pe;

	if (prof_edge_load(path, &pe, e) < 0)
		return NULL;
	return jx_load(path, e);
}

json_t *calib_derive_file(const char *profile_path, const char *device,
			  const char *dir, const json_t *prov, struct err *e)
{
	struct calib_device d;
	json_t *measured, *derived;

	if (!(measured = measured_load(profile_path, e)))
		return NULL;
	if (calib_device_load(&d, device, dir, e) < 0) {
		json_decref(measured);
		return NULL;
	}
	derived = calib_derive(measured, profile_path, &d, dir, prov, e);
	calib_device_release(&d);
	json_decref(measured);
	return derived;
}

/* "+12%", or "-" for a NAN */
static const char *pct(double v, char buf[16])
{
	if (isnan(v))
		return "-";
	snprintf(buf, 16, "%+.0f%%", 100 * v);
	return buf;
}

/* d's figures against the derivation from measured, a line each */
static int print_errors(const json_t *measured, const char *path,
			const struct calib_device *d, const char *dir, FILE *f,
			struct err *e)
{
	struct calib_error er[CALIB_MAX_FIGURES];
	int n = calib_device_errors(measured, path, d, dir, er, e);

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		char a[16], b[16], c[16], g[16];

		fprintf(f, "%-22s %-14s %-7s %s %8.2f  datasheet %6s  own %6s  "
			"library %6s  derived %6s  %s\n", d->name, er[i].fig->model,
			er[i].fig->quant, er[i].fig->prefill ? "pp" : "tg",
			er[i].fig->tokens_per_s, pct(er[i].datasheet, a),
			pct(er[i].own, b), pct(er[i].library, c),
			pct(er[i].derived, g), er[i].fig->source);
	}
	if (!n)
		fprintf(f, "%-22s (no CPU figure: %s)\n", d->name,
			json_string_value(json_object_get(d->doc, "why_not")));
	return 0;
}

int calib_devices_print(const char *profile_path, const char *dir, FILE *f,
			struct err *e)
{
	json_t *measured;
	char **names;
	int rc = 0;

	if (!(measured = measured_load(profile_path, e)))
		return -1;
	names = calib_device_names(dir);
	fprintf(f, "# tokens/s derived from %s over published, less 1: from the "
		"datasheet alone; corrected by the device's other figures (own) "
		"or by the other devices' (library); the derived profile "
		"(corrected by all the device's figures)\n", profile_path);
	if (!*names)
		rc = err_set(e, "calib devices: no device files in %s", dir);
	for (char **p = names; *p && rc == 0; p++) {
		struct calib_device d;

		if ((rc = calib_device_load(&d, *p, dir, e)) == 0) {
			rc = print_errors(measured, profile_path, &d, dir, f, e);
			calib_device_release(&d);
		}
	}
	calib_device_names_free(names);
	json_decref(measured);
	return rc;
}
