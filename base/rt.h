/* rt.h: what a long-running piece of the process shares with the rest: a
 * monotonic clock, the stop signals (SIGINT, SIGTERM, SIGHUP) it polls to end
 * cleanly (run, sweep, serve, validate, calibration), and children that
 * do not outlive it. */
#ifndef HS_RT_H
#define HS_RT_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* Seconds on a monotonic clock. */
double rt_now_s(void);

/* Waits s seconds: polling the clock (spin, the CPU stays awake) or
 * asleep. */
void rt_pause_s(double s, bool spin);

/* The number of the SIGINT, SIGTERM or SIGHUP caught since
 * rt_signals_catch, or 0; how many were caught (a second one can mean
 * "now"). */
extern volatile sig_atomic_t rt_signal, rt_signal_count;
/* The process's resident memory now, and at its peak (never below now_kb,
 * a reading of rt_rss_kb), in KiB; -1 when the system does not say. */
long rt_rss_kb(void);
long rt_max_rss_kb(long now_kb);

/* Catches SIGINT, SIGTERM and SIGHUP into rt_signal and rt_signal_count,
 * which it resets to 0. */
void rt_signals_catch(void);
/* Puts back the handlers rt_signals_catch replaced. */
void rt_signals_restore(void);

/* fork(2), the child tied to its parent: SIGINT, SIGTERM and SIGHUP back
 * to their defaults, and (on Linux) sig sent to it when the parent dies,
 * so that a parent killed outright leaves no process behind. */
pid_t rt_fork_tied(int sig);

#endif
