/* hback.c: the hand-back's estimate and rule. A struct hb_est holds the
 * request's verdicts so far and, from the second, the weighted mean
 * verification of those after the first (a sample may be negative: the
 * RTT's spread). */
#include "hback.h"

#include "formula.h"

void hb_observe(struct hb_est *h, double round_trip_s, double rtt_s)
{
	double v = round_trip_s - rtt_s;

	if (++h->n > 1)
		h->verify_s = h->n > 2 ? h->verify_s + HB_WEIGHT * (v - h->verify_s)
				       : v;
}

bool hb_faster(const struct hb_est *h, double alpha, int gamma, int window,
	       double step_s, double rtt_s)
{
	double v = h->verify_s > 0 ? h->verify_s : 0;

	_Static_assert(HB_MIN_VERDICTS >= 2, "the first verdict is no sample");
	return h->n >= HB_MIN_VERDICTS &&
	       v < fm_edge_s_per_token(alpha, gamma, window, step_s, rtt_s, v);
}
