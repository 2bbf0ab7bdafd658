/* ccpu.h: measuring an edge device's costs, by running the project's
 * kernels on real (or synthetic, same-shape) weights: `calib cpu`.
 *
 * A calib_model is a model ready to time: loaded by name or path, or built
 * with synthetic weights of a named shape; its forward runs on a thread
 * pool of the size asked. Timings are medians of repeated runs: the machine
 * is shared, and a median ignores the runs another process disturbed.
 *
 * The calib layer's modules (ccpu, cgpu, derive, cprof) share the prefix
 * calib_, the command they serve. */
#ifndef HS_CCPU_H
#define HS_CCPU_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

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
	bool int8_decode;          /* and the draft steps and blocks of 1
				      to 3 tokens too */
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

#endif
