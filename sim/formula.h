/* formula.h: the paper's closed forms (docs/formulas.md) and the async renewal
 * model (docs/async-renewal.md). Times in seconds; d is the draft time of
 * one token, v the verification time of one block, tnet the network time of
 * one round trip (RTT plus serialisation of the block and the verdict),
 * R = tnet + v. */
#ifndef HS_FORMULA_H
#define HS_FORMULA_H

/* Expected tokens committed per verification, iid alpha, gamma drafts:
 * (1 - alpha^(gamma+1)) / (1 - alpha) (Leviathan et al.). */
double fm_expected_accepted(double alpha, int gamma);

/* Expected tokens accepted in a block of gamma that has a rejection. */
double fm_accepted_in_rejected(double alpha, int gamma);

/* Leviathan's walltime improvement E[A] / (gamma c + 1), c = t_draft /
 * t_target_step; it exceeds 1 for some gamma iff alpha > c. */
double fm_leviathan_improvement(double alpha, int gamma, double c);

/* Sync: seconds per committed token, (gamma d + tnet + v) / E[A]. */
double fm_sync_s_per_token(double alpha, int gamma, double d, double tnet,
			   double v);

/* The paper's async bound, rejections ignored: max(gamma d, tnet + v) per
 * block of gamma tokens. */
double fm_paper_async_s_per_token(int gamma, double d, double tnet, double v);

/* Async with every draft accepted, window w >= 2 blocks in flight:
 * max(d, (gamma d + R) / (w gamma)). */
double fm_window_s_per_token(int gamma, int window, double d, double r);

/* Async, iid alpha, window w >= 2 (w <= 0: unbounded), one tenant, no
 * queueing (v <= gamma d): expected seconds per committed token from the
 * renewal argument. alpha = 1 gives fm_window_s_per_token. */
double fm_async_renewal_s_per_token(double alpha, int gamma, int window,
				    double d, double r);

/* An edge's expected seconds a token under its protocol, as the handover
 * and hand-back policies reckon it: async's renewal model with window >=
 * 2 blocks in flight (an RTT of tnet + v), else sync's. */
double fm_edge_s_per_token(double alpha, int gamma, int window, double d,
			   double tnet, double v);

/* Balance points, as gamma d at which drafting and the rest are equal: the
 * two-stage pipeline's gamma d = tnet + v, and the paper's
 * T_verify = gamma d + tnet, i.e. gamma d = v - tnet. */
double fm_balance_two_stage(double tnet, double v);
double fm_balance_paper(double tnet, double v);

/* cloud_spec in lockstep (vLLM's speculative decoding): the n sequences of
 * an iteration advance together, gamma draft steps of the cloud's draft
 * model over all n (t_draft each), then one scoring pass of n (gamma + 1)
 * tokens (t_verify), which commits E[A] tokens a sequence:
 * (gamma t_draft + t_verify) / E[A] seconds a token, both costs those of
 * the iteration's n sequences (one request alone: of one). */
double fm_cloud_spec_s_per_token(double alpha, int gamma, double t_draft,
				 double t_verify);

/* How many more clients a saturated GPU carries when the edge drafts than
 * when it drafts itself (arXiv 2606.25091's 1 + gamma t_draft /
 * t_verify): an iteration of n rounds costs t_verify when the edges
 * drafted them and gamma t_draft + t_verify in lockstep, both at the
 * iteration's n sequences (n (gamma + 1) tokens scored), so exact with a
 * fixed cost an iteration too. */
double fm_cloud_spec_capacity_ratio(int gamma, double t_draft,
				    double t_verify);

/* A handover start (docs/protocols.md), one request alone, every time
 * fixed: the prompt of n_prompt tokens reaches the cloud at u after its
 * arrival; the cloud prefills it in pre and then decodes a token each v;
 * a token reaches the edge dn after its iteration ends, READY reaches the
 * cloud up after it leaves. The edge prefills the prompt, then catches up
 * on the tokens come down, each prefill base + per_token x tokens, while
 * each catch-up is shorter than the one before; READY then leaves, and
 * the cloud's last token is the one after the iteration in progress when
 * it arrives (a server reads its messages between iterations). Token k
 * (from 1) reaches the edge at u + pre + (k - 1) v + dn. */
struct fm_handover {
	double ttft_s;    /* the first token's arrival: u + pre + dn */
	double ready_s;   /* when READY leaves the edge */
	int last;         /* the cloud's last token; n_out: it made them all */
	int edge_holds;   /* output tokens in the edge's cache at READY */
	double last_s;    /* when that token reaches the edge */
};
void fm_handover(double u, double pre, double v, double dn, double up,
		 double base, double per_token, int n_prompt, int n_out,
		 struct fm_handover *h);

/* Sync at alpha 1 with the paper's edge (a bonus token fed free): seconds
 * to commit the tokens from position `from` to n_out, rounds of
 * min(gamma, left) drafts at d each plus tnet + v, each committing its
 * drafts and, unless the request is done, the bonus token; lead_s more in
 * the first round. */
double fm_sync_alpha1_s(int from, int n_out, int gamma, double d,
			double tnet, double v, double lead_s);

/* M/D/1 mean waiting time at load rho < 1 with service time v. */
double fm_md1_wait_s(double rho, double v);

/* Erlang C: the chance that a Poisson arrival finds all c servers busy, at
 * offered load a = lambda x service (Erlangs), a < c; 1 at a >= c. */
double fm_erlang_c(int c, double a);

/* M/D/c mean waiting time: Poisson arrivals at lambda, c servers, a fixed
 * service time. By Allen and Cunneen's approximation, half the M/M/c wait
 * C(c, a) service / (c - a) (the service's squared coefficient of variation
 * is 0); INFINITY at or past capacity. */
double fm_mdc_wait_s(int c, double lambda, double service_s);

#endif
