/* mem.c: checked allocation. Every block comes back non-NULL (a request
 * of 0 bytes gets 1) or the process aborts at the caller's site; the 64-byte
 * aligned blocks are zeroed and freed with free like the others. */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include "mem.h"

#include "err.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* a transparent huge page on x86-64 (and aarch64 with 4 KB base pages) */
#define HUGE_PAGE_BYTES ((size_t)2 << 20)

void *hs_xmalloc_at(size_t n, const char *file, int line)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		hs_abort(file, line, "out of memory");
	return p;
}

void *hs_xcalloc_at(size_t n, size_t size, const char *file, int line)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		hs_abort(file, line, "out of memory");
	return p;
}

void *hs_xcalloc64_at(size_t n, const char *file, int line)
{
	size_t bytes = (n ? n + 63 : 64) / 64 * 64;
	size_t align = bytes >= HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : 64;
	void *p;

	if (posix_memalign(&p, align, bytes))
		hs_abort(file, line, "out of memory");
#ifdef MADV_HUGEPAGE
	/* before the first touch, so that the pages come huge; only a hint:
	 * where the kernel refuses, the block keeps small pages */
	if (align == HUGE_PAGE_BYTES)
		(void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
	memset(p, 0, bytes);
	return p;
}

void *hs_xrealloc_at(void *p, size_t n, const char *file, int line)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		hs_abort(file, line, "out of memory");
	return q;
}

char *hs_xstrdup_at(const char *s, const char *file, int line)
{
	size_t n = strlen(s) + 1;

	return memcpy(hs_xmalloc_at(n, file, line), s, n);
}
