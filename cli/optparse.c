/* optparse.c: parsing argv by a table of option rows (optparse.h).
 *
 * One pass over argv: an option is looked up among the rows by its long
 * or short name, its argument read by the row's kind into the row's
 * destination, and the row marked given; every other word is an operand,
 * moved down to argv[n] (n <= the word's index - 1, so no word is
 * overwritten before it is read). After the pass the conflicts and the
 * operand count are checked. --help is every command's implicit row. */
#include "optparse.h"

#include "err.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int parse_int(const struct opt *r, const char *arg, char *why)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (*arg && !*end && !errno && v >= r->min && v <= r->max) {
		*(long long *)r->dest = v;
		return 0;
	}
	if (r->max == LLONG_MAX)
		snprintf(why, OPT_WHY_BYTES, "expected an integer >= %lld, got \"%s\"",
			 r->min, arg);
	else
		snprintf(why, OPT_WHY_BYTES,
			 "expected an integer in [%lld, %lld], got \"%s\"", r->min,
			 r->max, arg);
	return -1;
}

static int parse_num(const struct opt *r, const char *arg, char *why)
{
	char *end;
	double v = strtod(arg, &end);

	if (*arg && !*end && isfinite(v) && v >= r->lo && v <= r->hi) {
		*(double *)r->dest = v;
		return 0;
	}
	if (isinf(r->hi))
		snprintf(why, OPT_WHY_BYTES, "expected a finite number >= %g, "
			 "got \"%s\"", r->lo, arg);
	else
		snprintf(why, OPT_WHY_BYTES, "expected a number in [%g, %g], got \"%s\"",
			 r->lo, r->hi, arg);
	return -1;
}

int opt_why_choice(char why[OPT_WHY_BYTES], const char *const *choices,
		   const char *note, const char *arg)
{
	size_t len = (size_t)snprintf(why, OPT_WHY_BYTES, "expected ");

	for (int i = 0; choices[i] && len < OPT_WHY_BYTES; i++)
		len += (size_t)snprintf(why + len, OPT_WHY_BYTES - len, "%s%s",
					!i ? "" : choices[i + 1] ? ", " : " or ",
					choices[i]);
	if (len < OPT_WHY_BYTES)
		snprintf(why + len, OPT_WHY_BYTES - len, "%s, got \"%s\"", note,
			 arg);
	return -1;
}

static int parse_choice(const struct opt *r, const char *arg, char *why)
{
	for (int i = 0; r->choices[i]; i++)
		if (!strcmp(arg, r->choices[i])) {
			*(int *)r->dest = i;
			return 0;
		}
	return opt_why_choice(why, r->choices, "", arg);
}

/* The row's value from arg; -1 with why filled. */
static int take(const struct opt *r, const char *arg, char *why)
{
	switch (r->kind) {
	case OPT_KIND_FLAG:
		*(bool *)r->dest = true;
		return 0;
	case OPT_KIND_STR:
		*(const char **)r->dest = arg;
		return 0;
	case OPT_KIND_INT:
		return parse_int(r, arg, why);
	case OPT_KIND_NUM:
		return parse_num(r, arg, why);
	case OPT_KIND_CHOICE:
		return parse_choice(r, arg, why);
	case OPT_KIND_LIST:
		opt_list_add(r->dest, arg);
		return 0;
	case OPT_KIND_PARSE:
		return r->parse(arg, r->dest, why);
	case OPT_KIND_SHOW:
		break;
	}
	HS_ASSERT(!"a show row has no value");
	return -1;
}

static bool takes_arg(const struct opt *r)
{
	return r->kind != OPT_KIND_FLAG && r->kind != OPT_KIND_SHOW;
}

static struct opt *find_long(struct opt *rows, const char *name, size_t len)
{
	for (struct opt *r = rows; r->name; r++)
		if (strlen(r->name) == len && !strncmp(r->name, name, len))
			return r;
	return NULL;
}

static struct opt *find_short(struct opt *rows, char c)
{
	for (struct opt *r = rows; r->name; r++)
		if (r->short_name == c)
			return r;
	return NULL;
}

/* One option row met with its argument (NULL: none yet) at argv[*i];
 * OPT_GO, or the command's exit status. */
static int meet(const struct opt_cmd *cmd, struct opt *r, const char *arg,
		int argc, char **argv, int *i)
{
	char why[OPT_WHY_BYTES], flag[64];

	if (r->kind == OPT_KIND_SHOW) { /* a listing: given alone */
		if (argc != 2)
			return opt_usage_fail(cmd, "--%s takes nothing else on the "
					      "line%s", r->name, "");
		r->show(stdout);
		return OPT_OK;
	}
	snprintf(flag, sizeof(flag), "--%s", r->name);
	/* one value an option, but a list's (--set) */
	if (r->given && r->kind != OPT_KIND_LIST)
		return opt_usage_fail(cmd, "%s: given twice%s", flag, "");
	if (!takes_arg(r) && arg)
		return opt_usage_fail(cmd, "%s: takes no value, got \"%s\"", flag, arg);
	if (takes_arg(r) && !arg) {
		if (*i + 1 >= argc)
			return opt_usage_fail(cmd, "%s: expected %s after it", flag,
					  r->arg);
		arg = argv[++*i];
	}
	if (take(r, arg, why) < 0)
		return opt_fail(cmd, "%s: %s", flag, why);
	r->given = true;
	return OPT_GO;
}

/* A word of short options, "-x", "-xVALUE" or "-qx VALUE". */
static int meet_short(const struct opt_cmd *cmd, struct opt *rows, int argc,
		      char **argv, int *i)
{
	const char *w = argv[*i];
	char name[2] = { 0 };
	int rc;

	for (const char *c = w + 1; *c; c++) {
		struct opt *r = find_short(rows, *c);

		name[0] = *c;
		if (*c == 'h') {
			opt_help(cmd, rows, stdout);
			return OPT_OK;
		}
		if (!r)
			return opt_usage_fail(cmd, "unknown option \"-%s\"%s", name, "");
		if (takes_arg(r))
			return meet(cmd, r, c[1] ? c + 1 : NULL, argc, argv, i);
		if ((rc = meet(cmd, r, NULL, argc, argv, i)) != OPT_GO)
			return rc;
	}
	return OPT_GO;
}

static int check_after(const struct opt_cmd *cmd, const struct opt *rows,
		       int operands)
{
	char n[32];

	for (int i = 0; i < 4 && cmd->conflicts[i][0]; i++)
		if (opt_given(rows, cmd->conflicts[i][0]) &&
		    opt_given(rows, cmd->conflicts[i][1]))
			return opt_usage_fail(cmd, "--%s and --%s cannot be given "
					  "together", cmd->conflicts[i][0],
					  cmd->conflicts[i][1]);
	for (int i = 0; i < 4 && cmd->needs[i][0]; i++)
		if (opt_given(rows, cmd->needs[i][0]) &&
		    !opt_given(rows, cmd->needs[i][1]))
			return opt_usage_fail(cmd, "--%s is for --%s, which is not "
					  "given", cmd->needs[i][0],
					  cmd->needs[i][1]);
	if (operands >= cmd->min_operands &&
	    (cmd->max_operands < 0 || operands <= cmd->max_operands))
		return opt_required(cmd, rows);
	snprintf(n, sizeof(n), "%d", operands);
	if (!cmd->max_operands)
		return opt_usage_fail(cmd, "takes no arguments, got %s%s", n, "");
	if (!operands)
		return opt_usage_fail(cmd, "expected %s%s", cmd->operands, "");
	return opt_usage_fail(cmd, "expected %s, got %s arguments", cmd->operands, n);
}

int opt_parse(const struct opt_cmd *cmd, struct opt *rows, int *argc,
	      char **argv)
{
	int operands = 0, rc = OPT_GO;
	bool only_operands = false;

	for (struct opt *r = rows; r->name; r++)
		r->given = false;
	for (int i = 1; i < *argc && rc == OPT_GO; i++) {
		const char *w = argv[i], *eq;
		struct opt *r;

		if (only_operands || w[0] != '-' || !w[1]) {
			argv[operands++] = argv[i];
		} else if (!strcmp(w, "--")) {
			only_operands = true;
		} else if (w[1] != '-') {
			rc = meet_short(cmd, rows, *argc, argv, &i);
		} else if (!strcmp(w, "--help")) {
			opt_help(cmd, rows, stdout);
			rc = OPT_OK;
		} else {
			eq = strchr(w + 2, '=');
			r = find_long(rows, w + 2, eq ? (size_t)(eq - w - 2)
						    : strlen(w + 2));
			rc = r ? meet(cmd, r, eq ? eq + 1 : NULL, *argc, argv, &i)
			       : opt_usage_fail(cmd, "unknown option \"%s\"%s", w, "");
		}
	}
	if (rc != OPT_GO)
		return rc;
	*argc = operands;
	return check_after(cmd, rows, operands);
}

bool opt_given(const struct opt *rows, const char *name)
{
	for (const struct opt *r = rows; r->name; r++)
		if (!strcmp(r->name, name))
			return r->given;
	HS_ASSERT(!"no option row of that name");
	return false;
}

