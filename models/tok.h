/* tok.h: tokenizers, of three kinds.
 *   - Scores (llama2.c's tokenizer.bin; GGUF's "llama"): a dummy leading
 *     space, one token per UTF-8 character (or its bytes, as the tokens
 *     <0xXX>), then merges of the adjacent pair whose joined string has the
 *     highest score. The tokenizer.bin format: max_token_length (int32),
 *     then per token its score (float32), length (int32) and bytes.
 *   - Hugging Face BPE (tokenizer.json): "\u2581" for spaces, merges by
 *     rank.
 *   - Byte-level BPE (GGUF's "gpt2", as SmolLM2's): the text cut into
 *     words by a pre-tokeniser (pretok.h), each word's bytes written as
 *     GPT-2's printable characters (byte b as one code point: itself for
 *     the printable ones, 256 + n for the n-th of the others), then merges
 *     by rank inside each word. Every byte has a token, so nothing is
 *     unknown and decoding gives back the bytes. */
#ifndef HS_TOK_H
#define HS_TOK_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "err.h"
#include "pretok.h"

/* The start and end ids of llama2.c's and the Hugging Face tokenizers */
#define TOK_BOS 1
#define TOK_EOS 2

enum tok_kind { TOK_SCORES, TOK_HF_BPE, TOK_BYTE_BPE };

struct gguf;

struct tok {
	enum tok_kind kind;
	int n;          /* vocabulary size */
	char **piece;   /* (n) owned strings; HF: spaces are "\u2581" */
	float *score;   /* (n) owned: llama2.c merge scores */
	int *table;     /* (table_size) owned: open-addressing hash of pieces
			   to ids, -1 empty */
	int table_size; /* a power of two, at least 2 n */
	/* (merge_size) owned: open-addressing hash of merges by their pair
	 * of ids, left -1 empty */
	struct tok_merge { int left, right, rank, joined; } *merge;
	int merge_size; /* a power of two, at least twice the merges */
	int unk;
	int max_piece;  /* bytes of the longest piece */
	int bos, eos;   /* ids of the start and end tokens */
	bool add_bos;   /* documents start with bos */
	bool space_prefix; /* TOK_SCORES: the dummy leading space */
	int byte_id[256];  /* TOK_SCORES: the token of byte b (<0xXX>), or -1 */
	enum pretok_kind pre; /* TOK_BYTE_BPE */
	unsigned char *control; /* (n) owned, or NULL: 1 for a control token,
				   which decodes to nothing */
};

/* A 32-bit fingerprint of the vocabulary (its size and every piece, in
 * order), never 0: two tokenizers with one are the same one, for all a
 * deployment can tell (wire.h's HELLO carries the edge's). */
uint32_t tok_fingerprint(const struct tok *t);

/* Reads a Hugging Face tokenizer.json: BPE with a "prepend \u2581 and
 * replace spaces by it" normaliser, no pre-tokeniser, merges by rank;
 * characters outside the vocabulary become <unk>. */
int tok_load_hf(struct tok *t, const char *path, int vocab_size,
		struct err *e);

/* The tokenizer of a GGUF file (tokenizer.ggml.*): model "llama"
 * (tokens, scores, byte tokens <0xXX>, "\u2581" for spaces) or "gpt2"
 * (tokens, merges, tokenizer.ggml.pre), with its bos, eos and whether it
 * adds bos. g is borrowed only during the call. */
int tok_load_gguf(struct tok *t, const struct gguf *g, int vocab_size,
		  struct err *e);

/* Reads a tokenizer.bin of vocab_size entries. */
int tok_load_llama2c(struct tok *t, const char *path, int vocab_size,
		     struct err *e);
void tok_release(struct tok *t);

/* Encodes text; returns the number of tokens written to out (capacity
 * strlen(text) + 3 always suffices). bos: the text starts a document, so
 * it gets the start token if the tokenizer adds one (t->add_bos); eos:
 * end it with t->eos. */
int tok_encode(const struct tok *t, const char *text, int bos, int eos,
	       int *out);

/* The tokens of a text file. A tokenizer that adds a start token
 * (llama2.c's, the Hugging Face one here): each non-empty line a document,
 * bos then the line's tokens. One that does not (SmolLM2's): the whole
 * file as one text, CR LF read as LF. Returns them (malloc'd, *n of them;
 * at least 2), or NULL with "path: ..." in e. */
int *tok_encode_file(const struct tok *t, const char *path, int *n,
		     struct err *e);
/* 0 where tok_encode_file can read path (no device, a file that opens),
 * else -1 with its message: for a caller to ask before loading models */
int tok_text_readable(const char *path, struct err *e);

/* The text of token id after token prev (with a dummy leading space, a
 * space after bos is dropped; <0xXX> becomes its byte; byte-level pieces
 * their bytes; a control token nothing). Borrowed; valid until the next
 * call. */
const char *tok_decode(const struct tok *t, int prev, int id);

#endif
