/* optparse.h: argv read by a command's option rows (opt.h). */
#ifndef HS_OPTPARSE_H
#define HS_OPTPARSE_H

#include "opt.h"

/* Reads argv[1 .. *argc) (argv[0] is the command's name) into the rows'
 * destinations, checks ranges, conflicts, the operand count and the
 * required options, and leaves the operands in argv[0 .. *argc). "--name=VALUE", "--name
 * VALUE", "-x VALUE", "-xVALUE" and "--" (operands only after it) are
 * understood; options and operands may come in any order. */
int opt_parse(const struct opt_cmd *cmd, struct opt *rows, int *argc,
	      char **argv);

/* Whether the row named name was given to opt_parse (a bug if no row has
 * that name). */
bool opt_given(const struct opt *rows, const char *name);

/* why = "expected A, B or C<note>, got "arg"" for the NULL-terminated
 * choices (note "" for none): an OPT_KIND_CHOICE row's message, and a
 * parse function's over choices of its own. Returns -1. */
int opt_why_choice(char why[OPT_WHY_BYTES], const char *const *choices,
		   const char *note, const char *arg);

#endif
