/* cli_plan.c: hybridspec plan: the search over a plan file's candidates in
 * worker processes, and the answer, its evidence and the Pareto front
 * written to a results folder.
 *
 * Worker w searches the used candidates whose rank modulo N is w and writes
 * each one's search to cand-<index>.json in the folder being made; the
 * parent reads them all once the workers are done. Built with -DHS_MPI
 * (make MPI=1), MPI rank r of R takes the candidates whose rank modulo R is
 * r (in its own -j workers), rank 0 makes the folder and tells the others
 * where it is, and reads every rank's files once all are done; the folder
 * must be on a file system that every rank sees. */
#include "cli.h"

#include "cfg.h"
#include "outdir.h"
#include "plan.h"
#include "rt.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HS_MPI
#include <mpi.h>
#endif

/* the folder being made, and its files' paths (room for the name) */
#define DIR_MAX 4096
#define PATH_IN_DIR (DIR_MAX + 64)

static const char plan_help[] =
	"usage: hybridspec plan PLAN.json [-j N] [-o DIR] [--quiet]\n"
	"\n"
	"Finds the cheapest deployment of the plan's base config that meets its\n"
	"SLO: for each candidate (GPU, tp, policy, protocol, gamma) the fewest\n"
	"replicas whose share of requests meeting both TTFT and TPOT bounds (the\n"
	"lower end of its 95% interval over the seeds) reaches the target, the\n"
	"count below failing; a capacity bound from the formulas is where each\n"
	"search starts. Writes DIR (default results/runs/plan-NAME):\n"
	"  plan.json             the answer, its evidence, every candidate's search\n"
	"  config.resolved.json  the answer's config (hybridspec run reruns it)\n"
	"  one_fewer.json        the same with one replica fewer (it fails)\n"
	"  points.csv            every configuration simulated, the front marked\n"
	"  front.csv, front.gp   the Pareto front of $/hour against p99 TPOT, and\n"
	"                        its gnuplot script (front.png where gnuplot is)\n"
	"docs/plan.md gives the file's keys.\n"
	"\n"
	"  -j, --jobs N    worker processes (default: the online CPUs)\n"
	"  -o, --out DIR   results folder\n"
	"  -q, --quiet     no progress on stderr\n"
	"  -h, --help      this text\n"
#ifdef HS_MPI
	"\nBuilt with MPI: under mpirun, each rank searches every N-th candidate\n"
	"(in -j workers of its own), rank 0 writes DIR; DIR must be on a file\n"
	"system that every rank sees.\n"
#endif
	"\n"
	"Exit status: 0 an answer; 1 no candidate meets the SLO (the reason:\n"
	"the best attainment found and the SLO that binds); 2 bad input.\n";

struct opts {
	long jobs;
	const char *out;
	bool quiet;
};

/* One worker's share: search its candidates, write each to the folder. */
static int worker(const struct plan *p, const size_t *cands, size_t n,
		  size_t w, size_t jobs, const char *tmp, bool quiet)
{
	for (size_t i = w; i < n; i += jobs) {
		struct plan_search r;
		struct err e;
		char name[256], path[PATH_IN_DIR];
		json_t *pts = json_array(), *doc;
		double t0 = rt_now_s();

		plan_candidate_name(p, cands[i], name, sizeof(name));
		if (plan_search_run(p, cands[i], &r, &e) < 0) {
			fprintf(stderr, "hybridspec: plan: %s: %s\n", name, e.msg);
			json_decref(pts);
			return -1;
		}
		for (size_t k = 0; k < r.n_points; k++)
			json_array_append_new(pts, plan_point_json(p, &r.points[k]));
		doc = json_pack("{s:I,s:I,s:I,s:o}", "index", (json_int_t)cands[i],
				"lower_bound", (json_int_t)r.lower_bound,
				"replicas", (json_int_t)r.replicas, "points", pts);
		snprintf(path, sizeof(path), "%s/cand-%zu.json", tmp, cands[i]);
		if (json_dump_file(doc, path, JSON_COMPACT) < 0) {
			fprintf(stderr, "hybridspec: plan: cannot write %s\n", path);
			json_decref(doc);
			plan_search_release(&r);
			return -1;
		}
		if (!quiet) {
			if (r.replicas)
				fprintf(stderr, "plan: [%zu/%zu] %s: %lld replicas "
					"(bound %lld), attainment %.4f +- %.4f, "
					"%zu simulated, %.1f s\n", i + 1, n, name,
					r.replicas, r.lower_bound, r.best.attain_mean,
					r.best.attain_ci95, r.n_points, rt_now_s() - t0);
			else
				fprintf(stderr, "plan: [%zu/%zu] %s: none up to the "
					"maximum (best attainment %.4f at %lld), %zu "
					"simulated, %.1f s\n", i + 1, n, name,
					r.best.attain_mean, r.best.replicas, r.n_points,
					rt_now_s() - t0);
		}
		json_decref(doc);
		plan_search_release(&r);
	}
	return 0;
}

/* Forks the workers and waits for all; 0 when every one succeeded. */
static int run_workers(const struct plan *p, const size_t *cands, size_t n,
		       size_t jobs, const char *tmp, bool quiet)
{
	int failed = 0, st;

	fflush(NULL);
	for (size_t w = 0; w < jobs; w++) {
		pid_t pid = fork();

		if (pid < 0)
			return cli_fail("plan: fork: cannot start a worker"), -1;
		if (pid == 0)
			_exit(worker(p, cands, n, w, jobs, tmp, quiet) < 0 ? 1 : 0);
	}
	while (wait(&st) > 0)
		failed |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	return failed ? -1 : 0;
}

/* The resolved config of candidate c at replicas r (seed: the plan's
 * first), written as name. */
static int write_config(const struct plan *p, struct od *o, size_t c,
			long long r, const char *name, struct err *e)
{
	size_t n;
	char **sets = plan_sets(p, c, r, p->seeds[0], &n);
	struct cfg cf;
	char *text;
	int rc = cfg_load(&cf, p->base, (const char *const *)sets, n, e);

	plan_sets_free(sets, n);
	if (rc < 0)
		return -1;
	text = cfg_resolved(&cf);
	rc = od_write(o, name, text, e);
	free(text);
	cfg_release(&cf);
	return rc;
}

static void csv_points(FILE *f, const struct plan *p,
		       const struct plan_point *pts, size_t n, const bool *front,
		       bool front_only)
{
	fputs("candidate,replicas,usd_per_hour,attainment,attainment_ci95,"
	      "ttft_attainment,tpot_attainment,tpot_p99_s,usd_per_mtok,meets,"
	      "pareto\n", f);
	for (size_t i = 0; i < n; i++) {
		char name[256];

		if (front_only && !front[i])
			continue;
		plan_candidate_name(p, pts[i].candidate, name, sizeof(name));
		fprintf(f, "\"%s\",%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d,%d\n",
			name, pts[i].replicas, pts[i].usd_per_hour,
			pts[i].attain_mean, pts[i].attain_ci95, pts[i].ttft_attain,
			pts[i].tpot_attain, pts[i].tpot_p99_s, pts[i].usd_per_mtok,
			pts[i].meets, front[i]);
	}
}

static const char front_gp[] =
	"# The Pareto front of plan's points: $/hour against p99 TPOT.\n"
	"# gnuplot front.gp (in this folder) writes front.png\n"
	"term = strstrt(GPVAL_TERMINALS, 'pngcairo') ? 'pngcairo noenhanced' "
	": 'png noenhanced'\n"
	"set terminal @term size 900,560\n"
	"set output 'front.png'\n"
	"set datafile separator ','\n"
	"set key autotitle columnhead top right\n"
	"set xlabel 'provisioned cost, $ per hour'\n"
	"set ylabel 'p99 TPOT over requests, ms'\n"
	"set grid\n"
	"set logscale x 2\n"
	"plot 'points.csv' using ($10 == 1 ? $3 : 1/0):($8 * 1000) with points "
	"pt 7 lc rgb '#999999' title 'meets the SLO', \\\n"
	"     'front.csv' using 3:($8 * 1000) with linespoints pt 7 lw 2 "
	"title 'Pareto front'\n";

/* Writes the folder's files: the points, the front, the answer and its
 * evidence. Returns the exit status. */
static int report(const struct plan *p, struct od *o, json_t *searches,
		  struct plan_point *pts, size_t n, bool quiet)
{
	bool *front = calloc(n ? n : 1, sizeof(*front));
	const struct plan_point *ans = NULL, *best = NULL, *below = NULL;
	struct err e;
	json_t *doc;
	char name[256], *text;
	int rc = CLI_OK;
	FILE *f;

	plan_pareto(pts, n, front);
	for (size_t i = 0; i < n; i++) {
		if (!best || pts[i].attain_mean > best->attain_mean)
			best = &pts[i];
		if (!pts[i].meets)
			continue;
		/* the cheapest, then the fewest GPUs' worth, then the fastest */
		if (!ans || pts[i].usd_per_hour < ans->usd_per_hour ||
		    (pts[i].usd_per_hour == ans->usd_per_hour &&
		     pts[i].tpot_p99_s < ans->tpot_p99_s))
			ans = &pts[i];
	}
	for (size_t i = 0; ans && i < n; i++)
		if (pts[i].candidate == ans->candidate &&
		    pts[i].replicas == ans->replicas - 1)
			below = &pts[i];
	for (int k = 0; k < 2 && rc == CLI_OK; k++) {
		const char *csv = k ? "front.csv" : "points.csv";

		if (!(f = od_open(o, csv, &e))) {
			rc = cli_fail("%s", e.msg);
			break;
		}
		csv_points(f, p, pts, n, front, k == 1);
		if (fclose(f) != 0)
			rc = cli_fail("plan: cannot write %s", csv);
	}
	if (rc == CLI_OK && od_write(o, "front.gp", front_gp, &e) < 0)
		rc = cli_fail("%s", e.msg);
	doc = json_pack("{s:O,s:o}", "plan", p->doc, "searches", searches);
	if (ans) {
		plan_candidate_name(p, ans->candidate, name, sizeof(name));
		json_object_set_new(doc, "answer", plan_point_json(p, ans));
		json_object_set_new(doc, "one_fewer",
				    below ? plan_point_json(p, below) : json_null());
		if (write_config(p, o, ans->candidate, ans->replicas,
				 OD_MARKER, &e) < 0 ||
		    (ans->replicas > 1 &&
		     write_config(p, o, ans->candidate, ans->replicas - 1,
				  "one_fewer.json", &e) < 0))
			rc = cli_fail("%s", e.msg);
		else if (!quiet)
			printf("plan: %s x %lld replicas, $%.2f an hour ($%.3f a "
			       "million tokens): attainment %.4f +- %.4f (target "
			       "%.4f) over %zu seeds; %s\n", name, ans->replicas,
			       ans->usd_per_hour, ans->usd_per_mtok,
			       ans->attain_mean, ans->attain_ci95, p->attainment,
			       p->n_seeds, ans->replicas == 1 ? "one replica is "
			       "the least" : below && !below->meets ? "a replica "
			       "fewer fails" : "a replica fewer meets too (the "
			       "search missed it)");
	} else {
		const char *binds = !best ? "none" :
			best->tpot_attain < best->ttft_attain ? "TPOT" : "TTFT";

		plan_candidate_name(p, best ? best->candidate : 0, name,
				    sizeof(name));
		json_object_set_new(doc, "answer", json_null());
		json_object_set_new(doc, "best", best ? plan_point_json(p, best)
						      : json_null());
		json_object_set_new(doc, "binding", json_string(binds));
		if (best && write_config(p, o, best->candidate, best->replicas,
					 OD_MARKER, &e) < 0)
			rc = cli_fail("%s", e.msg);
		fprintf(stderr, "hybridspec: plan: no candidate meets the SLO (TTFT "
			"%g s, TPOT %g s, for %.4f of requests): the best "
			"attainment is %.4f (%s x %lld replicas); %s binds: "
			"%.4f met TTFT, %.4f met TPOT\n", p->ttft_s, p->tpot_s,
			p->attainment, best ? best->attain_mean : 0, name,
			best ? best->replicas : 0, binds,
			best ? best->ttft_attain : 0, best ? best->tpot_attain : 0);
		if (rc == CLI_OK)
			rc = CLI_FAILED;
	}
	text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (od_write(o, "plan.json", text, &e) < 0)
		rc = cli_fail("%s", e.msg);
	free(text);
	json_decref(doc);
	free(front);
	return rc;
}

/* Draws dir/front.png with gnuplot, where it is installed. */
static void draw_front(const char *dir, bool quiet)
{
	int st = -1;
	pid_t pid;

	fflush(NULL);
	if ((pid = fork()) == 0) {
		if (chdir(dir) == 0) {
			if (!freopen("/dev/null", "w", stdout) ||
			    !freopen("/dev/null", "w", stderr))
				_exit(127);
			execlp("gnuplot", "gnuplot", "front.gp", (char *)NULL);
		}
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
	if (!quiet && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		fprintf(stderr, "plan: no front.png (gnuplot missing or failed: "
			"run 'gnuplot front.gp' in %s)\n", dir);
}

/* Reads the workers' files into one list of points and one of searches. */
static int collect(const struct plan *p, const char *tmp, const size_t *cands,
		   size_t n, json_t *searches, struct plan_point **pts,
		   size_t *n_pts)
{
	*pts = NULL;
	*n_pts = 0;
	for (size_t i = 0; i < n; i++) {
		char path[PATH_IN_DIR], name[256];
		json_t *d, *arr;

		snprintf(path, sizeof(path), "%s/cand-%zu.json", tmp, cands[i]);
		if (!(d = json_load_file(path, 0, NULL)))
			return cli_fail("plan: a worker left no %s", path), -1;
		arr = json_object_get(d, "points");
		*pts = realloc(*pts, (*n_pts + json_array_size(arr)) * sizeof(**pts));
		for (size_t k = 0; k < json_array_size(arr); k++)
			if (plan_point_read(json_array_get(arr, k),
					    &(*pts)[(*n_pts)++]) < 0)
				return cli_fail("plan: %s: a bad point", path), -1;
		plan_candidate_name(p, cands[i], name, sizeof(name));
		json_object_set_new(d, "candidate", json_string(name));
		json_array_append_new(searches, d);
		remove(path);
	}
	return 0;
}

/* Rank 0's status and the folder it made, given to every rank (without
 * MPI: as they are). */
static void share(int *rc, char *tmp, size_t n)
{
#ifdef HS_MPI
	MPI_Bcast(rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Bcast(tmp, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD);
#else
	(void)rc;
	(void)tmp;
	(void)n;
#endif
}

/* Whether every rank's workers succeeded. */
static bool all_ok(bool ok)
{
#ifdef HS_MPI
	int bad = !ok;

	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return !bad;
#else
	return ok;
#endif
}

static int plan_main(const char *file, const struct opts *op, int rank,
		     int size)
{
	struct plan p;
	struct od o = { 0 };
	struct err e;
	char dir[DIR_MAX], tmp[DIR_MAX] = "";
	size_t *cands, *mine, n = 0, n_mine = 0, jobs;
	struct plan_point *pts = NULL;
	size_t n_pts = 0;
	json_t *searches;
	double t0 = rt_now_s();
	int rc = CLI_OK;
	bool ok;

	if (plan_load(&p, file, &e) < 0)
		return rank == 0 ? cli_fail("%s", e.msg) : CLI_BAD_INPUT;
	cands = calloc(p.n_candidates, sizeof(*cands));
	mine = calloc(p.n_candidates, sizeof(*mine));
	for (size_t c = 0; c < p.n_candidates; c++)
		if (plan_candidate_used(&p, c)) {
			if (n % (size_t)size == (size_t)rank)
				mine[n_mine++] = c;
			cands[n++] = c;
		}
	if (op->out) {
		snprintf(dir, sizeof(dir), "%s", op->out);
	} else {
		const char *b = strrchr(file, '/');
		const char *dot;

		b = b ? b + 1 : file;
		dot = strrchr(b, '.');
		snprintf(dir, sizeof(dir), "results/runs/plan-%.*s",
			 (int)(dot ? dot - b : (long)strlen(b)), b);
	}
	if (rank == 0) {
		if (od_begin(&o, dir, &e) < 0)
			rc = cli_fail("%s", e.msg);
		else
			snprintf(tmp, sizeof(tmp), "%s", o.tmp);
	}
	share(&rc, tmp, sizeof(tmp));
	if (rc != CLI_OK)
		goto out;
	jobs = op->jobs > 0 ? (size_t)op->jobs
			    : (size_t)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs > n_mine)
		jobs = n_mine;
	if (jobs < 1)
		jobs = 1;
	if (!op->quiet && rank == 0)
		fprintf(stderr, "plan: %zu candidates x %zu seeds, %zu worker%s%s\n",
			n, p.n_seeds, jobs, jobs > 1 ? "s" : "",
			size > 1 ? " a rank" : "");
	ok = all_ok(run_workers(&p, mine, n_mine, jobs, tmp, op->quiet) == 0);
	if (rank != 0) {
		rc = ok ? CLI_OK : CLI_BAD_INPUT;
		goto out;
	}
	searches = json_array();
	if (!ok || collect(&p, tmp, cands, n, searches, &pts, &n_pts) < 0) {
		rc = CLI_BAD_INPUT;
		json_decref(searches);
		od_abort(&o);
	} else {
		rc = report(&p, &o, searches, pts, n_pts, op->quiet);
		if (rc == CLI_BAD_INPUT)
			od_abort(&o);
		else if (od_commit(&o, &e) < 0)
			rc = cli_fail("%s", e.msg);
		else if (rc == CLI_OK) /* a front to draw */
			draw_front(dir, op->quiet);
		if (rc != CLI_BAD_INPUT && !op->quiet)
			fprintf(stderr, "plan: %zu configurations simulated in %.1f "
				"s; %s/\n", n_pts, rt_now_s() - t0, dir);
	}
out:
	free(pts);
	free(mine);
	free(cands);
	plan_release(&p);
	return rc;
}

int cli_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "out", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct opts op = { 0 };
	long long num;
	int ch, rank = 0, size = 1, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "j:o:qh", opts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			if (cli_long("--jobs", optarg, 1, 4096, &num))
				return CLI_BAD_INPUT;
			op.jobs = (long)num;
			break;
		case 'o':
			op.out = optarg;
			break;
		case 'q':
			op.quiet = true;
			break;
		case 'h':
			fputs(plan_help, stdout);
			return CLI_OK;
		default:
			fputs(plan_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc - 1) {
		fputs(plan_help, stderr);
		return CLI_BAD_INPUT;
	}
#ifdef HS_MPI
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
#endif
	rc = plan_main(argv[optind], &op, rank, size);
#ifdef HS_MPI
	MPI_Finalize();
#endif
	return rc;
}
