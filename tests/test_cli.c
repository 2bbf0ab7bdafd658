/* test_cli.c: the binary's exit status, messages and output directories. */
#include "harness.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char repo[PATH_MAX];

static const char *small(void)
{
	static char p[PATH_MAX + 64];

	if (!repo[0] && !getcwd(repo, sizeof(repo)))
		abort();
	snprintf(p, sizeof(p), "%s/tests/data/small.json", repo);
	return p;
}

static int exists(const char *name)
{
	char p[1024];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", t_tmpdir(), name);
	return stat(p, &st) == 0;
}

struct bad_case {
	const char *what, *file_text, *extra, *want;
};

/* Every class of bad config: exit status 2, the message, no results. */
static void bad_configs(void)
{
	static const struct bad_case cases[] = {
		{ "syntax", "{\"seed\": 1,\n \"tenants\": [}\n", "",
		  "c.json:2:14: invalid JSON" },
		{ "unknown key", NULL, "--set /cloud/polcy=slo",
		  "/cloud/polcy: unknown key \"polcy\"" },
		{ "wrong type", NULL, "--set /tenants/0/count='\"three\"'",
		  "/tenants/0/count: expected an integer in [1, 100000000], "
		  "got \"three\"" },
		{ "out of range", NULL, "--set /tenants/0/acceptance/alpha=-0.1",
		  "/tenants/0/acceptance/alpha: expected a number in [0, 1], "
		  "got -0.1" },
		{ "missing file", "", "MISSING",
		  "nowhere.json: cannot read: No such file or directory" },
		{ "unreadable samples", NULL,
		  "--set '/tenants/0/wan/rtt_s={\"dist\":\"empirical\","
		  "\"file\":\"rtt.txt\"}'",
		  "rtt.txt:2: expected a number > 0, got \"-0.05\"" },
		{ "missing samples", NULL,
		  "--set '/tenants/0/wan/rtt_s={\"dist\":\"empirical\","
		  "\"file\":\"absent.txt\"}'",
		  "/tenants/0/wan/rtt_s: cannot read samples file" },
	};
	char out[4096], args[1024], cfg_text[8192];
	FILE *f = fopen(small(), "r");
	size_t n = fread(cfg_text, 1, sizeof(cfg_text) - 1, f);

	fclose(f);
	cfg_text[n] = '\0';
	t_write("rtt.txt", "0.05\n-0.05\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		int rc;

		t_write("c.json", c->file_text && *c->file_text ? c->file_text
								 : cfg_text);
		snprintf(args, sizeof(args), "config %s -o out %s",
			 !strcmp(c->extra, "MISSING") ? "nowhere.json" : "c.json",
			 !strcmp(c->extra, "MISSING") ? "" : c->extra);
		rc = t_run(args, out, sizeof(out));
		CHECK_MSG(rc == 2, "%s: exit status %d, want 2", c->what, rc);
		CHECK_MSG(strstr(out, c->want) != NULL, "%s: output \"%s\" lacks "
			  "\"%s\"", c->what, out, c->want);
		CHECK_MSG(!strncmp(out, "hybridspec: ", 12), "%s: \"%s\"", c->what,
			  out);
		CHECK_MSG(!exists("out"), "%s: left a results directory",
			  c->what);
	}
}

static void writes_resolved(void)
{
	char out[65536], args[2 * PATH_MAX];
	json_t *v;

	snprintf(args, sizeof(args), "config %s --set /seed=3 -o res", small());
	CHECK(t_run(args, out, sizeof(out)) == 0);
	CHECK(exists("res/config.resolved.json"));
	/* a second run replaces the results directory */
	CHECK(t_run(args, out, sizeof(out)) == 0);
	CHECK(exists("res/config.resolved.json"));
	v = json_load_file(strcat(strcpy(out, t_tmpdir()),
				  "/res/config.resolved.json"), 0, NULL);
	CHECK(v && json_integer_value(json_object_get(v, "seed")) == 3);
	json_decref(v);
	/* never replaces a directory that is not hybridspec's */
	mkdir(strcat(strcpy(out, t_tmpdir()), "/mine"), 0777);
	snprintf(args, sizeof(args), "config %s -o mine", small());
	CHECK(t_run(args, out, sizeof(out)) == 2);
	CHECK(strstr(out, "'mine' exists and is not a hybridspec results "
			  "directory") != NULL);
	/* without -o, the resolved config goes to stdout */
	snprintf(args, sizeof(args), "config %s", small());
	CHECK(t_run(args, out, sizeof(out)) == 0);
	CHECK(strstr(out, "\"kv_capacity_tokens\"") != NULL);
}

static void usage_errors(void)
{
	char out[4096];

	CHECK(t_run("", out, sizeof(out)) == 2 && strstr(out, "usage:"));
	CHECK(t_run("--help", out, sizeof(out)) == 0 && strstr(out, "config"));
	CHECK(t_run("frobnicate", out, sizeof(out)) == 2 &&
	      strstr(out, "unknown command 'frobnicate'"));
	CHECK(t_run("config --help", out, sizeof(out)) == 0 &&
	      strstr(out, "--set POINTER=VALUE"));
	CHECK(t_run("config", out, sizeof(out)) == 2);
	CHECK(t_run("bench engine --steps 0", out, sizeof(out)) == 2 &&
	      strstr(out, "--steps: expected an integer >= 1, got '0'"));
	CHECK(t_run("bench nothing", out, sizeof(out)) == 2);
}

static void bench_engine_json(void)
{
	char out[4096];
	json_t *v, *rows;

	CHECK(t_run("bench engine --json --steps 20000", out, sizeof(out)) == 0);
	v = json_loads(out, 0, NULL);
	rows = json_object_get(v, "rows");
	CHECK_MSG(json_array_size(rows) == 3, "%s", out);
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *r = json_array_get(rows, i);

		CHECK(json_integer_value(json_object_get(r, "pending")) > 0);
		CHECK(json_number_value(json_object_get(r, "events_per_s")) > 0);
	}
	json_decref(v);
}

const struct tcase cli_tests[] = {
	{ "cli: bad configs exit 2 with the message and no results",
	  bad_configs },
	{ "cli: config -o writes the resolved config whole", writes_resolved },
	{ "cli: usage errors and --help", usage_errors },
	{ "cli: bench engine --json prints its rows", bench_engine_json },
	{ 0 },
};
