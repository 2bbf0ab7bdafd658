/* adapt.h: adaptive speculation (docs/adaptive.md), shared by the
 * simulator's tenants and the real deployment's edge: estimates of alpha
 * and of the verdict latency taken in verdict by verdict, and the next
 * block's gamma (and async window) that the model finds best for them. */
#ifndef HS_ADAPT_H
#define HS_ADAPT_H

#include <stdint.h>

#include "cfg.h"

/* Weighted means of the positions judged and the drafts accepted per
 * verdict (their ratio estimates alpha) and of the verdict latency (the
 * oldest block's send to its verdict); all 0 before the first verdict. */
struct adapt_est {
	double judged_w, accepted_w, latency_s;
};

/* Takes in a verdict that judged `judged` positions, accepted `accepted`
 * drafts, latency_s after its oldest block was sent; the newest weighs
 * weight (the first verdict is the estimate). */
void adapt_observe(struct adapt_est *a, double weight, double judged,
		   double accepted, double latency_s);

/* The gamma in the protocol's bounds that minimises the model's seconds
 * per token for drafts of draft_s seconds each: sync's (gamma d + L) /
 * E[A], async's renewal model with the window 1 + ceil(L / (gamma d)),
 * in [2, pr->window]. Leaves *gamma and *window as they are before the
 * first verdict. */
void adapt_choose(const struct cfg_protocol *pr, const struct adapt_est *a,
		  double draft_s, int32_t *gamma, int32_t *window);

#endif
