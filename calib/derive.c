/* derive.c: edge profiles for devices that cannot be run here, derived
 * from a profile measured here.
 *
 * A draft step at batch 1 streams every weight once: it is bound by memory,
 * so its times scale by (STREAM bandwidth here / the device's). A prefill
 * runs blocks of tokens: it is bound by arithmetic, so its times scale by
 * (peak FP32 FMA rate here / the device's). Both assume the project's
 * kernels reach the same fraction of each ceiling on the device as here.
 * The device constants are datasheet figures; a device's STREAM bandwidth
 * is taken as DEVICE_STREAM_FRACTION of its peak (an assumption, written
 * into every derived profile). */
#include "calib.h"

#include <stdio.h>
#include <string.h>

#define DEVICE_STREAM_FRACTION 0.75

struct device {
	const char *name;
	double peak_gbs;   /* DRAM peak, GB/s */
	double peak_gflops; /* FP32 FMA peak of the CPU cores, GFLOP/s */
	const char *memory_source, *compute_source;
};

static const struct device devices[] = {
	{ "snapdragon-8-gen3", 76.8, 387.8,
	  "Qualcomm Snapdragon 8 Gen 3 product brief: LPDDR5X at 4800 MHz, "
	  "64-bit bus = 76.8 GB/s",
	  "1x Cortex-X4 3.3 GHz x 32 FLOP/cycle (4 x 128-bit FMA pipes) + "
	  "3x Cortex-A720 3.15 GHz + 2x A720 2.96 GHz x 16 FLOP/cycle "
	  "(2 pipes) + 2x Cortex-A520 2.27 GHz x 8 FLOP/cycle: 387.8 GFLOP/s "
	  "(Qualcomm clocks; Arm Cortex software optimisation guides for "
	  "the pipes)" },
	{ "raspberry-pi-5", 17.07, 153.6,
	  "Raspberry Pi 5 product brief: LPDDR4X-4267, 32-bit bus = 17.07 GB/s",
	  "4x Cortex-A76 2.4 GHz x 16 FLOP/cycle (2 x 128-bit FMA pipes): "
	  "153.6 GFLOP/s" },
	{ "jetson-orin-nano", 68.0, 144.0,
	  "NVIDIA Jetson Orin Nano 8GB module datasheet: 128-bit LPDDR5, "
	  "68 GB/s",
	  "6x Cortex-A78AE 1.5 GHz x 16 FLOP/cycle (2 x 128-bit FMA pipes): "
	  "144 GFLOP/s (the CPU; its GPU is not used by these kernels)" },
	{ "laptop-m2-pro", 200.0, 896.0,
	  "Apple M2 Pro specifications: 200 GB/s unified memory bandwidth",
	  "8 performance cores 3.5 GHz x 32 FLOP/cycle (4 x 128-bit FMA "
	  "pipes): 896 GFLOP/s, efficiency cores not counted" },
};

static const char *const names[] = { "snapdragon-8-gen3", "raspberry-pi-5",
				     "jetson-orin-nano", "laptop-m2-pro",
				     NULL };

const char *const *calib_devices(void)
{
	return names;
}

/* a copy of {axis, seconds} with every time multiplied by r */
static json_t *scaled(const json_t *series, const char *axis, double r)
{
	json_t *t = json_array(), *src = json_object_get(series, "seconds");
	size_t i;
	json_t *v;

	json_array_foreach(src, i, v)
		json_array_append_new(t, json_real(json_number_value(v) * r));
	return json_pack("{s:O,s:o}", axis, json_object_get(series, axis),
			 "seconds", t);
}

json_t *calib_derive(const json_t *measured, const char *from_path,
		     const char *device, const json_t *prov, struct err *e)
{
	const struct device *d = NULL;
	const json_t *fit = json_object_get(measured, "fit");
	double here_gbs = json_number_value(json_object_get(measured,
							    "stream_gbs"));
	double here_gflops = json_number_value(json_object_get(measured,
							       "peak_gflops"));
	double bw, fl, dev_gbs;
	json_t *out;

	for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++)
		if (!strcmp(devices[i].name, device))
			d = &devices[i];
	if (!d)
		return err_set(e, "unknown device '%s' (known: snapdragon-8-gen3, "
			       "raspberry-pi-5, jetson-orin-nano, laptop-m2-pro)",
			       device), NULL;
	if (json_is_true(json_object_get(measured, "derived")))
		return err_set(e, "%s: is itself derived; derive from a measured "
			       "profile", from_path), NULL;
	dev_gbs = DEVICE_STREAM_FRACTION * d->peak_gbs;
	bw = here_gbs / dev_gbs;
	fl = here_gflops / d->peak_gflops;
	out = json_deep_copy(measured);
	json_object_set_new(out, "device", json_string(d->name));
	json_object_set_new(out, "derived", json_true());
	json_object_set_new(out, "stream_gbs", json_real(dev_gbs));
	json_object_set_new(out, "peak_gflops", json_real(d->peak_gflops));
	json_object_set_new(out, "draft",
			    scaled(json_object_get(measured, "draft"), "ctx", bw));
	json_object_set_new(out, "prefill",
			    scaled(json_object_get(measured, "prefill"), "tokens",
				   fl));
	json_object_set_new(out, "fit", json_pack(
		"{s:f,s:f,s:f,s:f,s:O,s:O}",
		"draft_base_s", bw * json_number_value(json_object_get(fit,
			"draft_base_s")),
		"draft_per_ctx_s", bw * json_number_value(json_object_get(fit,
			"draft_per_ctx_s")),
		"prefill_base_s", fl * json_number_value(json_object_get(fit,
			"prefill_base_s")),
		"prefill_per_token_s", fl * json_number_value(json_object_get(fit,
			"prefill_per_token_s")),
		"draft_max_rel_residual", json_object_get(fit,
			"draft_max_rel_residual"),
		"prefill_max_rel_residual", json_object_get(fit,
			"prefill_max_rel_residual")));
	json_object_set_new(out, "derivation", json_pack(
		"{s:s,s:s,s:f,s:f,s:f,s:f,s:f,s:s,s:s,s:s,s:O}",
		"from", from_path, "measured_device",
		json_string_value(json_object_get(measured, "device")),
		"bandwidth_ratio", bw, "compute_ratio", fl,
		"device_peak_gbs", d->peak_gbs,
		"device_stream_fraction", DEVICE_STREAM_FRACTION,
		"device_peak_gflops", d->peak_gflops,
		"memory_source", d->memory_source,
		"compute_source", d->compute_source,
		"assumption", "draft steps are bound by memory and scale with "
		"STREAM bandwidth; prefill is bound by arithmetic and scales with "
		"the FMA peak; the kernels reach the same fraction of each "
		"ceiling on the device as on the measured machine; the device's "
		"STREAM bandwidth is 0.75 of its DRAM peak",
		"measured_provenance", json_object_get(measured, "provenance")));
	json_object_set(out, "provenance", (json_t *)prov);
	return out;
}
