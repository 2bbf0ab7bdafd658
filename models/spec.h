/* spec.h: measuring a draft against a target on real text: perplexity,
 * teacher-forced acceptance, and real speculative decoding. */
#ifndef HS_SPEC_H
#define HS_SPEC_H

#include <gsl/gsl_rng.h>

#include "llama.h"

/* The window length in use: win if 2 <= win < seq_len, else seq_len. */
int spec_window(const struct llama *m, int win);

/* Perplexity of m on tokens[0..n): windows of spec_window(m, win) tokens,
 * each starting at a window boundary with the cache empty; the tokens
 * after position `from` of each window are predicted (from = 0: every
 * token after the first, the GPTQ convention; from = win / 2: the second
 * half, llama.cpp's). Returns exp(mean NLL); *count gets the number of
 * predictions. */
double spec_perplexity(const struct llama *m, const int *tokens, int n,
		       int win, int from, long *count);

struct spec_accept {
	long positions;         /* predictions compared */
	double ppl_target, ppl_draft; /* perplexities along the same text */
	double alpha_greedy;    /* P(draft arg max == target arg max) */
	double alpha_stochastic; /* mean of sum_v min(p_v, q_v) */
	unsigned char *bits;    /* (positions) owned: greedy agreement */
};

/* How bursty a row of accept (1) and reject (0) bits is: the chance of an
 * accept after an accept and after a reject (alpha both, were the bits
 * independent; NaN where no bit follows one), and the mean length of the
 * runs of accepts (1 / (1 - alpha) if independent: infinite with no
 * reject). */
struct spec_burst {
	double p_after_accept, p_after_reject;
	double mean_run, iid_mean_run;
	long runs;
};

void spec_burst(const unsigned char *bits, long n, struct spec_burst *b);

/* Teacher-forced along tokens[0..n) (windows as spec_perplexity, every
 * position predicted). */
void spec_teacher_forced(const struct llama *target, const struct llama *draft,
			 const int *tokens, int n, int win,
			 struct spec_accept *out);

/* Counts of a speculative run. Blocks cut short by the end of the run are
 * left out of full_blocks and full_tokens, so full_tokens / full_blocks
 * estimates E[A] without the bias of the last block. */
struct spec_stats {
	long verifications;
	long full_blocks;   /* verifications of a whole block of gamma */
	long full_tokens;   /* tokens those committed (accepted + 1) */
};

/* Greedy speculative decoding from prompt[0..np) for `steps` new tokens
 * with blocks of gamma: writes the tokens to out (steps of them) and adds
 * to st (may be NULL). Returns the verifications made. The output is
 * exactly the target's own greedy continuation. */
long spec_decode_greedy(const struct llama *target, const struct llama *draft,
			const int *prompt, int np, int steps, int gamma,
			int *out, struct spec_stats *st);

/* A sampling temperature is 0 (greedy) or in [SPEC_TEMP_MIN, SPEC_TEMP_MAX]:
 * below, logits / temp overflows a float (and rounds to 0 as one) */
#define SPEC_TEMP_MIN 1e-3
#define SPEC_TEMP_MAX 1e3

/* Speculative decoding with rejection sampling at temperature temp > 0:
 * draft tokens are sampled from the draft's q; the target accepts d with
 * probability min(1, p(d) / q(d)), else samples the correction from
 * max(0, p - q) normalised; a fully accepted block adds a bonus from p.
 * The output is distributed as the target's own samples. r is borrowed.
 * Returns the verifications made. */
long spec_decode_sample(const struct llama *target, const struct llama *draft,
			const int *prompt, int np, int steps, int gamma,
			float temp, gsl_rng *r, int *out, struct spec_stats *st);

/* The target's own greedy continuation: out (>= 1) tokens after
 * prompt[0..n) into res, the prompt in one forward, then one token at a
 * time as generation runs (n + out <= seq_len). The reference every
 * lossless check compares against. */
void spec_greedy(const struct llama *m, const int *prompt, int n, int out,
		 int *res);

/* The index of the largest of v[0..n) (the first, on ties). */
int spec_argmax(const float *v, int n);

/* Softmax of logits at temperature temp into p (n doubles). */
void spec_softmax(const float *logits, int n, float temp, double *p);
/* A sample from p (n doubles summing to about 1). */
int spec_sample(const double *p, int n, gsl_rng *r);

#endif
