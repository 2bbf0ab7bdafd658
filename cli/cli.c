/* cli.c: helpers the subcommands share, and the config subcommand. */
#include "cli.h"

#include "cfg.h"
#include "outdir.h"
#include "mem.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("hybridspec: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_BAD_INPUT;
}

void cli_sets_add(struct cli_sets *s, const char *arg)
{
	s->v = xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
	s->v[s->n++] = arg;
}

void cli_sets_release(struct cli_sets *s)
{
	free(s->v);
	*s = (struct cli_sets){ 0 };
}

int cli_long(const char *name, const char *text, long long lo, long long hi,
	     long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (!*text || *end || errno || v < lo || v > hi) {
		if (hi == LLONG_MAX)
			return cli_fail("%s: expected an integer >= %lld, got '%s'",
					name, lo, text);
		return cli_fail("%s: expected an integer in [%lld, %lld], got '%s'",
				name, lo, hi, text);
	}
	*out = v;
	return 0;
}

int cli_double(const char *name, const char *text, double lo, double *out)
{
	char *end;
	double v = strtod(text, &end);

	if (!*text || *end || !(v >= lo) || !isfinite(v))
		return cli_fail("%s: expected a number >= %g, got '%s'", name, lo,
				text);
	*out = v;
	return 0;
}

int cli_group(const char *text, int *out)
{
	if (strcmp(text, "32") && strcmp(text, "64") && strcmp(text, "128"))
		return cli_fail("--group: expected 32, 64 or 128, got '%s'", text);
	*out = atoi(text);
	return 0;
}

int cli_block_acts(const char *text, bool *int8)
{
	if (strcmp(text, "int8") && strcmp(text, "fp16"))
		return cli_fail("--block-acts: expected int8 or fp16, got '%s'",
				text);
	*int8 = !strcmp(text, "int8");
	return 0;
}

static const char config_help[] =
	"usage: hybridspec config CONFIG [--set POINTER=VALUE]... [-o DIR]\n"
	"\n"
	"Reads CONFIG strictly (an unknown key or a bad value is an error that\n"
	"names the file and the JSON pointer), applies the --set overrides, fills\n"
	"in every default and prints the resolved config. With -o, writes it to\n"
	"DIR/" OD_MARKER " instead (DIR appears whole or not at all).\n"
	"\n"
	"  --set POINTER=VALUE  override a value, e.g. --set /cloud/replicas=2\n"
	"                       (VALUE is read as JSON, else as a string)\n"
	"  -o, --out DIR        write DIR/" OD_MARKER "\n"
	"  -h, --help           this text\n"
	"\nexit status: 0 valid, 2 bad usage or bad config\n";

int cli_config(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "set", required_argument, NULL, 's' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_sets sets = { 0 };
	const char *out = NULL;
	struct err e;
	struct cfg c;
	struct od o;
	char *text;
	int ch, rc = CLI_OK;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			cli_sets_add(&sets, optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(config_help, stdout);
			cli_sets_release(&sets);
			return CLI_OK;
		default:
			cli_sets_release(&sets);
			fputs(config_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc - 1) {
		cli_sets_release(&sets);
		fputs(config_help, stderr);
		return CLI_BAD_INPUT;
	}
	if (cfg_load(&c, argv[optind], sets.v, sets.n, &e) < 0) {
		cli_sets_release(&sets);
		return cli_fail("%s", e.msg);
	}
	text = cfg_resolved(&c);
	if (!out) {
		fputs(text, stdout);
	} else if (od_begin(&o, out, &e) < 0 ||
		   od_write(&o, OD_MARKER, text, &e) < 0 ||
		   od_commit(&o, &e) < 0) {
		od_abort(&o);
		rc = cli_fail("%s", e.msg);
	}
	free(text);
	cfg_release(&c);
	cli_sets_release(&sets);
	return rc;
}
