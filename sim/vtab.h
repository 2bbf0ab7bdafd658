/* vtab.h: a verify-cost table measured by `calib gpu` (or `calib verify`):
 * seconds of one iteration on a grid of batch tokens x context length, for
 * one model on one GPU (the format: vtab.c, docs/calib.md). Read with the
 * config that names it (cfg_gpu.vtab); sim/cost.c interpolates in it. */
#ifndef HS_VTAB_H
#define HS_VTAB_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

struct vtab {
	double *tok, *ctx; /* (nt), (nc) owned, increasing */
	double *sec;       /* (nt x nc) owned: sec[i * nc + j] */
	double *pre;       /* (nt x nc) owned, or NULL: a prompt chunk's,
			      without logits, where the table has them */
	size_t nt, nc;     /* nt == 0: no table */
	char *gpu;         /* owned: the GPU it was measured on */
};

/* Reads doc (borrowed), named path in messages, as the table of model;
 * the defaults it lacks ("kind", "model") are filled into it, as the
 * config's are.
 * 0, or -1 with e's message (and t empty). */
int vtab_parse(struct vtab *t, json_t *doc, const char *path,
	       const char *model, struct err *e);
/* The same from the file path. */
int vtab_load(struct vtab *t, const char *path, const char *model,
	      struct err *e);
void vtab_release(struct vtab *t);

#endif
