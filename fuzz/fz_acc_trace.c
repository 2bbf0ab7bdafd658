/* fz_acc_trace.c: acceptance bit traces (acc_trace_load, sim/accept.h). */
#include "fz.h"

#include "accept.h"

static int fz_acc_trace(const uint8_t *data, size_t size)
{
	struct acc_trace t;
	struct err e;

	if (acc_trace_load(&t, fz_put("trace.bits", data, size), &e) < 0)
		return -1;
	acc_trace_release(&t);
	return 0;
}

FZ_TARGET(fz_acc_trace)
