/* tok.c: llama2.c's BPE and Hugging Face's, pieces found through a hash
 * table (FNV-1a, linear probing), merges of HF by binary search. */
#include "tok.h"
#include "mem.h"

#include <jansson.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The hash table of pieces. */
static void index_pieces(struct tok *t)
{
	for (t->table_size = 16; t->table_size < 2 * t->n;)
		t->table_size *= 2;
	t->table = xmalloc(sizeof(int) * (size_t)t->table_size);
	for (int i = 0; i < t->table_size; i++)
		t->table[i] = -1;
	for (int id = 0; id < t->n; id++) {
		uint32_t at = hash(t->piece[id]) & (uint32_t)(t->table_size - 1);

		while (t->table[at] >= 0 && strcmp(t->piece[t->table[at]],
						   t->piece[id]))
			at = (at + 1) & (uint32_t)(t->table_size - 1);
		if (t->table[at] < 0) /* the first id of a duplicate piece wins */
			t->table[at] = id;
	}
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
	if (vocab_size < 3 + 256) { /* encoding falls back to byte tokens */
		fclose(f);
		return err_set(e, "%s: a vocabulary of %d has no room for the 256 "
			       "byte tokens <0x00>..<0xFF> (ids 3 to 258)", path,
			       vocab_size);
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
	index_pieces(t);
	t->kind = TOK_LLAMA2C;
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
	for (int i = 0; t->merge && i < t->n_merges; i++)
		free(t->merge[i]);
	free(t->piece);
	free(t->score);
	free(t->table);
	free(t->merge);
	free(t->rank);
	memset(t, 0, sizeof(*t));
}

static int lookup(const struct tok *t, const char *s);

/* Whether merge s, "left right" with sp at its one space, joins two pieces
 * into a third, as encoding assumes (Hugging Face's loader checks it too). */
static int merge_known(const struct tok *t, const char *s, const char *sp)
{
	size_t nl = (size_t)(sp - s);
	char *buf = xmalloc(strlen(s) + 1);
	int ok;

	memcpy(buf, s, nl);
	strcpy(buf + nl, sp + 1);
	ok = lookup(t, buf) >= 0 && lookup(t, sp + 1) >= 0;
	buf[nl] = '\0';
	ok = ok && lookup(t, buf) >= 0;
	free(buf);
	return ok;
}

static char **merge_ctx;

static int cmp_merge(const void *a, const void *b)
{
	return strcmp(merge_ctx[*(const int *)a], merge_ctx[*(const int *)b]);
}

int tok_load_hf(struct tok *t, const char *path, int vocab_size,
		struct err *e)
{
	json_error_t je;
	json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je), *model;
	json_t *vocab, *merges, *v;
	const char *key;
	int *order;
	char **tmp;

	memset(t, 0, sizeof(*t));
	if (!doc)
		return err_set(e, "%s:%d:%d: %s", path, je.line, je.column, je.text);
	if (vocab_size <= TOK_EOS) { /* encoding adds them */
		json_decref(doc);
		return err_set(e, "%s: a vocabulary of %d has no room for the "
			       "start and end tokens (ids %d and %d)", path,
			       vocab_size, TOK_BOS, TOK_EOS);
	}
	model = json_object_get(doc, "model");
	vocab = json_object_get(model, "vocab");
	merges = json_object_get(model, "merges");
	key = json_string_value(json_object_get(model, "type"));
	if (!key || strcmp(key, "BPE") || !json_is_object(vocab) ||
	    !json_is_array(merges)) {
		json_decref(doc);
		return err_set(e, "%s: not a BPE tokenizer.json (model.type, "
			       "model.vocab, model.merges)", path);
	}
	t->kind = TOK_HF_BPE;
	t->n = vocab_size;
	t->piece = xcalloc((size_t)vocab_size, sizeof(char *));
	t->score = xcalloc((size_t)vocab_size, sizeof(float));
	json_object_foreach(vocab, key, v) {
		json_int_t id = json_integer_value(v);

		if (!json_is_integer(v) || id < 0 || id >= vocab_size ||
		    t->piece[id]) {
			err_set(e, "%s: /model/vocab/%s: id %lld is outside the "
				"vocabulary of %d or used twice", path, key,
				(long long)id, vocab_size);
			goto fail;
		}
		t->piece[id] = xstrdup(key);
	}
	for (int i = 0; i < vocab_size; i++)
		if (!t->piece[i]) {
			err_set(e, "%s: token id %d has no entry in /model/vocab",
				path, i);
			goto fail;
		}
	index_pieces(t);
	t->n_merges = (int)json_array_size(merges);
	tmp = xcalloc((size_t)t->n_merges + 1, sizeof(char *));
	for (int i = 0; i < t->n_merges; i++) {
		const char *s = json_string_value(json_array_get(merges, i));
		const char *sp = s ? strchr(s, ' ') : NULL;

		if (!sp || strchr(sp + 1, ' ') || !merge_known(t, s, sp)) {
			for (int j = 0; j < i; j++)
				free(tmp[j]);
			free(tmp);
			t->n_merges = 0;
			err_set(e, "%s: /model/merges/%d: expected \"left right\", "
				"two pieces of /model/vocab whose join is one too",
				path, i);
			goto fail;
		}
		tmp[i] = xstrdup(s);
	}
	order = xmalloc(sizeof(int) * ((size_t)t->n_merges + 1));
	for (int i = 0; i < t->n_merges; i++)
		order[i] = i;
	merge_ctx = tmp;
	qsort(order, (size_t)t->n_merges, sizeof(int), cmp_merge);
	t->merge = xmalloc(sizeof(char *) * ((size_t)t->n_merges + 1));
	t->rank = xmalloc(sizeof(int) * ((size_t)t->n_merges + 1));
	for (int i = 0; i < t->n_merges; i++) {
		t->merge[i] = tmp[order[i]];
		t->rank[i] = order[i];
	}
	free(tmp);
	free(order);
	json_decref(doc);
	t->unk = 0;
	return 0;
fail:
	json_decref(doc);
	tok_release(t);
	return -1;
}

static int lookup(const struct tok *t, const char *s)
{
	uint32_t at = hash(s) & (uint32_t)(t->table_size - 1);

	for (; t->table[at] >= 0; at = (at + 1) & (uint32_t)(t->table_size - 1))
		if (!strcmp(t->piece[t->table[at]], s))
			return t->table[at];
	return -1;
}

static const char SPACE[] = "\xe2\x96\x81"; /* U+2581, the HF space */

static int merge_rank(const struct tok *t, const char *a, const char *b,
		      char *buf)
{
	int lo = 0, hi = t->n_merges - 1;

	sprintf(buf, "%s %s", a, b);
	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(t->merge[mid], buf);

		if (c == 0)
			return t->rank[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* HF BPE: normalise, one symbol a character (unknown ones <unk>, runs of
 * them fused), then merge the pair of lowest rank (leftmost on ties) until
 * none is left. */
static int encode_hf(const struct tok *t, const char *text, int bos, int eos,
		     int *out)
{
	size_t len = strlen(text), nl = 0;
	char *norm = xmalloc(3 * len + 4), *buf, cp[8];
	int n = 0, maxp = 0;

	for (int i = 0; i < t->n; i++)
		if ((int)strlen(t->piece[i]) > maxp)
			maxp = (int)strlen(t->piece[i]);
	buf = xmalloc(2 * (size_t)maxp + 2);
	if (len) { /* the normaliser prepends only to non-empty text */
		memcpy(norm, SPACE, 3);
		nl = 3;
	}
	for (size_t i = 0; i < len; i++) {
		if (text[i] == ' ') {
			memcpy(norm + nl, SPACE, 3);
			nl += 3;
		} else {
			norm[nl++] = text[i];
		}
	}
	norm[nl] = '\0';
	if (bos)
		out[n++] = TOK_BOS;
	for (size_t i = 0; i < nl;) {
		size_t cl = 1;
		int id;

		while (i + cl < nl && cl < 4 &&
		       ((unsigned char)norm[i + cl] & 0xC0) == 0x80)
			cl++;
		memcpy(cp, norm + i, cl);
		cp[cl] = '\0';
		id = lookup(t, cp);
		if (id < 0) {
			id = t->unk;
			if (n > (bos ? 1 : 0) && out[n - 1] == t->unk) {
				i += cl;
				continue; /* fuse_unk */
			}
		}
		out[n++] = id;
		i += cl;
	}
	for (;;) {
		int best = -1, best_at = -1, first = bos ? 1 : 0;

		for (int i = first; i + 1 < n; i++) {
			int r;

			if (out[i] == t->unk || out[i + 1] == t->unk)
				continue;
			r = merge_rank(t, t->piece[out[i]], t->piece[out[i + 1]], buf);
			if (r >= 0 && (best < 0 || r < best)) {
				best = r;
				best_at = i;
			}
		}
		if (best_at < 0)
			break;
		sprintf(buf, "%s%s", t->piece[out[best_at]],
			t->piece[out[best_at + 1]]);
		out[best_at] = lookup(t, buf);
		HS_ASSERT(out[best_at] >= 0);
		memmove(out + best_at + 1, out + best_at + 2,
			sizeof(int) * (size_t)(n - best_at - 2));
		n--;
	}
	if (eos)
		out[n++] = TOK_EOS;
	free(norm);
	free(buf);
	return n;
}

int tok_encode(const struct tok *t, const char *text, int bos, int eos,
	       int *out)
{
	if (t->kind == TOK_HF_BPE)
		return encode_hf(t, text, bos, eos, out);
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
	static char byte[2], text[1024];
	const char *p = t->piece[id];
	unsigned v;

	if (t->kind == TOK_HF_BPE) {
		size_t n = 0;

		for (const char *s = p; *s && n + 1 < sizeof(text);) {
			if (!strncmp(s, SPACE, 3)) {
				text[n++] = ' ';
				s += 3;
			} else {
				text[n++] = *s++;
			}
		}
		text[n] = '\0';
		return prev == TOK_BOS && text[0] == ' ' ? text + 1 : text;
	}
	if (prev == TOK_BOS && p[0] == ' ')
		p++;
	if (sscanf(p, "<0x%02X>", &v) == 1 && strlen(p) == 6) {
		byte[0] = (char)v;
		byte[1] = '\0';
		return byte;
	}
	return p;
}

int *tok_encode_file(const struct tok *t, const char *path, int *n,
		     struct err *e)
{
	FILE *f = fopen(path, "r");
	size_t cap = 4096, len = 0;
	int *out, *line_tok;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t got;

	if (!f) {
		err_set(e, "%s: cannot read: %s", path, strerror(errno));
		return NULL;
	}
	out = xmalloc(sizeof(int) * cap);
	while ((got = getline(&line, &lcap, f)) > 0) {
		int k;

		while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
			line[--got] = '\0';
		if (got == 0)
			continue;
		line_tok = xmalloc(sizeof(int) * ((size_t)got + 3));
		k = tok_encode(t, line, 1, 0, line_tok);
		if (len + (size_t)k > cap) {
			while (len + (size_t)k > cap)
				cap *= 2;
			out = xrealloc(out, sizeof(int) * cap);
		}
		memcpy(out + len, line_tok, sizeof(int) * (size_t)k);
		len += (size_t)k;
		free(line_tok);
	}
	free(line);
	fclose(f);
	if (len < 2) {
		free(out);
		err_set(e, "%s: no text to evaluate", path);
		return NULL;
	}
	*n = (int)len;
	return out;
}
