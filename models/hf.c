/* hf.c: Hugging Face Llama checkpoints: config.json, model.safetensors
 * (F32, F16 or BF16 tensors), and tokenizer.json BPE.
 *
 * A safetensors file is an 8-byte little-endian header length N, N bytes of
 * JSON naming each tensor's dtype, shape and [begin, end) byte offsets in
 * the data that follows. Every tensor is checked against the shape the
 * config implies before it is read. */
#include "hf.h"
#include "llama.h"
#include "tok.h"

#include "f16.h"
#include "jx.h"
#include "mem.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct st_file {
	const char *path;
	FILE *f;
	json_t *header; /* owned */
	long data_at;   /* offset of the data buffer */
	long size;
};

static int st_open(struct st_file *s, const char *path, struct err *e)
{
	uint64_t n;
	char *buf;
	json_error_t je;

	memset(s, 0, sizeof(*s));
	s->path = path;
	if (!(s->f = fopen(path, "rb")))
		return err_set(e, "%s: cannot read: %s", path, strerror(errno));
	fseek(s->f, 0, SEEK_END);
	s->size = ftell(s->f);
	rewind(s->f);
	if (fread(&n, 8, 1, s->f) != 1 || n < 2 || n > (uint64_t)s->size - 8) {
		fclose(s->f);
		return err_set(e, "%s: not a safetensors file (bad header length)",
			       path);
	}
	buf = xmalloc(n + 1);
	if (fread(buf, 1, n, s->f) != n) {
		free(buf);
		fclose(s->f);
		return err_set(e, "%s: truncated header", path);
	}
	buf[n] = '\0';
	s->header = json_loads(buf, 0, &je);
	free(buf);
	if (!json_is_object(s->header)) {
		json_decref(s->header);
		fclose(s->f);
		return err_set(e, "%s: the header is not a JSON object (%s)", path,
			       je.text);
	}
	s->data_at = 8 + (long)n;
	return 0;
}

static void st_close(struct st_file *s)
{
	json_decref(s->header);
	if (s->f)
		fclose(s->f);
}

/* Reads tensor `name` of shape rows x cols (cols 0: a vector of rows) as
 * FP32. Returns a new array or NULL with the message. */
static float *st_read(struct st_file *s, const char *name, int rows, int cols,
		      struct err *e)
{
	json_t *t = json_object_get(s->header, name), *shape, *off;
	const char *dt;
	size_t n = (size_t)rows * (cols ? cols : 1), esz;
	long b0, b1;
	float *out;
	uint8_t *raw;

	if (!t)
		return err_set(e, "%s: no tensor \"%s\"", s->path, name), NULL;
	dt = json_string_value(json_object_get(t, "dtype"));
	shape = json_object_get(t, "shape");
	off = json_object_get(t, "data_offsets");
	esz = dt && !strcmp(dt, "F32") ? 4 : dt && (!strcmp(dt, "F16") ||
						    !strcmp(dt, "BF16")) ? 2 : 0;
	if (!esz)
		return err_set(e, "%s: tensor \"%s\": dtype %s is not F32, F16 or "
			       "BF16", s->path, name, dt ? dt : "(none)"), NULL;
	if (json_array_size(shape) != (size_t)(cols ? 2 : 1) ||
	    json_integer_value(json_array_get(shape, 0)) != rows ||
	    (cols && json_integer_value(json_array_get(shape, 1)) != cols))
		return err_set(e, "%s: tensor \"%s\" has shape [%lld, %lld] (%zu "
			       "dims), but the config implies [%d, %d]", s->path,
			       name, json_integer_value(json_array_get(shape, 0)),
			       json_integer_value(json_array_get(shape, 1)),
			       json_array_size(shape), rows, cols), NULL;
	b0 = (long)json_integer_value(json_array_get(off, 0));
	b1 = (long)json_integer_value(json_array_get(off, 1));
	if (b1 - b0 != (long)(n * esz) || b0 < 0 || s->data_at + b1 > s->size)
		return err_set(e, "%s: tensor \"%s\": data offsets [%ld, %ld] do "
			       "not fit its shape or the file", s->path, name, b0,
			       b1), NULL;
	raw = xmalloc(n * esz);
	fseek(s->f, s->data_at + b0, SEEK_SET);
	if (fread(raw, esz, n, s->f) != n) {
		free(raw);
		return err_set(e, "%s: tensor \"%s\" is truncated", s->path, name),
		       NULL;
	}
	out = xmalloc(sizeof(float) * n);
	for (size_t i = 0; i < n; i++) {
		if (esz == 4) {
			memcpy(&out[i], raw + 4 * i, 4);
		} else {
			uint16_t h;

			memcpy(&h, raw + 2 * i, 2);
			if (!strcmp(dt, "F16")) {
				out[i] = f16_to_f32(h);
			} else {
				uint32_t b = (uint32_t)h << 16;

				memcpy(&out[i], &b, 4);
			}
		}
		if (!isfinite(out[i])) {
			free(raw);
			free(out);
			return err_set(e, "%s: tensor \"%s\" holds a non-finite "
				       "value at element %zu", s->path, name, i),
			       NULL;
		}
	}
	free(raw);
	return out;
}

int hf_load(struct llama *m, const char *dir, struct err *e)
{
	char cpath[2048], spath[2048], name[128];
	struct jx x = { .file = cpath, .err = e };
	struct llama_config *c = &m->c;
	struct st_file st;
	struct shape sh;
	json_t *cj;
	double eps, theta;
	int kv_dim;

	memset(m, 0, sizeof(*m));
	snprintf(cpath, sizeof(cpath), "%s/config.json", dir);
	snprintf(spath, sizeof(spath), "%s/model.safetensors", dir);
	if (!(cj = jx_load(cpath, e)))
		return -1;
	if (shape_of_hf(&sh, cj, cpath, e) < 0 ||
	    llama_config_of_shape(c, &sh, cpath, e) < 0 ||
	    jx_num(&x, cj, "", "rms_norm_eps", JX_POS, 1e-6, &eps) < 0 ||
	    jx_num(&x, cj, "", "rope_theta", JX_POS, 10000, &theta) < 0) {
		json_decref(cj);
		return -1;
	}
	json_decref(cj);
	c->norm_eps = (float)eps;
	c->rope_theta = (float)theta;
	c->rope_half = true;
	kv_dim = c->dim / c->n_heads * c->n_kv_heads;
	if (st_open(&st, spath, e) < 0)
		return -1;
	m->layer = xcalloc((size_t)c->n_layers, sizeof(*m->layer));
	{
		const char *emb = json_object_get(st.header, "model.embed_tokens.weight")
					  ? "model.embed_tokens.weight"
					  : "lm_head.weight";

		if (!(m->tok_emb = st_read(&st, emb, c->vocab, c->dim, e)))
			goto fail;
	}
	for (int l = 0; l < c->n_layers; l++) {
		struct llama_layer *L = &m->layer[l];
		static const struct {
			const char *name;
			size_t member;
			int rows_dim, cols_dim; /* 0 dim, 1 kv_dim, 2 hidden */
		} mats[] = {
			{ "self_attn.q_proj", offsetof(struct llama_layer, wq), 0, 0 },
			{ "self_attn.k_proj", offsetof(struct llama_layer, wk), 1, 0 },
			{ "self_attn.v_proj", offsetof(struct llama_layer, wv), 1, 0 },
			{ "self_attn.o_proj", offsetof(struct llama_layer, wo), 0, 0 },
			{ "mlp.gate_proj", offsetof(struct llama_layer, w1), 2, 0 },
			{ "mlp.down_proj", offsetof(struct llama_layer, w2), 0, 2 },
			{ "mlp.up_proj", offsetof(struct llama_layer, w3), 2, 0 },
		};
		int dims[3] = { c->dim, kv_dim, c->hidden };

		snprintf(name, sizeof(name), "model.layers.%d.input_layernorm.weight",
			 l);
		if (!(L->rms_att = st_read(&st, name, c->dim, 0, e)))
			goto fail;
		snprintf(name, sizeof(name),
			 "model.layers.%d.post_attention_layernorm.weight", l);
		if (!(L->rms_ffn = st_read(&st, name, c->dim, 0, e)))
			goto fail;
		for (size_t i = 0; i < sizeof(mats) / sizeof(mats[0]); i++) {
			int r = dims[mats[i].rows_dim], k = dims[mats[i].cols_dim];
			float *w;

			snprintf(name, sizeof(name), "model.layers.%d.%s.weight", l,
				 mats[i].name);
			if (!(w = st_read(&st, name, r, k, e)))
				goto fail;
			lin_init_f32((struct linear *)((char *)L + mats[i].member), w,
				     r, k);
		}
	}
	/* a layer past the config's: the config is not the weights' (the
	 * rest had been ignored, the model run short) */
	snprintf(name, sizeof(name), "model.layers.%d.input_layernorm.weight",
		 c->n_layers);
	if (json_object_get(st.header, name)) {
		err_set(e, "%s: holds a layer %d, past the %d layers of %s's "
			"num_hidden_layers: the config is not the weights'",
			spath, c->n_layers, c->n_layers, cpath);
		goto fail;
	}
	if (!(m->rms_final = st_read(&st, "model.norm.weight", c->dim, 0, e)))
		goto fail;
	{
		float *cls;

		if (!sh.tied && json_object_get(st.header, "lm_head.weight")) {
			if (!(cls = st_read(&st, "lm_head.weight", c->vocab, c->dim, e)))
				goto fail;
		} else {
			cls = xmalloc(sizeof(float) * (size_t)c->vocab * c->dim);
			memcpy(cls, m->tok_emb, sizeof(float) * (size_t)c->vocab * c->dim);
		}
		lin_init_f32(&m->cls, cls, c->vocab, c->dim);
	}
	st_close(&st);
	m->kn = kern_best();
	return 0;
fail:
	st_close(&st);
	llama_release(m);
	return -1;
}
