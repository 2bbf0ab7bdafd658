/* fcheck.c: the formulas' checks (fcheck.h).
 *
 * A check builds a config (JSON text) with a verification-cost table that
 * makes every iteration cost exactly v where the formula assumes a
 * constant, runs the simulator in-process and compares one figure of its
 * summary with the formula's. Its requests run long (tens of thousands of
 * tokens: the steady state), so each config states a context that holds
 * them. The list grows by doubling; its rows keep the order the checks
 * ran in. */
#define _XOPEN_SOURCE 700
#include "fcheck.h"

#include "cfg.h"
#include "cost.h"
#include "formula.h"
#include "jx.h"
#include "link.h"
#include "mem.h"
#include "report.h"
#include "sim.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
	if (cfg_parse(&c, doc, "the formulas check", NULL, 0, NULL, e) < 0)
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
 * block is rejected. Its prompt of prompt tokens it prefills at prefill_s
 * a token; handover: the policy, or NULL for none. */
static json_t *run_spec_with(const struct spec_case *k, int prompt,
			     double prefill_s, const char *handover,
			     struct err *e)
{
	char text[2048], hand[64] = "";

	if (handover)
		snprintf(hand, sizeof(hand), ", \"handover\": \"%s\"", handover);
	snprintf(text, sizeof(text),
		 "{\"seed\": 11, \"protocol\": {\"kind\": \"%s\", \"gamma\": %d,"
		 " \"window\": %d%s%s}, \"tenants\": [{\"name\": \"t\", \"count\": %d,"
		 " \"device\": {\"draft_base_s\": %.17g, \"prefill_per_token_s\":"
		 " %.17g, \"passes\": \"ideal\"}, \"workload\": {\"requests\": 1,"
		 " \"prompt_tokens\": %d, \"output_tokens\": %ld}, \"acceptance\":"
		 " {\"alpha\": %.17g}, \"wan\": {\"rtt_s\": %.17g, \"up_bps\": %g,"
		 " \"down_bps\": %g}}], \"cloud\": {\"context_tokens\": 1000000,"
		 " \"policy\": \"dedicated\", \"gpu\": %s}}", k->kind,
		 k->gamma, k->window, strcmp(k->kind, "cloud_spec") ? ""
		 : check_draft(k->d, 0), hand, k->tenants, k->d, prefill_s, prompt,
		 k->out_tokens, k->alpha, k->rtt, BPS, BPS, check_gpu(k->v, 0));
	return simulate(text, e);
}

/* run_spec_with prompts of 16 tokens prefilled at 10 us each, no
 * handover. */
static json_t *run_spec(const struct spec_case *k, struct err *e)
{
	return run_spec_with(k, 16, 1e-5, NULL, e);
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


static void add(struct fcheck_list *cs, const char *formula, bool in_regime,
		double predicted, double simulated, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void add(struct fcheck_list *cs, const char *formula, bool in_regime,
		double predicted, double simulated, const char *fmt, ...)
{
	va_list ap;
	struct fcheck *c;

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

double fcheck_rel_error(const struct fcheck *c)
{
	return fabs(c->simulated - c->predicted) / fabs(c->predicted);
}

/* Sync: E[A] and the time per token, deterministic, no queueing. */
static int check_sync(struct fcheck_list *cs, struct err *e)
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
static int check_leviathan(struct fcheck_list *cs, struct err *e)
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
static int check_async(struct fcheck_list *cs, struct err *e)
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
static int check_queueing(struct fcheck_list *cs, struct err *e)
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
			 " \"cloud\": {\"context_tokens\": 1000000,"
			 " \"max_batch_tokens\": 16, \"gpu\":"
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
		 " \"cloud\": {\"context_tokens\": 1000000,"
		 " \"max_batch_tokens\": 64, \"kv_capacity_tokens\":"
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
static int check_capacity(struct fcheck_list *cs, struct err *e)
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

/* cloud_spec under load: n tenants on one replica whose requests start
 * together, each iteration a lockstep round of all n (draft steps d0 + d1
 * n, scoring t0 + t1 n (gamma + 1)). */
static json_t *run_lockstep(int n, int gamma, double alpha, double t0,
			    double t1, double d0, double d1, struct err *e)
{
	char text[3072];

	snprintf(text, sizeof(text),
		 "{\"seed\": 13, \"protocol\": {\"kind\": \"cloud_spec\", "
		 "\"gamma\": %d%s}, \"tenants\": [{\"name\": \"t\", \"count\":"
		 " %d, \"workload\": {\"requests\": 1, \"prompt_tokens\": 16,"
		 " \"output_tokens\": 60000}, \"acceptance\": {\"alpha\": "
		 "%.17g}, \"wan\": {\"rtt_s\": 0.02, \"up_bps\": %g, "
		 "\"down_bps\": %g}}], \"cloud\": {\"context_tokens\": 1000000,"
		 " \"max_batch_tokens\": 4096, \"gpu\": %s}}", gamma,
		 check_draft(d0, d1), n, alpha, BPS, BPS, check_gpu(t0, t1));
	return simulate(text, e);
}

/* cloud_spec: the time per token of one request alone and of n in
 * lockstep, and the capacity against edge drafting, all with the costs of
 * the iteration's sequences. */
static int check_cloud_spec(struct fcheck_list *cs, struct err *e)
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
	for (int n = 8; n <= 32; n *= 4) {
		const int gamma = 4;
		const double t0 = 0.006, t1 = 20e-6, d0 = 0.0015, d1 = 10e-6;
		json_t *sum = run_lockstep(n, gamma, 0.8, t0, t1, d0, d1, e);

		if (!sum)
			return -1;
		add(cs, "cloud_spec lockstep", true,
		    fm_cloud_spec_s_per_token(0.8, gamma, d0 + d1 * n,
					      t0 + t1 * n * (gamma + 1)),
		    get(sum, "all", "itl_s", "mean"),
		    "%d requests in lockstep, alpha 0.80, gamma 4, t_d 1.5 ms + "
		    "10 us a sequence, t_v 6 ms + 20 us a token", n);
		json_decref(sum);
	}
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		const int gamma = 4, n = 64 / (gamma + 1);
		double edge = saturated("sync", gamma, caps[i].t0, caps[i].t1, 0,
					0, e);
		double own = edge < 0 ? -1 : saturated("cloud_spec", gamma,
						       caps[i].t0, caps[i].t1,
						       caps[i].d0, caps[i].d1, e);

		if (own < 0)
			return -1;
		/* rounds a second: gamma + 1 batch tokens each at both */
		add(cs, "cloud_spec capacity ratio", true,
		    fm_cloud_spec_capacity_ratio(gamma, caps[i].d0 + caps[i].d1 * n,
						 caps[i].t0 + caps[i].t1 * n *
								      (gamma + 1)),
		    edge / own,
		    "saturated GPU, gamma 4, %d sequences an iteration: t_v %.3g "
		    "+ %.3g B, t_d %.3g + %.3g B", n, caps[i].t0, caps[i].t1,
		    caps[i].d0, caps[i].d1);
	}
	return 0;
}

/* A handover start (fm_handover): one request, sync at alpha 1 after the
 * handover, a dedicated GPU whose iterations take v; the first token's
 * arrival, the cloud's last token and the mean ITL over the request. The
 * edge prefills 2 or 4 ms a token, the cloud makes one each 12.3 ms. */
static int check_handover(struct fcheck_list *cs, struct err *e)
{
	static const double per_token[] = { 0.002, 0.004 };
	const double rtt = 0.0517, v = 0.0123, d = 0.02;
	const int gamma = 4, prompt = 200, out = 400;

	for (int i = 0; i < 2; i++) {
		struct spec_case k = { "sync", 1, gamma, 1, 1, d, rtt, v, out };
		struct fm_handover h;
		json_t *sum;
		double end;

		if (!(sum = run_spec_with(&k, prompt, per_token[i], "always", e)))
			return -1;
		fm_handover(rtt / 2, v, v, rtt / 2, rtt / 2, 0, per_token[i],
			    prompt, out, &h);
		end = h.last_s + fm_sync_alpha1_s(h.last, out, gamma, d, rtt, v,
						   (h.last - h.edge_holds) *
						   per_token[i]);
		add(cs, "handover TTFT", true, h.ttft_s,
		    get(sum, "all", "ttft_s", "mean"), "sync, the edge prefills "
		    "%.0f ms a token, the cloud's iteration 12.3 ms, RTT 51.7 ms",
		    1e3 * per_token[i]);
		add(cs, "handover position", h.last < out, h.last,
		    get(sum, "all", "cloud_made_per_handover", NULL),
		    "the same: the cloud's last token");
		add(cs, "handover ITL", h.last < out,
		    (end - h.ttft_s) / (out - 1), get(sum, "all", "itl_s", "mean"),
		    "the same, sync at alpha 1 after it, gamma 4, d 20 ms");
		json_decref(sum);
	}
	return 0;
}

int fcheck_run(struct fcheck_list *cs, struct err *e)
{
	return check_sync(cs, e) < 0 || check_leviathan(cs, e) < 0 ||
	       check_async(cs, e) < 0 || check_queueing(cs, e) < 0 ||
	       check_capacity(cs, e) < 0 || check_cloud_spec(cs, e) < 0 ||
	       check_handover(cs, e) < 0 ? -1 : 0;
}

void fcheck_list_release(struct fcheck_list *l)
{
	free(l->v);
	*l = (struct fcheck_list){ 0 };
}

bool fcheck_passed(const struct fcheck_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].in_regime &&
		    !(fcheck_rel_error(&l->v[i]) <= FCHECK_MAX_REL_ERROR))
			return false;
	return true;
}

json_t *fcheck_json(const struct fcheck_list *l)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < l->n; i++) {
		const struct fcheck *c = &l->v[i];

		json_array_append_new(arr, json_pack(
			"{s:s,s:s,s:b,s:f,s:f,s:f}", "formula", c->formula,
			"regime", c->regime, "in_regime", c->in_regime,
			"predicted", c->predicted, "simulated", c->simulated,
			"rel_error", fcheck_rel_error(c)));
	}
	return json_pack("{s:o,s:b,s:f}", "checks", arr, "passed",
			 fcheck_passed(l), "max_rel_error", FCHECK_MAX_REL_ERROR);
}

void fcheck_print(const struct fcheck_list *l, FILE *f)
{
	fprintf(f, "%-26s %-9s %12s %12s %9s  %s\n", "formula", "in regime",
		"predicted", "simulated", "rel.err", "regime");
	for (size_t i = 0; i < l->n; i++) {
		const struct fcheck *c = &l->v[i];
		double r = fcheck_rel_error(c);

		fprintf(f, "%-26s %-9s %12.6g %12.6g %8.3f%%%s %s\n", c->formula,
			c->in_regime ? "yes" : "no", c->predicted, c->simulated,
			100 * r, c->in_regime && r > FCHECK_MAX_REL_ERROR ? "!" : " ",
			c->regime);
	}
	fprintf(f, "%s: every in-regime row within %.0f%%\n",
		fcheck_passed(l) ? "passed" : "FAILED", 100 * FCHECK_MAX_REL_ERROR);
}

/* Async time per token against alpha, gamma, RTT: the paper's bound, the
 * renewal model and the simulation, as a markdown table. */
int fcheck_async_table(FILE *f, struct err *e)
{
	static const double rtts[] = { 0.02, 0.08, 0.2 };
	static const int gammas[] = { 2, 4, 8 };
	static const double alphas[] = { 0.5, 0.7, 0.8, 0.9, 0.95, 1.0 };
	const double d = 0.025, v = 0.006;
	int rc = 0;

	fprintf(f, "| RTT ms | gamma | alpha | paper bound ms | renewal ms | "
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
				fprintf(f, "| %.0f | %d | %.2f | %.2f | %.2f | %.2f | "
				       "%+.1f%% | %+.2f%% |\n", 1e3 * c.rtt, c.gamma,
				       c.alpha, 1e3 * pb, 1e3 * rn, 1e3 * sim,
				       100 * (pb - sim) / sim, 100 * (rn - sim) / sim);
				fflush(f);
				json_decref(sum);
			}
		}
	}
	return rc;
}
