/* fsetting.c: the closed forms for a config's setting (fsetting.h).
 *
 * One JSON object holds every figure (formulas --json prints it as it
 * is); the text form is printed from it, with the few figures the object
 * does not hold (the mean context, the ridge at peak figures, the cloud's
 * draft step). */
#include "fsetting.h"

#include "cost.h"
#include "formula.h"
#include "jx.h"
#include "link.h"

#include <math.h>
#include <stdlib.h>

/* What the text form shows beside the object. */
struct extras {
	double ctx;	   /* the mean context of a draft step, tokens */
	double ridge_peak; /* the roofline's ridge at peak figures, tokens */
	double td;	   /* cloud_spec's draft step, s (0: none) */
};

static double num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* The cloud's prefill of a prompt of that many tokens alone: one
 * sequence, each token attending over those before it. */
static double prompt_prefill_s(const struct cost *cost, double prompt)
{
	return cost_iter_s(cost, &(struct cost_batch){ (long)prompt, 1, 0,
			   prompt * prompt / 2, 1 }, NULL, NULL);
}

/* Requests a second the cloud carries, of group g's protocol at its mean
 * lengths, into o. The GPU: one over the GPU time a request takes, its
 * prompt and gamma + 1 tokens a round at the target's full-batch rate
 * (cloud_spec's gamma draft steps and prompt at the draft's). The KV
 * cache: slots of prompt + output tokens (reserve), or of the prompt and
 * half the output (paged: what a request holds on average), each held
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
	const struct cfg_lengths len = cfg_mean_lengths(g);
	double prompt = len.prompt_tokens, out = len.output_tokens;
	double rounds = out / fm_expected_accepted(alpha, g->proto.gamma);
	/* GPU seconds a request: the target's tokens at its full-batch rate,
	 * and cloud_spec's draft steps and prompt at the draft's */
	double gpu_s = (prompt + (k->speculates || k->cloud_drafts
				  ? rounds * (g->proto.gamma + 1) : out)) /
		       cap_tokens_s +
		       (k->cloud_drafts ? (prompt + rounds * g->proto.gamma) /
					  cap_draft_tokens_s : 0);
	double cloud_prefill = prompt_prefill_s(cost, prompt);
	double hold = cloud_prefill + out * t_token + rtt;
	double life = hold + (k->uses_edge ? g->device.prefill_base_s +
			      g->device.prefill_per_token_s * prompt -
			      cloud_prefill : 0);
	/* reserve: a request's whole length a slot; paged: the tokens it
	 * holds on average, its prompt and half its output (which grows from
	 * none to all while it holds its blocks) */
	double held = c->cloud.kv_policy == KV_PAGED ? prompt + out / 2
						      : prompt + out;
	double slots = floor((double)c->cloud.kv_capacity_tokens / held);
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

/* A step of a draft model over n sequences at context ctx, a token each. */
static double draft_step_s(const struct cost *dc, long n, double ctx)
{
	return cost_iter_s(dc, &(struct cost_batch){ n, n, ctx * (double)n,
						     ctx * (double)n, n },
			   NULL, NULL);
}

/* The target scoring gamma drafts and its own next token of n sequences
 * at context ctx. */
static double scoring_s(const struct cost *c, long n, int gamma, double ctx)
{
	long tok = n * (gamma + 1);

	return cost_iter_s(c, &(struct cost_batch){ tok, n, ctx * (double)n,
						    (double)tok * ctx, tok },
			   NULL, NULL);
}

/* What a handover start would do for one request of group g alone
 * (fm_handover): the cloud's prefill of the mean prompt and a token each
 * step, half the mean RTT each way; the edge's prefills at its device's
 * rate. Its TTFT, the cloud's last token, and the time a token before
 * (the cloud's step) and after (the protocol's, after_s). */
static json_t *handover(const struct cfg_group *g, const struct cost *cost,
			double step, double rtt, double after_s)
{
	const struct cfg_lengths len = cfg_mean_lengths(g);
	double prompt = len.prompt_tokens;
	int out = (int)lround(len.output_tokens);
	struct fm_handover h;

	fm_handover(rtt / 2, prompt_prefill_s(cost, prompt), step, rtt / 2, rtt / 2,
		    g->device.prefill_base_s, g->device.prefill_per_token_s,
		    (int)lround(prompt), out, &h);
	return json_pack("{s:s,s:f,s:i,s:i,s:f,s:f,s:f}", "policy",
			 cfg_handover_names[g->proto.handover], "ttft_s",
			 h.ttft_s, "last_token", h.last, "edge_holds",
			 h.edge_holds, "ready_s", h.ready_s,
			 "t_before_s_per_token", step,
			 "t_after_s_per_token", after_s);
}

/* The formulas for group 0 of a config, at its mean lengths, and what
 * the text form prints beside them. */
static json_t *setting(const struct cfg *c, struct extras *x)
{
	const struct cfg_group *g = &c->groups[0];
	const struct cfg_protocol *p = &g->proto;
	const struct cfg_lengths len = cfg_mean_lengths(g);
	struct cost cost;
	double alpha, ctx, d, rtt, tnet, v, step, bw, fl, ridge, cap, demand;
	double td = 0, cap_draft = 0;
	int gamma = p->gamma;
	json_t *o, *roof = json_array();

	alpha = acc_alpha(&g->accept, &g->acc_trace);
	cost_init(&cost, &c->cloud);
	ctx = len.prompt_tokens + len.output_tokens / 2;
	d = g->device.draft_base_s + g->device.draft_per_ctx_s * ctx;
	rtt = dist_mean(&g->wan.rtt_s);
	tnet = rtt + 8.0 * (g->wan.header_bytes + LINK_APP_HEADER_BYTES +
			    LINK_TOKEN_BYTES * gamma) / g->wan.up_bps +
	       8.0 * (g->wan.header_bytes + LINK_APP_HEADER_BYTES +
		      2 * LINK_TOKEN_BYTES) / g->wan.down_bps;
	v = cost_iter_s(&cost, &(struct cost_batch){ gamma + 1, 1, ctx,
						     (gamma + 1) * ctx, gamma + 1 },
			NULL, NULL);
	step = cost_iter_s(&cost, &(struct cost_batch){ 1, 1, ctx, ctx, 1 },
			   NULL, NULL);
	/* the efficiencies of what prices the cost: an operator table's at
	 * one token and at its largest batch, or the roofline's */
	bw = (cost.by_ops ? cost.ops.curve.eta_bw : cost.eta_bw) *
	     cost.peak_bw_Bps;
	fl = (cost.by_ops ? cost.ops.curve.eta_flops[GCURVE_N - 1]
			  : cost.eta_flops) * cost.peak_flops;
	ridge = fl / bw * cost.bytes_per_weight / 2;
	for (long b = 1; b <= 4096; b *= 2) {
		double t = cost_iter_s(&cost, &(struct cost_batch){ b, 1, ctx,
								    b * ctx, b },
				       NULL, NULL);

		json_array_append_new(roof, json_pack("{s:I,s:f}", "tokens",
						      (json_int_t)b, "seconds", t));
	}
	{
		long bmax = c->cloud.max_batch_tokens;
		long packed = bmax / (gamma + 1) * (gamma + 1);
		double tb = cost_iter_s(&cost, &(struct cost_batch){
			packed, packed / (gamma + 1), ctx * (packed / (gamma + 1)),
			packed * ctx, packed }, NULL, NULL);

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
		"capacity_tenants_compute", cap / demand,
		"md1_wait_s", "rho_0.5", fm_md1_wait_s(0.5, v), "rho_0.8",
		fm_md1_wait_s(0.8, v), "rho_0.9", fm_md1_wait_s(0.9, v));
	if (cfg_proto_drafts(&p->caps)) {
		/* the group's draft model run in the cloud instead */
		struct cost dc;
		/* in lockstep: the group's tenants at once, and the
		 * sequences of a full batch (the budget's rounds, at most
		 * max_num_seqs) */
		long n = (long)fmin((double)g->count,
				    (double)c->cloud.max_num_seqs),
		     nseq = (long)fmin((double)(c->cloud.max_batch_tokens /
						(gamma + 1)),
				       (double)c->cloud.max_num_seqs);
		double tdn, tvn, tdf, tvf;

		cost_init_draft(&dc, &c->cloud, &p->draft);
		td = draft_step_s(&dc, 1, ctx);
		tdn = draft_step_s(&dc, n, ctx);
		tvn = scoring_s(&cost, n, gamma, ctx);
		tdf = draft_step_s(&dc, nseq, ctx);
		tvf = scoring_s(&cost, nseq, gamma, ctx);
		cap_draft = c->cloud.replicas * (double)nseq / tdf;
		json_object_set_new(o, "t_cloud_draft_s", json_real(td));
		json_object_set_new(o, "t_cloud_spec_s_per_token", json_real(
			fm_cloud_spec_s_per_token(alpha, gamma, td, v)));
		json_object_set_new(o, "lockstep_sequences", json_integer(n));
		json_object_set_new(o, "t_cloud_draft_lockstep_s", json_real(tdn));
		json_object_set_new(o, "t_scoring_lockstep_s", json_real(tvn));
		json_object_set_new(o, "t_cloud_spec_lockstep_s_per_token",
			json_real(fm_cloud_spec_s_per_token(alpha, gamma, tdn,
							    tvn)));
		json_object_set_new(o, "full_batch_sequences", json_integer(nseq));
		json_object_set_new(o, "cloud_spec_capacity_ratio", json_real(
			fm_cloud_spec_capacity_ratio(gamma, tdf, tvf)));
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
	/* a tenant holds a request's KV cache while it is served: the
	 * cache's slots bound the tenants as much as the compute does */
	json_object_set_new(o, "capacity_tenants", json_real(fmin(
		cap / demand, json_object_get(o, "kv_slots")
			? json_real_value(json_object_get(o, "kv_slots"))
			: INFINITY)));
	if (p->caps.hands_over)
		json_object_set_new(o, "handover", handover(g, &cost, step, rtt,
			json_real_value(json_object_get(o, p->window >= 2 ?
				"t_async_renewal_s_per_token" :
				"t_sync_s_per_token"))));
	*x = (struct extras){ .ctx = ctx, .td = td,
			      .ridge_peak = cost.peak_flops / cost.peak_bw_Bps *
					    cost.bytes_per_weight / 2 };
	return o;
}

json_t *fset_json(const struct cfg *c)
{
	struct extras x;

	return setting(c, &x);
}

void fset_print(const struct cfg *c, FILE *f)
{
	const struct cfg_group *g = &c->groups[0];
	const struct cfg_protocol *p = &g->proto;
	struct extras x;
	json_t *o = setting(c, &x), *roof = json_object_get(o, "roofline"), *h;
	double alpha = num(o, "alpha"), d = num(o, "t_draft_s");
	double v = num(o, "t_verify_s"), step = num(o, "t_target_step_s");
	double tnet = num(o, "t_network_s"), ctx = x.ctx, td = x.td;
	double cap = num(o, "capacity_verify_tokens_per_s");
	int gamma = p->gamma;

	fprintf(f, "setting: group \"%s\" (%s), alpha %.3f, gamma %d, W %d\n"
	       "  t_draft %.3f ms (mean context %.0f), t_verify %.3f ms "
	       "(gamma + 1 tokens), target step %.3f ms, network %.3f ms\n",
	       g->name, cfg_proto_names[p->kind], alpha, gamma, p->window,
	       1e3 * d, ctx, 1e3 * v, 1e3 * step, 1e3 * tnet);
	fprintf(f, "E[A] = (1 - a^(g+1)) / (1 - a)              %.4f tokens per "
	       "verification\n", fm_expected_accepted(alpha, gamma));
	fprintf(f, "Leviathan improvement E[A] / (g c + 1)      %.4f (c = %.3f; "
	       "alpha > c: %s)\n", fm_leviathan_improvement(alpha, gamma, d / step),
	       d / step, alpha > d / step ? "yes" : "no");
	fprintf(f, "T_sync = g t_draft + t_net + t_verify       %.3f ms a round, "
	       "%.3f ms a token\n", 1e3 * (gamma * d + tnet + v),
	       1e3 * fm_sync_s_per_token(alpha, gamma, d, tnet, v));
	fprintf(f, "T_async, paper: max(g t_draft, t_net + t_v) %.3f ms a token "
	       "(rejections ignored)\n",
	       1e3 * fm_paper_async_s_per_token(gamma, d, tnet, v));
	fprintf(f, "T_async, renewal model (W = %d)             %.3f ms a token\n",
	       p->window, 1e3 * json_real_value(json_object_get(o,
			"t_async_renewal_s_per_token")));
	fprintf(f, "T_async, renewal model (W unbounded)        %.3f ms a token\n",
	       1e3 * fm_async_renewal_s_per_token(alpha, gamma, 0, d, tnet + v));
	fprintf(f, "balance point, two-stage: g t_draft = t_net + t_verify = %.3f ms"
	       "; paper: g t_draft = t_verify - t_net = %.3f ms; here g t_draft "
	       "= %.3f ms\n", 1e3 * fm_balance_two_stage(tnet, v),
	       1e3 * fm_balance_paper(tnet, v), 1e3 * gamma * d);
	fprintf(f, "  (the simulator follows the two-stage form: formulas --check)\n");
	fprintf(f, "roofline: ridge at %.0f tokens a batch (%.0f with peak figures)\n",
	       num(o, "ridge_tokens"), x.ridge_peak);
	for (size_t i = 0; i < json_array_size(roof); i++) {
		json_t *r = json_array_get(roof, i);

		fprintf(f, "  %5lld tokens  %8.3f ms\n",
		       (long long)json_integer_value(json_object_get(r, "tokens")),
		       1e3 * json_real_value(json_object_get(r, "seconds")));
	}
	fprintf(f, "capacity: %.0f verify tokens/s (%lld replica%s, full "
	       "batches), about %.0f sync tenants", cap, c->cloud.replicas,
	       c->cloud.replicas == 1 ? "" : "s", num(o, "capacity_tenants"));
	if (num(o, "capacity_tenants") < num(o, "capacity_tenants_compute"))
		fprintf(f, " (the KV cache's slots, one request each; the "
		       "compute's %.0f)", num(o, "capacity_tenants_compute"));
	fputc('\n', f);
	if (td > 0) {
		fprintf(f, "cloud_spec (draft %s in the cloud, %.3f ms a step): "
		       "(g t_d + t_v) / E[A] = %.3f ms a token\n",
		       p->draft.model.name, 1e3 * td,
		       1e3 * fm_cloud_spec_s_per_token(alpha, gamma, td, v));
		fprintf(f, "  in lockstep, %lld sequences at once (the group's): "
		       "draft step %.3f ms, scoring %lld tokens %.3f ms: %.3f ms "
		       "a token\n",
		       (long long)json_integer_value(json_object_get(o,
				"lockstep_sequences")),
		       1e3 * num(o, "t_cloud_draft_lockstep_s"),
		       (long long)json_integer_value(json_object_get(o,
				"lockstep_sequences")) * (gamma + 1),
		       1e3 * num(o, "t_scoring_lockstep_s"),
		       1e3 * num(o, "t_cloud_spec_lockstep_s_per_token"));
		fprintf(f, "  edge drafting carries 1 + g t_d / t_v = %.3f times the "
		       "clients of cloud_spec on a saturated GPU (arXiv "
		       "2606.25091, at full batches of %lld sequences: "
		       "formulas --check)\n", num(o, "cloud_spec_capacity_ratio"),
		       (long long)json_integer_value(json_object_get(o,
				"full_batch_sequences")));
	}
	if (json_object_get(o, "capacity_requests_per_s"))
		fprintf(f, "requests: capacity %.3f a second (%s bound; the GPU's "
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
	if ((h = json_object_get(o, "handover"))) {
		int last = (int)json_integer_value(json_object_get(h, "last_token"));

		fprintf(f, "handover start (one request alone; this group's is "
			"\"%s\"): TTFT %.3f s (the cloud's), ",
			json_string_value(json_object_get(h, "policy")),
			num(h, "ttft_s"));
		if (last >= (int)lround(cfg_mean_lengths(&c->groups[0]).output_tokens))
			fprintf(f, "the cloud makes every token before the edge's "
				"cache catches up (READY at %.2f s)\n",
				num(h, "ready_s"));
		else
			fprintf(f, "the cloud's last token %d (the edge's cache "
				"holds %d at READY, %.2f s), %.3f ms a token "
				"before, %.3f ms after\n", last,
				(int)json_integer_value(json_object_get(h,
							"edge_holds")),
				num(h, "ready_s"), 1e3 * num(h, "t_before_s_per_token"),
				1e3 * num(h, "t_after_s_per_token"));
	}
	fprintf(f, "M/D/1 wait rho v / 2(1 - rho) at load 0.5, 0.8, 0.9: %.3f, %.3f, "
	       "%.3f ms\n", 1e3 * fm_md1_wait_s(0.5, v), 1e3 * fm_md1_wait_s(0.8, v),
	       1e3 * fm_md1_wait_s(0.9, v));
	json_decref(o);
}
