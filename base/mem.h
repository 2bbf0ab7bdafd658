/* mem.h: allocation that cannot fail quietly, and the aligned allocator
 * for what vector code streams (weights, activations, the event heap). */
#ifndef HS_MEM_H
#define HS_MEM_H

#include <stddef.h>

/* Out of memory aborts with the caller's file and line (hs_abort). */
void *hs_xmalloc_at(size_t n, const char *file, int line);
void *hs_xcalloc_at(size_t n, size_t size, const char *file, int line);
void *hs_xrealloc_at(void *p, size_t n, const char *file, int line);
char *hs_xstrdup_at(const char *s, const char *file, int line);
/* n bytes (rounded up to 64), zeroed, on a 64-byte boundary: a cache
 * line, where vector loads must not straddle two (free with free). From
 * 2 MB up, on a 2 MB boundary and asked for transparent huge pages
 * (Linux): weights streamed from memory then cost one TLB miss per 2 MB,
 * not one per 4 KB page (measured: docs/performance.md, "W4A16
 * kernels"). Every such block gets the hint, not only weights; a block
 * glibc serves from memory already touched keeps the pages it has. */
void *hs_xcalloc64_at(size_t n, const char *file, int line);
#define xmalloc(n) hs_xmalloc_at((n), __FILE__, __LINE__)
#define xcalloc64(n) hs_xcalloc64_at((n), __FILE__, __LINE__)
#define xcalloc(n, size) hs_xcalloc_at((n), (size), __FILE__, __LINE__)
#define xrealloc(p, n) hs_xrealloc_at((p), (n), __FILE__, __LINE__)
#define xstrdup(s) hs_xstrdup_at((s), __FILE__, __LINE__)

#endif
