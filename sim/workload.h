/* workload.h: arrival traces, each request a row of arrival time, prompt
 * tokens and output tokens, read from a file in one of the formats of
 * workload.c's table (docs/config.md): the project's CSV
 * "arrival_s,prompt_tokens,output_tokens", the Azure LLM inference traces,
 * BurstGPT, Mooncake's JSON lines. Row i goes to tenant i mod count of its
 * group, or a user's rows to one tenant (the CSV's optional user column). */
#ifndef HS_WORKLOAD_H
#define HS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct wl_row {
	double arrive_s;
	int32_t prompt, output;
	int32_t user;        /* the row's user, numbered by first row; -1:
				none given */
	int32_t line;        /* its line in the file; 0: the format has
				none (ShareGPT's conversations) */
};

struct wl_trace {
	struct wl_row *rows; /* (n) owned, in file order, times
				non-decreasing */
	size_t n;
	int32_t users;       /* distinct users given (0: no user column) */
	/* wl_trace_assign's: tenant k's rows are rows[of[first[k]]] ..
	 * rows[of[first[k + 1] - 1]], in time order */
	size_t *first;       /* (tenants + 1) owned */
	size_t *of;          /* (n) owned */
	size_t skipped;      /* rows that are no requests (BurstGPT's
				failures) */
	const char *format;  /* static: the format it was read as */
	bool text;           /* of a format of text without times or token
				counts, which takes struct wl_text */
};

/* A request's prompt or output is at most WL_TOKENS_MAX tokens: a
 * trace's rows are refused past it, a drawn length cut to it */
#define WL_TOKENS_MAX 1e7

/* What a trace without times or token counts needs (ShareGPT's
 * conversations): a tokenizer to count tokens, and a Poisson rate (with
 * its seed) to draw the arrivals. */
struct wl_text {
	const char *tokenizer; /* borrowed: a model name or path (mload), or
				  NULL */
	double rate_per_s;     /* requests a second; 0: not given */
	uint64_t seed;
};

/* Reads path in format (a name of wl_format_names: "auto" picks by the
 * first line), arrival times divided by speed (> 0: 2 replays twice as
 * fast); text (NULL: none) serves the formats of text. 0, or -1 with
 * "PATH:LINE: COLUMN: expected ..., got ..." (or "PATH:LINE: expected an
 * arrival time >= ..." when unsorted). */
/* Where row i of t is, for a message after the file's name: ":LINE", or
 * ": request N" (from 1) in a format without lines. Returns buf. */
char *wl_trace_where(const struct wl_trace *t, size_t i, char *buf, size_t n);

int wl_trace_load(struct wl_trace *t, const char *path, const char *format,
		  double speed, const struct wl_text *text, struct err *e);
void wl_trace_release(struct wl_trace *t);

/* Gives the rows to tenants 0 .. tenants - 1: by user when the trace
 * names users (user u to tenant u mod tenants, all its requests to it),
 * else row i to tenant i mod tenants. */
void wl_trace_assign(struct wl_trace *t, uint32_t tenants);

/* Tenant k's row j (0-based), or NULL when it has no more. */
static inline const struct wl_row *wl_trace_row(const struct wl_trace *t,
						uint32_t k, uint64_t j)
{
	return t->first[k] + j < t->first[k + 1] ? &t->rows[t->of[t->first[k] + j]]
						 : NULL;
}

/* "auto" and the formats' names, NULL-terminated, static */
const char *const *wl_format_names(void);

#endif
