/* hback.h: the hand-back's estimate and rule (docs/protocols.md, "Hand
 * back"), the one the simulator's edges and the real edge share. An edge
 * estimates the cloud's verification from its verdicts: a verdict's round
 * trip (from its block's sending) less the mean RTT, averaged with a
 * weight of HB_WEIGHT on the newest; a request's first verdict is left
 * out (its block waited for the cloud's prefill of the prompt). A round
 * trip shorter than the mean RTT counts as the negative sample it is, so
 * that the RTT's spread averages out; the estimate is clamped at 0 only
 * when used. It also holds the sender's and receiver's software time and
 * any wait behind the edge's own blocks, so it errs high: a hand-back
 * needs the cloud to be faster by that much. "faster" hands a request
 * back from its HB_MIN_VERDICTS-th verdict on (two samples), when that
 * verification, taken as the time a token of a cloud that decodes the
 * request a token an iteration, is below the protocol's expected time a
 * token at it (formula.h). */
#ifndef HS_HBACK_H
#define HS_HBACK_H

#include <stdbool.h>

#define HB_WEIGHT 0.25
#define HB_MIN_VERDICTS 3

struct hb_est {
	int n;            /* verdicts seen in the request */
	double verify_s;  /* the estimate (n > 1), unclamped */
};

/* A verdict whose block went up round_trip_s ago, on a link of mean RTT
 * rtt_s. */
void hb_observe(struct hb_est *h, double round_trip_s, double rtt_s);

/* Whether "faster" hands back now: alpha the acceptance, gamma drafts a
 * block, window blocks in flight (1: sync), step_s a draft step. */
bool hb_faster(const struct hb_est *h, double alpha, int gamma, int window,
	       double step_s, double rtt_s);

#endif
