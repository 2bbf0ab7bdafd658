/* dfit.h: what limits a device's llama.cpp speed, fitted on the device
 * library's published CPU figures and measured by leave-one-device-out
 * ("calib devices --blind"; docs/calib.md).
 *
 * A figure of a model of P parameters and W weight bytes, run on t threads
 * of a device with a DRAM peak of B GB/s and an arithmetic peak of C G/s on
 * its d threads (the int8 dot-product peak for quantised weights where it
 * has one, else the FP32 FMA peak), C_t = C min(t, d) / d:
 *   decode tokens/s  = 1 / max(W / (beta B), 2 P / (kappa C_t))
 *   prefill tokens/s = eta C_t / (2 P)
 * beta is the share of the DRAM peak the CPU cluster streams, kappa and
 * eta the shares of its arithmetic peak a decode and a prefill reach. They
 * are fitted for a device class (phone, laptop, board, desktop) on the
 * class's other devices when at least DFIT_MIN_PEERS of them have figures
 * of the kind, else on every other device: least squares of the log
 * error (beta and kappa on a grid, eta the median). */
#ifndef HS_DFIT_H
#define HS_DFIT_H

#include <stdio.h>

#include "calib.h"

#define DFIT_MIN_PEERS 2

/* Every used figure of the library in dir predicted by the parameters
 * fitted without its device, to f, then the median and worst |error| of
 * decode and of prefill against the goals. 0, or -1 with a message. */
int dfit_blind_print(const char *dir, FILE *f, struct err *e);

#endif
