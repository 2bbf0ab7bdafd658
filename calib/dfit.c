/* dfit.c: the device model of dfit.h and its leave-one-device-out check.
 * The fit reads the used figures of the devices it is given; a device is
 * held out by index, so a prediction never sees its own figures. */
#include "dfit.h"

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

/* the model's parameters for a class, and whether each pair was fitted on
 * every class (too few peers in its own) */
struct dfit_params {
	double beta, kappa, eta;
	int decode_pool, prefill_pool;
};

/* the arithmetic peak, G/s, on the figure's threads: llama.cpp's CPU
 * products of quantised weights run on int8 dot products (the activations
 * quantised to 8 bits), of F16 and F32 weights in floating point */
static double compute_g(const struct calib_device *d,
			const struct calib_figure *f)
{
	bool fp = !strcmp(f->quant, "F16") || !strcmp(f->quant, "F32");
	double peak = d->int8_gops > 0 && !fp ? d->int8_gops : d->fp32_gflops;
	int t = f->threads > 0 && f->threads < d->threads ? f->threads
							  : d->threads;

	return peak * t / d->threads;
}

static double decode_rate(double beta, double kappa,
			  const struct calib_device *d,
			  const struct calib_figure *f)
{
	double mem = f->weight_bytes / (beta * d->peak_gbs * 1e9);
	double ops = 2 * f->params / (kappa * compute_g(d, f) * 1e9);

	return 1 / fmax(mem, ops);
}

/* tokens/s the parameters predict for figure f of device d */
static double predict(const struct dfit_params *p,
		      const struct calib_device *d,
		      const struct calib_figure *f)
{
	return f->prefill ? p->eta * compute_g(d, f) * 1e9 / (2 * f->params)
			  : decode_rate(p->beta, p->kappa, d, f);
}

/* whether device i joins a fit for class cls (pooled: any class) */
static bool member(const struct calib_device *devs, int i, int skip, int cls,
		   bool pooled)
{
	return i != skip && (pooled || devs[i].cls == cls);
}

/* devices of the set with a used figure of the kind */
static int peers(const struct calib_device *devs, int n, int skip, int cls,
		 bool pooled, bool prefill)
{
	int k = 0;

	for (int i = 0; i < n; i++) {
		bool has = false;

		if (!member(devs, i, skip, cls, pooled))
			continue;
		for (int j = 0; j < devs[i].nfig; j++)
			has |= devs[i].fig[j].used && devs[i].fig[j].prefill == prefill;
		k += has;
	}
	return k;
}

static double grid_at(double lo, double hi, int i)
{
	return lo * pow(hi / lo, (double)i / (GRID - 1));
}

static void fit_decode(const struct calib_device *devs, int n, int skip,
		       int cls, bool pooled, struct dfit_params *p)
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
					r = log(decode_rate(beta, kappa, &devs[i], f) /
						f->tokens_per_s);
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

static void fit_prefill(const struct calib_device *devs, int n, int skip,
			int cls, bool pooled, struct dfit_params *p)
{
	double *v = xmalloc(sizeof(double) * (size_t)n * CALIB_MAX_FIGURES);
	size_t k = 0;

	for (int i = 0; i < n; i++) {
		if (!member(devs, i, skip, cls, pooled))
			continue;
		for (int j = 0; j < devs[i].nfig; j++) {
			const struct calib_figure *f = &devs[i].fig[j];

			if (f->used && f->prefill)
				v[k++] = log(f->tokens_per_s * 2 * f->params /
					     (compute_g(&devs[i], f) * 1e9));
		}
	}
	p->eta = k ? exp(order_median(v, k)) : 0;
	free(v);
}

/* the parameters fitted on devs[0..n) less devs[skip], for class cls */
static void fit(const struct calib_device *devs, int n, int skip, int cls,
		struct dfit_params *p)
{
	memset(p, 0, sizeof(*p));
	p->decode_pool = peers(devs, n, skip, cls, false, false) <
			 DFIT_MIN_PEERS;
	p->prefill_pool = peers(devs, n, skip, cls, false, true) <
			  DFIT_MIN_PEERS;
	fit_decode(devs, n, skip, cls, p->decode_pool, p);
	fit_prefill(devs, n, skip, cls, p->prefill_pool, p);
}

/* the library in dir, every file loaded (n set), or NULL with e */
static struct calib_device *library_load(const char *dir, int *n,
					 struct err *e)
{
	char **names = calib_device_names(dir);
	struct calib_device *devs;
	int k = 0;

	while (names[k])
		k++;
	devs = xcalloc(k ? (size_t)k : 1, sizeof(*devs));
	*n = 0;
	for (int i = 0; i < k; i++) {
		if (calib_device_load(&devs[i], names[i], dir, e) < 0) {
			for (int j = 0; j < i; j++)
				calib_device_release(&devs[j]);
			free(devs);
			calib_device_names_free(names);
			return NULL;
		}
	}
	calib_device_names_free(names);
	if (!k) {
		free(devs);
		err_set(e, "calib devices: no device files in %s", dir);
		return NULL;
	}
	*n = k;
	return devs;
}

int dfit_blind_print(const char *dir, FILE *f, struct err *e)
{
	int n;
	struct calib_device *devs = library_load(dir, &n, e);
	double *err[2];
	size_t k[2] = { 0, 0 };

	if (!devs)
		return -1;
	err[0] = xmalloc(sizeof(double) * (size_t)n * CALIB_MAX_FIGURES);
	err[1] = xmalloc(sizeof(double) * (size_t)n * CALIB_MAX_FIGURES);
	fprintf(f, "# each device's published CPU figures predicted by the "
		"model fitted without the device (dfit.h): tokens/s "
		"published, predicted, error; the parameters and what they "
		"were fitted on (its class's other devices, or every other)\n");
	for (int i = 0; i < n; i++) {
		const struct calib_device *d = &devs[i];
		struct dfit_params p;
		int used = 0;

		for (int j = 0; j < d->nfig; j++)
			used += d->fig[j].used;
		if (!used) {
			fprintf(f, "%-22s %-7s (no used CPU figure)\n", d->name,
				classes[d->cls]);
			continue;
		}
		fit(devs, n, i, d->cls, &p);
		for (int j = 0; j < d->nfig; j++) {
			const struct calib_figure *g = &d->fig[j];
			double pred, r;

			if (!g->used)
				continue;
			pred = predict(&p, d, g);
			r = pred / g->tokens_per_s - 1;
			err[g->prefill][k[g->prefill]++] = fabs(r);
			fprintf(f, "%-22s %-7s %-16.16s %-7s %s t%-2d %8.2f %8.2f "
				"%+6.0f%%  ", d->name, classes[d->cls], g->model,
				g->quant, g->prefill ? "pp" : "tg", g->threads,
				g->tokens_per_s, pred, 100 * r);
			if (g->prefill)
				fprintf(f, "eta %.3f (%s)\n", p.eta,
					p.prefill_pool ? "all" : classes[d->cls]);
			else
				fprintf(f, "beta %.3f kappa %.3f (%s)\n", p.beta,
					p.kappa, p.decode_pool ? "all"
							       : classes[d->cls]);
		}
	}
	for (int t = 0; t < 2; t++) {
		double worst = 0;

		for (size_t i = 0; i < k[t]; i++)
			worst = fmax(worst, err[t][i]);
		fprintf(f, "%s: %zu figures, held-out |error| median %.1f%%, "
			"worst %.1f%% (goal: %s)\n", t ? "prefill" : "decode", k[t],
			k[t] ? 100 * order_median(err[t], k[t]) : 0, 100 * worst,
			t ? "worst 40%" : "median 15%, worst 30%");
	}
	for (int i = 0; i < n; i++)
		calib_device_release(&devs[i]);
	free(devs);
	free(err[0]);
	free(err[1]);
	return 0;
}
