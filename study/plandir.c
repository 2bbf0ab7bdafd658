/* plandir.c: a plan's search in the farm and its results folder
 * (plandir.h).
 *
 * Task k is the k-th used candidate: its search is written to
 * cand-<index>.json in the folder being made (the folder's temporary, which
 * every worker and rank sees), and rank 0 reads them all back, in the
 * candidates' order, once every task is done; so the answer does not
 * depend on which worker searched what. */
#include "plandir.h"
#include "plot.h"

#include "cfg.h"
#include "farm.h"
#include "mem.h"
#include "outdir.h"
#include "rt.h"
#include "sweep.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* the folder being made, and its files' paths (room for the name) */
#define DIR_MAX 4096
#define PATH_IN_DIR (DIR_MAX + 64)

struct job {
	const struct plan *p;
	const size_t *cands; /* (n) the used candidates */
	size_t n;
	const char *tmp;     /* the folder being made */
	bool quiet;
};

static void say_search(const struct job *j, size_t k, const char *name,
		       const struct plan_search *r, double t0)
{
	if (j->quiet)
		return;
	if (j->p->rate_replicas && r->load > 0)
		fprintf(stderr, "plan: [%zu/%zu] %s (%s) x %lld: sustains %.4g "
			"requests/s (load %.4g of the base's, attainment %.4f "
			"+- %.4f)%s, %zu simulated, %.1f s\n", k + 1, j->n,
			name, r->pricing, r->replicas, r->best.requests_per_s,
			r->load, r->best.attain_mean, r->best.attain_ci95,
			r->above.load > 0 ? "; the next load up fails" :
			"; the load no longer binds", r->n_points,
			rt_now_s() - t0);
	else if (j->p->rate_replicas)
		fprintf(stderr, "plan: [%zu/%zu] %s (%s) x %lld: none down to "
			"%.4g of the base's load, best attainment %.4f, %zu "
			"simulated, %.1f s\n", k + 1, j->n, name, r->pricing,
			r->replicas, plan_rate_floor(j->p), r->best.attain_mean,
			r->n_points, rt_now_s() - t0);
	else if (r->replicas)
		fprintf(stderr, "plan: [%zu/%zu] %s (%s): %lld replica%s (bound "
			"%lld), attainment %.4f +- %.4f, %zu simulated, %.1f s\n",
			k + 1, j->n, name, r->pricing, r->replicas,
			r->replicas == 1 ? "" : "s", r->lower_bound,
			r->best.attain_mean, r->best.attain_ci95, r->n_points,
			rt_now_s() - t0);
	else
		fprintf(stderr, "plan: [%zu/%zu] %s (%s): none %s, best "
			"attainment %.4f +- %.4f at %lld, %zu simulated, %.1f s\n",
			k + 1, j->n, name, r->pricing,
			r->best.attain_mean >= j->p->attainment
				? "(the mean reaches the target, the lower end "
				  "of its interval over the seeds does not: "
				  "more seeds may settle it)"
			: r->plateau ? "(twice the replicas did not help: the "
				       "GPU, the edge or the WAN binds)"
				     : "up to the maximum",
			r->best.attain_mean, r->best.attain_ci95,
			r->best.replicas, r->n_points, rt_now_s() - t0);
}

/* One candidate's search, written to the folder being made. */
static int search_task(void *ctx, size_t k, struct err *e)
{
	const struct job *j = ctx;
	size_t c = j->cands[k];
	struct plan_search r;
	char name[256], path[PATH_IN_DIR];
	json_t *pts, *doc;
	double t0 = rt_now_s();
	int rc = 0;

	plan_candidate_name(j->p, c, name, sizeof(name));
	if ((j->p->rate_replicas ? plan_rate_search(j->p, c, &r, e)
				 : plan_search_run(j->p, c, &r, e)) < 0) {
		err_prefix(e, "plan: %s", name);
		return -1;
	}
	pts = json_array();
	for (size_t i = 0; i < r.n_points; i++)
		json_array_append_new(pts, plan_point_json(j->p, &r.points[i]));
	/* the answer's replicas (the load's, for the rate question); none:
	 * null */
	doc = json_pack("{s:I,s:s,s:b,s:I,s:o,s:o,s:o}", "index", (json_int_t)c,
			"pricing", r.pricing, "plateau", r.plateau,
			"lower_bound", (json_int_t)r.lower_bound, "replicas",
			r.replicas ? json_integer(r.replicas) : json_null(),
			"load", r.load > 0 ? json_real(r.load) : json_null(),
			"points", pts);
	snprintf(path, sizeof(path), "%s/cand-%zu.json", j->tmp, c);
	if (json_dump_file(doc, path, JSON_COMPACT) < 0)
		rc = err_set(e, "plan: cannot write %s", path);
	else
		say_search(j, k, name, &r, t0);
	json_decref(doc);
	plan_search_release(&r);
	return rc;
}

/* The resolved config of point pt (seed: the plan's first), written as
 * name. */
static int write_config(const struct plan *p, struct od *o,
			const struct plan_point *pt, const char *name,
			struct err *e)
{
	size_t n;
	char **sets = plan_sets(p, pt->candidate, pt->replicas, pt->load,
				p->seeds[0], &n);
	struct cfg cf;
	char *text;
	int rc = cfg_load_from(&cf, p->base, (const char *const *)sets, n,
			       NULL, e);

	sweep_sets_free(sets, n);
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
	      "pareto,load,requests_per_s\n", f);
	for (size_t i = 0; i < n; i++) {
		char name[256];

		if (front_only && !front[i])
			continue;
		plan_candidate_name(p, pts[i].candidate, name, sizeof(name));
		fprintf(f, "\"%s\",%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d,%d,"
			"%.9g,%.9g\n",
			name, pts[i].replicas, pts[i].usd_per_hour,
			pts[i].attain_mean, pts[i].attain_ci95, pts[i].ttft_attain,
			pts[i].tpot_attain, pts[i].tpot_p99_s, pts[i].usd_per_mtok,
			pts[i].meets, front[i], pts[i].load,
			pts[i].requests_per_s);
	}
}

/* front.gp: $/hour against p99 TPOT, every configuration simulated (those
 * that miss the SLO apart), the Pareto front labelled (candidate x
 * replicas; neighbours on it above and below in turn, so that close ones
 * do not overlap), the answer marked (with none: the best attainment, and
 * no front), the TPOT SLO a dashed reference. */
/* a front point by its cost, for the labels' order along the front */
struct front_at {
	double usd_per_hour;
	size_t i;
};

static int by_cost(const void *a, const void *b)
{
	const struct front_at *x = a, *y = b;

	return (x->usd_per_hour > y->usd_per_hour) -
	       (x->usd_per_hour < y->usd_per_hour);
}

static void front_gp(FILE *f, const struct plan *p,
		     const struct plan_point *pts, size_t n, const bool *front,
		     const struct plandir_result *r)
{
	struct front_at *on = xcalloc(n ? n : 1, sizeof(*on));
	char name[256], label[300];
	size_t m = 0;

	fprintf(f, "# The points plan simulated: $/hour against p99 TPOT.\n"
		"# gnuplot front.gp (in this folder) writes front.png\n"
		"term = strstrt(GPVAL_TERMINALS, 'pngcairo') ? 'pngcairo "
		"noenhanced' : 'png noenhanced'\n"
		"set terminal @term size 1000,640\n"
		"set output 'front.png'\n"
		"set datafile separator ','\n"
		"set key top right box opaque\n"
		"set xlabel 'provisioned cost, $ per hour'\n"
		"set ylabel 'p99 TPOT over requests, ms'\n"
		"set grid\n"
		"set logscale x 2\n"
		"set offsets graph 0.05, graph 0.25, graph 0.08, graph 0.05\n"
		"set arrow from graph 0, first %.9g to graph 1, first %.9g "
		"nohead dashtype 2 linecolor rgb '#555555'\n"
		"set label 'TPOT SLO %.0f ms (each request; %.0f%% of them must "
		"meet it)' at graph 0.01, first %.9g offset 0, 0.6 font ',9'\n",
		1e3 * p->tpot_s, 1e3 * p->tpot_s, 1e3 * p->tpot_s,
		100 * p->attainment, 1e3 * p->tpot_s);
	for (size_t i = 0; r->answer && i < n; i++)
		if (front[i])
			on[m++] = (struct front_at){ pts[i].usd_per_hour, i };
	qsort(on, m, sizeof(*on), by_cost);
	for (size_t j = 0; j < m; j++) {
		const struct plan_point *q = &pts[on[j].i];

		plan_candidate_name(p, q->candidate, name, sizeof(name));
		fprintf(f, "set label '%s x %lld' at first %.9g, first %.9g left "
			"offset 1, %s font ',8'\n",
			plot_quoted(name, label, sizeof(label)), q->replicas,
			q->usd_per_hour, 1e3 * q->tpot_p99_s,
			j % 2 ? "-0.6" : "0.5");
	}
	free(on);
	plan_candidate_name(p, r->best.candidate, name, sizeof(name));
	plot_quoted(name, label, sizeof(label));
	if (r->answer)
		fprintf(f, "set label 'answer: %s x %lld' at first %.9g, first "
			"%.9g point pointtype 3 pointsize 3 linecolor rgb "
			"'#d55e00' offset 1.5, -2.2 font ',10'\n", label,
			r->best.replicas, r->best.usd_per_hour,
			1e3 * r->best.tpot_p99_s);
	else if (n)
		fprintf(f, "set label 'none meets it; the best attainment "
			"(marked), %.4f: %s x %lld' at graph 0.02, graph 0.95 "
			"font ',10'\n"
			"set label '' at first %.9g, first %.9g point pointtype 3 "
			"pointsize 3 linecolor rgb '#d55e00'\n",
			r->best.attain_mean, label, r->best.replicas,
			r->best.usd_per_hour, 1e3 * r->best.tpot_p99_s);
	fprintf(f, "plot 'points.csv' using ($10 == 0 ? $3 : 1/0):($8 * 1000) "
		"with points pt 2 lc rgb '#bbbbbb' title 'misses the SLO'%s\n",
		r->answer ? ", \\" : "");
	if (r->answer) /* else nothing meets it: no front */
		fprintf(f, "     'points.csv' using ($10 == 1 ? $3 : 1/0):($8 * "
			"1000) with points pt 7 lc rgb '#777777' title 'meets "
			"the SLO', \\\n"
			"     'front.csv' using 3:($8 * 1000) with linespoints pt 7 "
			"lw 2 lc rgb '#0072b2' title 'Pareto front (of those that "
			"meet it)'\n");
}

/* Whether a beats b, both meeting the SLO: the replicas question's
 * cheaper, then faster; the rate question's more requests a second, then
 * cheaper. */
static bool better(const struct plan *p, const struct plan_point *a,
		   const struct plan_point *b)
{
	if (p->rate_replicas && a->requests_per_s != b->requests_per_s)
		return a->requests_per_s > b->requests_per_s;
	if (a->usd_per_hour != b->usd_per_hour)
		return a->usd_per_hour < b->usd_per_hour;
	return a->tpot_p99_s < b->tpot_p99_s;
}

/* Whether point i is its candidate's answer to the rate question: the
 * highest load of the candidate's that meets the SLO (its search's; a
 * lower load may carry more requests a second by chance, where the load
 * no longer binds, and the next load up would then meet too) */
static bool top_load(const struct plan_point *pts, size_t n, size_t i)
{
	for (size_t j = 0; j < n; j++)
		if (pts[j].candidate == pts[i].candidate && pts[j].meets &&
		    pts[j].load > pts[i].load)
			return false;
	return true;
}

/* The answer among the points, the one that proves it (a replica fewer,
 * or the next load up: each fails), the best attainment. */
static void choose(const struct plan *p, const struct plan_point *pts,
		   size_t n, struct plandir_result *r)
{
	const struct plan_point *ans = NULL, *best = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!best || pts[i].attain_mean > best->attain_mean)
			best = &pts[i];
		if (pts[i].meets && (!p->rate_replicas || top_load(pts, n, i)) &&
		    (!ans || better(p, &pts[i], ans)))
			ans = &pts[i];
	}
	r->answer = ans != NULL;
	if (ans)
		r->best = *ans;
	else if (best)
		r->best = *best;
	for (size_t i = 0; ans && i < n; i++) {
		bool proof = pts[i].candidate == ans->candidate &&
			     (p->rate_replicas
				      ? pts[i].load > ans->load &&
					(!r->below_known ||
					 pts[i].load < r->below.load)
				      : pts[i].replicas == ans->replicas - 1);

		if (proof) {
			r->below = pts[i];
			r->below_known = true;
		}
	}
	r->binds = ans ? "none" : !best ? "none" :
		   best->requests_per_s == 0 ? "nothing measured" :
		   best->attain_mean >= p->attainment ? "the seeds' interval" :
		   best->tpot_attain < best->ttft_attain ? "TPOT" : "TTFT";
}

/* Writes the folder's files: the points, the front, the answer and its
 * evidence; 0 or -1. */
static int write_report(const struct plan *p, struct od *o,
			json_t *searches, struct plan_point *pts, size_t n,
			struct plandir_result *r, struct err *e)
{
	bool *front = calloc(n ? n : 1, sizeof(*front));
	const struct plan_point *b = &r->best;
	json_t *doc;
	char *text;
	int rc = 0;
	FILE *f;

	plan_pareto(pts, n, front);
	choose(p, pts, n, r);
	for (int k = 0; k < 2 && rc == 0; k++) {
		const char *csv = k ? "front.csv" : "points.csv";

		if (!(f = od_open(o, csv, e))) {
			rc = -1;
			break;
		}
		csv_points(f, p, pts, n, front, k == 1);
		if (fclose(f) != 0)
			rc = err_set(e, "plan: cannot write %s/%s: %s", o->tmp,
				     csv, strerror(errno));
	}
	if (rc == 0 && !(f = od_open(o, "front.gp", e)))
		rc = -1;
	if (rc == 0) {
		front_gp(f, p, pts, n, front, r);
		if (fclose(f) != 0)
			rc = err_set(e, "plan: cannot write %s/front.gp: %s",
				     o->tmp, strerror(errno));
	}
	doc = json_pack("{s:O,s:o}", "plan", p->doc, "searches", searches);
	if (r->answer) {
		json_object_set_new(doc, "answer", plan_point_json(p, b));
		json_object_set_new(doc, p->rate_replicas ? "one_more"
				    : "one_fewer", r->below_known ?
				    plan_point_json(p, &r->below) : json_null());
		if (rc == 0)
			rc = write_config(p, o, b, OD_MARKER, e);
		if (rc == 0 && r->below_known)
			rc = write_config(p, o, &r->below, p->rate_replicas
					  ? "one_more.json" : "one_fewer.json",
					  e);
	} else {
		json_object_set_new(doc, "answer", json_null());
		json_object_set_new(doc, "best", n ? plan_point_json(p, b)
						   : json_null());
		json_object_set_new(doc, "binding", json_string(r->binds));
		if (rc == 0 && n)
			rc = write_config(p, o, b, OD_MARKER, e);
	}
	text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (od_write(o, "plan.json", text, e) < 0)
		rc = -1;
	free(text);
	json_decref(doc);
	free(front);
	return rc;
}

/* Reads the workers' files into one list of points and one of searches. */
static int collect(const struct job *j, json_t *searches,
		   struct plan_point **pts, size_t *n_pts, struct err *e)
{
	*pts = NULL;
	*n_pts = 0;
	for (size_t i = 0; i < j->n; i++) {
		char path[PATH_IN_DIR], name[256];
		json_t *d, *arr;

		snprintf(path, sizeof(path), "%s/cand-%zu.json", j->tmp,
			 j->cands[i]);
		if (!(d = json_load_file(path, 0, NULL)))
			return err_set(e, "plan: a worker left no %s", path);
		arr = json_object_get(d, "points");
		*pts = realloc(*pts, (*n_pts + json_array_size(arr)) * sizeof(**pts));
		for (size_t k = 0; k < json_array_size(arr); k++)
			if (plan_point_read(json_array_get(arr, k),
					    &(*pts)[(*n_pts)++]) < 0) {
				json_decref(d);
				return err_set(e, "plan: %s: a bad point", path);
			}
		plan_candidate_name(j->p, j->cands[i], name, sizeof(name));
		json_object_set_new(d, "candidate", json_string(name));
		json_array_append_new(searches, d);
		remove(path);
	}
	return 0;
}

/* Rank 0: the searches read back and the folder written and put in
 * place, or dropped. */
static void finish(const struct job *j, struct od *o,
		   struct plandir_result *r, struct err *e)
{
	json_t *searches = json_array();
	struct plan_point *pts = NULL;
	size_t n_pts = 0;

	if (collect(j, searches, &pts, &n_pts, e) < 0) {
		json_decref(searches);
		od_abort(o);
		r->status = PLANDIR_BAD;
	} else if (write_report(j->p, o, searches, pts, n_pts, r, e) < 0) {
		od_abort(o); /* report took searches */
		r->status = PLANDIR_BAD;
	} else {
		/* drawn before the folder is put in place: its manifest lists
		 * the picture too */
		r->front_drawn = n_pts && plot_gnuplot(o->tmp, "front.gp");
		if (!r->front_drawn) { /* no half-drawn picture left */
			char png[4200];

			snprintf(png, sizeof(png), "%s/front.png", o->tmp);
			remove(png);
		}
		r->status = od_commit(o, e) < 0 ? PLANDIR_BAD
			    : r->answer ? PLANDIR_ANSWER : PLANDIR_NONE;
	}
	r->n_points = n_pts;
	free(pts);
}

void plandir_run(const struct plan *p, const struct plandir_opts *o,
		 struct plandir_result *r, struct err *e)
{
	size_t *cands = calloc(p->n_candidates ? p->n_candidates : 1,
			       sizeof(*cands));
	char tmp[DIR_MAX] = "";
	struct od od = { 0 };
	struct job j = { .p = p, .cands = cands, .tmp = tmp, .quiet = o->quiet };
	struct farm f = { .ctx = &j, .run = search_task, .label = "plan",
			  .what = "candidates", .jobs = o->jobs, .quiet = true,
			  .rank = o->rank, .size = o->size };
	struct farm_result fr;
	int st;

	*r = (struct plandir_result){ .binds = "none" };
	for (size_t c = 0; c < p->n_candidates; c++)
		if (plan_candidate_used(p, c))
			cands[j.n++] = c;
	f.n_tasks = r->n_candidates = j.n;
	if (o->rank == 0) {
		if (od_begin(&od, o->dir, "plan", o->replace, e) < 0)
			r->status = PLANDIR_BAD;
		else
			snprintf(tmp, sizeof(tmp), "%s", od.tmp);
	}
	farm_mpi_share(&r->status, tmp, sizeof(tmp));
	if (r->status == 0) {
		r->workers = farm_workers(&f, (j.n + (size_t)f.size - 1) /
						(size_t)(f.size > 0 ? f.size : 1));
		if (!o->quiet && o->rank == 0)
			fprintf(stderr, "plan: %zu candidates x %zu seeds, %d "
				"worker%s%s\n", j.n, p->n_seeds, r->workers,
				r->workers > 1 ? "s" : "",
				o->size > 1 ? " a rank" : "");
		farm_run(&f, &fr);
		if (fr.status)
			err_set(e, "%s", fr.msg[0] ? fr.msg : "plan: a worker failed");
		if ((st = farm_mpi_max(fr.status)))
			r->status = st >= 128 ? st : PLANDIR_BAD; /* 128 + N: a signal */
		if (r->status)
			od_abort(&od);
		else if (o->rank == 0)
			finish(&j, &od, r, e);
	}
	free(cands);
}
