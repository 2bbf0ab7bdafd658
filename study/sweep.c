/* sweep.c: the sweep file, its points, and the table over their runs.
 *
 * A point is a number in [0, n_points): its digits, most significant first,
 * are the value indices of the grid axes in the order the file lists them,
 * and the last digit (base zip_len) is the index shared by every zip axis.
 * So the first grid key varies slowest and the zip lists fastest. Every
 * figure a sweep prints is read back from the runs' summary.json files, so
 * the table does not depend on how (or in what order) the runs were made. */
#define _DEFAULT_SOURCE /* realpath */
#include "sweep.h"

#include "cfg.h"
#include "report.h"
#include "sim.h"
#include "mem.h"
#include "fs.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The summary figures a sweep reports unless its file lists "metrics". */
static const char *const default_metrics[] = {
	"/all/itl_s/mean",
	"/all/itl_s/p99",
	"/all/ttft_s/p50",
	"/all/ttft_s/p99",
	"/all/tpot_s",
	"/all/tokens_per_s",
	"/all/goodput_tokens_per_s",
	"/all/alpha",
	"/all/tokens_per_verdict",
	"/all/slo_attainment",
	"/cloud/busy_fraction",
	"/cloud/batch_tokens/mean",
	"/cloud/queue_wait_s/mean",
	NULL,
};

/* Far more points than a sweep should have; guards the product. */
#define SWEEP_MAX_POINTS 10000000

/* A value as JSON text: full precision for --set, 15 digits for people.
 * Caller frees. */
static char *value_text(const json_t *v, int precision)
{
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT |
					JSON_REAL_PRECISION(precision));

	HS_ASSERT(s != NULL);
	return s;
}

/* A number as the fewest digits that read back exactly; other values with
 * every digit. Caller frees. */
static char *exact_text(const json_t *v)
{
	for (int prec = 15; json_is_real(v) && prec < 17; prec++) {
		char *s = value_text(v, prec);
		json_t *back = json_loads(s, JSON_DECODE_ANY, NULL);
		bool same = back && json_real_value(back) == json_real_value(v);

		json_decref(back);
		if (same)
			return s;
		free(s);
	}
	return value_text(v, 17);
}

char *sweep_set_text(const char *ptr, const json_t *v)
{
	char *val = exact_text(v);
	size_t n = strlen(ptr) + strlen(val) + 2;
	char *s = xmalloc(n);

	snprintf(s, n, "%s=%s", ptr, val);
	free(val);
	return s;
}

/* Whether pointer a is b or lies under it (the first n bytes of a, n
 * strlen(a) where a ends there) */
static bool under(const char *a, size_t n, const char *b)
{
	size_t m = strlen(b);

	return n >= m && !strncmp(a, b, m) && (n == m || a[m] == '/');
}

/* Checks a key of "set", "grid" or "zip": a config pointer, not /seed,
 * not given twice; a varied one neither within another varied one (one
 * value would mask the other) nor above a set one (its value would
 * replace the set one's); a set one may lie above a varied one. */
static int check_pointer(struct jx *x, const struct sweep *s, const char *ptr,
			 const char *where)
{
	if (*ptr != '/' || strchr(ptr, '='))
		return err_set(x->err, "%s: %s: expected a JSON pointer into the "
			       "config such as \"/cloud/replicas\" (without '=')",
			       x->file, where);
	if (!strcmp(ptr, "/seed"))
		return err_set(x->err, "%s: %s: the seed is not a config "
			       "override: list the seeds in \"seeds\" or give "
			       "\"replicates\"", x->file, where);
	for (size_t i = 0; i < s->n_axes; i++) {
		const char *a = s->axes[i].ptr;

		if (!strcmp(a, ptr))
			return err_set(x->err, "%s: %s: \"%s\" is varied twice",
				       x->file, where, ptr);
		if (under(a, strlen(a), ptr) || under(ptr, strlen(ptr), a))
			return err_set(x->err, "%s: %s: \"%s\" and \"%s\" are "
				       "both varied, one within the other: one's "
				       "values would hide the other's", x->file,
				       where, ptr, a);
	}
	for (size_t i = 0; i < s->n_set; i++) {
		size_t n = strcspn(s->set[i], "=");

		if (n == strlen(ptr) && !strncmp(s->set[i], ptr, n))
			return err_set(x->err, "%s: %s: \"%s\" is both set and "
				       "varied", x->file, where, ptr);
		if (under(s->set[i], n, ptr))
			return err_set(x->err, "%s: %s: \"%s\" is varied above "
				       "\"%.*s\", which is set: each value would "
				       "replace the set one", x->file, where, ptr,
				       (int)n, s->set[i]);
	}
	return 0;
}

static int read_set(struct jx *x, struct sweep *s, json_t *set)
{
	const char *k;
	json_t *v;
	char p[JX_PTR_MAX];

	if (!set)
		return 0;
	if (!json_is_object(set))
		return jx_fail(x, "/set", "an object of \"/pointer\": value", set);
	json_object_foreach(set, k, v) {
		jx_child(p, "/set", k);
		if (check_pointer(x, s, k, p) < 0)
			return -1;
		s->set = xrealloc(s->set, (s->n_set + 1) * sizeof(*s->set));
		s->set[s->n_set++] = sweep_set_text(k, v);
	}
	return 0;
}

/* The axes of "grid" or "zip" (zip: every list as long as the first). */
static int read_axes(struct jx *x, struct sweep *s, json_t *obj,
		     const char *ptr, bool zip)
{
	const char *k;
	json_t *v;
	char p[JX_PTR_MAX];
	size_t first = s->n_axes;

	if (!obj)
		return 0;
	if (!json_is_object(obj))
		return jx_fail(x, ptr, "an object of \"/pointer\": [values]", obj);
	json_object_foreach(obj, k, v) {
		struct sweep_axis *a;

		jx_child(p, ptr, k);
		if (check_pointer(x, s, k, p) < 0)
			return -1;
		if (!json_is_array(v) || json_array_size(v) == 0)
			return jx_fail(x, p, "a non-empty array of values", v);
		/* a grid's value twice runs one point twice (a zipped list may
		 * repeat: its tuples differ) */
		if (!zip && jx_unique(x, v, p) < 0)
			return -1;
		if (zip && s->n_axes > first &&
		    json_array_size(v) != json_array_size(s->axes[first].values))
			return err_set(x->err, "%s: %s: expected %zu values, as "
				       "many as %s has, got %zu", x->file, p,
				       json_array_size(s->axes[first].values),
				       s->axes[first].where, json_array_size(v));
		s->axes = xrealloc(s->axes, (s->n_axes + 1) * sizeof(*s->axes));
		a = &s->axes[s->n_axes++];
		*a = (struct sweep_axis){ .ptr = k, .values = v, .zip = zip };
		snprintf(a->where, sizeof(a->where), "%s", p);
		if (zip)
			s->zip_len = json_array_size(v);
	}
	return 0;
}

struct seed_at {
	long long seed;
	size_t i; /* its place in /seeds */
};

static int by_seed(const void *a, const void *b)
{
	const struct seed_at *p = a, *q = b;

	if (p->seed != q->seed)
		return p->seed < q->seed ? -1 : 1;
	return p->i < q->i ? -1 : p->i > q->i;
}

/* The first place in s->seeds whose seed comes earlier too, or n_seeds:
 * sorted, so that a million replicates take no 10^12 comparisons. */
static size_t first_repeat(const struct sweep *s)
{
	struct seed_at *v = xmalloc(s->n_seeds * sizeof(*v));
	size_t first = s->n_seeds;

	for (size_t i = 0; i < s->n_seeds; i++)
		v[i] = (struct seed_at){ s->seeds[i], i };
	qsort(v, s->n_seeds, sizeof(*v), by_seed);
	for (size_t k = 1; k < s->n_seeds; k++)
		if (v[k].seed == v[k - 1].seed && v[k].i < first)
			first = v[k].i;
	free(v);
	return first;
}

static int read_seeds(struct jx *x, struct sweep *s, long long base_seed)
{
	json_t *seeds = json_object_get(s->doc, "seeds");
	json_t *reps = json_object_get(s->doc, "replicates");
	char p[JX_PTR_MAX];
	long long n;

	if (seeds && reps)
		return err_set(x->err, "%s: /replicates: give either \"seeds\" "
			       "or \"replicates\", not both", x->file);
	if (reps) {
		if (jx_int(x, s->doc, "", "replicates", 1, 1000000,
			   JX_REQUIRED_INT, &n) < 0)
			return -1;
		seeds = json_array();
		for (long long i = 1; i <= n; i++)
			json_array_append_new(seeds, json_integer(i));
		json_object_del(s->doc, "replicates");
		json_object_set_new(s->doc, "seeds", seeds);
	} else if (!seeds) {
		seeds = json_pack("[I]", (json_int_t)base_seed);
		json_object_set_new(s->doc, "seeds", seeds);
	}
	if (!json_is_array(seeds) || json_array_size(seeds) == 0)
		return jx_fail(x, "/seeds", "a non-empty array of integers >= 0",
			       seeds);
	s->n_seeds = json_array_size(seeds);
	s->seeds = xcalloc(s->n_seeds, sizeof(*s->seeds));
	for (size_t i = 0; i < s->n_seeds; i++) {
		json_t *v = json_array_get(seeds, i);

		jx_index(p, "/seeds", i);
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return jx_fail(x, p, "an integer >= 0", v);
		s->seeds[i] = json_integer_value(v);
	}
	{
		size_t i = first_repeat(s);

		if (i < s->n_seeds)
			return err_set(x->err, "%s: %s: seed %lld is listed "
				       "twice", x->file, jx_index(p, "/seeds", i),
				       s->seeds[i]);
	}
	return 0;
}

static int read_metrics(struct jx *x, struct sweep *s)
{
	json_t *m = json_object_get(s->doc, "metrics");
	char p[JX_PTR_MAX];

	if (!m) {
		m = json_array();
		for (size_t i = 0; default_metrics[i]; i++)
			json_array_append_new(m, json_string(default_metrics[i]));
		json_object_set_new(s->doc, "metrics", m);
	}
	if (!json_is_array(m) || json_array_size(m) == 0)
		return jx_fail(x, "/metrics", "a non-empty array of pointers "
			       "into summary.json such as \"/all/itl_s/mean\"", m);
	s->n_metrics = json_array_size(m);
	s->metrics = xcalloc(s->n_metrics, sizeof(*s->metrics));
	for (size_t i = 0; i < s->n_metrics; i++) {
		json_t *v = json_array_get(m, i);
		const char *ptr = json_string_value(v);

		jx_index(p, "/metrics", i);
		if (!ptr || *ptr != '/')
			return jx_fail(x, p, "a pointer into summary.json such "
				       "as \"/all/itl_s/mean\"", v);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(s->metrics[j], ptr))
				return err_set(x->err, "%s: %s: \"%s\" is listed "
					       "twice", x->file, p, ptr);
		s->metrics[i] = ptr;
	}
	return 0;
}

/* The file name without folder and ".json". */
static char *default_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *name = xstrdup(slash ? slash + 1 : path);
	size_t n = strlen(name);

	if (n > 5 && !strcmp(name + n - 5, ".json"))
		name[n - 5] = '\0';
	return name;
}

/* The base with the first point's overrides ("set", then its values),
 * then the n overrides more (borrowed), which win, loaded into c: where
 * "set" or a value alone is not a whole config, the point may be. 0, or
 * -1 with e's message. */
static int load_first_point(const struct sweep *s, char *const *more,
			    size_t n, struct cfg *c, struct err *e)
{
	size_t np;
	char **sets = sweep_sets(s, 0, -1, &np);
	int rc;

	sets = xrealloc(sets, (np + n) * sizeof(*sets));
	for (size_t k = 0; k < n; k++)
		sets[np + k] = xstrdup(more[k]);
	rc = cfg_load_from(c, s->base, (const char *const *)sets, np + n, NULL,
			   e);
	sweep_sets_free(sets, np + n);
	return rc;
}

int sweep_load(struct sweep *s, const char *path, struct err *e)
{
	static const char *const keys[] = { "name", "base", "set", "grid",
		"zip", "seeds", "replicates", "metrics", NULL };
	struct jx x = { .file = path, .err = e };
	const char *base;
	char buf[4096], *name;
	struct cfg c;
	struct err scratch; /* the first point's failure: the set's is said */
	long long base_seed;
	double points = 1;
	int rc;

	*s = (struct sweep){ .file = xstrdup(path), .zip_len = 1 };
	if (!(s->doc = jx_load(path, e)) ||
	    jx_object(&x, s->doc, "", keys) < 0)
		goto fail;
	name = default_name(path);
	rc = jx_str(&x, s->doc, "", "name", name, &s->name);
	free(name);
	if (rc < 0 || jx_str(&x, s->doc, "", "base", NULL, &base) < 0)
		goto fail;
	if (cfg_check_name(&x, s->doc, "", s->name, true,
			   json_object_get(s->doc, "name") != NULL) < 0)
		goto fail;
	s->base = xstrdup(jx_path(&x, base, buf, sizeof(buf)));
	if (read_set(&x, s, json_object_get(s->doc, "set")) < 0 ||
	    read_axes(&x, s, json_object_get(s->doc, "grid"), "/grid",
		      false) < 0 ||
	    read_axes(&x, s, json_object_get(s->doc, "zip"), "/zip",
		      true) < 0)
		goto fail;
	for (size_t i = 0; i < s->n_axes; i++)
		if (!s->axes[i].zip)
			points *= (double)json_array_size(s->axes[i].values);
	points *= (double)s->zip_len;
	if (points > SWEEP_MAX_POINTS) {
		err_set(e, "%s: /grid: %.0f points, more than %d", path, points,
			SWEEP_MAX_POINTS);
		goto fail;
	}
	s->n_points = (size_t)points;
	/* the base with the fixed overrides: its seed is the default seed;
	 * a failure is the overrides' only where the base itself reads, and
	 * none where the first point's values complete them (a "set" that
	 * makes a key required that the grid gives: each point is checked
	 * on its own later) */
	if (cfg_load_from(&c, s->base, (const char *const *)s->set, s->n_set,
			  NULL, e) < 0 &&
	    (!s->n_axes || load_first_point(s, NULL, 0, &c, &scratch) < 0)) {
		json_t *b = s->n_set ? jx_load(s->base, NULL) : NULL;

		err_prefix(e, "%s: %s", path, b ? "/set" : "/base");
		json_decref(b);
		goto fail;
	}
	base_seed = (long long)c.seed;
	cfg_release(&c);
	if (read_seeds(&x, s, base_seed) < 0 || read_metrics(&x, s) < 0)
		goto fail;
	return 0;
fail:
	sweep_release(s);
	return -1;
}

void sweep_release(struct sweep *s)
{
	sweep_sets_free(s->set, s->n_set);
	free(s->axes);
	free(s->seeds);
	free(s->metrics);
	free(s->base);
	free(s->file);
	json_decref(s->doc);
	*s = (struct sweep){ 0 };
}

size_t sweep_value_index(const struct sweep *s, size_t point, size_t a)
{
	size_t q;

	HS_ASSERT(point < s->n_points && a < s->n_axes);
	if (s->axes[a].zip)
		return point % s->zip_len;
	q = point / s->zip_len;
	for (size_t k = s->n_axes; k-- > a + 1;)
		if (!s->axes[k].zip)
			q /= json_array_size(s->axes[k].values);
	return q % json_array_size(s->axes[a].values);
}

char **sweep_sets(const struct sweep *s, size_t point, long long seed,
		  size_t *n)
{
	char **v = xcalloc(s->n_set + s->n_axes + 1, sizeof(*v));
	size_t k = 0;

	for (size_t i = 0; i < s->n_set; i++)
		v[k++] = xstrdup(s->set[i]);
	for (size_t a = 0; a < s->n_axes; a++)
		v[k++] = sweep_set_text(s->axes[a].ptr,
				  json_array_get(s->axes[a].values,
						 sweep_value_index(s, point, a)));
	if (seed >= 0) {
		char buf[64];

		snprintf(buf, sizeof(buf), "/seed=%lld", seed);
		v[k++] = xstrdup(buf);
	}
	*n = k;
	return v;
}

void sweep_sets_free(char **sets, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(sets[i]);
	free(sets);
}

char *sweep_run_dir(const struct sweep *s, const char *dir, size_t point,
		    size_t seed_i)
{
	size_t n = strlen(dir) + 64;
	char *p = xmalloc(n);

	HS_ASSERT(seed_i < s->n_seeds);
	snprintf(p, n, "%s/points/%zu/seed-%lld", dir, point, s->seeds[seed_i]);
	return p;
}

void sweep_point_label(const struct sweep *s, size_t point, bool brief,
		       char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t a = 0; a < s->n_axes && used < n; a++) {
		size_t i = sweep_value_index(s, point, a);
		char *val = value_text(json_array_get(s->axes[a].values, i),
				       brief ? 6 : 15);
		const char *ptr = s->axes[a].ptr, *key = strrchr(ptr, '/');

		/* a distribution's parameter is named with its key */
		if (key && key > ptr &&
		    (!strcmp(key, "/mean") || !strcmp(key, "/sd") ||
		     !strcmp(key, "/value")))
			while (--key > ptr && *key != '/')
				;
		used += (size_t)snprintf(buf + used, n - used, "%s%s=%s",
					 a ? (brief ? " " : ", ") : "",
					 brief && key ? key + 1 : ptr, val);
		free(val);
	}
}

/* Checks that every metric is a figure of summary (what a run of the
 * point writes, before it ran): a number, or null where the run does not
 * define it (a cost before any token, a device's energy without one). */
static int check_metrics(const struct sweep *s, json_t *summary, size_t point,
			 struct err *e)
{
	char label[512];

	for (size_t m = 0; m < s->n_metrics; m++) {
		json_t *v = jx_at(summary, s->metrics[m]);

		if (json_is_number(v) || json_is_null(v))
			continue;
		sweep_point_label(s, point, false, label, sizeof(label));
		return err_set(e, "%s: /metrics/%zu: \"%s\" is %s in the "
			       "summary.json of point %zu%s%s%s (`run --columns` "
			       "lists its figures)", s->file, m, s->metrics[m],
			       v ? "not a number" : "not a figure", point,
			       *label ? " (" : "", label, *label ? ")" : "");
	}
	return 0;
}

/* The points' config warnings, each line once, and at how many points
 * (a point counted once however often it gives the line) */
struct said {
	char *line; /* owned */
	size_t points, last; /* last: the point that counted it last */
};

static void said_add(struct said **w, size_t *n, const char *lines, size_t p)
{
	for (const char *l = lines, *nl; l && *l; l = nl + 1) {
		size_t len = (nl = strchr(l, '\n')) ? (size_t)(nl - l) : strlen(l);
		size_t i = 0;

		while (i < *n && (strlen((*w)[i].line) != len ||
				  strncmp((*w)[i].line, l, len)))
			i++;
		if (i == *n) {
			char *copy = xmalloc(len + 1);

			memcpy(copy, l, len);
			copy[len] = '\0';
			*w = xrealloc(*w, (*n + 1) * sizeof(**w));
			(*w)[(*n)++] = (struct said){ copy, 0, SIZE_MAX };
		}
		if ((*w)[i].last != p) {
			(*w)[i].points++;
			(*w)[i].last = p;
		}
		if (!nl)
			break;
	}
}

/* Loads the point as its first run would and builds its simulation
 * (traces, tables) without running it; its warnings into w. */
static int check_point(const struct sweep *s, size_t p, struct said **w,
		       size_t *nw, struct err *e)
{
	size_t n;
	char **sets = sweep_sets(s, p, s->seeds[0], &n);
	char label[512];
	struct cfg c;
	struct sim sim;
	json_t *sum;
	bool too_many = false;
	int rc = cfg_load_from(&c, s->base, (const char *const *)sets, n,
			       NULL, e);

	sweep_sets_free(sets, n);
	if (rc == 0) {
		said_add(w, nw, c.warnings, p);
		sim_init(&sim, &c, (struct sim_opts){ 0 }, e);
		too_many = sim.failed; /* tenants outgrowing this machine */
		if (too_many) {
			rc = -1;
		} else {
			sum = rep_summary(&sim);
			rc = check_metrics(s, sum, p, e);
			json_decref(sum);
		}
		sim_release(&sim);
		cfg_release(&c);
		if (rc < 0 && !too_many)
			return -1;
	}
	if (rc == 0)
		return 0;
	sweep_point_label(s, p, false, label, sizeof(label));
	return err_prefix(e, "%s: point %zu%s%s%s", s->file, p,
			  *label ? " (" : "", label, *label ? ")" : "");
}

/* The base with "set" and the n overrides more (borrowed), loaded and
 * released: 0, or -1 with e's message. */
static int load_with(const struct sweep *s, char *const *more, size_t n,
		     struct err *e)
{
	const char **sets = xcalloc(s->n_set + n, sizeof(*sets));
	struct cfg c;
	int rc;

	for (size_t k = 0; k < s->n_set; k++)
		sets[k] = s->set[k];
	for (size_t k = 0; k < n; k++)
		sets[s->n_set + k] = more[k];
	rc = cfg_load_from(&c, s->base, sets, s->n_set + n, NULL, e);
	free(sets);
	if (rc == 0)
		cfg_release(&c);
	return rc;
}

/* load_with, and where the overrides alone leave the config not whole,
 * again with the first point's other values beneath them: a grid value
 * that needs another axis's (a Poisson arrival set, its rate varied) is
 * no error; one bad with them too is blamed as alone (e's message). */
static int load_completed(const struct sweep *s, char *const *more, size_t n,
			  struct err *e)
{
	struct cfg c;
	struct err scratch;

	if (load_with(s, more, n, e) == 0)
		return 0;
	if (load_first_point(s, more, n, &c, &scratch) < 0)
		return -1;
	cfg_release(&c);
	return 0;
}

int sweep_check(const struct sweep *s, char **warnings, struct err *e)
{
	char **row = xcalloc(s->n_axes + 1, sizeof(*row));
	struct said *w = NULL;
	size_t nz = 0, nw = 0, len = 0;
	int rc = 0;

	*warnings = NULL;
	/* each grid value alone, and each row of the zip lists together (a
	 * row's values are meant together), so that a bad one is named where
	 * it is */
	for (size_t a = 0; a < s->n_axes && rc == 0; a++) {
		const struct sweep_axis *ax = &s->axes[a];

		for (size_t i = 0; !ax->zip && i < json_array_size(ax->values) &&
				   rc == 0; i++) {
			char *one = sweep_set_text(ax->ptr, json_array_get(ax->values, i));

			if ((rc = load_completed(s, &one, 1, e)) < 0)
				err_prefix(e, "%s: %s/%zu", s->file, ax->where, i);
			free(one);
		}
	}
	for (size_t i = 0; i < s->zip_len && rc == 0; i++) {
		nz = 0;
		for (size_t a = 0; a < s->n_axes; a++)
			if (s->axes[a].zip)
				row[nz++] = sweep_set_text(s->axes[a].ptr,
						     json_array_get(s->axes[a].values,
								    i));
		if (nz && (rc = load_completed(s, row, nz, e)) < 0)
			err_prefix(e, "%s: /zip: the values at index %zu", s->file,
				   i);
		for (size_t k = 0; k < nz; k++)
			free(row[k]);
	}
	free(row);
	if (rc < 0)
		return -1;
	/* then every point, as far as a run goes before it simulates */
	for (size_t p = 0; p < s->n_points && rc == 0; p++)
		rc = check_point(s, p, &w, &nw, e);
	/* a warning of some points only comes of what the sweep varies (a
	 * window where it switches async to sync): said are those of all */
	for (size_t i = 0; i < nw; i++) {
		if (rc == 0 && w[i].points == s->n_points) {
			*warnings = xrealloc(*warnings, len + strlen(w[i].line) +
							       64);
			len += (size_t)sprintf(*warnings + len, "%s%s\n",
					       s->n_points > 1 ? "every point: "
							       : "", w[i].line);
		}
		free(w[i].line);
	}
	free(w);
	return rc;
}

char *sweep_resolved(const struct sweep *s)
{
	json_t *doc = json_deep_copy(s->doc), *points = json_array();
	char *text, *real;

	for (size_t p = 0; p < s->n_points; p++) {
		json_t *o = json_object();

		for (size_t a = 0; a < s->n_axes; a++)
			json_object_set(o, s->axes[a].ptr,
					json_array_get(s->axes[a].values,
						       sweep_value_index(s, p, a)));
		json_array_append_new(points, o);
	}
	/* the base as this run found it, for a reader of DIR/sweep.json */
	if ((real = realpath(s->base, NULL)))
		json_object_set_new(doc, "base", json_string(real));
	free(real);
	json_object_set_new(doc, "points", points);
	text = jx_dumps(doc);
	json_decref(doc);
	return text;
}

void sweep_stats(const double *x, size_t n, double *mean, double *ci95)
{
	double sum = 0, ss = 0, m;

	HS_ASSERT(n >= 1);
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	m = sum / (double)n;
	*mean = m;
	*ci95 = 0;
	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - m) * (x[i] - m);
	*ci95 = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) *
		sqrt(ss / (double)(n - 1)) / sqrt((double)n);
}

char *sweep_column(char *buf, const char *ptr)
{
	snprintf(buf, JX_PTR_MAX, "%s", *ptr == '/' ? ptr + 1 : ptr);
	for (char *c = buf; *c; c++)
		if (*c == '/')
			*c = '.';
	return buf;
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
void sweep_csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_header(const struct sweep *s, FILE *f)
{
	char col[JX_PTR_MAX];

	fputs("point", f);
	for (size_t a = 0; a < s->n_axes; a++) {
		fputc(',', f);
		sweep_csv_field(f, sweep_column(col, s->axes[a].ptr));
	}
	fputs(",n_seeds", f);
	for (size_t m = 0; m < s->n_metrics; m++) {
		sweep_column(col, s->metrics[m]);
		fputc(',', f);
		sweep_csv_field(f, strcat(col, "_mean"));
		sweep_column(col, s->metrics[m]);
		fputc(',', f);
		sweep_csv_field(f, strcat(col, "_ci95"));
	}
	fputc('\n', f);
}

/* Reads the metrics of one run into x[m * n_seeds + seed_i]; counts it
 * in *empty where it measured no finished request. */
static int read_run(const struct sweep *s, const char *dir, size_t point,
		    size_t seed_i, double *x, size_t *empty, struct err *e)
{
	char *run = sweep_run_dir(s, dir, point, seed_i);
	size_t n = strlen(run) + 32;
	char *path = xmalloc(n);
	json_t *sum;
	int rc = 0;

	snprintf(path, n, "%s/summary.json", run);
	free(run);
	if (!(sum = jx_load(path, e))) {
		free(path);
		return -1;
	}
	*empty += json_number_value(jx_at(sum, "/all/requests")) == 0;
	for (size_t m = 0; m < s->n_metrics && rc == 0; m++) {
		json_t *v = jx_at(sum, s->metrics[m]);

		if (json_is_number(v) || json_is_null(v))
			x[m * s->n_seeds + seed_i] =
				v && json_is_number(v) ? json_number_value(v) : NAN;
		else
			rc = err_set(e, "%s: %s: expected a number or null, got %s",
				     path, s->metrics[m],
				     v ? "another value" : "nothing");
	}
	json_decref(sum);
	free(path);
	return rc;
}

/* The mean and 95% interval of the seeds' figures that are defined (not
 * NAN; x is reordered); two empty cells when none is. */
static void csv_stats(FILE *f, double *x, size_t n)
{
	size_t k = 0;
	double mean, ci;

	for (size_t i = 0; i < n; i++)
		if (!isnan(x[i]))
			x[k++] = x[i];
	if (!k) {
		fputs(",,", f);
		return;
	}
	sweep_stats(x, k, &mean, &ci);
	fprintf(f, ",%.15g,%.15g", mean, ci);
}

int sweep_csv(const struct sweep *s, const char *dir, size_t *empty,
	      struct err *e)
{
	size_t n = strlen(dir) + 64;
	char *dst = xmalloc(n);
	double *x = xcalloc(s->n_metrics * s->n_seeds, sizeof(*x));
	struct fs_atomic out;
	FILE *f;
	int rc = 0;

	*empty = 0;
	snprintf(dst, n, "%s/sweep.csv", dir);
	if (!(f = fs_atomic_open(&out, dst, e))) {
		rc = -1;
		goto done;
	}
	csv_header(s, f);
	for (size_t p = 0; p < s->n_points && rc == 0; p++) {
		for (size_t k = 0; k < s->n_seeds && rc == 0; k++)
			rc = read_run(s, dir, p, k, x, empty, e);
		if (rc < 0)
			break;
		fprintf(f, "%zu", p);
		for (size_t a = 0; a < s->n_axes; a++) {
			json_t *v = json_array_get(s->axes[a].values,
						   sweep_value_index(s, p, a));
			char *text = json_is_string(v) ? NULL : value_text(v, 15);

			fputc(',', f);
			sweep_csv_field(f, text ? text : json_string_value(v));
			free(text);
		}
		fprintf(f, ",%zu", s->n_seeds);
		for (size_t m = 0; m < s->n_metrics; m++)
			csv_stats(f, x + m * s->n_seeds, s->n_seeds);
		fputc('\n', f);
	}
	if (rc < 0)
		fs_atomic_abort(&out);
	else
		rc = fs_atomic_commit(&out, e);
done:
	free(x);
	free(dst);
	return rc;
}
