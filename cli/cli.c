/* cli.c: helpers the subcommands share, and the config subcommand. */
#include "cli.h"

#include "cfg.h"
#include "jx.h"
#include "kern.h"
#include "outdir.h"
#include "mem.h"
#include "mload.h"
#include "spec.h"
#include "prov.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The inputs of the commands that read JSON files, told apart by their
 * keys: a file is the command's where it has `needs` (or no such) and any
 * of `any` */
static const struct {
	const char *cmd, *noun, *needs, *any[3];
} inputs[] = {
	{ "run", "a config", NULL, { "tenants" } },
	{ "plan", "a plan file", "base", { "slo", "candidates" } },
	{ "sweep", "a sweep file", "base", { "grid", "zip" } },
};

const char *cli_sh_word(const char *s, char *buf, size_t n)
{
	size_t at = 0;

	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789_./:=@%+,-") == strlen(s))
		return s;
	HS_ASSERT(n >= 3);
	buf[at++] = '\'';
	for (; *s && at + 6 < n; s++) {
		if (*s == '\'') { /* ' ends the quote, \' is one, ' reopens */
			memcpy(buf + at, "'\\''", 4);
			at += 4;
		} else {
			buf[at++] = *s;
		}
	}
	buf[at++] = '\'';
	buf[at] = '\0';
	return buf;
}

int cli_fail_file(const char *cmd, const char *file, const char *msg)
{
	json_t *d = json_load_file(file, 0, NULL);

	cli_fail("%s", msg);
	for (size_t i = 0; json_is_object(d) &&
			   i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		bool its = false;

		if (inputs[i].needs && !json_object_get(d, inputs[i].needs))
			continue;
		for (int k = 0; k < 3 && inputs[i].any[k]; k++)
			its |= json_object_get(d, inputs[i].any[k]) != NULL;
		if (its) {
			char w[4200];

			if (strcmp(inputs[i].cmd, cmd))
				fprintf(stderr, "hybridspec: '%s' is %s: run it "
					"with hybridspec %s %s\n", file,
					inputs[i].noun, inputs[i].cmd,
					cli_sh_word(file, w, sizeof(w)));
			break;
		}
	}
	json_decref(d);
	return CLI_BAD_INPUT;
}

void cli_warn(const char *cmd, const char *warnings)
{
	for (const char *l = warnings; l && *l;) {
		size_t n = strcspn(l, "\n");

		fprintf(stderr, "hybridspec %s: warning: %.*s\n", cmd, (int)n, l);
		l += n + (l[n] == '\n');
	}
}

int cli_parse_prov(const struct opt_cmd *cmd, struct opt *rows, int *argc,
		   char **argv, json_t **prov)
{
	const int lead = strchr(cmd->name, ' ') ? 1 : 0; /* "calib derive" */
	int words = *argc + lead, rc;
	char **typed = xmalloc(sizeof(*typed) * (size_t)words);

	memcpy(typed, argv - lead, sizeof(*typed) * (size_t)words);
	if ((rc = opt_parse(cmd, rows, argc, argv)) == OPT_GO)
		*prov = prov_new(words, typed);
	free(typed);
	return rc;
}

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

void cli_print_json(const json_t *v)
{
	char *s = jx_dumps(v);

	fputs(s, stdout);
	free(s);
}

int cli_parse_group(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	if (strcmp(arg, "32") && strcmp(arg, "64") && strcmp(arg, "128")) {
		snprintf(why, OPT_WHY_BYTES, "expected 32, 64 or 128, got \"%s\"",
			 arg);
		return -1;
	}
	*(int *)dest = atoi(arg);
	return 0;
}

int cli_parse_acts(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	if (strcmp(arg, "int8") && strcmp(arg, "fp16")) {
		snprintf(why, OPT_WHY_BYTES, "expected int8 or fp16, got \"%s\"",
			 arg);
		return -1;
	}
	*(bool *)dest = !strcmp(arg, "int8");
	return 0;
}

int cli_parse_temperature(const char *arg, void *dest,
			  char why[OPT_WHY_BYTES])
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !(v == 0 || (v >= SPEC_TEMP_MIN &&
					       v <= SPEC_TEMP_MAX))) {
		snprintf(why, OPT_WHY_BYTES, "expected 0 (greedy) or a "
			 "temperature in [%g, %g], got \"%s\"", SPEC_TEMP_MIN,
			 SPEC_TEMP_MAX, arg);
		return -1;
	}
	*(double *)dest = v;
	return 0;
}

int cli_parse_kernel(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	if ((*(const struct kern **)dest = kern_find(arg)))
		return 0;
	return opt_why_choice(why, kern_available(),
			      " (the sets this build and CPU run)", arg);
}

int cli_parse_quant(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	struct err e;

	if (mload_quant_parse(arg, dest, &e) < 0) {
		snprintf(why, OPT_WHY_BYTES, "%s", e.msg);
		return -1;
	}
	return 0;
}

int cli_parse_model_spec(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	const char *colon = strrchr(arg, ':');
	struct quant q;

	if (colon && cli_parse_quant(colon + 1, &q, why) < 0)
		return -1;
	*(const char **)dest = arg;
	return 0;
}

int cli_parse_model(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	const char *colon = strrchr(arg, ':');
	struct quant q;
	char skip[OPT_WHY_BYTES];

	if (colon && access(arg, F_OK) != 0 &&
	    cli_parse_quant(colon + 1, &q, skip) == 0) {
		snprintf(why, OPT_WHY_BYTES, "expected NAME or PATH, the format "
			 "apart (--model %.*s --quant %s), got \"%s\"",
			 (int)(colon - arg), arg, colon + 1, arg);
		return -1;
	}
	*(const char **)dest = arg;
	return 0;
}

static const struct opt_cmd config_cmd = {
	.name = "config",
	.usage = "CONFIG [--set POINTER=VALUE]... [-o DIR [--overwrite]]",
	.about = "Reads CONFIG strictly (an unknown key or a bad value is an error that\n"
		 "names the file and the JSON pointer), applies the --set overrides, fills\n"
		 "in every default and prints the resolved config. With -o, writes it to\n"
		 "DIR/" OD_MARKER " instead (DIR appears whole or not at all).\n",
	.exit_status = "0 valid, 2 bad usage or bad config",
	.operands = "CONFIG",
	.min_operands = 1,
	.max_operands = 1,
	.needs = { { "overwrite", "out" } },
};

int cli_config(int argc, char **argv)
{
	struct opt_list sets = { 0 };
	const char *out = NULL;
	bool overwrite = false;
	struct opt rows[] = {
		CLI_OPT_SET(&sets),
		OPT_STR("out", 'o', &out, "DIR", "write DIR/" OD_MARKER),
		CLI_OPT_OVERWRITE(&overwrite),
		OPT_END,
	};
	struct err e;
	struct cfg c;
	struct od o;
	char *text;
	int rc;

	if ((rc = opt_parse(&config_cmd, rows, &argc, argv)) != OPT_GO) {
		opt_list_release(&sets);
		return rc;
	}
	if (cfg_load(&c, argv[0], sets.v, sets.n, &e) < 0) {
		opt_list_release(&sets);
		return cli_fail_file("run", argv[0], e.msg);
	}
	rc = CLI_OK;
	cli_warn("config", c.warnings);
	text = cfg_resolved(&c);
	if (!out) {
		fputs(text, stdout);
	} else if (od_begin(&o, out, "config", overwrite, &e) < 0 ||
		   od_write(&o, OD_MARKER, text, &e) < 0 ||
		   od_commit(&o, &e) < 0) {
		od_abort(&o);
		rc = cli_fail("%s", e.msg);
	}
	free(text);
	cfg_release(&c);
	opt_list_release(&sets);
	return rc;
}
