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

/* Input text made fit to quote in a message, in place: cut to max bytes,
 * each byte outside printable ASCII (a binary file's) a '?'. Returns s. */
char *err_quotable(char *s, size_t max);

_Noreturn void hs_abort(const char *file, int line, const char *what);

#define HS_ASSERT(cond) \
	((cond) ? (void)0 : hs_abort(__FILE__, __LINE__, #cond))

#endif
