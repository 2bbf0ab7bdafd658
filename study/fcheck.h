/* fcheck.h: the paper's formulas checked against the simulator, each in
 * its regime (docs/formulas.md): a config built for the formula's
 * assumptions, simulated in-process, one figure of its summary compared
 * with the closed form; and the async table of the paper's bound, the
 * renewal model and the simulation. */
#ifndef HS_FCHECK_H
#define HS_FCHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "err.h"

/* the most an in-regime row may be off for the checks to pass */
#define FCHECK_MAX_REL_ERROR 0.01

struct fcheck {
	char formula[64], regime[160];
	bool in_regime;
	double predicted, simulated;
};

struct fcheck_list {
	struct fcheck *v; /* (n) owned */
	size_t n, cap;
};

/* Runs every check into l (empty to begin with); 0, or -1 with e. */
int fcheck_run(struct fcheck_list *l, struct err *e);
void fcheck_list_release(struct fcheck_list *l);
double fcheck_rel_error(const struct fcheck *c);
/* Whether every in-regime row is within FCHECK_MAX_REL_ERROR. */
bool fcheck_passed(const struct fcheck_list *l);
/* {"checks": [...], "passed", "max_rel_error"}; the caller decrefs. */
json_t *fcheck_json(const struct fcheck_list *l);
/* The rows as a table and the verdict line. */
void fcheck_print(const struct fcheck_list *l, FILE *f);

/* Async time per token against alpha, gamma, RTT as a markdown table on
 * f, a row as it is simulated; 0, or -1 with e. */
int fcheck_async_table(FILE *f, struct err *e);

#endif
