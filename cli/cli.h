/* cli.h: the subcommands of build/hybridspec and what they share.
 *
 * Exit status: 0 success, 1 a check or measurement failed, 2 bad usage or
 * bad input (the message on stderr says what and where). */
#ifndef HS_CLI_H
#define HS_CLI_H

#include <stdbool.h>
#include <stddef.h>

enum { CLI_OK = 0, CLI_FAILED = 1, CLI_BAD_INPUT = 2 };

int cli_config(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_formulas(int argc, char **argv);
int cli_generate(int argc, char **argv);
int cli_eval(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_plan(int argc, char **argv);
int cli_calib(int argc, char **argv);
int cli_serve(int argc, char **argv);
int cli_edge(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_claims(int argc, char **argv);
int cli_bench_kernels(int argc, char **argv); /* "bench kernels" */
int cli_bench_gpu(int argc, char **argv);     /* "bench gpu" */

/* Prints "hybridspec: <msg>" to stderr and returns CLI_BAD_INPUT. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Collects repeated --set arguments. */
struct cli_sets {
	const char **v; /* (n) borrowed from argv; the array is owned */
	size_t n;
};
void cli_sets_add(struct cli_sets *s, const char *arg);
void cli_sets_release(struct cli_sets *s);

/* Option values: "--name" and its text; an integer in [lo, hi] or a
 * number >= lo. 0, or CLI_BAD_INPUT after printing
 * "--name: expected ..., got 'text'". */
int cli_long(const char *name, const char *text, long long lo, long long hi,
	     long long *out);
int cli_double(const char *name, const char *text, double lo, double *out);
/* --group: a W4A16 group size, 32, 64 or 128 */
int cli_group(const char *text, int *out);
/* --block-acts: "int8" (true) or "fp16" (false) */
int cli_block_acts(const char *text, bool *int8);

#endif
