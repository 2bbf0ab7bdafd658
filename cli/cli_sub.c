/* cli_sub.c: dispatch by a table of subcommands (cli_sub.h). The table
 * ends with a row whose name is NULL; --help lists its rows. */
#include "cli_sub.h"

#include "opt.h"

#include <stdio.h>
#include <string.h>

static void sub_help(const struct cli_subs *s, FILE *f)
{
	fprintf(f, "usage: hybridspec %s SUB [options]\n\n", s->name);
	if (s->about)
		fprintf(f, "%s\n", s->about);
	fprintf(f, "SUB (hybridspec %s SUB --help for its options):\n", s->name);
	for (const struct cli_sub *c = s->subs; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->summary);
	fprintf(f, "\nexit status: %s\n", s->exit_status);
}

int cli_sub_run(const struct cli_subs *s, int argc, char **argv)
{
	const struct opt_cmd cmd = { .name = s->name };

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		sub_help(s, stdout);
		return OPT_OK;
	}
	for (const struct cli_sub *c = s->subs; argc >= 2 && c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->fn(argc - 1, argv + 1);
	if (argc < 2)
		opt_fail(&cmd, "expected SUB");
	else
		opt_fail(&cmd, "unknown subcommand \"%s\"", argv[1]);
	sub_help(s, stderr);
	return OPT_BAD_INPUT;
}
