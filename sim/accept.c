/* accept.c: the three acceptance models. Each draw consumes the tenant's own
 * stream only, so tenants never disturb each other's outcomes. A trace is
 * its bits in file order, with line[i] .. line[i + 1] the bits of the i-th
 * line that has any (line[nlines] == n): a request's, when replayed by
 * request. */
#include "accept.h"
#include "fs.h"
#include "mem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int acc_trace_load(struct acc_trace *t, const char *path, struct err *e)
{
	FILE *f = fopen(path, "r");
	size_t cap = 0, ones = 0, lcap = 0;
	int c, line = 1, last_line = 0, comment = 0;

	*t = (struct acc_trace){ 0 };
	if (!f)
		return err_set(e, "%s: cannot read acceptance trace: %s", path,
			       strerror(errno));
	fs_skip_bom(f);
	while ((c = fgetc(f)) != EOF) {
		if (c == '\n') {
			line++;
			comment = 0;
			continue;
		}
		if (comment || c == ' ' || c == '\t' || c == '\r' || c == ',')
			continue;
		if (c == '#') {
			comment = 1;
			continue;
		}
		if (c != '0' && c != '1') {
			fclose(f);
			acc_trace_release(t);
			return err_set(e, "%s:%d: expected '0' or '1' in an "
				       "acceptance trace, got '%c'", path, line, c);
		}
		if (t->n == cap) {
			cap = cap ? 2 * cap : 4096;
			t->bits = xrealloc(t->bits, cap);
		}
		/* the first bit of a line opens it in line[] */
		if (line != last_line) {
			if (t->nlines + 2 > lcap) {
				lcap = lcap ? 2 * lcap : 64;
				t->line = xrealloc(t->line, lcap * sizeof(size_t));
			}
			t->line[t->nlines++] = t->n;
			last_line = line;
		}
		t->bits[t->n++] = (uint8_t)(c - '0');
		ones += c == '1';
	}
	fclose(f);
	if (t->n == 0) {
		acc_trace_release(t);
		return err_set(e, "%s: the acceptance trace has no bits", path);
	}
	t->line[t->nlines] = t->n;
	t->alpha = (double)ones / (double)t->n;
	return 0;
}

void acc_trace_release(struct acc_trace *t)
{
	free(t->bits);
	free(t->line);
	*t = (struct acc_trace){ 0 };
}

double acc_alpha(const struct cfg_accept *c, const struct acc_trace *t)
{
	switch (c->model) {
	case ACCEPT_IID:
		return c->alpha;
	case ACCEPT_TRACE:
		return t->alpha;
	case ACCEPT_MARKOV: {
		double leave = (1 - c->p_after_acc) + c->p_after_rej;

		return leave > 0 ? c->p_after_rej / leave : c->p_after_acc;
	}
	}
	return 0;
}

void acc_init(struct acc *a, const struct cfg_accept *c,
	      const struct acc_trace *t, gsl_rng *r)
{
	*a = (struct acc){ .cfg = c, .trace = t, .r = r };
	if (c->model == ACCEPT_TRACE && !c->by_request)
		a->pos = gsl_rng_uniform_int(r, t->n);
	else if (c->model == ACCEPT_MARKOV)
		a->last = gsl_rng_uniform(r) < acc_alpha(c, NULL);
}

static int one(struct acc *a)
{
	int ok = 0;

	switch (a->cfg->model) {
	case ACCEPT_IID:
		ok = gsl_rng_uniform(a->r) < a->cfg->alpha;
		break;
	case ACCEPT_TRACE:
		ok = a->trace->bits[a->pos];
		a->pos = (a->pos + 1) % a->trace->n;
		break;
	case ACCEPT_MARKOV:
		ok = gsl_rng_uniform(a->r) <
		     (a->last ? a->cfg->p_after_acc : a->cfg->p_after_rej);
		a->last = ok;
		break;
	}
	return ok;
}

void acc_request(struct acc *a, uint64_t request)
{
	if (a->cfg->model == ACCEPT_TRACE && a->cfg->by_request)
		a->line = (size_t)(request % a->trace->nlines);
}

int acc_draw(struct acc *a, int32_t at, int g)
{
	int k = 0;

	if (a->cfg->model == ACCEPT_TRACE && a->cfg->by_request) {
		const struct acc_trace *t = a->trace;
		size_t from = t->line[a->line], n = t->line[a->line + 1] - from;

		while (k < g && t->bits[from + (size_t)(at + k) % n])
			k++;
		return k;
	}
	while (k < g && one(a))
		k++;
	return k;
}
