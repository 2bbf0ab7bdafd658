/* workload.h: arrival traces, each request a row of arrival time, prompt
 * tokens and output tokens, read from a file in one of the formats of
 * workload.c's table (docs/config.md): the project's CSV
 * "arrival_s,prompt_tokens,output_tokens", the Azure LLM inference traces,
 * BurstGPT, Mooncake's JSON lines. Row i goes to tenant i mod count of its
 * group. */
#ifndef HS_WORKLOAD_H
#define HS_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct wl_row {
	double arrive_s;
	int32_t prompt, output;
};

struct wl_trace {
	struct wl_row *rows; /* (n) owned, in file order, times
				non-decreasing */
	size_t n;
	size_t skipped;      /* rows that are no requests (BurstGPT's
				failures) */
	const char *format;  /* static: the format it was read as */
};

/* Reads path in format (a name of wl_format_names: "auto" picks by the
 * first line), arrival times divided by speed (> 0: 2 replays twice as
 * fast). 0, or -1 with "PATH:LINE: COLUMN: expected ..., got ..." (or
 * "PATH: request N: expected an arrival time >= ..." when unsorted). */
int wl_trace_load(struct wl_trace *t, const char *path, const char *format,
		  double speed, struct err *e);
void wl_trace_release(struct wl_trace *t);

/* "auto" and the formats' names, NULL-terminated; what a format reads of
 * its file (NULL for an unknown name). Both static. */
const char *const *wl_format_names(void);
const char *wl_format_uses(const char *name);

#endif
