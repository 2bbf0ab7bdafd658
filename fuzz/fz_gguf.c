/* fz_gguf.c: GGUF files (gguf_parse, models/gguf.h, then llama_load_gguf,
 * models/gload.h): every metadata value of a file that parses is read
 * through the typed getters and the first kilobytes of every tensor
 * dequantised; a file that also loads as a small Llama runs a token
 * forward, and its tokenizer encodes a text and decodes every id. */
#include "fz.h"

#include "fz_model.h"
#include "gguf.h"
#include "gload.h"

static const char fz_gguf_text[] = "Once upon a time, 12 L\xc3\xa9o's "
				   "\xe6\x97\xa5\t\n  cats\xff.";

static int fz_gguf(const uint8_t *data, size_t size)
{
	struct gguf g;
	struct llama m;
	struct tok t;
	struct err e;
	float y[1024];

	if (gguf_parse(&g, data, size, "fz.gguf", &e) < 0)
		return -1;
	for (long i = 0; i < g.n_kv; i++) {
		const struct gguf_kv *kv = &g.kv[i];
		struct gguf_str s;
		int64_t iv;
		double d;
		int b;

		(void)gguf_int(&g, kv->key, &iv, &e);
		(void)gguf_float(&g, kv->key, &d, &e);
		(void)gguf_bool(&g, kv->key, &b, &e);
		(void)gguf_string(&g, kv->key, &s, &e);
		if (kv->type == GGUF_ARRAY && kv->atype != GGUF_STRING &&
		    kv->atype != GGUF_ARRAY && kv->n)
			(void)gguf_arr_num(kv, kv->n - 1);
	}
	for (long i = 0; i < g.n_t; i++) {
		const struct gguf_tensor *tn = &g.t[i];
		long blocks = (long)(tn->bytes / (size_t)tn->type->bytes);
		long fit = (long)(sizeof(y) / sizeof(y[0])) / tn->type->block;

		tn->type->dequant(tn->data, y,
				  (blocks < fit ? blocks : fit) * tn->type->block);
	}
	gguf_release(&g);
	if (llama_load_gguf(&m, &t, fz_put("model.gguf", data, size), &e) < 0)
		return 0;
	{
		int out[sizeof(fz_gguf_text) + 3], n = tok_encode(&t, fz_gguf_text, 1,
								1, out);

		for (int i = 1; i < n; i++)
			(void)tok_decode(&t, out[i - 1], out[i]);
		for (int id = 0; id < t.n; id++)
			(void)tok_decode(&t, t.bos, id);
	}
	tok_release(&t);
	fz_model_use(&m);
	return 0;
}

FZ_TARGET(fz_gguf)
