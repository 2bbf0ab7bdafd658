/* gk_model.cu: a Llama forward on the GPU, to time verification the way a
 * server runs it: every linear layer once over all the batch's tokens (FP16
 * through cuBLAS, or the project's W4A16 kernel), each token attending over
 * its own sequence's KV cache.
 *
 * Data: the residual stream x is FP32 (max_tokens x dim); the inputs of the
 * linear layers (xb, hb) are FP16 with rows of kpad columns, the columns
 * past dim or hidden zero from allocation on (kernels write only the first
 * columns), as the W4A16 kernel reads whole 128-column tiles; q, k, v and
 * the layers' outputs are FP32. KV caches are FP16, (layer, cache, position,
 * kv_dim). A forward's rows are (token, cache, position) triples uploaded
 * with it. Attention: a block per (token, head), a warp per key position
 * for the scores, then a thread per head dimension for the weighted values;
 * not a flash-attention kernel (each token of a block reads its cache once
 * more). Weights start as deterministic random values (a hash of the index),
 * never zeros; model_set replaces them. */
#include "gk_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NLIN 7 /* wq wk wv wo w1 w2 w3 a layer */

struct lin {
	int n, k, w4a16; /* w4a16: q4 holds it, else f16 */
	uint16_t *f16;   /* (n x k) device, FP16 layers */
	struct gk_q4 q4; /* device, W4A16 layers */
};

struct gk_model {
	struct gk_model_desc d;
	int head, kv_dim, ldd, ldh; /* ldd, ldh: dim, hidden rounded to 128 */
	size_t bytes;
	float *emb, *rms_att, *rms_ffn, *rms_final; /* FP32 */
	struct lin *lin;                            /* n_layers x NLIN, cls */
	half *kc, *vc;   /* (layers x caches x seq_len x kv_dim) */
	float *x, *q, *k, *v, *o, *h1, *h3, *logits;
	half *xb, *hb;
	int *rows;       /* (max_tokens x 3) device */
	int *rows_host;  /* (max_tokens x 3) host, pinned */
	cudaEvent_t rows_read; /* the last upload of rows_host has run */
	size_t att_smem; /* bytes of scores a block of attention holds */
};

/* 64 random bits for index i of stream seed (splitmix64's finaliser) */
__device__ static uint64_t hash64(uint64_t seed, size_t i)
{
	uint64_t h = seed * 0x9e3779b97f4a7c15ull + i;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ h >> 33;
}

/* uniform in [-1, 1) */
__device__ static float unit(uint64_t seed, size_t i)
{
	return (float)(hash64(seed, i) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ static void fill_f32(float *p, size_t n, uint64_t seed, float base,
				float spread)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = base + spread * unit(seed, i);
}

__global__ static void fill_f16(half *p, size_t n, uint64_t seed, float spread)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = __float2half(spread * unit(seed, i));
}

/* random codes; scale pairs (s, -8 s), s in [0.5, 1.5) scale */
__global__ static void fill_q4(uint32_t *codes, size_t ncodes, uint32_t *sb,
			       size_t nsb, uint64_t seed, float scale)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	     i < ncodes || i < nsb; i += (size_t)gridDim.x * blockDim.x) {
		if (i < ncodes)
			codes[i] = (uint32_t)hash64(seed, i);
		if (i < nsb) {
			float s = scale * (1.0f + 0.5f * unit(seed + 1, i));
			half2 p = __floats2half2_rn(s, -8.0f * s);

			sb[i] = *reinterpret_cast<uint32_t *>(&p);
		}
	}
}

static dim3 fill_grid(size_t n)
{
	size_t b = (n + 255) / 256;

	return dim3((unsigned)(b < 4096 ? (b ? b : 1) : 4096));
}

__global__ static void embed(const float *emb, const int *rows, int dim,
			     float *x)
{
	const float *e = emb + (size_t)rows[3 * blockIdx.x] * dim;

	for (int i = threadIdx.x; i < dim; i += blockDim.x)
		x[(size_t)blockIdx.x * dim + i] = e[i];
}

/* the block's sum of v (blockDim.x a multiple of 32, at most 1024) */
__device__ static float block_sum(float v, float *red)
{
	for (int o = 16; o; o /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	if (threadIdx.x % 32 == 0)
		red[threadIdx.x / 32] = v;
	__syncthreads();
	v = 0;
	for (int w = 0; w < (int)blockDim.x / 32; w++)
		v += red[w];
	__syncthreads();
	return v;
}

__device__ static float block_max(float v, float *red)
{
	for (int o = 16; o; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	if (threadIdx.x % 32 == 0)
		red[threadIdx.x / 32] = v;
	__syncthreads();
	v = -INFINITY;
	for (int w = 0; w < (int)blockDim.x / 32; w++)
		v = fmaxf(v, red[w]);
	__syncthreads();
	return v;
}

/* o (row of ld halves) = w * x / rms(x), a block per row */
__global__ static void rmsnorm(const float *x, const float *w, int dim,
			       float eps, half *o, int ld)
{
	__shared__ float red[32];
	const float *xr = x + (size_t)blockIdx.x * dim;
	float ss = 0;

	for (int i = threadIdx.x; i < dim; i += blockDim.x)
		ss += xr[i] * xr[i];
	float scale = rsqrtf(block_sum(ss, red) / dim + eps);
	for (int i = threadIdx.x; i < dim; i += blockDim.x)
		o[(size_t)blockIdx.x * ld + i] = __float2half(w[i] * (scale * xr[i]));
}

__device__ static void rotate(float *x, int i0, int i1, float a)
{
	float cs = cosf(a), sn = sinf(a), x0 = x[i0], x1 = x[i1];

	x[i0] = x0 * cs - x1 * sn;
	x[i1] = x0 * sn + x1 * cs;
}

/* RoPE on the row's q and k; k and v into the cache; a block per row */
__global__ static void rope_store(float *q, const float *k, const float *v,
				  const int *rows, struct gk_model_desc d,
				  int head, half *kc, half *vc)
{
	const int t = blockIdx.x, cache = rows[3 * t + 1], pos = rows[3 * t + 2];
	const int kv_dim = d.n_kv_heads * head, dim = d.dim;
	float *qr = q + (size_t)t * dim;
	size_t at = ((size_t)cache * d.seq_len + pos) * kv_dim;
	extern __shared__ float kr[]; /* kv_dim */

	for (int i = threadIdx.x; i < kv_dim; i += blockDim.x)
		kr[i] = k[(size_t)t * kv_dim + i];
	__syncthreads();
	for (int p = threadIdx.x; p < (dim + kv_dim) / 2; p += blockDim.x) {
		int onq = p < dim / 2, j = onq ? p : p - dim / 2;
		int h = j / (head / 2), i = j % (head / 2);
		int i0 = d.rope_half ? i : 2 * i, i1 = d.rope_half ? i + head / 2
								   : 2 * i + 1;
		float a = pos * powf(d.rope_theta, -2.0f * i / head);

		rotate(onq ? qr + h * head : kr + h * head, i0, i1, a);
	}
	__syncthreads();
	for (int i = threadIdx.x; i < kv_dim; i += blockDim.x) {
		kc[at + i] = __float2half(kr[i]);
		vc[at + i] = __float2half(v[(size_t)t * kv_dim + i]);
	}
}

/* out (row of ld halves, this head's part) = softmax(q k / sqrt(head)) v
 * over positions 0 .. pos of the row's cache; a block per (row, head) */
__global__ static void attention(const float *q, const int *rows,
				 struct gk_model_desc d, int head,
				 const half *kc, const half *vc, half *out,
				 int ld)
{
	extern __shared__ float sc[]; /* head values of q, then pos + 1 scores */
	__shared__ float red[32];
	const int t = blockIdx.x, h = blockIdx.y, lane = threadIdx.x % 32;
	const int warps = blockDim.x / 32, warp = threadIdx.x / 32;
	const int cache = rows[3 * t + 1], upto = rows[3 * t + 2];
	const int kv_dim = d.n_kv_heads * head;
	const int kvh = h / (d.n_heads / d.n_kv_heads);
	const size_t base = (size_t)cache * d.seq_len * kv_dim + (size_t)kvh * head;
	float *qs = sc, *s = sc + head, mx = -INFINITY, sum = 0;

	for (int i = threadIdx.x; i < head; i += blockDim.x)
		qs[i] = q[(size_t)t * d.dim + h * head + i];
	__syncthreads();
	for (int p = warp; p <= upto; p += warps) {
		const half *kp = kc + base + (size_t)p * kv_dim;
		float dot = 0;

		for (int i = lane; i < head; i += 32)
			dot += qs[i] * __half2float(kp[i]);
		for (int o = 16; o; o /= 2)
			dot += __shfl_xor_sync(0xffffffffu, dot, o);
		if (lane == 0)
			s[p] = dot * rsqrtf((float)head);
	}
	__syncthreads();
	for (int p = threadIdx.x; p <= upto; p += blockDim.x)
		mx = fmaxf(mx, s[p]);
	mx = block_max(mx, red);
	for (int p = threadIdx.x; p <= upto; p += blockDim.x) {
		s[p] = expf(s[p] - mx);
		sum += s[p];
	}
	sum = block_sum(sum, red);
	for (int i = threadIdx.x; i < head; i += blockDim.x) {
		float acc = 0;

		for (int p = 0; p <= upto; p++)
			acc += s[p] * __half2float(vc[base + (size_t)p * kv_dim + i]);
		out[(size_t)t * ld + h * head + i] = __float2half(acc / sum);
	}
}

__global__ static void add_rows(float *x, const float *o, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		x[i] += o[i];
}

/* hb (rows of ld halves) = silu(h1) h3 */
__global__ static void silu_mul(const float *h1, const float *h3, int hidden,
				half *hb, int ld)
{
	for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
		size_t at = (size_t)blockIdx.x * hidden + i;
		float a = h1[at];

		hb[(size_t)blockIdx.x * ld + i] =
			__float2half(a / (1.0f + expf(-a)) * h3[at]);
	}
}

/* gk_alloc that counts the model's bytes */
static void *grab(struct gk_model *m, size_t bytes, char *msg)
{
	void *p = gk_alloc(bytes, msg);

	if (p)
		m->bytes += bytes;
	return p;
}

static struct lin *lin_at(struct gk_model *m, enum gk_tensor t, int layer)
{
	if (t == GK_CLS)
		return &m->lin[m->d.n_layers * NLIN];
	return &m->lin[layer * NLIN + (t - GK_WQ)];
}

static int lin_alloc(struct gk_model *m, struct lin *l, int n, int k,
		     int w4a16, uint64_t seed, char *msg)
{
	l->n = n;
	l->k = k;
	l->w4a16 = w4a16;
	if (!w4a16) {
		size_t cnt = (size_t)n * k;

		if (!(l->f16 = (uint16_t *)grab(m, 2 * cnt, msg)))
			return -1;
		fill_f16<<<fill_grid(cnt), 256, 0, gk_ctx.stream>>>(
			(half *)l->f16, cnt, seed, 1.0f / sqrtf((float)k));
		CU(cudaGetLastError());
		return 0;
	}
	struct gk_q4 *q = &l->q4;
	gk_q4_dims(q, n, k, m->d.group);
	size_t ncodes = gk_q4_codes_bytes(q) / 4, nsb = gk_q4_sb_bytes(q) / 4;
	if (!(q->codes = (uint8_t *)grab(m, gk_q4_codes_bytes(q), msg)) ||
	    !(q->sb = (uint16_t *)grab(m, gk_q4_sb_bytes(q), msg)))
		return -1;
	fill_q4<<<fill_grid(ncodes > nsb ? ncodes : nsb), 256, 0,
		  gk_ctx.stream>>>((uint32_t *)q->codes, ncodes,
				   (uint32_t *)q->sb, nsb, seed,
				   0.25f / sqrtf((float)k));
	CU(cudaGetLastError());
	return 0;
}

static int f32_alloc(struct gk_model *m, float **p, size_t n, uint64_t seed,
		     float base, float spread, char *msg)
{
	if (!(*p = (float *)grab(m, 4 * n, msg)))
		return -1;
	fill_f32<<<fill_grid(n), 256, 0, gk_ctx.stream>>>(*p, n, seed, base,
							  spread);
	CU(cudaGetLastError());
	return 0;
}

static int model_alloc(struct gk_model *m, char *msg)
{
	const struct gk_model_desc *d = &m->d;
	size_t T = (size_t)d->max_tokens, L = (size_t)d->n_layers;
	size_t cache = L * d->caches * d->seq_len * m->kv_dim;
	uint64_t seed = 1;

	m->lin = (struct lin *)calloc(L * NLIN + 1, sizeof(struct lin));
	if (!m->lin)
		return gk_fail(msg, "calloc", __FILE__, __LINE__, "out of memory");
	/* pinned: the rows' upload is then asynchronous, inside a timed run */
	CU(cudaMallocHost(&m->rows_host, 3 * sizeof(int) * T));
	CU(cudaEventCreateWithFlags(&m->rows_read, cudaEventDisableTiming));
	if (f32_alloc(m, &m->emb, (size_t)d->vocab * d->dim, seed++, 0, 1, msg) ||
	    f32_alloc(m, &m->rms_att, L * d->dim, seed++, 1, 0.1f, msg) ||
	    f32_alloc(m, &m->rms_ffn, L * d->dim, seed++, 1, 0.1f, msg) ||
	    f32_alloc(m, &m->rms_final, d->dim, seed++, 1, 0.1f, msg))
		return -1;
	for (int l = 0; l < d->n_layers; l++)
		for (int j = 0; j < NLIN; j++) {
			/* wq wk wv wo w1 w2 w3: outputs x inputs */
			const int n[NLIN] = { d->dim, m->kv_dim, m->kv_dim,
				d->dim, d->hidden, d->dim, d->hidden };
			const int k[NLIN] = { d->dim, d->dim, d->dim, d->dim,
				d->dim, d->hidden, d->dim };

			if (lin_alloc(m, &m->lin[l * NLIN + j], n[j], k[j],
				      d->w4a16, seed++, msg) < 0)
				return -1;
		}
	if (lin_alloc(m, &m->lin[L * NLIN], d->vocab, d->dim, d->cls_w4a16,
		      seed++, msg) < 0 ||
	    !(m->kc = (half *)grab(m, 2 * cache, msg)) ||
	    !(m->vc = (half *)grab(m, 2 * cache, msg)))
		return -1;
	fill_f16<<<fill_grid(cache), 256, 0, gk_ctx.stream>>>(m->kc, cache,
							      seed++, 1.0f);
	fill_f16<<<fill_grid(cache), 256, 0, gk_ctx.stream>>>(m->vc, cache,
							      seed++, 1.0f);
	CU(cudaGetLastError());
	if (!(m->x = (float *)grab(m, 4 * T * d->dim, msg)) ||
	    !(m->q = (float *)grab(m, 4 * T * d->dim, msg)) ||
	    !(m->k = (float *)grab(m, 4 * T * m->kv_dim, msg)) ||
	    !(m->v = (float *)grab(m, 4 * T * m->kv_dim, msg)) ||
	    !(m->o = (float *)grab(m, 4 * T * d->dim, msg)) ||
	    !(m->h1 = (float *)grab(m, 4 * T * d->hidden, msg)) ||
	    !(m->h3 = (float *)grab(m, 4 * T * d->hidden, msg)) ||
	    !(m->logits = (float *)grab(m, 4 * T * d->vocab, msg)) ||
	    !(m->xb = (half *)grab(m, 2 * T * m->ldd, msg)) ||
	    !(m->hb = (half *)grab(m, 2 * T * m->ldh, msg)) ||
	    !(m->rows = (int *)grab(m, 3 * sizeof(int) * T, msg)))
		return -1;
	CU(cudaMemsetAsync(m->xb, 0, 2 * T * m->ldd, gk_ctx.stream));
	CU(cudaMemsetAsync(m->hb, 0, 2 * T * m->ldh, gk_ctx.stream));
	CU(cudaStreamSynchronize(gk_ctx.stream));
	return 0;
}

struct gk_model *gk_model_new(const struct gk_model_desc *d, char *msg)
{
	struct gk_model *m;
	int head;

	msg[0] = 0;
	if (d->dim < 1 || d->n_heads < 1 || d->n_kv_heads < 1 ||
	    d->dim % d->n_heads || d->n_heads % d->n_kv_heads ||
	    (head = d->dim / d->n_heads) % 2 || head > 1024 ||
	    /* rope_store holds a row's keys in 48 KB of shared memory */
	    d->n_kv_heads * head > 12288 || d->hidden < 1 ||
	    d->n_layers < 1 || d->vocab < 1 || d->seq_len < 1 ||
	    d->max_tokens < 1 || d->caches < 1 ||
	    ((d->w4a16 || d->cls_w4a16) && d->group != 32 &&
	     d->group != 64 && d->group != 128)) {
		gk_fail(msg, "model_new", __FILE__, __LINE__,
			"a shape this forward does not take");
		return NULL;
	}
	if (!(m = (struct gk_model *)calloc(1, sizeof(*m)))) {
		gk_fail(msg, "malloc", __FILE__, __LINE__, "out of memory");
		return NULL;
	}
	m->d = *d;
	m->head = head;
	m->kv_dim = d->n_kv_heads * head;
	m->ldd = (d->dim + GK_TILE_K - 1) / GK_TILE_K * GK_TILE_K;
	m->ldh = (d->hidden + GK_TILE_K - 1) / GK_TILE_K * GK_TILE_K;
	m->att_smem = sizeof(float) * ((size_t)head + d->seq_len);
	if (model_alloc(m, msg) < 0) {
		gk_model_free(m);
		return NULL;
	}
	if (cudaFuncSetAttribute(attention,
				 cudaFuncAttributeMaxDynamicSharedMemorySize,
				 (int)m->att_smem) != cudaSuccess) {
		char what[96];

		snprintf(what, sizeof(what), "attention over %d positions "
			 "(%zu bytes of shared memory)", d->seq_len, m->att_smem);
		gk_fail(msg, what, __FILE__, __LINE__, "more than a block can "
			"have");
		gk_model_free(m);
		return NULL;
	}
	return m;
}

void gk_model_free(struct gk_model *m)
{
	if (!m)
		return;
	cudaStreamSynchronize(gk_ctx.stream);
	if (m->lin)
		for (int i = 0; i <= m->d.n_layers * NLIN; i++) {
			cudaFree(m->lin[i].f16);
			gk_q4_dev_free(&m->lin[i].q4);
		}
	void *bufs[] = { m->emb, m->rms_att, m->rms_ffn, m->rms_final, m->kc,
			 m->vc, m->x, m->q, m->k, m->v, m->o, m->h1, m->h3,
			 m->logits, m->xb, m->hb, m->rows };
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		cudaFree(bufs[i]);
	free(m->lin);
	cudaFreeHost(m->rows_host);
	if (m->rows_read)
		cudaEventDestroy(m->rows_read);
	free(m);
}

size_t gk_model_bytes(const struct gk_model *m)
{
	return m->bytes;
}

int gk_model_set(struct gk_model *m, enum gk_tensor t, int layer,
		 const struct gk_weights *lin, const float *f32, char *msg)
{
	const struct gk_model_desc *d = &m->d;
	size_t dim = (size_t)d->dim;
	bool linear = t >= GK_WQ;

	if (layer < 0 || layer >= d->n_layers)
		return gk_fail(msg, "model_set", __FILE__, __LINE__,
			       "no such layer");
	if (linear ? !lin : !f32)
		return gk_fail(msg, "model_set", __FILE__, __LINE__,
			       "no weights given");
	switch (t) {
	case GK_EMB:
		return gk_upload(m->emb, f32, 4 * dim * d->vocab, msg);
	case GK_RMS_ATT:
		return gk_upload(m->rms_att + layer * dim, f32, 4 * dim, msg);
	case GK_RMS_FFN:
		return gk_upload(m->rms_ffn + layer * dim, f32, 4 * dim, msg);
	case GK_RMS_FINAL:
		return gk_upload(m->rms_final, f32, 4 * dim, msg);
	case GK_WQ: case GK_WK: case GK_WV: case GK_WO:
	case GK_W1: case GK_W2: case GK_W3: case GK_CLS:
		break;
	}
	struct lin *l = lin_at(m, t, layer);
	if (!l->w4a16) {
		if (!lin->f16)
			return gk_fail(msg, "model_set", __FILE__, __LINE__,
				       "an FP16 model takes FP16 weights");
		return gk_upload(l->f16, lin->f16, 2 * (size_t)l->n * l->k, msg);
	}
	const struct gk_q4 *q = lin->q4;
	if (!q || q->n != l->n || q->k != l->k || q->group != l->q4.group)
		return gk_fail(msg, "model_set", __FILE__, __LINE__,
			       "W4A16 weights of another shape or group");
	if (gk_upload(l->q4.codes, q->codes, gk_q4_codes_bytes(q), msg) < 0)
		return -1;
	return gk_upload(l->q4.sb, q->sb, gk_q4_sb_bytes(q), msg);
}

/* y (T x n FP32) = x (T rows of kpad FP16) W^T; W4A16 through the GEMV at
 * one token, where bench gpu measured it faster on every shape */
static int lin_apply(const struct lin *l, const half *x, int T, float *y,
		     char *msg)
{
	if (l->w4a16)
		return (T == 1 ? gk_q4_gemv : gk_q4_gemm)(
			&l->q4, (const uint16_t *)x, T, y, msg);
	return gk_f16_gemm(l->f16, l->n, l->k, (const uint16_t *)x,
			   (l->k + GK_TILE_K - 1) / GK_TILE_K * GK_TILE_K, T, y,
			   NULL, msg);
}

static int residual(float *x, const float *o, size_t n, char *msg)
{
	add_rows<<<fill_grid(n), 256, 0, gk_ctx.stream>>>(x, o, n);
	CU(cudaGetLastError());
	return 0;
}

static int layer_forward(struct gk_model *m, int l, int T, char *msg)
{
	const struct gk_model_desc *d = &m->d;
	const struct lin *w = &m->lin[l * NLIN];
	size_t coff = (size_t)l * d->caches * d->seq_len * m->kv_dim;
	cudaStream_t s = gk_ctx.stream;

	rmsnorm<<<T, 256, 0, s>>>(m->x, m->rms_att + (size_t)l * d->dim, d->dim,
				  d->norm_eps, m->xb, m->ldd);
	CU(cudaGetLastError());
	if (lin_apply(&w[0], m->xb, T, m->q, msg) < 0 ||
	    lin_apply(&w[1], m->xb, T, m->k, msg) < 0 ||
	    lin_apply(&w[2], m->xb, T, m->v, msg) < 0)
		return -1;
	rope_store<<<T, 128, sizeof(float) * m->kv_dim, s>>>(
		m->q, m->k, m->v, m->rows, *d, m->head, m->kc + coff,
		m->vc + coff);
	CU(cudaGetLastError());
	attention<<<dim3(T, d->n_heads), 128, m->att_smem, s>>>(
		m->q, m->rows, *d, m->head, m->kc + coff, m->vc + coff, m->xb,
		m->ldd);
	CU(cudaGetLastError());
	if (lin_apply(&w[3], m->xb, T, m->o, msg) < 0 ||
	    residual(m->x, m->o, (size_t)T * d->dim, msg) < 0)
		return -1;
	rmsnorm<<<T, 256, 0, s>>>(m->x, m->rms_ffn + (size_t)l * d->dim, d->dim,
				  d->norm_eps, m->xb, m->ldd);
	CU(cudaGetLastError());
	if (lin_apply(&w[4], m->xb, T, m->h1, msg) < 0 ||
	    lin_apply(&w[6], m->xb, T, m->h3, msg) < 0)
		return -1;
	silu_mul<<<T, 256, 0, s>>>(m->h1, m->h3, d->hidden, m->hb, m->ldh);
	CU(cudaGetLastError());
	if (lin_apply(&w[5], m->hb, T, m->o, msg) < 0)
		return -1;
	return residual(m->x, m->o, (size_t)T * d->dim, msg);
}

int gk_model_forward(struct gk_model *m, const struct gk_seq *seqs, int nseq,
		     float *logits, char *msg)
{
	const struct gk_model_desc *d = &m->d;
	int T = 0;

	/* the previous forward's upload may still be queued */
	CU(cudaEventSynchronize(m->rows_read));
	for (int i = 0; i < nseq; i++) {
		const struct gk_seq *q = &seqs[i];

		if (q->cache < 0 || q->cache >= d->caches || q->n < 1 ||
		    q->pos < 0 || q->pos + q->n > d->seq_len ||
		    T + q->n > d->max_tokens)
			return gk_fail(msg, "model_forward", __FILE__, __LINE__,
				       "a sequence outside the model's caches, "
				       "positions or batch");
		for (int j = 0; j < q->n; j++, T++) {
			if (q->tokens[j] < 0 || q->tokens[j] >= d->vocab)
				return gk_fail(msg, "model_forward", __FILE__,
					       __LINE__, "token id out of range");
			m->rows_host[3 * T] = q->tokens[j];
			m->rows_host[3 * T + 1] = q->cache;
			m->rows_host[3 * T + 2] = q->pos + j;
		}
	}
	if (T < 1)
		return gk_fail(msg, "model_forward", __FILE__, __LINE__,
			       "no tokens");
	CU(cudaMemcpyAsync(m->rows, m->rows_host, 3 * sizeof(int) * T,
			   cudaMemcpyHostToDevice, gk_ctx.stream));
	CU(cudaEventRecord(m->rows_read, gk_ctx.stream));
	embed<<<T, 256, 0, gk_ctx.stream>>>(m->emb, m->rows, d->dim, m->x);
	CU(cudaGetLastError());
	for (int l = 0; l < d->n_layers; l++)
		if (layer_forward(m, l, T, msg) < 0)
			return -1;
	rmsnorm<<<T, 256, 0, gk_ctx.stream>>>(m->x, m->rms_final, d->dim,
					      d->norm_eps, m->xb, m->ldd);
	CU(cudaGetLastError());
	if (lin_apply(&m->lin[d->n_layers * NLIN], m->xb, T, m->logits,
		      msg) < 0)
		return -1;
	if (logits) {
		CU(cudaMemcpyAsync(logits, m->logits,
				   sizeof(float) * (size_t)T * d->vocab,
				   cudaMemcpyDeviceToHost, gk_ctx.stream));
		CU(cudaStreamSynchronize(gk_ctx.stream));
	}
	return 0;
}
