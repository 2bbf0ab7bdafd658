/* derive.h: edge profiles derived for the device library's devices from a
 * profile measured here: `calib derive` (calib/derive.c). */
#ifndef HS_DERIVE_H
#define HS_DERIVE_H

#include <jansson.h>
#include <stdio.h>

#include "devlib.h"
#include "err.h"

/* A device profile derived for d (derive.c): its level from the device
 * model fitted on the library in dir with d's figures (dfit.h), its
 * prefill on kernel family kernel (calib_kernels' index), its shape from
 * the measured profile; for model (a shape), or the measured profile's
 * model where NULL. NULL with a message for a profile that is itself
 * derived or lacks what the method needs. */
struct shape;
json_t *calib_derive(const json_t *measured, const char *from_path,
		     const struct calib_device *d, const struct shape *model,
		     int kernel, const char *dir, const json_t *prov,
		     struct err *e);

/* `calib derive`: the measured profile at profile_path (read strictly)
 * derived for device (a name in dir or a device file: calib_device_load)
 * and model (a shape's name or file: shape_load; NULL: the profile's),
 * prefilling on kernel family kernel (a name; NULL: generic). The derived
 * profile (caller frees), or NULL with a message. */
json_t *calib_derive_file(const char *profile_path, const char *device,
			  const char *model, const char *kernel,
			  const char *dir, const json_t *prov, struct err *e);
/* One line of a derived profile into f: its device and model, the rates
 * it predicts, each with its held-out band, and how far it extrapolates */
void calib_derive_say(const json_t *derived, FILE *f);

#endif
