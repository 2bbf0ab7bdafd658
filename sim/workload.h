/* workload.h: arrival traces, a CSV of "arrival_s,prompt_tokens,
 * output_tokens" rows (a header line and '#' comments are skipped). Row i
 * goes to tenant i mod count of its group; arrival times are absolute. */
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
	struct wl_row *rows; /* (n) owned, in file order */
	size_t n;
};

int wl_trace_load(struct wl_trace *t, const char *path, struct err *e);
void wl_trace_release(struct wl_trace *t);

#endif
