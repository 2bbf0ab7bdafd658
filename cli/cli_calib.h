/* cli_calib.h: what the files of "hybridspec calib" share. Each
 * subcommand's argv[0] is its name and argv[-1] "calib" (cli_calib passes
 * its own argv + 1). */
#ifndef HS_CLI_CALIB_H
#define HS_CLI_CALIB_H

#include <jansson.h>

#include "opt.h"

struct err;

#define CLI_CALIB_EXIT "0 done, 2 bad usage or bad input (a file, model or name\n" \
	"that is not there or not right)"

/* the subcommands of cli_calib_measure.c */
int cli_calib_cpu(int argc, char **argv);   /* "calib cpu" */
int cli_calib_gpu(int argc, char **argv);   /* "calib gpu" */
int cli_calib_check(int argc, char **argv); /* "calib check" */
/* cli_calib_import.c */
int cli_calib_import(int argc, char **argv); /* "calib import-profiles" */

/* Writes v (owned: released here) to path, stderr saying so, or to
 * stdout without one; a NULL v is e's message. An existing path is
 * replaced only where overwrite (jx_replaceable). CLI_OK, or
 * CLI_BAD_INPUT after the message. */
int cli_calib_emit(json_t *v, const struct err *e, const char *path,
		   bool overwrite);

#endif
