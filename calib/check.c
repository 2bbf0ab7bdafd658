/* check.c: `calib check`: does the simulator, fed with profiles measured
 * here, predict what the real models do here?
 *
 * Edge: a profile of the W4A16 draft is measured; then the draft really
 * generates N tokens after a prompt of P tokens of real text (prefill, then
 * one forward and arg max a token: the code generation runs), each step
 * timed; and the simulator runs one edge-only tenant with the profile and
 * the same P and N. Their mean inter-token times are compared.
 * Verify: a verify table of the FP32 target (block forwards on a grid of
 * token counts and contexts) is measured; the simulator's cost model
 * (sim/cost.c, the table interpolated) predicts a block of gamma + 1 tokens
 * at contexts off the grid, and the block forward is timed there. */
#include "check.h"
#include "ccpu.h"

#include "rt.h"
#include "cost.h"
#include "jx.h"
#include "report.h"
#include "shape.h"
#include "sim.h"
#include "spec.h"
#include "synth.h"
#include "mem.h"
#include "order.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the tokens of text the edge check drafts from */
#define CHECK_PROMPT_TOKENS 64

static void add_row(struct check *k, const char *name, double pred,
		    double meas, double bound)
{
	struct check_row *r;

	HS_ASSERT(k->n < CHECK_MAX_ROWS);
	r = &k->rows[k->n++];
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->predicted_s = pred;
	r->measured_s = meas;
	r->rel_error = (pred - meas) / meas;
	r->bound = bound;
}

/* A real greedy generation: prefill of prompt[0..np) in blocks, then
 * steps - 1 steps (the first token comes from the prefill), step i's
 * seconds into t[i - 1]. */
static void real_steps(struct calib_model *c, const int *prompt, int np,
		       int steps, double *t)
{
	struct llama_state st;
	float *logits = xmalloc(sizeof(float) * (size_t)c->m.c.vocab);
	int tok = 0;

	llama_state_init(&st, &c->m.c, CALIB_PREFILL_BLOCK);
	for (int at = 0; at < np; at += CALIB_PREFILL_BLOCK) {
		int b = np - at < CALIB_PREFILL_BLOCK ? np - at
						      : CALIB_PREFILL_BLOCK;

		llama_forward_last(&c->m, &st, prompt + at, b, at,
				   at + b == np ? logits : NULL);
		if (at + b == np)
			tok = spec_argmax(logits, c->m.c.vocab);
	}
	for (int i = 1; i < steps; i++) {
		double t0 = rt_now_s();

		llama_forward(&c->m, &st, &tok, 1, np + i - 1, logits);
		tok = spec_argmax(logits, c->m.c.vocab);
		t[i - 1] = rt_now_s() - t0;
	}
	llama_state_release(&st);
	free(logits);
}

/* The simulator's mean inter-token time of one edge-only tenant whose
 * device is profile (borrowed, given inline). */
static int sim_itl_s(json_t *profile, int np, int steps, double *itl,
		     struct err *e)
{
	json_t *doc = json_pack(
		"{s:s,s:[{s:s,s:{s:s},s:{s:O},s:{s:f},s:{s:i,s:i,s:i}}]}", "name",
		"calib-check", "tenants", "name", "edge", "protocol", "kind",
		"edge_only", "device", "profile", profile, "wan", "rtt_s", 0.05,
		"workload", "requests",
		1, "prompt_tokens", np, "output_tokens", steps);
	struct cfg c;
	json_t *sum;

	if (cfg_parse(&c, doc, "calib check's edge config", NULL, 0, NULL, e) < 0)
		return -1;
	sum = rep_simulate(&c, e);
	cfg_release(&c);
	if (!sum)
		return -1;
	*itl = json_real_value(json_object_get(json_object_get(
		json_object_get(sum, "all"), "itl_s"), "mean"));
	json_decref(sum);
	return 0;
}

/* The profile's draft points and the real generation are timed in rounds
 * (each point once, then one generation), each the median over the rounds,
 * for the reason time_rounds gives; the profile's draft table and fit are
 * replaced by these medians before the simulator reads it. */
static int check_edge(struct check *k, const struct check_opts *o,
		      const int *text, const json_t *prov, struct err *e)
{
	enum { NCTX = 6, ROUNDS_MAX = 15 };
	static const int ctx[NCTX + 1] = { 16, 32, 64, 128, 256, 384, 0 };
	static const int pre[] = { 16, 32, 64, 128, 0 };
	struct calib_cpu_opts co = { .ctx = ctx, .prefill = pre, .reps = 3,
		.min_s = 0.02, .stream_bytes = o->quick ? 64u << 20 : 0,
		.progress = o->progress };
	int np = CHECK_PROMPT_TOKENS, steps = o->quick ? 64 : 256,
	    rounds = o->quick ? 3 : 15;
	double cx[NCTX], ct[NCTX], td[NCTX][ROUNDS_MAX], *tg[ROUNDS_MAX];
	double a, b, res, pred, meas = 0;
	struct calib_model c;
	struct llama_state st;
	json_t *profile, *none, *fit, *sec;
	char name[160];
	int rc = -1;

	if (calib_model_init(&c, o->draft, NULL, o->draft_quant, o->threads, 0,
			     e) < 0)
		return -1;
	if (np + steps > c.m.c.seq_len) {
		calib_model_release(&c);
		return err_set(e, "%s: seq_len %d holds no prompt of %d and %d "
			       "tokens", o->draft, c.m.c.seq_len, np, steps);
	}
	profile = calib_cpu(&c, &co, prov, &none);
	llama_state_init(&st, &c.m.c, 1);
	synth_cache(&st, &c.m.c, c.m.c.seq_len, 0xcac4e);
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < NCTX; i++)
			td[i][r] = calib_draft_s(&c, &st, ctx[i], 1, 0);
		tg[r] = xmalloc(sizeof(double) * (size_t)steps);
		real_steps(&c, text, np, steps, tg[r]);
	}
	llama_state_release(&st);
	sec = json_array();
	for (int i = 0; i < NCTX; i++) {
		cx[i] = ctx[i];
		ct[i] = order_median(td[i], (size_t)rounds);
		json_array_append_new(sec, json_real(ct[i]));
	}
	for (int j = 0; j < steps - 1; j++) {
		double v[ROUNDS_MAX];

		for (int r = 0; r < rounds; r++)
			v[r] = tg[r][j];
		meas += order_median(v, (size_t)rounds);
	}
	meas /= steps - 1;
	for (int r = 0; r < rounds; r++)
		free(tg[r]);
	res = calib_fit(cx, ct, NCTX, &a, &b);
	json_object_set_new(json_object_get(profile, "draft"), "seconds", sec);
	fit = json_object_get(profile, "fit");
	json_object_set_new(fit, "draft_base_s", json_real(a));
	json_object_set_new(fit, "draft_per_ctx_s", json_real(b));
	json_object_set_new(fit, "draft_max_rel_residual", json_real(res));
	json_object_set_new(profile, "device", json_string("this machine"));
	if (sim_itl_s(profile, np, steps, &pred, e) == 0) {
		snprintf(name, sizeof(name), "edge %s %s: time per token",
			 c.name, c.quant);
		add_row(k, name, pred, meas, o->quick ? 0.5 : 0.05);
		rc = 0;
	}
	json_decref(profile);
	calib_model_release(&c);
	return rc;
}

/* The verify table and the checked blocks are timed in rounds, one run of
 * each cell and each check point a round, and each time is the median over
 * the rounds: on a shared host the machine's speed drifts over seconds, and
 * interleaving moves the table and the checks alike. Cell i < NT * NC is
 * (tokens grid_tok[i / NC], context grid_ctx[i % NC]); cell NT * NC + q is
 * check q: a block of check_gamma[q / NA] + 1 tokens at check_at[q % NA]. */
enum { NT = 5, NC = 5, NG = 3, NA = 2, CELLS = NT * NC + NG * NA };

/* the verify table's grid (each list ends with a 0, as calib_verify_table
 * takes it), and the checks' gammas and contexts */
static const int grid_tok[NT + 1] = { 1, 2, 4, 8, 16, 0 },
		 grid_ctx[NC + 1] = { 16, 64, 128, 256, 384, 0 },
		 check_gamma[NG] = { 2, 4, 6 }, check_at[NA] = { 100, 300 };

static void time_rounds(struct calib_model *c, struct llama_state *st,
			int rounds, double *med)
{
	double *t = xmalloc(sizeof(double) * CELLS * (size_t)rounds);

	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < CELLS; i++) {
			int q = i - NT * NC;
			int n = q < 0 ? grid_tok[i / NC] : check_gamma[q / NA] + 1;
			int cx = q < 0 ? grid_ctx[i % NC] : check_at[q % NA];

			t[(size_t)i * rounds + r] = calib_block_s(c, st, n, cx, 1, 0);
		}
	for (int i = 0; i < CELLS; i++) {
		double *v = t + (size_t)i * rounds;

		med[i] = order_median(v, (size_t)rounds);
	}
	free(t);
}

/* a cell's median from time_rounds, as a calib_time_fn (arg: med) */
static double cell_s(void *arg, int tokens, int ctx)
{
	const double *med = arg;
	int i = 0, j = 0;

	while (grid_tok[i] != tokens)
		i++;
	while (grid_ctx[j] != ctx)
		j++;
	return med[i * NC + j];
}

static int check_verify(struct check *k, const struct check_opts *o,
			const json_t *prov, struct err *e)
{
	const int top = grid_ctx[NC - 1] + grid_tok[NT - 1];
	struct calib_model c;
	struct cfg_cloud cl;
	struct llama_state st;
	json_t *table;
	double med[CELLS];
	char name[160], method[96];
	struct cost cost;
	int rc = -1, rounds = o->quick ? 7 : 51;

	if (calib_model_init(&c, o->target, NULL, o->target_quant, o->threads,
			     0, e) < 0)
		return -1;
	if (!shape_find(c.name) || top > c.m.c.seq_len) {
		calib_model_release(&c);
		return err_set(e, "%s: the verify check needs a model of a known "
			       "shape holding %d positions", o->target, top);
	}
	cfg_cloud_default(&cl, GPU_PRESET_DEFAULT, shape_find(c.name));
	llama_state_init(&st, &c.m.c, grid_tok[NT - 1]);
	synth_cache(&st, &c.m.c, c.m.c.seq_len, 0xcac4e);
	time_rounds(&c, &st, rounds, med);
	/* a tiny model's blocks of 1 and 2 tokens cost alike: a median below
	 * its neighbour's is raised to it, as calib cpu --verify does */
	snprintf(method, sizeof(method), "block forwards on this CPU, the "
		 "median of %d interleaved rounds", rounds);
	table = calib_verify_table("this CPU", c.name, c.m.c.seq_len, grid_tok,
				   grid_ctx, cell_s, med, method, prov, false);
	if (vtab_parse(&cl.gpu.vtab, table, "calib check's verify table", c.name,
		       e) < 0)
		goto out;
	cost_init(&cost, &cl);
	for (int q = 0; q < NG * NA; q++) {
		int n = check_gamma[q / NA] + 1, cx = check_at[q % NA];
		struct cost_batch b = { n, 1, cx, (double)n * cx, n };

		snprintf(name, sizeof(name), "verify %s %s: gamma %d, context %d",
			 c.name, c.quant, check_gamma[q / NA], cx);
		add_row(k, name, cost_iter_s(&cost, &b, NULL, NULL),
			med[NT * NC + q], o->quick ? 0.5 : 0.10);
	}
	vtab_release(&cl.gpu.vtab);
	rc = 0;
out:
	json_decref(table);
	llama_state_release(&st);
	calib_model_release(&c);
	return rc;
}

int check_run(struct check *k, const struct check_opts *o, const json_t *prov,
	      struct err *e)
{
	struct calib_model tm;
	int *text, ntext, rc;
	char excerpt[1100];

	k->n = 0;
	if (!o->text && !mload_data_file("TinyStories-valid-excerpt.txt", excerpt,
					 sizeof(excerpt), e))
		return -1;
	/* the prompt: real text, tokenized by the draft's tokenizer */
	if (calib_model_init(&tm, o->draft, NULL, "f32", 1, 0, e) < 0)
		return -1;
	text = tok_encode_file(&tm.t, o->text ? o->text : excerpt, &ntext, e);
	calib_model_release(&tm);
	if (!text)
		return -1;
	if (ntext < CHECK_PROMPT_TOKENS) {
		free(text);
		return err_set(e, "%s: %d tokens of %s's tokenizer, fewer than "
			       "the %d of the prompt the check drafts from",
			       o->text ? o->text : excerpt, ntext, o->draft,
			       CHECK_PROMPT_TOKENS);
	}
	rc = check_edge(k, o, text, prov, e) < 0 ||
	     check_verify(k, o, prov, e) < 0 ? -1 : 0;
	free(text);
	return rc;
}

int check_print(const struct check *k, bool json, FILE *f)
{
	int missed = 0;

	if (json)
		fprintf(f, "{\"checks\": [");
	else
		fprintf(f, "%-44s %12s %12s %8s %7s\n", "check", "predicted_ms",
			"measured_ms", "error", "bound");
	for (int i = 0; i < k->n; i++) {
		const struct check_row *r = &k->rows[i];
		bool miss = r->rel_error > r->bound || r->rel_error < -r->bound;

		missed += miss;
		if (json)
			fprintf(f, "%s{\"name\": \"%s\", \"predicted_s\": %.9g, "
				"\"measured_s\": %.9g, \"rel_error\": %.6f, "
				"\"bound\": %.3f, \"pass\": %s}", i ? ", " : "",
				r->name, r->predicted_s, r->measured_s,
				r->rel_error, r->bound, miss ? "false" : "true");
		else
			fprintf(f, "%-44s %12.4f %12.4f %+7.1f%% %6.0f%%%s\n",
				r->name, 1e3 * r->predicted_s,
				1e3 * r->measured_s, 100 * r->rel_error,
				100 * r->bound, miss ? "  MISSED" : "");
	}
	if (json)
		fprintf(f, "]}\n");
	return missed;
}
