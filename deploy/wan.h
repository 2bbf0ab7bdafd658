/* wan.h: WAN emulation inside a process: a delay line for one direction of
 * a tenant's link, timed by the simulator's own link (sim/link.h): FIFO
 * serialisation at the link's bits per second, a one-way delay of half an
 * RTT draw, losses that cost a retransmission timeout, in-order delivery.
 * A message pushed at now_s is held until its arrival time and only then
 * written to the socket (uplink) or handled (downlink). Its size on the
 * link is its frame plus the config's header_bytes. */
#ifndef HS_WAN_H
#define HS_WAN_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>

#include "cfg.h"
#include "link.h"
#include "wire.h"

struct wan_line {
	struct link link;          /* messages in transit; data: wire_msg */
	const struct cfg_wan *wan; /* borrowed */
	gsl_rng *r;                /* owned: delay and loss draws */
};

/* The up (edge -> cloud) or down line of w for a tenant; draws come from
 * the stream (seed, stream). */
void wan_line_init(struct wan_line *l, const struct cfg_wan *w, bool up,
		   uint64_t seed, uint64_t stream);
void wan_line_release(struct wan_line *l);

/* Holds a copy of m, sent at now_s. Returns its arrival time. */
double wan_line_push(struct wan_line *l, double now_s, const struct wire_msg *m);
/* Throws away every message held (the connection they were for is gone). */
void wan_line_clear(struct wan_line *l);
/* The oldest message if it has arrived by now_s, else NULL. Caller frees. */
struct wire_msg *wan_line_pop(struct wan_line *l, double now_s);
/* The arrival time of the oldest message held; INFINITY when none. */
double wan_line_next_s(const struct wan_line *l);

#endif
