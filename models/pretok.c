/* pretok.c: the text is decoded once into code points with their byte
 * offsets; a piece is a range [a, b) of code points, and the GPT-2 pattern
 * runs inside one piece at a time, as if it were the whole text (its
 * look-ahead stops at the piece's end). */
#include "pretok.h"

#include "mem.h"
#include "ucd.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { C_OTHER, C_LETTER, C_NUMBER, C_SPACE, C_END };

struct text {
	uint32_t *cp;  /* (n) code points */
	size_t *off;   /* (n + 1) byte offset of each, then the end */
	size_t n;
};

/* One UTF-8 character at s (len bytes left): its code point and length;
 * an invalid sequence is one byte, returned as 0xFFFFFFFF. */
static uint32_t utf8(const unsigned char *s, size_t len, size_t *cl)
{
	unsigned lead = s[0];
	int k = lead < 0x80 ? 0 : lead < 0xC2 ? -1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3
		: lead < 0xF5 ? 4 : -1;
	uint32_t cp;

	*cl = 1;
	if (k == 0)
		return lead;
	if (k < 0 || (size_t)k > len)
		return 0xFFFFFFFF;
	cp = lead & (0x7F >> k);
	for (int i = 1; i < k; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0xFFFFFFFF;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	*cl = (size_t)k;
	return cp;
}

static int cls(const struct text *t, size_t i, size_t end)
{
	uint32_t c;

	if (i >= end)
		return C_END;
	c = t->cp[i];
	if (c == 0xFFFFFFFF)
		return C_OTHER;
	return ucd_is_letter(c) ? C_LETTER : ucd_is_number(c) ? C_NUMBER
	       : ucd_is_space(c) ? C_SPACE : C_OTHER;
}

/* The GPT-2 pattern over code points [a, b): appends word ends (code point
 * indexes) to ends. */
static size_t gpt2(const struct text *t, size_t a, size_t b, size_t *ends,
		   size_t n)
{
	for (size_t i = a; i < b;) {
		uint32_t c = t->cp[i];
		int k, k2;
		size_t ws = 0;

		if (c == '\'' && i + 1 < b) {
			uint32_t c1 = t->cp[i + 1], c2 = i + 2 < b ? t->cp[i + 2] : 0;

			if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') {
				ends[n++] = i += 2;
				continue;
			}
			if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') ||
			    (c1 == 'l' && c2 == 'l')) {
				ends[n++] = i += 3;
				continue;
			}
		}
		k = cls(t, i, b);
		k2 = c == ' ' ? cls(t, i + 1, b) : k;
		if (k2 == C_LETTER || k2 == C_NUMBER || k2 == C_OTHER) {
			i += c == ' ';
			while (cls(t, i, b) == k2)
				i++;
			ends[n++] = i;
			continue;
		}
		while (cls(t, i + ws, b) == C_SPACE)
			ws++;
		if (ws > 1 && i + ws < b) /* \s+(?!\S): leave the last one */
			ws--;
		ends[n++] = i += ws ? ws : 1;
	}
	return n;
}

int pretok_find(const char *name)
{
	if (!strcmp(name, "gpt2"))
		return PRETOK_GPT2;
	if (!strcmp(name, "smollm") || !strcmp(name, "starcoder") ||
	    !strcmp(name, "refact"))
		return PRETOK_DIGITS_GPT2;
	return -1;
}

size_t pretok_split(enum pretok_kind k, const char *s, size_t n, size_t *ends)
{
	struct text t = { xmalloc(sizeof(uint32_t) * (n + 1)),
			  xmalloc(sizeof(size_t) * (n + 1)), 0 };
	size_t *cut = xmalloc(sizeof(size_t) * (n + 1)), nw = 0;

	for (size_t at = 0, cl; at < n; at += cl) {
		t.off[t.n] = at;
		t.cp[t.n++] = utf8((const unsigned char *)s + at, n - at, &cl);
	}
	t.off[t.n] = n;
	if (k == PRETOK_DIGITS_GPT2) {
		size_t a = 0;

		for (size_t i = 0; i < t.n; i++)
			if (cls(&t, i, t.n) == C_NUMBER) {
				nw = gpt2(&t, a, i, cut, nw);
				cut[nw++] = i + 1;
				a = i + 1;
			}
		nw = gpt2(&t, a, t.n, cut, nw);
	} else {
		nw = gpt2(&t, 0, t.n, cut, nw);
	}
	for (size_t i = 0; i < nw; i++)
		ends[i] = t.off[cut[i]];
	free(t.cp);
	free(t.off);
	free(cut);
	return nw;
}
