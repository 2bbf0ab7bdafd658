/* sweepdir.h: a sweep run into its results folder (docs/sweep.md): the
 * folder readied (new, or with resume one whose finished runs still match
 * the sweep), every run still to do given to the farm (study/farm.h), and
 * sweep.csv written once every run is done. */
#ifndef HS_SWEEPDIR_H
#define HS_SWEEPDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "sweep.h"

struct sweepdir_opts {
	const char *dir;     /* borrowed: the results folder */
	int jobs;	     /* worker processes; 0: the online CPUs */
	bool resume;	     /* keep the finished runs in dir, do the rest */
	bool replace;	     /* a sweep's dir already there starts over */
	bool progress, quiet; /* the farm's progress line */
	int rank, size;	     /* MPI (farm_mpi_init); 0 and 1 without */
};

struct sweepdir_result {
	int status;	      /* 0; FARM_FAILED, FARM_BAD (e says why); 128 + N */
	size_t runs, kept;    /* runs done now and found done, every rank's */
	size_t empty;	      /* runs that measured no finished request */
	int workers;	      /* the workers a rank used (or the ranks) */
};

/* Runs s into o->dir; rank 0 readies the folder and writes sweep.csv. On
 * an error e says what; a run that failed or a signal leaves the finished
 * runs in place (resume finishes them) and no temporary litter. */
void sweepdir_run(const struct sweep *s, const struct sweepdir_opts *o,
		  struct sweepdir_result *r, struct err *e);

#endif
