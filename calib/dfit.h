/* dfit.h: what limits a device's llama.cpp speed, fitted on the device
 * library's published CPU figures and measured by leave-one-device-out
 * ("calib devices"; docs/calib.md); and the model for one device, which
 * derived profiles take their level from (dfit_fit).
 *
 * A figure of a model of P parameters and W weight bytes, run on t threads
 * of a device with a DRAM peak of B GB/s, an FP32 FMA peak of F_t GFLOP/s
 * on those threads (their cores' sum where the device lists its cores,
 * else F t / threads) and an int8 dot-product peak I_t (the device's
 * int8_gops in the same ratio; F_t where it has none):
 *   decode tokens/s  = s_t / max(W / (beta B), 2 P / (kappa F_t))
 *   prefill tokens/s = eta_k I_t / (2 P)   (F_t for F16 and F32 weights)
 * s_t, the split share, is t times the slowest of the t cores over F_t (1
 * for alike cores): a decode step's operations are small, split evenly
 * among the threads (ggml falls back to one chunk a thread when it has
 * fewer than four a thread) and each ends at a barrier, so every thread
 * waits for the slowest core. A prefill's products are cut into many
 * small chunks the threads take as they finish, so it has none.
 * Decode's compute term takes the FP32 peak: of the variants tried (int8 or
 * FP32 peak, with or without the compute term, by class or pooled) it had
 * the least held-out error, so that choice saw the figures it is checked on,
 * as did the split share's choice of decode alone (docs/calib.md).
 * beta is the share of the DRAM peak the CPU cluster streams, kappa and
 * eta_k the shares of its arithmetic peak a decode and a prefill on kernel
 * family k (CALIB_KERNELS) reach. They are fitted for a device class
 * (phone, laptop, board, desktop) on the class's other devices when at
 * least DFIT_MIN_PEERS of them have figures of the kind, else on every
 * other device (a family without any figure takes the generic one's eta):
 * least squares of the log error (beta and kappa on a grid, eta the
 * median). */
#ifndef HS_DFIT_H
#define HS_DFIT_H

#include <stdbool.h>
#include <stdio.h>

#include "devlib.h"

#define DFIT_MIN_PEERS 2

/* How far the model lands on figures it was not fitted on: predicted over
 * published tokens/s less 1 (the time a token is (1 + error) times the
 * predicted one) */
struct dfit_band {
	int n;             /* held-out figures; 0: none to measure on */
	double lo, hi;     /* the lowest and highest error */
	double median_abs; /* the median |error| */
	char from[160];    /* which figures, in words */
};

/* The model for one device */
struct dfit {
	double beta, kappa;
	double eta[CALIB_NKERNELS];      /* by kernel family */
	bool decode_pool;                /* fitted on every class */
	const char *eta_from[CALIB_NKERNELS]; /* static: what eta_k came from */
	struct dfit_band band[2];        /* [0] decode, [1] prefill */
};

/* The model for device d, fitted on the library in dir with d's figures in
 * (d stands for the library's device of its name, or joins the library),
 * and its held-out band for each kind: d's own figures predicted by the
 * model fitted without d, where d has figures of the kind; else every
 * figure of its class's devices, each predicted without its device (of
 * every device where its class has none). A prefill's band is measured on
 * figures of kernel family kernel (CALIB_KERNELS) where the library has
 * any, else on every family's (its "from" says so). 0, or -1 with e (two
 * devices of one name; no used figure of a kind to fit on). */
int dfit_fit(struct dfit *m, const struct calib_device *d, const char *dir,
	     int kernel, struct err *e);

/* Tokens/s the model predicts on threads of d (0: all of them) for a
 * model of params weights weighing weight_bytes; prefill on int8 dot
 * products where int8 (else in FP32), in kernel family kernel. */
double dfit_decode_tps(const struct dfit *m, const struct calib_device *d,
		       double params, double weight_bytes, int threads);
double dfit_prefill_tps(const struct dfit *m, const struct calib_device *d,
			double params, int threads, bool int8, int kernel);
/* GB/s of weights a decode on threads of d streams where memory bounds it:
 * the split share of beta B. */
double dfit_stream_gbs(const struct dfit *m, const struct calib_device *d,
		       int threads);
/* Tokens/s the model predicts for published figure f of d. */
double dfit_predict(const struct dfit *m, const struct calib_device *d,
		    const struct calib_figure *f);

/* The library in dir, a line a device: its class, threads, the peaks the
 * model scales and how many of its decode and prefill figures the model
 * uses, of how many; to f. 0, or -1 with a message. */
int dfit_library_print(const char *dir, FILE *f, struct err *e);

/* Every used figure of the library in dir predicted by the parameters
 * fitted without its device, to f, then the median and worst |error| of
 * decode and of prefill against the goals, and of each class with
 * figures. 0, or -1 with a message. */
int dfit_blind_print(const char *dir, FILE *f, struct err *e);

#endif
