/* cli_formulas.c: "hybridspec formulas": the closed forms for a config's
 * setting, their check against the simulator in each one's regime, and the
 * table of where the paper's async bound holds.
 *
 * A check builds a config (JSON text) in a temporary folder, with a
 * verification-cost table that makes every iteration cost exactly v where
 * the formula assumes a constant, runs the simulator in-process and compares
 * one figure of its summary with the formula's. */
#define _XOPEN_SOURCE 700
#include "cli.h"

#include "cost.h"
#include "formula.h"
#include "report.h"
#include "sim.h"
#include "mem.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HDR_BYTES (66 + LINK_APP_HEADER_BYTES) /* default header + framing */
#define BPS 1e12                               /* links in the checks */


/* Network time of one round: RTT plus the block and verdict on the wire. */
static double tnet_of(double rtt, int gamma)
{
	return rtt + 8.0 * (HDR_BYTES + LINK_TOKEN_BYTES * gamma) / BPS +
	       8.0 * (HDR_BYTES + 2 * LINK_TOKEN_BYTES) / BPS;
}

/* Runs a config given as text, its tables inline; returns its summary
 * (caller decrefs). */
static json_t *simulate(const char *text, struct err *e)
{
	json_t *doc = json_loads(text, 0, NULL), *sum;
	struct cfg c;

	HS_ASSERT(doc != NULL); /* the checks' own text */
	if (cfg_parse(&c, doc, "the formulas check", NULL, 0, e) < 0)
		return NULL;
	sum = rep_simulate(&c, e);
	cfg_release(&c);
	return sum;
}

/* The GPU of the checks, as inline JSON: a table whose every entry is v
 * (iterations cost v whatever their size, or v + per_token x tokens), on
 * a GPU named for the checks with memory enough for any request (its
 * other figures only scale MBU and MFU). Static buffer, overwritten by the
 * next call. */
static const char *check_gpu(double v, double per_token)
{
	static char text[512];

	snprintf(text, sizeof(text), "{\"name\": \"formulas-check\", "
		 "\"mem_bw_Bps\": 1e12, \"fp16_flops\": 1e15, \"mem_bytes\": "
		 "1e15, \"table\": {\"gpu\": \"formulas-check\", \"tokens\": "
		 "[1, 4096], \"ctx\": [1], \"seconds\": [[%.17g], [%.17g]]}}",
		 v + per_token, v + per_token * 4096);
	return text;
}

/* The cloud's draft model in cloud_spec, as the inline protocol key: a
 * table of the checks' GPU costing d + per_token x tokens. Static buffer,
 * overwritten by the next call. */
static const char *check_draft(double d, double per_token)
{
	static char text[320];

	snprintf(text, sizeof(text), ", \"draft\": {\"table\": {\"gpu\": "
		 "\"formulas-check\", \"tokens\": [1, 4096], \"ctx\": [1], "
		 "\"seconds\": [[%.17g], [%.17g]]}}", d + per_token,
		 d + per_token * 4096);
	return text;
}

struct spec_case {
	const char *kind;       /* "sync", "async", "cloud_only", "cloud_spec" */
	int tenants, gamma, window;
	double alpha, d, rtt, v; /* d: the edge's draft step, or the cloud's */
	long out_tokens;
};

/* One group of tenants on dedicated GPUs: no queueing. The edge is the
 * paper's ("passes": "ideal"): its formulas stop a draft the moment its
 * block is rejected. */
static json_t *run_spec(const struct spec_case *k, struct err *e)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "{\"seed\": 11, \"protocol\": {\"kind\": \"%s\", \"gamma\": %d,"
		 " \"window\": %d%s}, \"tenants\": [{\"name\": \"t\", \"count\": %d,"
		 " \"device\": {\"draft_base_s\": %.17g, \"prefill_per_token_s\":"
		 " 1e-5, \"passes\": \"ideal\"}, \"workload\": {\"requests\": 1, \"prompt_tokens\": 16,"
		 " \"output_tokens\": %ld}, \"acceptance\": {\"alpha\": %.17g},"
		 " \"wan\": {\"rtt_s\": %.17g, \"up_bps\": %g, \"down_bps\": %g}}],"
		 " \"cloud\": {\"policy\": \"dedicated\", \"gpu\": %s}}", k->kind,
		 k->gamma, k->window, strcmp(k->kind, "cloud_spec") ? ""
		 : check_draft(k->d, 0), k->tenants, k->d,
		 k->out_tokens, k->alpha, k->rtt, BPS, BPS, check_gpu(k->v, 0));
	return simulate(text, e);
}

static double get(const json_t *sum, const char *a, const char *b,
		  const char *c)
{
	const json_t *x = json_object_get(sum, a);

	if (b)
		x = json_object_get(x, b);
	if (c)
		x = json_object_get(x, c);
	return json_number_value(x);
}

struct check {
	char formula[64], regime[160];
	bool in_regime;
	double predicted, simulated;
};

struct checks {
	struct check *v;
	size_t n, cap;
};

static void add(struct checks *cs, const char *formula, bool in_regime,
		double predicted, double simulated, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void add(struct checks *cs, const char *formula, bool in_regime,
		double predicted, double simulated, const char *fmt, ...)
{
	va_list ap;
	struct check *c;

	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? 2 * cs->cap : 32;
		cs->v = xrealloc(cs->v, cs->cap * sizeof(*cs->v));
	}
	c = &cs->v[cs->n++];
	snprintf(c->formula, sizeof(c->formula), "%s", formula);
	va_start(ap, fmt);
	vsnprintf(c->regime, sizeof(c->regime), fmt, ap);
	va_end(ap);
	c->in_regime = in_regime;
	c->predicted = predicted;
	c->simulated = simulated;
}

static double rel_error(const struct check *c)
{
	return fabs(c->simulated - c->predicted) / fabs(c->predicted);
}

/* Sync: E[A] and the time per token, deterministic, no queueing. */
static int check_sync(struct checks *cs, struct err *e)
{
	static const double alphas[] = { 0.6, 0.8, 0.95 };
	static const int gammas[] = { 2, 4, 8 };

	for (int a = 0; a < 3; a++) {
		for (int g = 0; g < 3; g++) {
			struct spec_case k = { "sync", 16, gammas[g], 1, alphas[a],
					       0.02, 0.08, 0.006, 40000 };
			json_t *sum = run_spec(&k, e);

			if (!sum)
				return -1;
			add(cs, "E[A]", true, fm_expected_accepted(k.alpha, k.gamma),
			    get(sum, "all", "tokens_per_verdict", NULL),
			    "sync, alpha %.2f, gamma %d", k.alpha, k.gamma);
			add(cs, "T_sync per token", true,
			    fm_sync_s_per_token(k.alpha, k.gamma, k.d,
						tnet_of(k.rtt, k.gamma), k.v),
			    get(sum, "all", "itl_s", "mean"),
			    "sync, alpha %.2f, gamma %d, d 20 ms, RTT 80 ms, v 6 ms",
			    k.alpha, k.gamma);
			json_decref(sum);
		}
	}
	return 0;
}

/* Leviathan: sync against cloud-only with no network (RTT 1 ns). */
static int check_leviathan(struct checks *cs, struct err *e)
{
	static const double cs_[] = { 0.05, 0.3 };

	for (int i = 0; i < 2; i++) {
		double T = 0.01, c = cs_[i];
		struct spec_case sp = { "sync", 8, 4, 1, 0.8, c * T, 1e-9, T, 40000 };
		struct spec_case co = { "cloud_only", 8, 4, 1, 0.8, c * T, 1e-9, T,
					40000 };
		json_t *a = run_spec(&sp, e), *b = a ? run_spec(&co, e) : NULL;

		if (!b) {
			json_decref(a);
			return -1;
		}
		add(cs, "Leviathan improvement", true,
		    fm_leviathan_improvement(sp.alpha, sp.gamma, c),
		    get(b, "all", "itl_s", "mean") / get(a, "all", "itl_s", "mean"),
		    "no network, alpha 0.80, gamma 4, c %.2f (alpha > c: %s)", c,
		    sp.alpha > c ? "yes" : "no");
		json_decref(a);
		json_decref(b);
	}
	return 0;
}

/* Async: the window pipeline at alpha 1, the paper's bound, the renewal
 * model, and the balance point. */
static int check_async(struct checks *cs, struct err *e)
{
	static const struct { double alpha; int gamma, window; double rtt; } k[] = {
		{ 1.0, 4, 2, 0.02 }, { 1.0, 4, 2, 0.2 }, { 1.0, 4, 3, 0.2 },
		{ 0.9, 4, 64, 0.08 }, { 0.8, 4, 64, 0.08 }, { 0.6, 2, 64, 0.2 },
		{ 0.8, 8, 64, 0.02 }, { 0.8, 4, 2, 0.2 }, { 0.7, 4, 3, 0.08 },
	};
	const double d = 0.02, v = 0.006;

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct spec_case c = { "async", 16, k[i].gamma, k[i].window,
				       k[i].alpha, d, k[i].rtt, v, 40000 };
		double tnet = tnet_of(c.rtt, c.gamma), sim;
		json_t *sum = run_spec(&c, e);
		bool edge_bound = (c.window - 1) * c.gamma * d >= tnet + v;

		if (!sum)
			return -1;
		sim = get(sum, "all", "itl_s", "mean");
		if (c.alpha == 1)
			add(cs, "window pipeline", true,
			    fm_window_s_per_token(c.gamma, c.window, d, tnet + v),
			    sim, "async, alpha 1, gamma %d, W %d, RTT %.0f ms",
			    c.gamma, c.window, 1e3 * c.rtt);
		add(cs, "async renewal", true,
		    fm_async_renewal_s_per_token(c.alpha, c.gamma, c.window, d,
						 tnet + v), sim,
		    "async, alpha %.2f, gamma %d, W %d, RTT %.0f ms", c.alpha,
		    c.gamma, c.window, 1e3 * c.rtt);
		add(cs, "paper async bound", c.alpha == 1 && edge_bound,
		    fm_paper_async_s_per_token(c.gamma, d, tnet, v), sim,
		    "async, alpha %.2f, gamma %d, W %d, RTT %.0f ms%s", c.alpha,
		    c.gamma, c.window, 1e3 * c.rtt,
		    c.alpha == 1 && edge_bound ? "" :
		    c.alpha < 1 ? " (rejections)" : " (network-bound)");
		json_decref(sum);
	}
	/* balance point with W = 2 at alpha 1: the time per token is d when
	 * drafting dominates and (gamma d + R) / 2 gamma otherwise; locate the
	 * kink from two simulated points on each side */
	{
		const int gamma = 4;
		const double rtt = 0.06, tnet = tnet_of(rtt, gamma);
		double star = fm_balance_two_stage(tnet, v) / gamma, x[4], y[4];
		double sl, sr, il, ir;

		for (int i = 0; i < 4; i++) {
			struct spec_case c = { "async", 2, gamma, 2, 1.0,
					       star * (i < 2 ? 0.4 + 0.2 * i
							     : 1.5 + 0.5 * (i - 2)),
					       rtt, v, 20000 };
			json_t *sum = run_spec(&c, e);

			if (!sum)
				return -1;
			x[i] = c.d;
			y[i] = get(sum, "all", "itl_s", "mean");
			json_decref(sum);
		}
		sl = (y[1] - y[0]) / (x[1] - x[0]);
		il = y[0] - sl * x[0];
		sr = (y[3] - y[2]) / (x[3] - x[2]);
		ir = y[2] - sr * x[2];
		add(cs, "balance point, two-stage", true,
		    fm_balance_two_stage(tnet, v),
		    gamma * (il - ir) / (sr - sl),
		    "async W 2, alpha 1, gamma 4: gamma d = tnet + v (RTT 60 ms, "
		    "v 6 ms)");
		add(cs, "balance point, paper", false, fm_balance_paper(tnet, v),
		    gamma * (il - ir) / (sr - sl),
		    "async W 2, alpha 1, gamma 4: T_verify = gamma d + tnet");
	}
	return 0;
}

/* M/D/1: Poisson requests of one token from many tenants, one prefill per
 * iteration of constant cost v, for 1000 s of arrivals that never run out
 * (a finite supply would thin the arrivals near the end). */
static int check_queueing(struct checks *cs, struct err *e)
{
	static const double rhos[] = { 0.3, 0.6, 0.9 };
	const double v = 0.004, rtt = 0.01;
	const int n = 2000;

	for (int i = 0; i < 3; i++) {
		char text[2048];
		json_t *sum;

		snprintf(text, sizeof(text),
			 "{\"seed\": 5, \"horizon_s\": 1000, \"protocol\": "
			 "{\"kind\": \"cloud_only\"},"
			 " \"tenants\": [{\"name\": \"q\", \"count\": %d,"
			 " \"workload\": {\"arrival\": \"poisson\", \"rate_per_s\":"
			 " %.17g, \"requests\": 1000000, \"prompt_tokens\": 16,"
			 " \"output_tokens\": 1}, \"wan\": {\"rtt_s\": %g,"
			 " \"up_bps\": %g, \"down_bps\": %g}}],"
			 " \"cloud\": {\"max_batch_tokens\": 16, \"gpu\":"
			 " %s}}", n, rhos[i] / (v * n), rtt, BPS,
			 BPS, check_gpu(v, 0));
		if (!(sum = simulate(text, e)))
			return -1;
		add(cs, "M/D/1 queueing", rhos[i] <= 0.6,
		    rtt + v + fm_md1_wait_s(rhos[i], v) +
			    8.0 * (2 * HDR_BYTES + 17 * LINK_TOKEN_BYTES) / BPS,
		    get(sum, "all", "ttft_s", "mean"),
		    "TTFT, Poisson arrivals, service 4 ms, load %.1f%s", rhos[i],
		    rhos[i] <= 0.6 ? "" : " (heavy load: slow convergence)");
		json_decref(sum);
	}
	return 0;
}

/* A GPU saturated by 600 tenants whose requests do not end, for 240 s,
 * of protocol kind: verify costs t0 + t1 B, the cloud's draft (cloud_spec)
 * d0 + d1 B; returns the batch tokens per second it ran, or -1. Prompts of
 * one token keep the prefills' share of the batch tokens below 0.1%. */
static double saturated(const char *kind, int gamma, double t0, double t1,
			double d0, double d1, struct err *e)
{
	const double horizon = 240;
	char text[3072];
	json_t *sum;
	double v;

	snprintf(text, sizeof(text),
		 "{\"seed\": 3, \"horizon_s\": %g, \"protocol\": {\"kind\": "
		 "\"%s\", \"gamma\": %d%s}, \"tenants\": [{\"name\": \"c\", "
		 "\"count\": 600, \"device\": {\"draft_base_s\": 0.01, "
		 "\"prefill_per_token_s\": 1e-5}, \"workload\": {\"requests\": 1,"
		 " \"prompt_tokens\": 1, \"output_tokens\": 100000},"
		 " \"acceptance\": {\"alpha\": 0.8}, \"wan\": {\"rtt_s\": 0.05}}],"
		 " \"cloud\": {\"max_batch_tokens\": 64, \"kv_capacity_tokens\":"
		 " 100000000, \"gpu\": %s}}", horizon, kind, gamma,
		 strcmp(kind, "cloud_spec") ? "" : check_draft(d0, d1),
		 check_gpu(t0, t1));
	if (!(sum = simulate(text, e)))
		return -1;
	v = get(sum, "cloud", "batch_tokens_total", NULL) / horizon;
	json_decref(sum);
	return v;
}

/* Capacity: a GPU kept saturated by sync tenants (iteration t0 + t1 B,
 * budget 64 tokens: 12 segments of gamma + 1 = 5). */
static int check_capacity(struct checks *cs, struct err *e)
{
	const double t0 = 0.005, t1 = 2e-6;
	const int gamma = 4, budget = 64;
	int packed = budget / (gamma + 1) * (gamma + 1);
	double got = saturated("sync", gamma, t0, t1, 0, 0, e);

	if (got < 0)
		return -1;
	add(cs, "cloud capacity", true, packed / (t0 + t1 * packed), got,
	    "verify tokens/s of a GPU saturated by 600 sync tenants, budget %d",
	    budget);
	return 0;
}

/* cloud_spec: the time per token of one request alone, and the capacity
 * against edge drafting (arXiv 2606.25091's 1 + gamma t_d / t_v): exact
 * where costs grow linearly from zero, shown beside a case with a fixed
 * cost per iteration, where it is not. */
static int check_cloud_spec(struct checks *cs, struct err *e)
{
	static const double alphas[] = { 0.6, 0.8, 0.95 };
	static const int gammas[] = { 2, 4, 8 };
	static const struct { double t0, t1, d0, d1; } caps[] = {
		{ 0, 200e-6, 0, 40e-6 }, { 0, 200e-6, 0, 200e-6 },
		{ 0.006, 100e-6, 0.002, 20e-6 },
	};

	for (int a = 0; a < 3; a++) {
		for (int g = 0; g < 3; g++) {
			struct spec_case k = { "cloud_spec", 8, gammas[g], 1,
					       alphas[a], 0.0015, 0.08, 0.006,
					       40000 };
			json_t *sum = run_spec(&k, e);

			if (!sum)
				return -1;
			add(cs, "cloud_spec per token", true,
			    fm_cloud_spec_s_per_token(k.alpha, k.gamma, k.d, k.v),
			    get(sum, "all", "itl_s", "mean"),
			    "cloud_spec, alpha %.2f, gamma %d, t_d 1.5 ms, t_v 6 ms",
			    k.alpha, k.gamma);
			json_decref(sum);
		}
	}
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		const int gamma = 4;
		bool linear = caps[i].t0 == 0 && caps[i].d0 == 0;
		double edge = saturated("sync", gamma, caps[i].t0, caps[i].t1, 0,
					0, e);
		double own = edge < 0 ? -1 : saturated("cloud_spec", gamma,
						       caps[i].t0, caps[i].t1,
						       caps[i].d0, caps[i].d1, e);

		if (own < 0)
			return -1;
		/* rounds a second: gamma + 1 batch tokens each at the edge's,
		 * 2 gamma + 1 (drafts and verification) at cloud_spec's */
		add(cs, "cloud_spec capacity ratio", linear,
		    fm_cloud_spec_capacity_ratio(gamma,
						 caps[i].d0 + caps[i].d1,
						 caps[i].t0 + caps[i].t1 * (gamma + 1)),
		    (edge / (gamma + 1)) / (own / (2 * gamma + 1)),
		    "saturated GPU, gamma 4: t_v %.3g + %.3g B, t_d %.3g + %.3g B"
		    "%s", caps[i].t0, caps[i].t1, caps[i].d0, caps[i].d1,
		    linear ? "" : " (fixed cost an iteration)");
	}
	return 0;
}

static int run_checks(struct checks *cs, struct err *e)
{
	return check_sync(cs, e) < 0 || check_leviathan(cs, e) < 0 ||
	       check_async(cs, e) < 0 || check_queueing(cs, e) < 0 ||
	       check_capacity(cs, e) < 0 || check_cloud_spec(cs, e) < 0
		       ? -1 : 0;
}

#define MAX_REL_ERROR 0.01

static int print_checks(const struct checks *cs, bool json)
{
	bool passed = true;

	for (size_t i = 0; i < cs->n; i++)
		if (cs->v[i].in_regime && !(rel_error(&cs->v[i]) <= MAX_REL_ERROR))
			passed = false;
	if (json) {
		json_t *arr = json_array(), *o;
		char *s;

		for (size_t i = 0; i < cs->n; i++) {
			const struct check *c = &cs->v[i];

			json_array_append_new(arr, json_pack(
				"{s:s,s:s,s:b,s:f,s:f,s:f}", "formula", c->formula,
				"regime", c->regime, "in_regime", c->in_regime,
				"predicted", c->predicted, "simulated", c->simulated,
				"rel_error", rel_error(c)));
		}
		o = json_pack("{s:o,s:b,s:f}", "checks", arr, "passed", passed,
			      "max_rel_error", MAX_REL_ERROR);
		s = jx_dumps(o);
		fputs(s, stdout);
		free(s);
		json_decref(o);
	} else {
		printf("%-26s %-9s %12s %12s %9s  %s\n", "formula", "in regime",
		       "predicted", "simulated", "rel.err", "regime");
		for (size_t i = 0; i < cs->n; i++) {
			const struct check *c = &cs->v[i];

			printf("%-26s %-9s %12.6g %12.6g %8.3f%%%s %s\n", c->formula,
			       c->in_regime ? "yes" : "no", c->predicted,
			       c->simulated, 100 * rel_error(c),
			       c->in_regime && rel_error(c) > MAX_REL_ERROR ? "!" : " ",
			       c->regime);
		}
		printf("%s: every in-regime row within %.0f%%\n",
		       passed ? "passed" : "FAILED", 100 * MAX_REL_ERROR);
	}
	return passed ? CLI_OK : CLI_FAILED;
}

/* Async time per token against alpha, gamma, RTT: the paper's bound, the
 * renewal model and the simulation, as a markdown table. */
static int print_table(struct err *e)
{
	static const double rtts[] = { 0.02, 0.08, 0.2 };
	static const int gammas[] = { 2, 4, 8 };
	static const double alphas[] = { 0.5, 0.7, 0.8, 0.9, 0.95, 1.0 };
	const double d = 0.025, v = 0.006;
	int rc = 0;

	printf("| RTT ms | gamma | alpha | paper bound ms | renewal ms | "
	       "simulated ms | paper error | renewal error |\n"
	       "|---|---|---|---|---|---|---|---|\n");
	for (int r = 0; r < 3 && !rc; r++) {
		for (int g = 0; g < 3 && !rc; g++) {
			for (int a = 0; a < 6; a++) {
				struct spec_case c = { "async", 16, gammas[g], 64,
						       alphas[a], d, rtts[r], v,
						       50000 };
				double tnet = tnet_of(c.rtt, c.gamma), sim, pb, rn;
				json_t *sum = run_spec(&c, e);

				if (!sum) {
					rc = -1;
					break;
				}
				sim = get(sum, "all", "itl_s", "mean");
				pb = fm_paper_async_s_per_token(c.gamma, d, tnet, v);
				rn = fm_async_renewal_s_per_token(c.alpha, c.gamma,
								  c.window, d,
								  tnet + v);
				printf("| %.0f | %d | %.2f | %.2f | %.2f | %.2f | "
				       "%+.1f%% | %+.2f%% |\n", 1e3 * c.rtt, c.gamma,
				       c.alpha, 1e3 * pb, 1e3 * rn, 1e3 * sim,
				       100 * (pb - sim) / sim, 100 * (rn - sim) / sim);
				fflush(stdout);
				json_decref(sum);
			}
		}
	}
	return rc;
}

/* Requests a second the cloud carries, of group g's protocol at its mean
 * lengths, into o. The GPU: one over the GPU time a request takes, its
 * prompt and gamma + 1 tokens a round at the target's full-batch rate
 * (cloud_spec's gamma draft steps and prompt at the draft's). The KV cache: slots of prompt + output tokens, each held
 * from admission to the request's end. A request admitted at once holds
 * its slot for its whole life L (its prefill, its tokens at t_token each, a
 * round trip for the prompt and the DONE): past slots / L a second requests
 * wait for a slot (an M/D/c queue of service L below it). A request of the
 * edge that waits does so while its device prefills, so it then holds its
 * slot the less: the queue grows without bound only past slots / H, H the
 * hold of a request admitted as its device's prefill ends (the cloud's
 * prefill, its tokens, a round trip). The smaller of the GPU's and the
 * cache's bounds is the capacity. */
static void request_capacity(const struct cfg *c, const struct cfg_group *g,
			     const struct cost *cost, double cap_tokens_s,
			     double cap_draft_tokens_s, double alpha,
			     double t_token, double rtt, json_t *o)
{
	const struct proto_caps *k = &g->proto.caps;
	double prompt = dist_mean(&g->workload.prompt_tokens);
	double out = dist_mean(&g->workload.output_tokens);
	double rounds = out / fm_expected_accepted(alpha, g->proto.gamma);
	/* GPU seconds a request: the target's tokens at its full-batch rate,
	 * and cloud_spec's draft steps and prompt at the draft's */
	double gpu_s = (prompt + (k->speculates || k->cloud_drafts
				  ? rounds * (g->proto.gamma + 1) : out)) /
		       cap_tokens_s +
		       (k->cloud_drafts ? (prompt + rounds * g->proto.gamma) /
					  cap_draft_tokens_s : 0);
	double cloud_prefill = cost_iter_s(cost, &(struct cost_batch){
		(long)prompt, 1, 0, prompt * prompt / 2 }, NULL, NULL);
	double hold = cloud_prefill + out * t_token + rtt;
	double life = hold + (k->uses_edge ? g->device.prefill_base_s +
			      g->device.prefill_per_token_s * prompt -
			      cloud_prefill : 0);
	double slots = floor((double)c->cloud.kv_capacity_tokens / (prompt + out));
	double r = (double)c->cloud.replicas, kv = r * slots / hold;
	double gpu = 1 / gpu_s;

	json_object_set_new(o, "kv_slots", json_real(r * slots));
	json_object_set_new(o, "request_lifetime_s", json_real(life));
	json_object_set_new(o, "kv_hold_min_s", json_real(hold));
	json_object_set_new(o, "kv_wait_onset_requests_per_s",
			    json_real(r * slots / life));
	json_object_set_new(o, "capacity_requests_per_s_kv", json_real(kv));
	json_object_set_new(o, "capacity_requests_per_s_gpu", json_real(gpu));
	json_object_set_new(o, "capacity_requests_per_s", json_real(fmin(kv, gpu)));
	json_object_set_new(o, "capacity_bound", json_string(kv < gpu ? "KV cache"
								  : "GPU"));
}

/* The formulas for group 0 of a config, at its mean lengths. */
static void print_config(const struct cfg *c, bool json)
{
	const struct cfg_group *g = &c->groups[0];
	const struct cfg_protocol *p = &g->proto;
	struct cost cost;
	double alpha, ctx, d, rtt, tnet, v, step, bw, fl, ridge, cap, demand;
	double td = 0, cap_draft = 0;
	int gamma = p->gamma;
	json_t *o, *roof = json_array();
	char *s;

	alpha = acc_alpha(&g->accept, &g->acc_trace);
	cost_init(&cost, &c->cloud);
	ctx = dist_mean(&g->workload.prompt_tokens) +
	      dist_mean(&g->workload.output_tokens) / 2;
	d = g->device.draft_base_s + g->device.draft_per_ctx_s * ctx;
	rtt = dist_mean(&g->wan.rtt_s);
	tnet = rtt + 8.0 * (g->wan.header_bytes + LINK_APP_HEADER_BYTES +
			    LINK_TOKEN_BYTES * gamma) / g->wan.up_bps +
	       8.0 * (g->wan.header_bytes + LINK_APP_HEADER_BYTES +
		      2 * LINK_TOKEN_BYTES) / g->wan.down_bps;
	v = cost_iter_s(&cost, &(struct cost_batch){ gamma + 1, 1, ctx,
						     (gamma + 1) * ctx }, NULL, NULL);
	step = cost_iter_s(&cost, &(struct cost_batch){ 1, 1, ctx, ctx }, NULL,
			   NULL);
	bw = cost.eta_bw * cost.peak_bw_Bps;
	fl = cost.eta_flops * cost.peak_flops;
	ridge = fl / bw * cost.bytes_per_weight / 2;
	for (long b = 1; b <= 4096; b *= 2) {
		double t = cost_iter_s(&cost, &(struct cost_batch){ b, 1, ctx,
								    b * ctx },
				       NULL, NULL);

		json_array_append_new(roof, json_pack("{s:I,s:f}", "tokens",
						      (json_int_t)b, "seconds", t));
	}
	{
		long bmax = c->cloud.max_batch_tokens;
		long packed = bmax / (gamma + 1) * (gamma + 1);
		double tb = cost_iter_s(&cost, &(struct cost_batch){
			packed, packed / (gamma + 1), ctx * (packed / (gamma + 1)),
			packed * ctx }, NULL, NULL);

		cap = c->cloud.replicas * packed / tb;
		demand = (gamma + 1) /
			 (fm_sync_s_per_token(alpha, gamma, d, tnet, tb) *
			  fm_expected_accepted(alpha, gamma));
	}
	o = json_pack(
		"{s:s,s:s,s:f,s:i,s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:b,s:f,s:f,"
		"s:f,s:f,s:f,s:f,s:f,s:f,s:o,s:f,s:f,s:f,s:{s:f,s:f,s:f}}",
		"group", g->name, "protocol", cfg_proto_names[p->kind],
		"alpha", alpha, "gamma", gamma, "window", p->window,
		"t_draft_s", d, "t_verify_s", v, "t_target_step_s", step,
		"t_network_s", tnet,
		"expected_accepted", fm_expected_accepted(alpha, gamma),
		"c", d / step,
		"leviathan_improvement", fm_leviathan_improvement(alpha, gamma,
								  d / step),
		"alpha_exceeds_c", alpha > d / step,
		"t_sync_round_s", gamma * d + tnet + v,
		"t_sync_s_per_token", fm_sync_s_per_token(alpha, gamma, d, tnet, v),
		"t_async_paper_s_per_token",
		fm_paper_async_s_per_token(gamma, d, tnet, v),
		"t_async_renewal_s_per_token",
		p->window >= 2 ? fm_async_renewal_s_per_token(alpha, gamma,
							      p->window, d,
							      tnet + v)
			       : fm_sync_s_per_token(alpha, gamma, d, tnet, v),
		"t_async_renewal_unbounded_window_s_per_token",
		fm_async_renewal_s_per_token(alpha, gamma, 0, d, tnet + v),
		"balance_two_stage_gamma_t_draft_s", fm_balance_two_stage(tnet, v),
		"balance_paper_gamma_t_draft_s", fm_balance_paper(tnet, v),
		"gamma_t_draft_s", gamma * d,
		"roofline", roof,
		"ridge_tokens", ridge,
		"capacity_verify_tokens_per_s", cap,
		"capacity_tenants", cap / demand,
		"md1_wait_s", "rho_0.5", fm_md1_wait_s(0.5, v), "rho_0.8",
		fm_md1_wait_s(0.8, v), "rho_0.9", fm_md1_wait_s(0.9, v));
	if (cfg_proto_drafts(&p->caps)) {
		/* the group's draft model run in the cloud instead */
		struct cost dc;
		long nseq;

		cost_init_model(&dc, &c->cloud, &p->draft.model,
				p->draft.weight_bytes, &p->draft.table);
		td = cost_iter_s(&dc, &(struct cost_batch){ 1, 1, ctx, ctx }, NULL,
				 NULL);
		/* a draft step of each sequence of the target's full batch */
		nseq = c->cloud.max_batch_tokens / (gamma + 1);
		cap_draft = c->cloud.replicas * (double)nseq /
			    cost_iter_s(&dc, &(struct cost_batch){ nseq, nseq,
				    ctx * (double)nseq, ctx * (double)nseq },
				    NULL, NULL);
		json_object_set_new(o, "t_cloud_draft_s", json_real(td));
		json_object_set_new(o, "t_cloud_spec_s_per_token", json_real(
			fm_cloud_spec_s_per_token(alpha, gamma, td, v)));
		json_object_set_new(o, "cloud_spec_capacity_ratio", json_real(
			fm_cloud_spec_capacity_ratio(gamma, td, v)));
	}
	{
		double tt = p->caps.cloud_drafts ? fm_cloud_spec_s_per_token(alpha,
						   gamma, td, v)
			  : !p->caps.uses_cloud ? d
			  : !p->caps.speculates ? step
			  : p->window >= 2 ? json_real_value(json_object_get(o,
				"t_async_renewal_s_per_token"))
			  : fm_sync_s_per_token(alpha, gamma, d, tnet, v);

		if (p->caps.uses_cloud)
			request_capacity(c, g, &cost, cap, cap_draft, alpha, tt,
					 rtt, o);
	}
	if (json) {
		s = jx_dumps(o);
		fputs(s, stdout);
		free(s);
		json_decref(o);
		return;
	}
	printf("setting: group \"%s\" (%s), alpha %.3f, gamma %d, W %d\n"
	       "  t_draft %.3f ms (mean context %.0f), t_verify %.3f ms "
	       "(gamma + 1 tokens), target step %.3f ms, network %.3f ms\n",
	       g->name, cfg_proto_names[p->kind], alpha, gamma, p->window,
	       1e3 * d, ctx, 1e3 * v, 1e3 * step, 1e3 * tnet);
	printf("E[A] = (1 - a^(g+1)) / (1 - a)              %.4f tokens per "
	       "verification\n", fm_expected_accepted(alpha, gamma));
	printf("Leviathan improvement E[A] / (g c + 1)      %.4f (c = %.3f; "
	       "alpha > c: %s)\n", fm_leviathan_improvement(alpha, gamma, d / step),
	       d / step, alpha > d / step ? "yes" : "no");
	printf("T_sync = g t_draft + t_net + t_verify       %.3f ms a round, "
	       "%.3f ms a token\n", 1e3 * (gamma * d + tnet + v),
	       1e3 * fm_sync_s_per_token(alpha, gamma, d, tnet, v));
	printf("T_async, paper: max(g t_draft, t_net + t_v) %.3f ms a token "
	       "(rejections ignored)\n",
	       1e3 * fm_paper_async_s_per_token(gamma, d, tnet, v));
	printf("T_async, renewal model (W = %d)             %.3f ms a token\n",
	       p->window, 1e3 * json_real_value(json_object_get(o,
			"t_async_renewal_s_per_token")));
	printf("T_async, renewal model (W unbounded)        %.3f ms a token\n",
	       1e3 * fm_async_renewal_s_per_token(alpha, gamma, 0, d, tnet + v));
	printf("balance point, two-stage: g t_draft = t_net + t_verify = %.3f ms"
	       "; paper: g t_draft = t_verify - t_net = %.3f ms; here g t_draft "
	       "= %.3f ms\n", 1e3 * fm_balance_two_stage(tnet, v),
	       1e3 * fm_balance_paper(tnet, v), 1e3 * gamma * d);
	printf("  (the simulator follows the two-stage form: formulas --check)\n");
	printf("roofline: ridge at %.0f tokens a batch (%.0f with peak figures)\n",
	       ridge, cost.peak_flops / cost.peak_bw_Bps * cost.bytes_per_weight /
	       2);
	for (size_t i = 0; i < json_array_size(roof); i++) {
		json_t *r = json_array_get(roof, i);

		printf("  %5lld tokens  %8.3f ms\n",
		       (long long)json_integer_value(json_object_get(r, "tokens")),
		       1e3 * json_real_value(json_object_get(r, "seconds")));
	}
	printf("capacity: %.0f verify tokens/s (%lld replicas, full batches), "
	       "about %.0f sync tenants\n", cap, c->cloud.replicas, cap / demand);
	if (td > 0) {
		printf("cloud_spec (draft %s in the cloud, %.3f ms a step): "
		       "(g t_d + t_v) / E[A] = %.3f ms a token\n",
		       p->draft.model.name, 1e3 * td,
		       1e3 * fm_cloud_spec_s_per_token(alpha, gamma, td, v));
		printf("  edge drafting carries 1 + g t_d / t_v = %.3f times the "
		       "clients of cloud_spec on a saturated GPU (arXiv "
		       "2606.25091; linear costs: formulas --check)\n",
		       fm_cloud_spec_capacity_ratio(gamma, td, v));
	}
	if (json_object_get(o, "capacity_requests_per_s"))
		printf("requests: capacity %.3f a second (%s bound; the GPU's "
		       "%.3f; the KV cache's %.0f slots, held %.1f s by a request "
		       "admitted at once and %.1f s by one admitted as its device's "
		       "prefill ends: requests wait from %.3f a second, without "
		       "bound from %.3f)\n",
		       json_real_value(json_object_get(o, "capacity_requests_per_s")),
		       json_string_value(json_object_get(o, "capacity_bound")),
		       json_real_value(json_object_get(o,
				"capacity_requests_per_s_gpu")),
		       json_real_value(json_object_get(o, "kv_slots")),
		       json_real_value(json_object_get(o, "request_lifetime_s")),
		       json_real_value(json_object_get(o, "kv_hold_min_s")),
		       json_real_value(json_object_get(o,
				"kv_wait_onset_requests_per_s")),
		       json_real_value(json_object_get(o,
				"capacity_requests_per_s_kv")));
	printf("M/D/1 wait rho v / 2(1 - rho) at load 0.5, 0.8, 0.9: %.3f, %.3f, "
	       "%.3f ms\n", 1e3 * fm_md1_wait_s(0.5, v), 1e3 * fm_md1_wait_s(0.8, v),
	       1e3 * fm_md1_wait_s(0.9, v));
	json_decref(o);
}

static const char formulas_help[] =
	"usage: hybridspec formulas CONFIG [--set POINTER=VALUE]... [--json]\n"
	"       hybridspec formulas --check [--json]\n"
	"       hybridspec formulas --table\n"
	"\n"
	"CONFIG: the formulas of docs/formulas.md for the config's first group\n"
	"(at its mean lengths and RTT): E[A], Leviathan's improvement and its\n"
	"condition, T_sync, the paper's async bound, the async renewal model\n"
	"(docs/async-renewal.md), both balance points, the roofline and its ridge,\n"
	"capacity in tenants, M/D/1 waiting times.\n"
	"--check: runs the simulator in each formula's regime and prints predicted,\n"
	"simulated and relative error; exits 1 if an in-regime row is off by more\n"
	"than 1%.\n"
	"--table: async time per token against alpha, gamma and RTT: the paper's\n"
	"bound, the renewal model and the simulation (markdown).\n"
	"\nexit status: 0 done (--check: every in-regime row within 1%), 1 a row\n"
	"off by more, 2 bad usage or bad input\n";

int cli_formulas(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "table", no_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "set", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct opt_list sets = { 0 };
	bool check = false, tab = false, json = false;
	struct checks cs = { 0 };
	struct err e;
	struct cfg c;
	int ch, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			check = true;
			break;
		case 't':
			tab = true;
			break;
		case 'j':
			json = true;
			break;
		case 's':
			opt_list_add(&sets, optarg);
			break;
		case 'h':
			fputs(formulas_help, stdout);
			opt_list_release(&sets);
			return CLI_OK;
		default:
			fputs(formulas_help, stderr);
			opt_list_release(&sets);
			return CLI_BAD_INPUT;
		}
	}
	if ((check || tab) ? optind != argc : optind != argc - 1) {
		fputs(formulas_help, stderr);
		opt_list_release(&sets);
		return CLI_BAD_INPUT;
	}
	if (tab) {
		opt_list_release(&sets);
		return print_table(&e) < 0 ? cli_fail("%s", e.msg) : CLI_OK;
	}
	if (check) {
		opt_list_release(&sets);
		if (run_checks(&cs, &e) < 0) {
			free(cs.v);
			return cli_fail("%s", e.msg);
		}
		rc = print_checks(&cs, json);
		free(cs.v);
		return rc;
	}
	if (cfg_load(&c, argv[optind], sets.v, sets.n, &e) < 0) {
		opt_list_release(&sets);
		return cli_fail("%s", e.msg);
	}
	print_config(&c, json);
	cfg_release(&c);
	opt_list_release(&sets);
	return CLI_OK;
}
