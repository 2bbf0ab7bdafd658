/* tok.c: llama2.c's BPE, with pieces looked up by binary search. */
#include "tok.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct tok *sort_ctx;

static int cmp_piece(const void *a, const void *b)
{
	return strcmp(sort_ctx->piece[*(const int *)a],
		      sort_ctx->piece[*(const int *)b]);
}

int tok_load_llama2c(struct tok *t, const char *path, int vocab_size,
		     struct err *e)
{
	FILE *f = fopen(path, "rb");
	int32_t maxlen;

	memset(t, 0, sizeof(*t));
	if (!f)
		return err_set(e, "%s: cannot read: %s", path, strerror(errno));
	if (fread(&maxlen, 4, 1, f) != 1 || maxlen < 1 || maxlen > 1 << 16) {
		fclose(f);
		return err_set(e, "%s: not a tokenizer.bin (bad max token length)",
			       path);
	}
	t->n = vocab_size;
	t->piece = xcalloc((size_t)vocab_size, sizeof(char *));
	t->score = xcalloc((size_t)vocab_size, sizeof(float));
	for (int i = 0; i < vocab_size; i++) {
		int32_t len;

		if (fread(&t->score[i], 4, 1, f) != 1 || fread(&len, 4, 1, f) != 1) {
			err_set(e, "%s: truncated at token %d of %d", path, i,
				vocab_size);
			goto fail;
		}
		if (len < 0 || len > maxlen) {
			err_set(e, "%s: token %d has length %d (max %d)", path, i,
				len, maxlen);
			goto fail;
		}
		t->piece[i] = xmalloc((size_t)len + 1);
		if (fread(t->piece[i], 1, (size_t)len, f) != (size_t)len) {
			err_set(e, "%s: truncated in token %d", path, i);
			goto fail;
		}
		t->piece[i][len] = '\0';
	}
	fclose(f);
	t->sorted = xmalloc(sizeof(int) * (size_t)vocab_size);
	for (int i = 0; i < vocab_size; i++)
		t->sorted[i] = i;
	sort_ctx = t;
	qsort(t->sorted, (size_t)vocab_size, sizeof(int), cmp_piece);
	return 0;
fail:
	fclose(f);
	tok_release(t);
	return -1;
}

void tok_release(struct tok *t)
{
	for (int i = 0; t->piece && i < t->n; i++)
		free(t->piece[i]);
	free(t->piece);
	free(t->score);
	free(t->sorted);
	memset(t, 0, sizeof(*t));
}

static int lookup(const struct tok *t, const char *s)
{
	int lo = 0, hi = t->n - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(t->piece[t->sorted[mid]], s);

		if (c == 0)
			return t->sorted[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

int tok_encode(const struct tok *t, const char *text, int bos, int eos,
	       int *out)
{
	size_t len = strlen(text), maxp = 0;
	char *buf, cp[8];
	int n = 0;

	for (int i = 0; i < t->n; i++)
		if (strlen(t->piece[i]) > maxp)
			maxp = strlen(t->piece[i]);
	buf = xmalloc(2 * maxp + 2);
	if (bos)
		out[n++] = TOK_BOS;
	if (len) {
		int sp = lookup(t, " ");

		if (sp >= 0)
			out[n++] = sp;
	}
	for (size_t i = 0; i < len;) {
		size_t cl = 1;
		int id;

		/* one UTF-8 character: a lead byte and its continuation bytes */
		while (i + cl < len && cl < 4 &&
		       ((unsigned char)text[i + cl] & 0xC0) == 0x80)
			cl++;
		memcpy(cp, text + i, cl);
		cp[cl] = '\0';
		if ((id = lookup(t, cp)) >= 0) {
			out[n++] = id;
		} else {
			for (size_t b = 0; b < cl; b++)
				out[n++] = (unsigned char)cp[b] + 3;
		}
		i += cl;
	}
	for (;;) {
		float best = -1e10f;
		int best_id = -1, best_at = -1;

		for (int i = 0; i + 1 < n; i++) {
			size_t la = strlen(t->piece[out[i]]);
			size_t lb = strlen(t->piece[out[i + 1]]);
			int id;

			memcpy(buf, t->piece[out[i]], la);
			memcpy(buf + la, t->piece[out[i + 1]], lb + 1);
			if ((id = lookup(t, buf)) >= 0 && t->score[id] > best) {
				best = t->score[id];
				best_id = id;
				best_at = i;
			}
		}
		if (best_at < 0)
			break;
		out[best_at] = best_id;
		memmove(out + best_at + 1, out + best_at + 2,
			sizeof(int) * (size_t)(n - best_at - 2));
		n--;
	}
	if (eos)
		out[n++] = TOK_EOS;
	free(buf);
	return n;
}

const char *tok_decode(const struct tok *t, int prev, int id)
{
	static char byte[2];
	const char *p = t->piece[id];
	unsigned v;

	if (prev == TOK_BOS && p[0] == ' ')
		p++;
	if (sscanf(p, "<0x%02X>", &v) == 1 && strlen(p) == 6) {
		byte[0] = (char)v;
		byte[1] = '\0';
		return byte;
	}
	return p;
}
