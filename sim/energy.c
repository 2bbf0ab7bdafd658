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

/* AT&T's ARO (Application Resource Optimizer), whose LTE defaults are the
 * model of J. Huang et al., "A Close Examination of Performance and Power
 * Characteristics of 4G LTE Networks", MobiSys 2012, by ARO's authors:
 * github.com/attdevsupport, ARO 4.1.1 src/com/att/aro/model/ProfileLTE.java
 * and ProfileWiFi.java (the same figures in VideoOptimizer's lte.conf). */
#define ARO "AT&T ARO default profile, "

static const struct radio radios[] = {
	/* name, up, down, active_w, tail_w, tail_s, promo_j, source */
	/* WiFi: 0.403 W active, held 0.25 s after the last packet; ARO gives
	 * no throughput term */
	{ "wifi", 0, 0, 0.403, 0.403, 0.25, 0,
	  ARO "ProfileWiFi: POWER_WIFI_ACTIVE 0.403 W, WIFI_TAIL_TIME 0.25 s" },
	/* LTE: alpha up 438.39, down 51.97 mW per Mbit/s over beta 1.2 W;
	 * promotion 1.21 W for 0.26 s; the tail is continuous reception
	 * (0.1 s) and long DRX (10 s) at the tail base power 1.06 W (DRX
	 * wake-ups, 1.68 W for 2 ms every 40 ms, left out: +3%) */
	{ "lte", MW_PER_MBPS(438.39), MW_PER_MBPS(51.97), 1.2, 1.06, 10.1,
	  1.21 * 0.26,
	  ARO "ProfileLTE: LTE_ALPHA_UP 438.39, LTE_ALPHA_DOWN 51.97 mW/Mbps, "
	  "LTE_BETA 1.2 W, P_PROMOTION 1.21 W x T_PROMOTION 0.26 s, P_TAIL "
	  "1.06 W over INACTIVITY_TIMER 0.1 s + T_LONG_DRX 10 s (the MobiSys "
	  "2012 model)" },
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

double energy_gpu_j(double idle_w, double max_w, double gpus, double span_s,
		    double busy_s)
{
	return idle_w * gpus * span_s + (max_w - idle_w) * busy_s;
}
