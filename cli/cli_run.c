/* cli_run.c: "hybridspec run": one simulation, its results directory. */
#include "cli.h"
#include "rt.h"

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
	"  --trace                write trace.json: edge drafting, link transfers,\n"
	"                         queueing and GPU batches as tracks\n"
	"  --trace-tenants N      tenants with tracks in the trace (default 16)\n"
	"  --json                 print summary.json instead of the table\n"
	"  --quiet                print nothing on success\n"
	"\nexit status: 0 done, 2 bad usage or bad input (nothing is written),\n"
	"128+N stopped by signal N, SIGINT or SIGTERM (DIR is whole or absent)\n";

static void trace_begin(FILE *f)
{
	static const char *const names[] = { "edge drafting", "uplink",
					     "downlink", "cloud queue", "GPU" };

	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f);
	for (int i = 0; i < 5; i++)
		fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
			"\"args\":{\"name\":\"%s\"}},\n", i + 1, names[i]);
}

struct run {
	struct cfg c;
	struct od o;
	struct sim s;
	FILE *requests, *trace;
	bool cfg_loaded, sim_made, committed;
};

static void run_release(struct run *r)
{
	if (r->requests)
		fclose(r->requests);
	if (r->trace)
		fclose(r->trace);
	if (r->sim_made)
		sim_release(&r->s);
	od_abort(&r->o);
	if (r->cfg_loaded)
		cfg_release(&r->c);
}

/* Writes a file of the results from a string it then frees. */
static int put(struct od *o, const char *name, char *text, struct err *e)
{
	int rc = od_write(o, name, text, e);

	free(text);
	return rc;
}

static int simulate(struct run *r, const char *out, bool trace,
		    long trace_tenants, bool json, bool quiet, struct err *e)
{
	struct sim_opts opt = { .trace_tenants = (uint32_t)trace_tenants };
	double t0 = rt_now_s(), wall;
	json_t *sum, *perf;
	char dir[1024], *text;
	FILE *f;

	if (!out) {
		snprintf(dir, sizeof(dir), "results/runs/%s", r->c.name);
		out = dir;
	}
	if (od_begin(&r->o, out, e) < 0 ||
	    !(r->requests = od_open(&r->o, "requests.csv", e)) ||
	    (trace && !(r->trace = od_open(&r->o, "trace.json", e))))
		return -1;
	fputs(REP_REQUESTS_HEADER, r->requests);
	if (r->trace)
		trace_begin(r->trace);
	opt.requests_csv = r->requests;
	opt.trace = r->trace;
	opt.stop = &rt_signal;
	if (sim_init(&r->s, &r->c, opt, e) < 0) {
		r->sim_made = true;
		return -1;
	}
	r->sim_made = true;
	if (sim_run(&r->s) < 0)
		return err_prefix(e, "%s", r->c.file);
	wall = rt_now_s() - t0;
	if (r->trace) {
		fputs("\n]}\n", r->trace);
		if (fclose(r->trace) != 0)
			return err_set(e, "cannot write trace.json");
		r->trace = NULL;
	}
	if (fclose(r->requests) != 0) {
		r->requests = NULL;
		return err_set(e, "cannot write requests.csv");
	}
	r->requests = NULL;
	sum = rep_summary(&r->s);
	text = jx_dumps(sum);
	if (put(&r->o, "summary.json", text, e) < 0 ||
	    put(&r->o, OD_MARKER, cfg_resolved(&r->c), e) < 0) {
		json_decref(sum);
		return -1;
	}
	if (!(f = od_open(&r->o, "tenants.csv", e))) {
		json_decref(sum);
		return -1;
	}
	rep_tenants_csv(&r->s, f);
	fclose(f);
	perf = json_pack("{s:f,s:I,s:f}", "wall_s", wall, "events",
			 (json_int_t)r->s.events, "events_per_s",
			 wall > 0 ? (double)r->s.events / wall : 0);
	text = jx_dumps(perf);
	json_decref(perf);
	if (put(&r->o, "perf.json", text, e) < 0 || rt_signal ||
	    od_commit(&r->o, e) < 0) {
		json_decref(sum);
		return -1;
	}
	r->committed = true;
	if (json) {
		text = jx_dumps(sum);
		fputs(text, stdout);
		free(text);
	} else if (!quiet) {
		rep_print(sum, stdout);
		printf("wall %.3f s, %.3g events/s; results in %s/\n", wall,
		       wall > 0 ? (double)r->s.events / wall : 0, out);
	}
	json_decref(sum);
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_sets sets = { 0 };
	struct run r = { 0 };
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
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(run_help, stdout);
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
	if (cfg_load(&r.c, argv[optind], sets.v, sets.n, &e) < 0) {
		rc = cli_fail("%s", e.msg);
	} else {
		r.cfg_loaded = true;
		if (simulate(&r, out, trace, trace_tenants, json, quiet, &e) < 0 &&
		    !rt_signal)
			rc = cli_fail("%s", e.msg);
	}
	run_release(&r);
	cli_sets_release(&sets);
	rt_signals_restore();
	if (rt_signal) {
		fprintf(stderr, "hybridspec: stopped by signal %d%s\n",
			(int)rt_signal, r.committed ? " after writing the results"
					       : "; nothing written");
		rc = 128 + rt_signal;
	}
	return rc;
}
