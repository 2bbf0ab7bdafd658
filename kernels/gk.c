/* gk.c: the host side of the GPU kernels: finding and opening the CUDA
 * plugin, and the W4A16 repacking into the GPU layout (gk.h).
 *
 * The plugin is opened at most once a process and stays loaded (the CUDA
 * runtime does not support being unloaded); `api` is non-NULL exactly while
 * a device is open. */
#include "gk.h"

#include "f16.h"
#include "fs.h"
#include "mem.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *plugin;
static const struct gk_api *api;

/* $HYBRIDSPEC_CUDA, else hybridspec-cuda.so in the running binary's folder */
static int plugin_path(char *path, size_t n, struct err *e)
{
	const char *env = getenv("HYBRIDSPEC_CUDA");
	char exe[4096];

	if (env && *env) {
		if ((size_t)snprintf(path, n, "%s", env) >= n)
			return err_set(e, "$HYBRIDSPEC_CUDA: path too long");
		return 0;
	}
	if (fs_exe_dir(exe, sizeof(exe)) < 0)
		return err_set(e, "cannot find the running binary "
			       "(/proc/self/exe) to find hybridspec-cuda.so "
			       "beside it; set $HYBRIDSPEC_CUDA");
	if ((size_t)snprintf(path, n, "%s/hybridspec-cuda.so", exe) >= n)
		return err_set(e, "'%s': path too long", exe);
	return 0;
}

int gk_plugin_at(char *path, size_t n)
{
	struct err e;

	if (plugin_path(path, n, &e) < 0) {
		snprintf(path, n, "%s", e.msg);
		return -1;
	}
	return access(path, F_OK) == 0;
}

const struct gk_api *gk_open(struct gk_device *d, struct err *e)
{
	char path[GK_PATH_MAX], msg[GK_MSG] = "";
	gk_api_fn *entry;

	if (api)
		return err_set(e, "the GPU is already open"), NULL;
	if (!plugin) {
		if (plugin_path(path, sizeof(path), e) < 0)
			return NULL;
		if (access(path, F_OK) != 0)
			return err_set(e, "no CUDA plugin: '%s' does not exist "
				       "(it is built beside the binary where nvcc "
				       "is, and must stay beside it, or be named "
				       "by $HYBRIDSPEC_CUDA; see README)", path),
			       NULL;
		plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!plugin)
			return err_set(e, "cannot load the CUDA plugin: %s",
				       dlerror()), NULL;
	}
	*(void **)&entry = dlsym(plugin, GK_API_SYMBOL);
	if (!entry || !entry(GK_ABI))
		return err_set(e, "'%s' in the CUDA plugin is missing or of "
			       "another version (rebuild)", GK_API_SYMBOL), NULL;
	if (entry(GK_ABI)->open(d, msg) < 0)
		return err_set(e, "no usable GPU: %s", msg), NULL;
	api = entry(GK_ABI);
	return api;
}

void gk_close(void)
{
	if (api)
		api->close();
	api = NULL;
}

void *gk_bufs_alloc(struct gk_bufs *b, size_t bytes, char *msg)
{
	void *p = b->api->alloc(bytes, msg);

	if (p) {
		HS_ASSERT(b->n < GK_BUFS);
		b->p[b->n++] = p;
	}
	return p;
}

void gk_bufs_free(struct gk_bufs *b)
{
	while (b->n)
		b->api->free(b->p[--b->n]);
}

/* where weight (row, col) lives in the GPU layout: its code's byte index and
 * shift, and its scale/bias pair's index */
static void locate(const struct gk_q4 *g, int row, int col, size_t *byte,
		   int *shift, size_t *pair)
{
	int ktiles = g->kpad / GK_TILE_K, gpt = GK_TILE_K / g->group;
	size_t tile = (size_t)(row / GK_TILE_N) * (size_t)ktiles +
		      (size_t)(col / GK_TILE_K);
	int r = row % GK_TILE_N, c = col % GK_TILE_K;
	int e = c % 32, w = e / 8, i = e % 8 / 2, hi = e % 2;

	*byte = tile * 4096 + (size_t)(r * 4 + c / 32) * 16 + (size_t)w * 4 +
		(size_t)(hi * 2) + (size_t)(i / 2);
	*shift = 4 * (i % 2);
	*pair = (tile * GK_TILE_N + (size_t)r) * (size_t)gpt +
		(size_t)(c / g->group);
}

void gk_q4_pack(struct gk_q4 *g, const struct q4_matrix *m)
{
	HS_ASSERT(m->group == 32 || m->group == 64 || m->group == 128);
	gk_q4_dims(g, m->n, m->k, m->group);
	g->codes = xcalloc(gk_q4_codes_bytes(g), 1);
	g->sb = xcalloc(gk_q4_sb_bytes(g), 1);
	for (int row = 0; row < m->n; row++) {
		const uint8_t *blk = m->data + (size_t)row * m->row_bytes;

		for (int col = 0; col < m->k; col++) {
			size_t byte, pair;
			int shift;

			locate(g, row, col, &byte, &shift, &pair);
			g->codes[byte] |= (uint8_t)(q4_code(m, row, col) << shift);
			if (col % m->group == 0)
				memcpy(&g->sb[2 * pair],
				       blk + q4_head_at(m, col / m->group),
				       2 * sizeof(uint16_t));
		}
	}
}

void gk_q4_release(struct gk_q4 *g)
{
	free(g->codes);
	free(g->sb);
	memset(g, 0, sizeof(*g));
}

float gk_q4_weight(const struct gk_q4 *g, int row, int col)
{
	size_t byte, pair;
	int shift;

	locate(g, row, col, &byte, &shift, &pair);
	return f16_to_f32(g->sb[2 * pair]) *
		       (float)(g->codes[byte] >> shift & 15) +
	       f16_to_f32(g->sb[2 * pair + 1]);
}
