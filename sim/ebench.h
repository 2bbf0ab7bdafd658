/* ebench.h: the event engine's benchmarks (`bench engine`): the hold model
 * on the event queue, and the M/M/1 queue of cimba's MM1_single benchmark. */
#ifndef HS_EBENCH_H
#define HS_EBENCH_H

#include <stdbool.h>
#include <stdio.h>

/* What "bench engine" runs. */
struct ebench_opts {
	long long steps; /* hold model: steps timed a row (>= 1) */
	bool mm1;        /* the M/M/1 queue instead of the hold model */
	bool json;       /* one JSON object instead of a table */
};

/* The hold model with 1e3, 1e5 and 1e6 events pending, a row each as it
 * is measured, or the M/M/1 queue of one million customers, printed to f
 * (the figures: cli's help). */
void ebench_run(const struct ebench_opts *o, FILE *f);

#endif
