/* claims.h: the verdicts on the paper's claims, computed from what
 * `make run` leaves in a results folder (runs/, sweeps/, formulas.json) and
 * the acceptance profiles of a calibration folder.
 *
 * Each claim is judged by the thresholds of one table (claims.c), which
 * the output lists first; its evidence is text and tables, ready for
 * scripts/report.sh to write as Markdown, and its verdict is "holds",
 * "holds only when ...", "does not hold" or "not decided: ...". A claim whose inputs are missing gets a line
 * saying which, and no verdict. */
#ifndef HS_CLAIMS_H
#define HS_CLAIMS_H

#include <jansson.h>

struct err;

/* {"thresholds": [{"name", "value", "meaning"}], "setting": BLOCKS,
 * "claims": [{"id": "a", "title", "blocks": BLOCKS, "verdict": TEXT or
 * null}], "others": {"itl-vs-tenants": BLOCKS, "itl-vs-gamma": BLOCKS}} for
 * the results in dir and the profiles in calib, BLOCKS an array of {"text":
 * MD} and {"table": {"columns": [...], "rows": [[...]]}} (setting: the
 * paper's runs; others: the sweeps no claim rests on). New reference, or
 * NULL with e's message (an input that is there but unreadable). */
json_t *claims_compute(const char *dir, const char *calib, struct err *e);

#endif
