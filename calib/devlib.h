/* devlib.h: the device library (results/calib/devices: a file a device,
 * its datasheet constants and the llama.cpp figures published for it) and
 * where the committed profiles are (calib/devlib.c). */
#ifndef HS_DEVLIB_H
#define HS_DEVLIB_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"

/* The committed profiles: results/calib under the working directory where
 * it has one, else beside the folder of the running binary (build/), so
 * that a command finds them from any directory. Borrowed. */
const char *calib_results_dir(void);
/* The device library (docs/calib.md): a file a device,
 * DIR/NAME.json, with its datasheet constants, their sources, and the
 * llama.cpp figures published for it. DIR is $HYBRIDSPEC_DEVICES, else
 * calib_results_dir()/devices. Borrowed. */
const char *calib_device_dir(void);
/* The edge profile measured here that derivations take their shape from
 * by default, in calib_results_dir(). Borrowed. */
const char *calib_measured_profile(void);
/* The names in dir, sorted, NULL-terminated; free with
 * calib_device_names_free. */
char **calib_device_names(const char *dir);
void calib_device_names_free(char **names);

#define CALIB_MAX_FIGURES 32
#define CALIB_MAX_CORES 64
#define CALIB_CLASSES { "phone", "laptop", "board", "desktop", NULL }
/* The kernel families a figure's prefill ran on (calib_kernels, by index):
 * llama.cpp's generic vector dot products, or its repacked (interleaved)
 * GEMM kernels where the source says the weights were repacked
 * (Q4_0_4_4/4_8, AARCH64_REPACK) */
#define CALIB_NKERNELS 2
extern const char *const calib_kernels[CALIB_NKERNELS + 1]; /* NULL-ended */

/* A published figure: strings borrowed from the device's doc */
struct calib_figure {
	const char *model, *quant, *backend, *source;
	double params, weight_bytes, tokens_per_s;
	int threads;
	int kernel;   /* calib_kernels' index */
	bool prefill; /* pp, else tg (decode) */
	bool used;    /* a CPU figure the correction takes */
};

struct calib_device {
	json_t *doc;          /* owned: the file */
	char path[1024];
	const char *name;     /* borrowed from doc */
	const char *cpu;      /* borrowed: the CPU in words, or "" */
	int cls;              /* CALIB_CLASSES' index: phone, laptop, ... */
	int threads;
	double peak_gbs;      /* the DRAM's */
	double fp32_gflops, int8_gops;  /* int8 0: none */
	/* the FP32 GFLOP/s of each core its threads run on, fastest first
	 * (ncores == threads, summing to fp32_gflops); ncores 0: alike */
	int ncores;
	double core_gflops[CALIB_MAX_CORES];
	double power_busy_w, power_idle_w; /* 0: not known */
	int nfig;
	struct calib_figure fig[CALIB_MAX_FIGURES];
};

/* Reads a device file strictly (a bad field is named with its pointer; a
 * device without a used CPU figure must say why_not): name_or_path is a
 * path (it has a '/' or ".json") or a name in dir, whose unknown names
 * list the known ones. 0, or -1 with the message. */
int calib_device_load(struct calib_device *d, const char *name_or_path,
		      const char *dir, struct err *e);
void calib_device_release(struct calib_device *d);

/* calib_kernels' index of name, or -1 with a message naming them. */
int calib_kernel_find(const char *name, struct err *e);

#endif
