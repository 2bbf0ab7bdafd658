/* err.c: error messages and checked allocation.
 *
 * A struct err holds one message; err_prefix shifts it right to make room for
 * context, truncating at the buffer's end (the buffer is always terminated). */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* a transparent huge page on x86-64 (and aarch64 with 4 KB base pages) */
#define HUGE_PAGE_BYTES ((size_t)2 << 20)

int err_set(struct err *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int err_prefix(struct err *e, const char *fmt, ...)
{
	char head[512], old[sizeof(e->msg)];
	size_t n;
	va_list ap;

	if (!e)
		return -1;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof(old));
	n = strlen(head);
	if (n > sizeof(e->msg) - 3)
		n = sizeof(e->msg) - 3;
	memcpy(e->msg, head, n);
	memcpy(e->msg + n, ": ", 2);
	n += 2;
	strncpy(e->msg + n, old, sizeof(e->msg) - n - 1);
	e->msg[sizeof(e->msg) - 1] = '\0';
	return -1;
}

_Noreturn void hs_abort(const char *file, int line, const char *what)
{
	fflush(stdout);
	fprintf(stderr, "hybridspec: bug at %s:%d: '%s' does not hold\n", file,
		line, what);
	abort();
}

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
