/* fz_prof_accept.c: the acceptance profile reader (prof_accept_load,
 * sim/prof.h), with a bit trace a.bits (alpha 0.75) beside it. */
#include "fz.h"

#include "prof.h"

static int fz_prof_accept(const uint8_t *data, size_t size)
{
	struct prof_accept p;
	struct err e;

	fz_put_text("a.bits", fz_bits);
	return prof_accept_load(fz_put("accept-in.json", data, size), &p, &e);
}

FZ_TARGET(fz_prof_accept)
