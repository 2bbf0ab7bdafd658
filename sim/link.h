/* link.h: one direction of a tenant's WAN link.
 *
 * A message of b bytes sent at time t starts serialising when the link is
 * free (FIFO), takes 8 b / bps seconds on the wire, and arrives one one-way
 * delay later; each loss adds a retransmission timeout and another
 * serialisation. Delivery is in order (as TCP gives it): a message never
 * arrives before the one sent before it. Messages in transit wait in a FIFO,
 * so an arrival event needs no payload: it takes the oldest. */
#ifndef HS_LINK_H
#define HS_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "ring.h"

struct link_msg {
	uint32_t kind;   /* the simulator's message kind */
	uint32_t epoch;
	int64_t a, b;    /* kind-specific fields */
	uint32_t bytes;
	double sent_s, arrive_s; /* set by link_send */
	void *data;      /* the sender's payload (deploy/wan.c), or NULL */
};

RING_DEFINE(link_ring, struct link_msg)

struct link {
	double bps;            /* bits per second */
	double free_s;         /* the serialiser is busy until then */
	double last_arrive_s;  /* arrival of the newest message */
	struct link_ring q;    /* messages in transit, oldest first */
	uint64_t bytes, msgs, losses; /* totals */
};

void link_init(struct link *l, double bps);
void link_release(struct link *l);

/* Sends m at now_s with the given one-way delay and number of losses.
 * Returns the arrival time (>= now_s). */
double link_send(struct link *l, double now_s, double one_way_s, int losses,
		 double rto_s, struct link_msg m);

/* Takes the oldest message in transit (there must be one). */
static inline struct link_msg link_pop(struct link *l)
{
	return link_ring_pop(&l->q);
}

/* The oldest message in transit, or NULL. Borrowed until the next call. */
static inline const struct link_msg *link_peek(const struct link *l)
{
	return l->q.n ? link_ring_at(&l->q, 0) : NULL;
}

/* Bytes of the whole wire message for a payload (what the simulator adds:
 * LINK_APP_HEADER_BYTES of framing, then 4 bytes a token id). */
#define LINK_APP_HEADER_BYTES 16
#define LINK_TOKEN_BYTES 4

#endif
