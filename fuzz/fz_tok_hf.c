/* fz_tok_hf.c: Hugging Face tokenizer.json (tok_load_hf, models/tok.h).
 * The first two bytes give the vocabulary size the model would pass (1 +
 * little-endian value mod 4096), the rest is the file; a tokenizer that
 * loads encodes a text and decodes every id. */
#include "fz.h"

#include "tok.h"

/* ASCII, spaces, two- and three-byte UTF-8, a control byte */
static const char fz_tokhf_text[] = "Once upon a time,  L\xc3\xa9o saw "
				    "\xe6\x97\xa5\xe6\x9c\xac\x01 a cat.";

static int fz_tok_hf(const uint8_t *data, size_t size)
{
	int out[sizeof(fz_tokhf_text) + 3], n, vocab;
	struct tok t;
	struct err e;

	if (size < 2)
		return -1;
	vocab = 1 + (data[0] | data[1] << 8) % 4096;
	if (tok_load_hf(&t, fz_put("tokenizer.json", data + 2, size - 2), vocab,
			&e) < 0)
		return -1;
	n = tok_encode(&t, fz_tokhf_text, 1, 1, out);
	for (int i = 1; i < n; i++)
		(void)tok_decode(&t, out[i - 1], out[i]);
	for (int id = 0; id < t.n; id++)
		(void)tok_decode(&t, TOK_BOS, id);
	tok_release(&t);
	return 0;
}

FZ_TARGET(fz_tok_hf)
