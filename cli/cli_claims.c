/* cli_claims.c: "hybridspec claims", the verdicts on the paper's claims
 * (study/claims.h) from a results folder, for scripts/report.sh. */
#include "cli.h"

#include "claims.h"
#include "err.h"
#include "jx.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static const char claims_help[] =
	"usage: hybridspec claims RESULTS_DIR [--calib DIR] [--json]\n"
	"\n"
	"Judges each claim of the paper on what `make run` left in RESULTS_DIR\n"
	"(runs/, sweeps/, formulas.json) and the acceptance profiles in DIR\n"
	"(default results/calib), by the thresholds listed first: a verdict a\n"
	"claim (holds, holds only when ..., does not hold, not decided), or the\n"
	"input it lacks. --json: every claim's evidence too, as text and tables\n"
	"(what scripts/report.sh writes into REPORT.md):\n"
	"  {\"thresholds\": [{\"name\", \"value\", \"meaning\"}], \"claims\": [{\"id\",\n"
	"   \"title\", \"blocks\": [{\"text\"} or {\"table\": {\"columns\", \"rows\"}}],\n"
	"   \"verdict\"}]}\n"
	"\n"
	"  --calib DIR  the acceptance profiles (accept-*.json)\n"
	"  --json       the claims as JSON\n"
	"  -h, --help   this text\n"
	"\nexit status: 0 done, 2 bad usage or an input that cannot be read\n";

int cli_claims(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "calib", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *calib = "results/calib";
	bool json = false;
	struct stat st;
	struct err e;
	json_t *out;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			calib = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(claims_help, stdout);
			return CLI_OK;
		default:
			fputs(claims_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc - 1) {
		fputs(claims_help, stderr);
		return CLI_BAD_INPUT;
	}
	if (stat(argv[optind], &st) < 0 || !S_ISDIR(st.st_mode))
		return cli_fail("claims: '%s' is not a folder (make run writes "
				"results/paper)", argv[optind]);
	if (!(out = claims_compute(argv[optind], calib, &e)))
		return cli_fail("claims: %s", e.msg);
	if (json) {
		char *text = jx_dumps(out);

		fputs(text, stdout);
		free(text);
	} else {
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

			printf("(%s) %s: %s\n",
			       json_string_value(json_object_get(c, "id")),
			       json_string_value(json_object_get(c, "title")),
			       json_is_string(v) ? json_string_value(v)
				: json_string_value(json_object_get(b, "text")));
		}
	}
	json_decref(out);
	return CLI_OK;
}
