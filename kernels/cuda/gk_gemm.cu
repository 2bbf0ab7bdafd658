/* gk_gemm.cu: the plugin's table: the device, memory, timing, the W4A16
 * tensor-core GEMM and the cuBLAS FP16 baseline.
 *
 * The W4A16 kernel: a block of 4 warps owns GK_TILE_N = 64 output rows and
 * BM tokens (16, 32 or 64, by m) over a range of K tiles (split-K when the
 * rows alone give too few blocks to fill the GPU; the splits then add into
 * y, zeroed first). Per K tile of 128 columns each thread reads two 16-byte
 * chunks of codes (the tile is one contiguous 4 KB span, gk.h) and their
 * scale/bias pairs, one tile ahead of the arithmetic; dequantises them into
 * shared memory as FP16 (two weights per shift and mask: the nibble OR'd
 * into the exponent of 1024.0 gives 1024 + q, then (h - 1024) s + b in
 * half2, one rounding); the activations' tile goes beside it; each warp
 * multiplies its 16 rows by the tokens with 16x16x16 tensor-core MMAs,
 * accumulating in FP32. Invariant: every element of y is written by exactly
 * one block (or, split, added to by each split after the zeroing). */
#include "gk_cuda.h"

#include <mma.h>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

using namespace nvcuda;

struct gk_ctx gk_ctx;
static void *flush_buf; /* overwritten to evict the L2 before a timed run */
static size_t flush_bytes;

int gk_fail(char *msg, const char *what, const char *file, int line,
	    const char *error)
{
	/* the runtime keeps a failed call's error for the next
	 * cudaGetLastError, which would blame a later launch */
	(void)cudaGetLastError();
	snprintf(msg, GK_MSG, "%s: %s (%s:%d)", what, error, file, line);
	return -1;
}

#define LDS (GK_TILE_K + 8) /* halves per row of a shared tile: 16-byte
			       aligned rows, staggered banks */

/* two chunks of codes and their scale/bias pairs: one thread's share of a
 * K tile */
struct stage {
	uint4 q[2];
	uint32_t sb[2];
};

__device__ static void stage_load(struct stage *s, const uint4 *codes,
				  const uint32_t *sb, int gpt, int tid)
{
	for (int h = 0; h < 2; h++) {
		int c = tid + 128 * h; /* chunk: row c / 4, columns (c % 4) 32 */

		s->q[h] = __ldg(codes + c);
		s->sb[h] = __ldg(sb + (c / 4) * gpt + (c % 4) * 32 * gpt /
						      GK_TILE_K);
	}
}

/* w = (h - 1024) s + b for the 32 weights of each chunk, into ws */
__device__ static void stage_dequant(const struct stage *s, half *ws, int tid)
{
	const half2 k1024 = __half2half2(__ushort_as_half(0x6400));

	for (int h = 0; h < 2; h++) {
		int c = tid + 128 * h;
		half2 sb = *reinterpret_cast<const half2 *>(&s->sb[h]);
		half2 sc = __half2half2(__low2half(sb));
		half2 bi = __half2half2(__high2half(sb));
		const uint32_t *words = reinterpret_cast<const uint32_t *>(&s->q[h]);
		half *dst = ws + (c / 4) * LDS + (c % 4) * 32;

		for (int w = 0; w < 4; w++) {
			uint4 out;
			uint32_t *o = reinterpret_cast<uint32_t *>(&out);

			for (int i = 0; i < 4; i++) {
				uint32_t p = ((words[w] >> (4 * i)) & 0x000f000fu) |
					     0x64006400u;
				half2 v = __hfma2(__hsub2(*reinterpret_cast<half2 *>(&p),
							  k1024), sc, bi);

				o[i] = *reinterpret_cast<uint32_t *>(&v);
			}
			*reinterpret_cast<uint4 *>(dst + 8 * w) = out;
		}
	}
}

template <int BM>
__global__ void __launch_bounds__(128)
q4_gemm_kernel(const uint4 *codes, const uint32_t *sb, int gpt, int ktiles,
	       int kt_per_split, const half *x, int ldx, int m, float *y, int n,
	       int add)
{
	__shared__ __align__(128) half ws[GK_TILE_N * LDS];
	__shared__ __align__(128) half xs[BM * LDS];
	const int tid = threadIdx.x, warp = tid / 32, m0 = blockIdx.y * BM;
	const int kt0 = blockIdx.z * kt_per_split;
	const int kt1 = min(kt0 + kt_per_split, ktiles);
	const size_t tile0 = (size_t)blockIdx.x * ktiles;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[BM / 16];
	struct stage cur, next;

	for (int j = 0; j < BM / 16; j++)
		wmma::fill_fragment(acc[j], 0.0f);
	stage_load(&next, codes + (tile0 + kt0) * 256,
		   sb + (tile0 + kt0) * GK_TILE_N * gpt, gpt, tid);
	for (int kt = kt0; kt < kt1; kt++) {
		cur = next;
		if (kt + 1 < kt1) /* the next tile's loads fly during this one */
			stage_load(&next, codes + (tile0 + kt + 1) * 256,
				   sb + (tile0 + kt + 1) * GK_TILE_N * gpt, gpt,
				   tid);
		stage_dequant(&cur, ws, tid);
		for (int i = tid; i < BM * GK_TILE_K / 8; i += 128) {
			int r = i / (GK_TILE_K / 8), c8 = i % (GK_TILE_K / 8);
			uint4 v = make_uint4(0, 0, 0, 0);

			if (m0 + r < m)
				v = *reinterpret_cast<const uint4 *>(
					x + (size_t)(m0 + r) * ldx +
					(size_t)kt * GK_TILE_K + 8 * c8);
			*reinterpret_cast<uint4 *>(xs + r * LDS + 8 * c8) = v;
		}
		__syncthreads();
		for (int kk = 0; kk < GK_TILE_K; kk += 16) {
			wmma::fragment<wmma::matrix_a, 16, 16, 16, half,
				       wmma::row_major> a;
			wmma::load_matrix_sync(a, ws + warp * 16 * LDS + kk, LDS);
			for (int j = 0; j < BM / 16; j++) {
				wmma::fragment<wmma::matrix_b, 16, 16, 16, half,
					       wmma::col_major> b;
				wmma::load_matrix_sync(b, xs + j * 16 * LDS + kk,
						       LDS);
				wmma::mma_sync(acc[j], a, b, acc[j]);
			}
		}
		__syncthreads();
	}
	/* out(row, token) through shared memory (ws is free now), then to y
	 * along rows, coalesced */
	float *cs = reinterpret_cast<float *>(ws);
	static_assert(GK_TILE_N * BM * sizeof(float) <= sizeof(ws),
		      "the output tile fits where the weight tile was");
	for (int j = 0; j < BM / 16; j++)
		wmma::store_matrix_sync(cs + j * 16 * GK_TILE_N + warp * 16,
					acc[j], GK_TILE_N, wmma::mem_col_major);
	__syncthreads();
	for (int i = tid; i < BM * GK_TILE_N; i += 128) {
		int t = m0 + i / GK_TILE_N, row = blockIdx.x * GK_TILE_N +
						  i % GK_TILE_N;

		if (t < m && row < n) {
			float *dst = y + (size_t)t * n + row;

			if (add)
				atomicAdd(dst, cs[i]);
			else
				*dst = cs[i];
		}
	}
}

/* The small-batch path (m <= GK_GEMV_MAX): no tensor cores and no shared
 * tile. A block of 4 warps owns a row tile (64 rows) over a range of K
 * tiles, warp w taking every 4th from the range's w-th and loading the next
 * one while it works on this one; in a K tile, lane l reads chunks
 * l + 32 i (i < 8: rows l / 4 + 8 i, columns 32 (l % 4) .. + 31), so the
 * warp's eight 16-byte loads a lane cover the tile's 4 KB at once. Two
 * weights at a time as in the tensor-core kernel (the nibbles OR'd into
 * 1024.0, then (h - 1024) s + b in half2, one rounding), multiplied by the
 * activations in half2 over the 8 weights of a word and added into FP32.
 * The 4 lanes of a row, then the 4 warps, are summed; splits add into y,
 * zeroed first. */
template <int M>
__global__ void __launch_bounds__(128)
q4_gemv_kernel(const uint4 *codes, const uint32_t *sb, int gpt, int ktiles,
	       int kt_per_split, const half *x, int ldx, float *y, int n,
	       int add)
{
	__shared__ float red[4][GK_TILE_N][M];
	const half2 k1024 = __half2half2(__ushort_as_half(0x6400));
	const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, j = lane % 4;
	const int kt0 = blockIdx.y * kt_per_split;
	const int kt1 = min(kt0 + kt_per_split, ktiles);
	const size_t tile0 = (size_t)blockIdx.x * ktiles;
	const size_t sb_lane = (size_t)(lane / 4) * gpt + j * 32 * gpt / GK_TILE_K;
	float acc[8][M];
	uint4 q[8], qn[8];
	uint32_t sbw[8], sbn[8];

#pragma unroll
	for (int i = 0; i < 8; i++)
#pragma unroll
		for (int t = 0; t < M; t++)
			acc[i][t] = 0.0f;
	if (kt0 + warp < kt1)
#pragma unroll
		for (int i = 0; i < 8; i++) {
			qn[i] = __ldg(codes + (tile0 + kt0 + warp) * 256 + lane +
				      32 * i);
			sbn[i] = __ldg(sb + (tile0 + kt0 + warp) * GK_TILE_N * gpt +
				       sb_lane + 8 * i * gpt);
		}
	for (int kt = kt0 + warp; kt < kt1; kt += 4) {
		const half *xt = x + (size_t)kt * GK_TILE_K + 32 * j;

#pragma unroll
		for (int i = 0; i < 8; i++) {
			q[i] = qn[i];
			sbw[i] = sbn[i];
		}
		if (kt + 4 < kt1) /* the next tile's loads fly during this one */
#pragma unroll
			for (int i = 0; i < 8; i++) {
				qn[i] = __ldg(codes + (tile0 + kt + 4) * 256 +
					      lane + 32 * i);
				sbn[i] = __ldg(sb + (tile0 + kt + 4) * GK_TILE_N *
						       gpt + sb_lane + 8 * i * gpt);
			}
#pragma unroll
		for (int w = 0; w < 4; w++) {
			uint4 xr[M];

#pragma unroll
			for (int t = 0; t < M; t++)
				xr[t] = __ldg(reinterpret_cast<const uint4 *>(
					xt + (size_t)t * ldx + 8 * w));
#pragma unroll
			for (int i = 0; i < 8; i++) {
				uint32_t word = (&q[i].x)[w];
				half2 sb2 = *reinterpret_cast<half2 *>(&sbw[i]);
				half2 sc = __half2half2(__low2half(sb2));
				half2 bi = __half2half2(__high2half(sb2));
				half2 part[M];

#pragma unroll
				for (int t = 0; t < M; t++)
					part[t] = __float2half2_rn(0.0f);
#pragma unroll
				for (int e = 0; e < 4; e++) {
					/* weights 8w + 2e and 8w + 2e + 1,
					 * in the columns of x's half2 e */
					uint32_t p = ((word >> (4 * e)) &
						      0x000f000fu) | 0x64006400u;
					half2 wv = __hfma2(__hsub2(
						*reinterpret_cast<half2 *>(&p),
						k1024), sc, bi);

#pragma unroll
					for (int t = 0; t < M; t++)
						part[t] = __hfma2(wv,
							reinterpret_cast<const half2 *>(
								&xr[t])[e], part[t]);
				}
#pragma unroll
				for (int t = 0; t < M; t++) {
					float2 f = __half22float2(part[t]);

					acc[i][t] += f.x + f.y;
				}
			}
		}
	}
#pragma unroll
	for (int i = 0; i < 8; i++)
#pragma unroll
		for (int t = 0; t < M; t++) {
			float v = acc[i][t];

			v += __shfl_xor_sync(0xffffffffu, v, 1);
			v += __shfl_xor_sync(0xffffffffu, v, 2);
			if (j == 0)
				red[warp][lane / 4 + 8 * i][t] = v;
		}
	__syncthreads();
	for (int idx = threadIdx.x; idx < GK_TILE_N * M; idx += 128) {
		int r = idx % GK_TILE_N, t = idx / GK_TILE_N;
		int row = blockIdx.x * GK_TILE_N + r;
		float v = red[0][r][t] + red[1][r][t] + red[2][r][t] +
			  red[3][r][t];

		if (row < n) {
			if (add)
				atomicAdd(y + (size_t)t * n + row, v);
			else
				y[(size_t)t * n + row] = v;
		}
	}
}

/* K tiles a split so that blocks x splits fill the GPU (four resident
 * blocks an SM), at least min_per a split */
static int k_per_split(int blocks, int ktiles, int min_per)
{
	int per = ktiles;

	if (blocks < 4 * gk_ctx.sms) {
		int want = (4 * gk_ctx.sms + blocks - 1) / blocks;

		per = (ktiles + std::min(want, ktiles) - 1) /
		      std::min(want, ktiles);
	}
	return std::min(ktiles, std::max(per, min_per));
}

int gk_q4_gemv(const struct gk_q4 *w, const uint16_t *x, int m, float *y,
	       char *msg)
{
	int rtiles = w->npad / GK_TILE_N, ktiles = w->kpad / GK_TILE_K;
	int per = k_per_split(rtiles, ktiles, 4), splits = (ktiles + per - 1) / per;
	int gpt = GK_TILE_K / w->group;
	const half *xh = reinterpret_cast<const half *>(x);
	const uint4 *codes = reinterpret_cast<const uint4 *>(w->codes);
	const uint32_t *sb = reinterpret_cast<const uint32_t *>(w->sb);
	dim3 grid(rtiles, splits);

	if (m < 1 || m > GK_GEMV_MAX) {
		char why[64];

		snprintf(why, sizeof(why), "m %d out of range 1 .. %d", m,
			 GK_GEMV_MAX);
		return gk_fail(msg, "q4_gemv", __FILE__, __LINE__, why);
	}
	if (splits > 1)
		CU(cudaMemsetAsync(y, 0, sizeof(float) * (size_t)m * w->n,
				   gk_ctx.stream));
	switch (m) {
	case 1:
		q4_gemv_kernel<1><<<grid, 128, 0, gk_ctx.stream>>>(
			codes, sb, gpt, ktiles, per, xh, w->kpad, y, w->n,
			splits > 1);
		break;
	case 2:
		q4_gemv_kernel<2><<<grid, 128, 0, gk_ctx.stream>>>(
			codes, sb, gpt, ktiles, per, xh, w->kpad, y, w->n,
			splits > 1);
		break;
	case 3:
		q4_gemv_kernel<3><<<grid, 128, 0, gk_ctx.stream>>>(
			codes, sb, gpt, ktiles, per, xh, w->kpad, y, w->n,
			splits > 1);
		break;
	default:
		q4_gemv_kernel<4><<<grid, 128, 0, gk_ctx.stream>>>(
			codes, sb, gpt, ktiles, per, xh, w->kpad, y, w->n,
			splits > 1);
		break;
	}
	CU(cudaGetLastError());
	return 0;
}

int gk_q4_gemm(const struct gk_q4 *w, const uint16_t *x, int m, float *y,
	       char *msg)
{
	int rtiles = w->npad / GK_TILE_N, ktiles = w->kpad / GK_TILE_K;
	int bm = m <= 16 ? 16 : m <= 32 ? 32 : 64, mtiles = (m + bm - 1) / bm;
	int blocks = rtiles * mtiles, per, splits, gpt;
	const half *xh = reinterpret_cast<const half *>(x);
	const uint4 *codes = reinterpret_cast<const uint4 *>(w->codes);
	const uint32_t *sb = reinterpret_cast<const uint32_t *>(w->sb);

	if (m < 1 || mtiles > 65535)
		return gk_fail(msg, "q4_gemm", __FILE__, __LINE__,
			       "m out of range 1 .. 4194240");
	per = k_per_split(blocks, ktiles, 1);
	splits = (ktiles + per - 1) / per;
	gpt = GK_TILE_K / w->group;
	if (splits > 1)
		CU(cudaMemsetAsync(y, 0, sizeof(float) * (size_t)m * w->n,
				   gk_ctx.stream));
	dim3 grid(rtiles, mtiles, splits);
	switch (bm) {
	case 16:
		q4_gemm_kernel<16><<<grid, 128, 0, gk_ctx.stream>>>(
			codes, sb, gpt, ktiles, per, xh, w->kpad, m, y, w->n,
			splits > 1);
		break;
	case 32:
		q4_gemm_kernel<32><<<grid, 128, 0, gk_ctx.stream>>>(
			codes, sb, gpt, ktiles, per, xh, w->kpad, m, y, w->n,
			splits > 1);
		break;
	default:
		q4_gemm_kernel<64><<<grid, 128, 0, gk_ctx.stream>>>(
			codes, sb, gpt, ktiles, per, xh, w->kpad, m, y, w->n,
			splits > 1);
		break;
	}
	CU(cudaGetLastError());
	return 0;
}

/* y^T (n x m, column-major: y row-major m x n) = W (k x n column-major, op
 * T: W row-major n x k) times x^T (k x m column-major, ldx) */
int gk_f16_gemm(const uint16_t *w, int n, int k, const uint16_t *x, int ldx,
		int m, float *yf32, uint16_t *yf16, char *msg)
{
	const float one = 1.0f, zero = 0.0f;

	CUBLAS(cublasGemmEx(gk_ctx.blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k,
			    &one, w, CUDA_R_16F, k, x, CUDA_R_16F, ldx, &zero,
			    yf32 ? (void *)yf32 : (void *)yf16,
			    yf32 ? CUDA_R_32F : CUDA_R_16F, n,
			    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	return 0;
}

static void dev_close(void)
{
	if (gk_ctx.stream)
		cudaStreamSynchronize(gk_ctx.stream);
	cudaFree(flush_buf);
	if (gk_ctx.blas)
		cublasDestroy(gk_ctx.blas);
	if (gk_ctx.stream)
		cudaStreamDestroy(gk_ctx.stream);
	memset(&gk_ctx, 0, sizeof(gk_ctx));
	flush_buf = NULL;
}

static int dev_init(struct gk_device *d, char *msg)
{
	cudaDeviceProp p;
	int count = 0, rt = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	char why[128];

	if (e == cudaErrorInsufficientDriver) {
		cudaRuntimeGetVersion(&rt);
		snprintf(why, sizeof(why), "no NVIDIA driver, or one older than "
			 "this build's CUDA runtime %d.%d", rt / 1000,
			 rt % 1000 / 10);
		return gk_fail(msg, "cudaGetDeviceCount", __FILE__, __LINE__,
			       why);
	}
	if (e == cudaErrorNoDevice)
		return gk_fail(msg, "cudaGetDeviceCount", __FILE__, __LINE__,
			       "no NVIDIA GPU");
	CU(e);
	if (count < 1)
		return gk_fail(msg, "cudaGetDeviceCount", __FILE__, __LINE__,
			       "no device");
	CU(cudaSetDevice(0));
	CU(cudaGetDeviceProperties(&p, 0));
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", p.name);
	d->sms = p.multiProcessorCount;
	d->cc_major = p.major;
	d->cc_minor = p.minor;
	d->mem_bytes = p.totalGlobalMem;
	d->l2_bytes = (size_t)p.l2CacheSize;
	CU(cudaMemGetInfo(&d->free_bytes, &d->mem_bytes));
	if (p.major < 8)
		return gk_fail(msg, "device 0", __FILE__, __LINE__,
			       "compute capability below 8.0 (this build's "
			       "kernels are for sm_80 and sm_90)");
	gk_ctx.sms = d->sms;
	CU(cudaStreamCreateWithFlags(&gk_ctx.stream, cudaStreamNonBlocking));
	CUBLAS(cublasCreate(&gk_ctx.blas));
	CUBLAS(cublasSetStream(gk_ctx.blas, gk_ctx.stream));
	flush_bytes = 2 * d->l2_bytes + (1 << 20);
	CU(cudaMalloc(&flush_buf, flush_bytes));
	return 0;
}

/* dev_init, undone where it stopped */
static int dev_open(struct gk_device *d, char *msg)
{
	if (dev_init(d, msg) < 0) {
		dev_close();
		return -1;
	}
	return 0;
}

void *gk_alloc(size_t bytes, char *msg)
{
	void *p = NULL;
	cudaError_t e = cudaMalloc(&p, bytes);

	if (e != cudaSuccess) {
		char what[64];

		snprintf(what, sizeof(what), "cudaMalloc(%zu bytes)", bytes);
		gk_fail(msg, what, __FILE__, __LINE__, cudaGetErrorString(e));
		return NULL;
	}
	return p;
}

static void mem_free(void *p)
{
	cudaFree(p);
}

int gk_upload(void *dev, const void *host, size_t bytes, char *msg)
{
	CU(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice,
			   gk_ctx.stream));
	CU(cudaStreamSynchronize(gk_ctx.stream));
	return 0;
}

static int mem_download(void *host, const void *dev, size_t bytes, char *msg)
{
	CU(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost,
			   gk_ctx.stream));
	CU(cudaStreamSynchronize(gk_ctx.stream));
	return 0;
}

static int mem_poison(void *dev, size_t bytes, char *msg)
{
	CU(cudaMemsetAsync(dev, 0xff, bytes, gk_ctx.stream));
	return 0;
}

static int mem_copy(void *dst, const void *src, size_t bytes, char *msg)
{
	CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
			   gk_ctx.stream));
	return 0;
}

void gk_q4_dev_free(struct gk_q4 *dev)
{
	cudaFree(dev->codes);
	cudaFree(dev->sb);
	memset(dev, 0, sizeof(*dev));
}

static int q4_upload(const struct gk_q4 *host, struct gk_q4 *dev, char *msg)
{
	*dev = *host;
	dev->codes = NULL;
	dev->sb = NULL;
	if (!(dev->codes = (uint8_t *)gk_alloc(gk_q4_codes_bytes(host), msg)) ||
	    !(dev->sb = (uint16_t *)gk_alloc(gk_q4_sb_bytes(host), msg)) ||
	    gk_upload(dev->codes, host->codes, gk_q4_codes_bytes(host), msg) < 0 ||
	    gk_upload(dev->sb, host->sb, gk_q4_sb_bytes(host), msg) < 0) {
		gk_q4_dev_free(dev);
		return -1;
	}
	return 0;
}

/* events and runs; the events are destroyed on every path */
static int time_runs(int (*run)(void *, char *), void *arg, int warmup,
		     int reps, int flush, std::vector<float> &ms, char *msg)
{
	cudaEvent_t ev[2];

	CU(cudaEventCreate(&ev[0]));
	if (cudaEventCreate(&ev[1]) != cudaSuccess) {
		cudaEventDestroy(ev[0]);
		return gk_fail(msg, "cudaEventCreate", __FILE__, __LINE__,
			       "failed");
	}
	int rc = 0;
	for (int i = 0; i < warmup + reps && rc == 0; i++) {
		float t = 0;

		if (flush && cudaMemsetAsync(flush_buf, i & 0xff, flush_bytes,
					     gk_ctx.stream) != cudaSuccess)
			rc = gk_fail(msg, "cudaMemsetAsync(L2 flush)", __FILE__,
				     __LINE__, "failed");
		else if (cudaEventRecord(ev[0], gk_ctx.stream) != cudaSuccess ||
			 (rc = run(arg, msg)) < 0 ||
			 cudaEventRecord(ev[1], gk_ctx.stream) != cudaSuccess ||
			 cudaEventSynchronize(ev[1]) != cudaSuccess ||
			 cudaEventElapsedTime(&t, ev[0], ev[1]) != cudaSuccess) {
			if (rc == 0)
				rc = gk_fail(msg, "timing a run", __FILE__,
					     __LINE__, cudaGetErrorString(
						     cudaGetLastError()));
		} else if (i >= warmup) {
			ms.push_back(t);
		}
	}
	cudaEventDestroy(ev[0]);
	cudaEventDestroy(ev[1]);
	return rc;
}

static double median_s(int (*run)(void *, char *), void *arg, int warmup,
		       int reps, int flush, char *msg)
{
	std::vector<float> ms;

	if (reps < 1)
		return gk_fail(msg, "median_s", __FILE__, __LINE__,
			       "reps < 1");
	if (time_runs(run, arg, warmup, reps, flush, ms, msg) < 0)
		return -1;
	std::sort(ms.begin(), ms.end());
	return 1e-3 * (ms.size() % 2 ? ms[ms.size() / 2]
				     : 0.5 * (ms[ms.size() / 2 - 1] +
					      ms[ms.size() / 2]));
}

static const struct gk_api table = {
	GK_ABI,
	dev_open,
	dev_close,
	gk_alloc,
	mem_free,
	gk_upload,
	mem_download,
	mem_poison,
	mem_copy,
	q4_upload,
	gk_q4_dev_free,
	gk_q4_gemm,
	gk_q4_gemv,
	gk_f16_gemm,
	median_s,
	gk_model_new,
	gk_model_free,
	gk_model_bytes,
	gk_model_set,
	gk_model_forward,
};

extern "C" __attribute__((visibility("default"))) const struct gk_api *
gk_api_v1(int abi)
{
	return abi == GK_ABI ? &table : NULL;
}
