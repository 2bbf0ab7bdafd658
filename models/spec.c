/* spec.c: each measurement drives llama_forward on its own states. In
 * speculative decoding the target's cache holds the committed tokens
 * (positions 0 .. pos-1); the draft's cache may lag (dpos <= pos) and is
 * brought up to date before each block. */
#include "spec.h"
#include "mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void spec_greedy(const struct llama *m, const int *prompt, int n, int out,
		 int *res)
{
	struct llama_state st;
	float *lg = xmalloc(sizeof(float) * (size_t)m->c.vocab);

	llama_state_init(&st, &m->c, n);
	llama_forward_last(m, &st, prompt, n, 0, lg);
	res[0] = spec_argmax(lg, m->c.vocab);
	for (int i = 1; i < out; i++) {
		llama_forward(m, &st, &res[i - 1], 1, n + i - 1, lg);
		res[i] = spec_argmax(lg, m->c.vocab);
	}
	llama_state_release(&st);
	free(lg);
}

int spec_argmax(const float *v, int n)
{
	int b = 0;

	for (int i = 1; i < n; i++)
		if (v[i] > v[b])
			b = i;
	return b;
}

/* log-softmax of v at index i */
static double log_prob(const float *v, int n, int i)
{
	double mx = v[spec_argmax(v, n)], s = 0;

	for (int j = 0; j < n; j++)
		s += exp(v[j] - mx);
	return v[i] - mx - log(s);
}

/* Calls fn on each window's logits (window tokens w[0..len), logits
 * len x vocab). */
static void windows(const struct llama *m, const int *tokens, int n, int win,
		    void (*fn)(void *, const int *, int, const float *), void *ctx)
{
	struct llama_state s;
	float *lg = xmalloc(sizeof(float) * (size_t)win * m->c.vocab);

	llama_state_init(&s, &m->c, win);
	for (int at = 0; at + 1 < n; at += win) {
		int len = n - at < win ? n - at : win;

		llama_forward(m, &s, tokens + at, len, 0, lg);
		fn(ctx, tokens + at, len, lg);
	}
	llama_state_release(&s);
	free(lg);
}

struct ppl_acc {
	int vocab, from;
	double nll;
	long count;
};

static void ppl_window(void *ctx, const int *w, int len, const float *lg)
{
	struct ppl_acc *a = ctx;

	for (int i = a->from; i + 1 < len; i++) {
		a->nll -= log_prob(lg + (size_t)i * a->vocab, a->vocab, w[i + 1]);
		a->count++;
	}
}

int spec_window(const struct llama *m, int win)
{
	return win >= 2 && win < m->c.seq_len ? win : m->c.seq_len;
}

double spec_perplexity(const struct llama *m, const int *tokens, int n,
		       int win, int from, long *count)
{
	struct ppl_acc a = { m->c.vocab, from, 0, 0 };

	windows(m, tokens, n, spec_window(m, win), ppl_window, &a);
	*count = a.count;
	return a.count ? exp(a.nll / a.count) : NAN;
}

struct tf_acc {
	int vocab, win;
	double nll_t, nll_d;
	const struct llama *draft;
	struct llama_state ds;
	float *dl;
	double *p, *q;
	struct spec_accept *out;
	size_t cap;
};

static void tf_window(void *ctx, const int *w, int len, const float *tl)
{
	struct tf_acc *a = ctx;

	llama_forward(a->draft, &a->ds, w, len, 0, a->dl);
	for (int i = 0; i + 1 < len; i++) {
		const float *t = tl + (size_t)i * a->vocab;
		const float *d = a->dl + (size_t)i * a->vocab;
		double overlap = 0;
		int agree = spec_argmax(t, a->vocab) == spec_argmax(d, a->vocab);

		a->nll_t -= log_prob(t, a->vocab, w[i + 1]);
		a->nll_d -= log_prob(d, a->vocab, w[i + 1]);
		spec_softmax(t, a->vocab, 1.0f, a->p);
		spec_softmax(d, a->vocab, 1.0f, a->q);
		for (int v = 0; v < a->vocab; v++)
			overlap += fmin(a->p[v], a->q[v]);
		if ((size_t)a->out->positions == a->cap) {
			a->cap = a->cap ? 2 * a->cap : 4096;
			a->out->bits = xrealloc(a->out->bits, a->cap);
		}
		a->out->bits[a->out->positions++] = (unsigned char)agree;
		a->out->alpha_greedy += agree;
		a->out->alpha_stochastic += overlap;
	}
}

void spec_teacher_forced(const struct llama *target, const struct llama *draft,
			 const int *tokens, int n, int win,
			 struct spec_accept *out)
{
	struct tf_acc a = { .vocab = target->c.vocab,
			    .win = spec_window(target, win), .draft = draft };

	HS_ASSERT(draft->c.vocab == target->c.vocab);
	memset(out, 0, sizeof(*out));
	a.out = out;
	llama_state_init(&a.ds, &draft->c, a.win);
	a.dl = xmalloc(sizeof(float) * (size_t)a.win * a.vocab);
	a.p = xmalloc(sizeof(double) * a.vocab);
	a.q = xmalloc(sizeof(double) * a.vocab);
	windows(target, tokens, n, a.win, tf_window, &a);
	if (out->positions) {
		out->alpha_greedy /= (double)out->positions;
		out->alpha_stochastic /= (double)out->positions;
		out->ppl_target = exp(a.nll_t / (double)out->positions);
		out->ppl_draft = exp(a.nll_d / (double)out->positions);
	}
	llama_state_release(&a.ds);
	free(a.dl);
	free(a.p);
	free(a.q);
}

void spec_burst(const unsigned char *bits, long n, struct spec_burst *b)
{
	long after[2] = { 0, 0 }, acc_after[2] = { 0, 0 }, ones = 0, len = 0;

	memset(b, 0, sizeof(*b));
	for (long i = 0; i < n; i++) {
		ones += bits[i];
		if (i > 0) {
			after[bits[i - 1]]++;
			acc_after[bits[i - 1]] += bits[i];
		}
		if (bits[i]) {
			len++;
		} else if (len) {
			b->runs++;
			b->mean_run += (double)len;
			len = 0;
		}
	}
	if (len) {
		b->runs++;
		b->mean_run += (double)len;
	}
	b->mean_run = b->runs ? b->mean_run / (double)b->runs : 0;
	b->p_after_accept = after[1] ? (double)acc_after[1] / (double)after[1]
				     : NAN;
	b->p_after_reject = after[0] ? (double)acc_after[0] / (double)after[0]
				     : NAN;
	b->iid_mean_run = ones < n ? 1 / (1 - (double)ones / (double)n) : INFINITY;
}

/* Adds one verification of a block of g (of gamma) committing c tokens,
 * the run having room for `room` more. */
static void count(struct spec_stats *st, int g, int gamma, int c, int room)
{
	if (!st)
		return;
	st->verifications++;
	if (g == gamma && c <= room) {
		st->full_blocks++;
		st->full_tokens += c;
	}
}

void spec_softmax(const float *logits, int n, float temp, double *p)
{
	double mx = logits[spec_argmax(logits, n)], s = 0;

	for (int j = 0; j < n; j++)
		s += p[j] = exp((logits[j] - mx) / temp);
	for (int j = 0; j < n; j++)
		p[j] /= s;
}

int spec_sample(const double *p, int n, gsl_rng *r)
{
	double u = gsl_rng_uniform(r);

	for (int j = 0; j < n; j++) {
		u -= p[j];
		if (u < 0)
			return j;
	}
	return n - 1; /* rounding left a sliver */
}

/* Rejection sampling over a block: drafts d[0..g) drawn from q (g x vocab),
 * target logits tl ((g + 1) x vocab). Sets *k to the drafts accepted and
 * returns the next token: the correction, from max(0, p - q) normalised, or
 * the bonus, from p. p is scratch (vocab). */
static int judge_sampled(const float *tl, const double *q, double *p, int vocab,
			 int g, float temp, const int *d, gsl_rng *r, int *k)
{
	for (*k = 0;; (*k)++) {
		const double *qk = q + (size_t)*k * vocab;
		double z = 0;

		spec_softmax(tl + (size_t)*k * vocab, vocab, temp, p);
		if (*k == g)
			return spec_sample(p, vocab, r); /* the bonus */
		if (gsl_rng_uniform(r) * qk[d[*k]] < p[d[*k]])
			continue; /* accepted with probability min(1, p/q) */
		for (int v = 0; v < vocab; v++) {
			p[v] = fmax(0, p[v] - qk[v]);
			z += p[v];
		}
		if (z > 0) {
			for (int v = 0; v < vocab; v++)
				p[v] /= z;
		} else { /* p == q: a rejection is only rounding */
			spec_softmax(tl + (size_t)*k * vocab, vocab, temp, p);
		}
		return spec_sample(p, vocab, r);
	}
}

/* One speculative run: greedy verification at temp = 0, rejection sampling
 * otherwise (r then draws every random choice). */
static long decode(const struct llama *target, const struct llama *draft,
		   const int *prompt, int np, int steps, int gamma, float temp,
		   gsl_rng *r, int *out, struct spec_stats *st)
{
	const int vocab = target->c.vocab, blk = np > gamma + 1 ? np : gamma + 1;
	struct llama_state ts, ds;
	int *seq = xmalloc(sizeof(int) * (size_t)(np + steps + gamma + 2));
	float *tl = xmalloc(sizeof(float) * (size_t)(gamma + 1) * vocab);
	float *dl = xmalloc(sizeof(float) * (size_t)vocab);
	double *q = temp > 0 ? xmalloc(sizeof(double) * (size_t)gamma * vocab)
			     : NULL;
	double *p = xmalloc(sizeof(double) * vocab);
	int pos, dpos, made = 0;
	long verifications = 0;

	HS_ASSERT(np >= 1 && np + steps + gamma + 1 <= target->c.seq_len);
	llama_state_init(&ts, &target->c, blk);
	llama_state_init(&ds, &draft->c, np);
	memcpy(seq, prompt, sizeof(int) * np);
	/* both models read the prompt but its last token, which each block
	 * starts with */
	pos = dpos = np - 1;
	if (pos > 0) {
		llama_forward_last(target, &ts, seq, pos, 0, NULL);
		llama_forward_last(draft, &ds, seq, pos, 0, NULL);
	}
	while (made < steps) {
		int g = steps - made < gamma ? steps - made : gamma, k = 0, next;

		/* the draft catches up to pos, then drafts g tokens after it */
		while (dpos < pos) {
			llama_forward(draft, &ds, &seq[dpos], 1, dpos, dl);
			dpos++;
		}
		for (int i = 0; i < g; i++) {
			llama_forward(draft, &ds, &seq[pos + i], 1, pos + i, dl);
			if (q) {
				spec_softmax(dl, vocab, temp, q + (size_t)i * vocab);
				seq[pos + i + 1] = spec_sample(q + (size_t)i * vocab,
							       vocab, r);
			} else {
				seq[pos + i + 1] = spec_argmax(dl, vocab);
			}
		}
		dpos = pos + g;
		/* the target checks the block: seq[pos .. pos + g] */
		llama_forward(target, &ts, &seq[pos], g + 1, pos, tl);
		verifications++;
		if (!q) {
			while (k < g && spec_argmax(tl + (size_t)k * vocab, vocab) ==
						seq[pos + k + 1])
				k++;
			next = spec_argmax(tl + (size_t)k * vocab, vocab);
		} else {
			next = judge_sampled(tl, q, p, vocab, g, temp, seq + pos + 1,
					     r, &k);
		}
		count(st, g, gamma, k + 1, steps - made);
		for (int i = 0; i < k && made < steps; i++)
			out[made++] = seq[pos + 1 + i];
		if (made < steps)
			out[made++] = next;
		seq[pos + k + 1] = next;
		pos += k + 1;
		/* the draft's cache is good up to the first token it got wrong;
		 * after a full block the bonus token is new to it */
		if (dpos > pos)
			dpos = pos;
		else if (k == g)
			dpos = pos - 1;
	}
	llama_state_release(&ts);
	llama_state_release(&ds);
	free(seq);
	free(tl);
	free(dl);
	free(q);
	free(p);
	return verifications;
}

long spec_decode_greedy(const struct llama *target, const struct llama *draft,
			const int *prompt, int np, int steps, int gamma,
			int *out, struct spec_stats *st)
{
	return decode(target, draft, prompt, np, steps, gamma, 0, NULL, out, st);
}

long spec_decode_sample(const struct llama *target, const struct llama *draft,
			const int *prompt, int np, int steps, int gamma,
			float temp, gsl_rng *r, int *out, struct spec_stats *st)
{
	HS_ASSERT(temp > 0 && r != NULL);
	return decode(target, draft, prompt, np, steps, gamma, temp, r, out, st);
}
