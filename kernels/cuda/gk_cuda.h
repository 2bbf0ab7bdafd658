/* gk_cuda.h: what the plugin's two translation units share: the device's
 * one stream and cuBLAS handle, the checks around every CUDA and cuBLAS
 * call, and the GEMMs the model calls. Internal to kernels/cuda. */
#ifndef HS_GK_CUDA_H
#define HS_GK_CUDA_H

#include "gk.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

struct gk_ctx {
	cudaStream_t stream;
	cublasHandle_t blas;
	int sms;
};
extern struct gk_ctx gk_ctx;

/* Writes "what: error (file:line)" to msg; returns -1. */
int gk_fail(char *msg, const char *what, const char *file, int line,
	    const char *error);

/* The checks: a failing call returns -1 from the enclosing function, which
 * has a `char *msg`. */
#define CU(call)                                                              \
	do {                                                                  \
		cudaError_t e_ = (call);                                      \
		if (e_ != cudaSuccess)                                        \
			return gk_fail(msg, #call, __FILE__, __LINE__,        \
				       cudaGetErrorString(e_));               \
	} while (0)
#define CUBLAS(call)                                                          \
	do {                                                                  \
		cublasStatus_t s_ = (call);                                   \
		if (s_ != CUBLAS_STATUS_SUCCESS)                              \
			return gk_fail(msg, #call, __FILE__, __LINE__,        \
				       cublasGetStatusString(s_));            \
	} while (0)

/* gk_api.alloc, .upload, .q4_free, .q4_gemm and .f16_gemm, for the model */
void *gk_alloc(size_t bytes, char *msg);
int gk_upload(void *dev, const void *host, size_t bytes, char *msg);
void gk_q4_dev_free(struct gk_q4 *dev);
int gk_q4_gemv(const struct gk_q4 *w, const uint16_t *x, int m, float *y,
	       char *msg);
int gk_q4_gemm(const struct gk_q4 *w, const uint16_t *x, int m, float *y,
	       char *msg);
int gk_f16_gemm(const uint16_t *w, int n, int k, const uint16_t *x, int ldx,
		int m, float *yf32, uint16_t *yf16, char *msg);

/* The model's entries of the table (gk_model.cu). */
struct gk_model *gk_model_new(const struct gk_model_desc *d, char *msg);
void gk_model_free(struct gk_model *m);
size_t gk_model_bytes(const struct gk_model *m);
int gk_model_set(struct gk_model *m, enum gk_tensor t, int layer,
		 const struct gk_weights *lin, const float *f32, char *msg);
int gk_model_forward(struct gk_model *m, const struct gk_seq *seqs, int nseq,
		     float *logits, char *msg);

#endif
