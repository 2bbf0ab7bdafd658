/* fmt.c: "%.9g" by exact integer arithmetic.
 *
 * A finite non-zero double is a = m 2^e (m < 2^53) in magnitude. Its nine
 * significant digits are the integer q = a 10^(8 - E) rounded half to even,
 * E = floor(log10 a), which is num / den with num = m 10^k 2^e and den = 1
 * (k = 8 - E), each power moved to den when its exponent is negative: for
 * every value below 10^9 den is a power of two, and the division a shift.
 * Both are worked out exactly in 128-bit integers, and where one would not
 * fit (values below about 1e-13 or from 2^127 up, subnormals) snprintf
 * does the work. glibc's printf rounds the exact binary value half
 * to even too, so the two agree (tests/test_base.c compares them). The
 * digits are then laid out as %g does: fixed when -4 <= E < 9, else with an
 * exponent of two digits at least; trailing zeros dropped, the point with
 * them. */
#include "fmt.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef unsigned __int128 u128;

#define DIGITS 9
#define Q_MIN 100000000u /* 10^(DIGITS - 1) */
#define Q_END 1000000000u

static const uint64_t pow10_u64[20] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
	1000000000, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
	10000000000000ULL, 100000000000000ULL, 1000000000000000ULL,
	10000000000000000ULL, 100000000000000000ULL, 1000000000000000000ULL,
	10000000000000000000ULL,
};

static u128 pow10_u128(int k) /* 0 <= k <= 38 */
{
	return k <= 19 ? pow10_u64[k] : (u128)pow10_u64[19] * pow10_u64[k - 19];
}

/* m 2^e 10^k rounded toward zero into *q, and whether the rest is below,
 * at or above half (-1, 0, 1) into *half; false if it does not fit 127
 * bits. Worked out as num / den, each power on the side where its exponent
 * is positive; den is a power of two unless k < 0. */
static bool scaled(uint64_t m, int e, int k, u128 *q, int *half)
{
	u128 num = m, den = 1, r;

	/* m < 2^53 and 10^21 < 2^70: m 10^k fits for k <= 21 (a >= 1e-13) */
	if (k > 21 || k < -38 || e > 126 || e < -126)
		return false;
	if (k >= 0) {
		num *= pow10_u128(k);
	} else {
		den = pow10_u128(-k);
	}
	if (e >= 0) {
		if (num >> (127 - e))
			return false;
		num <<= e;
	} else {
		if (den >> (127 + e))
			return false;
		den <<= -e;
	}
	if (k >= 0) { /* den = 2^-e (or 1) */
		int s = e < 0 ? -e : 0;

		*q = num >> s;
		r = num - (*q << s);
	} else {
		*q = num / den;
		r = num - *q * den;
	}
	*half = r < den - r ? -1 : r > den - r;
	return true;
}

/* The nine digits of a > 0 finite and normal, and its decimal exponent;
 * false when they do not fit the 128-bit arithmetic. */
static bool nine_digits(double a, uint32_t *q_out, int *e10)
{
	uint64_t bits, m;
	int e, E, half;
	u128 q;

	memcpy(&bits, &a, sizeof(bits));
	if ((bits >> 52) == 0) /* subnormal */
		return false;
	m = (bits & ((UINT64_C(1) << 52) - 1)) | UINT64_C(1) << 52;
	e = (int)(bits >> 52) - 1075;
	/* 2^b <= a < 2^(b+1) puts E at floor(b log10 2) or one above */
	E = (int)floor((double)((int)(bits >> 52) - 1023) * 0.30102999566398120);
	for (int tries = 0;; tries++) {
		if (tries == 3 || !scaled(m, e, DIGITS - 1 - E, &q, &half))
			return false;
		if (q < Q_MIN)
			E--;
		else if (q >= Q_END)
			E++;
		else
			break;
	}
	if (half > 0 || (half == 0 && (q & 1)))
		q++;
	if (q == Q_END) { /* 999999999.5 and up: one more digit */
		q = Q_MIN;
		E++;
	}
	*q_out = (uint32_t)q;
	*e10 = E;
	return true;
}

int fmt_g9(char *buf, double v)
{
	char d[DIGITS], *p = buf;
	uint32_t q;
	int E, last;

	if (v == 0)
		return (int)strlen(strcpy(buf, signbit(v) ? "-0" : "0"));
	if (!isfinite(v) || !nine_digits(fabs(v), &q, &E))
		return snprintf(buf, FMT_G9_MAX, "%.9g", v);
	for (int i = DIGITS - 1; i >= 0; i--, q /= 10)
		d[i] = (char)('0' + q % 10);
	for (last = DIGITS - 1; last > 0 && d[last] == '0'; last--)
		;
	if (signbit(v))
		*p++ = '-';
	if (E < -4 || E >= DIGITS) {
		int x = E < 0 ? -E : E;

		*p++ = d[0];
		if (last > 0) {
			*p++ = '.';
			memcpy(p, d + 1, (size_t)last);
			p += last;
		}
		*p++ = 'e';
		*p++ = E < 0 ? '-' : '+';
		if (x >= 100)
			*p++ = (char)('0' + x / 100);
		*p++ = (char)('0' + x / 10 % 10);
		*p++ = (char)('0' + x % 10);
	} else if (E >= 0) {
		memcpy(p, d, (size_t)E + 1);
		p += E + 1;
		if (last > E) {
			*p++ = '.';
			memcpy(p, d + E + 1, (size_t)(last - E));
			p += last - E;
		}
	} else {
		*p++ = '0';
		*p++ = '.';
		for (int i = 0; i < -E - 1; i++)
			*p++ = '0';
		memcpy(p, d, (size_t)last + 1);
		p += last + 1;
	}
	*p = '\0';
	return (int)(p - buf);
}

/* The decimal digits of x, a sign before them if negative. */
static void put_integer(FILE *f, bool negative, unsigned long long x)
{
	char b[24], *p = b + sizeof(b);

	do
		*--p = (char)('0' + x % 10);
	while (x /= 10);
	if (negative)
		*--p = '-';
	fwrite(p, 1, (size_t)(b + sizeof(b) - p), f);
}

void fmt_field(FILE *f, const char *spec, ...)
{
	va_list ap;

	va_start(ap, spec);
	if (!strcmp(spec, "%.9g")) {
		char b[FMT_G9_MAX];

		fwrite(b, 1, (size_t)fmt_g9(b, va_arg(ap, double)), f);
	} else if (!strcmp(spec, "%d")) {
		int x = va_arg(ap, int);

		put_integer(f, x < 0, x < 0 ? 0 - (unsigned long long)x
					    : (unsigned long long)x);
	} else if (!strcmp(spec, "%u")) {
		put_integer(f, false, va_arg(ap, unsigned));
	} else if (!strcmp(spec, "%llu")) {
		put_integer(f, false, va_arg(ap, unsigned long long));
	} else {
		vfprintf(f, spec, ap);
	}
	va_end(ap);
}

const char *fmt_names(char *buf, size_t n, const char *const *names)
{
	size_t at = 0;

	snprintf(buf, n, "none");
	for (int i = 0; names[i] && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? ", " : "",
				       names[i]);
	return buf;
}
