/* cli_validate.c: "hybridspec validate": the real deployment on loopback
 * against the simulator, point by point (study/valrun.h), and the table of
 * both with their errors. */
#include "cli.h"

#include "valrun.h"

#include <stdio.h>

static const struct opt_cmd validate_cmd = {
	.name = "validate",
	.usage = "SWEEP.json [-o DIR [--overwrite]] [--target NAME[:Q]]\n"
		 " [--draft NAME[:Q]] [--text FILE] [--json] [--quick] [--quiet]\n"
		 " [--timeout-s X] [--edges-sleep] [--no-retime] [--edge-bound X]",
	.about = "Runs every point of the sweep twice: as a real deployment on this\n"
		 "machine (hybridspec serve with the target model and one edge process\n"
		 "per tenant drafting with the draft model, over loopback TCP with the\n"
		 "WAN emulated), and in the simulator with profiles measured first on\n"
		 "the same models and machine. Prints ITL, alpha, tokens/s and the cloud's\n"
		 "busy fraction of both with relative errors, and whether every edge's\n"
		 "output equals the target's own greedy output. Prompts are slices of\n"
		 "the text. Points must use sync or async, closed-loop workloads with\n"
		 "constant prompt and output lengths, one replica, continuous or window\n"
		 "batching. Results: DIR (default results/runs/validate-NAME):\n"
		 "validate.json, validate.csv, calib/ (the profiles), points/<i>/\n"
		 "(config, server and edge logs, simulated summary).\n"
		 "\"in situ\": the simulator again with the draft profile and the verify\n"
		 "table scaled to the costs measured during the point's run (the\n"
		 "ratios are in validate.csv): what it closes of a gap lies in the\n"
		 "calibration's conditions, what it leaves in the simulator's model.\n"
		 "Before each point the draft's forward pass and one verifier shape are\n"
		 "timed again (a few seconds) and the point is simulated on the profiles\n"
		 "scaled to them (points/<i>/retimed/; the ratios are in validate.csv):\n"
		 "a shared machine's speed drifts by tens of percent between the\n"
		 "calibration and a point minutes later. The same two passes are also\n"
		 "timed after pauses of 2.5 to 160 ms (the wake tables: a pass after a\n"
		 "pause is slower), and 40 pings through the emulated link time the\n"
		 "deployment's own software path (wan/stack_s); the point is simulated\n"
		 "with both. When a point has no more edges than the edges' CPUs (all\n"
		 "but the verifier's), each edge polls while it waits instead of\n"
		 "sleeping, so its CPU is awake for the next draft step as a phone's\n"
		 "drafting core would be. Documented in docs/deploy.md.\n",
	.exit_status = "0 every output lossless, 1 an output was not lossless,\n"
		       "a point failed (the others still run; validate.json's\n"
		       "\"failed\" says why) or none ran, 2 bad usage or bad input,\n"
		       "128 + N stopped by signal N (nothing written)",
	.operands = "SWEEP.json",
	.min_operands = 1,
	.max_operands = 1,
	.conflicts = { { "json", "quiet" } }, /* print JSON, or nothing */
};

static void say_done(const struct valrun_result *r)
{
	printf("within 5%% on ITL and tokens/s: %ld of %zu points run (10%%: "
	       "%ld; %zu not run, over the edge bound; %zu failed); on TTFT: "
	       "%ld; %s\nresults: %s\n", r->tight,
	       r->points - r->not_run - r->failed, r->close, r->not_run,
	       r->failed, r->ttft_tight,
	       r->lossy ? "some outputs were NOT the target's greedy output" :
	       r->points == r->not_run + r->failed ? "no output to check" :
	       "every output was the target's greedy output", r->out);
}

int cli_validate(int argc, char **argv)
{
	struct valrun_opts o = {
		.target = "tinystories656K", .draft = "tinystories656K:w4a16",
		.timeout_s = 600, .edge_bound = VALRUN_EDGE_BOUND, .retime = true,
	};
	json_t *prov = NULL;
	bool json = false, no_retime = false;
	struct opt rows[] = {
		OPT_STR("out", 'o', &o.out, "DIR", "results directory"),
		CLI_OPT_OVERWRITE(&o.replace),
		CLI_OPT_MODEL_SPEC("target", &o.target, "the verifier's model "
				   "(default tinystories656K, f32)"),
		CLI_OPT_MODEL_SPEC("draft", &o.draft, "the edges' draft "
				   "(default tinystories656K:w4a16)"),
		OPT_STR("text", 0, &o.text, "FILE",
			"the prompts' text (default the TinyStories excerpt\n"
			"of the data folder)"),
		CLI_OPT_JSON(&json, "print validate.json instead of the table"),
		OPT_FLAG("quick", 0, &o.quick,
			 "fewer timing repetitions in the calibration (tests)"),
		CLI_OPT_QUIET(&o.quiet),
		OPT_NUM("timeout-s", 0, &o.timeout_s, "X", 1, INFINITY,
			"kill a point's processes after X seconds (default 600)"),
		OPT_FLAG("edges-sleep", 0, &o.edges_sleep,
			 "edges sleep while they wait even with a CPU each (to\n"
			 "measure what a cold CPU costs)"),
		OPT_FLAG("no-retime", 0, &no_retime,
			 "the calibration's profiles as they are, not timed again"),
		OPT_NUM("edge-bound", 0, &o.edge_bound, "X", 0, INFINITY,
			"a point whose edges share a CPU and would keep more\n"
			"than X of each edge CPU busy in the simulation is not\n"
			"run (default 0.4; validate.json lists it under not_run)"),
		OPT_END,
	};
	struct valrun_result r;
	struct err e;
	int rc;

	if ((rc = cli_parse_prov(&validate_cmd, rows, &argc, argv, &prov)) !=
	    OPT_GO)
		return rc;
	o.sweep = argv[0];
	o.retime = !no_retime;
	o.prov = prov;
	o.table = json || o.quiet ? NULL : stdout;
	valrun_run(&o, &r, &e);
	json_decref(prov);
	if (r.status == VALRUN_BAD)
		return cli_fail("%s", e.msg);
	if (json && r.written)
		fputs(r.json, stdout);
	else if (r.written && !o.quiet)
		say_done(&r);
	if (r.status != VALRUN_LOSSLESS)
		fprintf(stderr, "hybridspec: validate: %s\n", e.msg);
	valrun_result_release(&r);
	return r.status;
}
