/* rt.c: the clock and the stop signals. rt_signal is written only by the
 * handler (and reset by rt_signals_catch); the handlers it replaced are kept
 * until rt_signals_restore puts them back. */
#include "rt.h"

#include <time.h>

double rt_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

volatile sig_atomic_t rt_signal;
static struct sigaction old_int, old_term;

static void on_signal(int sig)
{
	rt_signal = sig;
}

void rt_signals_catch(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	rt_signal = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
}

void rt_signals_restore(void)
{
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
}
