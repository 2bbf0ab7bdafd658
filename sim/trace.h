/* trace.h: a run's Chrome/Perfetto trace (trace.json; open it in
 * ui.perfetto.dev or chrome://tracing).
 *
 * A process per kind of track (edge, uplink, downlink, cloud queue, GPU);
 * within it a thread per tenant (per replica for the GPU), named after it;
 * spans ("X" events) in microseconds of simulated time. */
#ifndef HS_TRACE_H
#define HS_TRACE_H

#include <stdint.h>
#include <stdio.h>

enum trace_kind { TRACE_EDGE = 1, TRACE_UP, TRACE_DOWN, TRACE_QUEUE, TRACE_GPU };

struct trace {
	FILE *f;         /* borrowed */
	uint64_t spans;  /* written so far */
	uint64_t max_spans; /* batches beyond it are left out (the file's size) */
};

/* Starts the document on f, with the processes' names. */
void trace_begin(struct trace *t, FILE *f);
/* Names the thread `track` of kind k (printf format). */
void trace_name(struct trace *t, enum trace_kind k, uint32_t track,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A span [t0_s, t1_s] named name on the track; args_fmt (or NULL) is the
 * inside of its args object, a printf format of the two numbers a, b. */
void trace_span(struct trace *t, enum trace_kind k, uint32_t track,
		const char *name, double t0_s, double t1_s,
		const char *args_fmt, long a, long b);
/* Ends the document (f stays open). */
void trace_end(struct trace *t);

#endif
