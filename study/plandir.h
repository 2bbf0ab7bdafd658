/* plandir.h: a plan searched and its answer written to a results folder
 * (docs/plan.md): each used candidate's search a task of the farm
 * (study/farm.h), then the answer, its evidence, every point simulated and
 * the Pareto front in the folder, which appears whole or not at all. */
#ifndef HS_PLANDIR_H
#define HS_PLANDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "plan.h"

struct plandir_opts {
	const char *dir; /* borrowed: the results folder */
	bool replace;	 /* an existing results folder may be replaced */
	int jobs;	 /* worker processes; 0: the online CPUs */
	bool quiet;	 /* no line a candidate on stderr */
	int rank, size;	 /* MPI (farm_mpi_init); 0 and 1 without */
};

/* plandir_result's status, an exit status: an answer, none, bad input */
enum { PLANDIR_ANSWER = 0, PLANDIR_NONE = 1, PLANDIR_BAD = 2 };

/* What the search found (rank 0's; the others have only status). */
struct plandir_result {
	int status;	       /* PLANDIR_*: none meets the SLO; e says; or
				  128 + N, stopped by signal N */
	size_t n_candidates;   /* the candidates searched */
	int workers;	       /* a rank's workers */
	size_t n_points;       /* configurations simulated */
	bool answer;	       /* a candidate meets the SLO */
	struct plan_point best;  /* the answer, else the best attainment */
	bool below_known;      /* the answer's proof was simulated: */
	struct plan_point below; /* a replica fewer (the replicas question) or
				    the next load up (the rate question) */
	const char *binds;     /* static: "TPOT", "TTFT", "the seeds' interval",
				  "nothing measured" or "none" (an answer) */
	bool front_drawn;      /* gnuplot drew front.png */
};

/* Searches p's candidates and writes o->dir (rank 0). */
void plandir_run(const struct plan *p, const struct plandir_opts *o,
		 struct plandir_result *r, struct err *e);

#endif
