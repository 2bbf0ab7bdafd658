/* rt.c: the clock, the process's memory, the stop signals and tied
 * children. rt_signal is written only by the
 * handler (and reset by rt_signals_catch); the handlers it replaced are kept
 * until rt_signals_restore puts them back. */
#include "rt.h"

#include <stdio.h>
#include <sys/resource.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <time.h>
#include <unistd.h>

double rt_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void rt_pause_s(double s, bool spin)
{
	double end = rt_now_s() + s;

	if (spin) {
		while (rt_now_s() < end)
			;
		return;
	}
	while (s > 0) {
		nanosleep(&(struct timespec){ (time_t)s,
			  (long)((s - (double)(time_t)s) * 1e9) }, NULL);
		s = end - rt_now_s();
	}
}

long rt_rss_kb(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size, resident = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

long rt_max_rss_kb(long now_kb)
{
	struct rusage u;

	/* the kernel's two counts differ by a few pages: the peak is never
	 * below the present */
	if (getrusage(RUSAGE_SELF, &u) < 0)
		return now_kb;
	return u.ru_maxrss > now_kb ? u.ru_maxrss : now_kb;
}

volatile sig_atomic_t rt_signal, rt_signal_count;
/* the signals a stop is asked with: ^C, kill, a closed terminal */
static const int stops[] = { SIGINT, SIGTERM, SIGHUP };
#define N_STOPS (sizeof(stops) / sizeof(stops[0]))
static struct sigaction old_stops[N_STOPS];

static void on_signal(int sig)
{
	rt_signal = sig;
	rt_signal_count++;
}

void rt_signals_catch(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	rt_signal = rt_signal_count = 0;
	for (size_t i = 0; i < N_STOPS; i++)
		sigaction(stops[i], &sa, &old_stops[i]);
}

void rt_signals_restore(void)
{
	for (size_t i = 0; i < N_STOPS; i++)
		sigaction(stops[i], &old_stops[i], NULL);
}

pid_t rt_fork_tied(int sig)
{
	pid_t parent = getpid(), pid = fork();

	if (pid != 0)
		return pid;
	for (size_t i = 0; i < N_STOPS; i++)
		signal(stops[i], SIG_DFL);
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, sig);
	if (getppid() != parent) /* it died before the tie was made */
		_exit(128 + sig);
#else
	(void)parent;
	(void)sig;
#endif
	return 0;
}
