/* opt.c: what a command says about itself (opt.h): its usage lines, its
 * --help from the option rows, and its errors; the list a repeated
 * option fills. The rows are read, never
 * changed; the help's columns are fixed (HELP_COLUMN). */
#include "opt.h"

#include "err.h"
#include "mem.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { HELP_COLUMN = 25 }; /* where an option's help starts */

void opt_list_add(struct opt_list *l, const char *word)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = word;
}

void opt_list_release(struct opt_list *l)
{
	free(l->v);
	*l = (struct opt_list){ 0 };
}

int opt_fail(const struct opt_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "hybridspec %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return OPT_BAD_INPUT;
}

/* The usage lines: "usage: hybridspec NAME " before the first, spaces
 * before a continuation, "       hybridspec NAME " before the others. */
static void usage_lines(const struct opt_cmd *cmd, FILE *f)
{
	int indent = (int)strlen(cmd->name) + 12; /* "hybridspec NAME " */
	const char *u = cmd->usage;

	for (bool first = true; *u; first = false) {
		size_t n = strcspn(u, "\n");

		if (first)
			fprintf(f, "usage: hybridspec %s ", cmd->name);
		else if (*u == ' ')
			fprintf(f, "%*s", 7 + indent - 1, "");
		else
			fprintf(f, "       hybridspec %s ", cmd->name);
		fprintf(f, "%.*s\n", (int)n, u);
		u += n + (u[n] == '\n');
	}
}

int opt_usage_fail(const struct opt_cmd *cmd, const char *fmt, const char *a,
		      const char *b)
{
	opt_fail(cmd, fmt, a, b);
	usage_lines(cmd, stderr);
	fprintf(stderr, "(hybridspec %s --help for the options)\n", cmd->name);
	return OPT_BAD_INPUT;
}

int opt_required(const struct opt_cmd *cmd, const struct opt *rows)
{
	char list[256];
	size_t at = 0;
	int n = 0, missing = 0;

	for (; n < 4 && cmd->required[n]; n++) {
		const struct opt *r = rows;

		while (r->name && strcmp(r->name, cmd->required[n]))
			r++;
		HS_ASSERT(r->name); /* a required option is a row */
		missing += !r->given;
	}
	for (int i = 0; i < n && missing; i++)
		at += (size_t)snprintf(list + at, sizeof(list) - at, "%s--%s",
				       !i ? "" : i == n - 1 ? " and " : ", ",
				       cmd->required[i]);
	return missing ? opt_fail(cmd, "give %s", list) : OPT_GO;
}

/* "  -o, --out DIR" and the help's lines from HELP_COLUMN on. */
static void help_row(const char *shorts, const char *name, const char *arg,
		     const char *help, FILE *f)
{
	int n = fprintf(f, "  %s--%s%s%s", shorts, name, arg ? " " : "",
			arg ? arg : "");

	while (*help) {
		size_t len = strcspn(help, "\n");

		if (n >= HELP_COLUMN) {
			fputc('\n', f);
			n = 0;
		}
		fprintf(f, "%*s%.*s\n", HELP_COLUMN - n, "", (int)len, help);
		n = 0;
		help += len + (help[len] == '\n');
	}
}

void opt_help(const struct opt_cmd *cmd, const struct opt *rows, FILE *f)
{
	char shorts[8];

	usage_lines(cmd, f);
	if (cmd->about && *cmd->about)
		fprintf(f, "\n%s", cmd->about);
	fprintf(f, "\noptions:\n");
	for (const struct opt *r = rows; r->name; r++) {
		if (r->short_name)
			snprintf(shorts, sizeof(shorts), "-%c, ", r->short_name);
		else
			snprintf(shorts, sizeof(shorts), "    ");
		help_row(shorts, r->name, r->arg, r->help, f);
	}
	help_row("-h, ", "help", NULL, "this text", f);
	if (cmd->more_help) {
		fputc('\n', f);
		cmd->more_help(f);
	}
	fprintf(f, "\nexit status: %s\n", cmd->exit_status);
}
