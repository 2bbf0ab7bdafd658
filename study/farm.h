/* farm.h: a study's tasks run by worker processes or MPI ranks.
 *
 * A study (a sweep's runs, a plan's candidates, a validation's points) is
 * a list of tasks 0 .. n-1, each independent and each leaving its result
 * on disk. farm_run takes this rank's share (task k belongs to rank
 * k mod size), skips the tasks already done (a resume), and runs the rest
 * in forked workers that take the next task from a counter in shared
 * memory, or in this process (jobs 1 without MPI, or in_process), with one
 * progress line on stderr. Built with -DHS_MPI (make MPI=1), the farm_mpi_
 * calls join the ranks; without it they are the one-rank identities. */
#ifndef HS_FARM_H
#define HS_FARM_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct farm {
	size_t n_tasks;
	void *ctx; /* borrowed: given to the callbacks */
	/* runs task k (in a worker, or in this process); 0, or -1 with e */
	int (*run)(void *ctx, size_t k, struct err *e);
	/* whether task k is done already (NULL: none is) */
	bool (*done)(void *ctx, size_t k);
	/* the point task k belongs to, in [0, n_points), for the progress
	 * line's points (NULL: a point a task) */
	size_t (*point)(void *ctx, size_t k);
	size_t n_points;
	const char *label; /* borrowed: the progress line's name */
	const char *what;  /* borrowed: what a task is called ("runs") */
	int jobs;	   /* worker processes; 0: the online CPUs */
	bool in_process;   /* run in this process, not in workers (a caller
			      that catches SIGINT and SIGTERM, rt.h, has
			      them stop it between tasks) */
	bool progress;	   /* the progress line even when stderr is no tty */
	bool quiet;	   /* no progress line */
	int rank, size;	   /* this rank of size (0 and 1 without MPI) */
};

/* What farm_run did: status 0 every task done; FARM_FAILED a worker
 * crashed; FARM_BAD a task failed (msg says why); 128 + N stopped by
 * signal N (the workers stopped after their task or at once). */
enum { FARM_FAILED = 1, FARM_BAD = 2 }; /* the exit statuses 1 and 2 */
struct farm_result {
	int status;
	int jobs;	   /* the workers used */
	size_t kept, done; /* this rank's tasks found done, and done now */
	size_t todo;	   /* this rank's tasks not found done */
	char msg[1024];	   /* the first failed task's message */
};
void farm_run(const struct farm *f, struct farm_result *r);

/* The workers farm_run uses for todo tasks: f->jobs, else one under MPI,
 * else the online CPUs; never more than todo, at least one. */
int farm_workers(const struct farm *f, size_t todo);

/* MPI: joins the ranks (rank 0 of 1 without MPI); the status every rank
 * agrees on (the largest); rank 0's status and buffer given to every rank;
 * sums over the ranks; the end. */
void farm_mpi_init(int *argc, char ***argv, int *rank, int *size);
int farm_mpi_max(int status);
void farm_mpi_share(int *status, char *buf, size_t n);
void farm_mpi_sum(size_t *v, int n);
void farm_mpi_end(void);

#endif
