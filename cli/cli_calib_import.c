/* cli_calib_import.c: "hybridspec calib import-profiles", measured GPU
 * operator profiles into operator tables (calib_import_profiles). */
#include "cprof.h"

#include "cli.h"
#include "cli_calib.h"

static const struct opt_cmd import_cmd = {
	.name = "calib import-profiles",
	.usage = "DIR [--gpu NAME] [--model NAME] [--source TEXT] [-o OUT]\n"
		 " [--overwrite] [--rows]",
	.about = "Reads measured per-operator GPU times in Vidur's layout\n"
		 "(microsoft/vidur's data/profiling: compute/<gpu>/<org>/<model>/\n"
		 "mlp.csv and network/<topology>/all_reduce.csv; DIR is that folder or\n"
		 "a checkout holding it) and writes OUT/<GPU>-<MODEL>-tp<N>.json, an\n"
		 "operator table for each profiled GPU, built-in model and tensor-\n"
		 "parallel degree, and OUT/curves.json, each GPU's efficiency curves\n"
		 "with the held-out error of deriving a table without its profile\n"
		 "(docs/gpu-costs.md). A config uses a table as /cloud/gpu/table. A\n"
		 "file OUT holds already (the committed tables, by default) is\n"
		 "replaced only with --overwrite, and every one is checked before any\n"
		 "is written.\n",
	.exit_status = CLI_CALIB_EXIT,
	.operands = "DIR",
	.min_operands = 1,
	.max_operands = 1,
};

int cli_calib_import(int argc, char **argv)
{
	struct calib_import o = { .out = "results/calib/gpu",
		.source = "operator profiles in Vidur's layout (repository and "
			  "commit not given: --source)" };
	struct opt rows[] = {
		OPT_STR("gpu", 0, &o.gpu, "NAME",
			"only this GPU (A100-80G, H100-SXM, A40)"),
		OPT_STR("model", 0, &o.model, "NAME",
			"tables of this built-in model only (the curves\n"
			"are fitted on every profiled model)"),
		OPT_STR("source", 0, &o.source, "TEXT",
			"where the profiles come from: repository, commit,\n"
			"licence (written into every table)"),
		OPT_STR("out", 'o', &o.out, "OUT",
			"where the tables go (default results/calib/gpu)"),
		OPT_FLAG("rows", 0, &o.print_rows,
			 "print the curves as sim/gcurve.c's rows"),
		OPT_FLAG("overwrite", 0, &o.overwrite,
			 "replace the tables and curves.json in OUT if they\n"
			 "exist (never a file hybridspec did not write)"),
		OPT_END,
	};
	json_t *prov;
	struct err e;
	int rc;

	if ((rc = cli_parse_prov(&import_cmd, rows, &argc, argv, &prov)) != OPT_GO)
		return rc;
	o.dir = argv[0];
	rc = calib_import_profiles(&o, prov, &e) < 0 ? cli_fail("%s", e.msg)
						      : CLI_OK;
	json_decref(prov);
	return rc;
}
