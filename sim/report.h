/* report.h: what a run reports (docs/design.md, section 5): summary.json,
 * tenants.csv, the requests.csv header, and a short table for a terminal. */
#ifndef HS_REPORT_H
#define HS_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "sim.h"

/* The header line of requests.csv (REQ_CSV_COLUMNS), to f. */
void rep_requests_header(FILE *f);

/* The summary of a finished run: every figure is a function of the config
 * and the seed (no wall-clock time), so equal seeds give equal files. New
 * reference; caller decrefs. */
json_t *rep_summary(const struct sim *s);

/* Simulates c to the end and returns its summary (new reference), or NULL
 * with e's message: what formulas, calib check, validate and sweeps ask of
 * a config. */
json_t *rep_simulate(const struct cfg *c, struct err *e);

/* Writes tenants.csv to f. */
void rep_tenants_csv(const struct sim *s, FILE *f);
/* Every figure of a group in summary.json, and every column of
 * requests.csv and tenants.csv, with what it means. */
void rep_columns(FILE *f);

/* A short readable table of summary (as rep_summary makes it). */
void rep_print(const json_t *summary, FILE *f);
/* What each of the table's columns means, a line each. */
void rep_legend(FILE *f);

#endif
