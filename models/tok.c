/* tok.c: pieces are found through a hash table (FNV-1a, linear probing);
 * merges by rank (Hugging Face and byte-level BPE) through a second one,
 * keyed by the pair of ids a merge joins, holding its rank and the id of
 * the join. An encoding is a list of ids that shrinks as pairs merge;
 * every id in it is a piece of the vocabulary. */
#include "tok.h"

#include "gguf.h"
#include "fs.h"
#include "mem.h"

#include <jansson.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	t->max_piece = 1;
	for (int id = 0; id < t->n; id++) {
		uint32_t at = hash(t->piece[id]) & (uint32_t)(t->table_size - 1);

		if ((int)strlen(t->piece[id]) > t->max_piece)
			t->max_piece = (int)strlen(t->piece[id]);

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
	t->kind = TOK_SCORES;
	t->bos = TOK_BOS;
	t->eos = TOK_EOS;
	t->add_bos = t->space_prefix = true;
	for (int b = 0; b < 256; b++)
		t->byte_id[b] = 3 + b;
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
	free(t->table);
	free(t->merge);
	free(t->control);
	memset(t, 0, sizeof(*t));
}

static int lookup(const struct tok *t, const char *s);

static uint32_t pair_hash(int left, int right)
{
	return ((uint32_t)left * 2654435761u) ^ ((uint32_t)right * 40503u);
}

/* The slot of the pair (left, right) in the merges' table: its merge, or
 * the empty slot where it would go */
static struct tok_merge *merge_slot(const struct tok *t, int left, int right)
{
	uint32_t mask = (uint32_t)t->merge_size - 1, at = pair_hash(left, right) & mask;

	while (t->merge[at].left >= 0 &&
	       (t->merge[at].left != left || t->merge[at].right != right))
		at = (at + 1) & mask;
	return &t->merge[at];
}

/* The merge of the pair (left, right), or NULL */
static const struct tok_merge *merge_of(const struct tok *t, int left,
					int right)
{
	const struct tok_merge *m = merge_slot(t, left, right);

	return m->left >= 0 ? m : NULL;
}

/* Merge s ("left right" with sp at its one space) as the ids it joins and
 * the join's, each a piece (as encoding assumes; Hugging Face's loader
 * checks it too), into *m; 0, or -1 where one is not */
static int merge_ids(const struct tok *t, const char *s, const char *sp,
		     struct tok_merge *m)
{
	size_t nl = (size_t)(sp - s);
	char *buf = xmalloc(strlen(s) + 1);

	memcpy(buf, s, nl);
	strcpy(buf + nl, sp + 1);
	m->joined = lookup(t, buf);
	m->right = lookup(t, sp + 1);
	buf[nl] = '\0';
	m->left = lookup(t, buf);
	free(buf);
	return m->joined >= 0 && m->right >= 0 && m->left >= 0 ? 0 : -1;
}

/* Takes the merges m[0..n) (owned strings, in rank order; the array is
 * freed too): each must be "left right" joining two pieces into a third.
 * where names the list in messages ("/model/merges/"). A pair listed
 * twice keeps its first rank. */
static int set_merges(struct tok *t, char **m, int n, const char *path,
		      const char *where, struct err *e)
{
	int bad = -1;

	for (t->merge_size = 16; t->merge_size < 2 * n;)
		t->merge_size *= 2;
	t->merge = xmalloc(sizeof(*t->merge) * (size_t)t->merge_size);
	for (int i = 0; i < t->merge_size; i++)
		t->merge[i].left = -1;
	for (int i = 0; i < n; i++) {
		const char *sp = strchr(m[i], ' ');
		struct tok_merge g = { .rank = i }, *slot;

		if (!sp || strchr(sp + 1, ' ') || merge_ids(t, m[i], sp, &g) < 0) {
			bad = i;
			break;
		}
		slot = merge_slot(t, g.left, g.right);
		if (slot->left < 0)
			*slot = g;
	}
	for (int j = 0; j < n; j++)
		free(m[j]);
	free(m);
	if (bad >= 0)
		return err_set(e, "%s: %s%d: expected \"left right\", two pieces "
			       "of the vocabulary whose join is one too", path,
			       where, bad);
	return 0;
}

int tok_load_hf(struct tok *t, const char *path, int vocab_size,
		struct err *e)
{
	json_error_t je;
	json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je), *model;
	json_t *vocab, *merges, *v;
	const char *key;
	char **tmp;
	int n;

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
	n = (int)json_array_size(merges);
	tmp = xcalloc((size_t)n + 1, sizeof(char *));
	for (int i = 0; i < n; i++) {
		const char *m = json_string_value(json_array_get(merges, i));

		tmp[i] = xstrdup(m ? m : "");
	}
	if (set_merges(t, tmp, n, path, "/model/merges/", e) < 0)
		goto fail;
	json_decref(doc);
	t->unk = 0;
	t->bos = TOK_BOS;
	t->eos = TOK_EOS;
	t->add_bos = true;
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

/* GPT-2's printable form of byte b: the byte itself for the printable ones
 * (33..126, 161..172, 174..255), else 256 + n for the n-th of the others
 * (0..32, 127..160, 173, in order). As UTF-8 into out (2 bytes at most),
 * returning its length. */
static int byte_char(int b, char *out)
{
	int cp = b <= 32 ? 256 + b : b >= 127 && b <= 160 ? 256 + 33 + (b - 127)
		 : b == 173 ? 256 + 67 : b;

	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	out[0] = (char)(0xC0 | cp >> 6);
	out[1] = (char)(0x80 | (cp & 0x3F));
	return 2;
}

/* The byte a printable code point stands for, or -1. */
static int char_byte(uint32_t cp)
{
	if (cp < 256)
		return cp > 32 && !(cp >= 127 && cp <= 160) && cp != 173 ? (int)cp
									  : -1;
	if (cp <= 256 + 32)
		return (int)cp - 256;
	if (cp <= 256 + 66)
		return (int)cp - 256 - 33 + 127;
	return cp == 256 + 67 ? 173 : -1;
}

/* GGUF "llama": pieces with "\u2581" for spaces become pieces with
 * spaces, so that the scores encoder serves both files. */
static char *spm_piece(const struct gguf_str *s)
{
	char *p = xmalloc(s->n + 1);
	size_t n = 0;

	for (size_t i = 0; i < s->n;) {
		if (i + 3 <= s->n && !memcmp(s->s + i, "\xe2\x96\x81", 3)) {
			p[n++] = ' ';
			i += 3;
		} else {
			p[n++] = s->s[i++];
		}
	}
	p[n] = '\0';
	return p;
}

/* A token id of the metadata, in [0, vocab_size). */
static int token_id(const struct gguf *g, const char *key, int vocab_size,
		    int *id, struct err *e)
{
	int64_t v;

	if (gguf_int(g, key, &v, e) < 0)
		return -1;
	if (v < 0 || v >= vocab_size)
		return err_set(e, "%s: metadata '%s': token %lld is outside the "
			       "vocabulary of %d", g->name, key, (long long)v,
			       vocab_size);
	*id = (int)v;
	return 0;
}

int tok_load_gguf(struct tok *t, const struct gguf *g, int vocab_size,
		  struct err *e)
{
	const struct gguf_kv *toks, *kv;
	struct gguf_str model, pre;
	int flag, spm;

	memset(t, 0, sizeof(*t));
	if (gguf_string(g, "tokenizer.ggml.model", &model, e) < 0)
		return -1;
	spm = model.n == 5 && !memcmp(model.s, "llama", 5);
	if (!spm && !(model.n == 4 && !memcmp(model.s, "gpt2", 4)))
		return err_set(e, "%s: metadata 'tokenizer.ggml.model': expected "
			       "\"llama\" or \"gpt2\", got \"%.*s\"", g->name,
			       (int)(model.n > 64 ? 64 : model.n), model.s);
	if (!(toks = gguf_array(g, "tokenizer.ggml.tokens", GGUF_STRING,
				vocab_size, e)))
		return -1;
	t->kind = spm ? TOK_SCORES : TOK_BYTE_BPE;
	t->n = vocab_size;
	t->piece = xcalloc((size_t)vocab_size, sizeof(char *));
	t->score = xcalloc((size_t)vocab_size, sizeof(float));
	t->control = xcalloc((size_t)vocab_size, 1);
	for (int i = 0; i < vocab_size; i++) {
		if (memchr(toks->str[i].s, '\0', toks->str[i].n)) {
			err_set(e, "%s: metadata 'tokenizer.ggml.tokens': token %d "
				"holds a NUL byte", g->name, i);
			goto fail;
		}
		t->piece[i] = spm ? spm_piece(&toks->str[i])
				  : gguf_str_dup(&toks->str[i]);
	}
	index_pieces(t);
	if ((kv = gguf_get(g, "tokenizer.ggml.token_type"))) {
		if (!(kv = gguf_array(g, "tokenizer.ggml.token_type", GGUF_I32,
				      vocab_size, e)))
			goto fail;
		for (int i = 0; i < vocab_size; i++)
			t->control[i] = gguf_arr_num(kv, (uint64_t)i) == 3;
	}
	if (spm) {
		if (!(kv = gguf_array(g, "tokenizer.ggml.scores", GGUF_F32,
				      vocab_size, e)))
			goto fail;
		for (int i = 0; i < vocab_size; i++)
			t->score[i] = (float)gguf_arr_num(kv, (uint64_t)i);
		for (int b = 0; b < 256; b++) {
			char hex[8];

			snprintf(hex, sizeof(hex), "<0x%02X>", b);
			t->byte_id[b] = lookup(t, hex);
		}
		t->space_prefix = true;
		if (gguf_get(g, "tokenizer.ggml.add_space_prefix")) {
			if (gguf_bool(g, "tokenizer.ggml.add_space_prefix", &flag, e) < 0)
				goto fail;
			t->space_prefix = flag;
		}
	} else {
		const struct gguf_kv *m = gguf_array(g, "tokenizer.ggml.merges",
						      GGUF_STRING, -1, e);
		char **tmp;
		int pt;

		if (!m)
			goto fail;
		if (m->n > INT32_MAX / 2) {
			err_set(e, "%s: metadata 'tokenizer.ggml.merges': %llu merges",
				g->name, (unsigned long long)m->n);
			goto fail;
		}
		tmp = xcalloc(m->n + 1, sizeof(char *));
		for (uint64_t i = 0; i < m->n; i++)
			tmp[i] = gguf_str_dup(&m->str[i]);
		if (set_merges(t, tmp, (int)m->n, g->name,
			       "metadata 'tokenizer.ggml.merges': merge ", e) < 0)
			goto fail;
		pre = (struct gguf_str){ "gpt2", 4 };
		if (gguf_get(g, "tokenizer.ggml.pre") &&
		    gguf_string(g, "tokenizer.ggml.pre", &pre, e) < 0)
			goto fail;
		{
			char name[64];

			snprintf(name, sizeof(name), "%.*s",
				 (int)(pre.n > 63 ? 63 : pre.n), pre.s);
			if ((pt = pretok_find(name)) < 0) {
				err_set(e, "%s: metadata 'tokenizer.ggml.pre': pre-"
					"tokeniser \"%s\" is not one this reader knows "
					"(gpt2, smollm, starcoder, refact)", g->name, name);
				goto fail;
			}
		}
		t->pre = (enum pretok_kind)pt;
	}
	t->add_bos = spm; /* llama.cpp's defaults */
	if (gguf_get(g, "tokenizer.ggml.add_bos_token")) {
		if (gguf_bool(g, "tokenizer.ggml.add_bos_token", &flag, e) < 0)
			goto fail;
		t->add_bos = flag;
	}
	if (token_id(g, "tokenizer.ggml.bos_token_id", vocab_size, &t->bos, e) < 0 ||
	    token_id(g, "tokenizer.ggml.eos_token_id", vocab_size, &t->eos, e) < 0)
		goto fail;
	t->unk = -1;
	if (gguf_get(g, "tokenizer.ggml.unknown_token_id") &&
	    token_id(g, "tokenizer.ggml.unknown_token_id", vocab_size, &t->unk,
		     e) < 0)
		goto fail;
	return 0;
fail:
	tok_release(t);
	return -1;
}

static const char SPACE[] = "\xe2\x96\x81"; /* U+2581, the HF space */

/* The merge of ids[i] and ids[i + 1], or NULL (none; pairs with the
 * unknown token never merge) */
static const struct tok_merge *pair_at(const struct tok *t, const int *ids,
				       int i)
{
	return ids[i] == t->unk || ids[i + 1] == t->unk ? NULL
						       : merge_of(t, ids[i], ids[i + 1]);
}

/* Merges the pair of lowest rank (leftmost on ties) of ids[0..n) until
 * none is left. Returns the new count. pair[i] is the merge of ids[i] and
 * ids[i + 1]; a merge changes only its neighbours'. */
static int merge_by_rank(const struct tok *t, int *ids, int n)
{
	const struct tok_merge *word[64], **pair = word;

	if (n < 2)
		return n;
	if (n - 1 > 64) /* a long word; most are short */
		pair = xmalloc(sizeof(*pair) * (size_t)(n - 1));
	for (int i = 0; i + 1 < n; i++)
		pair[i] = pair_at(t, ids, i);
	for (;;) {
		int at = -1;

		for (int i = 0; i + 1 < n; i++)
			if (pair[i] && (at < 0 || pair[i]->rank < pair[at]->rank))
				at = i;
		if (at < 0)
			break;
		ids[at] = pair[at]->joined;
		memmove(ids + at + 1, ids + at + 2, sizeof(int) * (size_t)(n - at - 2));
		memmove(pair + at, pair + at + 1, sizeof(*pair) * (size_t)(n - at - 2));
		n--;
		if (at > 0)
			pair[at - 1] = pair_at(t, ids, at - 1);
		if (at + 1 < n)
			pair[at] = pair_at(t, ids, at);
	}
	if (pair != word)
		free(pair);
	return n;
}

/* HF BPE: normalise, one symbol a character (unknown ones <unk>, runs of
 * them fused), then merges by rank. */
static int encode_hf(const struct tok *t, const char *text, int *out)
{
	size_t len = strlen(text), nl = 0;
	char *norm = xmalloc(3 * len + 4), cp[8];
	int n = 0;

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
			if (n > 0 && out[n - 1] == t->unk) {
				i += cl;
				continue; /* fuse_unk */
			}
		}
		out[n++] = id;
		i += cl;
	}
	n = merge_by_rank(t, out, n);
	free(norm);
	return n;
}

/* Byte-level BPE: words from the pre-tokeniser, each one's bytes as GPT-2
 * characters, merges by rank inside it. */
static int encode_bytes(const struct tok *t, const char *text, int *out)
{
	size_t len = strlen(text), *ends = xmalloc(sizeof(size_t) * (len + 1));
	size_t words = pretok_split(t->pre, text, len, ends);
	char c[4];
	int n = 0, of[256]; /* each byte's token */

	for (int b = 0; b < 256; b++) {
		c[byte_char(b, c)] = '\0';
		of[b] = lookup(t, c);
	}
	for (size_t w = 0, at = 0; w < words; at = ends[w++]) {
		int first = n;

		/* a byte the vocabulary lacks is dropped, as llama.cpp does
		 * (SmolLM2's has no token for most control bytes) */
		for (size_t i = at; i < ends[w]; i++)
			if ((out[n] = of[(unsigned char)text[i]]) >= 0)
				n++;
		n = first + merge_by_rank(t, out + first, n - first);
	}
	free(ends);
	return n;
}

/* Scores: a dummy leading space, characters (or their byte tokens), then
 * merges of the pair whose join scores highest. */
static int encode_scores(const struct tok *t, const char *text, int *out)
{
	size_t len = strlen(text);
	char *buf = xmalloc(2 * (size_t)t->max_piece + 2), cp[8];
	int n = 0;

	if (len && t->space_prefix) {
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
			for (size_t b = 0; b < cl; b++) {
				id = t->byte_id[(unsigned char)cp[b]];
				if (id >= 0)
					out[n++] = id;
				else if (t->unk >= 0)
					out[n++] = t->unk;
			}
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
	free(buf);
	return n;
}

int tok_encode(const struct tok *t, const char *text, int bos, int eos,
	       int *out)
{
	int n = 0;

	if (bos && t->add_bos)
		out[n++] = t->bos;
	switch (t->kind) {
	case TOK_SCORES:
		n += encode_scores(t, text, out + n);
		break;
	case TOK_HF_BPE:
		n += encode_hf(t, text, out + n);
		break;
	case TOK_BYTE_BPE:
		n += encode_bytes(t, text, out + n);
		break;
	}
	if (eos)
		out[n++] = t->eos;
	return n;
}

const char *tok_decode(const struct tok *t, int prev, int id)
{
	static char byte[2], text[1024];
	const char *p = t->piece[id];
	unsigned v;

	if (t->control && t->control[id])
		return "";
	switch (t->kind) {
	case TOK_HF_BPE: {
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
		return prev == t->bos && text[0] == ' ' ? text + 1 : text;
	}
	case TOK_BYTE_BPE: {
		size_t n = 0;

		for (const unsigned char *s = (const unsigned char *)p;
		     *s && n + 1 < sizeof(text);) {
			uint32_t cp = *s;
			int k = 1, b;

			if (cp >= 0xC0 && (s[1] & 0xC0) == 0x80) {
				cp = (cp & 0x1F) << 6 | (s[1] & 0x3F);
				k = 2;
			}
			b = char_byte(cp);
			if (b < 0) { /* not GPT-2's: an added token's own text */
				for (int j = 0; j < k && n + 1 < sizeof(text); j++)
					text[n++] = (char)s[j];
			} else {
				text[n++] = (char)b;
			}
			s += k;
		}
		text[n] = '\0';
		return text;
	}
	case TOK_SCORES:
		break;
	}
	if (t->space_prefix && prev == t->bos && p[0] == ' ')
		p++;
	if (sscanf(p, "<0x%02X>", &v) == 1 && strlen(p) == 6) {
		byte[0] = (char)v;
		byte[1] = '\0';
		return byte;
	}
	return p;
}

/* The whole file as one text, CR LF as LF. */
static int *encode_whole(const struct tok *t, const char *path, int *n,
			 struct err *e)
{
	size_t len, k = 0;
	char *text = fs_slurp(path, &len);
	int *out;

	if (!text) {
		err_set(e, "%s: cannot read: %s", path, strerror(errno));
		return NULL;
	}
	for (size_t i = 0; i < len; i++)
		if (!(text[i] == '\r' && i + 1 < len && text[i + 1] == '\n'))
			text[k++] = text[i];
	text[k] = '\0';
	if (strlen(text) != k) {
		free(text);
		err_set(e, "%s: holds a NUL byte", path);
		return NULL;
	}
	out = xmalloc(sizeof(int) * (k + 3));
	*n = tok_encode(t, text, 1, 0, out);
	free(text);
	if (*n < 2) {
		free(out);
		err_set(e, "%s: no text to evaluate", path);
		return NULL;
	}
	return out;
}

int tok_text_readable(const char *path, struct err *e)
{
	struct stat st;
	FILE *f;

	/* a device would be read without end (/dev/zero: one endless line) */
	if (stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
		return err_set(e, "%s: a device, not a text file", path);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) /* fopen would open it */
		return err_set(e, "%s: cannot read: %s", path, strerror(EISDIR));
	if (!(f = fopen(path, "r")))
		return err_set(e, "%s: cannot read: %s", path, strerror(errno));
	fclose(f);
	return 0;
}

int *tok_encode_file(const struct tok *t, const char *path, int *n,
		     struct err *e)
{
	FILE *f;
	size_t cap = 4096, len = 0;
	int *out, *line_tok;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t got;
	bool nul = false;

	if (tok_text_readable(path, e) < 0)
		return NULL;
	if (!t->add_bos)
		return encode_whole(t, path, n, e);
	if (!(f = fopen(path, "r"))) {
		err_set(e, "%s: cannot read: %s", path, strerror(errno));
		return NULL;
	}
	out = xmalloc(sizeof(int) * cap);
	while (!nul && (got = getline(&line, &lcap, f)) > 0) {
		int k;

		if ((nul = strlen(line) != (size_t)got))
			continue;
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
	if (nul || ferror(f)) { /* a read error: a folder, say */
		if (nul)
			err_set(e, "%s: holds a NUL byte", path);
		else
			err_set(e, "%s: cannot read: %s", path, strerror(errno));
		fclose(f);
		free(out);
		return NULL;
	}
	fclose(f);
	if (len < 2) {
		free(out);
		err_set(e, "%s: no text to evaluate", path);
		return NULL;
	}
	*n = (int)len;
	return out;
}

uint32_t tok_fingerprint(const struct tok *t)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (int b = 0; b < 4; b++)
		h = (h ^ (uint32_t)((unsigned)t->n >> (8 * b) & 255)) * 16777619u;
	for (int i = 0; i < t->n; i++) {
		for (const unsigned char *c = (const unsigned char *)t->piece[i];
		     *c; c++)
			h = (h ^ *c) * 16777619u;
		h = (h ^ 0xFF) * 16777619u; /* a piece's end: no byte of text */
	}
	return h ? h : 1;
}
