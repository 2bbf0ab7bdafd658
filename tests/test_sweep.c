/* test_sweep.c: "hybridspec sweep": points, the table's values, parallel
 * and resumed runs, bad sweep files, the library's order and stats, and
 * the figures scripts/plots.sh draws from a sweep. */
#include "harness.h"
#include "fs.h"

#include "sweep.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* t(0.975, 2): Student's t with 2 degrees of freedom has the quantile
 * (2p - 1) sqrt(2 / (1 - (2p - 1)^2)) in closed form */
#define T975_DF2 (0.95 * sqrt(2 / (1 - 0.95 * 0.95)))
/* a mean read back from 15-digit files, against one computed here */
#define MEAN_TOL 1e-12

static char repo[PATH_MAX];

/* tests/data/NAME as an absolute path (static buffer). */
static const char *data(const char *name)
{
	static char p[PATH_MAX + 64];

	if (!repo[0] && !getcwd(repo, sizeof(repo)))
		abort();
	snprintf(p, sizeof(p), "%s/tests/data/%s", repo, name);
	return p;
}

/* The CSV as rows of fields (no quoting in these files). */
struct csv {
	char *text;
	char **cell; /* (rows, cols) */
	size_t rows, cols;
};

static int csv_read(struct csv *c, const char *name)
{
	size_t cap = 0, n = 0, cols = 0;
	char *line, *save;

	*c = (struct csv){ 0 };
	if (!(c->text = t_slurp(name)))
		return -1;
	for (line = strtok_r(c->text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t k = 0;

		for (char *f = line;; k++) {
			char *comma = strchr(f, ',');

			if (n + 1 > cap)
				c->cell = realloc(c->cell, (cap = 2 * cap + 64) *
							   sizeof(*c->cell));
			c->cell[n++] = f;
			if (!comma)
				break;
			*comma = '\0';
			f = comma + 1;
		}
		if (!c->rows)
			cols = k + 1;
		else if (k + 1 != cols)
			return -1;
		c->rows++;
	}
	c->cols = cols;
	return 0;
}

static const char *csv_get(const struct csv *c, size_t row, const char *col)
{
	for (size_t j = 0; j < c->cols; j++)
		if (!strcmp(c->cell[j], col))
			return c->cell[row * c->cols + j];
	return NULL;
}

static void csv_free(struct csv *c)
{
	free(c->text);
	free(c->cell);
}

static double summary_num(const char *dir, size_t point, int seed,
			  const char *obj, const char *key)
{
	char p[2048];
	json_t *v;
	double x;

	snprintf(p, sizeof(p), "%s/%s/points/%zu/seed-%d/summary.json",
		 t_tmpdir(), dir, point, seed);
	v = json_load_file(p, 0, NULL);
	x = json_number_value(json_object_get(json_object_get(v, obj), key));
	json_decref(v);
	return v ? x : NAN;
}

/* The small sweep: 2 x 2 grid, 2 zipped values, seeds 1..3. */
static void end_to_end(void)
{
	static const char *const count[] = { "1", "1", "1", "1", "3", "3", "3",
					     "3" };
	static const char *const kind[] = { "sync", "sync", "async", "async" };
	static const char *const alpha[] = { "0.6", "0.9" };
	static const char *const rtt[] = { "0.03", "0.08" };
	char out[4096], args[2 * PATH_MAX];
	struct csv c;

	snprintf(args, sizeof(args), "sweep %s -o s -j2 --quiet",
		 data("sweep-small.json"));
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	CHECK_MSG(out[0] == '\0', "--quiet printed \"%s\"", out);
	CHECK(t_exists("s/sweep.json") && t_exists("s/points/7/seed-3/summary.json"));
	CHECK(t_exists("s/points/0/seed-1/config.resolved.json"));
	if (csv_read(&c, "s/sweep.csv") < 0) {
		CHECK_MSG(0, "no readable s/sweep.csv");
		return;
	}
	CHECK_MSG(!strcmp(c.cell[0], "point") && c.cols == 14, "%zu columns",
		  c.cols);
	CHECK(!strcmp(c.cell[1], "tenants.0.count") &&
	      !strcmp(c.cell[2], "protocol.kind") &&
	      !strcmp(c.cell[3], "tenants.0.acceptance.alpha") &&
	      !strcmp(c.cell[4], "tenants.0.wan.rtt_s") &&
	      !strcmp(c.cell[5], "n_seeds") &&
	      !strcmp(c.cell[6], "all.itl_s.mean_mean") &&
	      !strcmp(c.cell[7], "all.itl_s.mean_ci95") &&
	      !strcmp(c.cell[13], "cloud.busy_fraction_ci95"));
	CHECK_MSG(c.rows == 9, "%zu rows, want a header and 8 points", c.rows);
	for (size_t p = 0; p < 8 && p + 1 < c.rows; p++) {
		size_t r = p + 1;
		double x[3], sum = 0, ss = 0, mean, ci;
		char num[32];

		snprintf(num, sizeof(num), "%zu", p);
		CHECK(!strcmp(csv_get(&c, r, "point"), num));
		/* the first grid key varies slowest, the zip fastest */
		CHECK_MSG(!strcmp(csv_get(&c, r, "tenants.0.count"), count[p]) &&
			  !strcmp(csv_get(&c, r, "protocol.kind"), kind[p % 4]) &&
			  !strcmp(csv_get(&c, r, "tenants.0.acceptance.alpha"),
				  alpha[p % 2]) &&
			  !strcmp(csv_get(&c, r, "tenants.0.wan.rtt_s"),
				  rtt[p % 2]),
			  "point %zu: the varied values", p);
		CHECK(!strcmp(csv_get(&c, r, "n_seeds"), "3"));
		for (int k = 0; k < 3; k++) {
			x[k] = summary_num("s", p, k + 1, "all", "tokens_per_s");
			sum += x[k];
		}
		mean = sum / 3;
		for (int k = 0; k < 3; k++)
			ss += (x[k] - mean) * (x[k] - mean);
		ci = T975_DF2 * sqrt(ss / 2) / sqrt(3);
		CHECK_NEAR(atof(csv_get(&c, r, "all.tokens_per_s_mean")), mean,
			   MEAN_TOL * fabs(mean));
		CHECK_NEAR(atof(csv_get(&c, r, "all.tokens_per_s_ci95")), ci,
			   MEAN_TOL * fabs(mean));
		CHECK(ci > 0);
	}
	csv_free(&c);
}

/* Any figure of summary.json is a metric: costs and energies too (none
 * is defined before a run, so the check takes null), and a figure a run
 * leaves undefined (a device without power figures: battery) is an empty
 * cell. */
static void cost_metrics(void)
{
	char out[4096], text[2 * PATH_MAX];
	struct csv c;

	snprintf(text, sizeof(text), "{\"base\": \"%s\", \"grid\": "
		 "{\"/protocol/kind\": [\"sync\", \"cloud_only\"]}, "
		 "\"metrics\": [\"/all/usd_per_mtok\", "
		 "\"/all/edge_j_per_token\", \"/all/tpot_s\"]}",
		 data("small.json"));
	t_write("s.json", text);
	CHECK_MSG(t_run("sweep s.json -o out -j2 --quiet", out, sizeof(out)) == 0,
		  "%s", out);
	if (csv_read(&c, "out/sweep.csv") < 0) {
		CHECK_MSG(0, "no readable out/sweep.csv");
		return;
	}
	for (size_t r = 1; r < c.rows; r++) {
		CHECK(atof(csv_get(&c, r, "all.usd_per_mtok_mean")) > 0);
		CHECK(atof(csv_get(&c, r, "all.tpot_s_mean")) > 0);
	}
	/* cloud_only's device computes nothing: no energy a token */
	CHECK(c.rows == 3 &&
	      !strcmp(csv_get(&c, 2, "protocol.kind"), "cloud_only") &&
	      !strcmp(csv_get(&c, 2, "all.edge_j_per_token_mean"), ""));
	csv_free(&c);
}

/* A run directory holds the point's values and its seed. */
static void run_configs(void)
{
	char out[4096], args[2 * PATH_MAX], p[1024];
	json_t *v;

	snprintf(args, sizeof(args), "sweep %s -o s --quiet",
		 data("sweep-small.json"));
	CHECK(t_run(args, out, sizeof(out)) == 0);
	snprintf(p, sizeof(p), "%s/s/points/6/seed-2/config.resolved.json",
		 t_tmpdir());
	v = json_load_file(p, 0, NULL);
	CHECK_MSG(v != NULL, "no %s", p);
	CHECK(json_integer_value(json_object_get(v, "seed")) == 2);
	CHECK(!strcmp(json_string_value(json_object_get(
			      json_object_get(v, "protocol"), "kind")), "async"));
	CHECK(json_integer_value(json_object_get(json_array_get(
		      json_object_get(v, "tenants"), 0), "count")) == 3);
	/* "set" applies to every point */
	CHECK(json_integer_value(json_object_get(json_object_get(json_array_get(
		      json_object_get(v, "tenants"), 1), "workload"), "requests"))
	      == 1);
	json_decref(v);
	/* a "set" that needs a key the grid gives (a Poisson arrival, its
	 * rate varied) is no error: each point is whole (it had been
	 * refused, the base and the set read alone) */
	snprintf(args, sizeof(args), "{\"base\": \"%s\", \"set\": "
		 "{\"/tenants/0/workload/arrival\": \"poisson\"}, \"grid\": "
		 "{\"/tenants/0/workload/rate_per_s\": [1, 2], "
		 "\"/protocol/gamma\": [2, 3]}}", data("small.json"));
	t_write("poisson.json", args);
	CHECK_MSG(t_run("sweep poisson.json -o ps --quiet", out,
			sizeof(out)) == 0 &&
		  t_exists("ps/points/3/seed-7/summary.json"), "%s", out);
}

/* One seed: the mean is the run's value and the half-width 0. */
static void one_seed(void)
{
	char out[4096], text[2 * PATH_MAX];
	struct csv c;

	snprintf(text, sizeof(text), "{\"base\": \"%s\", \"seeds\": [5], "
		 "\"grid\": {\"/protocol/gamma\": [2, 6]}, \"metrics\": "
		 "[\"/all/alpha\", \"/groups/1/tokens_per_s\"]}",
		 data("small.json"));
	t_write("one.json", text);
	CHECK(t_run("sweep one.json --quiet -o o", out, sizeof(out)) == 0);
	if (csv_read(&c, "o/sweep.csv") < 0) {
		CHECK_MSG(0, "no readable o/sweep.csv: %s", out);
		return;
	}
	CHECK(c.rows == 3 && c.cols == 7);
	CHECK(!strcmp(c.cell[c.cols - 2], "groups.1.tokens_per_s_mean"));
	for (size_t r = 1; r < c.rows; r++) {
		CHECK(!strcmp(csv_get(&c, r, "n_seeds"), "1"));
		CHECK(!strcmp(csv_get(&c, r, "all.alpha_ci95"), "0"));
		CHECK(!strcmp(csv_get(&c, r, "groups.1.tokens_per_s_ci95"), "0"));
		CHECK_NEAR(atof(csv_get(&c, r, "all.alpha_mean")),
			   summary_num("o", r - 1, 5, "all", "alpha"), MEAN_TOL);
	}
	csv_free(&c);
}

/* Runs that measured nothing (a warm-up past their end) are a warning
 * saying how many, their cells empty; none, no warning. */
static void empty_runs(void)
{
	char out[4096], text[2 * PATH_MAX];

	for (int warm = 0; warm < 2; warm++) {
		snprintf(text, sizeof(text), "{\"base\": \"%s\", \"seeds\": "
			 "[5], \"set\": {\"/warmup_s\": %d}, \"grid\": "
			 "{\"/protocol/gamma\": [2, 6]}}", data("small.json"),
			 warm ? 100000 : 0);
		t_write("e.json", text);
		CHECK_MSG(t_run("sweep e.json -o e --overwrite", out, sizeof(out))
			  == 0 && !strstr(out, "warning") == !warm &&
			  (!warm || strstr(out, "hybridspec sweep: warning: 2 of "
					   "2 runs measured no finished request")),
			  "%s", out);
	}
}

/* -j1 and -j2 write the same table, byte for byte. */
static void parallel_identical(void)
{
	char out[4096], args[2 * PATH_MAX];
	char *a, *b;

	for (int j = 1; j <= 2; j++) {
		snprintf(args, sizeof(args), "sweep %s -o j%d -j%d --quiet",
			 data("sweep-small.json"), j, j);
		CHECK(t_run(args, out, sizeof(out)) == 0);
	}
	a = t_slurp("j1/sweep.csv");
	b = t_slurp("j2/sweep.csv");
	CHECK(a && b && !strcmp(a, b));
	free(a);
	free(b);
}

/* --resume reruns only what is missing; the table comes out the same. */
static void resume(void)
{
	char out[4096], args[2 * PATH_MAX], cmd[4 * PATH_MAX], src[PATH_MAX + 64];
	char *a, *b;

	snprintf(args, sizeof(args), "sweep %s -o r --quiet",
		 data("sweep-small.json"));
	CHECK(t_run(args, out, sizeof(out)) == 0);
	a = t_slurp("r/sweep.csv");
	/* --resume never writes into a folder whose sweep.json hybridspec
	 * did not write, nor beside a file of the user's */
	{
		char other[3 * PATH_MAX];

		snprintf(other, sizeof(other), "%s/u", t_tmpdir());
		CHECK(mkdir(other, 0777) == 0);
		t_write("u/sweep.json", "{\"name\": \"other\"}");
		snprintf(other, sizeof(other), "sweep %s -o u --quiet --resume",
			 data("sweep-small.json"));
		CHECK_MSG(t_run(other, out, sizeof(out)) == 2 &&
			  strstr(out, "'u/sweep.json' is not a sweep.json "
				 "hybridspec wrote") && !t_exists("u/points"),
			  "%s", out);
		t_write("r/notes.txt", "mine\n");
		snprintf(other, sizeof(other), "%s --resume", args);
		CHECK_MSG(t_run(other, out, sizeof(out)) == 2 &&
			  strstr(out, "'r/notes.txt' was not written by "
				 "hybridspec"), "%s", out);
		snprintf(other, sizeof(other), "%s/r/notes.txt", t_tmpdir());
		remove(other);
	}
	/* without --resume, a directory in use is an error */
	CHECK(t_run(args, out, sizeof(out)) == 2);
	CHECK_MSG(strstr(out, "'r' exists and is not empty: add --resume"),
		  "%s", out);
	/* --overwrite starts a sweep's folder over, one with a stranger's
	 * file in it never */
	snprintf(cmd, sizeof(cmd), "sweep %s -o o --quiet",
		 data("sweep-small.json"));
	CHECK(t_run(cmd, out, sizeof(out)) == 0);
	strcat(cmd, " --overwrite");
	CHECK_MSG(t_run(cmd, out, sizeof(out)) == 0, "%s", out);
	/* figures plot drew into a folder of its own there are the tool's */
	CHECK_MSG(t_run("plot o -o o/figs --quiet", out, sizeof(out)) == 0,
		  "%s", out);
	CHECK_MSG(t_run(cmd, out, sizeof(out)) == 0 && !t_exists("o/figs"),
		  "%s", out);
	/* the folder named with a '/' at its end is the same folder (the
	 * walk had read 'o//weep.csv') */
	snprintf(args, sizeof(args), "sweep %s -o o/ --quiet --overwrite",
		 data("sweep-small.json"));
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	/* a sweep file of the user's named sweep.json there is not the
	 * sweep's own, whatever its name: refused, with --overwrite or not,
	 * and kept */
	{
		char *mine;

		b = t_slurp("o/sweep.json");
		CHECK(b != NULL);
		t_write("o/sweep.json", "{\"name\": \"mine\"}\n");
		snprintf(args, sizeof(args), "sweep %s -o o --quiet",
			 data("sweep-small.json"));
		CHECK_MSG(t_run(args, out, sizeof(out)) == 2 &&
			  strstr(out, "'o/sweep.json' is not a sweep.json "
				 "hybridspec wrote") &&
			  strstr(out, "refusing to write into 'o'"), "%s", out);
		CHECK_MSG(t_run(cmd, out, sizeof(out)) == 2 &&
			  strstr(out, "refusing to replace 'o'"), "%s", out);
		mine = t_slurp("o/sweep.json");
		CHECK(mine && !strcmp(mine, "{\"name\": \"mine\"}\n"));
		free(mine);
		t_write("o/sweep.json", b ? b : "");
		free(b);
	}
	/* another command's results there are not the sweep's to replace */
	snprintf(args, sizeof(args), "config %s -o o/mine", data("small.json"));
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	CHECK_MSG(t_run(cmd, out, sizeof(out)) == 2 &&
		  strstr(out, "o/mine' was not written by hybridspec") &&
		  t_exists("o/mine/config.resolved.json"), "%s", out);
	snprintf(src, sizeof(src), "rm -rf '%s/o/mine'", t_tmpdir());
	CHECK(system(src) == 0);
	t_write("o/mine.txt", "mine\n");
	CHECK_MSG(t_run(cmd, out, sizeof(out)) == 2 &&
		  strstr(out, "o/mine.txt' was not written by hybridspec: "
			 "refusing to replace 'o'") &&
		  t_exists("o/mine.txt") && t_exists("o/sweep.csv"), "%s", out);
	/* nor with one deeper: in a run's folder, or a folder of its own */
	snprintf(src, sizeof(src), "%s/o/mine.txt", t_tmpdir());
	remove(src);
	t_write("o/points/0/seed-1/mine.txt", "mine\n");
	CHECK_MSG(t_run(cmd, out, sizeof(out)) == 2 &&
		  strstr(out, "o/points/0/seed-1/mine.txt' was not written by "
			 "hybridspec: refusing to replace 'o'") &&
		  t_exists("o/points/0/seed-1/mine.txt") &&
		  t_exists("o/points/0/seed-1/summary.json"), "%s", out);
	snprintf(src, sizeof(src), "%s/o/points/0/seed-1/mine.txt", t_tmpdir());
	remove(src);
	/* a link the tool did not make, too (its target untouched) */
	{
		char link[PATH_MAX + 64];

		snprintf(src, sizeof(src), "%s/r", t_tmpdir());
		snprintf(link, sizeof(link), "%s/o/points/0/seed-1/elsewhere",
			 t_tmpdir());
		CHECK(symlink(src, link) == 0);
		CHECK_MSG(t_run(cmd, out, sizeof(out)) == 2 &&
			  strstr(out, "seed-1/elsewhere' was not written"),
			  "%s", out);
		remove(link);
	}
	snprintf(src, sizeof(src), "%s/o/points/0/notes", t_tmpdir());
	mkdir(src, 0755);
	t_write("o/points/0/notes/a.txt", "mine\n");
	CHECK_MSG(t_run(cmd, out, sizeof(out)) == 2 &&
		  strstr(out, "o/points/0/notes' was not written") &&
		  t_exists("o/points/0/notes/a.txt"), "%s", out);
	/* nor an empty folder of the user's among the runs (a run is
	 * renamed in whole, never empty): it had been removed */
	snprintf(src, sizeof(src), "rm -r '%s/o/points/0/notes' && mkdir "
		 "'%s/o/points/0/seed-9' '%s/o/points/mine'", t_tmpdir(),
		 t_tmpdir(), t_tmpdir());
	CHECK(system(src) == 0);
	CHECK_MSG(t_run(cmd, out, sizeof(out)) == 2 &&
		  (strstr(out, "o/points/0/seed-9' was not written") ||
		   strstr(out, "o/points/mine' was not written")) &&
		  t_exists("o/points/0/seed-9") && t_exists("o/points/mine"),
		  "%s", out);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/r/points/5/seed-2' "
		 "'%s/r/points/2'", t_tmpdir(), t_tmpdir());
	CHECK(system(cmd) == 0);
	/* a kept run's config written with 17 digits a number (as before
	 * the fewest) is the same config */
	{
		json_t *v;

		snprintf(src, sizeof(src), "%s/r/points/0/seed-1/"
			 "config.resolved.json", t_tmpdir());
		v = json_load_file(src, 0, NULL);
		CHECK(v && json_dump_file(v, src, JSON_INDENT(2) |
					  JSON_REAL_PRECISION(17)) == 0);
		json_decref(v);
		b = t_slurp("r/points/0/seed-1/config.resolved.json");
		CHECK(b && strstr(b, "0.10000000000000001"));
		free(b);
	}
	snprintf(args, sizeof(args), "sweep %s -o r --resume",
		 data("sweep-small.json"));
	CHECK(t_run(args, out, sizeof(out)) == 0);
	CHECK_MSG(strstr(out, "4 runs done, 20 kept"), "%s", out);
	CHECK(t_exists("r/points/5/seed-2/summary.json"));
	b = t_slurp("r/sweep.csv");
	CHECK(a && b && !strcmp(a, b));
	free(a);
	free(b);
	/* a sweep that now gives a finished run another config is refused */
	snprintf(src, sizeof(src), "%s", data("sweep-small.json"));
	snprintf(cmd, sizeof(cmd), "sed 's/0.08/0.09/' '%s' > '%s/changed.json'"
		 " && cp '%s' '%s'", src, t_tmpdir(), data("small.json"),
		 t_tmpdir());
	CHECK(system(cmd) == 0);
	CHECK(t_run("sweep changed.json -o r --resume", out, sizeof(out)) == 2);
	CHECK_MSG(strstr(out, "was run with another config than the sweep now "
			      "gives it"), "%s", out);
	CHECK(t_exists("r/sweep.csv"));
	/* and a finished run whose summary does not read, before anything
	 * is removed (the table had been, then the resume failed) */
	snprintf(src, sizeof(src), "%s/r/points/1/seed-1/summary.json",
		 t_tmpdir());
	remove(src);
	CHECK(t_run(args, out, sizeof(out)) == 2);
	CHECK_MSG(strstr(out, "r/points/1/seed-1/summary.json: cannot read") &&
		  strstr(out, "remove 'r/points/1/seed-1' to run it again"),
		  "%s", out);
	CHECK(t_exists("r/sweep.csv"));
}

/* long.json: a sweep of some seconds (8 runs of 64 tenants) */
static void write_long_sweep(void)
{
	char text[2 * PATH_MAX];

	snprintf(text, sizeof(text), "{\"base\": \"%s\", \"set\": "
		 "{\"/tenants/0/workload/requests\": 100, \"/tenants/0/count\": "
		 "64}, \"grid\": {\"/protocol/kind\": [\"sync\", \"async\"]}, "
		 "\"replicates\": 4}", data("small.json"));
	t_write("long.json", text);
}

/* SIGTERM stops the workers and leaves no partial file; --resume ends it
 * with the table of an uninterrupted sweep. */
static void interrupted(void)
{
	char out[4096], cmd[3 * PATH_MAX], text[2 * PATH_MAX];
	const char *bin = getenv("HYBRIDSPEC_BIN");
	char *a, *b, *rc_text;
	struct err e;
	int rc;

	write_long_sweep();
	/* a folder whose name a shell splits: the hint quotes it */
	snprintf(cmd, sizeof(cmd), "cd '%s' && { '%s' sweep long.json -o 'i t' "
		 "-j2 --quiet 2>err & p=$!; sleep 0.25; kill -TERM $p; wait $p;"
		 " echo $? > rc; }", t_tmpdir(), bin ? bin : "build/hybridspec");
	CHECK(system(cmd) == 0);
	rc_text = t_slurp("rc");
	rc = rc_text ? atoi(rc_text) : -1;
	free(rc_text);
	if (rc == 0) {
		printf("    note: the sweep ended before SIGTERM; the interrupt "
		       "is not checked\n");
		snprintf(text, sizeof(text), "sweep long.json --resume -o 'i t'");
	} else {
		static const char hint[] = "finish the sweep with: hybridspec ";
		char *err = t_slurp("err"), *at = err ? strstr(err, hint) : NULL;

		CHECK_MSG(rc == 143, "exit status %d, want 143", rc);
		CHECK(!t_exists("i t/sweep.csv"));
		snprintf(cmd, sizeof(cmd), "test -z \"$(find '%s/i t' -name '.*' "
			 "! -name .hybridspec-files)\"", t_tmpdir());
		CHECK_MSG(system(cmd) == 0, "temporary files left behind");
		CHECK_MSG(at && strstr(at, "-o 'i t'\n"), "%s", err);
		/* what the hint says is what finishes it */
		snprintf(text, sizeof(text), "%.*s", at ? (int)strcspn(
			 at + strlen(hint), "\n") : 0, at ? at + strlen(hint) : "");
		free(err);
	}
	/* a run's temporary folder killed between its mkdir and its mark:
	 * empty, removed by the resume (it had refused the folder) */
	snprintf(cmd, sizeof(cmd), "%s/i t/points/0/.seed-0.tmp-%ld",
		 t_tmpdir(), t_dead_pid());
	CHECK_MSG(fs_mkdirs(cmd, &e) == 0, "%s", e.msg);
	strcat(text, " -j2 --quiet");
	CHECK_MSG(t_run(text, out, sizeof(out)) == 0, "%s: %s", text, out);
	CHECK_MSG(!fs_is_dir(cmd), "%s left", cmd);
	CHECK(t_run("sweep long.json -o u -j2 --quiet", out, sizeof(out)) == 0);
	a = t_slurp("i t/sweep.csv");
	b = t_slurp("u/sweep.csv");
	CHECK(a && b && !strcmp(a, b));
	free(a);
	free(b);
}

/* A second sweep of a folder a sweep is running in refuses, and leaves
 * the first to finish (a --resume beside it had removed its temporaries
 * and failed both) */
static void locked(void)
{
	char out[4096], cmd[3 * PATH_MAX], *rc_text;
	const char *bin = getenv("HYBRIDSPEC_BIN");

	write_long_sweep();
	snprintf(cmd, sizeof(cmd), "cd '%s' && { '%s' sweep long.json -o l -j1 "
		 "--quiet & p=$!; sleep 0.3; '%s' sweep long.json -o l -j1 "
		 "--resume --quiet 2>err2; echo $? > rc2; wait $p; echo $? > rc; }",
		 t_tmpdir(), bin ? bin : "build/hybridspec",
		 bin ? bin : "build/hybridspec");
	CHECK(system(cmd) == 0);
	rc_text = t_slurp("rc");
	CHECK_MSG(rc_text && atoi(rc_text) == 0, "the first: %s",
		  rc_text ? rc_text : "?");
	free(rc_text);
	CHECK(t_exists("l/sweep.csv"));
	rc_text = t_slurp("rc2");
	if (rc_text && atoi(rc_text) == 0) {
		printf("    note: the first sweep ended before the second began; "
		       "the lock is not checked\n");
	} else {
		char *err = t_slurp("err2");

		CHECK_MSG(rc_text && atoi(rc_text) == 2 && err &&
			  strstr(err, "'l' is in use by a sweep running now"),
			  "%s", err ? err : "");
		free(err);
	}
	free(rc_text);
	CHECK_MSG(t_run("sweep long.json -o l --resume --quiet", out,
			sizeof(out)) == 0, "%s", out);
}

struct bad_sweep {
	const char *what, *text, *want;
};

/* Bad sweep files: exit 2, the file and the place named, nothing written. */
static void bad_sweeps(void)
{
	static const struct bad_sweep cases[] = {
		{ "unknown key", "{\"base\": \"B\", \"grdi\": {}}",
		  "s.json: /grdi: unknown key \"grdi\"" },
		{ "zip lengths differ", "{\"base\": \"B\", \"zip\": "
		  "{\"/tenants/0/count\": [1, 2], \"/protocol/gamma\": [3]}}",
		  "s.json: /zip/~1protocol~1gamma: expected 2 values, as many as "
		  "/zip/~1tenants~10~1count has, got 1" },
		{ "a value the config rejects", "{\"base\": \"B\", \"grid\": "
		  "{\"/tenants/0/count\": [2, 0]}}",
		  "s.json: /grid/~1tenants~10~1count/1: " },
		{ "a bad combination", "{\"base\": \"B\", \"grid\": "
		  "{\"/tenants/0/name\": [\"a\", \"b\"], "
		  "\"/tenants/1/name\": [\"b\", \"c\"]}}",
		  "s.json: point 2 (/tenants/0/name=\"b\", /tenants/1/name="
		  "\"b\"): " },
		{ "a fixed value the config rejects", "{\"base\": \"B\", \"set\": "
		  "{\"/cloud/polcy\": \"slo\"}}",
		  "s.json: /set: " },
		{ "not an array", "{\"base\": \"B\", \"grid\": "
		  "{\"/tenants/0/count\": 4}}",
		  "s.json: /grid/~1tenants~10~1count: expected a non-empty array "
		  "of values, got 4" },
		{ "a grid's value twice", "{\"base\": \"B\", \"grid\": "
		  "{\"/tenants/0/count\": [1, 2, 1.0]}}",
		  "s.json: /grid/~1tenants~10~1count/2: expected a value not "
		  "listed before, got 1.0" },
		{ "the seed as an override", "{\"base\": \"B\", \"grid\": "
		  "{\"/seed\": [1, 2]}}", "s.json: /grid/~1seed: the seed is not "
		  "a config override" },
		{ "seeds and replicates", "{\"base\": \"B\", \"seeds\": [1], "
		  "\"replicates\": 2}", "s.json: /replicates: give either" },
		{ "a seed twice", "{\"base\": \"B\", \"seeds\": [3, 1, 2, 1, 3]}",
		  "s.json: /seeds/3: seed 1 is listed twice" },
		{ "a metric not in the summary", "{\"base\": \"B\", \"metrics\": "
		  "[\"/all/itl_s/mean\", \"/all/nope\"]}",
		  "s.json: /metrics/1: \"/all/nope\" is not a figure in the "
		  "summary.json of point 0" },
		{ "a metric that is no number", "{\"base\": \"B\", \"metrics\": "
		  "[\"/all/ttft_s\"]}",
		  "s.json: /metrics/0: \"/all/ttft_s\" is not a number" },
		{ "no base", "{\"base\": \"nowhere.json\"}",
		  "/nowhere.json: cannot read" },
		{ "no base, with set", "{\"base\": \"nowhere.json\", \"set\": "
		  "{\"/tenants/0/count\": 2}}", "s.json: /base: " },
		{ "a set the grid does not complete", "{\"base\": \"B\", "
		  "\"set\": {\"/tenants/0/workload/arrival\": \"poisson\"}, "
		  "\"grid\": {\"/protocol/gamma\": [1, 2]}}",
		  "s.json: /set: " },
		{ "varied within a varied one", "{\"base\": \"B\", \"grid\": "
		  "{\"/tenants/0/wan/rtt_s\": [0.02, 0.2]}, \"zip\": "
		  "{\"/tenants/0/wan\": [{\"rtt_s\": 0.05}, {\"rtt_s\": 0.1}]}}",
		  "s.json: /zip/~1tenants~10~1wan: \"/tenants/0/wan\" and "
		  "\"/tenants/0/wan/rtt_s\" are both varied, one within the other" },
		{ "varied above a set one", "{\"base\": \"B\", \"set\": "
		  "{\"/tenants/0/wan/rtt_s\": 0.05}, \"grid\": {\"/tenants/0/wan\": "
		  "[{\"rtt_s\": 0.1}]}}", "s.json: /grid/~1tenants~10~1wan: "
		  "\"/tenants/0/wan\" is varied above \"/tenants/0/wan/rtt_s\"" },
		{ "a name that is no folder", "{\"name\": \"..\", \"base\": \"B\"}",
		  "s.json: /name: expected a name for a results folder" },
		{ "a name no CSV field holds", "{\"name\": \"a,b\", \"base\": "
		  "\"B\"}", "s.json: /name: expected a name for a results "
		  "folder: not empty, \".\" or \"..\", at most 255 bytes" },
	};
	char out[4096], text[2 * PATH_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_sweep *c = &cases[i];
		const char *b = strstr(c->text, "\"B\"");
		int rc;

		if (b)
			snprintf(text, sizeof(text), "%.*s\"%s\"%s",
				 (int)(b - c->text), c->text, data("small.json"),
				 b + 3);
		else
			snprintf(text, sizeof(text), "%s", c->text);
		t_write("s.json", text);
		rc = t_run("sweep s.json -o out -j2", out, sizeof(out));
		CHECK_MSG(rc == 2, "%s: exit status %d, want 2", c->what, rc);
		CHECK_MSG(!strncmp(out, "hybridspec: ", 12) &&
			  strstr(out, c->want), "%s: output \"%s\" lacks \"%s\"",
			  c->what, out, c->want);
		CHECK_MSG(!t_exists("out"), "%s: wrote a results directory",
			  c->what);
	}
}

static void usage(void)
{
	char out[8192];

	CHECK(t_run("sweep --help", out, sizeof(out)) == 0 &&
	      strstr(out, "--resume") && strstr(out, "sweep.csv"));
	CHECK(t_run("sweep", out, sizeof(out)) == 2 && strstr(out, "usage:"));
	CHECK(t_run("sweep x.json -j 0", out, sizeof(out)) == 2 &&
	      strstr(out, "--jobs: expected an integer in [1, 4096], got \"0\""));
	CHECK(t_run("--help", out, sizeof(out)) == 0 && strstr(out, "sweep"));
}

/* The library: point order, overrides, stats. */
static void library(void)
{
	char *warned;
	static const double x[] = { 1, 2, 3 };
	struct sweep s;
	struct err e;
	double mean, ci;
	char **sets, col[JX_PTR_MAX];
	size_t n;

	sweep_stats(x, 3, &mean, &ci);
	CHECK_NEAR(mean, 2, 1e-15);
	CHECK_NEAR(ci, T975_DF2 / sqrt(3), 1e-12);
	sweep_stats(x + 2, 1, &mean, &ci);
	CHECK(mean == 3 && ci == 0);
	CHECK(!strcmp(sweep_column(col, "/all/itl_s/p99"), "all.itl_s.p99"));
	if (sweep_load(&s, data("sweep-small.json"), &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	CHECK(s.n_points == 8 && s.n_axes == 4 && s.zip_len == 2 &&
	      s.n_seeds == 3 && s.n_metrics == 4);
	/* point 5 = (count 3, sync, the second zip values) */
	CHECK(sweep_value_index(&s, 5, 0) == 1 &&
	      sweep_value_index(&s, 5, 1) == 0 &&
	      sweep_value_index(&s, 5, 2) == 1 &&
	      sweep_value_index(&s, 5, 3) == 1);
	sets = sweep_sets(&s, 5, 9, &n);
	CHECK(n == 6);
	if (n == 6) {
		CHECK(!strcmp(sets[0], "/tenants/1/workload/requests=1"));
		CHECK(!strcmp(sets[1], "/tenants/0/count=3"));
		CHECK(!strcmp(sets[2], "/protocol/kind=\"sync\""));
		CHECK(!strcmp(sets[3], "/tenants/0/acceptance/alpha=0.9"));
		CHECK(!strcmp(sets[5], "/seed=9"));
	}
	sweep_sets_free(sets, n);
	{
		char label[256];

		sweep_point_label(&s, 5, false, label, sizeof(label));
		CHECK_MSG(!strcmp(label, "/tenants/0/count=3, /protocol/kind="
			  "\"sync\", /tenants/0/acceptance/alpha=0.9, "
			  "/tenants/0/wan/rtt_s=0.08"), "%s", label);
		sweep_point_label(&s, 5, true, label, sizeof(label));
		CHECK_MSG(!strcmp(label, "count=3 kind=\"sync\" alpha=0.9 "
			  "rtt_s=0.08"), "%s", label);
	}
	CHECK(sweep_check(&s, &warned, &e) == 0 && !warned);
	sweep_release(&s);
}

/* Every committed sweep reads and checks cleanly. */
static void committed_sweeps(void)
{
	char *warned;
	static const char *const files[] = {
		"configs/sweeps/batching.json",
		"configs/sweeps/itl-vs-gamma.json",
		"configs/sweeps/itl-vs-rtt-alpha.json",
		"configs/sweeps/itl-vs-rtt.json",
		"configs/sweeps/itl-vs-tenants.json",
		"configs/sweeps/cloud-spec-itl.json",
		"configs/sweeps/cloud-spec-capacity.json",
	};
	char p[PATH_MAX + 64];
	struct sweep s;
	struct err e;

	data("");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", repo, files[i]);
		if (sweep_load(&s, p, &e) < 0) {
			CHECK_MSG(0, "%s", e.msg);
			continue;
		}
		CHECK_MSG(sweep_check(&s, &warned, &e) == 0, "%s", e.msg);
		free(warned);
		CHECK(s.n_points > 1);
		sweep_release(&s);
	}
}

/* An acceptance profile's fields that the plots read (docs/calib.md). */
static const char accept_profile[] =
	"{\"kind\": \"acceptance\", \"draft_quant\": \"%s\", \"ppl\": 5.4, "
	"\"ppl_draft\": %g, \"alpha_greedy\": %g, \"alpha_stochastic\": %g, "
	"\"mean_accepted_per_gamma\": {\"1\": %g, \"4\": %g}}\n";

/* scripts/plots.sh draws each figure as PNG (its 8-byte signature, and
 * more) and SVG from a small sweep shaped like itl-vs-tenants, a traced
 * run, two acceptance profiles and a verify table. */
static void plots(void)
{
	static const char *const figures[] = { "itl-vs-tenants", "gantt",
					       "quant", "accept-ea", "roofline" };
	static const unsigned char png[8] = { 0x89, 'P', 'N', 'G', '\r', '\n',
					      0x1a, '\n' };
	const char *bin = getenv("HYBRIDSPEC_BIN");
	char out[4096], text[2 * PATH_MAX], cmd[4 * PATH_MAX], name[1024];

	snprintf(text, sizeof(text), "{\"base\": \"%s\", \"grid\": "
		 "{\"/tenants/0/count\": [1, 3], \"/protocol/kind\": [\"sync\", "
		 "\"async\"]}, \"seeds\": [1, 2], \"metrics\": "
		 "[\"/all/itl_s/mean\"]}", data("small.json"));
	t_write("s.json", text);
	CHECK(t_run("sweep s.json -o p/sweeps/itl-vs-tenants --quiet", out,
		    sizeof(out)) == 0);
	snprintf(text, sizeof(text), "run %s -o p/trace --trace --quiet",
		 data("small.json"));
	CHECK(t_run(text, out, sizeof(out)) == 0);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/calib'", t_tmpdir());
	CHECK(system(cmd) == 0);
	snprintf(text, sizeof(text), accept_profile, "w4a16", 6.1, 0.8, 0.85,
		 1.8, 3.4);
	t_write("calib/accept-a.json", text);
	snprintf(text, sizeof(text), accept_profile, "w4a4", 11.0, 0.5, 0.6,
		 1.5, 2.0);
	t_write("calib/accept-b.json", text);
	t_write("calib/verify-H100-SXM-llama2-7b.json",
		"{\"kind\": \"verify\", \"gpu\": \"H100-SXM\", \"model\": "
		"\"llama2-7b\", \"calibrated\": false, \"tokens\": [1, 8, 512], "
		"\"ctx\": [128, 1024], \"seconds\": [[0.0056, 0.0058], "
		"[0.0057, 0.006], [0.0124, 0.026]]}\n");
	snprintf(cmd, sizeof(cmd), "cd '%s' && BIN='%s' sh '%s/scripts/plots.sh'"
		 " p calib > plots.log 2>&1", t_tmpdir(),
		 bin ? bin : "build/hybridspec", repo);
	if (system(cmd) != 0) {
		char *log = t_slurp("plots.log");

		CHECK_MSG(0, "plots.sh failed: %s", log ? log : "(no log)");
		free(log);
		return;
	}
	for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++) {
		char *svg;
		FILE *f;
		unsigned char head[8];
		long n = 0;

		snprintf(name, sizeof(name), "%s/p/plots/%s.png", t_tmpdir(),
			 figures[i]);
		if ((f = fopen(name, "rb"))) {
			if (fread(head, 1, 8, f) != 8)
				memset(head, 0, 8);
			fseek(f, 0, SEEK_END);
			n = ftell(f);
			fclose(f);
		}
		CHECK_MSG(f && !memcmp(head, png, 8) && n > 1000,
			  "%s: not a PNG of some size (%ld bytes)", name, n);
		snprintf(name, sizeof(name), "p/plots/%s.svg", figures[i]);
		svg = t_slurp(name);
		CHECK_MSG(svg && strstr(svg, "<svg"), "%s: not an SVG", name);
		free(svg);
	}
}

/* With an MPI build (make MPI=1) and HYBRIDSPEC_MPI_BIN naming it, two
 * ranks write the table of one process. Skipped otherwise. */
static void mpi_two_ranks(void)
{
	const char *mpi = getenv("HYBRIDSPEC_MPI_BIN");
	char out[8192], args[2 * PATH_MAX], cmd[3 * PATH_MAX];
	char *a, *b;

	if (!mpi || system("command -v mpirun >/dev/null 2>&1") != 0) {
		t_skip("set HYBRIDSPEC_MPI_BIN to build-mpi/hybridspec (make "
		       "MPI=1) with mpirun installed");
		return;
	}
	snprintf(args, sizeof(args), "sweep %s -o one -j1 --quiet",
		 data("sweep-small.json"));
	CHECK(t_run(args, out, sizeof(out)) == 0);
	snprintf(cmd, sizeof(cmd), "cd '%s' && mpirun --allow-run-as-root "
		 "--oversubscribe -np 2 '%s' sweep '%s' -o two --quiet "
		 ">mpi.out 2>&1", t_tmpdir(), mpi, data("sweep-small.json"));
	CHECK_MSG(system(cmd) == 0, "mpirun failed (see %s/mpi.out)",
		  t_tmpdir());
	a = t_slurp("one/sweep.csv");
	b = t_slurp("two/sweep.csv");
	CHECK(a && b && !strcmp(a, b));
	free(a);
	free(b);
}

/* Whether t_tmpdir()/name starts with PNG's 8-byte signature. */
static bool is_png(const char *name)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n',
					      0x1a, '\n' };
	char *text = t_slurp(name);
	bool yes = text && !memcmp(text, sig, sizeof(sig));

	free(text);
	return yes;
}

/* hybridspec plot: a run's three CDFs into RUN/plots (drawn again in
 * place; a foreign file there stops it; the run folder stays replaceable
 * with its plots in it), a sweep's metric against a parameter, and the
 * refusals naming what there is. */
static void plot_command(void)
{
	char out[4096], args[2 * PATH_MAX];

	snprintf(args, sizeof(args), "run %s -o r --quiet", data("small.json"));
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	CHECK_MSG(t_run("plot r", out, sizeof(out)) == 0, "%s", out);
	CHECK_MSG(strstr(out, "r/plots/ttft-cdf.png (and .svg)") &&
		  strstr(out, "r/plots/itl-cdf.png"), "%s", out);
	CHECK(is_png("r/plots/ttft-cdf.png") && is_png("r/plots/tpot-cdf.png") &&
	      t_exists("r/plots/tpot-cdf.svg") && t_exists("r/plots/plot.gp") &&
	      t_exists("r/plots/ttft-cdf.dat"));
	/* speculation commits a verdict's tokens together: every request's
	 * median ITL is 0, which a log axis cannot show; the key says so */
	{
		char *dat = t_slurp("r/plots/itl-cdf.dat");

		CHECK_MSG(dat && strstr(dat, "\"phones, p99 (every median 0)\""),
			  "%s", dat ? dat : "(none)");
		free(dat);
	}
	CHECK_MSG(t_run("plot r --quiet", out, sizeof(out)) == 0 && !out[0],
		  "%s", out);
	snprintf(args, sizeof(args), "run %s -o r --overwrite --quiet",
		 data("small.json"));
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	CHECK(t_run("plot r", out, sizeof(out)) == 0);
	t_write("r/plots/mine.txt", "a note\n");
	CHECK(t_run("plot r", out, sizeof(out)) == 2 &&
	      strstr(out, "mine.txt' was not written by hybridspec"));
	CHECK(t_exists("r/plots/mine.txt"));
	snprintf(args, sizeof(args), "run %s -o r --overwrite --quiet",
		 data("small.json"));
	CHECK(t_run(args, out, sizeof(out)) == 2 &&
	      strstr(out, "'r/plots/mine.txt' was not written by hybridspec"));
	CHECK(t_run("plot r --x a", out, sizeof(out)) == 2 &&
	      strstr(out, "--x, --y and --by are a sweep's"));
	CHECK(t_run("plot nowhere", out, sizeof(out)) == 2 &&
	      strstr(out, "nowhere: no such folder"));
	CHECK(t_run("plot r/plots", out, sizeof(out)) == 2 &&
	      strstr(out, "neither a run's results"));
	/* figures never replace results, the folder read among them; an
	 * empty folder holds nothing to lose */
	CHECK(t_run("plot r -o r", out, sizeof(out)) == 2 &&
	      strstr(out, "'r' exists and holds no figures"));
	CHECK(t_exists("r/summary.json") && t_exists("r/requests.csv"));
	mkdir(strcat(strcpy(args, t_tmpdir()), "/empty"), 0777);
	CHECK_MSG(t_run("plot r -o empty", out, sizeof(out)) == 0, "%s", out);
	CHECK(t_exists("empty/plot.gp"));

	snprintf(args, sizeof(args), "sweep %s -o s -j2 --quiet",
		 data("sweep-small.json"));
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	/* a parameter and a metric named as the sweep file names them, or
	 * as their columns */
	CHECK_MSG(t_run("plot s --x /tenants/0/wan/rtt_s --y /all/itl_s/mean "
			"--by protocol.kind -o f", out, sizeof(out)) == 0,
		  "%s", out);
	CHECK(is_png("f/all.itl_s.mean-vs-tenants.0.wan.rtt_s.png"));
	{
		char *dat = t_slurp("f/all.itl_s.mean-vs-tenants.0.wan.rtt_s.dat");

		/* a line a series, protocol first in its label */
		CHECK_MSG(dat && strstr(dat, "\"protocol.kind=sync, tenants.0.count="),
			  "%s", dat ? dat : "no data");
		free(dat);
	}
	CHECK(t_run("plot s --y all.nope", out, sizeof(out)) == 2 &&
	      strstr(out, "no metric \"all.nope\" (its metrics: all.itl_s.mean"));
	CHECK(t_run("plot s --x nope", out, sizeof(out)) == 2 &&
	      strstr(out, "no parameter \"nope\" (its parameters: "
		     "tenants.0.count, protocol.kind"));
	/* a metric no run has (the devices have no power figures): said, and
	 * no empty figure */
	snprintf(args, sizeof(args), "{\"base\": \"%s\", \"grid\": "
		 "{\"/tenants/0/count\": [1, 2]}, \"metrics\": "
		 "[\"/all/edge_j_per_token\"], \"replicates\": 1}",
		 data("small.json"));
	t_write("null.json", args);
	CHECK_MSG(t_run("sweep null.json -o n --quiet", out, sizeof(out)) == 0,
		  "%s", out);
	CHECK_MSG(t_run("plot n -o nf", out, sizeof(out)) == 2 &&
		  strstr(out, "all.edge_j_per_token_mean has no value at any "
			 "point") && !t_exists("nf"), "%s", out);
	/* a parameter spanning 20x or more is on a log axis, but not with
	 * an x of 0 there (its point had been dropped from the figure) */
	for (int zero = 0; zero < 2; zero++) {
		char cmd[64], *gp;

		snprintf(args, sizeof(args), "{\"base\": \"%s\", \"grid\": "
			 "{\"/cloud/gpu/overhead_s\": [%s0.001, 0.1]}, "
			 "\"replicates\": 1}", data("small.json"),
			 zero ? "0, " : "");
		t_write("lg.json", args);
		snprintf(cmd, sizeof(cmd), "sweep lg.json -o lg%d --quiet", zero);
		CHECK_MSG(t_run(cmd, out, sizeof(out)) == 0, "%s", out);
		snprintf(cmd, sizeof(cmd), "plot lg%d -o lgf%d --quiet", zero,
			 zero);
		CHECK_MSG(t_run(cmd, out, sizeof(out)) == 0, "%s", out);
		snprintf(cmd, sizeof(cmd), "lgf%d/plot.gp", zero);
		gp = t_slurp(cmd);
		CHECK_MSG(gp && (strstr(gp, "set logscale x") != NULL) == !zero,
			  "zero %d: %s", zero, gp ? gp : "no plot.gp");
		free(gp);
	}
}

/* A config warning every point gives is said once; one that only some
 * give (a window where the sweep switches async to sync) is not. */
static void warns_once(void)
{
	char out[4096], text[PATH_MAX + 512], args[2 * PATH_MAX];

	snprintf(text, sizeof(text), "{\"base\": \"%s\", \"set\": "
		 "{\"/tenants/1/workload/rate_per_s\": 3}, \"grid\": "
		 "{\"/protocol/kind\": [\"async\", \"sync\"]}}",
		 data("small.json"));
	snprintf(args, sizeof(args), "sweep %s -o w", t_write("w.json", text));
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	{
		const char *w = strstr(out, "warning:");

		CHECK_MSG(w && !strstr(w + 1, "warning:") &&
			  strstr(out, "hybridspec sweep: warning: every point: "
				 "/tenants/1/workload/rate_per_s: not used"),
			  "%s", out);
	}
}

const struct tcase sweep_tests[] = {
	{ "plot: a run's CDFs and a sweep's lines, drawn and refused",
	  plot_command },
	{ "sweep: costs and energies are metrics; an undefined one is empty",
	  cost_metrics },
	{ "sweep: points, stats and overrides (library)", library },
	{ "sweep: a small sweep end to end: rows, values, means, CIs",
	  end_to_end },
	{ "sweep: a run's config has its point's values and seed", run_configs },
	{ "sweep: one seed gives its value and a CI of 0", one_seed },
	{ "sweep: runs that measured nothing are a warning", empty_runs },
	{ "sweep: -j1 and -j2 write identical tables", parallel_identical },
	{ "sweep: --resume redoes only missing runs, same table", resume },
	{ "sweep: SIGTERM leaves no partial file; --resume finishes",
	  interrupted },
	{ "sweep: a second sweep of a folder in use refuses", locked },
	{ "sweep: bad sweep files exit 2 and write nothing", bad_sweeps },
	{ "sweep: a config warning of every point is said once", warns_once },
	{ "sweep: usage and --help", usage },
	{ "sweep: every committed sweep is valid", committed_sweeps },
	{ "sweep: plots.sh draws PNG and SVG figures from a small sweep",
	  plots },
	{ "sweep: two MPI ranks write the same table", mpi_two_ranks },
	{ 0 },
};
