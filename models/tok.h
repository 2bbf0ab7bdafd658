/* tok.h: tokenizers. The llama2.c tokenizer.bin format: max_token_length
 * (int32), then per token its score (float32), length (int32) and bytes.
 * Encoding is llama2.c's: a dummy leading space, one token per UTF-8
 * character (or its bytes, as tokens <0xXX> = id 3 + byte), then merges of
 * the adjacent pair whose joined string has the highest score. */
#ifndef HS_TOK_H
#define HS_TOK_H

#include <stddef.h>

#include "err.h"

#define TOK_BOS 1
#define TOK_EOS 2

enum tok_kind { TOK_LLAMA2C, TOK_HF_BPE };

struct tok {
	enum tok_kind kind;
	int n;          /* vocabulary size */
	char **piece;   /* (n) owned strings; HF: spaces are "\u2581" */
	float *score;   /* (n) owned: llama2.c merge scores */
	int *table;     /* (table_size) owned: open-addressing hash of pieces
			   to ids, -1 empty */
	int table_size; /* a power of two, at least 2 n */
	char **merge;   /* (n_merges) owned: "left right", sorted */
	int *rank;      /* (n_merges) owned: rank of merge[i] in the file */
	int n_merges, unk;
};

/* Reads a Hugging Face tokenizer.json: BPE with a "prepend \u2581 and
 * replace spaces by it" normaliser, no pre-tokeniser, merges by rank;
 * characters outside the vocabulary become <unk>. */
int tok_load_hf(struct tok *t, const char *path, int vocab_size,
		struct err *e);

/* Reads a tokenizer.bin of vocab_size entries. */
int tok_load_llama2c(struct tok *t, const char *path, int vocab_size,
		     struct err *e);
void tok_release(struct tok *t);

/* Encodes text; returns the number of tokens written to out (capacity
 * strlen(text) + 3 always suffices). */
int tok_encode(const struct tok *t, const char *text, int bos, int eos,
	       int *out);

/* The tokens of a text file: for each non-empty line, BOS then the line's
 * tokens. Returns them (malloc'd, *n of them; at least 2), or NULL with
 * "path: ..." in e. */
int *tok_encode_file(const struct tok *t, const char *path, int *n,
		     struct err *e);

/* The text of token id after token prev (a space after BOS is dropped,
 * <0xXX> becomes its byte). Borrowed; valid until the next call. */
const char *tok_decode(const struct tok *t, int prev, int id);

#endif
