/* link.c: FIFO serialisation and in-order delivery.
 *
 * q[head .. head + n) (mod cap) are the messages in transit, oldest first;
 * their arrival times are non-decreasing (last_arrive_s is the newest). */
#include "link.h"

#include "err.h"
#include "mem.h"

#include <stdlib.h>
#include <string.h>

void link_init(struct link *l, double bps)
{
	*l = (struct link){ .bps = bps };
}

void link_release(struct link *l)
{
	link_ring_release(&l->q);
	*l = (struct link){ 0 };
}

double link_send(struct link *l, double now_s, double one_way_s, int losses,
		 double rto_s, struct link_msg m)
{
	double start = now_s > l->free_s ? now_s : l->free_s;
	double tx = 8.0 * m.bytes / l->bps;
	double arrive;

	HS_ASSERT(one_way_s >= 0 && losses >= 0);
	l->free_s = start + tx * (1 + losses);
	arrive = start + tx + losses * (rto_s + tx) + one_way_s;
	if (arrive < l->last_arrive_s)
		arrive = l->last_arrive_s;
	l->last_arrive_s = arrive;
	m.sent_s = now_s;
	m.arrive_s = arrive;
	link_ring_push(&l->q, m);
	l->bytes += m.bytes;
	l->msgs++;
	l->losses += (uint64_t)losses;
	return arrive;
}
