/* main.c: dispatch to subcommands, a table of name, function, summary. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "run", cli_run, "simulate a config; results, table, trace" },
	{ "calib", cli_calib, "measure edge, verify and acceptance profiles" },
	{ "sweep", cli_sweep, "a grid of configs x seeds, in parallel; a CSV" },
	{ "formulas", cli_formulas, "the paper's formulas, checked against runs" },
	{ "generate", cli_generate, "text from a real model, in any weight format" },
	{ "eval", cli_eval, "perplexity and acceptance of real models" },
	{ "serve", cli_serve, "the cloud verifier of a real deployment (TCP)" },
	{ "edge", cli_edge, "an edge device of a real deployment: drafts, streams" },
	{ "validate", cli_validate, "real deployment on loopback vs the simulator" },
	{ "config", cli_config, "check a config and print it resolved" },
	{ "bench", cli_bench, "benchmarks (engine)" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: hybridspec <command> [options]   "
		   "(hybridspec <command> --help for more)\n\n"
		   "Simulates multi-tenant edge-cloud LLM serving with "
		   "speculative decoding.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_BAD_INPUT;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return CLI_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "hybridspec: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return CLI_BAD_INPUT;
}
