/* check.h: the fidelity checks of `calib check`: the simulator with
 * profiles measured here against the real models run here. */
#ifndef HS_CHECK_H
#define HS_CHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "err.h"

#define CHECK_MAX_ROWS 16

struct check_row {
	char name[160];
	double predicted_s, measured_s;
	double rel_error; /* (predicted - measured) / measured */
	double bound;     /* |rel_error| must not exceed it */
};

struct check {
	struct check_row rows[CHECK_MAX_ROWS];
	int n;
};

struct check_opts {
	const char *draft, *draft_quant;   /* the edge model */
	const char *target, *target_quant; /* the CPU verifier */
	const char *text;                  /* real text for the prompt; NULL:
					      the TinyStories excerpt of
					      mload_data_dir() */
	int threads;
	bool quick;    /* fewer repetitions, loose bounds (for make test) */
	bool progress;
};

/* Runs every check into k. -1 with the message when a model or the text
 * does not load. */
int check_run(struct check *k, const struct check_opts *o, const json_t *prov,
	      struct err *e);

/* k's rows to f: a table (predicted and measured milliseconds, the error,
 * the bound, MISSED where it is exceeded) or, with json, one object
 * {"checks": [{"name", "predicted_s", "measured_s", "rel_error", "bound",
 * "pass"}]}. Returns how many rows missed their bound. */
int check_print(const struct check *k, bool json, FILE *f);

#endif
