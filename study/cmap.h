/* cmap.h: where a claim holds, as a map: the regions sweep (mean ITL of
 * sync, async and cloud_spec over draft time x alpha x RTT, one tenant)
 * read into a grid, maps of a figure over two of its axes with the cells
 * where a claim holds, and the region said in words.
 *
 * A map's x axis is alpha, increasing; its rows are the values of the other
 * axis (RTT or draft time). The region of a row is the lowest alpha from
 * which the claim holds at every higher one swept, as the verdicts of the
 * report read it ("holds from alpha 0.9"). */
#ifndef HS_CMAP_H
#define HS_CMAP_H

#include "cfg.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct err;

enum { CMAP_AXIS = 12 };

struct cmap_grid {
	double d[CMAP_AXIS], alpha[CMAP_AXIS], rtt[CMAP_AXIS]; /* increasing */
	size_t nd, na, nr;
	/* mean ITL, s, by protocol (enum proto_kind), draft time, alpha,
	 * RTT; 0: not swept */
	double itl[PROTO_N][CMAP_AXIS][CMAP_AXIS][CMAP_AXIS];
};

/* dir/sweeps/regions/sweep.csv into g: 1 read, 0 missing, -1 unreadable
 * (e's message). */
int cmap_load(struct cmap_grid *g, const char *dir, struct err *e);

/* Whether the maps' protocols (sync, async, cloud_spec) were all swept at
 * draft time d, alpha a and RTT r (indices); a map's cell that needs a
 * missing one does not hold. */
bool cmap_have(const struct cmap_grid *g, size_t d, size_t a, size_t r);

/* The index of the axis value nearest v. */
size_t cmap_nearest(const double *axis, size_t n, double v);

struct cmap {
	char name[48];         /* the figure's file name */
	char title[160], ylabel[64];
	const char *vlabel;    /* static: what a cell's value is */
	const char *yname;     /* static: the y axis in the region's words */
	double yscale;         /* shown: y x yscale */
	size_t nx, ny;
	double x[CMAP_AXIS], y[CMAP_AXIS];
	double v[CMAP_AXIS][CMAP_AXIS]; /* [row y][column x] */
	bool ok[CMAP_AXIS][CMAP_AXIS];  /* the claim holds in the cell */
};

/* The map as JSON for the plots: {"name", "title", "xlabel", "ylabel",
 * "vlabel",
 * "x": [...], "y": [...] (shown units), "value": [[row]], "ok": [[row]],
 * "points": points} (points taken: [{"label", "alpha", "y"}]). */
json_t *cmap_json(const struct cmap *m, json_t *points);

/* The region in words: for each run of rows with the same lowest alpha,
 * "from alpha A at YNAME Y0-Y1 UNIT" or "nowhere at ...", joined by "; ";
 * "everywhere swept" when every cell holds. yfmt formats a shown y. */
void cmap_region(const struct cmap *m, const char *yfmt, const char *yunit,
		 char *out, size_t n);

#endif
