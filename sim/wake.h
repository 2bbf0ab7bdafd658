/* wake.h: what a processor's first pass after a pause costs: a table of
 * idle time -> extra seconds on top of the pass's back-to-back time. On a
 * shared host the neighbours empty the caches while a core idles; an idle
 * GPU or phone core clocks down. The table is measured (validate times a
 * pass after pauses of several lengths), never assumed. */
#ifndef HS_WAKE_H
#define HS_WAKE_H

#include <stddef.h>

#include "jx.h"

struct wake {
	size_t n;         /* rows; 0: no extra cost */
	double *idle_s;   /* (n) strictly increasing, >= 0; owned */
	double *extra_s;  /* (n) >= 0; owned */
};

/* Reads obj["wake"], {"idle_s": [...], "extra_s": [...]} of one length,
 * into out (n = 0 when absent). -1 with x's message. */
int wake_read(struct jx *x, json_t *obj, const char *ptr, struct wake *out);
void wake_release(struct wake *w);

/* The extra seconds of a pass after idle_s: linear between the rows (and
 * from no extra at no pause to the first), the last row's beyond it. */
double wake_extra_s(const struct wake *w, double idle_s);

#endif
