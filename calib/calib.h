/* calib.h: measuring the costs the simulator reads, by running the
 * project's kernels on real (or synthetic, same-shape) weights.
 *
 * A calib_model is a model ready to time: loaded by name or path, or built
 * with synthetic weights of a named shape; its forward runs on a thread
 * pool of the size asked. Timings are medians of repeated runs: the machine
 * is shared, and a median ignores the runs another process disturbed. */
#ifndef HS_CALIB_H
#define HS_CALIB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "llama.h"
#include "mload.h"

struct calib_model {
	struct llama m;
	struct tok t;        /* trained models only */
	bool synthetic;
	char name[64];       /* shape name, or the model's name */
	char path[1024];     /* trained: what was loaded */
	char quant[32];      /* canonical weight format */
	int threads;
	struct kpool *pool;  /* owned; NULL for one thread */
};

/* Loads model (a name or path) or, when model is NULL, builds synthetic
 * weights of shape (a name, a config.json or a GGUF file: shape_load; dense
 * models only) with seq_len positions. */
int calib_model_init(struct calib_model *c, const char *model,
		     const char *shape, const char *quant, int threads,
		     int seq_len, struct err *e);
void calib_model_release(struct calib_model *c);

/* Median seconds, over at least reps runs and at least min_s of runs, of:
 * one draft step at context ctx (forward of one token, then arg max over
 * the vocabulary, as generation does); a block forward of n tokens at
 * context ctx (verification); a prompt prefill of n tokens from position 0
 * in blocks of CALIB_PREFILL_BLOCK. st must hold ctx + n positions and
 * blocks of max(n, CALIB_PREFILL_BLOCK) tokens. */
#define CALIB_PREFILL_BLOCK 32
double calib_draft_s(struct calib_model *c, struct llama_state *st, int ctx,
		     int reps, double min_s);
double calib_block_s(struct calib_model *c, struct llama_state *st, int n,
		     int ctx, int reps, double min_s);
double calib_prefill_s(struct calib_model *c, struct llama_state *st, int n,
		       int reps, double min_s);

/* The median of reps draft steps at context ctx, each after a pause of
 * pause_s (spin: polling the clock, else asleep): what a step costs a
 * device that idled (its caches emptied by others, its clock lowered).
 * *upper_s (unless NULL): their upper quartile. */
double calib_draft_after_s(struct calib_model *c, struct llama_state *st,
			   int ctx, double pause_s, bool spin, int reps,
			   double *upper_s);

/* What `calib cpu` measures. ctx and prefill lists end with a 0. */
struct calib_cpu_opts {
	const int *ctx, *prefill;
	const int *verify_tokens; /* NULL: no verify table */
	int reps;
	double min_s;             /* per point */
	size_t stream_bytes;      /* STREAM arrays; 0: 4 x the last-level
				     cache (smaller: quick, less exact) */
	bool progress;            /* one line per point on stderr */
};


/* Measures c and returns the edge profile (docs/calib.md) with the fit;
 * *verify gets the verify table (the cost-table format of sim/cost.c) when
 * o->verify_tokens is set, else NULL. prov is the provenance (borrowed,
 * copied). */
json_t *calib_cpu(struct calib_model *c, const struct calib_cpu_opts *o,
		  const json_t *prov, json_t **verify);

/* The most values a list of contexts or token counts holds, its 0 included */
#define CALIB_MAX_POINTS 64

/* What `calib cpu` runs (calib_cpu_profile); strings borrowed. */
struct calib_cpu_job {
	const char *model, *shape; /* one of them, as calib_model_init's */
	const char *quant;
	int threads;
	bool int8_blocks;          /* W4A16 layers take blocks of 4 or more
				      tokens with int8 activations (where the
				      kernel set has the integer path) */
	const int *ctx, *prefill;  /* ascending, 0-terminated, at most
				      CALIB_MAX_POINTS with the 0 */
	int reps;                  /* at least, and at least 0.1 s, a point */
	bool verify;               /* the verify table too: block forwards of
				      1, 2, 4, 8 and 16 tokens */
	const char *device;        /* the profile's device; NULL: the host name */
	const struct kern *kern;   /* the kernel set (borrowed); NULL: the best
				      this CPU runs */
};

/* Loads the model or builds the shape's weights with room for the largest
 * context, keeps the contexts and prefills it holds (stderr names those
 * left out), measures it (calib_cpu, a line a point on stderr), sets the
 * profile's device and prints the fit on stderr. Returns the profile and
 * sets *verify as calib_cpu does (caller frees both); NULL with a message
 * when the model does not load or holds too few positions for two
 * contexts and a prefill. */
json_t *calib_cpu_profile(const struct calib_cpu_job *j, const json_t *prov,
			  json_t **verify, struct err *e);

/* A verify table (the cost-table format of sim/cost.c, "calibrated":
 * true) of fn(arg, tokens, ctx) seconds over tokens x ctxs (both lists end
 * with a 0, tokens ascending; contexts that leave no room for the largest
 * token count in seq_len are left out). The simulator takes a table
 * non-decreasing in tokens: a time below the one for fewer tokens at the
 * same context (noise between points of equal cost) is raised to it, and
 * the method says how many were. show: a line per point on stderr. */
typedef double calib_time_fn(void *arg, int tokens, int ctx);
json_t *calib_verify_table(const char *gpu, const char *model, int seq_len,
			   const int *tokens, const int *ctxs,
			   calib_time_fn *fn, void *arg, const char *method,
			   const json_t *prov, bool show);

/* Least squares t = a + b x with weights 1/t^2 (relative errors), a and b
 * kept >= 0 (a term that would be negative is dropped and the rest refit).
 * Returns the largest |fit - t| / t. */
double calib_fit(const double *x, const double *t, int n, double *a,
		 double *b);

/* The committed profiles: results/calib under the working directory where
 * it has one, else beside the folder of the running binary (build/), so
 * that a command finds them from any directory. Borrowed. */
const char *calib_results_dir(void);
/* The device library (calib/derive.c, docs/calib.md): a file a device,
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

/* The roofline verify table of a GPU preset for a model shape (tokens x
 * context grid), marked "calibrated": false. */
json_t *calib_gpu_roofline(const char *gpu, const char *shape,
			   const json_t *prov, struct err *e);

/* The GPU (calib/cgpu.c, through kernels/gk.h). */
#include "gk.h"

/* tokens a verify block holds in a GPU table's batch (gamma 4): a batch of
 * t tokens is ceil(t / 5) sequences, measured or in the roofline */
#define CALIB_GPU_BLOCK 5

/* A model of c's shape on the GPU, FP16 or W4A16 (of group) linear layers,
 * for forwards of up to max_tokens tokens over `caches` KV caches; with
 * weights (borrowed: FP32, FP16 or W4A16 layers) their values, else
 * random ones. Free with api->model_free. */
struct gk_model *calib_gpu_model(const struct gk_api *api,
				 const struct llama_config *c,
				 const struct llama *weights, bool w4a16,
				 int group, int max_tokens, int caches,
				 struct err *e);

struct calib_gpu_opts {
	const char *model;       /* a shape: random weights of it */
	const char *quant;       /* "f16" or "w4a16[-gG]" */
	const int *tokens, *ctx; /* each ends with a 0, ascending */
	int reps;
	bool progress;           /* a line a point on stderr */
};

/* Opens GPU 0, builds the model there, and returns its verify table
 * (calibrated: measured forwards; caller frees); dev gets the device. prov
 * (borrowed) is copied into the table, with the device's name and the
 * weight format added. NULL with a message when there is no GPU, the model
 * does not fit, or a CUDA call fails. */
json_t *calib_gpu(const struct calib_gpu_opts *o, const json_t *prov,
		  struct gk_device *dev, struct err *e);

/* `calib gpu`: with preset (a GPU preset's name), the roofline of it for
 * o->model (calib_gpu_roofline; stderr says so when o->progress), and
 * path ""; else GPU 0 measured (calib_gpu), and path gets the table's
 * default file, results/calib/verify-GPU-MODEL-QUANT.json. The table
 * (caller frees), or NULL with a message that begins "calib gpu: ". */
#define CALIB_PATH_BYTES 512
json_t *calib_gpu_table(const struct calib_gpu_opts *o, const char *preset,
			const json_t *prov, char path[CALIB_PATH_BYTES],
			struct err *e);

/* `calib import-profiles` (cprof.c, docs/gpu-costs.md): the operator
 * profiles in dir (Vidur's layout: compute/<gpu>/<org>/<model>/mlp.csv
 * and network/<topology>/all_reduce.csv, in dir or in dir/data/profiling)
 * turned into out/<GPU>-<MODEL>-tp<N>.json operator tables, one for each
 * profiled (GPU, built-in model, tp), and out/curves.json, the GPUs'
 * fitted efficiency curves with the derivation's held-out errors: each
 * profiled table derived from the curve fitted without its model, and
 * from the other GPUs' curves (a line each on stderr). */
struct calib_import {
	const char *dir, *out;
	const char *gpu;    /* only this preset, or NULL */
	const char *model;  /* tables of this built-in shape only, or NULL */
	const char *source; /* where the profiles come from (repository,
			       commit, licence), into every table */
	bool print_rows;    /* print the curves as sim/gcurve.c's rows */
};

/* 0, or -1 with e's message: a folder not in the layout, a file lacking a
 * column ("FILE: no column NAME"), a profile contradicting its model's
 * shape, nothing to import. */
int calib_import_profiles(const struct calib_import *o, const json_t *prov,
			  struct err *e);

#endif
