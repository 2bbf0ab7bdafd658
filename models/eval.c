/* eval.c: each call loads its models by name, runs them on its own
 * states and releases them before it returns; what outlives a call is
 * its result (an eval_accept's bits). A text is its tokens
 * (tok_encode_file) cut to the first o->windows windows of the window in
 * use, so every measure of one call sees the same positions. The linear
 * layers run on a pool of o->threads that the call owns. */
#include "eval.h"

#include "err.h"
#include "fs.h"
#include "jx.h"
#include "kern.h"
#include "mem.h"
#include "pool.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
	PROMPT_TOKENS = 32, /* each decoding prompt eval_accept cuts */
	NEW_TOKENS = 128,   /* tokens decoded from each */
};

/* The next token: arg max at temperature 0, else a sample (p: scratch of
 * n doubles). */
static int pick(const float *logits, int n, float temp, double *p, gsl_rng *r)
{
	if (temp <= 0)
		return spec_argmax(logits, n);
	spec_softmax(logits, n, temp, p);
	return spec_sample(p, n, r);
}

int eval_generate(const struct eval_gen *o, FILE *out, struct err *e)
{
	struct llama m;
	struct llama_state st;
	struct tok t;
	int *toks, ntok, pos, prev;
	long long steps = o->steps;
	float *logits;
	double *p;
	gsl_rng *r;

	if (mload(o->model, &o->q, &m, &t, e) < 0)
		return -1;
	if (o->kern)
		m.kn = o->kern;
	toks = xmalloc(sizeof(int) * (strlen(o->prompt) + 3));
	ntok = tok_encode(&t, o->prompt, 1, 0, toks);
	if (ntok == 0) /* no prompt and no start token: begin from it anyway */
		toks[ntok++] = t.bos;
	if (ntok > m.c.seq_len) {
		err_set(e, "--prompt: %d tokens, more than %s's context of %d",
			ntok, o->model, m.c.seq_len);
		free(toks);
		llama_release(&m);
		tok_release(&t);
		return -1;
	}
	llama_state_init(&st, &m.c, ntok);
	logits = xmalloc(sizeof(float) * (size_t)m.c.vocab);
	p = xmalloc(sizeof(double) * (size_t)m.c.vocab);
	r = rng_new(o->seed, rng_stream_id("generate"));
	if (steps > m.c.seq_len) {
		fprintf(stderr, "generate: --steps %lld is more than %s's context: "
			"%d tokens at most\n", steps, o->model, m.c.seq_len);
		steps = m.c.seq_len;
	}
	/* the prompt in one block, then a token at a time; logits holds the
	 * last token's */
	llama_forward_last(&m, &st, toks, ntok, 0, logits);
	pos = ntok;
	prev = toks[ntok - 1];
	for (int i = toks[0] == t.bos ? 1 : 0; i < ntok; i++)
		fputs(tok_decode(&t, i ? toks[i - 1] : -1, toks[i]), out);
	while (pos < steps) {
		int next = pick(logits, m.c.vocab, (float)o->temperature, p, r);

		if (next == t.bos || next == t.eos)
			break;
		fputs(tok_decode(&t, prev, next), out);
		fflush(out);
		llama_forward(&m, &st, &next, 1, pos++, logits);
		prev = next;
	}
	fputc('\n', out);
	rng_free(r);
	free(logits);
	free(p);
	free(toks);
	llama_state_release(&st);
	tok_release(&t);
	llama_release(&m);
	return 0;
}

/* The window in use for m, and *n cut to the first `windows` of them
 * (0: all). */
/* The window's tokens (0: the model's context), or -1 with e where the
 * model cannot take it; *n cut to the first windows of them */
static int window_of(const struct llama *m, int window, long long windows,
		     int *n, struct err *e)
{
	int win = spec_window(m, window);

	if (window == 1 || window > m->c.seq_len)
		return err_set(e, "--window %d: expected 0 (the model's context) "
			       "or 2 to the context, %d", window, m->c.seq_len);
	if (windows && (long long)*n > windows * win)
		*n = (int)(windows * win);
	return win;
}

/* Perplexity of the loaded m over toks[0 .. n) into out. */
static int ppl_of(const struct eval_ppl_opts *o, struct llama *m,
		  const int *toks, int n, struct eval_ppl *out, struct err *e)
{
	struct kpool *pool;

	if ((out->window = window_of(m, o->window, o->windows, &n, e)) < 0)
		return -1;
	if (o->score_from >= out->window - 1)
		return err_set(e, "--score-from %d: expected less than the window "
			       "less one (%d)", o->score_from, out->window - 1);
	pool = kern_pool_new(o->threads);
	m->pool = pool;
	m->int8_batches = o->int8;
	llama_pack_a8(m);
	out->acts = llama_block_acts(m);
	out->int8_lost = NULL;
	if (o->int8 && strcmp(out->acts, "int8"))
		out->int8_lost = m->kn->a8_run ? "the layers are not W4A16"
					       : "this kernel set has no integer path";
	out->ppl = spec_perplexity(m, toks, n, out->window, o->score_from,
				   &out->count);
	kpool_free(pool);
	m->pool = NULL;
	return 0;
}

int eval_ppl(const struct eval_ppl_opts *o, struct eval_ppl *out,
	     struct err *e)
{
	struct llama m;
	struct tok t;
	int *toks, n, rc = -1;

	if (tok_text_readable(o->text, e) < 0) /* before loading the model */
		return -1;
	if (mload(o->model, &o->q, &m, &t, e) < 0)
		return -1;
	if (o->kern)
		m.kn = o->kern;
	if ((toks = tok_encode_file(&t, o->text, &n, e))) {
		rc = ppl_of(o, &m, toks, n, out, e);
		free(toks);
	}
	tok_release(&t);
	llama_release(&m);
	return rc;
}

/* Real speculative decoding from o->prompts prompts cut evenly from
 * toks[0 .. n), for gamma = 1, 2, ... while a run fits the context. */
static void decode_per_gamma(const struct eval_accept_opts *o,
			     const struct llama *tm, const struct llama *dm,
			     const int *toks, int n, struct eval_accept *r)
{
	gsl_rng *rng = rng_new(o->seed, rng_stream_id("eval/accept"));
	int *res = xmalloc(sizeof(int) * NEW_TOKENS);

	for (int g = 1; g <= o->gamma &&
			PROMPT_TOKENS + NEW_TOKENS + g + 1 <= tm->c.seq_len; g++) {
		struct spec_stats ss = { 0 };

		for (int p = 0; p < o->prompts; p++) {
			int at = (int)((long)(n - PROMPT_TOKENS) * p / o->prompts);

			if (o->temperature > 0)
				spec_decode_sample(tm, dm, toks + at, PROMPT_TOKENS,
						   NEW_TOKENS, g, (float)o->temperature,
						   rng, res, &ss);
			else
				spec_decode_greedy(tm, dm, toks + at, PROMPT_TOKENS,
						   NEW_TOKENS, g, res, &ss);
		}
		r->per_gamma[r->gammas++] = (double)ss.full_tokens / ss.full_blocks;
	}
	free(res);
	rng_free(rng);
}

/* The measures of the loaded models along the text into r. */
static int accept_of(const struct eval_accept_opts *o, struct llama *tm,
		     struct llama *dm, const struct tok *tt,
		     struct eval_accept *r, struct err *e)
{
	struct kpool *pool;
	int *toks, n;

	if (dm->c.vocab != tm->c.vocab)
		return err_set(e, "draft vocabulary %d differs from the target's %d",
			       dm->c.vocab, tm->c.vocab);
	if (!(toks = tok_encode_file(tt, o->text, &n, e)))
		return -1;
	if ((r->window = window_of(tm, o->window, o->windows, &n, e)) < 0) {
		free(toks);
		return -1;
	}
	if (n < PROMPT_TOKENS && o->gamma > 0) { /* gamma 0: no decode */
		free(toks);
		return err_set(e, "%s: %d tokens to measure on (%s), fewer than "
			       "a decode's prompt of %d: give more text or a "
			       "longer --window", o->text, n, o->windows ?
			       "--windows of it" : "the whole text", PROMPT_TOKENS);
	}
	pool = kern_pool_new(o->threads);
	tm->pool = dm->pool = pool;
	spec_teacher_forced(tm, dm, toks, n, r->window, &r->a);
	spec_burst(r->a.bits, r->a.positions, &r->burst);
	decode_per_gamma(o, tm, dm, toks, n, r);
	kpool_free(pool);
	tm->pool = dm->pool = NULL;
	free(toks);
	return 0;
}

int eval_accept(const struct eval_accept_opts *o, struct eval_accept *out,
		struct err *e)
{
	struct llama tm, dm;
	struct tok tt, dt;
	struct quant tq, dq;
	int rc;

	HS_ASSERT(o->gamma >= 0 && o->gamma <= EVAL_GAMMA_MAX);
	*out = (struct eval_accept){ 0 };
	if (tok_text_readable(o->text, e) < 0) /* before loading the models */
		return -1;
	if (mload_spec(o->target, "f32", &tm, &tt, &tq, e) < 0)
		return -1;
	if (mload_spec(o->draft, "w4a16", &dm, &dt, &dq, e) < 0) {
		tok_release(&tt);
		llama_release(&tm);
		return -1;
	}
	if (o->kern)
		tm.kn = dm.kn = o->kern;
	mload_quant_name(&tq, out->target_quant);
	mload_quant_name(&dq, out->draft_quant);
	rc = accept_of(o, &tm, &dm, &tt, out, e);
	tok_release(&dt);
	llama_release(&dm);
	tok_release(&tt);
	llama_release(&tm);
	return rc;
}

void eval_accept_release(struct eval_accept *r)
{
	free(r->a.bits);
	r->a.bits = NULL;
}

/* x, or null where it is not a finite number (nothing to measure it on) */
static json_t *known(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

json_t *eval_accept_json(const struct eval_accept_opts *o,
			 const struct eval_accept *r)
{
	const struct spec_burst *b = &r->burst;
	json_t *per_gamma = json_object(), *s;
	char key[16];

	for (int g = 0; g < r->gammas; g++) {
		snprintf(key, sizeof(key), "%d", g + 1);
		if (isfinite(r->per_gamma[g]))
			json_object_set_new(per_gamma, key, json_real(r->per_gamma[g]));
	}
	s = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:f,s:f,s:f,s:f,s:f,s:o}",
		      "kind", "acceptance", "target", o->target, "draft", o->draft,
		      "target_quant", r->target_quant, "text", o->text,
		      "tokens", (json_int_t)r->a.positions,
		      "ppl", r->a.ppl_target, "ppl_draft", r->a.ppl_draft,
		      "alpha_greedy", r->a.alpha_greedy,
		      "alpha_stochastic", r->a.alpha_stochastic,
		      "temperature", o->temperature,
		      "mean_accepted_per_gamma", per_gamma);
	json_object_set_new(s, "window", json_integer(r->window));
	json_object_set_new(s, "burst", json_pack(
		"{s:o,s:o,s:f,s:o,s:I}", "p_accept_after_accept",
		known(b->p_after_accept), "p_accept_after_reject",
		known(b->p_after_reject), "mean_accept_run", b->mean_run,
		"iid_mean_accept_run", known(b->iid_mean_run),
		"accept_runs", (json_int_t)b->runs));
	json_object_set_new(s, "draft_quant", json_string(r->draft_quant));
	return s;
}

#define BITS_HEAD "# greedy agreement of draft and target, one bit a position"

/* The bits file beside the profile at path, into bits (n bytes) */
static void bits_path(const char *path, char *bits, size_t n)
{
	size_t len = strlen(path);

	if (len > 5 && !strcmp(path + len - 5, ".json"))
		len -= 5;
	snprintf(bits, n, "%.*s.bits", (int)len, path);
}

int eval_accept_writable(const char *path, bool replace, struct err *e)
{
	char bits[4096];

	bits_path(path, bits, sizeof(bits));
	return jx_replaceable(path, NULL, NULL, replace, e) < 0 ||
	       jx_replaceable(bits, NULL, BITS_HEAD, replace, e) < 0 ? -1 : 0;
}

int eval_accept_save(const struct eval_accept *r, json_t *summary,
		     const char *path, bool replace, json_t *prov,
		     struct err *e)
{
	char bits[4096];
	const char *base;
	struct fs_atomic at;
	FILE *f;

	bits_path(path, bits, sizeof(bits));
	/* both checked before either is written: never one without the other */
	if (eval_accept_writable(path, replace, e) < 0)
		return -1;
	if (!(f = fs_atomic_open(&at, bits, e)))
		return -1;
	fprintf(f, "%s\n", BITS_HEAD);
	for (long i = 0; i < r->a.positions; i++) {
		fputc('0' + r->a.bits[i], f);
		if (i % 64 == 63)
			fputc('\n', f);
	}
	fputc('\n', f);
	if (fs_atomic_commit(&at, e) < 0)
		return -1;
	base = strrchr(bits, '/');
	json_object_set_new(summary, "bits", json_string(base ? base + 1 : bits));
	json_object_set(summary, "provenance", prov);
	return jx_save(path, summary, e);
}
