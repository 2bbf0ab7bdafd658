/* test_plan.c: hybridspec plan's answer is minimal and meets the SLO (its
 * config and the one with a replica fewer rerun by hybridspec run, seed by
 * seed), it is the cheapest of the candidates' answers, and an SLO nothing
 * meets exits 1 with the reason. */
#include "harness.h"
#include "cfg.h"
#include "jx.h"
#include "plan.h"
#include "sweep.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The checkout the tests run in (their working folder). */
static const char *repo(void)
{
	static char dir[PATH_MAX];

	if (!dir[0] && !getcwd(dir, sizeof(dir)))
		abort();
	return dir;
}

static const char *plan_file(void)
{
	static char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/tests/data/plan.json", repo());
	return p;
}

static json_t *load(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", t_tmpdir(), name);
	return json_load_file(path, 0, NULL);
}

/* The lower end of the 95% interval of the SLO attainment of config
 * (in the case's folder) over seeds 1, 2, 3, each rerun. */
static double rerun_attainment(const char *config)
{
	static char out[16384];
	double a[3], mean = 0, var = 0;

	for (int s = 0; s < 3; s++) {
		char args[PATH_MAX * 2];
		json_t *sum;

		snprintf(args, sizeof(args), "run %s/%s --seed %d -o %s/rerun --overwrite --quiet",
			 t_tmpdir(), config, s + 1, t_tmpdir());
		CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
		sum = load("rerun/summary.json");
		a[s] = json_number_value(json_object_get(json_object_get(sum, "all"),
							 "slo_attainment"));
		json_decref(sum);
		mean += a[s] / 3;
	}
	for (int s = 0; s < 3; s++)
		var += (a[s] - mean) * (a[s] - mean) / 2;
	return mean - 4.302652729911275 * sqrt(var / 3); /* t(0.975, 2) */
}

static void answer_is_minimal(void)
{
	static char out[16384];
	char args[PATH_MAX * 2];
	json_t *doc, *ans, *searches;
	double price, target = 0.9;

	snprintf(args, sizeof(args), "plan %s -o %s/p -j 2 --quiet", plan_file(),
		 t_tmpdir());
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	if (!(doc = load("p/plan.json"))) {
		CHECK_MSG(0, "no plan.json");
		return;
	}
	ans = json_object_get(doc, "answer");
	CHECK(json_integer_value(json_object_get(ans, "replicas")) > 1);
	CHECK(rerun_attainment("p/config.resolved.json") >= target);
	CHECK(rerun_attainment("p/one_fewer.json") < target);
	/* no candidate's answer is cheaper */
	price = json_number_value(json_object_get(ans, "usd_per_hour"));
	searches = json_object_get(doc, "searches");
	CHECK(json_array_size(searches) == 4);
	for (size_t i = 0; i < json_array_size(searches); i++) {
		json_t *s = json_array_get(searches, i), *pts;
		json_int_t r = json_integer_value(json_object_get(s, "replicas"));

		pts = json_object_get(s, "points");
		for (size_t k = 0; k < json_array_size(pts); k++) {
			json_t *pt = json_array_get(pts, k);

			if (json_integer_value(json_object_get(pt, "replicas")) == r)
				CHECK(json_number_value(json_object_get(
					      pt, "usd_per_hour")) >= price);
		}
	}
	CHECK(t_exists("p/front.csv") && t_exists("p/points.csv") &&
	      t_exists("p/front.gp") && t_exists("p/front.png"));
	{
		/* the figure marks the answer, the SLO and the failing points */
		char *gp = t_slurp("p/front.gp");

		CHECK_MSG(gp && strstr(gp, "set label 'answer: ") &&
			  strstr(gp, "TPOT SLO ") &&
			  strstr(gp, "title 'misses the SLO'"), "%s",
			  gp ? gp : "no front.gp");
		free(gp);
	}
	json_decref(doc);
}

/* Runs plan on a plan file of the base config, the SLO and the rest
 * (JSON members after "base"), written as name, into the case's
 * folder name.out; the exit status, the output in out. */
static int plan_of(const char *name, const char *rest, char *out, size_t n)
{
	char args[PATH_MAX * 2], text[PATH_MAX + 512];

	snprintf(text, sizeof(text), "{\"base\": \"%s/tests/data/plan-base.json\", "
		 "%s}", repo(), rest);
	snprintf(args, sizeof(args), "plan %s -o %s/%s.out --quiet",
		 t_write(name, text), t_tmpdir(), name);
	return t_run(args, out, n);
}

/* A plan of one configuration draws its front too (gnuplot crashed on a
 * labels plot with no point to label), a GPU's name with a quote in it
 * too, and a picture that fails is not left behind. */
static void one_point_front(void)
{
	static char out[16384];
	char png[PATH_MAX + 64];
	struct stat st;

	CHECK_MSG(plan_of("one.json", "\"slo\": {\"ttft_s\": 30, \"tpot_s\": "
			  "1}, \"seeds\": [1], \"candidates\": {\"gpus\": "
			  "[{\"preset\": \"A100-80G\", \"name\": \"Bob's\"}], "
			  "\"protocols\": [\"cloud_only\"]}",
			  out, sizeof(out)) == 0, "%s", out);
	snprintf(png, sizeof(png), "%s/one.json.out/front.png", t_tmpdir());
	CHECK_MSG(stat(png, &st) == 0 && st.st_size > 0, "%s", out);
}

/* The rate question: the highest load one A100 sustains meets the SLO, the
 * next load up (within the step) fails, and both configs are written;
 * a closed loop's load is its tenants. */
static void rate_question(void)
{
	static char out[16384];
	json_t *doc, *ans, *more;
	double la, lm;
	size_t np;

	CHECK_MSG(plan_of("rate.json", "\"slo\": {\"ttft_s\": 2, \"tpot_s\": "
			  "0.2, \"attainment\": 0.9}, \"seeds\": [1, 2], "
			  "\"rate\": {\"replicas\": 1, \"step\": 0.1}, "
			  "\"candidates\": {\"gpus\": [\"A100-80G\"], \"protocols\": "
			  "[\"cloud_only\"]}", out, sizeof(out)) == 0, "%s", out);
	doc = load("rate.json.out/plan.json");
	ans = json_object_get(doc, "answer");
	more = json_object_get(doc, "one_more");
	la = json_number_value(json_object_get(ans, "load"));
	lm = json_number_value(json_object_get(more, "load"));
	CHECK(json_is_true(json_object_get(ans, "meets")) &&
	      json_is_false(json_object_get(more, "meets")));
	CHECK_MSG(la > 0 && lm > la && lm <= la * 1.1 + 1e-9, "%g, %g", la, lm);
	CHECK(json_integer_value(json_object_get(ans, "replicas")) == 1 &&
	      json_number_value(json_object_get(ans, "requests_per_s")) > 0);
	CHECK(t_exists("rate.json.out/one_more.json") &&
	      t_exists("rate.json.out/config.resolved.json"));
	json_decref(doc);
	{
		/* the answer's config holds the scaled tenants */
		char *cfg = t_slurp("rate.json.out/config.resolved.json");

		CHECK(cfg && !strstr(cfg, "\"count\": 24,"));
		free(cfg);
	}
	/* an SLO no load meets: the closed loop's 24 tenants halve down to
	 * one (loads 1 to 1/32: 6 points), not on to 1/1024 at one tenant */
	CHECK_MSG(plan_of("rate0.json", "\"slo\": {\"ttft_s\": 2, \"tpot_s\": "
			  "0.0001, \"attainment\": 0.9}, \"seeds\": [1], "
			  "\"rate\": {\"replicas\": 1}, \"candidates\": "
			  "{\"gpus\": [\"A100-80G\"], \"protocols\": "
			  "[\"cloud_only\"]}", out, sizeof(out)) == 1, "%s", out);
	doc = load("rate0.json.out/plan.json");
	np = json_array_size(jx_at(doc, "/searches/0/points"));
	CHECK_MSG(np == 6, "%zu points", np);
	json_decref(doc);
}

/* Where the load no longer binds (three requests a tenant, an SLO every
 * load meets), the answer is the candidate's highest load, not a lower one
 * that carried more requests a second by chance, with a "next load up"
 * that met the SLO too. */
static void rate_unbound(void)
{
	static char out[16384];
	json_t *doc, *pts;
	double la;

	CHECK_MSG(plan_of("unbound.json", "\"set\": {\"/tenants/0/count\": 2, "
			  "\"/tenants/0/workload\": {\"arrival\": \"poisson\", "
			  "\"requests\": 3, \"rate_per_s\": 1, "
			  "\"prompt_tokens\": 64, \"output_tokens\": 32}}, "
			  "\"slo\": {\"ttft_s\": 1e9, \"tpot_s\": 1e9}, "
			  "\"seeds\": [1], \"rate\": {\"replicas\": 1}, "
			  "\"candidates\": {\"gpus\": [\"A100-80G\"], "
			  "\"protocols\": [\"async\"]}", out, sizeof(out)) == 0,
		  "%s", out);
	CHECK_MSG(strstr(out, "the load no longer binds"), "%s", out);
	doc = load("unbound.json.out/plan.json");
	la = json_number_value(jx_at(doc, "/answer/load"));
	CHECK_MSG(json_is_null(jx_at(doc, "/one_more")), "a next load up");
	pts = jx_at(doc, "/searches/0/points");
	for (size_t i = 0; i < json_array_size(pts); i++) {
		json_t *pt = json_array_get(pts, i);

		CHECK_MSG(!json_is_true(json_object_get(pt, "meets")) ||
			  json_number_value(json_object_get(pt, "load")) <= la,
			  "load %g meets above the answer's %g",
			  json_number_value(json_object_get(pt, "load")), la);
	}
	json_decref(doc);
}

static void impossible_slo(void)
{
	static char out[16384];

	/* runs that measured nothing are said to be that, not a bound */
	CHECK_MSG(plan_of("none.json", "\"set\": {\"/warmup_s\": 100000}, "
			  "\"slo\": {\"ttft_s\": 2, \"tpot_s\": 0.2}, "
			  "\"seeds\": [1], \"candidates\": {\"gpus\": "
			  "[\"A100-80G\"], \"protocols\": [\"cloud_only\"]}", out,
			  sizeof(out)) == 1 && strstr(out, "finished a request "
			  "after the warm-up") && !strstr(out, "binds"), "%s",
		  out);

	CHECK(plan_of("tight.json", "\"slo\": {\"ttft_s\": 2, \"tpot_s\": 0.001, "
		      "\"attainment\": 0.9}, \"seeds\": [1, 2], \"max_replicas\": "
		      "8, \"candidates\": {\"gpus\": [\"A100-80G\"], "
		      "\"protocols\": [\"cloud_only\"]}", out, sizeof(out)) == 1);
	CHECK_MSG(strstr(out, "no candidate meets the SLO") &&
		  strstr(out, "TPOT binds"), "%s", out);
	{
		/* the figure still drawn: how far each point is, the best
		 * attainment marked, no front */
		char *gp = t_slurp("tight.json.out/front.gp");

		CHECK(t_exists("tight.json.out/front.png"));
		CHECK_MSG(gp && strstr(gp, "none meets it; the best attainment") &&
			  !strstr(gp, "front.csv"), "%s", gp ? gp : "no front.gp");
		free(gp);
	}
	/* bad input: the file and the pointer, exit 2, no folder */
	CHECK(plan_of("bad.json", "\"slo\": {\"ttft_s\": 2, \"tpot_s\": 0.1}, "
		      "\"candidates\": {\"gpus\": [\"H800\"]}", out,
		      sizeof(out)) == 2);
	CHECK_MSG(strstr(out, "bad.json: /candidates/gpus/0") &&
		  strstr(out, "/cloud/gpu/preset"), "%s", out);
	CHECK(!t_exists("bad.json.out"));
	/* a GPU without a price cannot be compared */
	CHECK(plan_of("free.json", "\"slo\": {\"ttft_s\": 2, \"tpot_s\": 0.1}, "
		      "\"candidates\": {\"gpus\": [\"A100-80G\", \"L4\"]}", out,
		      sizeof(out)) == 2);
	CHECK_MSG(strstr(out, "free.json: /candidates/gpus/1: L4 has no price"),
		  "%s", out);
}

/* What the plan writes itself is not given twice: a set key under the
 * candidates' or the SLO's pointers, a group's own protocol or SLO, a
 * seed listed twice; a gamma of 0 is found beside any protocol; a server
 * key under /cloud/gpu goes with every candidate GPU. */
static void plan_conflicts(void)
{
	static const struct { const char *rest, *said; } bad[] = {
		{ "\"set\": {\"/protocol/kind\": \"sync\"}",
		  "c.json: /set/~1protocol~1kind: the plan sets /protocol/kind "
		  "itself (from /candidates/protocols)" },
		{ "\"set\": {\"/cloud/gpu/usd_per_hour\": 0.1}",
		  "c.json: /set/~1cloud~1gpu~1usd_per_hour: the plan sets "
		  "/cloud/gpu itself" },
		{ "\"set\": {\"/slo/tpot_s\": 0.01}",
		  "c.json: /set/~1slo~1tpot_s: the plan sets /slo/tpot_s" },
		{ "\"set\": {\"/protocol\": {\"kind\": \"sync\"}}",
		  "c.json: /set/~1protocol: sets the whole of /protocol, which "
		  "holds /protocol/kind the plan sets itself" },
		{ "\"set\": {\"/cloud\": {}}", "c.json: /set/~1cloud: sets the "
		  "whole of /cloud, which holds /cloud/gpu" },
		{ "\"set\": {\"/tenants/0/protocol\": {\"kind\": \"edge_only\"}}",
		  "c.json: base: /tenants/0/protocol: the group runs its own "
		  "protocol (edge_only), not the candidates' (cloud_only)" },
		{ "\"set\": {\"/tenants/0/slo\": {\"ttft_s\": 1, \"tpot_s\": 0.01}}",
		  "c.json: base: /tenants/0/slo: the group has its own SLO" },
		{ "\"seeds\": [2, 2]", "c.json: /seeds/1: expected a seed not "
		  "listed before, got 2" },
		{ "\"candidates\": {\"protocols\": [\"cloud_only\", \"sync\"], "
		  "\"gammas\": [4, 0]}", "c.json: /candidates/gammas/1: " },
		{ "\"candidates\": {\"protocols\": [\"cloud_only\"], "
		  "\"gpus\": [\"A100-80G\", \"L40S\", \"A100-80G\"]}",
		  "c.json: /candidates/gpus/2: expected a value not listed "
		  "before, got \"A100-80G\"" },
		{ "\"candidates\": {\"protocols\": [\"sync\"], "
		  "\"gammas\": [4, 4.0]}", "c.json: /candidates/gammas/1: "
		  "expected a value not listed before, got 4" },
		{ "\"candidates\": {\"protocols\": [\"cloud_only\"], "
		  "\"gpus\": [{\"preset\": \"L4\", \"usd_per_hour\": 0.44}, "
		  "{\"preset\": \"L4\", \"usd_per_hour\": 0.8}]}",
		  "c.json: /candidates/gpus/1: expected a GPU named apart from "
		  "/candidates/gpus/0 (give each a \"name\")" },
	};
	static char out[16384];
	char rest[512];
	json_t *cfg;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(rest, sizeof(rest), "\"slo\": {\"ttft_s\": 2, \"tpot_s\": "
			 "0.2}, %s%s", bad[i].rest, strstr(bad[i].rest,
			 "candidates") ? "" : ", \"candidates\": {\"protocols\": "
			 "[\"cloud_only\"]}");
		CHECK_MSG(plan_of("c.json", rest, out, sizeof(out)) == 2 &&
			  strstr(out, bad[i].said) && !t_exists("c.json.out"),
			  "%zu: %s", i, out);
	}
	CHECK_MSG(plan_of("ok.json", "\"slo\": {\"ttft_s\": 2, \"tpot_s\": "
			  "0.2, \"attainment\": 0.5}, \"seeds\": [1], \"set\": "
			  "{\"/cloud/gpu/overhead_s\": 0.0125}, \"candidates\": "
			  "{\"gpus\": [\"A100-80G\"], \"protocols\": "
			  "[\"cloud_only\"]}", out, sizeof(out)) <= 1, "%s", out);
	{
		char args[PATH_MAX * 2];

		snprintf(args, sizeof(args), "plan %s -o %s/nob.out --quiet",
			 t_write("nob.json", "{\"base\": \"nowhere.json\", \"slo\": "
				 "{\"ttft_s\": 2, \"tpot_s\": 0.2}}"), t_tmpdir());
		CHECK_MSG(t_run(args, out, sizeof(out)) == 2 &&
			  strstr(out, "nob.json: /base: ") &&
			  strstr(out, "nowhere.json"), "%s", out);
	}
	/* a GPU of the plan's own is named by its name, and --quiet keeps
	 * the answer */
	CHECK_MSG(plan_of("named.json", "\"slo\": {\"ttft_s\": 2, \"tpot_s\": "
			  "0.2, \"attainment\": 0.5}, \"seeds\": [1], "
			  "\"candidates\": {\"gpus\": [{\"name\": \"MyA100\", "
			  "\"preset\": \"A100-80G\"}], \"protocols\": "
			  "[\"cloud_only\"]}", out, sizeof(out)) == 0 &&
		  strstr(out, "plan: MyA100 tp1 continuous cloud_only x "),
		  "%s", out);
	cfg = load("ok.json.out/config.resolved.json");
	CHECK(cfg && json_number_value(json_object_get(json_object_get(
		json_object_get(cfg, "cloud"), "gpu"), "overhead_s")) == 0.0125);
	json_decref(cfg);
}

/* 512 phones asking at once of L40S cloud_only: at 2, 4 and 8 replicas
 * none meets both bounds, while the TTFT share grows (0.25, 0.5, 1); the
 * search does not stop there as if the SLO were bound elsewhere, and
 * finds the replicas that meet it */
static void plateau_sees_shares(void)
{
	static char out[16384];
	char text[PATH_MAX + 512], args[PATH_MAX * 2];

	snprintf(text, sizeof(text), "{\"base\": \"%s/configs/paper/async.json\", "
		 "\"set\": {\"/tenants/0/count\": 512, \"/tenants/0/workload/"
		 "requests\": 1, \"/tenants/0/workload/start_s\": 0}, \"slo\": "
		 "{\"ttft_s\": 2, \"tpot_s\": 0.05, \"attainment\": 0.9}, "
		 "\"seeds\": [1, 2], \"candidates\": {\"gpus\": [\"L40S\"], "
		 "\"protocols\": [\"cloud_only\"]}}", repo());
	snprintf(args, sizeof(args), "plan %s -o %s/p --quiet",
		 t_write("plateau.json", text), t_tmpdir());
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
}

/* With an MPI build and HYBRIDSPEC_MPI_BIN naming it, two ranks give the
 * points.csv of one process. Skipped otherwise. */
static void mpi_two_ranks(void)
{
	static char out[16384];
	const char *mpi = getenv("HYBRIDSPEC_MPI_BIN");
	char args[PATH_MAX * 2], cmd[PATH_MAX * 3];
	char *a, *b;

	if (!mpi || system("command -v mpirun >/dev/null 2>&1") != 0) {
		t_skip("set HYBRIDSPEC_MPI_BIN to build-mpi/hybridspec (make "
		       "MPI=1) with mpirun installed");
		return;
	}
	snprintf(args, sizeof(args), "plan %s -o %s/one -j 1 --quiet",
		 plan_file(), t_tmpdir());
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	snprintf(cmd, sizeof(cmd), "cd '%s' && mpirun --allow-run-as-root "
		 "--oversubscribe -np 2 '%s' plan '%s' -o two -j 1 --quiet "
		 ">mpi.out 2>&1", t_tmpdir(), mpi, plan_file());
	CHECK_MSG(system(cmd) == 0, "mpirun failed (see %s/mpi.out)",
		  t_tmpdir());
	a = t_slurp("one/points.csv");
	b = t_slurp("two/points.csv");
	CHECK(a && b && !strcmp(a, b));
	free(a);
	free(b);
}

/* Each candidate's config says what it runs and warns of nothing, from
 * a base whose protocol has a window of 8: async keeps the window and
 * takes the candidate's gamma; sync and cloud_only, which keep one block
 * or none, take a window of 1, and cloud_only, which drafts nothing, the
 * default gamma (the base's own gamma had stayed, and a rerun of the
 * answer's config warned) */
static void candidates_say_what_they_run(void)
{
	char text[PATH_MAX + 512];
	struct plan p;
	struct err e;

	snprintf(text, sizeof(text), "{\"base\": \"%s/tests/data/plan-base.json\", "
		 "\"set\": {\"/protocol/window\": 8}, \"slo\": {\"ttft_s\": 2, "
		 "\"tpot_s\": 0.2, \"attainment\": 0.9}, \"candidates\": "
		 "{\"protocols\": [\"async\", \"sync\", \"cloud_only\"], "
		 "\"gammas\": [6]}}", repo());
	if (plan_load(&p, t_write("w.json", text), &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	CHECK(p.n_candidates == 3);
	for (size_t c = 0; c < p.n_candidates; c++) {
		size_t n;
		char **sets = plan_sets(&p, c, 1, 1, -1, &n), name[160];
		struct cfg cf;

		plan_candidate_name(&p, c, name, sizeof(name));
		if (cfg_load(&cf, p.base, (const char *const *)sets, n, &e) < 0) {
			CHECK_MSG(0, "%s: %s", name, e.msg);
		} else {
			const struct cfg_protocol *pr = &cf.groups[0].proto;
			bool async = pr->kind == PROTO_ASYNC;

			CHECK_MSG(!cf.warnings, "%s: %s", name, cf.warnings);
			CHECK_MSG(pr->window == (async ? 8 : 1) &&
				  pr->gamma == (pr->kind == PROTO_CLOUD_ONLY ?
						CFG_GAMMA_DEFAULT : 6) &&
				  json_integer_value(jx_at(cf.doc,
						"/protocol/window")) == pr->window,
				  "%s: window %d, gamma %d", name, pr->window,
				  pr->gamma);
			cfg_release(&cf);
		}
		sweep_sets_free(sets, n);
	}
	plan_release(&p);
}

const struct tcase plan_tests[] = {
	{ "plan: a candidate's config says what it runs and warns of nothing",
	  candidates_say_what_they_run },
	{ "plan: two MPI ranks find what one process finds", mpi_two_ranks },
	{ "plan: the rate question's answer meets the SLO, the next load up "
	  "does not", rate_question },
	{ "plan: where the load no longer binds, the answer is the highest",
	  rate_unbound },
	{ "plan: the answer meets the SLO, one replica fewer does not, and it "
	  "is the cheapest", answer_is_minimal },
	{ "plan: an SLO nothing meets exits 1 with the reason; bad input, a "
	  "GPU without a price 2",
	  impossible_slo },
	{ "plan: a plan of one configuration draws its front", one_point_front },
	{ "plan: a search goes on while a bound's share grows",
	  plateau_sees_shares },
	{ "plan: what the plan sets itself is not given twice; every "
	  "candidate checked before a run", plan_conflicts },
	{ 0 },
};
