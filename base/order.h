/* order.h: sorting numbers, and the median of a few of them (timing
 * repeats, errors of a check). */
#ifndef HS_ORDER_H
#define HS_ORDER_H

#include <stddef.h>

/* qsort's comparison of two doubles, ascending. */
int order_cmp_double(const void *a, const void *b);

/* The median of v (n >= 1), sorting v in place: the middle value, or the
 * mean of the two middle ones. */
double order_median(double *v, size_t n);

#endif
