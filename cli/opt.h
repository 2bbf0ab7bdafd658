/* opt.h: a command's options as one table, in the spirit of git's
 * parse-options: the rows and the command they belong to, and what the
 * command says about itself (--help, errors); optparse.h reads argv by
 * them. Each option is a row (long name, short name, kind, where
 * its value goes, range or choices, help); parsing, range errors,
 * conflicts and the --help text all come from the rows.
 *
 *	bool json = false;
 *	long long seed = -1;
 *	struct opt rows[] = {
 *		OPT_INT("seed", 0, &seed, "N", 0, LLONG_MAX, "the run seed"),
 *		OPT_FLAG("json", 0, &json, "print the summary"),
 *		OPT_END,
 *	};
 *	if ((rc = opt_parse(&run_cmd, rows, &argc, argv)) != OPT_GO)
 *		return rc;
 *	// argv[0 .. argc) are now the operands
 *
 * Errors name the command and the option: `hybridspec run: --seed:
 * expected an integer >= 0, got "x"`, exit status 2. Options shared by
 * several commands are rows defined once in cli.h. */
#ifndef HS_OPT_H
#define HS_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum { OPT_WHY_BYTES = 1280 }; /* room for a struct err's message */

enum opt_kind {
	OPT_KIND_FLAG,	 /* bool *: true when given */
	OPT_KIND_STR,	 /* const char **: the argument (borrowed from argv) */
	OPT_KIND_INT,	 /* long long *: an integer in [min, max] */
	OPT_KIND_NUM,	 /* double *: a finite number in [lo, hi] */
	OPT_KIND_CHOICE, /* int *: the argument's index in choices */
	OPT_KIND_LIST,	 /* struct opt_list *: every argument, in order */
	OPT_KIND_PARSE,	 /* parse(arg, dest, why): 0, or -1 with why filled */
	OPT_KIND_SHOW,	 /* show(stdout), then the command exits 0 */
};

struct opt {
	const char *name; /* the long name, without "--"; NULL ends a table */
	char short_name;  /* 0: none */
	enum opt_kind kind;
	void *dest;	  /* borrowed: where the value goes (see the kinds) */
	const char *arg;  /* the argument's name in --help; NULL: takes none */
	long long min, max;	    /* OPT_KIND_INT */
	double lo, hi;		    /* OPT_KIND_NUM */
	const char *const *choices; /* OPT_KIND_CHOICE: NULL-terminated */
	/* why: "expected ..., got ..." (the option's name is put before it) */
	int (*parse)(const char *arg, void *dest, char why[OPT_WHY_BYTES]);
	void (*show)(FILE *f);
	const char *help;      /* lines separated by '\n' */
	bool given;	       /* set by opt_parse */
};

#define OPT_FLAG(n, s, d, h) \
	{ .name = (n), .short_name = (s), .kind = OPT_KIND_FLAG, \
	  .dest = (bool *)(d), .help = (h) }
#define OPT_STR(n, s, d, a, h) \
	{ .name = (n), .short_name = (s), .kind = OPT_KIND_STR, \
	  .dest = (const char **)(d), .arg = (a), .help = (h) }
#define OPT_INT(n, s, d, a, lo_, hi_, h) \
	{ .name = (n), .short_name = (s), .kind = OPT_KIND_INT, \
	  .dest = (long long *)(d), .arg = (a), .min = (lo_), .max = (hi_), \
	  .help = (h) }
#define OPT_NUM(n, s, d, a, lo_, hi_, h) \
	{ .name = (n), .short_name = (s), .kind = OPT_KIND_NUM, \
	  .dest = (double *)(d), .arg = (a), .lo = (lo_), .hi = (hi_), \
	  .help = (h) }
#define OPT_CHOICE(n, s, d, a, c, h) \
	{ .name = (n), .short_name = (s), .kind = OPT_KIND_CHOICE, \
	  .dest = (int *)(d), .arg = (a), .choices = (c), .help = (h) }
#define OPT_LIST(n, s, d, a, h) \
	{ .name = (n), .short_name = (s), .kind = OPT_KIND_LIST, \
	  .dest = (d), .arg = (a), .help = (h) }
#define OPT_PARSE(n, s, d, a, fn, h) \
	{ .name = (n), .short_name = (s), .kind = OPT_KIND_PARSE, \
	  .dest = (d), .arg = (a), .parse = (fn), .help = (h) }
#define OPT_SHOW(n, fn, h) \
	{ .name = (n), .kind = OPT_KIND_SHOW, .show = (fn), .help = (h) }
#define OPT_END { .name = NULL }

/* A command: what its --help says around the option rows, and how many
 * operands (arguments that are not options) it takes. */
struct opt_cmd {
	const char *name;  /* "run", "bench kernels" */
	/* after "usage: hybridspec NAME "; lines '\n' apart, a line that
	 * starts with a space continues the one before */
	const char *usage;
	const char *operands; /* what a missing operand is called: "CONFIG" */
	const char *about; /* the paragraphs between the usage and the options */
	const char *exit_status; /* after "exit status: " */
	int min_operands, max_operands; /* max -1: any number */
	const char *conflicts[4][2]; /* pairs of long names not to give together */
	const char *needs[4][2];     /* {a, b}: a only with b */
	const char *required[4];     /* long names that must be given */
	void (*more_help)(FILE *f);	/* printed after the options, or NULL */
};

/* opt_parse's answer when the command should go on; otherwise it returns
 * the exit status: OPT_OK after --help or a show row, OPT_BAD_INPUT after
 * its message. */
enum { OPT_GO = -1, OPT_OK = 0, OPT_BAD_INPUT = 2 };

/* The arguments of a repeated option (--set): an array it owns of words
 * borrowed from argv. */
struct opt_list {
	const char **v; /* (n) */
	size_t n;
};
void opt_list_add(struct opt_list *l, const char *word);
void opt_list_release(struct opt_list *l);

/* OPT_GO when every option cmd requires was given to rows, else
 * "hybridspec NAME: give --a, --b and --c" (all it requires) and
 * OPT_BAD_INPUT. */
int opt_required(const struct opt_cmd *cmd, const struct opt *rows);

/* An error of usage: "hybridspec NAME: " and the message (fmt with a
 * and b), the usage lines and where the rest is, on stderr; returns
 * OPT_BAD_INPUT. */
int opt_usage_fail(const struct opt_cmd *cmd, const char *fmt, const char *a,
		   const char *b);

/* The --help text: usage, about, the rows, more_help, exit status. */
void opt_help(const struct opt_cmd *cmd, const struct opt *rows, FILE *f);

/* "hybridspec NAME: " and the message on stderr; returns 2. */
int opt_fail(const struct opt_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
