/* wan.c: the delay line: a sim/link.c link whose messages carry a copy of
 * the wire message (link_msg.data, owned by the line until popped). */
#include "wan.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "rng.h"
#include "mem.h"

void wan_line_init(struct wan_line *l, const struct cfg_wan *w, bool up,
		   uint64_t seed, uint64_t stream)
{
	*l = (struct wan_line){ .wan = w, .r = rng_new(seed, stream) };
	link_init(&l->link, up ? w->up_bps : w->down_bps);
}

void wan_line_release(struct wan_line *l)
{
	wan_line_clear(l);
	link_release(&l->link);
	rng_free(l->r);
	*l = (struct wan_line){ 0 };
}

double wan_line_push(struct wan_line *l, double now_s, const struct wire_msg *m)
{
	const struct cfg_wan *w = l->wan;
	double one_way = dist_sample(cfg_wan_rtt(w, now_s), l->r) / 2;
	int losses = 0;
	struct link_msg lm = {
		.kind = (uint32_t)m->type,
		.bytes = (uint32_t)(w->header_bytes + (long long)wire_size(m)),
		.data = xmalloc(sizeof(*m)),
	};

	memcpy(lm.data, m, sizeof(*m));
	if (w->loss > 0)
		losses = (int)gsl_ran_geometric(l->r, 1 - w->loss) - 1;
	return link_send(&l->link, cfg_wan_leave_s(w, now_s), one_way, losses,
			 w->rto_s, lm);
}

void wan_line_clear(struct wan_line *l)
{
	while (link_peek(&l->link))
		free(link_pop(&l->link).data);
}

struct wire_msg *wan_line_pop(struct wan_line *l, double now_s)
{
	const struct link_msg *m = link_peek(&l->link);

	if (!m || m->arrive_s > now_s)
		return NULL;
	return link_pop(&l->link).data;
}

double wan_line_next_s(const struct wan_line *l)
{
	const struct link_msg *m = link_peek(&l->link);

	return m ? m->arrive_s : INFINITY;
}
