/* pretok.h: pre-tokenisers of byte-level BPE, which cut text into words
 * before merges run inside each word. Each is the regular expressions a
 * tokenizer is specified by (llama.cpp's names, GGUF's
 * tokenizer.ggml.pre), implemented by hand:
 *   "gpt2":   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|
 *             \s+(?!\S)|\s+
 *   "smollm" (also "starcoder", "refact"): first every \p{N} on its own,
 *             then "gpt2" inside each piece.
 * A byte that is not valid UTF-8 counts as a character of no class (the
 * third alternative), and keeps its value. */
#ifndef HS_PRETOK_H
#define HS_PRETOK_H

#include <stddef.h>

enum pretok_kind { PRETOK_GPT2, PRETOK_DIGITS_GPT2 };

/* The kind called name, or -1. */
int pretok_find(const char *name);

/* Cuts s[0..n) into words: writes the end offset of each (bytes, in
 * order; the last is n) to ends (capacity n + 1) and returns how many. */
size_t pretok_split(enum pretok_kind k, const char *s, size_t n,
		    size_t *ends);

#endif
