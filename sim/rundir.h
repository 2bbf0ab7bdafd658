/* rundir.h: one simulation written to its results folder, whole or not at
 * all (base/outdir.h): what `hybridspec run` and every run of a sweep
 * write. The files: summary.json, config.resolved.json, perf.json (the only
 * one with wall-clock figures), and on request tenants.csv, requests.csv
 * and trace.json (Chrome/Perfetto). */
#ifndef HS_RUNDIR_H
#define HS_RUNDIR_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"

struct sim;

struct rundir_opts {
	bool tables;            /* tenants.csv and requests.csv too */
	bool trace;             /* trace.json of the first trace_tenants */
	bool replace;           /* an existing results folder may be
				   replaced (od_begin) */
	uint32_t trace_tenants;
	volatile sig_atomic_t *stop; /* borrowed, or NULL: nonzero stops the
					run, and nothing is put in place */
	void (*tick)(void *tick_ctx, const struct sim *s); /* sim_opts' */
	void *tick_ctx;
};

struct rundir_result {
	json_t *summary; /* owned by the caller: json_decref */
	double wall_s;   /* the simulation's wall-clock seconds */
	uint64_t events;
};

/* Simulates c into dir. 0 with *r filled, or -1: e's message (bad input
 * met on the way, a file that cannot be written), or no message when stop
 * turned nonzero; dir is then as it was. */
int rundir_write(const struct cfg *c, const char *dir,
		 const struct rundir_opts *o, struct rundir_result *r,
		 struct err *e);

#endif
