/* dfit.c: the device model of dfit.h and its leave-one-device-out check.
 * A fit reads the used figures of a set of loaded devices (the library,
 * with the device a derivation is for); a device is held out by its index
 * in the set, so a held-out prediction never sees its own figures. */
#include "dfit.h"

#include "fs.h"
#include "mem.h"
#include "order.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GRID 160 /* points a parameter, log-spaced */
#define BETA_LO 0.02
#define BETA_HI 1.5
#define KAPPA_LO 0.002
#define KAPPA_HI 2.0

static const char *const classes[] = CALIB_CLASSES;

/* the threads of d a figure of t threads runs on (0: all of them) */
static int threads_of(const struct calib_device *d, int t)
{
	return t > 0 && t < d->threads ? t : d->threads;
}

/* FP32 GFLOP/s of t threads of d: their cores' where listed (fastest
 * first), else an even share */
static double fp32_at(const struct calib_device *d, int t)
{
	double sum = 0;

	t = threads_of(d, t);
	if (!d->ncores)
		return d->fp32_gflops * t / d->threads;
	for (int i = 0; i < t; i++)
		sum += d->core_gflops[i];
	return sum;
}

/* G/s of the peak (int8 dot products, else FP32 FMA) on t threads of d */
static double peak_g(const struct calib_device *d, int t, bool int8)
{
	double f = fp32_at(d, t);

	return int8 && d->int8_gops > 0 ? f * d->int8_gops / d->fp32_gflops : f;
}

/* The share of t threads' peak a decode step reaches when each operation
 * is split evenly among the threads and waits for the slowest: t times the
 * slowest core over the cores' sum (1 for alike cores) */
static double split_share(const struct calib_device *d, int t)
{
	t = threads_of(d, t);
	return d->ncores ? t * d->core_gflops[t - 1] / fp32_at(d, t) : 1;
}

static double decode_rate(double beta, double kappa,
			  const struct calib_device *d, double params,
			  double bytes, int threads)
{
	double mem = bytes / (beta * d->peak_gbs * 1e9);
	double ops = 2 * params / (kappa * peak_g(d, threads, false) * 1e9);

	return split_share(d, threads) / fmax(mem, ops);
}

/* llama.cpp's CPU products of quantised weights run on int8 dot products
 * (the activations quantised to 8 bits), of F16 and F32 in floating point */
static bool fig_int8(const struct calib_figure *f)
{
	return strcmp(f->quant, "F16") && strcmp(f->quant, "F32");
}

double dfit_decode_tps(const struct dfit *m, const struct calib_device *d,
		       double params, double weight_bytes, int threads)
{
	return decode_rate(m->beta, m->kappa, d, params, weight_bytes, threads);
}

double dfit_stream_gbs(const struct dfit *m, const struct calib_device *d,
		       int threads)
{
	return split_share(d, threads) * m->beta * d->peak_gbs;
}

double dfit_prefill_tps(const struct dfit *m, const struct calib_device *d,
			double params, int threads, bool int8, int kernel)
{
	return m->eta[kernel] * peak_g(d, threads, int8) * 1e9 / (2 * params);
}

double dfit_predict(const struct dfit *m, const struct calib_device *d,
		    const struct calib_figure *f)
{
	return f->prefill ? dfit_prefill_tps(m, d, f->params, f->threads,
					     fig_int8(f), f->kernel)
			  : dfit_decode_tps(m, d, f->params, f->weight_bytes,
					    f->threads);
}

/* whether device i joins a fit for class cls (pooled: any class) */
static bool member(const struct calib_device *devs, int i, int skip, int cls,
		   bool pooled)
{
	return i != skip && (pooled || devs[i].cls == cls);
}

/* whether f is a used figure of the kind (prefill of the kernel family,
 * any where kernel < 0) */
static bool of_kind(const struct calib_figure *f, bool prefill, int kernel)
{
	return f->used && f->prefill == prefill &&
	       (!prefill || kernel < 0 || f->kernel == kernel);
}

static bool has_kind(const struct calib_device *d, bool prefill, int kernel)
{
	for (int j = 0; j < d->nfig; j++)
		if (of_kind(&d->fig[j], prefill, kernel))
			return true;
	return false;
}

/* devices of the set with a used figure of the kind */
static int peers(const struct calib_device *devs, int n, int skip, int cls,
		 bool pooled, bool prefill, int kernel)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += member(devs, i, skip, cls, pooled) &&
		     has_kind(&devs[i], prefill, kernel);
	return k;
}

static double grid_at(double lo, double hi, int i)
{
	return lo * pow(hi / lo, (double)i / (GRID - 1));
}

static void fit_decode(const struct calib_device *devs, int n, int skip,
		       int cls, bool pooled, struct dfit *p)
{
	double best = INFINITY;

	for (int a = 0; a < GRID; a++)
		for (int b = 0; b < GRID; b++) {
			double beta = grid_at(BETA_LO, BETA_HI, a);
			double kappa = grid_at(KAPPA_LO, KAPPA_HI, b), ss = 0;

			for (int i = 0; i < n; i++) {
				if (!member(devs, i, skip, cls, pooled))
					continue;
				for (int j = 0; j < devs[i].nfig; j++) {
					const struct calib_figure *f = &devs[i].fig[j];
					double r;

					if (!f->used || f->prefill)
						continue;
					r = log(decode_rate(beta, kappa, &devs[i],
							    f->params, f->weight_bytes,
							    f->threads) / f->tokens_per_s);
					ss += r * r;
				}
			}
			if (ss < best) {
				best = ss;
				p->beta = beta;
				p->kappa = kappa;
			}
		}
}

/* eta of the kernel family: the median over the set's figures, 0 where
 * it has none */
static double fit_prefill(const struct calib_device *devs, int n, int skip,
			  int cls, bool pooled, int kernel)
{
	double eta;
	double *v = xmalloc(sizeof(double) * (size_t)n * CALIB_MAX_FIGURES);
	size_t k = 0;

	for (int i = 0; i < n; i++) {
		if (!member(devs, i, skip, cls, pooled))
			continue;
		for (int j = 0; j < devs[i].nfig; j++) {
			const struct calib_figure *f = &devs[i].fig[j];

			if (of_kind(f, true, kernel))
				v[k++] = log(f->tokens_per_s * 2 * f->params /
					     (peak_g(&devs[i], f->threads,
						     fig_int8(f)) * 1e9));
		}
	}
	eta = k ? exp(order_median(v, k)) : 0;
	free(v);
	return eta;
}

/* the parameters fitted on devs[0..n) less devs[skip], for class cls; -1
 * with e where those devices have no used figure of a kind */
static int fit(const struct calib_device *devs, int n, int skip, int cls,
	       struct dfit *p, struct err *e)
{
	for (int w = 0; w < 2; w++)
		if (!peers(devs, n, skip, cls, true, w, -1))
			return err_set(e, "no used %s figure to fit the device "
				       "model on%s%s", w ? "prefill" : "decode",
				       skip >= 0 ? " without " : "",
				       skip >= 0 ? devs[skip].name : "");
	memset(p, 0, sizeof(*p));
	p->decode_pool = peers(devs, n, skip, cls, false, false, -1) <
			 DFIT_MIN_PEERS;
	fit_decode(devs, n, skip, cls, p->decode_pool, p);
	for (int k = 0; k < CALIB_NKERNELS; k++) {
		bool pool = peers(devs, n, skip, cls, false, true, k) <
			    DFIT_MIN_PEERS;

		p->eta[k] = fit_prefill(devs, n, skip, cls, pool, k);
		p->eta_from[k] = pool ? "every class" : "its class";
	}
	/* a family without a figure anywhere takes the generic one's, and
	 * the generic without one every family's */
	if (!p->eta[0]) {
		p->eta[0] = fit_prefill(devs, n, skip, cls, true, -1);
		p->eta_from[0] = "every family's";
	}
	for (int k = 1; k < CALIB_NKERNELS; k++)
		if (!p->eta[k]) {
			p->eta[k] = p->eta[0];
			p->eta_from[k] = "the generic family's";
		}
	return 0;
}

static void library_free(struct calib_device *devs, int n)
{
	for (int i = 0; i < n; i++)
		calib_device_release(&devs[i]);
	free(devs);
}

/* the library in dir, every file loaded, and one slot more (n set to the
 * files), or NULL with e */
static struct calib_device *library_load(const char *dir, int *n,
					 struct err *e)
{
	char **names = calib_device_names(dir);
	struct calib_device *devs;
	int k = 0;

	while (names[k])
		k++;
	if (!k) {
		calib_device_names_free(names);
		err_set(e, fs_is_dir(dir) ? "calib devices: no device files in %s"
			: "calib devices: the device library '%s' is not a "
			  "folder (--library, $HYBRIDSPEC_DEVICES)", dir);
		return NULL;
	}
	devs = xcalloc((size_t)k + 1, sizeof(*devs));
	for (*n = 0; *n < k; ++*n) {
		int i = 0;

		if (calib_device_load(&devs[*n], names[*n], dir, e) < 0) {
			library_free(devs, *n);
			devs = NULL;
			break;
		}
		/* held out by name: two files of one name would leave one in */
		while (i < *n && strcmp(devs[i].name, devs[*n].name))
			i++;
		if (i < *n) {
			err_set(e, "%s/%s.json and %s/%s.json: two devices named \"%s\"",
				dir, names[i], dir, names[*n], devs[i].name);
			library_free(devs, *n + 1);
			devs = NULL;
			break;
		}
	}
	calib_device_names_free(names);
	return devs;
}

/* device i's used figures of the kind (prefill: of kernel family kernel,
 * any where < 0) predicted by the model fitted without it, their errors
 * appended to err[*k]; -1 with e where it cannot be fitted */
static int held_out(const struct calib_device *devs, int n, int i,
		    bool prefill, int kernel, double *err, size_t *k,
		    struct err *e)
{
	const struct calib_device *d = &devs[i];
	struct dfit p;

	if (fit(devs, n, i, d->cls, &p, e) < 0)
		return -1;
	for (int j = 0; j < d->nfig; j++)
		if (of_kind(&d->fig[j], prefill, kernel))
			err[(*k)++] = dfit_predict(&p, d, &d->fig[j]) /
				      d->fig[j].tokens_per_s - 1;
	return 0;
}

static void band_set(struct dfit_band *b, const double *err, size_t k,
		     const char *from)
{
	double *a = xmalloc(sizeof(double) * (k ? k : 1));

	*b = (struct dfit_band){ .n = (int)k, .lo = INFINITY, .hi = -INFINITY };
	for (size_t i = 0; i < k; i++) {
		b->lo = fmin(b->lo, err[i]);
		b->hi = fmax(b->hi, err[i]);
		a[i] = fabs(err[i]);
	}
	b->median_abs = k ? order_median(a, k) : NAN;
	if (!k)
		b->lo = b->hi = NAN;
	snprintf(b->from, sizeof(b->from), "%s", from);
	free(a);
}

int dfit_fit(struct dfit *m, const struct calib_device *d, const char *dir,
	     int kernel, struct err *e)
{
	int n, at, rc = 0;
	struct calib_device *devs = library_load(dir, &n, e);
	struct dfit_band band[2];
	double *err;

	if (!devs)
		return -1;
	for (at = 0; at < n && strcmp(devs[at].name, d->name); at++)
		;
	if (at < n)
		calib_device_release(&devs[at]);
	devs[at] = *d; /* borrowed: its doc is d's, never released here */
	devs[at].doc = NULL;
	n += at == n;
	err = xmalloc(sizeof(double) * (size_t)n * CALIB_MAX_FIGURES);
	for (int w = 0; w < 2 && !rc; w++) {
		/* a prefill's band on figures of its kernel family, where any
		 * device has them */
		int kf = w && peers(devs, n, -1, d->cls, true, true, kernel) ? kernel
									       : -1;
		char from[160], fam[64] = "";
		size_t k = 0;
		bool pooled;

		if (w && (kf < 0 || kernel))
			snprintf(fam, sizeof(fam), kf < 0 ? " (none in its kernel "
				 "family, %s)" : " in its kernel family (%s)",
				 calib_kernels[kernel]);
		if (has_kind(d, w, kf)) {
			rc = held_out(devs, n, at, w, kf, err, &k, e);
			snprintf(from, sizeof(from), "the device's own figures%s, "
				 "the model fitted without them", fam);
		} else {
			/* the devices the model for d is fitted on: its class's,
			 * or every one where fewer than DFIT_MIN_PEERS */
			pooled = peers(devs, n, -1, d->cls, false, w, kf) <
				 DFIT_MIN_PEERS;
			for (int i = 0; i < n && !rc; i++)
				if (member(devs, i, -1, d->cls, pooled) &&
				    has_kind(&devs[i], w, kf))
					rc = held_out(devs, n, i, w, kf, err, &k, e);
			snprintf(from, sizeof(from), "no figure of its own%s: %s%s "
				 "figures, each fitted without its device", fam,
				 pooled ? "every device's" : classes[d->cls],
				 pooled ? "" : " devices'");
		}
		band_set(&band[w], err, k, from);
	}
	if (!rc && fit(devs, n, -1, d->cls, m, e) == 0)
		memcpy(m->band, band, sizeof(band));
	else
		rc = err_prefix(e, "%s", dir);
	free(err);
	devs[at] = (struct calib_device){ 0 };
	library_free(devs, n);
	return rc;
}

/* the width of the device column: the longest name (at least "device") */
static int name_width(const struct calib_device *devs, int n)
{
	int w = 6;

	for (int i = 0; i < n; i++)
		if ((int)strlen(devs[i].name) > w)
			w = (int)strlen(devs[i].name);
	return w;
}

int dfit_library_print(const char *dir, FILE *f, struct err *e)
{
	int n, w;
	struct calib_device *devs = library_load(dir, &n, e);

	if (!devs)
		return -1;
	w = name_width(devs, n);
	fprintf(f, "# the device library in %s: the peaks the model scales "
		"(DRAM GB/s, FP32 GFLOP/s, int8 GOP/s on all its threads) and its "
		"published figures, decode (tg) and prefill (pp): those the model "
		"uses / all; its held-out errors: calib devices --blind\n", dir);
	fprintf(f, "%-*s %-7s %7s %7s %8s %8s %5s %5s  %s\n", w, "device", "class",
		"threads", "GB/s", "GFLOP/s", "GOP/s", "tg", "pp", "cpu");
	for (int i = 0; i < n; i++) {
		const struct calib_device *d = &devs[i];
		int used[2] = { 0, 0 }, all[2] = { 0, 0 };
		char tg[16], pp[16];

		for (int j = 0; j < d->nfig; j++) {
			used[d->fig[j].prefill] += d->fig[j].used;
			all[d->fig[j].prefill]++;
		}
		snprintf(tg, sizeof(tg), "%d/%d", used[0], all[0]);
		snprintf(pp, sizeof(pp), "%d/%d", used[1], all[1]);
		fprintf(f, "%-*s %-7s %7d %7.1f %8.1f %8.1f %5s %5s  %.60s\n",
			w, d->name, classes[d->cls], d->threads, d->peak_gbs,
			d->fp32_gflops, d->int8_gops, tg, pp, d->cpu);
	}
	library_free(devs, n);
	return 0;
}

/* the median and worst |error| of the errors err[i] of class cls (all:
 * -1), as band_set measures them */
static void blind_summary(FILE *f, const double *err, const int *cls_of,
			  size_t k, int cls, bool prefill)
{
	double *a = xmalloc(sizeof(double) * (k ? k : 1));
	struct dfit_band b;
	size_t m = 0;

	for (size_t i = 0; i < k; i++)
		if (cls < 0 || cls_of[i] == cls)
			a[m++] = err[i];
	band_set(&b, a, m, "");
	if (cls < 0)
		fprintf(f, "%s: %zu figures, held-out |error| median %.1f%%, "
			"worst %.1f%% (goal: %s)\n", prefill ? "prefill" : "decode",
			m, m ? 100 * b.median_abs : 0,
			m ? 100 * fmax(-b.lo, b.hi) : 0,
			prefill ? "worst 40%" : "median 15%, worst 30%");
	else if (m)
		fprintf(f, "  %s, %s: %zu figure%s, median %.1f%%, worst "
			"%.1f%%\n", prefill ? "prefill" : "decode", classes[cls],
			m, m == 1 ? "" : "s", 100 * b.median_abs,
			100 * fmax(-b.lo, b.hi));
	free(a);
}

/* whether d has a used figure of either kind */
static bool has_any(const struct calib_device *d)
{
	return has_kind(d, false, -1) || has_kind(d, true, -1);
}

int dfit_blind_print(const char *dir, FILE *f, struct err *e)
{
	int n, w, *cls_of[2];
	struct calib_device *devs = library_load(dir, &n, e);
	struct dfit *fits;
	double *err[2];
	size_t k[2] = { 0, 0 };

	if (!devs)
		return -1;
	/* every fit first: nothing is printed where one cannot be made */
	fits = xcalloc((size_t)n, sizeof(*fits));
	for (int i = 0; i < n; i++)
		if (has_any(&devs[i]) &&
		    fit(devs, n, i, devs[i].cls, &fits[i], e) < 0) {
			free(fits);
			library_free(devs, n);
			return err_prefix(e, "%s", dir);
		}
	w = name_width(devs, n);
	for (int t = 0; t < 2; t++) {
		err[t] = xmalloc(sizeof(double) * (size_t)n * CALIB_MAX_FIGURES);
		cls_of[t] = xmalloc(sizeof(int) * (size_t)n * CALIB_MAX_FIGURES);
	}
	fprintf(f, "# each device's published CPU figures predicted by the "
		"model fitted without the device (dfit.h): tokens/s "
		"published, predicted, error; the parameters and what they "
		"were fitted on (its class's other devices, or every other)\n");
	for (int i = 0; i < n; i++) {
		const struct calib_device *d = &devs[i];
		const struct dfit *p = &fits[i];

		if (!has_any(d)) {
			fprintf(f, "%-*s %-7s (no used CPU figure)\n", w, d->name,
				classes[d->cls]);
			continue;
		}
		for (int j = 0; j < d->nfig; j++) {
			const struct calib_figure *g = &d->fig[j];
			double pred, r;

			if (!g->used)
				continue;
			pred = dfit_predict(p, d, g);
			r = pred / g->tokens_per_s - 1;
			cls_of[g->prefill][k[g->prefill]] = d->cls;
			err[g->prefill][k[g->prefill]++] = r;
			fprintf(f, "%-*s %-7s %-16.16s %-7.7s %s t%-2d %8.2f %8.2f "
				"%+6.0f%%  ", w, d->name, classes[d->cls], g->model,
				g->quant, g->prefill ? "pp" : "tg", g->threads,
				g->tokens_per_s, pred, 100 * r);
			if (g->prefill)
				fprintf(f, "eta %.3f (%s, %s)\n",
					p->eta[g->kernel], calib_kernels[g->kernel],
					p->eta_from[g->kernel]);
			else
				fprintf(f, "beta %.3f kappa %.3f (%s)\n", p->beta,
					p->kappa, p->decode_pool ? "every class"
								 : "its class");
		}
	}
	for (int t = 0; t < 2; t++) {
		blind_summary(f, err[t], cls_of[t], k[t], -1, t);
		for (int c = 0; classes[c]; c++)
			blind_summary(f, err[t], cls_of[t], k[t], c, t);
	}
	free(fits);
	library_free(devs, n);
	for (int t = 0; t < 2; t++) {
		free(err[t]);
		free(cls_of[t]);
	}
	return 0;
}
