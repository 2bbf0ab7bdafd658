/* cli_formulas.c: "hybridspec formulas": the closed forms for a config's
 * setting (study/fsetting.h), their check against the simulator in each
 * one's regime, and the table of where the paper's async bound holds
 * (study/fcheck.h). */
#include "cli.h"

#include "cfg.h"
#include "fcheck.h"
#include "fsetting.h"

#include <stdio.h>
#include <stdlib.h>

static const struct opt_cmd formulas_cmd = {
	.name = "formulas",
	.usage = "CONFIG [--set POINTER=VALUE]... [--json]\n"
		 "--check [--json]\n"
		 "--table",
	.about = "CONFIG: the formulas of docs/formulas.md for the config's first group\n"
		 "(at its mean lengths and RTT): E[A], Leviathan's improvement and its\n"
		 "condition, T_sync, the paper's async bound, the async renewal model\n"
		 "(docs/async-renewal.md), both balance points, the roofline and its ridge,\n"
		 "capacity in tenants, M/D/1 waiting times.\n",
	.exit_status = "0 done (--check: every in-regime row within 1%), 1 a row\n"
		       "off by more, 2 bad usage or bad input",
	.operands = "CONFIG (or --check, or --table)",
	.min_operands = 0,
	.max_operands = 1,
	.conflicts = { { "check", "table" }, { "table", "json" } },
};

/* o as JSON on stdout, then dropped. */
static void print_json(json_t *o)
{
	cli_print_json(o);
	json_decref(o);
}

static int run_checks(bool json)
{
	struct fcheck_list l = { 0 };
	struct err e;
	int rc;

	if (fcheck_run(&l, &e) < 0) {
		fcheck_list_release(&l);
		return cli_fail("%s", e.msg);
	}
	rc = fcheck_passed(&l) ? CLI_OK : CLI_FAILED;
	if (json)
		print_json(fcheck_json(&l));
	else
		fcheck_print(&l, stdout);
	fcheck_list_release(&l);
	return rc;
}

static int setting(const char *file, const struct opt_list *sets, bool json)
{
	struct err e;
	struct cfg c;

	if (cfg_load(&c, file, sets->v, sets->n, &e) < 0)
		return cli_fail("%s", e.msg);
	if (json)
		print_json(fset_json(&c));
	else
		fset_print(&c, stdout);
	cfg_release(&c);
	return CLI_OK;
}

int cli_formulas(int argc, char **argv)
{
	struct opt_list sets = { 0 };
	bool checks = false, table = false, json = false;
	struct opt rows[] = {
		CLI_OPT_SET(&sets),
		OPT_FLAG("check", 0, &checks,
			 "runs the simulator in each formula's regime and prints\n"
			 "predicted, simulated and relative error; exits 1 if an\n"
			 "in-regime row is off by more than 1%"),
		OPT_FLAG("table", 0, &table,
			 "async time per token against alpha, gamma and RTT: the\n"
			 "paper's bound, the renewal model and the simulation\n"
			 "(markdown)"),
		CLI_OPT_JSON(&json, "the figures as JSON"),
		OPT_END,
	};
	struct err e;
	int rc;

	if ((rc = opt_parse(&formulas_cmd, rows, &argc, argv)) != OPT_GO)
		goto out;
	if ((checks || table) != (argc == 0))
		rc = opt_fail(&formulas_cmd, checks || table
			      ? "--check and --table take no CONFIG"
			      : "expected CONFIG, --check or --table");
	else if ((checks || table) && sets.n)
		rc = opt_fail(&formulas_cmd, "--set is a CONFIG's, not --check's "
			      "or --table's");
	else if (table)
		rc = fcheck_async_table(stdout, &e) < 0 ? cli_fail("%s", e.msg)
							 : CLI_OK;
	else if (checks)
		rc = run_checks(json);
	else
		rc = setting(argv[0], &sets, json);
out:
	opt_list_release(&sets);
	return rc;
}
