/* fsetting.h: the paper's closed forms for a config's setting
 * (docs/formulas.md), for its first group at its mean lengths and RTT:
 * E[A], Leviathan's improvement, T_sync, the async bound and renewal
 * model, the balance points, the roofline, capacity in tenants and in
 * requests a second, M/D/1 waits. */
#ifndef HS_FSETTING_H
#define HS_FSETTING_H

#include <jansson.h>
#include <stdio.h>

#include "cfg.h"

/* Every figure as one object; the caller decrefs. */
json_t *fset_json(const struct cfg *c);
/* The same as text, a formula a line. */
void fset_print(const struct cfg *c, FILE *f);

#endif
