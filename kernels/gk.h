/* gk.h: the GPU kernels (kernels/cuda), reached through a plugin.
 *
 * The CUDA code is built, when nvcc is found, into a shared object beside
 * the binary (build/hybridspec-cuda.so) that links the CUDA runtime and
 * cuBLAS; the program opens it only when asked for GPU work, so the binary
 * runs, and the simulator works, on machines without CUDA. The plugin's one
 * symbol, GK_API_SYMBOL, gives a table of functions (struct gk_api). This
 * header is C and C++ (the plugin includes it); the plugin links nothing of
 * the library, so what it needs from the CPU side (the repacked weights,
 * the model's tensors) comes through these structs.
 *
 * The W4A16 layout on the GPU: the CPU format (q4.h) repacked once at load
 * into two planes in tiles of GK_TILE_N rows x GK_TILE_K columns, so that a
 * thread block's stage reads one contiguous span and a warp one whole line:
 *   - rows padded to npad (a multiple of GK_TILE_N) and columns to kpad (a
 *     multiple of GK_TILE_K) with code 0; the padded columns of the last
 *     real group keep its scale and bias (they meet zero activations), the
 *     padded groups and rows have scale 0 and bias 0;
 *   - codes: tile (rt, kt) = rows rt*64.., columns kt*128.. is 4096 bytes at
 *     ((rt * ktiles + kt) * 4096); in it, 16-byte chunk c = r * 4 + j holds
 *     row r's columns j*32 .. j*32+31 as four 32-bit little-endian words;
 *     word w holds the chunk's weights 8w .. 8w+7: weight 8w + 2i in bits
 *     4i .. 4i+3 and weight 8w + 2i + 1 in bits 16 + 4i .. 16 + 4i + 3
 *     (i = 0..3), so one shift and one mask give two neighbours as the low
 *     nibbles of a pair of halves;
 *   - scales and biases: FP16 pairs (scale, then bias) in the same tile
 *     order, GK_TILE_K / group of them per row of a tile: pair
 *     ((rt * ktiles + kt) * 64 + r) * gpt + g for group g of the tile.
 * A weight is w = s q + b, as on the CPU. Activations are FP16, m rows of
 * kpad columns (the columns past k zero); results FP32, m x n. */
#ifndef HS_GK_H
#define HS_GK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GK_TILE_N 64
#define GK_TILE_K 128
#define GK_GEMV_MAX 4 /* the largest m of q4_gemv */
#define GK_ABI 2
#define GK_API_SYMBOL "gk_api_v1"

/* W4A16 weights in the GPU layout; on the host (gk_q4_pack) or on the
 * device (gk_api.q4_upload): the same struct, pointers into that memory. */
struct gk_q4 {
	int n, k, group;    /* the matrix: n outputs x k inputs, groups of */
	int npad, kpad;     /* n and k rounded up to the tile */
	uint8_t *codes;     /* (npad / 64 x kpad / 128 tiles x 4096 bytes) owned */
	uint16_t *sb;       /* (npad x kpad / group pairs) owned, FP16 */
};

/* g's shape: n x k in groups of `group`, padded to whole tiles */
static inline void gk_q4_dims(struct gk_q4 *g, int n, int k, int group)
{
	g->n = n;
	g->k = k;
	g->group = group;
	g->npad = (n + GK_TILE_N - 1) / GK_TILE_N * GK_TILE_N;
	g->kpad = (k + GK_TILE_K - 1) / GK_TILE_K * GK_TILE_K;
}

/* Bytes of g's codes and of its scale/bias pairs. */
static inline size_t gk_q4_codes_bytes(const struct gk_q4 *g)
{
	return (size_t)g->npad * (size_t)g->kpad / 2;
}

static inline size_t gk_q4_sb_bytes(const struct gk_q4 *g)
{
	return (size_t)g->npad * (size_t)(g->kpad / g->group) * 4;
}

struct gk_device {
	char name[256];     /* "NVIDIA H200" */
	int sms, cc_major, cc_minor;
	size_t mem_bytes, free_bytes, l2_bytes;
};

/* One linear layer's weights handed to the plugin: FP16 (f16, n x k
 * row-major) or W4A16 (q4, host layout); the other NULL. Borrowed. */
struct gk_weights {
	const uint16_t *f16;
	const struct gk_q4 *q4;
};

/* A Llama model on the GPU (gk_model.cu): FP32 residual stream, FP16 KV
 * cache and GEMM inputs, linear layers FP16 through cuBLAS or W4A16
 * through the project's kernel. */
struct gk_model_desc {
	int dim, hidden, n_layers, n_heads, n_kv_heads, vocab, seq_len;
	float norm_eps, rope_theta;
	int rope_half;      /* 1: rotate dims (i, i + head/2); 0: pairs */
	int w4a16, group;   /* linear layers in W4A16 of that group, else FP16 */
	int cls_w4a16;      /* the classifier likewise */
	int max_tokens;     /* tokens in one forward, all sequences */
	int caches;         /* KV caches (sequences a forward can address) */
};

/* Which tensor gk_api.model_set replaces; the linear ones take a
 * gk_weights, the others FP32 (vocab x dim, or dim). */
enum gk_tensor {
	GK_EMB, GK_RMS_ATT, GK_RMS_FFN, GK_RMS_FINAL, GK_WQ, GK_WK, GK_WV,
	GK_WO, GK_W1, GK_W2, GK_W3, GK_CLS
};

/* One sequence of a forward: tokens[0..n) at positions pos.. of KV cache
 * `cache` (which holds positions 0..pos-1). */
struct gk_seq {
	int cache, n, pos;
	const int *tokens;  /* borrowed, host */
};

struct gk_model;

/* Every function that can fail returns -1 and writes a message that names
 * the CUDA or cuBLAS call and its error into msg (GK_MSG bytes); 0 on
 * success. Device pointers are plain pointers; work is queued in order on
 * the plugin's one stream and runs asynchronously unless said otherwise. */
#define GK_MSG 512
struct gk_api {
	int abi; /* GK_ABI */

	/* Picks device 0 and describes it; the first call of all. */
	int (*open)(struct gk_device *d, char *msg);
	void (*close)(void);

	/* Memory: alloc'd buffers are released by free; upload and download
	 * wait for the queue; poison fills with 0xff bytes (NaN in FP16 and
	 * FP32), copy is device to device. */
	void *(*alloc)(size_t bytes, char *msg);
	void (*free)(void *p);
	int (*upload)(void *dev, const void *host, size_t bytes, char *msg);
	int (*download)(void *host, const void *dev, size_t bytes, char *msg);
	int (*poison)(void *dev, size_t bytes, char *msg);
	int (*copy)(void *dst, const void *src, size_t bytes, char *msg);

	/* Copies host-layout W4A16 weights into *dev (device pointers; release
	 * with q4_free). */
	int (*q4_upload)(const struct gk_q4 *host, struct gk_q4 *dev, char *msg);
	void (*q4_free)(struct gk_q4 *dev);

	/* y (m x n, FP32) = x (m x w->kpad, FP16, device) times W^T, with the
	 * project's tensor-core W4A16 kernel; every element of y written. */
	int (*q4_gemm)(const struct gk_q4 *w, const uint16_t *x, int m,
		       float *y, char *msg);
	/* The same product for m <= GK_GEMV_MAX on CUDA cores, reading each
	 * weight tile straight into registers (no shared tile). */
	int (*q4_gemv)(const struct gk_q4 *w, const uint16_t *x, int m,
		       float *y, char *msg);
	/* The baseline: cuBLAS FP16 GEMM, FP32 accumulation, of w (n x k FP16
	 * row-major) with x (m rows of ldx >= k columns); yf32 (m x n FP32) or,
	 * when it is NULL, yf16 (m x n FP16). */
	int (*f16_gemm)(const uint16_t *w, int n, int k, const uint16_t *x,
			int ldx, int m, float *yf32, uint16_t *yf16, char *msg);

	/* Median seconds of run(arg) over reps timed runs after warmup untimed
	 * ones, by CUDA events around each run on the plugin's stream; with
	 * flush_l2, the L2 cache is overwritten before each run (not timed).
	 * run returns -1 with msg set to stop. -1 on error. */
	double (*median_s)(int (*run)(void *arg, char *msg), void *arg,
			   int warmup, int reps, int flush_l2, char *msg);

	/* The model: new allocates weights (filled with deterministic random
	 * values, never zeros), KV caches (random too) and scratch; model_set
	 * replaces one tensor from the host (layer 0 for those outside the
	 * layers; lin for the linear ones, f32 for the others); forward runs
	 * the sequences as one batch and, when logits is not NULL, waits and
	 * copies the total x vocab logits to it (two sequences of one forward
	 * on one cache write the same positions: for timing only). bytes:
	 * device memory the model holds. */
	struct gk_model *(*model_new)(const struct gk_model_desc *d, char *msg);
	void (*model_free)(struct gk_model *m);
	size_t (*model_bytes)(const struct gk_model *m);
	int (*model_set)(struct gk_model *m, enum gk_tensor t, int layer,
			 const struct gk_weights *lin, const float *f32,
			 char *msg);
	int (*model_forward)(struct gk_model *m, const struct gk_seq *seqs,
			     int nseq, float *logits, char *msg);
};

/* The plugin's entry: the table (static), or NULL if abi differs. */
typedef const struct gk_api *gk_api_fn(int abi);

#ifdef __cplusplus
}
#endif

/* The host side (kernels/gk.c), C only. */
#ifndef __CUDACC__
#include "err.h"
#include "q4.h"

/* Opens the plugin ($HYBRIDSPEC_CUDA, else hybridspec-cuda.so beside the
 * running binary) and device 0. NULL with a message that says which: the
 * build has no CUDA path, the plugin cannot be loaded, or no device.
 * Borrowed; the device stays open until gk_close. */
const struct gk_api *gk_open(struct gk_device *d, struct err *e);
/* Where gk_open looks for the plugin, into path (n bytes, GK_PATH_MAX
 * will do): 1 where a file is there, 0 where none is, -1 where the place
 * cannot be told (path then says why). Loads nothing. */
#define GK_PATH_MAX 4200
int gk_plugin_at(char *path, size_t n);
void gk_close(void);

/* Device buffers freed together: gk_bufs_alloc adds one (NULL with msg
 * set when the device has no room), gk_bufs_free frees them all. */
#define GK_BUFS 8
struct gk_bufs {
	const struct gk_api *api; /* borrowed */
	void *p[GK_BUFS];         /* owned, device */
	int n;
};
void *gk_bufs_alloc(struct gk_bufs *b, size_t bytes, char *msg);
void gk_bufs_free(struct gk_bufs *b);

/* The GPU layout of m (see above), on the host; gk_q4_release frees. */
void gk_q4_pack(struct gk_q4 *g, const struct q4_matrix *m);
void gk_q4_release(struct gk_q4 *g);
/* Weight (row, col) decoded from the GPU layout: s q + b, FP32. */
float gk_q4_weight(const struct gk_q4 *g, int row, int col);
#endif

#endif
