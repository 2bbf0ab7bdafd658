/* formula.c: each formula as a function; no state. The renewal model sums
 * the series over the index J of the first rejected block of an epoch
 * (geometric, P(J = j) = p^(j-1) (1 - p), p = alpha^gamma) until the tail is
 * below 1e-15. */
#include "formula.h"

#include "err.h"
#include "mem.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

double fm_expected_accepted(double alpha, int gamma)
{
	if (alpha >= 1)
		return gamma + 1;
	return (1 - pow(alpha, gamma + 1)) / (1 - alpha);
}

double fm_accepted_in_rejected(double alpha, int gamma)
{
	double num = 0, pk = 1;

	if (alpha >= 1)
		return 0;
	for (int k = 0; k < gamma; k++) {
		num += k * pk * (1 - alpha);
		pk *= alpha;
	}
	return num / (1 - pow(alpha, gamma));
}

double fm_leviathan_improvement(double alpha, int gamma, double c)
{
	return fm_expected_accepted(alpha, gamma) / (gamma * c + 1);
}

double fm_sync_s_per_token(double alpha, int gamma, double d, double tnet,
			   double v)
{
	return (gamma * d + tnet + v) / fm_expected_accepted(alpha, gamma);
}

double fm_paper_async_s_per_token(int gamma, double d, double tnet, double v)
{
	return fmax(gamma * d, tnet + v) / gamma;
}

double fm_window_s_per_token(int gamma, int window, double d, double r)
{
	if (window <= 0)
		return d;
	return fmax(d, (gamma * d + r) / ((double)window * gamma));
}

double fm_edge_s_per_token(double alpha, int gamma, int window, double d,
			   double tnet, double v)
{
	return window >= 2 ? fm_async_renewal_s_per_token(alpha, gamma, window,
							  d, tnet + v)
			   : fm_sync_s_per_token(alpha, gamma, d, tnet, v);
}

double fm_async_renewal_s_per_token(double alpha, int gamma, int window,
				    double d, double r)
{
	double p = pow(alpha, gamma), tail = 1, es = 0, ec;
	size_t cap = 64, n = 0;
	double *s;

	if (p >= 1)
		return fm_window_s_per_token(gamma, window, d, r);
	/* s[j-1]: when block j of an epoch is sent; a block may start once
	 * the previous one is sent and fewer than window are in flight */
	s = xmalloc(cap * sizeof(*s));
	for (size_t j = 1; tail > 1e-15; j++) {
		double start = n ? s[n - 1] : 0;

		if (window > 0 && j > (size_t)window)
			start = fmax(start, s[j - 1 - (size_t)window] + r);
		if (n == cap)
			s = xrealloc(s, (cap *= 2) * sizeof(*s));
		s[n++] = start + gamma * d;
		es += s[n - 1] * tail * (1 - p);
		tail *= p;
	}
	free(s);
	ec = gamma * (1 / (1 - p) - 1) + fm_accepted_in_rejected(alpha, gamma) + 1;
	return (es + r) / ec;
}

double fm_balance_two_stage(double tnet, double v)
{
	return tnet + v;
}

double fm_balance_paper(double tnet, double v)
{
	return v - tnet;
}

double fm_cloud_spec_s_per_token(double alpha, int gamma, double t_draft,
				 double t_verify)
{
	return (gamma * t_draft + t_verify) / fm_expected_accepted(alpha, gamma);
}

double fm_cloud_spec_capacity_ratio(int gamma, double t_draft,
				    double t_verify)
{
	return 1 + gamma * t_draft / t_verify;
}

double fm_md1_wait_s(double rho, double v)
{
	return rho * v / (2 * (1 - rho));
}

double fm_erlang_c(int c, double a)
{
	double b = 1; /* Erlang B by its recurrence, stable for large c */

	if (a >= c)
		return 1;
	for (int k = 1; k <= c; k++)
		b = a * b / (k + a * b);
	return c * b / (c - a * (1 - b));
}

double fm_mdc_wait_s(int c, double lambda, double service_s)
{
	double a = lambda * service_s;

	if (a >= c)
		return INFINITY;
	return fm_erlang_c(c, a) * service_s / (c - a) / 2;
}

/* tokens come down by time t */
static int come_down(double t, double first, double v)
{
	return t < first ? 0 : 1 + (int)floor((t - first) / v);
}

void fm_handover(double u, double pre, double v, double dn, double up,
		 double base, double per_token, int n_prompt, int n_out,
		 struct fm_handover *h)
{
	double t = base + per_token * n_prompt, first = u + pre + dn;
	int held = 0, backlog = INT_MAX, n;

	while ((n = come_down(t, first, v) - held) > 0 && n < backlog &&
	       held + n < n_out) {
		backlog = n;
		held += n;
		t += base + per_token * n;
	}
	h->ttft_s = first;
	h->ready_s = t;
	h->edge_holds = held;
	/* the token after the iteration in progress when READY arrives (the
	 * prefill's is 1) */
	h->last = t + up < u + pre ? 2 : 3 + (int)floor((t + up - u - pre) / v);
	if (h->last > n_out)
		h->last = n_out;
	h->last_s = first + (h->last - 1) * v;
}

double fm_sync_alpha1_s(int from, int n_out, int gamma, double d,
			double tnet, double v, double lead_s)
{
	double s = 0;

	for (int c = from; c < n_out; lead_s = 0) {
		int g = n_out - c < gamma ? n_out - c : gamma;

		s += lead_s + g * d + tnet + v;
		c += g;
		if (c < n_out)
			c++;
	}
	return s;
}
