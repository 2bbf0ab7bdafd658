/* dist.c: distribution parameters, sampling and moments.
 *
 * A struct dist keeps the parameters its GSL sampler takes, converted once at
 * read time (lognormal from the variable's mean and sd to mu and sigma of its
 * log; gamma from mean and cv to shape and scale). Empirical samples are owned
 * by the dist and drawn uniformly (a bootstrap of the file). */
#include "dist.h"
#include "fs.h"
#include "mem.h"

#include <errno.h>
#include <float.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {
	"constant", "uniform", "exponential", "normal", "lognormal",
	"gamma", "pareto", "empirical", NULL,
};

struct dist dist_constant(double v)
{
	return (struct dist){ .kind = DIST_CONSTANT, .a = v };
}

void dist_release(struct dist *d)
{
	free(d->samples);
	*d = dist_constant(0);
}

/* Reads a samples file: one number a line, '#' starts a comment. */
static int read_samples(struct jx *x, const char *ptr, const char *file,
			struct jx_range r, struct dist *d)
{
	char path[1024], line[256], rs[64];
	size_t cap = 0;
	int lineno = 0;
	FILE *f = fopen(jx_path(x, file, path, sizeof(path)), "r");

	if (!f)
		return err_set(x->err, "%s: %s: cannot read samples file '%s': %s",
			       x->file, ptr, path, strerror(errno));
	fs_skip_bom(f);
	while (fgets(line, sizeof(line), f)) {
		char *end, *p = line;
		double v;

		lineno++;
		p[strcspn(p, "#\r\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			continue;
		errno = 0;
		v = strtod(p, &end);
		while (*end == ' ' || *end == '\t')
			end++;
		/* ERANGE below DBL_MIN: a subnormal, or 0, is a number */
		if (end == p || *end || (errno && fabs(v) >= DBL_MIN) ||
		    strpbrk(p, "xX") ||
		    !jx_in_range(v, r)) {
			fclose(f);
			return err_set(x->err, "%s: %s: %s:%d: expected a "
				       "number %s, got \"%s\"", x->file, ptr, path,
				       lineno, jx_range_str(rs, r),
				       err_quotable(p, 40));
		}
		if (d->n_samples == cap) {
			cap = cap ? 2 * cap : 256;
			d->samples = xrealloc(d->samples, cap * sizeof(double));
		}
		d->samples[d->n_samples++] = v;
	}
	if (ferror(f)) {
		fclose(f);
		return err_set(x->err, "%s: %s: %s: read error", x->file, ptr, path);
	}
	fclose(f);
	if (d->n_samples == 0)
		return err_set(x->err, "%s: %s: %s: no samples in the file",
			       x->file, ptr, path);
	return 0;
}

/* Checks the parameters in d against the range r of the variable. */
static int check_support(struct jx *x, const char *ptr, const json_t *v,
			 struct jx_range r, const struct dist *d)
{
	char rs[64], want[128];
	bool ok = true;
	double lo = r.lo;

	switch (d->kind) {
	case DIST_CONSTANT:
		ok = jx_in_range(d->a, r);
		break;
	case DIST_UNIFORM:
		ok = jx_in_range(d->a, r) && jx_in_range(d->b, r) && d->b >= d->a;
		break;
	case DIST_NORMAL:
		ok = jx_in_range(d->a, r);
		break;
	case DIST_EXPONENTIAL:
	case DIST_LOGNORMAL:
	case DIST_GAMMA:
		/* support (0, inf): fine for any range reaching up from <= 0 */
		ok = lo <= 0 && isinf(r.hi);
		break;
	case DIST_PARETO:
		ok = jx_in_range(d->a, r) && isinf(r.hi);
		break;
	case DIST_EMPIRICAL:
		break; /* each sample was checked as it was read */
	}
	if (ok)
		return 0;
	snprintf(want, sizeof(want), "a distribution whose draws are %s",
		 jx_range_str(rs, r));
	return jx_fail(x, ptr, want, v);
}

int dist_read(struct jx *x, json_t *obj, const char *ptr, const char *key,
	      struct jx_range r, const char *def, struct dist *out)
{
	static const char *const keys[][4] = {
		[DIST_CONSTANT] = { "dist", "value" },
		[DIST_UNIFORM] = { "dist", "min", "max" },
		[DIST_EXPONENTIAL] = { "dist", "mean" },
		[DIST_NORMAL] = { "dist", "mean", "sd" },
		[DIST_LOGNORMAL] = { "dist", "mean", "sd" },
		[DIST_GAMMA] = { "dist", "mean", "cv" },
		[DIST_PARETO] = { "dist", "xm", "alpha" },
		[DIST_EMPIRICAL] = { "dist", "file" },
	};
	char p[JX_PTR_MAX], rs[64], want[128];
	json_t *v = json_object_get(obj, key);
	struct dist d = dist_constant(0);
	int kind;
	double m, s;
	const char *file;

	jx_child(p, ptr, key);
	if (!v && def) {
		v = json_loads(def, JSON_DECODE_ANY, NULL);
		HS_ASSERT(v != NULL);
		json_object_set_new(obj, key, v);
	}
	if (!v)
		return err_set(x->err, "%s: %s: missing required key \"%s\"",
			       x->file, *ptr ? ptr : "/", key);
	if (json_is_number(v)) {
		d.a = json_number_value(v);
		if (!jx_in_range(d.a, r)) {
			snprintf(want, sizeof(want),
				 "a distribution object or a number %s",
				 jx_range_str(rs, r));
			return jx_fail(x, p, want, v);
		}
		*out = d;
		return 0;
	}
	if (!json_is_object(v)) {
		snprintf(want, sizeof(want), "a distribution object or a number %s",
			 jx_range_str(rs, r));
		return jx_fail(x, p, want, v);
	}
	if (jx_enum(x, v, p, "dist", kind_names, NULL, &kind) < 0)
		return -1;
	d.kind = (enum dist_kind)kind;
	if (jx_object(x, v, p, keys[kind]) < 0)
		return -1;
	switch (d.kind) {
	case DIST_CONSTANT:
		if (jx_num(x, v, p, "value", JX_ANY, JX_REQUIRED, &d.a) < 0)
			return -1;
		break;
	case DIST_UNIFORM:
		if (jx_num(x, v, p, "min", JX_ANY, JX_REQUIRED, &d.a) < 0 ||
		    jx_num(x, v, p, "max", JX_ANY, JX_REQUIRED, &d.b) < 0)
			return -1;
		if (d.b < d.a)
			return jx_fail(x, p, "a uniform distribution whose min "
				       "is at most its max", v);
		break;
	case DIST_EXPONENTIAL:
		if (jx_num(x, v, p, "mean", JX_POS, JX_REQUIRED, &d.a) < 0)
			return -1;
		break;
	case DIST_NORMAL:
		if (jx_num(x, v, p, "mean", JX_ANY, JX_REQUIRED, &d.a) < 0 ||
		    jx_num(x, v, p, "sd", JX_NONNEG, JX_REQUIRED, &d.b) < 0)
			return -1;
		d.lo = r.lo;
		break;
	case DIST_LOGNORMAL:
		if (jx_num(x, v, p, "mean", JX_POS, JX_REQUIRED, &m) < 0 ||
		    jx_num(x, v, p, "sd", JX_NONNEG, JX_REQUIRED, &s) < 0)
			return -1;
		if (!(s / m <= DIST_CV_MAX)) {
			char q[JX_PTR_MAX], sd_want[64];

			snprintf(sd_want, sizeof(sd_want), "an sd at most %g times the "
				 "mean", DIST_CV_MAX);
			return jx_fail(x, jx_child(q, p, "sd"), sd_want,
				       json_object_get(v, "sd"));
		}
		d.b = sqrt(log1p((s / m) * (s / m)));
		d.a = log(m) - d.b * d.b / 2;
		break;
	case DIST_GAMMA:
		if (jx_num(x, v, p, "mean", JX_POS, JX_REQUIRED, &m) < 0 ||
		    jx_num(x, v, p, "cv", DIST_CV, JX_REQUIRED, &s) < 0)
			return -1;
		d.a = 1 / (s * s);
		d.b = m * s * s;
		break;
	case DIST_PARETO:
		if (jx_num(x, v, p, "xm", JX_POS, JX_REQUIRED, &d.a) < 0 ||
		    jx_num(x, v, p, "alpha", JX_POS, JX_REQUIRED, &d.b) < 0)
			return -1;
		break;
	case DIST_EMPIRICAL:
		if (jx_str(x, v, p, "file", NULL, &file) < 0)
			return -1;
		if (read_samples(x, p, file, r, &d) < 0) {
			dist_release(&d);
			return -1;
		}
		{
			/* the resolved document names the file it read */
			char path[1024];

			json_object_set_new(v, "file", json_string(jx_path(
				x, file, path, sizeof(path))));
		}
		break;
	}
	if (check_support(x, p, v, r, &d) < 0) {
		dist_release(&d);
		return -1;
	}
	*out = d;
	return 0;
}

double dist_sample(const struct dist *d, gsl_rng *r)
{
	double v;

	switch (d->kind) {
	case DIST_CONSTANT:
		return d->a;
	case DIST_UNIFORM:
		return d->a + (d->b - d->a) * gsl_rng_uniform(r);
	case DIST_EXPONENTIAL:
		return gsl_ran_exponential(r, d->a);
	case DIST_NORMAL:
		v = d->a + gsl_ran_gaussian_ziggurat(r, d->b);
		return v < d->lo ? d->lo : v;
	case DIST_LOGNORMAL:
		return exp(d->a + d->b * gsl_ran_gaussian_ziggurat(r, 1.0));
	case DIST_GAMMA:
		return gsl_ran_gamma(r, d->a, d->b);
	case DIST_PARETO:
		return gsl_ran_pareto(r, d->b, d->a);
	case DIST_EMPIRICAL:
		return d->samples[gsl_rng_uniform_int(r, d->n_samples)];
	}
	hs_abort(__FILE__, __LINE__, "unknown distribution kind");
}

double dist_mean(const struct dist *d)
{
	double s = 0;

	switch (d->kind) {
	case DIST_CONSTANT:
		return d->a;
	case DIST_UNIFORM:
		return (d->a + d->b) / 2;
	case DIST_EXPONENTIAL:
	case DIST_NORMAL:
		return d->a;
	case DIST_LOGNORMAL:
		return exp(d->a + d->b * d->b / 2);
	case DIST_GAMMA:
		return d->a * d->b;
	case DIST_PARETO:
		return d->b > 1 ? d->b * d->a / (d->b - 1) : INFINITY;
	case DIST_EMPIRICAL:
		for (size_t i = 0; i < d->n_samples; i++)
			s += d->samples[i];
		return s / (double)d->n_samples;
	}
	hs_abort(__FILE__, __LINE__, "unknown distribution kind");
}

double dist_var(const struct dist *d)
{
	double m, s = 0, w;

	switch (d->kind) {
	case DIST_CONSTANT:
		return 0;
	case DIST_UNIFORM:
		w = d->b - d->a;
		return w * w / 12;
	case DIST_EXPONENTIAL:
		return d->a * d->a;
	case DIST_NORMAL:
		return d->b * d->b;
	case DIST_LOGNORMAL:
		return expm1(d->b * d->b) * exp(2 * d->a + d->b * d->b);
	case DIST_GAMMA:
		return d->a * d->b * d->b;
	case DIST_PARETO:
		if (d->b <= 2)
			return INFINITY;
		return d->a * d->a * d->b / ((d->b - 1) * (d->b - 1) * (d->b - 2));
	case DIST_EMPIRICAL:
		m = dist_mean(d);
		for (size_t i = 0; i < d->n_samples; i++)
			s += (d->samples[i] - m) * (d->samples[i] - m);
		return s / (double)d->n_samples;
	}
	hs_abort(__FILE__, __LINE__, "unknown distribution kind");
}

double dist_max(const struct dist *d)
{
	double m = -INFINITY;

	switch (d->kind) {
	case DIST_CONSTANT:
		return d->a;
	case DIST_UNIFORM:
		return d->b;
	case DIST_EMPIRICAL:
		for (size_t i = 0; i < d->n_samples; i++)
			m = d->samples[i] > m ? d->samples[i] : m;
		return m;
	case DIST_EXPONENTIAL:
	case DIST_NORMAL:
	case DIST_LOGNORMAL:
	case DIST_GAMMA:
	case DIST_PARETO:
		return INFINITY;
	}
	hs_abort(__FILE__, __LINE__, "unknown distribution kind");
}
