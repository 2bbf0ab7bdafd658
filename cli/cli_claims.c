/* cli_claims.c: "hybridspec claims", the verdicts on the paper's claims
 * (study/claims.h) from a results folder, for scripts/report.sh. */
#include "cli.h"

#include "claims.h"
#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static const struct opt_cmd claims_cmd = {
	.name = "claims",
	.usage = "RESULTS_DIR [--calib DIR] [--json]",
	.about = "Judges each claim of the paper on what `make run` left in RESULTS_DIR\n"
		 "(runs/, sweeps/, formulas.json) and the acceptance profiles in DIR\n"
		 "(default results/calib), by the thresholds listed first: a verdict a\n"
		 "claim (holds, holds only when ..., does not hold, not decided), or the\n"
		 "input it lacks. --json: every claim's evidence too, as text and tables\n"
		 "(what scripts/report.sh writes into REPORT.md):\n"
		 "  {\"thresholds\": [{\"name\", \"value\", \"meaning\"}], \"claims\": [{\"id\",\n"
		 "   \"title\", \"blocks\": [{\"text\"} or {\"table\": {\"columns\", \"rows\"}}],\n"
		 "   \"verdict\"}]}\n",
	.exit_status = "0 done, 2 bad usage or an input that cannot be read",
	.operands = "RESULTS_DIR",
	.min_operands = 1,
	.max_operands = 1,
};

/* The thresholds, then a line a claim: its verdict, or what it lacks. */
static void print_claims(const json_t *out)
{
	size_t i;
	json_t *c, *t;

	json_array_foreach(json_object_get(out, "thresholds"), i, t)
		printf("threshold %s = %g: %s\n",
		       json_string_value(json_object_get(t, "name")),
		       json_number_value(json_object_get(t, "value")),
		       json_string_value(json_object_get(t, "meaning")));
	json_array_foreach(json_object_get(out, "claims"), i, c) {
		const json_t *v = json_object_get(c, "verdict");
		const json_t *b = json_array_get(json_object_get(c, "blocks"), 0);

		printf("(%s) %s: %s\n", json_string_value(json_object_get(c, "id")),
		       json_string_value(json_object_get(c, "title")),
		       json_is_string(v) ? json_string_value(v)
					 : json_string_value(json_object_get(b, "text")));
	}
}

int cli_claims(int argc, char **argv)
{
	const char *calib = "results/calib";
	bool json = false;
	struct opt rows[] = {
		OPT_STR("calib", 0, &calib, "DIR",
			"the acceptance profiles (accept-*.json;\n"
			"default results/calib)"),
		CLI_OPT_JSON(&json, "the claims as JSON"),
		OPT_END,
	};
	struct stat st;
	struct err e;
	json_t *out;
	int rc;

	if ((rc = opt_parse(&claims_cmd, rows, &argc, argv)) != OPT_GO)
		return rc;
	if (stat(argv[0], &st) < 0 || !S_ISDIR(st.st_mode))
		return cli_fail("claims: '%s' is not a folder (make run writes "
				"results/paper)", argv[0]);
	if (stat(calib, &st) < 0 || !S_ISDIR(st.st_mode))
		return cli_fail("claims: --calib: '%s' is not a folder (the "
				"profiles: results/calib)", calib);
	if (!(out = claims_compute(argv[0], calib, &e)))
		return cli_fail("claims: %s", e.msg);
	if (json)
		cli_print_json(out);
	else
		print_claims(out);
	json_decref(out);
	return CLI_OK;
}
