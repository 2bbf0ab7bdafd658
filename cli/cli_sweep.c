/* cli_sweep.c: "hybridspec sweep": a sweep file's runs into a results
 * folder (study/sweepdir.h), in worker processes or MPI ranks, and the
 * line that says what was done. */
#include "cli.h"
#include "rt.h"

#include "farm.h"
#include "sweepdir.h"

#include <stdio.h>

static const struct opt_cmd sweep_cmd = {
	.name = "sweep",
	.usage = "SWEEP.json [-j N] [-o DIR] [--resume | --overwrite]\n"
		 " [--progress | --quiet]",
	.about = "Runs a base config at every point of a grid and/or zipped lists of\n"
		 "overrides (JSON pointers into the config), once per seed, and writes\n"
		 "DIR (default results/runs/NAME, NAME the sweep's name):\n"
		 "  sweep.json                   the resolved sweep and its points\n"
		 "  points/P/seed-S/             each run: summary.json,\n"
		 "                               config.resolved.json, perf.json\n"
		 "  sweep.csv                    a row per point: the varied values,\n"
		 "                               n_seeds, and for each metric its mean\n"
		 "                               over the seeds and the half-width of\n"
		 "                               its 95% confidence interval\n"
		 "Every point is checked before any runs: a bad one writes nothing. Each\n"
		 "run directory appears whole or not at all, and sweep.csv only once\n"
		 "every run is done, so an interrupted sweep leaves no partial file; run\n"
		 "it again with --resume to finish it. The format is in docs/sweep.md.\n"
#ifdef HS_MPI
		 "\nBuilt with MPI: under mpirun, each rank runs every N-th run (in one\n"
		 "process, or in -j workers), rank 0 writes sweep.csv; DIR must be on a\n"
		 "file system that every rank sees.\n"
#endif
	,
	.exit_status = "0 done, 1 a worker crashed, 2 bad usage or bad input,\n"
		       "128+N stopped by signal N (finish with --resume)",
	.operands = "SWEEP.json",
	.min_operands = 1,
	.max_operands = 1,
	.conflicts = { { "resume", "overwrite" }, { "progress", "quiet" } },
};

/* The sweep in file run into its folder; the exit status. */
static int sweep_main(const char *file, const char *out,
		      struct sweepdir_opts *o)
{
	struct sweepdir_result r;
	struct sweep s;
	struct err e;
	char dir[1024], *warnings;
	double t0 = rt_now_s();

	/* every rank checks (and fails) alike; rank 0 says why */
	if (sweep_load(&s, file, &e) < 0 || sweep_check(&s, &warnings, &e) < 0) {
		sweep_release(&s); /* a no-op after a failed load */
		return o->rank == 0 ? cli_fail_file("sweep", file, e.msg)
				    : CLI_BAD_INPUT;
	}
	if (o->rank == 0 && !o->quiet)
		cli_warn("sweep", warnings);
	free(warnings);
	snprintf(dir, sizeof(dir), out ? "%s" : "results/runs/%s",
		 out ? out : s.name);
	o->dir = dir;
	sweepdir_run(&s, o, &r, &e);
	if (r.status >= 128) {
		char wf[4200], wo[4200];

		fprintf(stderr, "hybridspec: stopped by signal %d: %zu of %zu runs "
			"done; finish the sweep with: hybridspec sweep %s "
			"--resume%s%s\n", r.status - 128, r.kept + r.runs,
			s.n_points * s.n_seeds, cli_sh_word(file, wf, sizeof(wf)),
			out ? " -o " : "",
			out ? cli_sh_word(out, wo, sizeof(wo)) : "");
	} else if (r.status && o->rank == 0)
		cli_fail("%s", e.msg);
	else if (!r.status && o->rank == 0 && !o->quiet) {
		char line[256];

		if (r.empty) {
			snprintf(line, sizeof(line), "%zu of %zu runs measured "
				 "no finished request (a warm-up past the run's "
				 "end, or a horizon before a request ends): their "
				 "cells in sweep.csv are empty", r.empty,
				 s.n_points * s.n_seeds);
			cli_warn("sweep", line);
		}
		printf("sweep %s: %zu points x %zu seeds, %zu runs done, %zu kept; "
		       "%.1f s with %d %s%s; %s/sweep.csv\n", s.name, s.n_points,
		       s.n_seeds, r.runs, r.kept, rt_now_s() - t0, r.workers,
		       o->size > 1 ? "rank" : "worker", r.workers > 1 ? "s" : "",
		       dir);
	}
	sweep_release(&s);
	return r.status; /* FARM_FAILED and FARM_BAD are CLI_FAILED and
			    CLI_BAD_INPUT; 128 + N a signal */
}

int cli_sweep(int argc, char **argv)
{
	const char *out = NULL;
	long long jobs = 0;
	struct sweepdir_opts o = { 0 };
	bool resume = false, replace = false, progress = false, quiet = false;
	struct opt rows[] = {
		CLI_OPT_JOBS(&jobs),
		OPT_STR("out", 'o', &out, "DIR", "results directory"),
		OPT_FLAG("resume", 0, &resume,
			 "keep the finished runs in DIR, do the rest"),
		OPT_FLAG("overwrite", 0, &replace,
			 "start over in DIR if it holds a sweep (never one "
			 "holding a file a sweep does not write)"),
		OPT_FLAG("progress", 0, &progress,
			 "show progress even when stderr is not a terminal"),
		OPT_FLAG("quiet", 'q', &quiet, "print nothing on success, no progress"),
		OPT_END,
	};
	int rc;

	if ((rc = opt_parse(&sweep_cmd, rows, &argc, argv)) != OPT_GO)
		return rc;
	o = (struct sweepdir_opts){ .jobs = (int)jobs, .resume = resume,
				    .replace = replace,
				    .progress = progress, .quiet = quiet };
	farm_mpi_init(&argc, &argv, &o.rank, &o.size);
	rc = sweep_main(argv[0], out, &o);
	farm_mpi_end();
	return rc;
}
