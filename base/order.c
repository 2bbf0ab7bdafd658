/* order.c: ascending order of doubles and the median through it. */
#include "order.h"

#include <stdlib.h>

int order_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double order_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), order_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
