/* cli_plan.c: "hybridspec plan": a plan file searched into its results
 * folder (study/plandir.h), in worker processes or MPI ranks, and the
 * answer in a line. */
#include "cli.h"
#include "rt.h"

#include "farm.h"
#include "plandir.h"

#include <stdio.h>
#include <string.h>

static const struct opt_cmd plan_cmd = {
	.name = "plan",
	.usage = "PLAN.json [-j N] [-o DIR [--overwrite]] [--quiet]",
	.about = "Finds the cheapest deployment of the plan's base config that meets its\n"
		 "SLO: for each candidate (GPU, tp, policy, protocol, gamma) the fewest\n"
		 "replicas whose share of requests meeting both TTFT and TPOT bounds (the\n"
		 "lower end of its 95% interval over the seeds) reaches the target, the\n"
		 "count below failing; a capacity bound from the formulas is where each\n"
		 "search starts. Writes DIR (default results/runs/plan-NAME, which the\n"
		 "next plan of that name replaces; another DIR holding results only\n"
		 "with --overwrite):\n"
		 "  plan.json             the answer, its evidence, every candidate's search\n"
		 "  config.resolved.json  the answer's config, or with none the best\n"
		 "                        attainment's (hybridspec run reruns it)\n"
		 "  one_fewer.json        the same with one replica fewer (it fails;\n"
		 "                        not where the answer is one replica)\n"
		 "  points.csv            every configuration simulated, the front marked\n"
		 "  front.csv, front.gp   the Pareto front of $/hour against p99 TPOT, and\n"
		 "                        its gnuplot script (front.png where gnuplot is)\n"
		 "With \"rate\": {\"replicas\": R, \"step\": S} it answers the other\n"
		 "question: the highest load each candidate at R replicas sustains at the\n"
		 "SLO (goodput: the base's Poisson rates, closed-loop tenants or trace\n"
		 "speed scaled by a factor, by doubling or halving, then bisection until\n"
		 "the next load up, which fails, is within 1 + S), the answer the\n"
		 "candidate with the most requests a second; one_more.json is the next\n"
		 "load up. docs/plan.md gives the file's keys.\n"
#ifdef HS_MPI
		 "\nBuilt with MPI: under mpirun, each rank searches every N-th candidate\n"
		 "(in -j workers of its own), rank 0 writes DIR; DIR must be on a file\n"
		 "system that every rank sees.\n"
#endif
	,
	.exit_status = "0 an answer; 1 no candidate meets the SLO (the reason:\n"
		       "the best attainment found and the SLO that binds); 2 bad input;\n"
		       "128 + N stopped by signal N (nothing written)",
	.operands = "PLAN.json",
	.min_operands = 1,
	.max_operands = 1,
	.needs = { { "overwrite", "out" } },
};

static void say_answer(const struct plan *p, const struct plandir_result *r)
{
	const struct plan_point *a = &r->best;
	char name[256];

	plan_candidate_name(p, a->candidate, name, sizeof(name));
	if (p->rate_replicas) {
		printf("plan: %s x %lld replica%s sustains %.4g requests a "
		       "second at the SLO (load %.4g of the base's): attainment "
		       "%.4f +- %.4f (target %.4f) over %zu seeds; ", name,
		       a->replicas, a->replicas == 1 ? "" : "s",
		       a->requests_per_s, a->load, a->attain_mean,
		       a->attain_ci95, p->attainment, p->n_seeds);
		if (r->below_known)
			printf("at load %.4g (%.4g requests a second) it fails: "
			       "attainment %.4f +- %.4f\n", r->below.load,
			       r->below.requests_per_s, r->below.attain_mean,
			       r->below.attain_ci95);
		else
			printf("the load no longer binds (1024 times the base's "
			       "meets it)\n");
		return;
	}
	printf("plan: %s x %lld replica%s, $%.2f an hour ($%.3f a million "
	       "tokens, %s): attainment %.4f +- %.4f (target %.4f) over %zu "
	       "seeds; %s\n", name, a->replicas, a->replicas == 1 ? "" : "s",
	       a->usd_per_hour, a->usd_per_mtok,
	       a->steady ? "steady window" : "whole run: no steady window",
	       a->attain_mean, a->attain_ci95, p->attainment, p->n_seeds,
	       a->replicas == 1 ? "one replica is the least"
	       : r->below_known && !r->below.meets ? "a replica fewer fails"
	       : "a replica fewer meets too (the search missed it)");
}

static void say_none(const struct plan *p, const struct plandir_result *r)
{
	const struct plan_point *b = &r->best;
	bool any = r->n_points > 0;
	char name[256];

	plan_candidate_name(p, any ? b->candidate : 0, name, sizeof(name));
	if (any && b->requests_per_s == 0) {
		fprintf(stderr, "hybridspec: plan: no run of %s finished a "
			"request after the warm-up (a warm-up past the runs' "
			"end, or a horizon before a request ends): nothing was "
			"measured to judge the SLO by\n", name);
		return;
	}
	fprintf(stderr, "hybridspec: plan: no candidate meets the SLO (TTFT %g s, "
		"TPOT %g s, for %.4f of requests, the lower end of the 95%% "
		"interval over %zu seeds): the best attainment is %.4f +- %.4f "
		"(%s x %lld replica%s); %s binds: %.4f met TTFT, %.4f met TPOT\n",
		p->ttft_s, p->tpot_s, p->attainment, p->n_seeds,
		any ? b->attain_mean : 0, any ? b->attain_ci95 : 0,
		name, any ? b->replicas : 0,
		any && b->replicas == 1 ? "" : "s", r->binds,
		any ? b->ttft_attain : 0, any ? b->tpot_attain : 0);
}

static int plan_main(const char *file, struct plandir_opts *o)
{
	struct plandir_result r;
	struct plan p;
	struct err e;
	char dir[4096];
	const char *b = strrchr(file, '/'), *dot;
	double t0 = rt_now_s();

	if (plan_load(&p, file, &e) < 0)
		return o->rank == 0 ? cli_fail_file("plan", file, e.msg)
				    : CLI_BAD_INPUT;
	if (o->rank == 0 && !o->quiet)
		cli_warn("plan", p.warnings);
	if (!o->dir) {
		b = b ? b + 1 : file;
		dot = strrchr(b, '.');
		snprintf(dir, sizeof(dir), "results/runs/plan-%.*s",
			 (int)(dot ? dot - b : (long)strlen(b)), b);
		o->dir = dir;
		o->replace = true; /* the default folder is the tool's */
	}
	plandir_run(&p, o, &r, &e);
	if (o->rank == 0 && r.status >= 128) {
		fprintf(stderr, "hybridspec: plan: stopped by signal %d; nothing "
			"written\n", r.status - 128);
	} else if (o->rank == 0 && r.status == PLANDIR_BAD) {
		cli_fail("%s", e.msg);
	} else if (o->rank == 0) {
		if (r.answer)
			say_answer(&p, &r);
		if (!r.answer)
			say_none(&p, &r);
		if (r.n_points && !r.front_drawn && !o->quiet)
			fprintf(stderr, "plan: no front.png (gnuplot missing or "
				"failed: run 'gnuplot front.gp' in %s)\n", o->dir);
		if (!o->quiet)
			fprintf(stderr, "plan: %zu configurations simulated in %.1f "
				"s; %s/\n", r.n_points, rt_now_s() - t0, o->dir);
	}
	plan_release(&p);
	return r.status;
}

int cli_plan(int argc, char **argv)
{
	long long jobs = 0;
	struct plandir_opts o = { 0 };
	struct opt rows[] = {
		CLI_OPT_JOBS(&jobs),
		OPT_STR("out", 'o', &o.dir, "DIR", "results folder"),
		CLI_OPT_OVERWRITE(&o.replace),
		OPT_FLAG("quiet", 'q', &o.quiet,
			 "no progress on stderr (the answer still on stdout)"),
		OPT_END,
	};
	int rc;

	if ((rc = opt_parse(&plan_cmd, rows, &argc, argv)) != OPT_GO)
		return rc;
	o.jobs = (int)jobs;
	farm_mpi_init(&argc, &argv, &o.rank, &o.size);
	rc = plan_main(argv[0], &o);
	farm_mpi_end();
	return rc;
}
