/* energy.c: the radio presets and the energy formulas.
 *
 * A tenant's radio is connected over the union of [start of a transfer,
 * its end + tail_s] over its transfers, at tail_w but while a transfer
 * goes (active_w and the bits' energy then). radio_transfer_j charges the
 * union as it grows, each transfer what it adds, so the sum over a run is
 * the union exactly; the only state is the union's end. Transfers that
 * overlap each pay their own active time. (radio_transfer_j is in the
 * header, inline: the simulator calls it for every message.) */
#include "energy.h"

#include <stddef.h>
#include <string.h>

/* alpha (mW per Mbit/s) to joules a bit: mW / (Mbit/s) = 1e-9 J/bit */
#define MW_PER_MBPS(a) ((a) * 1e-9)

#define HUANG "J. Huang et al., \"A Close Examination of Performance and " \
	      "Power Characteristics of 4G LTE Networks\", MobiSys 2012, " \
	      "Table 3 (HTC phone, measured with a power monitor)"

static const struct radio radios[] = {
	/* name, up, down, active_w, tail_w, tail_s, promo_j, source */
	{ "wifi", MW_PER_MBPS(283.17), MW_PER_MBPS(137.01), 0.13286,
	  0.1193, 0.2381, 0.1244 * 0.0791, HUANG ": WiFi" },
	{ "lte", MW_PER_MBPS(438.39), MW_PER_MBPS(51.97), 1.28804,
	  1.0600, 11.576, 1.2107 * 0.2601, HUANG ": LTE" },
	{ "3g", MW_PER_MBPS(868.98), MW_PER_MBPS(122.12), 0.81788,
	  0.8039, 8.0882, 0.6594 * 0.5821, HUANG ": 3G" },
};
#define N_RADIOS (sizeof(radios) / sizeof(radios[0]))

const struct radio *radio_find(const char *name)
{
	for (size_t i = 0; i < N_RADIOS; i++)
		if (!strcmp(radios[i].name, name))
			return &radios[i];
	return NULL;
}

const char *const *radio_names(void)
{
	static const char *names[N_RADIOS + 1];

	if (!names[0])
		for (size_t i = 0; i < N_RADIOS; i++)
			names[i] = radios[i].name;
	return names;
}

double gpu_energy_j(double idle_w, double max_w, double gpus, double span_s,
		    double busy_s)
{
	return idle_w * gpus * span_s + (max_w - idle_w) * busy_s;
}
