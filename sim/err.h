/* err.h: the two kinds of failure.
 *
 * Bad input (configs, model files, profiles) is reported through a struct err:
 * a function that can fail on input returns -1 and fills the message, which
 * says what and where ("configs/x.json: /seed: expected an integer >= 0, got
 * -1"); the caller adds context or prints it. Programmer bugs abort at once
 * with file and line (HS_ASSERT), in every build. */
#ifndef HS_ERR_H
#define HS_ERR_H

#include <stddef.h>

struct err {
	char msg[1024]; /* lowercase, no trailing period; "" while no error */
};

/* Formats the message into e (if e is not NULL) and returns -1, so that
 * "return err_set(e, ...)" reads as the error path. */
int err_set(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prepends "prefix: " to the message already in e. Returns -1. */
int err_prefix(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

_Noreturn void hs_abort(const char *file, int line, const char *what);

#define HS_ASSERT(cond) \
	((cond) ? (void)0 : hs_abort(__FILE__, __LINE__, #cond))

/* Allocation that cannot fail quietly: out of memory aborts with the site. */
void *hs_xmalloc_at(size_t n, const char *file, int line);
void *hs_xcalloc_at(size_t n, size_t size, const char *file, int line);
void *hs_xrealloc_at(void *p, size_t n, const char *file, int line);
char *hs_xstrdup_at(const char *s, const char *file, int line);
/* n bytes (rounded up to 64), zeroed, on a 64-byte boundary: a cache
 * line, where vector loads must not straddle two (free with free). From
 * 2 MB up, on a 2 MB boundary and asked for transparent huge pages
 * (Linux): weights streamed from memory then cost one TLB miss per 2 MB,
 * not one per 4 KB page (measured: README, "W4A16 kernels"). Every
 * such block gets the hint, not only weights; a block glibc serves from
 * memory already touched keeps the pages it has. */
void *hs_xcalloc64_at(size_t n, const char *file, int line);
#define xmalloc(n) hs_xmalloc_at((n), __FILE__, __LINE__)
#define xcalloc64(n) hs_xcalloc64_at((n), __FILE__, __LINE__)
#define xcalloc(n, size) hs_xcalloc_at((n), (size), __FILE__, __LINE__)
#define xrealloc(p, n) hs_xrealloc_at((p), (n), __FILE__, __LINE__)
#define xstrdup(s) hs_xstrdup_at((s), __FILE__, __LINE__)

#endif
