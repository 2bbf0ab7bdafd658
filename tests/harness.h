/* harness.h: a small test harness.
 *
 * A suite is an array of struct tcase ending in {0}; main.c lists the
 * suites. CHECK records a failure with file and line and lets the case go on;
 * a case passes when it recorded none. The run ends with "N passed, N failed". */
#ifndef HS_HARNESS_H
#define HS_HARNESS_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

struct tcase {
	const char *name;
	void (*fn)(void);
};

extern int t_failures; /* failures recorded in the running case */

void t_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define CHECK(cond)                                                     \
	do {                                                            \
		if (!(cond))                                            \
			t_fail(__FILE__, __LINE__, "%s", #cond);        \
	} while (0)

#define CHECK_MSG(cond, ...)                                            \
	do {                                                            \
		if (!(cond))                                            \
			t_fail(__FILE__, __LINE__, __VA_ARGS__);        \
	} while (0)

/* Marks the running case skipped, with the reason (printed plainly): for
 * cases that need what this machine lacks (a GPU). A skipped case counts
 * as neither passed nor failed. */
void t_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* |a - b| <= tol */
#define CHECK_NEAR(a, b, tol)                                           \
	do {                                                            \
		double a_ = (a), b_ = (b), tol_ = (tol);                \
		if (!(fabs(a_ - b_) <= tol_))                           \
			t_fail(__FILE__, __LINE__,                      \
			       "%s = %.9g, %s = %.9g, differ by more "  \
			       "than %.3g", #a, a_, #b, b_, tol_);      \
	} while (0)

/* Gives the binary (which t_run starts in the case's folder) absolute
 * model and data folders (tests/tdirs.c). */
void t_absolute_dirs(void);
/* Whether the models folder is there; a failure when it is not. */
int t_need_models(void);

/* A fresh temporary directory for the running case (removed at exit). */
const char *t_tmpdir(void);
/* Writes text to t_tmpdir()/name and returns the path (static buffer
 * reused every 8 calls). */
const char *t_write(const char *name, const char *text);

/* Whether t_tmpdir()/name exists. */
int t_exists(const char *name);
/* The pid of a child that has exited and been reaped: no process's now
 * (a killed run's, for the temporaries it leaves) */
long t_dead_pid(void);

/* The whole file t_tmpdir()/name, NUL-terminated (caller frees), or NULL
 * if it cannot be read. */
char *t_slurp(const char *name);

/* Runs the hybridspec binary with args (a shell word list), stdout and
 * stderr captured into out (NUL-terminated, truncated at n). Returns the
 * exit status, or -1 if it did not exit normally; a run that hangs is
 * killed after T_RUN_LIMIT_S (124, or 137 where it ignored SIGTERM), so a
 * hang fails its case rather than the suite. */
enum { T_RUN_LIMIT_S = 600 };
int t_run(const char *args, char *out, size_t n);

/* Runs the suites (NULL-terminated case arrays) and prints one line a case
 * and "N passed, N failed"; returns the exit status. */
int t_main(const struct tcase *const *suites, size_t n_suites, int argc,
	   char **argv);

#endif
