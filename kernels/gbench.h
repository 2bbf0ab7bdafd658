/* gbench.h: the GPU benchmark: the W4A16 tensor-core GEMM against cuBLAS
 * FP16 on given GEMM shapes, beside the device's copy bandwidth and FP16
 * GEMM peak measured in the same run (kernels/gk.h opens the plugin). */
#ifndef HS_GBENCH_H
#define HS_GBENCH_H

#include <stdbool.h>

struct err;

/* One weight matrix of a model: n rows (outputs) by k columns (inputs). */
struct gbench_gemm {
	const char *model; /* a label for the rows (borrowed) */
	int n, k;
};

struct gbench_opts {
	const struct gbench_gemm *gemms; /* (n_gemms) borrowed */
	int n_gemms;
	int group; /* W4A16 group: 32, 64 or 128 */
	int reps;  /* timed runs a point (the median is reported) */
	bool quick; /* M = 1, 16, 256 only (else 1, 2, 4, ..., 256) */
	bool json;  /* one JSON object instead of a table */
};

/* Times every GEMM at each M on GPU 0 and prints a row a kernel and M to
 * stdout (progress on stderr). 0, or -1 with e's message (no GPU, a CUDA
 * error and the shape it met). */
int gbench_run(const struct gbench_opts *o, struct err *e);

#endif
