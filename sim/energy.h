/* energy.h: what serving costs in joules and dollars (docs/design.md,
 * section 8): the edge's radio, presets by name, each from its published
 * power model; the tail a radio stays connected after a transfer; the
 * joules of a GPU pool. (report.c turns them into a run's energy and
 * price.) */
#ifndef HS_ENERGY_H
#define HS_ENERGY_H

#include <stdint.h>

/* A radio's power model: a transfer of b bits at link rate r (bit/s) takes
 *   b x per_bit_j + active_w x b / r
 * (the marginal energy of the bits, and the connected radio's base power
 * while they go), up and down each their own; after a transfer the radio
 * stays connected tail_s at tail_w, and a transfer that finds it idle
 * first pays promo_j to connect. */
struct radio {
	char name[16];
	double up_j_per_bit, down_j_per_bit;
	double active_w;     /* base power while transferring */
	double tail_w, tail_s;
	double promo_j;      /* idle to connected: power x promotion time */
	const char *source;  /* static: the paper, or NULL (given) */
};

/* The named preset, or NULL; borrowed from a static table. */
const struct radio *radio_find(const char *name);
const char *const *radio_names(void); /* NULL-terminated */

/* Joules of one transfer of bytes at t_s over a link of rate_bps, up or
 * down, by a radio whose tail (connected state) lasts until *on_until_s:
 * the bits, and what the transfer adds to the union of the tails (a
 * promotion and a whole tail when it finds the radio idle, else the tail's
 * extension). Updates *on_until_s; transfers come in time order. */
static inline double radio_transfer_j(const struct radio *r,
				       double *on_until_s, double t_s,
				       uint32_t bytes, double rate_bps, int up)
{
	double bits = 8.0 * bytes, go_s = bits / rate_bps;
	double end = t_s + go_s + r->tail_s;
	/* the bits, and the active power in place of the tail's meanwhile */
	double j = bits * (up ? r->up_j_per_bit : r->down_j_per_bit) +
		   (r->active_w - r->tail_w) * go_s;

	if (t_s >= *on_until_s) /* idle, or never connected */
		j += r->promo_j + r->tail_w * (end - t_s);
	else if (end > *on_until_s)
		j += r->tail_w * (end - *on_until_s);
	if (end > *on_until_s)
		*on_until_s = end;
	return j;
}

/* Joules of gpus GPUs over span_s seconds, busy for busy_s GPU-seconds
 * of them: each draws idle_w, and max_w while busy
 * (P = idle_w + (max_w - idle_w) x busy fraction). */
double energy_gpu_j(double idle_w, double max_w, double gpus, double span_s,
		    double busy_s);

#endif
