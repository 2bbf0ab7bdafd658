/* fz_prof_edge.c: the edge profile reader (prof_edge_load, sim/prof.h). */
#include "fz.h"

#include "prof.h"

static int fz_prof_edge(const uint8_t *data, size_t size)
{
	struct prof_edge p;
	struct err e;

	return prof_edge_load(fz_put("edge-in.json", data, size), &p, &e);
}

FZ_TARGET(fz_prof_edge)
