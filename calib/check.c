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

#include "cli.h"
#include "cost.h"
#include "jx.h"
#include "report.h"
#include "shape.h"
#include "sim.h"
#include "spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Writes v to a new temporary file (its name into path, 64 bytes). */
static int temp_json(char *path, const json_t *v, struct err *e)
{
	int fd;

	snprintf(path, 64, "/tmp/hybridspec-check-XXXXXX");
	if ((fd = mkstemp(path)) < 0)
		return err_set(e, "cannot create a temporary file in /tmp");
	close(fd);
	return jx_save(path, v, e);
}

/* A real greedy generation: prefill of prompt[0..np) in blocks, then
 * steps - 1 steps (the first token comes from the prefill), step i's
 * seconds into t[i - 1]. */
static void real_steps(struct calib_model *c, const int *prompt, int np,
		       int steps, double *t)
{
	struct llama_state st;
	float *logits = xmalloc(sizeof(float) * (size_t)c->m.c.vocab *
				CALIB_PREFILL_BLOCK);
	int tok = 0;

	llama_state_init(&st, &c->m.c, CALIB_PREFILL_BLOCK);
	for (int at = 0; at < np; at += CALIB_PREFILL_BLOCK) {
		int b = np - at < CALIB_PREFILL_BLOCK ? np - at
						      : CALIB_PREFILL_BLOCK;

		llama_forward(&c->m, &st, prompt + at, b, at, logits);
		if (at + b == np)
			tok = spec_argmax(logits + (size_t)(b - 1) * c->m.c.vocab,
					  c->m.c.vocab);
	}
	for (int i = 1; i < steps; i++) {
		double t0 = cli_now_s();

		llama_forward(&c->m, &st, &tok, 1, np + i - 1, logits);
		tok = spec_argmax(logits, c->m.c.vocab);
		t[i - 1] = cli_now_s() - t0;
	}
	llama_state_release(&st);
	free(logits);
}

/* Mean seconds between tokens of the generation, each step's time the
 * median of three generations: a step another process delayed in one
 * generation does not count (the profile's times are medians too). */
static double real_itl_s(struct calib_model *c, const int *prompt, int np,
			 int steps)
{
	double *t[3], sum = 0;

	for (int r = 0; r < 3; r++) {
		t[r] = xmalloc(sizeof(double) * (size_t)steps);
		real_steps(c, prompt, np, steps, t[r]);
	}
	for (int i = 0; i < steps - 1; i++) {
		double a = t[0][i], b = t[1][i], m = t[2][i];

		sum += a > b ? (b > m ? b : a > m ? m : a)
			     : (a > m ? a : b > m ? m : b);
	}
	for (int r = 0; r < 3; r++)
		free(t[r]);
	return sum / (steps - 1);
}

/* The simulator's mean inter-token time of one edge-only tenant. */
static int sim_itl_s(const char *profile, int np, int steps, double *itl,
		     struct err *e)
{
	char path[64];
	json_t *doc = json_pack(
		"{s:s,s:[{s:s,s:{s:s},s:{s:s},s:{s:f},s:{s:i,s:i,s:i}}]}", "name",
		"calib-check", "tenants", "name", "edge", "protocol", "kind",
		"edge_only", "device", "profile", profile, "wan", "rtt_s", 0.05,
		"workload", "requests",
		1, "prompt_tokens", np, "output_tokens", steps);
	struct cfg c;
	struct sim s;
	json_t *sum;
	int rc = -1;

	if (temp_json(path, doc, e) < 0) {
		json_decref(doc);
		return -1;
	}
	json_decref(doc);
	if (cfg_load(&c, path, NULL, 0, e) < 0) {
		remove(path);
		return -1;
	}
	remove(path);
	if (sim_init(&s, &c, (struct sim_opts){ 0 }, e) == 0 &&
	    sim_run(&s) == 0) {
		sum = rep_summary(&s);
		*itl = json_real_value(json_object_get(json_object_get(
			json_object_get(sum, "all"), "itl_s"), "mean"));
		json_decref(sum);
		rc = 0;
	}
	sim_release(&s);
	cfg_release(&c);
	return rc;
}

static int check_edge(struct check *k, const struct check_opts *o,
		      const int *text, int ntext, const json_t *prov,
		      struct err *e)
{
	static const int ctx[] = { 16, 32, 64, 128, 256, 384, 0 };
	static const int pre[] = { 16, 32, 64, 128, 0 };
	struct calib_cpu_opts co = { .ctx = ctx, .prefill = pre,
		.reps = o->quick ? 3 : 9, .min_s = o->quick ? 0.02 : 0.25,
		.stream_bytes = o->quick ? 64u << 20 : 0,
		.progress = o->progress };
	struct calib_model c;
	json_t *profile, *none;
	char path[64], name[160];
	int np = 64, steps = o->quick ? 64 : 256;
	double pred, meas;
	int rc = -1;

	if (calib_model_init(&c, o->draft, NULL, o->draft_quant, o->threads, 0,
			     e) < 0)
		return -1;
	if (np + steps > c.m.c.seq_len || np > ntext) {
		calib_model_release(&c);
		return err_set(e, "%s: seq_len %d holds no prompt of %d and %d "
			       "tokens", o->draft, c.m.c.seq_len, np, steps);
	}
	profile = calib_cpu(&c, &co, prov, &none);
	json_object_set_new(profile, "device", json_string("this machine"));
	if (temp_json(path, profile, e) == 0) {
		meas = real_itl_s(&c, text, np, steps);
		if (sim_itl_s(path, np, steps, &pred, e) == 0) {
			snprintf(name, sizeof(name), "edge %s %s: time per token",
				 c.name, c.quant);
			add_row(k, name, pred, meas, o->quick ? 0.5 : 0.05);
			rc = 0;
		}
		remove(path);
	}
	json_decref(profile);
	calib_model_release(&c);
	return rc;
}

static int check_verify(struct check *k, const struct check_opts *o,
			const json_t *prov, struct err *e)
{
	static const int ctx[] = { 16, 64, 128, 256, 384, 0 };
	static const int pre[] = { 16, 0 };
	static const int vt[] = { 1, 2, 4, 8, 16, 0 };
	static const int gammas[] = { 2, 4, 6 }, at[] = { 100, 300 };
	struct calib_cpu_opts co = { .ctx = ctx, .prefill = pre,
		.verify_tokens = vt, .reps = o->quick ? 3 : 9,
		.min_s = o->quick ? 0.02 : 0.25,
		.stream_bytes = o->quick ? 64u << 20 : 0,
		.progress = o->progress };
	struct calib_model c;
	struct cfg_cloud cl = { .weight_bytes = 2,
				.gpu = { .preset = "H100-SXM" } };
	struct llama_state st;
	json_t *profile, *table;
	char path[64], name[160];
	struct cost cost;
	int rc = -1;

	if (calib_model_init(&c, o->target, NULL, o->target_quant, o->threads,
			     0, e) < 0)
		return -1;
	if (!(cl.model = shape_find(c.name))) {
		calib_model_release(&c);
		return err_set(e, "%s: the verify check needs a model of a known "
			       "shape", o->target);
	}
	profile = calib_cpu(&c, &co, prov, &table);
	json_decref(profile);
	if (temp_json(path, table, e) < 0)
		goto out;
	cl.gpu.table = path;
	if (cost_init(&cost, &cl, e) < 0) {
		remove(path);
		goto out;
	}
	remove(path);
	llama_state_init(&st, &c.m.c, 16);
	for (size_t g = 0; g < sizeof(gammas) / sizeof(gammas[0]); g++)
		for (size_t j = 0; j < sizeof(at) / sizeof(at[0]); j++) {
			int n = gammas[g] + 1;
			struct cost_batch b = { n, 1, at[j], (double)n * at[j] };

			snprintf(name, sizeof(name), "verify %s %s: gamma %d, "
				 "context %d", c.name, c.quant, gammas[g], at[j]);
			add_row(k, name, cost_iter_s(&cost, &b, NULL, NULL),
				calib_block_s(&c, &st, n, at[j], co.reps,
					      co.min_s),
				o->quick ? 0.5 : 0.10);
		}
	llama_state_release(&st);
	cost_release(&cost);
	rc = 0;
out:
	json_decref(table);
	calib_model_release(&c);
	return rc;
}

int check_run(struct check *k, const struct check_opts *o, const json_t *prov,
	      struct err *e)
{
	struct calib_model tm;
	int *text, ntext, rc;

	k->n = 0;
	/* the prompt: real text, tokenized by the draft's tokenizer */
	if (calib_model_init(&tm, o->draft, NULL, "f32", 1, 0, e) < 0)
		return -1;
	text = tok_encode_file(&tm.t, o->text, &ntext, e);
	calib_model_release(&tm);
	if (!text)
		return -1;
	rc = check_edge(k, o, text, ntext, prov, e) < 0 ||
	     check_verify(k, o, prov, e) < 0 ? -1 : 0;
	free(text);
	return rc;
}
