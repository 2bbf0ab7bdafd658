/* plot.h: figures of a user's own results with gnuplot: a run's
 * distributions over its requests (TTFT, TPOT, each request's median and
 * p99 ITL: one CDF a group) or a sweep's lines (a metric against a
 * parameter, a line per value of the others, with 95% intervals). The
 * figures, their data and the gnuplot script land in a folder of their
 * own (written whole or not at all, base/outdir.h), PNG and SVG. */
#ifndef HS_PLOT_H
#define HS_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct plot_opts {
	const char *out;  /* borrowed: the figures' folder; NULL: DIR/plots */
	const char *x, *y, *by; /* borrowed, a sweep's: its columns (NULL: the
				   first parameter, the first metric, every
				   other parameter) */
};

#define PLOT_MAX_FIGURES 8

struct plot_result {
	char dir[4200];                     /* where they went */
	bool sweep;                         /* a sweep's, else a run's */
	size_t n;                           /* figures drawn */
	char name[PLOT_MAX_FIGURES][200];   /* each one's base name */
	bool drawn;                         /* gnuplot drew them (else only
					       their data and script) */
};

/* Figures of dir, a run's results (summary.json, requests.csv) or a
 * sweep's (sweep.csv). 0, or -1 with e's message (dir neither, a column
 * not in the sweep, naming the ones there; gnuplot missing or failing is
 * not an error: r->drawn says). */
int plot_dir(const char *dir, const struct plot_opts *o,
	     struct plot_result *r, struct err *e);

/* Runs gnuplot on script in dir (output silenced); whether it ran and
 * exited 0. Also plan's front. */
bool plot_gnuplot(const char *dir, const char *script);
/* s with its quotes made harmless inside gnuplot's quoted strings: a copy
 * in buf (cap bytes), returned. */
const char *plot_quoted(const char *s, char *buf, size_t cap);

#endif
