/* cgpu.h: a GPU's verify table, measured on the GPU (kernels/gk.h's
 * CUDA plugin) or the roofline of a GPU preset: `calib gpu`. */
#ifndef HS_CGPU_H
#define HS_CGPU_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"
#include "gk.h"
#include "llama.h"

/* The roofline verify table of a GPU preset for a model shape (tokens x
 * context grid), marked "calibrated": false. */
json_t *calib_gpu_roofline(const char *gpu, const char *shape,
			   const json_t *prov, struct err *e);

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
	const char *out;         /* the table's file; NULL: a measured one's
				    default (calib_gpu), a roofline's none */
	bool overwrite;          /* an existing file replaced (jx_replaceable) */
};

/* Opens GPU 0, sets path to the table's file (o->out, else
 * results/calib/verify-GPU-MODEL-QUANT.json) and checks that it may be
 * written, builds the model there, and returns its verify table
 * (calibrated: measured forwards; caller frees); dev gets the device. prov
 * (borrowed) is copied into the table, with the device's name and the
 * weight format added. NULL with a message when there is no GPU, the file
 * may not be written, the model does not fit, or a CUDA call fails. */
#define CALIB_PATH_BYTES 512
json_t *calib_gpu(const struct calib_gpu_opts *o, const json_t *prov,
		  struct gk_device *dev, char path[CALIB_PATH_BYTES],
		  struct err *e);

/* `calib gpu`: with preset (a GPU preset's name), the roofline of it for
 * o->model (calib_gpu_roofline; stderr says so when o->progress), path
 * o->out or "" (none); else GPU 0 measured (calib_gpu, which sets path).
 * The file is checked before the work. The table (caller frees), or NULL
 * with a message that begins "calib gpu: ". */
json_t *calib_gpu_table(const struct calib_gpu_opts *o, const char *preset,
			const json_t *prov, char path[CALIB_PATH_BYTES],
			struct err *e);

#endif
