/* adapt.c: the estimates and the choice of adapt.h. The choice scans every
 * gamma of the bounds (at most 64) and keeps the first of the least cost,
 * so that equal costs resolve to the shorter block. */
#include "adapt.h"

#include "formula.h"

#include <math.h>

void adapt_observe(struct adapt_est *a, double weight, double judged,
		   double accepted, double latency_s)
{
	double w = a->judged_w == 0 ? 1 : weight;

	a->judged_w = (1 - w) * a->judged_w + w * judged;
	a->accepted_w = (1 - w) * a->accepted_w + w * accepted;
	a->latency_s = (1 - w) * a->latency_s + w * latency_s;
}

/* Seconds per token at gamma; *window gets async's window. */
static double cost_s(const struct cfg_protocol *pr, double alpha, int gamma,
		     double d, double lat_s, int32_t *window)
{
	int32_t w;

	if (!pr->caps.windowed)
		return (gamma * d + lat_s) / fm_expected_accepted(alpha, gamma);
	w = 1 + (int32_t)ceil(lat_s / (gamma * d));
	w = w < 2 ? 2 : w > pr->window ? pr->window : w;
	*window = w;
	return fm_async_renewal_s_per_token(alpha, gamma, w, d, lat_s);
}

void adapt_choose(const struct cfg_protocol *pr, const struct adapt_est *a,
		  double draft_s, int32_t *gamma, int32_t *window)
{
	double best = INFINITY, alpha;

	if (a->judged_w <= 0 || draft_s <= 0)
		return;
	/* alpha 1 would make every long block free */
	alpha = fmin(a->accepted_w / a->judged_w, 0.999);
	for (int g = pr->adapt.gamma_min; g <= pr->adapt.gamma_max; g++) {
		int32_t w = *window;
		double c = cost_s(pr, alpha, g, draft_s, a->latency_s, &w);

		if (c < best) {
			best = c;
			*gamma = g;
			*window = w;
		}
	}
}
