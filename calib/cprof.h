/* cprof.h: measured GPU operator profiles (Vidur's layout) into operator
 * tables and efficiency curves: `calib import-profiles`. */
#ifndef HS_CPROF_H
#define HS_CPROF_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"

/* `calib import-profiles` (cprof.c, docs/gpu-costs.md): the operator
 * profiles in dir (Vidur's layout: compute/<gpu>/<org>/<model>/mlp.csv
 * and network/<topology>/all_reduce.csv, in dir or in dir/data/profiling)
 * turned into out/<GPU>-<MODEL>-tp<N>.json operator tables, one for each
 * profiled (GPU, built-in model, tp), and out/curves.json, the GPUs'
 * fitted efficiency curves with the derivation's held-out errors: each
 * profiled table derived from the curve fitted without its model, and
 * from the other GPUs' curves (a line each on stderr). */
struct calib_import {
	const char *dir, *out;
	const char *gpu;    /* only this preset, or NULL */
	const char *model;  /* tables of this built-in shape only, or NULL */
	const char *source; /* where the profiles come from (repository,
			       commit, licence), into every table */
	bool print_rows;    /* print the curves as sim/gcurve.c's rows */
	bool overwrite;     /* replace files in out (jx_replaceable) */
};

/* 0, or -1 with e's message: a folder not in the layout, a file lacking a
 * column ("FILE: no column NAME"), a profile contradicting its model's
 * shape, nothing to import. */
int calib_import_profiles(const struct calib_import *o, const json_t *prov,
			  struct err *e);

#endif
