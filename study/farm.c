/* farm.c: a study's tasks in forked workers or MPI ranks (farm.h).
 *
 * The parent lists this rank's tasks that are not done, maps a struct
 * shared that every worker sees, and forks the workers; each takes the
 * next task from the shared counter, so a slow task holds up only its own
 * worker, and counts it done (and its point, when its last task is). The
 * parent redraws the progress line while it waits. Invariant: a task is
 * counted in runs_done only after its run returned 0, and failed is set by
 * the first task that fails (its message in msg); no worker takes a task
 * after failed is set. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "farm.h"

#include "mem.h"
#include "rt.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef HS_MPI
#include <mpi.h>
#endif

/* What the workers share with the parent (an anonymous shared mapping). */
struct shared {
	atomic_size_t next;	   /* the next of the tasks to take */
	atomic_size_t runs_done;   /* tasks finished since the start */
	atomic_size_t points_done; /* points with every task done */
	atomic_int failed;	   /* set by the first task that fails */
	char msg[1024];		   /* its message */
	atomic_uint left[];	   /* (n_points) tasks still to do a point */
};

struct progress {
	bool on, tty;	    /* tty: one line, redrawn; else a line a second */
	double t0;	    /* rt_now_s() at the start */
	size_t points;	    /* this rank's points */
	size_t tasks, todo; /* this rank's tasks; those to do now */
	size_t kept;	    /* tasks found done */
	char last[256];	    /* the line last shown */
	double last_s;	    /* when (not a terminal) */
};

struct crew {
	const struct farm *f;
	const size_t *tasks; /* (n) the task numbers to do */
	size_t n;
	struct shared *sh;
	struct progress pg;
};

static size_t point_of(const struct farm *f, size_t k)
{
	return f->point ? f->point(f->ctx, k) : k;
}

static void fmt_time(char *buf, size_t n, double s)
{
	long t = (long)(s + 0.5);

	if (t < 60)
		snprintf(buf, n, "%lds", t);
	else if (t < 3600)
		snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
	else
		snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

static void progress_show(struct crew *c)
{
	struct progress *pg = &c->pg;
	size_t done = atomic_load(&c->sh->runs_done);
	double el = rt_now_s() - pg->t0;
	char line[256], elapsed[32], eta[32] = "--";

	if (!pg->on)
		return;
	fmt_time(elapsed, sizeof(elapsed), el);
	if (done == pg->todo)
		snprintf(eta, sizeof(eta), "0s");
	else if (done > 0)
		fmt_time(eta, sizeof(eta),
			 el * (double)(pg->todo - done) / (double)done);
	snprintf(line, sizeof(line), "%s: %zu/%zu points, %zu/%zu %s, %s "
		 "elapsed, ETA %s", c->f->label, atomic_load(&c->sh->points_done),
		 pg->points, pg->kept + done, pg->tasks, c->f->what, elapsed, eta);
	if (!strcmp(line, pg->last))
		return;
	if (!pg->tty && el - pg->last_s < 1 && done < pg->todo && pg->last[0])
		return;
	snprintf(pg->last, sizeof(pg->last), "%s", line);
	pg->last_s = el;
	fprintf(stderr, pg->tty ? "\r%s\033[K" : "%s\n", line);
	fflush(stderr);
}

static void progress_end(struct progress *pg)
{
	if (pg->on && pg->tty && pg->last[0])
		fputc('\n', stderr);
	pg->last[0] = '\0';
}

/* Takes tasks until none is left, one failed, or a signal was caught
 * (rt_signal: a caller in this process that catches them stops between
 * tasks); in this process (show set), shows progress after each. Returns
 * 0 or -1. */
static int work(struct crew *c, bool show)
{
	struct shared *sh = c->sh;
	struct err e;

	while (!atomic_load(&sh->failed) && !rt_signal) {
		size_t i = atomic_fetch_add(&sh->next, 1), k;

		if (i >= c->n)
			break;
		k = c->tasks[i];
		if (c->f->run(c->f->ctx, k, &e) < 0) {
			if (!atomic_exchange(&sh->failed, 1))
				snprintf(sh->msg, sizeof(sh->msg), "%s", e.msg);
			return -1;
		}
		if (atomic_fetch_sub(&sh->left[point_of(c->f, k)], 1) == 1)
			atomic_fetch_add(&sh->points_done, 1);
		atomic_fetch_add(&sh->runs_done, 1);
		if (show)
			progress_show(c);
	}
	return 0;
}

/* The first failure's message, unless one is there already. */
static void fail_once(struct shared *sh, const char *msg)
{
	if (!atomic_exchange(&sh->failed, 1))
		snprintf(sh->msg, sizeof(sh->msg), "%s", msg);
}

static pid_t spawn(struct crew *c)
{
	pid_t pid = rt_fork_tied(SIGTERM);

	if (pid != 0)
		return pid;
	_exit(rt_signal ? 128 + rt_signal : work(c, false) < 0 ? FARM_BAD : 0);
}

/* One worker's end: a crash stops the others after their task. */
static int reap(struct crew *c, int st, bool stopping)
{
	char msg[64];

	if (WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == FARM_BAD))
		return 0; /* a failed task's message is in sh->msg */
	if (stopping || rt_signal)
		return 0;
	snprintf(msg, sizeof(msg), "a worker %s %d", WIFSIGNALED(st) ?
		 "died of signal" : "exited with status", WIFSIGNALED(st) ?
		 WTERMSIG(st) : WEXITSTATUS(st));
	fail_once(c->sh, msg);
	return FARM_FAILED;
}

/* Forks the workers and waits for them, showing progress; on SIGINT or
 * SIGTERM stops them. Returns a status of farm_result. */
static int work_forked(struct crew *c, int jobs)
{
	pid_t *pids = xcalloc((size_t)jobs, sizeof(*pids));
	int alive = 0, rc = 0;
	bool stopping = false;

	rt_signals_catch();
	fflush(NULL);
	for (int i = 0; i < jobs; i++) {
		if ((pids[i] = spawn(c)) < 0) {
			char msg[256];

			snprintf(msg, sizeof(msg), "cannot start a worker: %s",
				 strerror(errno));
			fail_once(c->sh, msg);
			pids[i] = 0;
			break;
		}
		alive++;
	}
	while (alive > 0) {
		struct timespec nap = { 0, 50000000 };
		int st;
		pid_t pid;

		while (alive > 0 && (pid = waitpid(-1, &st, WNOHANG)) > 0) {
			alive--;
			for (int i = 0; i < jobs; i++)
				if (pids[i] == pid)
					pids[i] = 0;
			if (reap(c, st, stopping))
				rc = FARM_FAILED;
		}
		if (rt_signal && !stopping) {
			stopping = true;
			for (int i = 0; i < jobs; i++)
				if (pids[i] > 0)
					kill(pids[i], SIGTERM);
		}
		if (alive > 0) {
			progress_show(c);
			nanosleep(&nap, NULL);
		}
	}
	progress_show(c);
	rt_signals_restore();
	free(pids);
	if (rt_signal)
		return 128 + rt_signal;
	return rc == 0 && atomic_load(&c->sh->failed) ? FARM_BAD : rc;
}

/* This rank's tasks less those done, and the points they count in. */
static size_t *list_tasks(const struct farm *f, struct shared *sh,
			  struct farm_result *r, size_t *points)
{
	size_t *tasks = xcalloc(f->n_tasks ? f->n_tasks : 1, sizeof(*tasks));
	bool *seen = xcalloc(f->n_points ? f->n_points : 1, sizeof(*seen));
	int size = f->size > 0 ? f->size : 1;

	*points = 0;
	for (size_t k = 0; k < f->n_tasks; k++) {
		size_t p = point_of(f, k);

		if (k % (size_t)size != (size_t)f->rank)
			continue;
		if (!seen[p]) {
			seen[p] = true;
			++*points;
		}
		if (f->done && f->done(f->ctx, k)) {
			r->kept++;
			continue;
		}
		tasks[r->todo++] = k;
		atomic_fetch_add(&sh->left[p], 1);
	}
	for (size_t p = 0; p < f->n_points; p++)
		if (seen[p] && atomic_load(&sh->left[p]) == 0)
			atomic_fetch_add(&sh->points_done, 1);
	free(seen);
	return tasks;
}

int farm_workers(const struct farm *f, size_t todo)
{
	int jobs = f->jobs > 0 ? f->jobs : f->size > 1 ? 1
		   : (int)sysconf(_SC_NPROCESSORS_ONLN);

	if (jobs < 1)
		jobs = 1;
	if ((size_t)jobs > todo)
		jobs = todo > 0 ? (int)todo : 1;
	return jobs;
}

void farm_run(const struct farm *f, struct farm_result *r)
{
	size_t n_points = f->point ? f->n_points : f->n_tasks;
	size_t map_n = sizeof(struct shared) + n_points * sizeof(atomic_uint);
	struct shared *sh = mmap(NULL, map_n, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct farm g = *f;
	struct crew c;
	size_t points;
	int jobs;

	HS_ASSERT(sh != MAP_FAILED); /* zero-filled */
	*r = (struct farm_result){ 0 };
	g.n_points = n_points;
	c = (struct crew){ .f = &g, .sh = sh };
	c.tasks = list_tasks(&g, sh, r, &points);
	c.n = r->todo;
	c.pg = (struct progress){
		.on = !f->quiet && f->rank == 0 &&
		      (f->progress || isatty(STDERR_FILENO)),
		.tty = isatty(STDERR_FILENO), .t0 = rt_now_s(),
		.points = points, .tasks = r->todo + r->kept,
		.todo = r->todo, .kept = r->kept,
	};
	r->jobs = jobs = farm_workers(f, r->todo);
	progress_show(&c);
	if (r->todo > 0 && (f->in_process || (f->size > 1 && jobs == 1))) {
		int w = work(&c, true);

		r->status = rt_signal ? 128 + rt_signal : w < 0 ? FARM_BAD : 0;
	} else if (r->todo > 0)
		r->status = work_forked(&c, jobs);
	progress_end(&c.pg);
	r->done = atomic_load(&sh->runs_done);
	snprintf(r->msg, sizeof(r->msg), "%s", sh->msg);
	munmap(sh, map_n);
	free((size_t *)c.tasks);
}

#ifdef HS_MPI
void farm_mpi_init(int *argc, char ***argv, int *rank, int *size)
{
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
}

int farm_mpi_max(int status)
{
	MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return status;
}

void farm_mpi_share(int *status, char *buf, size_t n)
{
	MPI_Bcast(status, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (buf)
		MPI_Bcast(buf, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD);
}

void farm_mpi_sum(size_t *v, int n)
{
	unsigned long long mine[8] = { 0 }, all[8];

	HS_ASSERT(n <= 8);
	for (int i = 0; i < n; i++)
		mine[i] = v[i];
	MPI_Allreduce(mine, all, n, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
		      MPI_COMM_WORLD);
	for (int i = 0; i < n; i++)
		v[i] = (size_t)all[i];
}

void farm_mpi_end(void)
{
	MPI_Finalize();
}
#else
void farm_mpi_init(int *argc, char ***argv, int *rank, int *size)
{
	(void)argc;
	(void)argv;
	*rank = 0;
	*size = 1;
}

int farm_mpi_max(int status)
{
	return status;
}

void farm_mpi_share(int *status, char *buf, size_t n)
{
	(void)status;
	(void)buf;
	(void)n;
}

void farm_mpi_sum(size_t *v, int n)
{
	(void)v;
	(void)n;
}

void farm_mpi_end(void)
{
}
#endif
