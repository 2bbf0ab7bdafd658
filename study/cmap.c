/* cmap.c: the regions grid and its maps.
 *
 * The sweep's rows are placed by their axis values into a dense grid (the
 * axes are the distinct values of each column, sorted); a cell the sweep
 * lacks stays 0, and cmap_have says so: a map does not hold there. */
#include "cmap.h"

#include "csv.h"
#include "err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Adds v to the sorted axis a (n values) unless it is there; false when
 * the axis is full. */
static bool axis_add(double *a, size_t *n, double v)
{
	size_t i = 0;

	while (i < *n && a[i] < v)
		i++;
	if (i < *n && a[i] == v)
		return true;
	if (*n == CMAP_AXIS)
		return false;
	memmove(a + i + 1, a + i, (*n - i) * sizeof(*a));
	a[i] = v;
	(*n)++;
	return true;
}

static size_t axis_at(const double *a, size_t n, double v)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] == v)
			return i;
	return n;
}

bool cmap_have(const struct cmap_grid *g, size_t d, size_t a, size_t r)
{
	return g->itl[PROTO_SYNC][d][a][r] > 0 &&
	       g->itl[PROTO_ASYNC][d][a][r] > 0 &&
	       g->itl[PROTO_CLOUD_SPEC][d][a][r] > 0;
}

size_t cmap_nearest(const double *axis, size_t n, double v)
{
	size_t best = 0;

	for (size_t i = 1; i < n; i++)
		if (fabs(axis[i] - v) < fabs(axis[best] - v))
			best = i;
	return best;
}

int cmap_load(struct cmap_grid *g, const char *dir, struct err *e)
{
	static const char *const names[] = { "tenants.0.device.draft_base_s",
		"tenants.0.acceptance.alpha", "tenants.0.wan.rtt_s",
		"protocol.kind", "all.itl_s.mean_mean", NULL };
	char path[4096];
	struct csv c = { 0 };
	int col[5];
	FILE *f;

	memset(g, 0, sizeof(*g));
	snprintf(path, sizeof(path), "%s/sweeps/regions/sweep.csv", dir);
	if (!(f = fopen(path, "r")))
		return 0;
	fclose(f);
	if (csv_load_cols(&c, path, names, col, e) < 0)
		return -1;
	for (size_t r = 0; r < c.nrow; r++)
		for (int k = 0; names[k]; k++) {
			double x;

			/* every column a number but the protocol's name */
			if (k != 3 && csv_number(&c, r, col[k], &x, e) < 0) {
				csv_release(&c);
				return -1;
			}
		}
	for (size_t r = 0; r < c.nrow; r++)
		if (!axis_add(g->d, &g->nd, csv_num(&c, r, col[0])) ||
		    !axis_add(g->alpha, &g->na, csv_num(&c, r, col[1])) ||
		    !axis_add(g->rtt, &g->nr, csv_num(&c, r, col[2]))) {
			err_set(e, "%s: row %zu: more than %d values of an axis "
				"(draft time, alpha or RTT): a map has at most %d",
				path, r + 1, CMAP_AXIS, CMAP_AXIS);
			csv_release(&c);
			return -1;
		}
	for (size_t r = 0; r < c.nrow; r++) {
		size_t i = axis_at(g->d, g->nd, csv_num(&c, r, col[0]));
		size_t j = axis_at(g->alpha, g->na, csv_num(&c, r, col[1]));
		size_t k = axis_at(g->rtt, g->nr, csv_num(&c, r, col[2]));
		int p = cfg_name_find(cfg_proto_names, csv_str(&c, r, col[3]));

		if (p >= 0 && i < g->nd && j < g->na && k < g->nr)
			g->itl[p][i][j][k] = csv_num(&c, r, col[4]);
	}
	csv_release(&c);
	return 1;
}

json_t *cmap_json(const struct cmap *m, json_t *points)
{
	json_t *x = json_array(), *y = json_array(), *v = json_array();
	json_t *ok = json_array();

	for (size_t i = 0; i < m->nx; i++)
		json_array_append_new(x, json_real(m->x[i]));
	for (size_t j = 0; j < m->ny; j++) {
		json_t *vr = json_array(), *okr = json_array();

		json_array_append_new(y, json_real(m->y[j] * m->yscale));
		for (size_t i = 0; i < m->nx; i++) {
			json_array_append_new(vr, json_real(m->v[j][i]));
			json_array_append_new(okr, json_boolean(m->ok[j][i]));
		}
		json_array_append_new(v, vr);
		json_array_append_new(ok, okr);
	}
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o}", "name",
			 m->name, "title", m->title, "xlabel", "alpha (iid)",
			 "ylabel", m->ylabel, "vlabel", m->vlabel, "x", x, "y", y,
			 "value", v, "ok", ok, "points", points);
}

/* The lowest column from which row j holds at every higher column;
 * m->nx when it does not hold at the highest. */
static size_t row_from(const struct cmap *m, size_t j)
{
	size_t i = m->nx;

	while (i > 0 && m->ok[j][i - 1])
		i--;
	return i;
}

void cmap_region(const struct cmap *m, const char *yfmt, const char *yunit,
		 char *out, size_t n)
{
	size_t at = 0, j = 0;
	bool all = true;

	out[0] = '\0';
	for (size_t r = 0; r < m->ny; r++)
		all &= row_from(m, r) == 0;
	if (all) {
		snprintf(out, n, "everywhere swept");
		return;
	}
	while (j < m->ny && at + 1 < n) {
		size_t from = row_from(m, j), k = j;
		char ys[128], lo[32], hi[32], where[48];

		while (k + 1 < m->ny && row_from(m, k + 1) == from)
			k++;
		snprintf(lo, sizeof(lo), yfmt, m->y[j] * m->yscale);
		snprintf(hi, sizeof(hi), yfmt, m->y[k] * m->yscale);
		if (j == k)
			snprintf(ys, sizeof(ys), "%s %s %s", m->yname, lo, yunit);
		else
			snprintf(ys, sizeof(ys), "%s %s-%s %s", m->yname, lo, hi,
				 yunit);
		if (from == m->nx)
			snprintf(where, sizeof(where), "nowhere");
		else if (from == 0)
			snprintf(where, sizeof(where), "at every alpha");
		else
			snprintf(where, sizeof(where), "from alpha %g", m->x[from]);
		at += (size_t)snprintf(out + at, n - at, "%s%s at %s",
				       at ? "; " : "", where, ys);
		j = k + 1;
	}
}
