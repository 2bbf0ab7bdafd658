/* fz_wl_trace.c: arrival traces (wl_trace_load, sim/workload.h). */
#include "fz.h"

#include "workload.h"

static int fz_wl_trace(const uint8_t *data, size_t size)
{
	struct wl_trace t;
	struct err e;

	if (wl_trace_load(&t, fz_put("arrivals-in.csv", data, size), "auto", 1, NULL,
			  &e) < 0)
		return -1;
	wl_trace_release(&t);
	return 0;
}

FZ_TARGET(fz_wl_trace)
