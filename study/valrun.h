/* valrun.h: the real deployment on loopback against the simulator, point
 * by point, for a sweep file (docs/deploy.md): every point checked first,
 * the profiles measured once, each point run as a task of the farm (in
 * this process: the points are timed, one at a time; a point that fails
 * is recorded and the next one runs), and the results folder written
 * whole or not at all. SIGINT or SIGTERM stop it at the next step (a
 * point's processes killed) with nothing written. The work of one point
 * is validate.h's. */
#ifndef HS_VALRUN_H
#define HS_VALRUN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "err.h"

#define VALRUN_CLOSE 0.10 /* the first goal: sim within 10% of real */
#define VALRUN_TIGHT 0.05 /* the goal now: within 5% */
/* the default edge bound: the most of an edge CPU the simulated edges of
 * a point may keep busy (drafting, prefilling) for it to run: beyond, the
 * emulation's edge processes wait for each other's CPU, which the
 * simulator (a processor per device) does not model (docs/deploy.md has
 * the measurements) */
#define VALRUN_EDGE_BOUND 0.4

struct valrun_opts {
	const char *sweep;	  /* borrowed: the sweep file */
	const char *out;	  /* borrowed: the folder; NULL: the default */
	bool replace;		  /* an existing results folder may be replaced
				     (always the default one) */
	const char *target, *draft; /* borrowed: models, NAME[:Q] */
	const char *text;	  /* borrowed: the prompts' text; NULL: default */
	double timeout_s;	  /* a point's processes killed after it */
	double edge_bound;	  /* see VALRUN_EDGE_BOUND */
	bool quick, quiet, edges_sleep, retime;
	FILE *table;		  /* the table: its head once the profiles are
				     measured, then a row a point as it ends;
				     or NULL */
	const json_t *prov;	  /* borrowed: the command line's provenance */
};

/* valrun_result's status, an exit status (or 128 + N: stopped by signal
 * N, nothing written) */
enum { VALRUN_LOSSLESS = 0, VALRUN_FAILED = 1, VALRUN_BAD = 2 };

struct valrun_result {
	int status;	     /* VALRUN_*: FAILED an output not lossless, a
				point failed or none ran; BAD bad input (e
				says each) */
	size_t points, not_run; /* the sweep's points, those over the bound */
	size_t failed;	     /* points that failed (validate.json's failed
				says why); the others still ran */
	long close, tight;   /* points run within VALRUN_CLOSE, _TIGHT on
				ITL and tokens/s */
	long ttft_tight;     /* points run within VALRUN_TIGHT on TTFT */
	long lossy;	     /* requests whose output was not the target's */
	bool written;	     /* the folder was put in place */
	char *json;	     /* owned: validate.json's text (when written) */
	char out[4096];	     /* the results folder */
};

/* Validates o->sweep into its results folder. */
void valrun_run(const struct valrun_opts *o, struct valrun_result *r,
		struct err *e);
void valrun_result_release(struct valrun_result *r);

#endif
