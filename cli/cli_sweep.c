/* cli_sweep.c: "hybridspec sweep": the runs of a sweep in worker processes
 * (or MPI ranks), progress on a terminal, and the table at the end.
 *
 * A task is a run still to do: a point and a seed, numbered point-major
 * over the whole sweep. The parent lists its tasks and forks workers that
 * take the next task from a counter in shared memory, so a slow run holds
 * up only its own worker. A run's directory is written whole (outdir.h) and
 * is the only record of it: a run whose directory exists is done, which is
 * what --resume relies on, and the table is read back from the summaries
 * once every worker has exited. Invariant: DIR/sweep.csv exists only when
 * every run of DIR/sweep.json is done.
 *
 * Built with -DHS_MPI (make MPI=1), rank r of N takes the tasks whose number
 * is r modulo N, runs them in-process (or with -j, in its own workers), and
 * rank 0 writes the table once every rank is done; DIR must be on a file
 * system that every rank sees. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "cli.h"
#include "rt.h"
#include "rundir.h"

#include "cfg.h"
#include "outdir.h"
#include "report.h"
#include "sim.h"
#include "sweep.h"
#include "mem.h"
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/prctl.h>
#endif
#ifdef HS_MPI
#include <mpi.h>
#endif

static const char sweep_help[] =
	"usage: hybridspec sweep SWEEP.json [-j N] [-o DIR] [--resume]\n"
	"                        [--progress] [--quiet]\n"
	"\n"
	"Runs a base config at every point of a grid and/or zipped lists of\n"
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
	"\n"
	"  -j, --jobs N    worker processes (default: the online CPUs)\n"
	"  -o, --out DIR   results directory\n"
	"  --resume        keep the finished runs in DIR, do the rest\n"
	"  --progress      show progress even when stderr is not a terminal\n"
	"  --quiet         print nothing on success, no progress\n"
	"  -h, --help      this text\n"
#ifdef HS_MPI
	"\nBuilt with MPI: under mpirun, each rank runs every N-th run (in one\n"
	"process, or in -j workers), rank 0 writes sweep.csv; DIR must be on a\n"
	"file system that every rank sees.\n"
#endif
	"\nexit status: 0 done, 1 a worker crashed, 2 bad usage or bad input,\n"
	"128+N stopped by signal N (finish with --resume)\n";

struct task {
	size_t point, seed_i;
};

/* What the workers share with the parent (an anonymous shared mapping). */
struct shared {
	atomic_size_t next;        /* the next task to take */
	atomic_size_t runs_done;   /* runs finished since the start */
	atomic_size_t points_done; /* points with every run done */
	atomic_int failed;         /* set by the first run that fails */
	char msg[1024];            /* its message */
	atomic_uint left[];        /* (n_points) runs still to do per point */
};

struct progress {
	bool on, tty;        /* tty: one line, redrawn; else a line a second */
	const char *label;   /* borrowed: the sweep's name */
	double t0;           /* rt_now_s() at the start */
	size_t points;       /* points in the sweep (this rank's share) */
	size_t runs, todo;   /* runs in all; runs to do in this session */
	size_t runs_before;  /* runs found done (--resume) */
	char last[256];      /* the line last shown */
	double last_s;       /* when (not a terminal) */
};

struct job {
	const struct sweep *s;
	const char *dir;
	const struct task *tasks; /* (n_tasks) */
	size_t n_tasks;
	struct shared *sh;
	struct progress *pg;
};

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

static void progress_show(struct progress *pg, const struct shared *sh)
{
	size_t done = atomic_load(&sh->runs_done);
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
	snprintf(line, sizeof(line), "%s: %zu/%zu points, %zu/%zu runs, %s "
		 "elapsed, ETA %s", pg->label, atomic_load(&sh->points_done),
		 pg->points, pg->runs_before + done, pg->runs, elapsed, eta);
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

/* One run: its config, the simulation, its directory written whole. */
static int run_one(const struct sweep *s, const char *dir, size_t point,
		   size_t seed_i, struct err *e)
{
	char *out = sweep_run_dir(s, dir, point, seed_i);
	size_t n;
	char **sets = sweep_sets(s, point, s->seeds[seed_i], &n);
	struct rundir_opts o = { 0 };
	struct rundir_result r;
	struct cfg c;
	int rc;

	rc = cfg_load(&c, s->base, (const char *const *)sets, n, e);
	sweep_sets_free(sets, n);
	if (rc == 0) {
		rc = rundir_write(&c, out, &o, &r, e);
		json_decref(r.summary);
		cfg_release(&c);
	}
	if (rc < 0)
		err_prefix(e, "%s", out);
	free(out);
	return rc;
}

/* Takes tasks until none is left or a run failed; in-process (show set),
 * shows progress after each run. Returns 0 or -1. */
static int work(struct job *j, bool show)
{
	struct shared *sh = j->sh;
	struct err e;

	while (!atomic_load(&sh->failed)) {
		size_t k = atomic_fetch_add(&sh->next, 1);

		if (k >= j->n_tasks)
			break;
		if (run_one(j->s, j->dir, j->tasks[k].point, j->tasks[k].seed_i,
			    &e) < 0) {
			if (!atomic_exchange(&sh->failed, 1))
				snprintf(sh->msg, sizeof(sh->msg), "%s", e.msg);
			return -1;
		}
		if (atomic_fetch_sub(&sh->left[j->tasks[k].point], 1) == 1)
			atomic_fetch_add(&sh->points_done, 1);
		atomic_fetch_add(&sh->runs_done, 1);
		if (show)
			progress_show(j->pg, sh);
	}
	return 0;
}

/* Forks the workers and waits for them, showing progress; on SIGINT or
 * SIGTERM stops them. Returns a CLI status or 128 + the signal. */
static int work_forked(struct job *j, int jobs)
{
	struct shared *sh = j->sh;
	pid_t *pids = xcalloc((size_t)jobs, sizeof(*pids)), parent = getpid();
	int alive = 0, rc = CLI_OK;
	bool stopping = false;

	(void)parent; /* only Linux has PR_SET_PDEATHSIG */
	rt_signals_catch();
	fflush(NULL);
	for (int i = 0; i < jobs; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
#ifdef __linux__
			/* a parent killed outright takes its workers along */
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() != parent)
				_exit(128 + SIGTERM);
#endif
			_exit(rt_signal ? 128 + rt_signal
					 : work(j, false) < 0 ? CLI_BAD_INPUT
							      : CLI_OK);
		}
		if (pid < 0) {
			if (!atomic_exchange(&sh->failed, 1))
				snprintf(sh->msg, sizeof(sh->msg), "cannot start a "
					 "worker: %s", strerror(errno));
			break;
		}
		pids[i] = pid;
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
			if (WIFEXITED(st) && WEXITSTATUS(st) == CLI_OK)
				continue;
			if (WIFEXITED(st) && WEXITSTATUS(st) == CLI_BAD_INPUT)
				continue; /* its message is in sh->msg */
			if (stopping || rt_signal)
				continue;
			/* a crash: let the others stop after their run */
			if (!atomic_exchange(&sh->failed, 1))
				snprintf(sh->msg, sizeof(sh->msg), "a worker "
					 "%s %d", WIFSIGNALED(st) ? "died of signal"
					 : "exited with status", WIFSIGNALED(st) ?
					 WTERMSIG(st) : WEXITSTATUS(st));
			rc = CLI_FAILED;
		}
		if (rt_signal && !stopping) {
			stopping = true;
			for (int i = 0; i < jobs; i++)
				if (pids[i] > 0)
					kill(pids[i], SIGTERM);
		}
		if (alive > 0) {
			progress_show(j->pg, sh);
			nanosleep(&nap, NULL);
		}
	}
	progress_show(j->pg, sh);
	rt_signals_restore();
	free(pids);
	if (rt_signal)
		return 128 + rt_signal;
	if (rc == CLI_OK && atomic_load(&sh->failed))
		rc = CLI_BAD_INPUT;
	return rc;
}

static bool is_litter(const char *name)
{
	return name[0] == '.' && (strstr(name, ".tmp-") || strstr(name, ".old-"));
}

/* Removes what killed runs leave: the hidden temporary directories beside
 * the run directories, and temporary files beside sweep.json. */
static void clean_litter(const char *dir)
{
	size_t n = strlen(dir) + 300;
	char *p = xmalloc(n), *q = xmalloc(n + 300);
	DIR *d, *pd;
	struct dirent *de, *pe;

	if ((d = opendir(dir))) {
		while ((de = readdir(d)))
			if (is_litter(de->d_name)) {
				snprintf(p, n, "%s/%s", dir, de->d_name);
				od_rm_tree(p);
			}
		closedir(d);
	}
	snprintf(p, n, "%s/points", dir);
	if ((d = opendir(p))) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(q, n + 300, "%s/points/%s", dir, de->d_name);
			if (!(pd = opendir(q)))
				continue;
			while ((pe = readdir(pd)))
				if (is_litter(pe->d_name)) {
					snprintf(q, n + 300, "%s/points/%s/%s", dir,
						 de->d_name, pe->d_name);
					od_rm_tree(q);
				}
			closedir(pd);
		}
		closedir(d);
	}
	free(p);
	free(q);
}

static bool run_done(const struct sweep *s, const char *dir, size_t point,
		     size_t seed_i)
{
	char *run = sweep_run_dir(s, dir, point, seed_i);
	size_t n = strlen(run) + 64;
	char *marker = xmalloc(n);
	bool yes;

	snprintf(marker, n, "%s/%s", run, OD_MARKER);
	yes = access(marker, F_OK) == 0;
	free(marker);
	free(run);
	return yes;
}

/* A finished run is kept only if the sweep still gives it the same
 * config: else the sweep file or its base changed since it ran. */
static int check_kept(const struct sweep *s, const char *dir, size_t point,
		      size_t seed_i, struct err *e)
{
	char *run = sweep_run_dir(s, dir, point, seed_i);
	size_t n = strlen(run) + 64;
	char *path = xmalloc(n), *had, *want, **sets;
	struct cfg c;
	size_t n_sets;
	int rc;

	snprintf(path, n, "%s/%s", run, OD_MARKER);
	sets = sweep_sets(s, point, s->seeds[seed_i], &n_sets);
	rc = cfg_load(&c, s->base, (const char *const *)sets, n_sets, e);
	sweep_sets_free(sets, n_sets);
	if (rc == 0) {
		had = fs_slurp(path, NULL);
		want = cfg_resolved(&c);
		if (!had || strcmp(had, want))
			rc = err_set(e, "'%s' was run with another config than "
				     "the sweep now gives it (the sweep file or "
				     "its base changed): remove '%s' or choose "
				     "another -o", run, dir);
		free(had);
		free(want);
		cfg_release(&c);
	}
	free(path);
	free(run);
	return rc;
}

/* Readies dir: new (or empty), or with --resume a sweep's directory whose
 * finished runs still match. Writes sweep.json. */
static int prepare(const struct sweep *s, const char *dir, bool resume,
		   struct err *e)
{
	size_t n = strlen(dir) + 64;
	char *path = xmalloc(n), *text;
	bool empty = true, has_sweep;
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if ((d = opendir(dir))) {
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				empty = false;
		closedir(d);
	} else if (errno != ENOENT) {
		rc = err_set(e, "cannot use '%s' as the results directory: %s",
			     dir, strerror(errno));
		goto out;
	}
	snprintf(path, n, "%s/sweep.json", dir);
	has_sweep = access(path, F_OK) == 0;
	if (!empty && !resume) {
		rc = err_set(e, "'%s' exists and is not empty: add --resume to "
			     "finish the sweep in it, or choose another -o", dir);
		goto out;
	}
	if (!empty && !has_sweep) {
		rc = err_set(e, "'%s' exists and holds no sweep.json: refusing to "
			     "write into it", dir);
		goto out;
	}
	if (!empty) {
		for (size_t p = 0; p < s->n_points && rc == 0; p++)
			for (size_t k = 0; k < s->n_seeds && rc == 0; k++)
				if (run_done(s, dir, p, k))
					rc = check_kept(s, dir, p, k, e);
		if (rc < 0)
			goto out;
		clean_litter(dir);
		snprintf(path, n, "%s/sweep.csv", dir);
		remove(path);
	}
	if ((rc = fs_mkdirs(dir, e)) < 0)
		goto out;
	text = sweep_resolved(s);
	snprintf(path, n, "%s/sweep.json", dir);
	rc = fs_write_atomic(path, text, e);
	free(text);
out:
	free(path);
	return rc;
}

struct opts {
	long jobs;  /* 0: the default */
	const char *out;
	bool resume, progress, quiet;
};

static int sweep_run(const char *file, struct opts *op, int rank, int size)
{
	struct sweep s;
	struct err e;
	struct progress pg;
	struct shared *sh;
	struct task *tasks;
	struct job j;
	size_t n_tasks = 0, reused = 0, my_points = 0, map_n;
	char dir_buf[1024];
	const char *dir = op->out;
	double t0 = rt_now_s();
	int rc = CLI_OK, jobs;

	/* every rank checks (and fails) alike; rank 0 says why */
	if (sweep_load(&s, file, &e) < 0)
		return rank == 0 ? cli_fail("%s", e.msg) : CLI_BAD_INPUT;
	if (sweep_check(&s, &e) < 0) {
		sweep_release(&s);
		return rank == 0 ? cli_fail("%s", e.msg) : CLI_BAD_INPUT;
	}
	if (!dir) {
		snprintf(dir_buf, sizeof(dir_buf), "results/runs/%s", s.name);
		dir = dir_buf;
	}
	if (rank == 0 && prepare(&s, dir, op->resume, &e) < 0)
		rc = cli_fail("%s", e.msg);
#ifdef HS_MPI
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
	if (rc != CLI_OK) {
		sweep_release(&s);
		return rc;
	}

	/* this rank's share, less what is done */
	map_n = sizeof(*sh) + s.n_points * sizeof(sh->left[0]);
	sh = mmap(NULL, map_n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	HS_ASSERT(sh != MAP_FAILED); /* zero-filled */
	tasks = xcalloc(s.n_points * s.n_seeds, sizeof(*tasks));
	for (size_t p = 0; p < s.n_points; p++) {
		bool mine = false;

		for (size_t k = 0; k < s.n_seeds; k++) {
			if ((p * s.n_seeds + k) % (size_t)size != (size_t)rank)
				continue;
			mine = true;
			if (run_done(&s, dir, p, k)) {
				reused++;
				continue;
			}
			tasks[n_tasks++] = (struct task){ p, k };
			atomic_fetch_add(&sh->left[p], 1);
		}
		if (mine) {
			my_points++;
			if (atomic_load(&sh->left[p]) == 0)
				atomic_fetch_add(&sh->points_done, 1);
		}
	}
	pg = (struct progress){
		.on = !op->quiet && rank == 0 &&
		      (op->progress || isatty(STDERR_FILENO)),
		.tty = isatty(STDERR_FILENO),
		.label = size > 1 ? "rank 0" : s.name, .t0 = t0,
		.points = my_points,
		.runs = n_tasks + reused, .todo = n_tasks, .runs_before = reused,
	};
	j = (struct job){ &s, dir, tasks, n_tasks, sh, &pg };
	jobs = op->jobs > 0 ? (int)op->jobs : size > 1 ? 1
		: (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1)
		jobs = 1;
	if ((size_t)jobs > n_tasks)
		jobs = n_tasks > 0 ? (int)n_tasks : 1;
	progress_show(&pg, sh);
	if (n_tasks > 0)
		rc = size > 1 && jobs == 1 ? (work(&j, true) < 0 ? CLI_BAD_INPUT
								 : CLI_OK)
					   : work_forked(&j, jobs);
	progress_end(&pg);
	if (rc >= 128) {
		clean_litter(dir);
		fprintf(stderr, "hybridspec: stopped by signal %d: %zu of %zu runs "
			"done; 'hybridspec sweep %s --resume%s%s' finishes the "
			"sweep\n", rc - 128, reused + atomic_load(&sh->runs_done),
			n_tasks + reused, file, op->out ? " -o " : "",
			op->out ? op->out : "");
	} else if (rc != CLI_OK) {
		clean_litter(dir);
		cli_fail("%s", sh->msg[0] ? sh->msg : "a run failed");
	}
#ifdef HS_MPI
	MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (size > 1) {
		unsigned long long mine[2] = { n_tasks, reused }, all[2];

		MPI_Reduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
			   MPI_COMM_WORLD);
		n_tasks = (size_t)all[0];
		reused = (size_t)all[1];
	}
#endif
	if (rc == CLI_OK && rank == 0) {
		if (sweep_csv(&s, dir, &e) < 0)
			rc = cli_fail("%s", e.msg);
		else if (!op->quiet)
			printf("sweep %s: %zu points x %zu seeds, %zu runs done, "
			       "%zu kept; %.1f s with %d %s%s; %s/sweep.csv\n",
			       s.name, s.n_points, s.n_seeds, n_tasks, reused,
			       rt_now_s() - t0, size > 1 ? size : jobs,
			       size > 1 ? "rank" : "worker",
			       (size > 1 ? size : jobs) > 1 ? "s" : "", dir);
	}
	munmap(sh, map_n);
	free(tasks);
	sweep_release(&s);
	return rc;
}

int cli_sweep(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "out", required_argument, NULL, 'o' },
		{ "resume", no_argument, NULL, 'r' },
		{ "progress", no_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct opts op = { 0 };
	long long num;
	int ch, rank = 0, size = 1, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "j:o:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			if (cli_long("--jobs", optarg, 1, 4096, &num))
				return CLI_BAD_INPUT;
			op.jobs = (long)num;
			break;
		case 'o':
			op.out = optarg;
			break;
		case 'r':
			op.resume = true;
			break;
		case 'p':
			op.progress = true;
			break;
		case 'q':
			op.quiet = true;
			break;
		case 'h':
			fputs(sweep_help, stdout);
			return CLI_OK;
		default:
			fputs(sweep_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc - 1) {
		fputs(sweep_help, stderr);
		return CLI_BAD_INPUT;
	}
#ifdef HS_MPI
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
#endif
	rc = sweep_run(argv[optind], &op, rank, size);
#ifdef HS_MPI
	MPI_Finalize();
#endif
	return rc;
}
