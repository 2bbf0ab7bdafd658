/* err.c: error messages, and the abort of a programmer's bug.
 *
 * A struct err holds one message; err_prefix shifts it right to make room for
 * context, truncating at the buffer's end (the buffer is always terminated). */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

char *err_quotable(char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max)
		s[n = max] = '\0';
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			s[i] = '?';
	return s;
}

_Noreturn void hs_abort(const char *file, int line, const char *what)
{
	fflush(stdout);
	fprintf(stderr, "hybridspec: bug at %s:%d: '%s' does not hold\n", file,
		line, what);
	abort();
}
