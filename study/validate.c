/* validate.c: measuring the deployment and running a point both ways.
 *
 * A struct val holds what every point shares: the two models, the text's
 * tokens, VAL_PROMPTS prompts and the target's greedy continuation of each
 * (the reference every edge's output must equal), the draft's agreement
 * bits along them, and the CPU split. Request r of tenant t uses prompt
 * prompt_index(t, requests, r) in the deployment and in the point's
 * acceptance profile alike. */
#define _GNU_SOURCE /* sched_setaffinity */
#include "validate.h"

#include "rt.h"
#include "edge.h"
#include "jx.h"
#include "report.h"
#include "serve.h"
#include "cost.h"
#include "dist.h"
#include "sim.h"
#include "vtab.h"
#include "spec.h"
#include "verifier.h"
#include "wire.h"
#include "mem.h"
#include "order.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define VAL_MAX_GAMMA 8    /* E[A] measured for gamma 1 .. 8 */
#define VAL_ROUNDS 3       /* rounds over the verify grid */
#define VAL_PROBE_PASSES 21 /* draft passes timed; their median */
#define VAL_PROBE_REPS 11  /* verifier iterations timed; their median */
#define VAL_PINGS 40       /* pings timed; their mean */
#define VAL_WAKE_REPS 7    /* passes timed after each pause; their median */
#define VAL_SEQ_MAX 1024   /* positions the models keep here: the grid's
			      contexts and the points fit, and a slot's KV
			      cache stays 47 MB for SmolLM2-135M (188 MB at
			      its 4,096), the grid holding ~170 slots */

/* The process's CPUs when val_init ran (affinity is the process's: one
 * set for all). */
static cpu_set_t all_cpus;

static void cpus_init(struct val *v)
{
	v->server_cpu = -1;
	CPU_ZERO(&all_cpus);
	sched_getaffinity(0, sizeof(all_cpus), &all_cpus);
	if (CPU_COUNT(&all_cpus) >= 2)
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &all_cpus))
				v->server_cpu = i;
	v->edge_cpus = CPU_COUNT(&all_cpus) - (v->server_cpu >= 0);
}

enum side { SIDE_ALL, SIDE_EDGE, SIDE_SERVER };

/* Moves the calling process to a side's CPUs. */
static void pin(const struct val *v, enum side side)
{
	cpu_set_t s = all_cpus;

	if (v->server_cpu >= 0 && side == SIDE_EDGE)
		CPU_CLR(v->server_cpu, &s);
	if (v->server_cpu >= 0 && side == SIDE_SERVER) {
		CPU_ZERO(&s);
		CPU_SET(v->server_cpu, &s);
	}
	sched_setaffinity(0, sizeof(s), &s);
}

/* The edges of config c in all. */
static int edge_count(const struct cfg *c)
{
	long long n = 0;

	for (size_t g = 0; g < c->n_groups; g++)
		n += c->groups[g].count;
	return (int)n;
}

/* Whether c's edges poll while they wait: each has a CPU. */
static bool edges_spin(const struct val *v, const struct cfg *c)
{
	return !v->edges_sleep && edge_count(c) <= v->edge_cpus;
}

/* ---- calibration ---- */

/* Prompts spread over the text, and the target's greedy continuations. */
static int make_prompts(struct val *v, struct err *e)
{
	const struct llama *m = &v->tm.m;

	if (v->np + v->nout > m->c.seq_len || v->ntext < v->np + 1)
		return err_set(e, "the sweep's points ask %d prompt + %d output "
			       "tokens (/tenants/*/workload/prompt_tokens and "
			       "output_tokens): the target's context is %d, the "
			       "text has %d tokens", v->np, v->nout, m->c.seq_len,
			       v->ntext);
	v->prompts = xmalloc(sizeof(int) * VAL_PROMPTS * (size_t)v->np);
	v->greedy = xmalloc(sizeof(int) * VAL_PROMPTS * (size_t)v->nout);
	for (int p = 0; p < VAL_PROMPTS; p++) {
		int at = (int)((long)(v->ntext - v->np) * p / VAL_PROMPTS);
		int *pr = v->prompts + (size_t)p * v->np;

		memcpy(pr, v->text + at, sizeof(int) * (size_t)v->np);
		spec_greedy(m, pr, v->np, v->nout, v->greedy + (size_t)p * v->nout);
	}
	return 0;
}

int val_init(struct val *v, const char *target, const char *draft,
	     const char *text, int np, int nout, int budget, struct err *e)
{
	const char *tq, *dq;
	char tn[1024], dn[1024];

	*v = (struct val){ .np = np, .nout = nout };
	if (mload_spec_split(target, "f32", tn, sizeof(tn), &tq, e) < 0 ||
	    mload_spec_split(draft, "w4a16", dn, sizeof(dn), &dq, e) < 0 ||
	    calib_model_init(&v->tm, tn, NULL, tq, 1, 0, e) < 0)
		return -1;
	if (calib_model_init(&v->dm, dn, NULL, dq, 1, 0, e) < 0) {
		calib_model_release(&v->tm);
		return -1;
	}
	cpus_init(v);
	if (v->tm.m.c.seq_len > VAL_SEQ_MAX)
		v->tm.m.c.seq_len = VAL_SEQ_MAX;
	if (v->dm.m.c.seq_len > VAL_SEQ_MAX)
		v->dm.m.c.seq_len = VAL_SEQ_MAX;
	if (v->tm.m.c.vocab != v->dm.m.c.vocab)
		err_set(e, "target %s and draft %s have different vocabularies",
			target, draft);
	else if ((v->text = tok_encode_file(&v->tm.t, text, &v->ntext, e)) &&
		 v->ntext < v->tm.m.c.seq_len + budget)
		err_set(e, "%s: %d tokens, too short to calibrate (needs %d)",
			text, v->ntext, v->tm.m.c.seq_len + budget);
	else if (v->text && make_prompts(v, e) == 0)
		return 0;
	val_release(v);
	return -1;
}

void val_release(struct val *v)
{
	free(v->text);
	free(v->prompts);
	free(v->greedy);
	free(v->bits);
	json_decref(v->mean_accepted);
	calib_model_release(&v->dm);
	calib_model_release(&v->tm);
	*v = (struct val){ 0 };
}

/* What acceptance profiles need, measured once: along each prompt's
 * target continuation the draft's greedy agreement (teacher-forced) and
 * its alpha_stochastic; E[A] for gamma 1 .. gmax (the sweep's largest, at
 * most VAL_MAX_GAMMA) from real greedy speculative decoding of every
 * prompt. */
static void measure_acceptance(struct val *v, int gmax)
{
	int n = v->np + v->nout, *seq = xmalloc(sizeof(int) * (size_t)n);
	int *o = xmalloc(sizeof(int) * (size_t)v->nout);

	v->bits = xmalloc((size_t)VAL_PROMPTS * (size_t)v->nout);
	for (int p = 0; p < VAL_PROMPTS; p++) {
		struct spec_accept a;

		memcpy(seq, v->prompts + (size_t)p * v->np, sizeof(int) * (size_t)v->np);
		memcpy(seq + v->np, v->greedy + (size_t)p * v->nout,
		       sizeof(int) * (size_t)v->nout);
		spec_teacher_forced(&v->tm.m, &v->dm.m, seq, n, 0, &a);
		/* bits[i] judges the prediction of token i + 1 */
		memcpy(v->bits + (size_t)p * v->nout, a.bits + v->np - 1,
		       (size_t)v->nout);
		v->stoch[p] = a.alpha_stochastic;
		free(a.bits);
	}
	v->mean_accepted = json_object();
	for (int g = 1; g <= gmax && g <= VAL_MAX_GAMMA; g++) {
		struct spec_stats ss = { 0 };
		char key[16];

		for (int p = 0; p < VAL_PROMPTS; p++)
			spec_decode_greedy(&v->tm.m, &v->dm.m,
					   v->prompts + (size_t)p * v->np, v->np,
					   v->nout, g, o, &ss);
		snprintf(key, sizeof(key), "%d", g);
		json_object_set_new(v->mean_accepted, key, json_real(ss.full_blocks ?
			(double)ss.full_tokens / (double)ss.full_blocks : 1));
	}
	free(seq);
	free(o);
}

/* Multiplies every number in the array v (of arrays of them) by f. */
static void scale_numbers(json_t *v, double f)
{
	size_t i;
	json_t *x;

	json_array_foreach(v, i, x) {
		if (json_is_number(x))
			json_array_set_new(v, i, json_real(json_number_value(x) * f));
		else
			scale_numbers(x, f);
	}
}

/* cdir/name, the "seconds" of each of objs[0 .. nobj) (none: the
 * document's "seconds" and "prefill_seconds", a verify table's) and
 * `fit`'s fit_keys[0 .. nfit) scaled by f, into dir; its text field `said`
 * says so and why. */
static int scaled_copy(const char *cdir, const char *dir, const char *name,
		       const char *const *objs, int nobj,
		       const char *const *fit_keys, int nfit, const char *said,
		       double f, const char *why, struct err *e)
{
	char path[4200], text[1200];
	json_t *doc;
	int rc;

	snprintf(path, sizeof(path), "%.4000s/%s", cdir, name);
	if (!(doc = jx_load(path, e)))
		return -1;
	if (!nobj) {
		scale_numbers(json_object_get(doc, "seconds"), f);
		scale_numbers(json_object_get(doc, "prefill_seconds"), f);
	}
	for (int i = 0; i < nobj; i++)
		scale_numbers(json_object_get(json_object_get(doc, objs[i]),
					      "seconds"), f);
	for (int i = 0; i < nfit; i++) {
		json_t *fit = json_object_get(doc, "fit");

		json_object_set_new(fit, fit_keys[i], json_real(f *
			json_number_value(json_object_get(fit, fit_keys[i]))));
	}
	snprintf(text, sizeof(text), "%.1000s; times %.4f, %s",
		 json_string_value(json_object_get(doc, said)), f, why);
	json_object_set_new(doc, said, json_string(text));
	snprintf(path, sizeof(path), "%.4000s/%s", dir, name);
	rc = jx_save(path, doc, e);
	json_decref(doc);
	return rc;
}

int val_scaled_profiles(const char *cdir, const char *dir, double draft_ratio,
			bool prefill, double verify_ratio, const char *why,
			struct err *e)
{
	/* the draft's, then the prefill's */
	static const char *const objs[] = { "draft", "prefill" };
	static const char *const fit[] = { "draft_base_s", "draft_per_ctx_s",
		"draft_pair_s", "prefill_base_s", "prefill_per_token_s" };

	return scaled_copy(cdir, dir, "edge.json", objs, prefill ? 2 : 1, fit,
			   prefill ? 5 : 3, "device", draft_ratio, why, e) < 0 ||
	       scaled_copy(cdir, dir, "verify.json", NULL, 0, NULL, 0, "method",
			   verify_ratio, why, e) < 0 ? -1 : 0;
}

/* The prompt of a tenant's request: the same in the deployment and in the
 * point's acceptance profile. */
static int prompt_index(int tenant, int requests, int r)
{
	return (tenant * requests + r) % VAL_PROMPTS;
}

/* Group g's acceptance profile, dir/accept-<g>.json and its bits: the
 * bits of exactly the prompts its requests use, a line a request, request
 * r of its tenant k (the group's first tenant being tenant first) on line
 * r * count + k, as the simulator's replay by request numbers them. */
static int accept_profile(struct val *v, const struct cfg_group *G, int first,
			  size_t g, const char *dir, const json_t *prov,
			  struct err *e)
{
	int R = (int)G->workload.requests, n = (int)G->count;
	char path[4200], bits[64];
	long pos = 0, agree = 0;
	double stoch = 0;
	json_t *doc;
	FILE *f;
	int rc;

	snprintf(bits, sizeof(bits), "accept-%zu.bits", g);
	snprintf(path, sizeof(path), "%.4000s/%s", dir, bits);
	if (!(f = fopen(path, "w")))
		return err_set(e, "cannot write '%s': %s", path, strerror(errno));
	fprintf(f, "# greedy agreement of draft and target along the target's "
		"continuation of each request's prompt: bit i judges the "
		"draft of output token i\n");
	for (int r = 0; r < R; r++)
		for (int k = 0; k < n; k++) {
			int p = prompt_index(first + k, R, r);

			for (int i = 0; i < v->nout; i++) {
				int b = v->bits[(size_t)p * v->nout + i];

				fputc('0' + b, f);
				agree += b;
			}
			fputc('\n', f);
			pos += v->nout;
			stoch += v->stoch[p];
		}
	if (fclose(f) != 0)
		return err_set(e, "cannot write '%s'", path);
	doc = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:f,s:f,s:f,s:f,s:f,s:O,"
			"s:s,s:O}",
			"kind", "acceptance", "target", v->tm.name,
			"draft", v->dm.name, "target_quant", v->tm.quant,
			"draft_quant", v->dm.quant, "text", "the point's prompts",
			"tokens", (json_int_t)pos, "ppl", 0.0, "ppl_draft", 0.0,
			"alpha_greedy", (double)agree / (double)pos,
			"alpha_stochastic", stoch * (double)v->nout / (double)pos,
			"temperature", 0.0, "mean_accepted_per_gamma",
			v->mean_accepted, "bits", bits, "provenance", prov);
	snprintf(path, sizeof(path), "%.4000s/accept-%zu.json", dir, g);
	rc = jx_save(path, doc, e);
	json_decref(doc);
	return rc;
}

int val_accept_profile(struct val *v, const struct cfg *c, const char *dir,
		       const json_t *prov, struct err *e)
{
	int first = 0;

	for (size_t g = 0; g < c->n_groups; g++) {
		if (accept_profile(v, &c->groups[g], first, g, dir, prov, e) < 0)
			return -1;
		first += (int)c->groups[g].count;
	}
	return 0;
}

/* The verifier's iteration time over a grid of batch tokens x context, as
 * verifier_iterate runs it: at each point, slots prefilled to the context
 * get one block each, in segments of at most gamma + 1 tokens, so that the
 * batch holds exactly the point's tokens. The drafts are text tokens, so
 * most are rejected and a slot's context grows by a token or two a
 * repetition.
 * The grid is timed in VAL_ROUNDS rounds, each point a burst of
 * repetitions whose first only warms the caches (the verifier of a server
 * runs on warm caches: nothing else runs on its CPU); a burst of noise on a
 * shared machine then touches one round of a point, not all of it. A
 * point's time is the median of its repetitions, then made non-decreasing
 * in tokens (a bigger batch never takes less time: a median that does is
 * noise). */
struct vgrid {
	const int *tok, *ctx;  /* (nt), (nc) */
	int nt, nc;
	double *med;           /* (nt x nc) seconds */
};

static void queue_blocks(struct verifier *v, int tokens, const int *text)
{
	struct err e;
	int left = tokens;

	if (tokens == 1) /* a decode step: the slot decodes by itself */
		return;

	/* the tokens split evenly over the slots, so that the batch holds
	 * exactly tokens (segments of gamma + 1 or fewer, 2 or more) */
	for (int i = 0; i < v->slots; i++) {
		const struct vreq *q = &v->t[i];
		int base = q->len - q->kv_len, n = left / (v->slots - i) - base;

		if (n < 1)
			n = 1;
		verifier_block(v, i, 0, q->epoch, q->len, text + q->len + 1, n, 0,
			       &e);
		left -= base + n;
	}
}

/* A verifier for one grid point: slots prefilled to ctx, enough of them
 * for tokens in segments of gamma + 1; for 1 token, one slot the target
 * decodes itself (a handover start's or a hand-back's step), its first
 * token made. */
static void grid_verifier_init(struct verifier *v, const struct llama *m,
			       const int *text, int tokens, int ctx, int gamma)
{
	int slots = (tokens + gamma) / (gamma + 1);
	struct viter it;
	struct err e;
	double w;

	verifier_init(v, m, tokens + 1, m->c.seq_len, 0,
		      slots);
	for (int i = 0; i < slots; i++)
		verifier_prompt(v, i, 0, text + i, ctx, m->c.seq_len - ctx, 0, &e);
	if (tokens == 1)
		verifier_decode(v, 0, 0, &e);
	while (verifier_ready(v, 0, &w)) { /* the prefills */
		verifier_iterate(v, &it);
		if (it.ntokens) /* the decoding slot's prefill is done */
			break;
	}
}

/* g's medians from reps timings a point by once(arg, p), in VAL_ROUNDS
 * rounds of warm bursts (above) */
static void time_grid(struct vgrid *g, int reps,
		      double (*once)(void *arg, int p), void *arg)
{
	int np = g->nt * g->nc;
	int burst = (reps + VAL_ROUNDS - 1) / VAL_ROUNDS;
	double *s = xmalloc(sizeof(double) * (size_t)np * (size_t)reps);

	for (int r = 0; r < reps; r += burst)
		for (int p = 0; p < np; p++)
			for (int b = -1; b < burst && r + b < reps; b++) {
				double t = once(arg, p);

				if (b >= 0)
					s[(size_t)p * reps + r + b] = t;
			}
	for (int p = 0; p < np; p++) {
		g->med[p] = order_median(s + (size_t)p * reps, (size_t)reps);
		if (p >= g->nc && g->med[p] < g->med[p - g->nc])
			g->med[p] = g->med[p - g->nc];
	}
	free(s);
}

struct verify_points {
	struct verifier *v; /* (points) */
	const struct vgrid *g;
	const int *text;
};

static double verify_once(void *arg, int p)
{
	struct verify_points *a = arg;
	int tokens = a->g->tok[p / a->g->nc];
	struct viter it;
	double t0;

	queue_blocks(&a->v[p], tokens, a->text);
	t0 = rt_now_s();
	verifier_iterate(&a->v[p], &it);
	t0 = rt_now_s() - t0;
	HS_ASSERT(it.tokens == tokens);
	return t0;
}

static void verify_grid(const struct llama *m, const int *text, int gamma,
			int reps, struct vgrid *g)
{
	int np = g->nt * g->nc;
	struct verify_points a = { xcalloc((size_t)np, sizeof(*a.v)), g, text };

	for (int p = 0; p < np; p++)
		grid_verifier_init(&a.v[p], m, text, g->tok[p / g->nc],
				   g->ctx[p % g->nc], gamma);
	time_grid(g, reps, verify_once, &a);
	for (int p = 0; p < np; p++)
		verifier_release(&a.v[p]);
	free(a.v);
}

/* A prompt's chunk of the point's tokens at its context, on one state whose
 * cache holds the context (its values do not change the time), no logits:
 * what a prefill iteration of the verifier runs before a prompt's end */
struct prefill_points {
	const struct llama *m;
	struct llama_state st;
	const struct vgrid *g;
	const int *text;
};

static double prefill_once(void *arg, int p)
{
	struct prefill_points *a = arg;
	int tokens = a->g->tok[p / a->g->nc], ctx = a->g->ctx[p % a->g->nc];
	/* a context the chunk would overrun is one calib_verify_table drops */
	int pos = ctx + tokens <= a->m->c.seq_len ? ctx
						  : a->m->c.seq_len - tokens;
	double t0 = rt_now_s();

	llama_forward_last(a->m, &a->st, a->text, tokens, pos, NULL);
	return rt_now_s() - t0;
}

static void prefill_grid(const struct llama *m, const int *text, int reps,
			 struct vgrid *g)
{
	struct prefill_points a = { .m = m, .g = g, .text = text };

	llama_state_init(&a.st, &m->c, g->tok[g->nt - 1]);
	time_grid(g, reps, prefill_once, &a);
	llama_state_release(&a.st);
}

/* The grid's medians as a calib_time_fn. */
static double grid_time(void *arg, int tokens, int ctx)
{
	const struct vgrid *g = arg;
	int i = 0, j = 0;

	while (g->tok[i] != tokens)
		i++;
	while (g->ctx[j] != ctx)
		j++;
	return g->med[i * g->nc + j];
}

/* Measures the edge and verify profiles into dir (edge.json,
 * verify.json) and what the points' acceptance profiles need. budget: the
 * largest batch a point uses. */
int val_calibrate(struct val *v, const char *dir, int gamma, int budget,
		     const json_t *prov, struct err *e)
{
	static const int ctx_all[] = { 8, 32, 64, 128, 256, 512, 1024, 0 };
	static const int pre_all[] = { 4, 8, 16, 32, 64, 128, 0 };
	int seq_len = v->tm.m.c.seq_len, ctx[8], pre[8], tok[16], nc = 0, np = 0,
	    nt = 0, pi = 0, pj = 0;
	int reps = v->quick ? 5 : 31;
	struct calib_cpu_opts co = { .ctx = ctx, .prefill = pre, .reps = reps,
				     .min_s = v->quick ? 0.002 : 0.02,
				     .stream_bytes = (v->quick ? 16u : 64u) << 20,
				     .progress = !v->quiet };
	struct vgrid vg = { .tok = tok, .ctx = ctx }, pg;
	json_t *edge, *verify, *prefill, *none;
	char path[4096];
	int rc;

	/* contexts that leave room for the repetitions' growth */
	for (int i = 0; ctx_all[i]; i++)
		if (ctx_all[i] + 2 * reps * (gamma + 1) <= seq_len)
			ctx[nc++] = ctx_all[i];
	for (int i = 0; pre_all[i]; i++)
		if (pre_all[i] < seq_len)
			pre[np++] = pre_all[i];
	ctx[nc] = pre[np] = 0;
	/* 1: the target's own decode step (a handover start, a hand-back);
	 * then verify segments */
	for (int t = 1; t < 2 * budget && nt < 15; t *= 2)
		tok[nt++] = t < budget ? t : budget;
	tok[nt] = 0;
	if (nc < 2)
		return err_set(e, "the target's context (%d) is too short to "
			       "calibrate gamma %d", seq_len, gamma);
	if (!v->quiet)
		fprintf(stderr, "validate: calibrating the draft, the verifier "
			"and the acceptance on this machine\n");
	pin(v, SIDE_EDGE);
	edge = calib_cpu(&v->dm, &co, prov, &none);
	pin(v, SIDE_SERVER);
	json_object_set_new(edge, "device", json_string("this machine (validate)"));
	snprintf(path, sizeof(path), "%.4000s/edge.json", dir);
	rc = jx_save(path, edge, e);
	json_decref(edge);
	if (rc < 0 || prof_edge_load(path, &v->edge, e) < 0)
		return -1;
	vg.nt = nt;
	vg.nc = nc;
	vg.med = xmalloc(sizeof(double) * (size_t)(nt * nc));
	verify_grid(&v->tm.m, v->text, gamma, reps, &vg);
	/* the probe: one segment's tokens (the grid's next size) at the
	 * grid's context nearest a request's middle */
	v->gamma = gamma;
	for (int i = 0; i < nt; i++)
		if (i == 0 || tok[i - 1] < gamma + 1)
			v->probe_tokens = tok[i], pi = i;
	for (int j = 0; j < nc; j++)
		if (j == 0 || abs(ctx[j] - (v->np + v->nout / 2)) <
			      abs(v->probe_ctx - (v->np + v->nout / 2)))
			v->probe_ctx = ctx[j], pj = j;
	v->probe_verify_s = vg.med[pi * nc + pj];
	verify = calib_verify_table("cpu-1t", v->tm.name, seq_len, tok, ctx,
				    grid_time, &vg, "verifier_iterate timed on "
				    "this CPU in segments of gamma + 1, 1 token: "
				    "a decode step (median of 3 rounds of warm "
				    "bursts, made non-decreasing in tokens)", prov,
				    !v->quiet);
	/* a prompt's chunks compute no logits but at its end: timed apart
	 * (a prefill chunk of 64 tokens took 0.65-0.7 of 64 tokens in verify
	 * segments; priced as verify segments, a handover point's TTFT came
	 * out 11-20% high) */
	pg = vg;
	pg.med = xmalloc(sizeof(double) * (size_t)(nt * nc));
	prefill_grid(&v->tm.m, v->text, reps, &pg);
	prefill = calib_verify_table("cpu-1t", v->tm.name, seq_len, tok, ctx,
				     grid_time, &pg, "", prov, false);
	json_object_set(verify, "prefill_seconds",
			json_object_get(prefill, "seconds"));
	json_object_set_new(verify, "prefill_method", json_string(
		"llama_forward_last timed on this CPU: one prompt chunk of "
		"the tokens at the context, no logits (median of 3 rounds of "
		"warm bursts, made non-decreasing in tokens)"));
	json_decref(prefill);
	free(pg.med);
	free(vg.med);
	pin(v, SIDE_ALL);
	snprintf(path, sizeof(path), "%.4000s/verify.json", dir);
	rc = jx_save(path, verify, e);
	json_decref(verify);
	if (rc == 0) {
		if (!v->quiet)
			fprintf(stderr, "validate: the draft's acceptance along the "
				"target's continuations, E[A] for gamma 1 to %d\n",
				gamma);
		measure_acceptance(v, gamma);
	}
	return rc;
}

/* ---- costs timed again before a point ---- */



/* The pauses after which val_wake times a pass (the points' round trips
 * lie among them) */
static const double wake_pause_s[VAL_WAKE_PAUSES] = { 0.0025, 0.005, 0.01,
						      0.02, 0.04, 0.08, 0.16 };

/* The median of reps iterations of the verifier's probe shape, each after a
 * pause of pause_s (spin: awake); one untimed first. *upper_s (unless
 * NULL): their upper quartile. */
static double probe_after_s(const struct val *v, double pause_s, bool spin,
			    int reps, double *upper_s)
{
	struct verifier ver;
	struct viter it;
	double *t = xmalloc(sizeof(double) * (size_t)reps), med;

	grid_verifier_init(&ver, &v->tm.m, v->text, v->probe_tokens,
			   v->probe_ctx, v->gamma);
	for (int r = -1; r < reps; r++) {
		double t0;

		queue_blocks(&ver, v->probe_tokens, v->text);
		rt_pause_s(pause_s, spin);
		t0 = rt_now_s();
		verifier_iterate(&ver, &it);
		if (r >= 0)
			t[r] = rt_now_s() - t0;
		HS_ASSERT(it.tokens == v->probe_tokens);
	}
	med = order_median(t, (size_t)reps); /* t sorted */
	if (upper_s)
		*upper_s = t[(3 * reps) / 4];
	free(t);
	verifier_release(&ver);
	return med;
}

void val_retime(struct val *v, double *draft_ratio, double *verify_ratio)
{
	int ctx = v->np + v->nout / 2;
	struct llama_state st;

	pin(v, SIDE_EDGE); /* the draft step as the edge profile timed it */
	llama_state_init(&st, &v->dm.m.c, 1);
	*draft_ratio = calib_draft_s(&v->dm, &st, ctx, VAL_PROBE_PASSES, 0) /
		       (v->edge.draft_base_s + v->edge.draft_per_ctx_s * ctx);
	llama_state_release(&st);
	pin(v, SIDE_SERVER);
	*verify_ratio = probe_after_s(v, 0, false, VAL_PROBE_REPS, NULL) /
			v->probe_verify_s;
	pin(v, SIDE_ALL);
}

void val_wake(struct val *v, const struct cfg *c, struct val_point *p)
{
	int ctx = v->np + v->nout / 2;
	bool spin = edges_spin(v, c), server_spin = v->server_cpu >= 0;
	struct llama_state st;
	double hot; /* the back-to-back passes' upper quartile */

	memset(p->draft_wake_s, 0, sizeof(p->draft_wake_s));
	if (edge_count(c) <= v->edge_cpus) { /* else not the CPU that pauses */
		pin(v, SIDE_EDGE);
		llama_state_init(&st, &v->dm.m.c, 1);
		calib_draft_after_s(&v->dm, &st, ctx, 0, spin, VAL_WAKE_REPS,
				    &hot);
		for (int i = 0; i < VAL_WAKE_PAUSES; i++)
			p->draft_wake_s[i] = fmax(0, calib_draft_after_s(&v->dm,
				&st, ctx, wake_pause_s[i], spin, VAL_WAKE_REPS,
				NULL) - hot);
		llama_state_release(&st);
	}
	pin(v, SIDE_SERVER);
	probe_after_s(v, 0, server_spin, VAL_WAKE_REPS, &hot);
	for (int i = 0; i < VAL_WAKE_PAUSES; i++) {
		p->wake_pause_s[i] = wake_pause_s[i];
		p->verify_wake_s[i] = fmax(0, probe_after_s(v, wake_pause_s[i],
					   server_spin, VAL_WAKE_REPS, NULL) -
					   hot);
	}
	pin(v, SIDE_ALL);
}

/* ---- one point ---- */

/* The body of an edge process: tenant idx of group g. */
static int edge_child(struct val *v, const struct cfg *c, size_t g, int idx,
		      int port, double t0, bool spin, const char *pdir)
{
	const struct cfg_group *G = &c->groups[g];
	int R = (int)G->workload.requests;
	int *pr = xmalloc(sizeof(int) * (size_t)R * (size_t)v->np);
	char path[4200];
	struct edge_opts eo = {
		.m = &v->dm.m, .tk = &v->tm.t, .tenant = (uint32_t)idx,
		.tokenizer = tok_fingerprint(&v->dm.t),
		.silence_s = EDGE_SILENCE_S, .proto = G->proto.kind,
		.gamma = G->proto.gamma,
		.window = G->proto.window,
		.handover = G->proto.handover == HANDOVER_ALWAYS,
		.handback = G->proto.handback == HANDBACK_FASTER,
		.wan = &G->wan, .seed = c->seed, .prompts = pr,
		.prompt_n = v->np, .out_n = v->nout, .requests = R,
		.think_s = G->workload.think_s, .start_s = G->workload.start_s,
		.t0_s = t0, .spin = spin,
	};
	struct err e;
	json_t *log;

	for (int r = 0; r < R; r++)
		memcpy(pr + (size_t)r * v->np,
		       v->prompts + (size_t)prompt_index(idx, R, r) * v->np,
		       sizeof(int) * (size_t)v->np);
	snprintf(path, sizeof(path), "%.4000s/edge-%d.txt", pdir, idx);
	eo.text = fopen(path, "w");
	eo.fd = wire_dial("127.0.0.1", port, &e);
	if (eo.fd < 0) {
		fprintf(stderr, "validate: edge %d: %s\n", idx, e.msg);
		return 1;
	}
	log = edge_run(&eo, &e);
	if (eo.text)
		fclose(eo.text);
	if (!log) {
		fprintf(stderr, "validate: edge %d: %s\n", idx, e.msg);
		return 1;
	}
	snprintf(path, sizeof(path), "%.4000s/edge-%d.json", pdir, idx);
	if (jx_save(path, log, &e) < 0) {
		fprintf(stderr, "validate: %s\n", e.msg);
		return 1;
	}
	return 0;
}

/* The server of a point: config c's cloud (its paged KV pool as the
 * simulator's: the same blocks, watermark and max_num_seqs), clients
 * edges, times from t0; spinning where it has a CPU of its own. */
static struct serve_opts server_opts(const struct val *v, const struct cfg *c,
				     int lfd, int clients, double t0)
{
	long blocks = (long)(c->cloud.kv_capacity_tokens / c->cloud.block_tokens);

	return (struct serve_opts){
		.m = &v->tm.m, .listen_fd = lfd, .policy = c->cloud.policy,
		.budget = (int)c->cloud.max_batch_tokens,
		.chunk = (int)c->cloud.prefill_chunk_tokens,
		.kv_blocks = blocks, .block_tokens = (int)c->cloud.block_tokens,
		.watermark = (int)(c->cloud.watermark * (double)blocks),
		.max_seqs = (int)fmin((double)c->cloud.max_num_seqs, clients),
		.window_s = c->cloud.window_s, .max_clients = clients,
		.exit_after = clients, .t0_s = t0, .spin = v->server_cpu >= 0,
		.tokenizer = tok_fingerprint(&v->tm.t),
	};
}

static int server_child(struct val *v, const struct cfg *c, int lfd,
			int clients, double t0, const char *pdir)
{
	struct serve_opts so = server_opts(v, c, lfd, clients, t0);
	char path[4200];
	struct err e;
	json_t *st;

	so.log_iterations = true;
	if (!(st = serve_run(&so, &e))) {
		fprintf(stderr, "validate: serve: %s\n", e.msg);
		return 1;
	}
	snprintf(path, sizeof(path), "%.4000s/server.json", pdir);
	return jx_save(path, st, &e) < 0 ? 1 : 0;
}

int val_stack(struct val *v, const struct cfg *c, double *stack_s,
	      struct err *e)
{
	int port = 0, lfd = serve_listen("127.0.0.1", &port, e), fd, r = -1;
	int status;
	pid_t pid;

	if (lfd < 0)
		return -1;
	fflush(NULL);
	if ((pid = rt_fork_tied(SIGKILL)) == 0) {
		struct serve_opts so = server_opts(v, c, lfd, 1, rt_now_s());
		json_t *st;

		pin(v, SIDE_SERVER);
		st = serve_run(&so, e);
		if (!st)
			fprintf(stderr, "validate: ping's serve: %s\n", e->msg);
		_exit(st ? 0 : 1);
	}
	close(lfd);
	if (pid < 0)
		return err_set(e, "ping's serve: fork: %s", strerror(errno));
	pin(v, SIDE_EDGE);
	if ((fd = wire_dial("127.0.0.1", port, e)) >= 0)
		r = edge_ping(fd, 0, NULL, dist_mean(cfg_wan_rtt(
			      &c->groups[0].wan, 0)), VAL_PINGS,
			      edges_spin(v, c), stack_s, e);
	pin(v, SIDE_ALL);
	if (r < 0)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return r < 0 ? err_prefix(e, "ping") :
		       err_set(e, "ping: the server failed (its message is "
			       "above)");
	if (r < 0)
		return err_prefix(e, "ping");
	*stack_s /= 2; /* a round trip is two messages */
	return 0;
}

/* Kills the n processes of pid[] and waits for them. */
static void kill_all(const pid_t *pid, int n)
{
	for (int i = 0; i < n; i++)
		kill(pid[i], SIGKILL);
	while (wait(NULL) > 0)
		;
}

/* Forks the server and the edges, waits for them (killing them all after
 * timeout_s), and reads their logs into p->real. */
int val_deploy(struct val *v, const struct cfg *c, const char *pdir,
	       double timeout_s, struct val_point *p, struct err *e)
{
	int port = 0, lfd = serve_listen("127.0.0.1", &port, e), n = 0, bad = 0;
	int clients = edge_count(c);
	pid_t *pid;
	double t0, deadline, tokens = 0, span = 0, gaps = 0, end = 0, ttft = 0;
	double judged = 0, accepted = 0, draft_s = 0, drafted = 0;
	double pair_s = 0, paired = 0; /* the passes that fed two tokens */
	char path[4200];
	json_t *st;

	if (lfd < 0)
		return -1;
	p->edges_per_cpu = (double)clients / v->edge_cpus;
	p->edges_spin = edges_spin(v, c);
	pid = xcalloc((size_t)clients + 1, sizeof(pid_t));
	fflush(NULL);
	t0 = rt_now_s() + 0.3 + 0.005 * clients; /* all processes up by then */
	if ((pid[n++] = rt_fork_tied(SIGKILL)) == 0) {
		pin(v, SIDE_SERVER);
		_exit(server_child(v, c, lfd, clients, t0, pdir));
	}
	close(lfd);
	for (size_t g = 0, idx = 0; g < c->n_groups && pid[n - 1] > 0; g++)
		for (long long k = 0; k < c->groups[g].count && pid[n - 1] > 0;
		     k++, idx++)
			if ((pid[n++] = rt_fork_tied(SIGKILL)) == 0) {
				pin(v, SIDE_EDGE);
				_exit(edge_child(v, c, g, (int)idx, port, t0,
						 p->edges_spin, pdir));
			}
	if (pid[n - 1] < 0) {
		err_set(e, "%s: fork: %s", pdir, strerror(errno));
		kill_all(pid, n - 1);
		free(pid);
		return -1;
	}
	deadline = rt_now_s() + timeout_s;
	for (int left = n; left > 0;) {
		int status;
		pid_t w = waitpid(-1, &status, WNOHANG);

		if (w > 0) {
			left--;
			bad += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
		} else if (rt_signal) {
			kill_all(pid, n);
			free(pid);
			return err_set(e, "stopped by signal %d", (int)rt_signal);
		} else if (rt_now_s() > deadline) {
			kill_all(pid, n);
			free(pid);
			return err_set(e, "%s: still running after %g s: killed",
				       pdir, timeout_s);
		} else {
			nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
		}
	}
	free(pid);
	if (bad)
		return err_set(e, "%s: %d of the deployment's processes failed "
			       "(their messages are above)", pdir, bad);
	snprintf(path, sizeof(path), "%.4000s/server.json", pdir);
	if (!(st = jx_load(path, e)))
		return -1;
	p->errors = (long)json_integer_value(json_object_get(st, "protocol_errors"));
	for (int idx = 0; idx < clients; idx++) {
		json_t *log, *reqs, *rq;
		size_t i;

		snprintf(path, sizeof(path), "%.4000s/edge-%d.json", pdir, idx);
		if (!(log = jx_load(path, e))) {
			json_decref(st);
			return -1;
		}
		judged += (double)json_integer_value(json_object_get(log, "judged"));
		accepted += (double)json_integer_value(json_object_get(log, "accepted"));
		draft_s += json_number_value(json_object_get(log, "draft_s"));
		pair_s += json_number_value(json_object_get(log, "pair_pass_s"));
		paired += (double)json_integer_value(json_object_get(log,
								"pair_passes"));
		drafted += (double)json_integer_value(json_object_get(log, "drafted"));
		reqs = json_object_get(log, "requests");
		json_array_foreach(reqs, i, rq) {
			json_t *cm = json_object_get(rq, "commits");
			json_t *tk = json_object_get(rq, "tokens");
			size_t nc = json_array_size(cm);
			int R = (int)json_array_size(reqs);
			const int *want = v->greedy +
				(size_t)prompt_index(idx, R, (int)i) * v->nout;
			double first = json_number_value(json_array_get(
				json_array_get(cm, 0), 0));
			double last = json_number_value(json_array_get(
				json_array_get(cm, nc - 1), 0));

			tokens += v->nout;
			span += last - first;
			gaps += v->nout - 1;
			ttft += first - json_number_value(json_object_get(rq,
							"arrive_s"));
			end = fmax(end, json_number_value(json_object_get(rq,
							"done_arrive_s")));
			p->requests++;
			for (int t = 0; t < v->nout; t++)
				if (json_integer_value(json_array_get(tk, (size_t)t)) !=
				    want[t]) {
					p->mismatched++;
					break;
				}
		}
		json_decref(log);
	}
	p->real = (struct val_side){
		.itl_s = gaps > 0 ? span / gaps : 0,
		.tokens_per_s = end > 0 ? tokens / end : 0,
		.alpha = judged > 0 ? accepted / judged : 0,
		.busy = end > 0 ? json_number_value(json_object_get(st, "busy_s")) /
				  end : 0,
		.ttft_s = p->requests ? ttft / (double)p->requests : 0,
		.preemptions = (double)json_integer_value(json_object_get(st,
							"preemptions")),
	};
	p->draft_step_s = drafted > paired ? (draft_s - pair_s) /
					     (drafted - paired) : 0;
	p->draft_pair_s = paired > 0 ? pair_s / paired : 0;
	json_decref(st);
	return 0;
}

double val_verify_ratio(const char *pdir, const char *table,
			const char *model, struct err *e)
{
	char path[4200];
	json_t *st, *row;
	struct vtab t;
	double real = 0, pred = 0;
	size_t i;

	snprintf(path, sizeof(path), "%.4000s/server.json", pdir);
	if (vtab_load(&t, table, model, e) < 0)
		return -1;
	if (!(st = jx_load(path, e))) {
		vtab_release(&t);
		return -1;
	}
	/* a row: [tokens, sequences, context summed, seconds, logits rows] */
	json_array_foreach(json_object_get(st, "iteration_log"), i, row) {
		struct cost_batch b = {
			.tokens = (long)json_integer_value(json_array_get(row, 0)),
			.seqs = (long)json_integer_value(json_array_get(row, 1)),
			.ctx_sum = json_number_value(json_array_get(row, 2)),
			.logits = (long)json_integer_value(json_array_get(row, 4)),
		};

		if (b.tokens > 0)
			pred += cost_table_batch_s(&t, &b);
		real += json_number_value(json_array_get(row, 3));
	}
	json_decref(st);
	vtab_release(&t);
	return pred > 0 ? real / pred : 1;
}

int val_cfg_load(const struct sweep *sw, size_t point, long long seed,
		 char **extra, size_t n_extra, struct cfg *c, struct err *e)
{
	size_t n;
	char **sets = sweep_sets(sw, point, seed, &n);
	const char **all = xmalloc(sizeof(char *) * (n + n_extra));
	int rc;

	for (size_t i = 0; i < n; i++)
		all[i] = sets[i];
	for (size_t i = 0; i < n_extra; i++)
		all[n + i] = extra[i];
	rc = cfg_load_from(c, sw->base, all, n + n_extra, NULL, e);
	free(all);
	sweep_sets_free(sets, n);
	return rc;
}

/* The simulator on the same config, averaged over the sweep's seeds. */
int val_simulate(const struct sweep *sw, size_t point, char **extra,
		 size_t n_extra, const char *pdir, struct val_point *p,
		 struct err *e)
{
	struct val_side sum = { 0 };
	double demand = 0;

	for (size_t k = 0; k < sw->n_seeds; k++) {
		struct cfg c;
		json_t *sum_doc;
		int rc = -1;

		if (val_cfg_load(sw, point, sw->seeds[k], extra, n_extra, &c,
				 e) < 0)
			return -1;
		if ((sum_doc = rep_simulate(&c, e))) {
			rc = 0;
#define AT(ptr) json_number_value(jx_at(sum_doc, ptr))
			sum.itl_s += AT("/all/itl_s/mean");
			sum.tokens_per_s += AT("/all/tokens_per_s");
			sum.alpha += AT("/all/alpha");
			sum.busy += AT("/cloud/busy_fraction");
			sum.ttft_s += AT("/all/ttft_s/mean");
			sum.preemptions += AT("/cloud/kv/preemptions");
			demand += AT("/all/edge_busy_fraction") * AT("/all/tenants");
#undef AT
			if (k == 0) {
				char path[4200];

				snprintf(path, sizeof(path), "%.4000s/sim-summary.json",
					 pdir);
				rc = jx_save(path, sum_doc, e);
			}
			json_decref(sum_doc);
		}
		cfg_release(&c);
		if (rc < 0)
			return -1;
	}
	p->sim = (struct val_side){ sum.itl_s / sw->n_seeds,
				sum.tokens_per_s / sw->n_seeds,
				sum.alpha / sw->n_seeds, sum.busy / sw->n_seeds,
				sum.ttft_s / sw->n_seeds,
				sum.preemptions / sw->n_seeds };
	p->edge_demand = demand / (double)sw->n_seeds;
	return 0;
}

