/* cli_run.c: "hybridspec run": one simulation, its results directory. */
#include "cli.h"
#include "rt.h"
#include "rundir.h"

#include "cfg.h"
#include "outdir.h"
#include "report.h"
#include "sim.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char run_help[] =
	"usage: hybridspec run CONFIG [-o DIR] [--seed N] [--set POINTER=VALUE]...\n"
	"                      [--trace] [--trace-tenants N] [--json] [--quiet]\n"
	"       hybridspec run --columns\n"
	"\n"
	"Simulates the config and writes DIR (default results/runs/NAME, NAME the\n"
	"config's name): summary.json, tenants.csv, requests.csv,\n"
	"config.resolved.json, perf.json (wall time, events per second: the only\n"
	"file that differs between runs of one seed) and, with --trace, trace.json\n"
	"(open it in ui.perfetto.dev or chrome://tracing). DIR appears whole or not\n"
	"at all. Prints a short table, or with --json the summary.\n"
	"\n"
	"  -o, --out DIR          results directory\n"
	"  --seed N               the run seed (same as --set /seed=N)\n"
	"  --set POINTER=VALUE    override a config value, e.g. --set /cloud/replicas=2\n"
	"  --trace                write trace.json: edge prefill and drafting, link\n"
	"                         transfers, queueing and GPU batches, a track a\n"
	"                         tenant (a replica for the GPU), named after it\n"
	"  --trace-tenants N      tenants with tracks in the trace (default 16)\n"
	"  --json                 print summary.json instead of the table\n"
	"  --quiet                print nothing on success\n"
	"  --columns              what each figure of summary.json and each column of\n"
	"                         requests.csv and tenants.csv means, and exit\n"
	"\nexit status: 0 done, 2 bad usage or bad input (nothing is written),\n"
	"128+N stopped by signal N, SIGINT or SIGTERM (DIR is whole or absent)\n";

/* Runs the loaded config into out (default results/runs/NAME) and shows
 * the summary; *committed says whether the folder was put in place. */
static int simulate(const struct cfg *c, const char *out, bool trace,
		    long trace_tenants, bool json, bool quiet, bool *committed,
		    struct err *e)
{
	struct rundir_opts o = { .tables = true, .trace = trace,
				 .trace_tenants = (uint32_t)trace_tenants,
				 .stop = &rt_signal };
	struct rundir_result r;
	char dir[1024], *text;

	if (!out) {
		snprintf(dir, sizeof(dir), "results/runs/%s", c->name);
		out = dir;
	}
	if (rundir_write(c, out, &o, &r, e) < 0)
		return -1;
	*committed = true;
	if (json) {
		text = jx_dumps(r.summary);
		fputs(text, stdout);
		free(text);
	} else if (!quiet) {
		rep_print(r.summary, stdout);
		printf("wall %.3f s, %.3g events/s; results in %s/\n", r.wall_s,
		       r.wall_s > 0 ? (double)r.events / r.wall_s : 0, out);
	}
	json_decref(r.summary);
	return 0;
}

int cli_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 'S' },
		{ "set", required_argument, NULL, 's' },
		{ "trace", no_argument, NULL, 't' },
		{ "trace-tenants", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "columns", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_sets sets = { 0 };
	struct cfg c;
	bool committed = false;
	const char *out = NULL;
	char seed_set[64];
	bool trace = false, json = false, quiet = false;
	long trace_tenants = 16;
	struct err e;
	long long num;
	int ch, rc = CLI_OK;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			out = optarg;
			break;
		case 'S':
			if (cli_long("--seed", optarg, 0, LLONG_MAX, &num)) {
				cli_sets_release(&sets);
				return CLI_BAD_INPUT;
			}
			snprintf(seed_set, sizeof(seed_set), "/seed=%lld", num);
			cli_sets_add(&sets, seed_set);
			break;
		case 's':
			cli_sets_add(&sets, optarg);
			break;
		case 't':
			trace = true;
			break;
		case 'T':
			if (cli_long("--trace-tenants", optarg, 0, 1 << 30, &num)) {
				cli_sets_release(&sets);
				return CLI_BAD_INPUT;
			}
			trace_tenants = (long)num;
			break;
		case 'j':
			json = true;
			break;
		case 'C':
			rep_columns(stdout);
			cli_sets_release(&sets);
			return CLI_OK;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(run_help, stdout);
			fputs("\nthe printed table's columns:\n", stdout);
			rep_legend(stdout);
			cli_sets_release(&sets);
			return CLI_OK;
		default:
			fputs(run_help, stderr);
			cli_sets_release(&sets);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc - 1) {
		fputs(run_help, stderr);
		cli_sets_release(&sets);
		return CLI_BAD_INPUT;
	}
	/* SIGINT or SIGTERM: the run stops at its next event and removes
	 * its temporary directory instead of putting it in place */
	rt_signals_catch();
	if (cfg_load(&c, argv[optind], sets.v, sets.n, &e) < 0) {
		rc = cli_fail("%s", e.msg);
	} else {
		if (simulate(&c, out, trace, trace_tenants, json, quiet,
			     &committed, &e) < 0 && !rt_signal)
			rc = cli_fail("%s", e.msg);
		cfg_release(&c);
	}
	cli_sets_release(&sets);
	rt_signals_restore();
	if (rt_signal) {
		fprintf(stderr, "hybridspec: stopped by signal %d%s\n",
			(int)rt_signal, committed ? " after writing the results"
					       : "; nothing written");
		rc = 128 + rt_signal;
	}
	return rc;
}
