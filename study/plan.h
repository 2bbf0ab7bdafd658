/* plan.h: the cheapest deployment that meets an SLO (docs/plan.md).
 *
 * A plan file names a base config (the tenant mix), fixed overrides, the
 * SLO (TTFT and TPOT bounds and the share of requests that must meet both),
 * the seeds, and the candidates: GPUs with their price, tp, policies,
 * protocols and gammas. A candidate is one combination; for each, a
 * capacity bound from the formulas gives the first replica count to try,
 * and the simulator finds the fewest replicas whose attainment (the lower
 * end of its 95% interval over the seeds) meets the target: the count
 * below it fails. The answer is the cheapest candidate at its count; the
 * Pareto front is of cost per hour against p99 TPOT over every
 * configuration simulated. */
#ifndef HS_PLAN_H
#define HS_PLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cfg.h"
#include "err.h"

struct plan {
	json_t *doc;          /* owned: the resolved plan document */
	char *file;           /* owned: the path it was read from */
	char *base;           /* owned: the base config, resolved */
	json_t *server;       /* owned: the base's /cloud/gpu keys of the
				 server rather than the GPU (tables, pricing,
				 overhead_s), which every candidate GPU keeps */
	char **set;           /* (n_set) owned: fixed "POINTER=VALUE" */
	size_t n_set;
	char *warnings;       /* owned: the base's config warnings (with set),
				 a line each; NULL: none */
	double ttft_s, tpot_s; /* the SLO a request must meet, both */
	double attainment;    /* the share of requests that must meet it */
	long long *seeds;     /* (n_seeds) owned */
	size_t n_seeds;
	long long max_replicas;
	/* the rate question ("rate": {"replicas", "step"}): the highest load
	 * a candidate at rate_replicas sustains, to within a factor of 1 +
	 * rate_step; 0: the replicas question */
	long long rate_replicas;
	double rate_step;
	/* the base's groups, which a load scales: (n_groups) owned */
	size_t n_groups;
	enum arrival_kind *arrival; /* (n_groups) owned: each group's */
	double *count;        /* tenants */
	double *rate_scale;   /* a Poisson group's rate_scale, a trace's
				 replay speed */
	/* the candidates' axes, borrowed from doc: arrays */
	json_t *gpus, *tps, *policies, *protocols, *gammas;
	size_t n_candidates;  /* the product of the axes' lengths */
};

/* Reads and checks a plan file, and that the base config loads with the
 * fixed overrides. Returns 0, or -1 with the message (file, JSON pointer)
 * and p released. */
int plan_load(struct plan *p, const char *path, struct err *e);
void plan_release(struct plan *p);

/* Whether candidate c is one to search: a protocol that does not draft
 * takes the first gamma only (its gamma means nothing). */
bool plan_candidate_used(const struct plan *p, size_t c);
/* The candidate in words, "H100-SXM tp1 continuous async gamma 4", into
 * buf (n bytes). */
void plan_candidate_name(const struct plan *p, size_t c, char *buf, size_t n);

/* The overrides of candidate c at replicas r, the base's load times load
 * (a Poisson group's rate, a closed loop's tenants, a trace's replay
 * speed) and seed (seed < 0: none), the plan's fixed ones first. Caller
 * frees with sweep_sets_free (sweep.h). */
char **plan_sets(const struct plan *p, size_t c, long long replicas,
		 double load, long long seed, size_t *n);

/* One configuration simulated over the seeds. */
struct plan_point {
	size_t candidate;
	long long replicas;
	double usd_per_hour;       /* replicas x tp x the GPU's price */
	double attain_mean, attain_ci95; /* share meeting the SLO */
	double ttft_attain, tpot_attain; /* shares meeting each (means) */
	double tpot_p99_s;         /* p99 over requests of TPOT, mean */
	double usd_per_mtok;       /* mean over the seeds, over each run's
				      steady window when all have one
				      (report.h), else the whole run */
	bool steady;               /* usd_per_mtok is the steady window's */
	double load;               /* of the base's load (1: as given) */
	double requests_per_s;     /* finished after the warm-up, a second */
	bool meets;                /* attain_mean - attain_ci95 >= target */
};

/* The fewest replicas of candidate c that meet the SLO, and what was
 * simulated on the way. */
struct plan_search {
	long long lower_bound;     /* the capacity bound it started from */
	const char *pricing;       /* static: cost_pricing_kind of its GPU */
	long long replicas;        /* the answer; 0: none up to the maximum,
				      or none as more did not help */
	bool plateau;              /* with none: it stopped because twice the
				      replicas gained too little attainment
				      (plan.c's PLATEAU: the SLO is bound
				      elsewhere) */
	struct plan_point best;    /* at the answer, else the best attainment */
	struct plan_point below;   /* replicas - 1 (valid when replicas > 1) */
	double load;               /* the rate question's answer; 0: none */
	struct plan_point above;   /* the load above it, which fails */
	struct plan_point *points; /* (n_points) owned: all simulated */
	size_t n_points;
};

/* Replicas the demand needs at the least: the requests' tokens per second
 * if every one met the SLO, times the least GPU-seconds a token costs (an
 * iteration of the whole token budget), at least 1; *pricing says what
 * priced the GPU (cost_pricing_kind). */
long long plan_lower_bound(const struct plan *p, size_t c,
			   const char **pricing, struct err *e);

/* Searches candidate c. Returns 0 (r filled; release with
 * plan_search_release), or -1 with the message of a config that failed. */
int plan_search_run(const struct plan *p, size_t c, struct plan_search *r,
		    struct err *e);
void plan_search_release(struct plan_search *r);
/* The rate question for candidate c at p->rate_replicas: the highest load
 * that meets the SLO, by doubling or halving from the base's, then
 * bisection until the next one up (which fails) is within 1 + rate_step;
 * none (r->load 0) below plan_rate_floor's. As plan_search_run. */
int plan_rate_search(const struct plan *p, size_t c, struct plan_search *r,
		     struct err *e);
/* The least load the rate search tries: 1/1024 of the base's, or where
 * every group is a closed loop, one tenant of the largest (below, no
 * group would shrink) */
double plan_rate_floor(const struct plan *p);

/* A point as JSON, and back (workers hand their points to the parent). */
json_t *plan_point_json(const struct plan *p, const struct plan_point *pt);
int plan_point_read(const json_t *j, struct plan_point *pt);

/* Marks pareto[i] for the points on the front of cost per hour against p99
 * TPOT among those that meet the SLO (none cheaper and no slower). */
void plan_pareto(const struct plan_point *pts, size_t n, bool *pareto);

#endif
