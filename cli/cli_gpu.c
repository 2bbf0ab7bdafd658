/* cli_gpu.c: "hybridspec gpu", the GPU costs' commands: "gpu check",
 * published serving figures against the simulator (study/gcheck.h), and
 * "gpu compare", a measured verify table against it (study/gcompare.h). */
#include "cli.h"
#include "cli_sub.h"

#include "gcheck.h"
#include "fs.h"
#include "gcompare.h"

#include <stdio.h>

static const struct opt_cmd check_cmd = {
	.name = "gpu check",
	.usage = "[REFS] [--tables DIR] [--gpu-only] [--json] [-o FILE [--overwrite]]\n"
		 " [--quiet]",
	.about = "Simulates each point of REFS (default configs/gpu-check/refs.json, the\n"
		 "repository's, found from any directory), a figure a serving framework\n"
		 "published for a model on a GPU, and compares the simulator's answer\n"
		 "with it; nothing is fitted to the figures. A point\n"
		 "runs cloud_only: a static batch (every request at t = 0) or a closed loop\n"
		 "of clients (6 requests each, back to back), fixed lengths, prompts\n"
		 "prefilled whole, a WAN of RTT 1 ns at 1 Pb/s, one replica of the point's\n"
		 "GPU preset, tp and model, its weights and KV cache in the point's formats\n"
		 "and its KV policy (paged unless it says), priced by DIR/GPU-MODEL-tpN.json\n"
		 "when DIR has it (measured: FP16 weights), else derived from the efficiency\n"
		 "curves. Prints a row a point (published, predicted, their ratio, the\n"
		 "source and what priced it), then for decode, prefill and\n"
		 "concurrency-bound figures (decode figures of points whose requests\n"
		 "outgrow the simulated KV pool) the median and worst\n"
		 "|predicted/published - 1|, by GPU and by source, against the goals.\n"
		 "A line a point on stderr as it runs. The REFS format: study/gcheck.h.\n",
	.exit_status = "0 done (the goals are reported, not enforced; a point the\n"
		       "simulator refuses is a row saying why), 2 bad usage or bad input",
	.operands = "REFS",
	.min_operands = 0,
	.max_operands = 1,
	.conflicts = { { "json", "quiet" } }, /* print JSON, or nothing */
	.needs = { { "overwrite", "out" } },
	.more_help = gcheck_legend,
};

/* The check of refs, shown as asked; the exit status. */
static int check_refs(const char *refs, const struct gcheck_opts *o,
		      const char *out, bool overwrite, bool json, bool quiet)
{
	struct gcheck_refs r;
	struct gcheck g;
	struct err e;
	int rc = CLI_OK;
	json_t *j;

	if (out && gcheck_writable(out, overwrite, &e) < 0)
		return cli_fail("gpu check: %s", e.msg);
	if (gcheck_refs_load(&r, refs, &e) < 0)
		return cli_fail("gpu check: %s", e.msg);
	if (gcheck_run(&g, &r, o, &e) < 0 ||
	    (out && gcheck_save(&g, out, &e) < 0)) {
		rc = cli_fail("gpu check: %s", e.msg);
	} else if (json) {
		cli_print_json(j = gcheck_json(&g));
		json_decref(j);
	} else if (!quiet) {
		gcheck_print(&g, stdout);
	}
	gcheck_release(&g);
	gcheck_refs_release(&r);
	return rc;
}

static int gpu_check(int argc, char **argv)
{
	char tables[4200], refs[4200];
	struct gcheck_opts o = { .tables = fs_repo_dir("results/calib/gpu", tables,
						       sizeof(tables)),
				 .progress = stderr };
	const char *out = NULL;
	bool json = false, quiet = false, overwrite = false;
	struct opt rows[] = {
		OPT_FLAG("gpu-only", 0, &o.gpu_only,
			 "the GPU's time alone: no step overhead of a server\n"
			 "(/cloud/gpu/overhead_s 0; the default is vLLM's)"),
		OPT_STR("tables", 0, &o.tables, "DIR",
			"the operator tables (default results/calib/gpu, the\n"
			"repository's, found from any directory)"),
		CLI_OPT_JSON(&json, "the whole result as JSON: {\"refs\", \"tables\",\n"
			     "\"points\": [ROW], \"summary\": {\"decode\", \"prefill\",\n"
			     "\"concurrency-bound\"}}"),
		OPT_STR("out", 'o', &out, "FILE",
			"also write the rows to FILE: JSON (as --json) when it\n"
			"ends in .json, else CSV"),
		CLI_OPT_OVERWRITE_FILE(&overwrite),
		CLI_OPT_QUIET(&quiet),
		OPT_END,
	};
	int rc;

	if ((rc = opt_parse(&check_cmd, rows, &argc, argv)) != OPT_GO)
		return rc;
	if (quiet)
		o.progress = NULL;
	return check_refs(argc ? argv[0] : fs_repo_dir("configs/gpu-check/refs.json",
						       refs, sizeof(refs)),
			  &o, out, overwrite, json, quiet);
}

static const struct opt_cmd compare_cmd = {
	.name = "gpu compare",
	.usage = "TABLE [--against PRESET] [--gpu PRESET] [--tables DIR]\n"
		 " [--json]",
	.about = "TABLE, a verify table that `calib gpu` measured (results/calib/\n"
		 "verify-H200-*.json), point by point against what the simulator charges\n"
		 "for the same forwards (ceil(tokens / 5) sequences at the context; no\n"
		 "step overhead, as calib gpu times the GPU alone): priced by the\n"
		 "operator table of PRESET in DIR, another GPU of the same class measured\n"
		 "by others (derived when DIR has none), and by the derived costs of the\n"
		 "measured GPU's own preset. Prints each point's milliseconds and\n"
		 "differences, then the median and worst |difference| of each.\n",
	.exit_status = "0 done, 2 bad usage or bad input (a table calib gpu did not\n"
		       "write, an unknown preset)",
	.operands = "TABLE",
	.min_operands = 1,
	.max_operands = 1,
};

static int gpu_compare(int argc, char **argv)
{
	char dir[4200];
	const char *against = "H100-SXM", *gpu = NULL,
		   *tables = fs_repo_dir("results/calib/gpu", dir, sizeof(dir));
	bool json = false;
	struct opt rows[] = {
		OPT_STR("against", 0, &against, "PRESET",
			"the GPU priced by its operator table (default H100-SXM,\n"
			"the Hopper whose profiles DIR holds)"),
		OPT_STR("gpu", 0, &gpu, "PRESET",
			"the measured GPU's preset (default: the table's GPU name\n"
			"less \"NVIDIA \")"),
		OPT_STR("tables", 0, &tables, "DIR",
			"the operator tables (default results/calib/gpu, the\n"
			"repository's, found from any directory)"),
		CLI_OPT_JSON(&json, "{\"gpu\", \"model\", \"dtype\", \"against\",\n"
			     "\"against_pricing\", \"own_pricing\", \"rows\": [{\"tokens\",\n"
			     "\"ctx\", \"measured_s\", \"against_s\", \"own_s\"}], \"summary\"}"),
		OPT_END,
	};
	struct gcompare g;
	struct err e;
	int rc;

	if ((rc = opt_parse(&compare_cmd, rows, &argc, argv)) != OPT_GO)
		return rc;
	if (gcompare_run(&g, argv[0], gpu, against, tables, &e) < 0)
		return cli_fail("gpu compare: %s", e.msg);
	if (json) {
		json_t *j = gcompare_json(&g);

		cli_print_json(j);
		json_decref(j);
	} else {
		gcompare_print(&g, stdout);
	}
	gcompare_release(&g);
	return CLI_OK;
}

static const struct cli_sub gpu_subs_table[] = {
	{ "check", gpu_check,
	  "published serving figures against the simulator's GPU costs" },
	{ "compare", gpu_compare,
	  "a table calib gpu measured against the simulator's GPU costs" },
	{ NULL, NULL, NULL },
};

static const struct cli_subs gpu_subs = {
	.name = "gpu",
	.exit_status = "0 done, 2 bad usage or bad input (each SUB: hybridspec "
		       "gpu SUB --help)",
	.subs = gpu_subs_table,
};

int cli_gpu(int argc, char **argv)
{
	return cli_sub_run(&gpu_subs, argc, argv);
}
