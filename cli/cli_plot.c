/* cli_plot.c: "hybridspec plot", figures of a run or a sweep the user made
 * (study/plot.h). */
#include "cli.h"

#include "plot.h"

#include <stdio.h>

static const struct opt_cmd plot_cmd = {
	.name = "plot",
	.usage = "DIR [-o OUT] [--x PARAM] [--y METRIC] [--by PARAM] [--quiet]",
	.about = "Draws the figures of DIR, the results of `run` or of `sweep`, with\n"
		 "gnuplot, as PNG and SVG in OUT (default DIR/plots, replaced whole; a\n"
		 "file there the tool did not write stops it), beside their data (.dat)\n"
		 "and plot.gp, which draws them again.\n"
		 "\n"
		 "A run: the distribution over its finished requests of the time to first\n"
		 "token, the time per output token, and each request's median and p99\n"
		 "inter-token latency (requests.csv), a line a group (ttft-cdf, tpot-cdf,\n"
		 "itl-cdf). A sweep: METRIC against PARAM (sweep.csv: PARAM a column of\n"
		 "its parameters, METRIC one of its metrics as written there, without\n"
		 "_mean, or either as the sweep file's pointer: /tenants/0/count for\n"
		 "tenants.0.count), with the 95% intervals over its seeds, a line a\n"
		 "value of the other parameters (--by PARAM names the first in each\n"
		 "line's label); the defaults are its first parameter and first\n"
		 "metric. A text x is drawn as categories; a numeric one spanning 20x\n"
		 "or more on a log axis.\n",
	.exit_status = "0 drawn, 1 gnuplot missing or failing (the data and\n"
		       "plot.gp are written; scripts/install-deps.sh installs it),\n"
		       "2 bad usage or bad input",
	.operands = "DIR",
	.min_operands = 1,
	.max_operands = 1,
};

int cli_plot(int argc, char **argv)
{
	struct plot_opts o = { 0 };
	struct plot_result r;
	bool quiet = false;
	struct err e;
	struct opt rows[] = {
		OPT_STR("out", 'o', &o.out, "OUT",
			"the figures' folder (default DIR/plots)"),
		OPT_STR("x", 0, &o.x, "PARAM", "a sweep's x: a parameter column"),
		OPT_STR("y", 0, &o.y, "METRIC", "a sweep's y: a metric"),
		OPT_STR("by", 0, &o.by, "PARAM",
			"a sweep's lines: by this parameter first"),
		CLI_OPT_QUIET(&quiet),
		OPT_END,
	};
	int rc;

	if ((rc = opt_parse(&plot_cmd, rows, &argc, argv)) != OPT_GO)
		return rc;
	if (plot_dir(argv[0], &o, &r, &e) < 0)
		return cli_fail("plot: %s", e.msg);
	if (!r.drawn) {
		fprintf(stderr, "plot: gnuplot did not draw the figures (is it "
			"installed? scripts/install-deps.sh): their data and "
			"plot.gp are in %s\n", r.dir);
		return CLI_FAILED;
	}
	for (size_t i = 0; i < r.n && !quiet; i++)
		printf("plot: %s/%s.png (and .svg)\n", r.dir, r.name[i]);
	return CLI_OK;
}
