/* sweep.h: a parameter sweep over the simulation config (docs/sweep.md).
 *
 * A sweep file names a base config, fixed overrides ("set"), a grid of
 * overrides (cartesian product, first key outermost), zipped lists
 * (advanced together, innermost) and the seeds each point runs with. Every
 * override is a JSON pointer into the config and a JSON value, applied with
 * the same --set machinery as "hybridspec run" (cfg_load). A point is one
 * combination of grid and zip values; a run is a point and a seed.
 *
 * Results layout under the output directory DIR:
 *   DIR/sweep.json                      the resolved sweep, its points listed
 *   DIR/points/<point>/seed-<seed>/     one run (written whole or not at all)
 *   DIR/sweep.csv                       a row per point: means, 95% CIs */
#ifndef HS_SWEEP_H
#define HS_SWEEP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h"
#include "jx.h"

/* One varied config pointer and the values it takes. */
struct sweep_axis {
	const char *ptr;        /* borrowed from doc: the config pointer */
	json_t *values;         /* borrowed from doc: a non-empty array */
	bool zip;               /* a zip axis (else a grid axis) */
	char where[JX_PTR_MAX]; /* the array's pointer in the sweep file */
};

struct sweep {
	json_t *doc;          /* owned: the resolved sweep document */
	char *file;           /* owned: the path it was read from */
	const char *name;     /* borrowed from doc */
	char *base;           /* owned: the base config's path, resolved
				 against the sweep file's folder */
	char **set;           /* (n_set) owned: fixed "POINTER=VALUE" */
	size_t n_set;
	struct sweep_axis *axes; /* (n_axes) owned: grid axes, then zip axes */
	size_t n_axes;
	size_t zip_len;       /* values of every zip axis; 1 without zip */
	long long *seeds;     /* (n_seeds) owned: distinct, >= 0 */
	size_t n_seeds;
	const char **metrics; /* (n_metrics) borrowed from doc: pointers into
				 a run's summary.json */
	size_t n_metrics;
	size_t n_points;      /* product of grid lengths, times zip_len */
};

/* Reads and checks the sweep file at path: its keys and types, and that the
 * base config with the fixed overrides loads. Returns 0, or -1 with the
 * message (file and JSON pointer) and s released. */
int sweep_load(struct sweep *s, const char *path, struct err *e);
void sweep_release(struct sweep *s);

/* Loads every value of every axis alone, then every point, through cfg_load,
 * and checks that each metric is a number in a run's summary. The first
 * failure names the sweep file, the place in it and the config's message.
 * Returns 0 or -1; with 0, *warnings (caller frees; NULL: none) holds the
 * config warnings that every point gives, a line each ("every point:
 * LINE"; one that only some give comes of what the sweep varies). */
int sweep_check(const struct sweep *s, char **warnings, struct err *e);

/* The index into axis a's values that point takes. */
size_t sweep_value_index(const struct sweep *s, size_t point, size_t a);

/* The point's values in buf (n bytes): "/a/b=1, /c=\"x\"" (for messages),
 * or brief "b=1 c=\"x\"" (for tables: the last key, a distribution's
 * parameter named with its key, "rtt_s/mean=0.06", 6 digits). */
void sweep_point_label(const struct sweep *s, size_t point, bool brief,
		       char *buf, size_t n);

/* The overrides of a run: the fixed ones, the point's values, and
 * "/seed=SEED" unless seed < 0. Caller frees with sweep_sets_free. */
char **sweep_sets(const struct sweep *s, size_t point, long long seed,
		  size_t *n);
void sweep_sets_free(char **sets, size_t n);

/* "POINTER=VALUE" for cfg_load, the value written so that it reads back
 * exactly (a number to the digits it needs). Caller frees. */
char *sweep_set_text(const char *ptr, const json_t *v);

/* "DIR/points/<point>/seed-<seed>". Caller frees. */
char *sweep_run_dir(const struct sweep *s, const char *dir, size_t point,
		    size_t seed_i);

/* The resolved sweep (defaults filled in, "points" listing each point's
 * values) as text, the way project files are written. Caller frees. */
char *sweep_resolved(const struct sweep *s);

/* Mean of x[0..n) and the half-width of its 95% confidence interval,
 * t(0.975, n - 1) * sd / sqrt(n) with the sample standard deviation; 0 when
 * n < 2. */
void sweep_stats(const double *x, size_t n, double *mean, double *ci95);

/* Reads every run's summary.json under dir and writes dir/sweep.csv through
 * a temporary file and a rename: a header, then a row per point with the
 * point index, each axis's value, n_seeds, and <metric>_mean,<metric>_ci95
 * for each metric; *empty the runs that measured no finished request.
 * Returns 0, or -1 with the message (a missing run, a metric that is not
 * a number). */
int sweep_csv(const struct sweep *s, const char *dir, size_t *empty,
	      struct err *e);

/* Writes s as one CSV field: as it is, or quoted with its quotes doubled
 * when it holds a comma, a quote or a line break (RFC 4180). */
void sweep_csv_field(FILE *f, const char *s);

/* The column name of a pointer: "/all/itl_s/mean" -> "all.itl_s.mean".
 * buf has JX_PTR_MAX bytes. Returns buf. */
char *sweep_column(char *buf, const char *ptr);

#endif
