/* accept.h: which draft tokens the target accepts.
 *
 * iid: each draft position is accepted with probability alpha. markov: the
 * chance depends on whether the previous position was accepted. trace: the
 * accept/reject bits measured along real text (by `eval accept`) are
 * replayed, each tenant from its own random offset, wrapping around; a trace
 * file holds '0' and '1' characters, anything after '#' on a line ignored. */
#ifndef HS_ACCEPT_H
#define HS_ACCEPT_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* A tenant group's acceptance model, as the config gives it. */
enum accept_model { ACCEPT_IID, ACCEPT_TRACE, ACCEPT_MARKOV };

struct cfg_accept {
	enum accept_model model;
	double alpha;        /* iid: P(a draft token is accepted) */
	double p_after_acc;  /* markov: P(accept | previous accepted) */
	double p_after_rej;  /* markov: P(accept | previous rejected) */
	const char *trace;   /* borrowed: bit trace path (trace model) */
	char source[256];    /* where the acceptance comes from, for reports:
				the profile's draft, target and text, else
				the model and its parameter */
	char target[64], draft[64]; /* the profile's or published figure's
				       models ("" without one; the draft's
				       name without its format) */
	const char *from;    /* static: the key target and draft came from,
				"profile" or "published" (NULL: neither) */
	bool proxy;          /* the profile stands in for another pair */
	bool by_request;     /* trace: a line a request, bits by position */
};

struct acc_trace {
	uint8_t *bits; /* (n) owned: 1 accepted, 0 rejected */
	size_t n;
	size_t *line;  /* (nlines + 1) owned: where each line's bits start */
	size_t nlines; /* lines with bits, >= 1 */
	double alpha;  /* the mean of the bits */
};

int acc_trace_load(struct acc_trace *t, const char *path, struct err *e);
void acc_trace_release(struct acc_trace *t);

struct acc {
	const struct cfg_accept *cfg;  /* borrowed */
	const struct acc_trace *trace; /* borrowed; NULL unless trace */
	gsl_rng *r;                    /* borrowed: the tenant's stream */
	size_t pos;                    /* trace: next position */
	size_t line;                   /* trace by request: the request's */
	int last;                      /* markov: previous outcome */
};

/* Sets the starting state (trace offset, markov state) from r. */
void acc_init(struct acc *a, const struct cfg_accept *c,
	      const struct acc_trace *t, gsl_rng *r);

/* A request begins: a trace replayed by request takes its line, request
 * modulo the lines (the tenant's requests numbered across its group as
 * the caller numbers them). No effect on the other models. */
void acc_request(struct acc *a, uint64_t request);

/* Verifies g draft positions, the first at output position at: returns
 * how many are accepted before the first rejection (g when all are). A
 * trace by request reads the request's bits at + 0 .. at + g - 1 (wrapping
 * in the line); the other models ignore at and consume, from their stream,
 * g positions if all were accepted, else the accepted ones and the
 * rejected one. */
int acc_draw(struct acc *a, int32_t at, int g);

/* The long-run acceptance rate of the model. */
double acc_alpha(const struct cfg_accept *c, const struct acc_trace *t);

#endif
