/* cli_sub.h: a command made of subcommands ("calib cpu", "bench
 * kernels"): a table of name, function and summary, and the dispatch
 * through it. */
#ifndef HS_CLI_SUB_H
#define HS_CLI_SUB_H

struct cli_sub {
	const char *name;		  /* NULL ends a table */
	int (*fn)(int argc, char **argv); /* argv[0] is name */
	const char *summary;
};

struct cli_subs {
	const char *name;	    /* "calib" */
	const char *about;	    /* the paragraphs before the table, or NULL */
	const char *exit_status;    /* after "exit status: " */
	const struct cli_sub *subs; /* borrowed */
};

/* Runs the subcommand argv[1] names with argv + 1 and returns its exit
 * status; --help prints the table (0); a missing or unknown name is a
 * usage error (2). */
int cli_sub_run(const struct cli_subs *s, int argc, char **argv);

#endif
