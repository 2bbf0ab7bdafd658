/* derive.c: the device library (a file a device: datasheet constants and
 * published llama.cpp figures, each with its source) and edge profiles for
 * devices that cannot be run here (docs/calib.md).
 *
 * A derived profile takes its level from the device model of dfit.h,
 * fitted on the library's published figures with the device's own in: the
 * decode tokens/s it predicts for the model at a mean context of
 * FIGURE_CTX (llama-bench's tg128), and its prefill tokens/s over
 * FIGURE_PROMPT tokens (pp512). It takes its shape from a profile measured
 * here: how a draft step grows with the context (scaled like the measured
 * model's own predicted decode, times the KV bytes a position of the
 * model over the measured one's) and the fixed part of a prefill (scaled
 * like its per-token part). The model need not be the measured one: any
 * shape by name or file. The profile carries the model's held-out error
 * band (dfit_fit) and how far the model lies from the figures it was
 * fitted on.
 *
 * A calib_device owns its parsed file (doc); its figures point into it. */
#define _DEFAULT_SOURCE /* DT_REG */
#include "calib.h"
#include "dfit.h"

#include "fs.h"
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

const char *const calib_kernels[CALIB_NKERNELS + 1] = { "generic", "repack",
							 NULL };

#define FIGURE_CTX 64     /* tg128: a mean context of 64 */
#define FIGURE_PROMPT 512 /* pp512: a prefill's base over 512 tokens */
#define MEASURED_PROFILE "edge-xeon-2vcpu-llama2-7b-w4a16.json"

const char *calib_results_dir(void)
{
	static char dir[4200];

	return fs_repo_dir("results/calib", dir, sizeof(dir));
}

const char *calib_device_dir(void)
{
	static char dir[4300];
	const char *d = getenv("HYBRIDSPEC_DEVICES");

	if (d && *d)
		return d;
	snprintf(dir, sizeof(dir), "%s/devices", calib_results_dir());
	return dir;
}

const char *calib_measured_profile(void)
{
	static char path[4300];

	snprintf(path, sizeof(path), "%s/%s", calib_results_dir(),
		 MEASURED_PROFILE);
	return path;
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
		"quote", "note", "use", "kernel", NULL };
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
	    jx_bool(x, v, ptr, "use", 1, &f->used) < 0 ||
	    jx_enum(x, v, ptr, "kernel", calib_kernels, "generic",
		    &f->kernel) < 0)
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

/* v's "cores" (optional): [{"n": cores, "ghz": clock, "flops_cycle":
 * FP32 operations a cycle}, ...] fastest first, into d->core_gflops; they
 * must cover d->threads and sum to d->fp32_gflops (within 1%) */
static int read_cores(struct jx *x, json_t *v, struct calib_device *d)
{
	static const char *const keys[] = { "n", "ghz", "flops_cycle", NULL };
	json_t *cores = json_object_get(v, "cores"), *c;
	double sum = 0;
	size_t i;

	if (!cores)
		return 0;
	if (!json_is_array(cores) || !json_array_size(cores))
		return jx_fail(x, "/cores", "an array of {\"n\", \"ghz\", "
			       "\"flops_cycle\"}, fastest first", cores);
	json_array_foreach(cores, i, c) {
		char p[JX_PTR_MAX];
		long long n;
		double ghz, fc;

		snprintf(p, sizeof(p), "/cores/%zu", i);
		if (!json_is_object(c))
			return jx_fail(x, p, "an object: n, ghz, flops_cycle", c);
		if (jx_object(x, c, p, keys) < 0 ||
		    jx_int(x, c, p, "n", 1, CALIB_MAX_CORES, JX_REQUIRED_INT,
			   &n) < 0 ||
		    jx_num(x, c, p, "ghz", JX_POS, JX_REQUIRED, &ghz) < 0 ||
		    jx_num(x, c, p, "flops_cycle", JX_POS, JX_REQUIRED, &fc) < 0)
			return -1;
		if (d->ncores + n > d->threads ||
		    d->ncores + n > CALIB_MAX_CORES)
			return jx_fail(x, p, "no more cores than the device's "
				       "threads (and at most 64)", c);
		if (d->ncores && ghz * fc > d->core_gflops[d->ncores - 1] + 1e-9)
			return jx_fail(x, p, "cores no faster than the ones "
				       "before (fastest first)", c);
		for (; n > 0; n--, d->ncores++)
			sum += d->core_gflops[d->ncores] = ghz * fc;
	}
	if (d->ncores != d->threads)
		return jx_fail(x, "/cores", "as many cores as the device's "
			       "threads", cores);
	if (fabs(sum / d->fp32_gflops - 1) > 0.01)
		return jx_fail(x, "/cores", "cores summing to fp32_gflops "
			       "(GHz x flops_cycle, within 1%)", cores);
	return 0;
}

/* v's "sources": where each constant v gives comes from, a string under
 * its key (the power figures' under "power") */
static int read_sources(struct jx *x, json_t *v)
{
	static const char *const of[][2] = {
		{ "peak_gbs", "peak_gbs" }, { "fp32_gflops", "fp32_gflops" },
		{ "int8_gops", "int8_gops" }, { "cores", "cores" },
		{ "power_busy_w", "power" }, { "power_idle_w", "power" },
	};
	json_t *src = json_object_get(v, "sources");

	if (!json_is_object(src))
		return jx_fail(x, "/sources", "an object: where each constant comes "
			       "from", src);
	for (size_t i = 0; i < sizeof(of) / sizeof(of[0]); i++) {
		json_t *s = json_object_get(src, of[i][1]);
		char p[JX_PTR_MAX], want[96];

		if (!json_object_get(v, of[i][0]) ||
		    (json_is_string(s) && json_string_length(s)))
			continue;
		snprintf(p, sizeof(p), "/sources/%s", of[i][1]);
		snprintf(want, sizeof(want), "a string: where %s comes from",
			 of[i][0]);
		return jx_fail(x, p, want, s);
	}
	return 0;
}

/* v[key], a string of at least one character, into *out */
static int text_key(struct jx *x, json_t *v, const char *key, const char **out)
{
	char p[JX_PTR_MAX];

	if (jx_str(x, v, "", key, NULL, out) < 0)
		return -1;
	if (**out)
		return 0;
	snprintf(p, sizeof(p), "/%s", key);
	return jx_fail(x, p, "a non-empty string", json_object_get(v, key));
}

/* A datasheet's figure: > 0 (or >= 0), and no more than any device has
 * (100 TB/s, 10 PFLOP/s, 100 POP/s): a typo of exponents is refused, not
 * fitted */
#define DEV_MAX(hi) ((struct jx_range){ 0, (hi), true, false })
#define DEV_MAX0(hi) ((struct jx_range){ 0, (hi), false, false })

int calib_device_load(struct calib_device *d, const char *name_or_path,
		      const char *dir, struct err *e)
{
	static const char *const keys[] = { "kind", "name", "class", "cpu",
		"memory", "threads", "peak_gbs", "fp32_gflops",
		"int8_gops", "power_busy_w", "power_idle_w", "sources",
		"published", "notes", "why_not", "cores", NULL };
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
	    text_key(&x, v, "name", &d->name) < 0 ||
	    jx_str(&x, v, "", "cpu", "", &d->cpu) < 0 ||
	    jx_enum(&x, v, "", "class", classes, NULL, &d->cls) < 0 ||
	    jx_int(&x, v, "", "threads", 1, 1024, JX_REQUIRED_INT, &th) < 0 ||
	    jx_num(&x, v, "", "peak_gbs", DEV_MAX(1e5), JX_REQUIRED,
		   &d->peak_gbs) < 0 ||
	    jx_num(&x, v, "", "fp32_gflops", DEV_MAX(1e7), JX_REQUIRED,
		   &d->fp32_gflops) < 0 ||
	    jx_num(&x, v, "", "int8_gops", DEV_MAX0(1e8), 0,
		   &d->int8_gops) < 0 ||
	    opt_pos(&x, v, "", "power_busy_w", &d->power_busy_w) < 0 ||
	    opt_pos(&x, v, "", "power_idle_w", &d->power_idle_w) < 0)
		goto fail;
	if (d->power_idle_w > 0 && !(d->power_busy_w > 0)) {
		jx_fail(&x, "/power_idle_w", "power_busy_w beside it (a profile's "
			"power is the busy draw, and the idle one with it)",
			json_object_get(v, "power_idle_w"));
		goto fail;
	}
	if (read_sources(&x, v) < 0)
		goto fail;
	d->threads = (int)th;
	if (read_cores(&x, v, d) < 0)
		goto fail;
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
	if (!cpu_figs && json_object_get(d->doc, "why_not")) {
		if (text_key(&x, d->doc, "why_not", &(const char *){ NULL }) < 0)
			goto fail;
	} else if (!cpu_figs) {
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

/* The weights a decoding token reads (its layers and the classifier; of
 * the embedding table one row) and what they weigh in quant's format */
static double read_params(const struct shape *s)
{
	return shape_active_params(s) - (s->tied ? 0 : (double)s->vocab * s->dim);
}

/* The measured profile's model as a shape: the built-in of its name, else
 * its dimensions */
static void measured_shape(const json_t *measured, struct shape *s)
{
	const json_t *m = json_object_get(measured, "model");
	const struct shape *b = shape_find(json_string_value(json_object_get(m,
								      "name")));

	if (b) {
		*s = *b;
		return;
	}
	*s = (struct shape){ .arch = "llama" };
	snprintf(s->name, sizeof(s->name), "%s",
		 json_string_value(json_object_get(m, "name")));
	s->dim = (int)json_integer_value(json_object_get(m, "dim"));
	s->hidden = (int)json_integer_value(json_object_get(m, "hidden"));
	s->n_layers = (int)json_integer_value(json_object_get(m, "layers"));
	s->n_heads = (int)json_integer_value(json_object_get(m, "heads"));
	s->n_kv_heads = (int)json_integer_value(json_object_get(m, "kv_heads"));
	s->vocab = (int)json_integer_value(json_object_get(m, "vocab"));
}

/* {axis, seconds}: base + per x at each of the measured series' x */
static json_t *line(const json_t *series, const char *axis, double base,
		    double per)
{
	json_t *t = json_array();
	const json_t *xs = json_object_get(series, axis);
	size_t i;
	json_t *v;

	json_array_foreach(xs, i, v)
		json_array_append_new(t, json_real(base + per *
						   json_number_value(v)));
	return json_pack("{s:O,s:o}", axis, xs, "seconds", t);
}

static json_t *band_json(const struct dfit_band *b)
{
	if (!b->n)
		return json_pack("{s:i,s:s}", "figures", 0, "from", b->from);
	return json_pack("{s:i,s:f,s:f,s:f,s:s}", "figures", b->n, "lowest",
			 b->lo, "highest", b->hi, "median_abs", b->median_abs,
			 "from", b->from);
}

/* How far the model lies from d's figures: its weights against theirs
 * (within 10% of their range counts as inside), in words */
static json_t *extrapolation(const struct calib_device *d, double params)
{
	double lo = INFINITY, hi = 0;
	char s[256];

	for (int i = 0; i < d->nfig; i++)
		if (d->fig[i].used) {
			lo = fmin(lo, d->fig[i].params);
			hi = fmax(hi, d->fig[i].params);
		}
	if (hi == 0)
		snprintf(s, sizeof(s), "the device has no figure of its own: its "
			 "level is its class's fit on its datasheet");
	else if (params < lo / 1.1 || params > 1.1 * hi)
		snprintf(s, sizeof(s), "%.2g weights, %.1fx %s the device's "
			 "figures (%.2g to %.2g)", params,
			 params > hi ? params / hi : lo / params,
			 params > hi ? "beyond the largest of" :
				       "below the smallest of", lo, hi);
	else
		snprintf(s, sizeof(s), "%.2g weights, inside the device's "
			 "figures (%.2g to %.2g)", params, lo, hi);
	return json_string(s);
}

static json_t *figures_json(const struct dfit *m, const struct calib_device *d)
{
	json_t *figs = json_array();

	for (int i = 0; i < d->nfig; i++) {
		const struct calib_figure *g = &d->fig[i];
		double pred = dfit_predict(m, d, g);

		json_array_append_new(figs, json_pack(
			"{s:s,s:s,s:s,s:s,s:i,s:f,s:b,s:f,s:s}", "model", g->model,
			"quant", g->quant, "backend", g->backend, "test",
			g->prefill ? "pp" : "tg", "threads", g->threads,
			"published_tokens_per_s", g->tokens_per_s, "used", g->used,
			"model_tokens_per_s", pred, "source", g->source));
	}
	return figs;
}

int calib_kernel_find(const char *name, struct err *e)
{
	char known[256] = "";
	size_t n = 0;

	for (int k = 0; calib_kernels[k]; k++) {
		if (!strcmp(calib_kernels[k], name))
			return k;
		n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s",
				      k ? ", " : "", calib_kernels[k]);
	}
	return err_set(e, "unknown kernel family '%s' (known: %s)", name,
		       known), -1;
}

json_t *calib_derive(const json_t *measured, const char *from_path,
		     const struct calib_device *d, const struct shape *model,
		     int kernel, const char *dir, const json_t *prov,
		     struct err *e)
{
	const json_t *fit = json_object_get(measured, "fit");
	double b0 = json_number_value(json_object_get(fit, "draft_base_s"));
	double s0 = json_number_value(json_object_get(fit, "draft_per_ctx_s"));
	double pb0 = json_number_value(json_object_get(fit, "prefill_base_s"));
	double pt0 = json_number_value(json_object_get(fit,
						       "prefill_per_token_s"));
	const char *acts = json_string_value(json_object_get(measured,
							      "prefill_activations"));
	bool int8 = acts && !strcmp(acts, "int8");
	struct shape mp;
	struct quant q;
	struct dfit m;
	double bits, pm, pmp, t_dec, t_mp, t_pre, slope, base, c_pre;
	json_t *out, *pw, *model_json;

	if (json_is_true(json_object_get(measured, "derived")))
		return err_set(e, "%s: is itself derived; derive from a measured "
			       "profile", from_path), NULL;
	if (mload_quant_parse(json_string_value(json_object_get(measured, "quant")),
			&q, e) < 0)
		return err_prefix(e, "%s: /quant", from_path), NULL;
	if (dfit_fit(&m, d, dir, kernel, e) < 0)
		return NULL;
	measured_shape(measured, &mp);
	if (!model)
		model = &mp;
	bits = mload_quant_bits(&q);
	pm = read_params(model);
	pmp = read_params(&mp);
	t_dec = 1 / dfit_decode_tps(&m, d, pm, pm * bits / 8, d->threads);
	t_mp = 1 / dfit_decode_tps(&m, d, pmp, pmp * bits / 8, d->threads);
	/* a position's KV read grows as the weights' stream does here */
	slope = s0 * t_mp / (b0 + FIGURE_CTX * s0) *
		shape_kv_elems_per_token(model) / shape_kv_elems_per_token(&mp);
	base = t_dec - FIGURE_CTX * slope;
	if (base < 0)
		return err_set(e, "%s: the context term at %d positions (%.3g s) "
			       "exceeds the predicted step (%.3g s)", from_path,
			       FIGURE_CTX, FIGURE_CTX * slope, t_dec), NULL;
	t_pre = 1 / dfit_prefill_tps(&m, d, pm, d->threads, int8, kernel);
	c_pre = t_pre / (pb0 / FIGURE_PROMPT + pt0);
	model_json = json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:s}", "name",
			       model->name, "dim", model->dim, "hidden",
			       model->hidden, "layers", model->n_layers, "heads",
			       model->n_heads, "kv_heads", model->n_kv_heads,
			       "vocab", model->vocab, "weights", model == &mp ?
			       json_string_value(json_object_get(json_object_get(
				       measured, "model"), "weights")) : "none");
	out = json_deep_copy(measured);
	/* the kernel set is the measuring machine's: the derivation says it */
	json_object_del(out, "kernel");
	json_object_set_new(out, "device", json_string(d->name));
	json_object_set_new(out, "derived", json_true());
	json_object_set_new(out, "model", model_json);
	json_object_set_new(out, "stream_gbs",
			    json_real(dfit_stream_gbs(&m, d, d->threads)));
	json_object_set_new(out, "peak_gflops", json_real(d->fp32_gflops));
	json_object_set_new(out, "int8_gops", json_real(d->int8_gops));
	json_object_set_new(out, "threads", json_integer(d->threads));
	json_object_set_new(out, "draft", line(json_object_get(measured, "draft"),
					       "ctx", base, slope));
	json_object_set_new(out, "prefill", line(json_object_get(measured,
		"prefill"), "tokens", c_pre * pb0, c_pre * pt0));
	json_object_set_new(out, "fit", json_pack(
		"{s:f,s:f,s:f,s:f,s:O,s:O}", "draft_base_s", base,
		"draft_per_ctx_s", slope, "prefill_base_s", c_pre * pb0,
		"prefill_per_token_s", c_pre * pt0, "draft_max_rel_residual",
		json_object_get(fit, "draft_max_rel_residual"),
		"prefill_max_rel_residual",
		json_object_get(fit, "prefill_max_rel_residual")));
	json_object_del(out, "power");
	if (d->power_busy_w > 0) { /* the device file's, with its source */
		const json_t *src = json_object_get(json_object_get(d->doc,
			"sources"), "power");

		pw = json_pack("{s:f}", "busy_w", d->power_busy_w);
		if (d->power_idle_w > 0)
			json_object_set_new(pw, "idle_w", json_real(d->power_idle_w));
		json_object_set_new(pw, "source", json_string(
			json_is_string(src) ? json_string_value(src) :
			"the device file gives none"));
		json_object_set_new(out, "power", pw);
	}
	json_object_set_new(out, "derivation", json_pack(
		"{s:s,s:s,s:s,s:{s:s,s:f,s:f,s:s*},s:{s:f,s:f,s:f,s:s,s:s,s:s},"
		"s:{s:f,s:f},s:{s:o,s:o},s:o,s:{s:i,s:f,s:f,s:f},s:o,s:s,s:O}",
		"from", from_path, "device_file", d->path, "measured_device",
		json_string_value(json_object_get(measured, "device")),
		"model", "name", model->name, "weights_read", pm, "bytes_read",
		pm * bits / 8, "source", model->source,
		"device_model", "beta", m.beta, "kappa", m.kappa, "eta",
		m.eta[kernel], "decode_fitted_on", m.decode_pool ?
		"every device" : "the device's class", "prefill_kernel",
		calib_kernels[kernel], "prefill_fitted_on", m.eta_from[kernel],
		"predicted", "decode_tokens_per_s", 1 / t_dec,
		"prefill_tokens_per_s", 1 / t_pre,
		"held_out", "decode", band_json(&m.band[0]), "prefill",
		band_json(&m.band[1]),
		"extrapolation", extrapolation(d, pm),
		"datasheet", "threads", d->threads, "peak_gbs", d->peak_gbs,
		"fp32_gflops", d->fp32_gflops, "int8_gops", d->int8_gops,
		"figures", figures_json(&m, d),
		"method", "level: the device model (dfit.h: decode s / max(W / "
		"(beta B), 2 P / (kappa F)), s the slowest thread's share, "
		"prefill eta I / 2 P for the kernel family) fitted on the "
		"library's published llama.cpp CPU figures with the device's own, "
		"at a mean context of 64 (decode) and over 512 tokens (prefill); "
		"shape: the measured profile's context slope (times the model's "
		"KV a position over the measured one's) and fixed prefill part, "
		"scaled alike. held_out: predicted over published tokens/s less "
		"1, the time a token being (1 + error) times the predicted one",
		"measured_provenance",
		json_object_get(measured, "provenance")));
	if (json_object_get(measured, "kernel"))
		json_object_set(json_object_get(out, "derivation"),
				"measured_kernel", json_object_get(measured, "kernel"));
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
			  const char *model, const char *kernel,
			  const char *dir, const json_t *prov, struct err *e)
{
	struct calib_device d;
	struct shape s;
	json_t *measured, *derived;
	int k = kernel ? calib_kernel_find(kernel, e) : 0;

	if (k < 0 || (model && shape_load(&s, model, e) < 0))
		return NULL;
	if (!(measured = measured_load(profile_path, e)))
		return NULL;
	if (calib_device_load(&d, device, dir, e) < 0) {
		json_decref(measured);
		return NULL;
	}
	derived = calib_derive(measured, profile_path, &d, model ? &s : NULL,
			       k, dir, prov, e);
	calib_device_release(&d);
	json_decref(measured);
	return derived;
}

/* " (held out LO% to HI%, N figures)" of band b, or " (no held-out
 * figure)" */
static void say_band(const json_t *b, FILE *f)
{
	const json_t *lo = json_object_get(b, "lowest");
	const json_t *hi = json_object_get(b, "highest");
	long long n = json_integer_value(json_object_get(b, "figures"));

	if (json_is_number(lo) && json_is_number(hi))
		fprintf(f, " (held out %+.0f%% to %+.0f%%, %lld figure%s)",
			100 * json_number_value(lo), 100 * json_number_value(hi),
			n, n == 1 ? "" : "s");
	else
		fprintf(f, " (no held-out figure)");
}

void calib_derive_say(const json_t *derived, FILE *f)
{
	const json_t *d = json_object_get(derived, "derivation");
	const json_t *pr = json_object_get(d, "predicted");
	const json_t *ho = json_object_get(d, "held_out");

	fprintf(f, "calib: %s, %s: decode %.3g tokens/s",
		json_string_value(json_object_get(derived, "device")),
		json_string_value(jx_at((json_t *)d, "/model/name")),
		json_number_value(json_object_get(pr, "decode_tokens_per_s")));
	say_band(json_object_get(ho, "decode"), f);
	fprintf(f, ", prefill %.3g tokens/s",
		json_number_value(json_object_get(pr, "prefill_tokens_per_s")));
	say_band(json_object_get(ho, "prefill"), f);
	fprintf(f, "; %s\n", json_string_value(json_object_get(d,
							       "extrapolation")));
}
