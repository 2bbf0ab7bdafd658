/* cli_run.c: "hybridspec run": one simulation, its results directory. */
#include "cli.h"
#include "rt.h"
#include "rundir.h"

#include "cfg.h"
#include "outdir.h"
#include "report.h"
#include "sim.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void run_legend(FILE *f)
{
	fputs("the printed table's columns:\n", f);
	rep_legend(f);
}

static const struct opt_cmd run_cmd = {
	.name = "run",
	.usage = "CONFIG [-o DIR [--overwrite]] [--seed N] [--set POINTER=VALUE]...\n"
		 " [--trace] [--trace-tenants N] [--json | --quiet] [--progress]\n"
		 "--columns",
	.about = "Simulates the config and writes DIR (default results/runs/NAME, NAME the\n"
		 "config's name, which the next run of that name replaces; another DIR\n"
		 "holding results only with --overwrite): summary.json, tenants.csv, requests.csv,\n"
		 "config.resolved.json, perf.json (wall time, events per second: the only\n"
		 "file that differs between runs of one seed) and, with --trace, trace.json\n"
		 "(open it in ui.perfetto.dev or chrome://tracing). DIR appears whole or not\n"
		 "at all. Prints a short table, or with --json the summary.\n",
	.exit_status = "0 done, 2 bad usage or bad input (nothing is written),\n"
		       "128+N stopped by signal N, SIGINT, SIGTERM or SIGHUP (DIR is whole or absent)",
	.operands = "CONFIG",
	.min_operands = 1,
	.max_operands = 1,
	.conflicts = { { "json", "quiet" }, /* print JSON, or nothing */
		       { "progress", "quiet" } },
	.needs = { { "trace-tenants", "trace" }, { "overwrite", "out" } },
	.more_help = run_legend,
};

/* A long run's progress on stderr: on a terminal one line, redrawn; else a
 * line; at the first tick (SIM_TICK_EVENTS events in), then at most one a
 * second */
struct run_progress {
	bool tty, shown;
	double t0_s, last_s;
};

static void run_tick(void *ctx, const struct sim *s)
{
	struct run_progress *p = ctx;
	double now_s = rt_now_s();

	if (now_s - p->last_s < 1)
		return;
	p->last_s = now_s;
	p->shown = true;
	fprintf(stderr, "%srun: at %.1f s simulated, %llu requests done, %.3g "
		"events, %.0f s elapsed%s", p->tty ? "\r" : "", s->q.now_s,
		(unsigned long long)s->requests_done, (double)s->events,
		now_s - p->t0_s, p->tty ? "\033[K" : "\n");
	fflush(stderr);
}

/* Runs the loaded config into out (default results/runs/NAME) and shows
 * the summary; *committed says whether the folder was put in place. */
static int simulate(const struct cfg *c, const char *out,
		    struct rundir_opts *o, bool json, bool quiet,
		    bool *committed, struct err *e)
{
	const struct run_progress *pg = o->tick_ctx;
	struct rundir_result r;
	char dir[1024];
	double run_s;
	int rc;

	if (!out) { /* the default folder is the tool's to replace */
		snprintf(dir, sizeof(dir), "results/runs/%s", c->name);
		out = dir;
		o->replace = true;
	}
	rc = rundir_write(c, out, o, &r, e);
	if (pg && pg->shown && pg->tty) /* the line redrawn ends */
		fputc('\n', stderr);
	if (rc < 0)
		return -1;
	*committed = true;
	/* a warm-up the run never left measured nothing */
	run_s = json_number_value(json_object_get(r.summary, "sim_time_s"));
	if (!quiet && c->warmup_s > 0 && c->warmup_s >= run_s) {
		char line[160];

		snprintf(line, sizeof(line), "/warmup_s: %g s outlasts the run "
			 "(%.6g s): nothing was measured", c->warmup_s, run_s);
		cli_warn("run", line);
	}
	if (json) {
		cli_print_json(r.summary);
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
	struct opt_list sets = { 0 };
	const char *out = NULL;
	bool trace = false, json = false, quiet = false, overwrite = false;
	bool progress = false;
	long long seed = 0, trace_tenants = 16;
	struct opt rows[] = {
		OPT_STR("out", 'o', &out, "DIR", "results directory"),
		CLI_OPT_OVERWRITE(&overwrite),
		CLI_OPT_SEED(&seed, "the run seed (same as --set /seed=N)"),
		CLI_OPT_SET(&sets),
		OPT_FLAG("trace", 0, &trace,
			 "write trace.json: edge prefill and drafting, link\n"
			 "transfers, queueing and GPU batches, a track a\n"
			 "tenant (a replica for the GPU), named after it"),
		OPT_INT("trace-tenants", 0, &trace_tenants, "N", 0, 1 << 30,
			"tenants with tracks in the trace (default 16)"),
		CLI_OPT_JSON(&json, "print summary.json instead of the table"),
		CLI_OPT_QUIET(&quiet),
		OPT_FLAG("progress", 0, &progress,
			 "show progress even when stderr is not a terminal\n"
			 "(a line a second at most)"),
		OPT_SHOW("columns", rep_columns,
			 "what each figure of summary.json and each column of\n"
			 "requests.csv and tenants.csv means, and exit"),
		OPT_END,
	};
	struct cfg c;
	bool committed = false;
	char seed_set[64];
	struct err e;
	int rc = CLI_OK;

	if ((rc = opt_parse(&run_cmd, rows, &argc, argv)) != OPT_GO) {
		opt_list_release(&sets);
		return rc;
	}
	rc = CLI_OK;
	if (opt_given(rows, "seed")) {
		for (size_t i = 0; i < sets.n; i++)
			if (!strncmp(sets.v[i], "/seed=", 6)) {
				rc = opt_fail(&run_cmd, "--seed %lld and --set %s "
					      "both give the seed: give one",
					      seed, sets.v[i]);
				opt_list_release(&sets);
				return rc;
			}
		snprintf(seed_set, sizeof(seed_set), "/seed=%lld", seed);
		opt_list_add(&sets, seed_set);
	}
	/* SIGINT, SIGTERM or SIGHUP: the run stops at its next event and removes
	 * its temporary directory instead of putting it in place */
	rt_signals_catch();
	if (cfg_load(&c, argv[0], sets.v, sets.n, &e) < 0) {
		rc = cli_fail_file("run", argv[0], e.msg);
	} else {
		if (!quiet)
			cli_warn("run", c.warnings);
		struct run_progress pg = { .tty = isatty(STDERR_FILENO),
			.t0_s = rt_now_s(), .last_s = -INFINITY };
		struct rundir_opts o = { .tables = true, .trace = trace,
			.trace_tenants = (uint32_t)trace_tenants,
			.stop = &rt_signal, .replace = overwrite };

		if (progress || (pg.tty && !quiet && !json)) {
			o.tick = run_tick;
			o.tick_ctx = &pg;
		}
		if (simulate(&c, out, &o, json, quiet, &committed, &e) < 0 &&
		    !rt_signal)
			rc = cli_fail("%s", e.msg);
		cfg_release(&c);
	}
	opt_list_release(&sets);
	rt_signals_restore();
	if (rt_signal) {
		fprintf(stderr, "hybridspec: stopped by signal %d%s\n",
			(int)rt_signal, committed ? " after writing the results"
					       : "; nothing written");
		rc = 128 + rt_signal;
	}
	return rc;
}
