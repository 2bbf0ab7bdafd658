/* cli.h: the subcommands of build/hybridspec and what they share.
 *
 * Exit status: 0 success, 1 a check or measurement failed, 2 bad usage or
 * bad input (the message on stderr says what and where). */
#ifndef HS_CLI_H
#define HS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <math.h>

#include <jansson.h>

#include "opt.h"
#include "optparse.h"

enum { CLI_OK = OPT_OK, CLI_FAILED = 1, CLI_BAD_INPUT = OPT_BAD_INPUT };

int cli_config(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_formulas(int argc, char **argv);
int cli_generate(int argc, char **argv);
int cli_eval(int argc, char **argv);
/* `eval accept`'s work (cli_eval.c): eval_accept on o, its profile
 * written to out (NULL: none; an existing one only where overwrite) with
 * prov (borrowed) as its provenance, the summary printed (json: as JSON);
 * `calib accept` runs it a draft format */
struct eval_accept_opts;
int cli_eval_accept(const struct eval_accept_opts *o, const char *out,
		    bool overwrite, bool json, json_t *prov);
/* The threads eval (and calib accept) take by default: every online CPU,
 * at most CLI_EVAL_THREADS_MAX (a window's forward is a batch; its linear
 * layers and attention split over them) */
#define CLI_EVAL_THREADS_MAX 256
long long cli_eval_threads(void);
int cli_bench(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_plan(int argc, char **argv);
int cli_calib(int argc, char **argv);
int cli_serve(int argc, char **argv);
int cli_edge(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_claims(int argc, char **argv);
int cli_gpu(int argc, char **argv);
int cli_plot(int argc, char **argv);
int cli_bench_kernels(int argc, char **argv); /* "bench kernels" */
int cli_bench_gpu(int argc, char **argv);     /* "bench gpu" */

/* v as JSON text on stdout, as jx_dumps writes it. */
void cli_print_json(const json_t *v);

/* opt_parse of a subcommand (argv[-1] its command's word, as cli_sub_run
 * passes it) or, for a command, of argv[0] on; with OPT_GO, *prov (new
 * reference) is the provenance of the command line as typed from that
 * word, before opt_parse moved its words. */
int cli_parse_prov(const struct opt_cmd *cmd, struct opt *rows, int *argc,
		   char **argv, json_t **prov);

/* Prints "hybridspec: <msg>" to stderr and returns CLI_BAD_INPUT. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cli_fail(msg), then, where file is another command's input (a config,
 * a sweep or a plan file, by its keys), which command reads it: cmd, the
 * command that failed, is "run", "sweep" or "plan". */
int cli_fail_file(const char *cmd, const char *file, const char *msg);
/* s as one word a shell reads back as s: itself where every byte is
 * safe, else single-quoted into buf (n bytes; cut to fit). For commands
 * a message offers to paste. */
const char *cli_sh_word(const char *s, char *buf, size_t n);

/* Prints each line of warnings (a config's; NULL: none) on stderr as
 * "hybridspec CMD: warning: LINE". */
void cli_warn(const char *cmd, const char *warnings);

/* Option rows that several commands share (opt.h), each defined once. */
#define CLI_OPT_SET(d) \
	OPT_LIST("set", 0, d, "POINTER=VALUE", \
		 "override a config value, e.g. --set /cloud/replicas=2\n" \
		 "(VALUE is read as JSON, else as a string)")
#define CLI_OPT_SEED(d, h) OPT_INT("seed", 0, d, "N", 0, LLONG_MAX, h)
#define CLI_OPT_TEMPERATURE(d, h) \
	OPT_PARSE("temperature", 0, d, "T", cli_parse_temperature, h)
#define CLI_OPT_JSON(d, h) OPT_FLAG("json", 0, d, h)
#define CLI_OPT_JOBS(d) \
	OPT_INT("jobs", 'j', d, "N", 1, 4096, \
		"worker processes (default: the online CPUs)")
#define CLI_OPT_QUIET(d) OPT_FLAG("quiet", 'q', d, "print nothing on success")
#define CLI_OPT_OVERWRITE(d) \
	OPT_FLAG("overwrite", 0, d, \
		 "replace the results in DIR if it holds some (never a\n" \
		 "file hybridspec did not write there)")
/* an output file (a profile, a table) that exists: replaced only with it,
 * and never one hybridspec did not write (jx_replaceable) */
#define CLI_OPT_OVERWRITE_FILE(d) \
	OPT_FLAG("overwrite", 0, d, \
		 "replace the output if it exists (never a file\n" \
		 "hybridspec did not write)")
#define CLI_OPT_GROUP(d, h) OPT_PARSE("group", 0, d, "G", cli_parse_group, h)
/* --block-acts, --decode-acts: int8 or fp16 into a bool (int8 true) */
#define CLI_OPT_ACTS(n, d, h) \
	OPT_PARSE(n, 0, d, "int8|fp16", cli_parse_acts, h)
#define CLI_OPT_QUANT(n, d, h) OPT_PARSE(n, 0, d, "Q", cli_parse_quant, h)
/* the CPU kernel set a command runs (const struct kern **; left alone:
 * the caller's default, kern_best) */
#define CLI_OPT_KERNEL(d) \
	OPT_PARSE("kernel", 0, d, "K", cli_parse_kernel, \
		  "CPU kernel set: one this build and CPU run, e.g. avx2\n" \
		  "for an AVX2-only machine (default: the best; hybridspec\n" \
		  "--version names it)")
/* threads of the kernels, 1 to max: 64 where a command times STREAM and the
 * peaks (kernels/kbench.c runs at most 64), 256 elsewhere */
#define CLI_OPT_THREADS(d, max, h) OPT_INT("threads", 0, d, "N", 1, max, h)
#define CLI_OPT_REPS(d, max, h) OPT_INT("reps", 0, d, "N", 1, max, h)
#define CLI_OPT_QUICK(d, h) OPT_FLAG("quick", 0, d, h)
/* eval accept's, which calib accept passes on */
#define CLI_OPT_GAMMA(d, h) OPT_INT("gamma", 0, d, "G", 0, 16, h)
#define CLI_OPT_PROMPTS(d, h) OPT_INT("prompts", 0, d, "N", 1, 100000, h)
#define CLI_OPT_WINDOW(d, h) OPT_INT("window", 0, d, "N", 0, 1 << 20, h)
#define CLI_OPT_WINDOWS(d) \
	OPT_INT("windows", 0, d, "W", 1, 1 << 30, \
		"only the first W windows (default: all)")
#define CLI_OPT_TEXT(d, h) OPT_STR("text", 0, d, "FILE", h)
/* the rows eval ppl, eval accept and calib accept take: the text, its
 * windows, the threads */
#define CLI_OPT_EVAL_TEXT(text, window, windows, threads) \
	CLI_OPT_TEXT(text, "the text (required)"), \
	CLI_OPT_WINDOW(window, "tokens a window, 2 to the model's context\n" \
		       "(default, or 0: the context, at most 4096)"), \
	CLI_OPT_WINDOWS(windows), \
	CLI_OPT_THREADS(threads, CLI_EVAL_THREADS_MAX, "the forward on N " \
			"threads (default: every\nonline CPU, at most 256)")
/* a model by name or path, its format another option's; a model with its
 * format, NAME[:Q] (mload_spec; the NAME[:Q] is kept, borrowed) */
#define CLI_OPT_MODEL(d, h) \
	OPT_PARSE("model", 0, d, "NAME|PATH", cli_parse_model, h)
#define CLI_OPT_MODEL_SPEC(n, d, h) \
	OPT_PARSE(n, 0, d, "NAME[:Q]", cli_parse_model_spec, h)
#define CLI_OPT_TOKEN_FILE(d) \
	OPT_STR("token-file", 0, d, "FILE", \
		"the shared secret, the file's first line\n" \
		"(default $HYBRIDSPEC_TOKEN, else none)")
#define CLI_OPT_LIBRARY(d) \
	OPT_STR("library", 0, d, "DIR", \
		"the device library (default $HYBRIDSPEC_DEVICES, else\n" \
		"results/calib/devices)")

/* OPT_KIND_PARSE functions: a group size (int *), 32, 64 or 128; int8
 * (true) or fp16 (false) (bool *); a weight format (struct quant *). */
int cli_parse_group(const char *arg, void *dest, char why[OPT_WHY_BYTES]);
int cli_parse_acts(const char *arg, void *dest, char why[OPT_WHY_BYTES]);
int cli_parse_quant(const char *arg, void *dest, char why[OPT_WHY_BYTES]);
/* a sampling temperature (double *): 0, greedy, or in [SPEC_TEMP_MIN,
 * SPEC_TEMP_MAX] */
int cli_parse_temperature(const char *arg, void *dest,
			  char why[OPT_WHY_BYTES]);
/* a kernel set this build and CPU run, by name (const struct kern **) */
int cli_parse_kernel(const char *arg, void *dest, char why[OPT_WHY_BYTES]);
/* NAME[:Q] with Q a weight format (const char **: the argument) */
int cli_parse_model_spec(const char *arg, void *dest, char why[OPT_WHY_BYTES]);
/* --model of a command with --quant (const char **): NAME or PATH; a
 * NAME:Q that is no file is refused with the --quant it means */
int cli_parse_model(const char *arg, void *dest, char why[OPT_WHY_BYTES]);

#endif
