/* fmt.h: number formatting for the CSV writers, printf's bytes faster;
 * and a list of names for the messages that say what there is.
 *
 * fmt_g9 writes a double as printf's "%.9g" does in the C locale, byte for
 * byte; fmt_field writes one value by a printf format, taking "%.9g" and
 * the plain integer formats the fast way and the rest through vfprintf. */
#ifndef HS_FMT_H
#define HS_FMT_H

#include <stdio.h>

#define FMT_G9_MAX 32 /* bytes fmt_g9 may write, its terminating NUL included */

/* Writes v as "%.9g" into buf (FMT_G9_MAX bytes at least); returns its
 * length. */
int fmt_g9(char *buf, double v);

/* fprintf(f, spec, value) for one value. */
void fmt_field(FILE *f, const char *spec, ...);

/* names (NULL-terminated) joined by ", " into buf (n bytes), cut where
 * they do not fit; "none" for none. Returns buf. */
const char *fmt_names(char *buf, size_t n, const char *const *names);

#endif
