/* devlib.c: the device library (docs/calib.md): a file a device, with its
 * datasheet constants and the llama.cpp figures published for it, each
 * with its source, read strictly; and where the committed profiles are.
 *
 * A calib_device owns its parsed file (doc); its figures point into it. */
#define _DEFAULT_SOURCE /* DT_REG */
#include "devlib.h"

#include "fmt.h"
#include "fs.h"
#include "jx.h"
#include "mem.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const calib_kernels[CALIB_NKERNELS + 1] = { "generic", "repack",
							 NULL };

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
		char **names = calib_device_names(dir), known[1024];
		bool found = false;

		for (char **p = names; *p; p++)
			found |= !strcmp(*p, name_or_path);
		fmt_names(known, sizeof(known), (const char *const *)names);
		calib_device_names_free(names);
		if (!found && !fs_is_dir(dir))
			return err_set(e, "the device library '%s' is not a folder "
				       "(--library, $HYBRIDSPEC_DEVICES)", dir), -1;
		if (!found)
			return err_set(e, "unknown device '%s' (known in %s: %s; or "
				       "give a device file)", name_or_path, dir,
				       known), -1;
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

int calib_kernel_find(const char *name, struct err *e)
{
	char known[256];

	for (int k = 0; calib_kernels[k]; k++)
		if (!strcmp(calib_kernels[k], name))
			return k;
	return err_set(e, "unknown kernel family '%s' (the llama.cpp kernels a "
		       "device's figures ran on; known: %s)", name,
		       fmt_names(known, sizeof(known), calib_kernels)), -1;
}
