/* cli_eval.c: "hybridspec eval ppl" and "hybridspec eval accept". */
#include "cli.h"

#include "jx.h"

#include "kern.h"
#include "mload.h"
#include "rng.h"
#include "prov.h"
#include "spec.h"
#include "mem.h"
#include "fs.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_json(json_t *o)
{
	char *s = jx_dumps(o);

	fputs(s, stdout);
	free(s);
	json_decref(o);
}

static const char eval_help[] =
	"usage: hybridspec eval ppl --model NAME|PATH [--quant Q] --text FILE\n"
	"                           [--window N] [--windows W] [--score-from F]\n"
	"                           [--threads T] [--block-acts fp16|int8] [--json]\n"
	"       hybridspec eval accept --target NAME[:Q] --draft NAME:Q --text FILE\n"
	"                              [--gamma G] [--prompts N] [--temperature T]\n"
	"                              [--window N] [--windows W] [--threads T]\n"
	"                              [--seed S] [--out PROFILE] [--json]\n"
	"\n"
	"The text: with a tokenizer that adds a start token (stories260K,\n"
	"tinystories656K) each non-empty line is a document after it; without one\n"
	"(smollm2-135m) the whole file is one text (CR LF read as LF).\n"
	"ppl: perplexity over the text in windows of N tokens (default, or 0, the\n"
	"model's context, at most 4096), each from an empty cache; --windows W: only the\n"
	"first W windows; every token after a window's first is predicted (the\n"
	"GPTQ convention), or with --score-from F only those after position F\n"
	"(F = N/2 is llama.cpp's perplexity convention). --block-acts int8: a\n"
	"window's W4A16 layers quantise their activations to int8 a group (the\n"
	"integer path calib cpu's prefill takes by default); fp16 (default):\n"
	"exact FP16 activations.\n"
	"accept: teacher-forced along the text, the greedy agreement of draft and\n"
	"target (alpha_greedy) and the mean of sum min(p, q) (alpha_stochastic);\n"
	"then real greedy speculative decoding from N prompts cut from the text\n"
	"(default 16, 32 tokens each, 128 new tokens) for gamma = 1..G (default\n"
	"8; 0: none, only the teacher-forced measures): tokens committed per\n"
	"verification of a whole block (the last block\n"
	"of a run, cut short, is left out); greedy verification, or rejection\n"
	"sampling at temperature T > 0. --out writes PROFILE (JSON) and\n"
	"PROFILE.bits, the accept/reject bits the simulator's trace model replays.\n"
	"--threads T: the linear layers on T threads (default 1).\n"
	"\nexit status: 0 done, 2 bad usage or bad input (a missing model or\n"
	"text, a file that cannot be written)\n";

/* The options both commands take: the windows and the threads. */
struct evwin {
	long long win, windows, threads;
};

enum { OPT_WINDOW = 512, OPT_WINDOWS, OPT_THREADS, OPT_FROM };

#define EVWIN_OPTIONS                                                   \
	{ "window", required_argument, NULL, OPT_WINDOW },              \
	{ "windows", required_argument, NULL, OPT_WINDOWS },            \
	{ "threads", required_argument, NULL, OPT_THREADS }

/* 1 if ch was one of them, -1 on a bad value, 0 if not one */
static int evwin_opt(struct evwin *w, int ch)
{
	switch (ch) {
	case OPT_WINDOW:
		return cli_long("--window", optarg, 0, 1 << 20, &w->win) ? -1 : 1;
	case OPT_WINDOWS:
		return cli_long("--windows", optarg, 1, 1 << 30, &w->windows) ? -1 : 1;
	case OPT_THREADS:
		return cli_long("--threads", optarg, 1, 256, &w->threads) ? -1 : 1;
	}
	return 0;
}

/* The window in use, and n cut to the first --windows of them. */
static int evwin_apply(const struct evwin *w, const struct llama *m, int *n)
{
	int win = spec_window(m, (int)w->win);

	if (w->windows && (long long)*n > w->windows * win)
		*n = (int)(w->windows * win);
	return win;
}

static int eval_ppl(int argc, char **argv)
{
	static const struct option opts[] = {
		EVWIN_OPTIONS,
		{ "score-from", required_argument, NULL, OPT_FROM },
		{ "block-acts", required_argument, NULL, 'a' },
		{ "model", required_argument, NULL, 'm' },
		{ "quant", required_argument, NULL, 'q' },
		{ "text", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *model = NULL, *text = NULL, *qs = "f32";
	struct quant q;
	struct llama m;
	struct tok t;
	struct err e;
	struct evwin w = { 0, 0, 1 };
	struct kpool *pool;
	int json = 0, ch, n, win, k;
	int *toks;
	const char *acts;
	long count;
	long long from = 0;
	double ppl;
	char qn[32];
	bool int8 = false;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if ((k = evwin_opt(&w, ch)) < 0)
			return CLI_BAD_INPUT;
		if (k)
			continue;
		switch (ch) {
		case OPT_FROM:
			if (cli_long("--score-from", optarg, 0, 1 << 20, &from))
				return CLI_BAD_INPUT;
			break;
		case 'a':
			if (cli_block_acts(optarg, &int8))
				return CLI_BAD_INPUT;
			break;
		case 'm':
			model = optarg;
			break;
		case 'q':
			qs = optarg;
			break;
		case 't':
			text = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(eval_help, stdout);
			return CLI_OK;
		default:
			fputs(eval_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (!model || !text || optind != argc) {
		fputs(eval_help, stderr);
		return CLI_BAD_INPUT;
	}
	if (quant_parse(qs, &q, &e) < 0 || mload(model, &q, &m, &t, &e) < 0)
		return cli_fail("%s", e.msg);
	if (!(toks = tok_encode_file(&t, text, &n, &e))) {
		tok_release(&t);
		llama_release(&m);
		return cli_fail("%s", e.msg);
	}
	win = evwin_apply(&w, &m, &n);
	if (from >= win - 1) {
		free(toks);
		tok_release(&t);
		llama_release(&m);
		return cli_fail("--score-from %lld: expected less than the window "
				"less one (%d)", from, win - 1);
	}
	pool = kern_pool_new((int)w.threads);
	m.pool = pool;
	m.int8_batches = int8;
	llama_pack_a8(&m);
	acts = llama_block_acts(&m);
	if (int8 && strcmp(acts, "int8"))
		fprintf(stderr, "eval: --block-acts int8 has no effect: %s\n",
			m.kn->a8_run ? "the layers are not W4A16" :
				      "this kernel set has no integer path");
	ppl = spec_perplexity(&m, toks, n, win, (int)from, &count);
	kpool_free(pool);
	if (json)
		print_json(json_pack("{s:s,s:s,s:s,s:f,s:I,s:i,s:I,s:s}", "model",
				     model, "quant", quant_name(&q, qn), "text",
				     text, "ppl", ppl, "tokens", (json_int_t)count,
				     "window", win, "score_from", (json_int_t)from,
				     "block_activations", acts));
	else
		printf("%s %s on %s: perplexity %.4f over %ld tokens (windows of "
		       "%d, scored from position %lld; activations %s)\n", model,
		       quant_name(&q, qn), text, ppl, count, win, from, acts);
	free(toks);
	tok_release(&t);
	llama_release(&m);
	return CLI_OK;
}

/* PROFILE (JSON) and PROFILE minus ".json" plus ".bits", each written to a
 * temporary file first: the profile names its bits file relative to itself
 * (docs/calib.md). */
static int write_profile(const char *path, json_t *summary,
			 const struct spec_accept *a, int argc, char **argv,
			 struct err *e)
{
	char bits[4096];
	size_t n = strlen(path);
	const char *base;
	struct fs_atomic at;
	FILE *f;

	if (n > 5 && !strcmp(path + n - 5, ".json"))
		n -= 5;
	snprintf(bits, sizeof(bits), "%.*s.bits", (int)n, path);
	if (!(f = fs_atomic_open(&at, bits, e)))
		return -1;
	fprintf(f, "# greedy agreement of draft and target, one bit a position\n");
	for (long i = 0; i < a->positions; i++) {
		fputc('0' + a->bits[i], f);
		if (i % 64 == 63)
			fputc('\n', f);
	}
	fputc('\n', f);
	if (fs_atomic_commit(&at, e) < 0)
		return -1;
	base = strrchr(bits, '/');
	json_object_set_new(summary, "bits", json_string(base ? base + 1 : bits));
	json_object_set_new(summary, "provenance", prov_new(argc, argv));
	return jx_save(path, summary, e);
}

static int eval_accept(int argc, char **argv)
{
	static const struct option opts[] = {
		EVWIN_OPTIONS,
		{ "target", required_argument, NULL, 'T' },
		{ "draft", required_argument, NULL, 'D' },
		{ "text", required_argument, NULL, 't' },
		{ "gamma", required_argument, NULL, 'g' },
		{ "prompts", required_argument, NULL, 'p' },
		{ "out", required_argument, NULL, 'o' },
		{ "temperature", required_argument, NULL, 'T' + 256 },
		{ "seed", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *target = NULL, *draft = NULL, *text = NULL, *out = NULL;
	double temp = 0;
	long long seed = 1, v;
	gsl_rng *r;
	struct quant tq, dq;
	struct llama tm, dm;
	struct tok tt, dt;
	struct err e;
	struct spec_accept a;
	struct spec_burst burst;
	int json = 0, ch, n, gamma = 8, prompts = 16, *toks, rc = CLI_OK, win, k;
	struct evwin w = { 0, 0, 1 };
	struct kpool *pool = NULL;
	char tn[32], dn[32];
	json_t *per_gamma, *summary;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if ((k = evwin_opt(&w, ch)) < 0)
			return CLI_BAD_INPUT;
		if (k)
			continue;
		switch (ch) {
		case 'T':
			target = optarg;
			break;
		case 'D':
			draft = optarg;
			break;
		case 't':
			text = optarg;
			break;
		case 'g':
			if (cli_long("--gamma", optarg, 0, 16, &v))
				return CLI_BAD_INPUT;
			gamma = (int)v;
			break;
		case 'p':
			if (cli_long("--prompts", optarg, 1, 100000, &v))
				return CLI_BAD_INPUT;
			prompts = (int)v;
			break;
		case 'o':
			out = optarg;
			break;
		case 'T' + 256:
			if (cli_double("--temperature", optarg, 0, &temp))
				return CLI_BAD_INPUT;
			break;
		case 's':
			if (cli_long("--seed", optarg, 0, LLONG_MAX, &seed))
				return CLI_BAD_INPUT;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(eval_help, stdout);
			return CLI_OK;
		default:
			fputs(eval_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (!target || !draft || !text || optind != argc) {
		fputs(eval_help, stderr);
		return CLI_BAD_INPUT;
	}
	if (mload_spec(target, "f32", &tm, &tt, &tq, &e) < 0)
		return cli_fail("%s", e.msg);
	if (mload_spec(draft, "w4a16", &dm, &dt, &dq, &e) < 0) {
		tok_release(&tt);
		llama_release(&tm);
		return cli_fail("%s", e.msg);
	}
	if (dm.c.vocab != tm.c.vocab) {
		rc = cli_fail("draft vocabulary %d differs from the target's %d",
			      dm.c.vocab, tm.c.vocab);
		goto done;
	}
	if (!(toks = tok_encode_file(&tt, text, &n, &e))) {
		rc = cli_fail("%s", e.msg);
		goto done;
	}
	win = evwin_apply(&w, &tm, &n);
	pool = kern_pool_new((int)w.threads);
	tm.pool = dm.pool = pool;
	spec_teacher_forced(&tm, &dm, toks, n, win, &a);
	r = rng_new((uint64_t)seed, rng_stream_id("eval/accept"));
	per_gamma = json_object();
	for (int g = 1; g <= gamma; g++) {
		const int plen = 32, steps = 128;
		struct spec_stats ss = { 0 };
		int *o = xmalloc(sizeof(int) * steps);
		char key[16];

		if (plen + steps + g + 1 > tm.c.seq_len)
			break;
		for (int p = 0; p < prompts; p++) {
			int at = (int)((long)(n - plen) * p / prompts);

			if (temp > 0)
				spec_decode_sample(&tm, &dm, toks + at, plen, steps, g,
						   (float)temp, r, o, &ss);
			else
				spec_decode_greedy(&tm, &dm, toks + at, plen, steps,
						   g, o, &ss);
		}
		free(o);
		snprintf(key, sizeof(key), "%d", g);
		json_object_set_new(per_gamma, key,
				    json_real((double)ss.full_tokens / ss.full_blocks));
	}
	rng_free(r);
	summary = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:f,s:f,s:f,s:f,s:f,s:o}",
			    "kind", "acceptance", "target", target, "draft", draft,
			    "target_quant", quant_name(&tq, tn),
			    "text", text, "tokens", (json_int_t)a.positions,
			    "ppl", a.ppl_target, "ppl_draft", a.ppl_draft,
			    "alpha_greedy", a.alpha_greedy,
			    "alpha_stochastic", a.alpha_stochastic,
			    "temperature", temp,
			    "mean_accepted_per_gamma", per_gamma);
	json_object_set_new(summary, "window", json_integer(win));
	spec_burst(a.bits, a.positions, &burst);
	json_object_set_new(summary, "burst", json_pack(
		"{s:f,s:f,s:f,s:f,s:I}", "p_accept_after_accept",
		burst.p_after_accept, "p_accept_after_reject", burst.p_after_reject,
		"mean_accept_run", burst.mean_run, "iid_mean_accept_run",
		isfinite(burst.iid_mean_run) ? burst.iid_mean_run : 0.0,
		"accept_runs", (json_int_t)burst.runs));
	json_object_set_new(summary, "draft_quant",
			    json_string(quant_name(&dq, dn)));
	/* argv[-1] is "eval": cli_eval passes its own argv + 1 */
	if (out && write_profile(out, summary, &a, argc + 1, argv - 1, &e) < 0)
		rc = cli_fail("%s", e.msg);
	if (json) {
		print_json(summary);
	} else {
		printf("target %s (%s), draft %s (%s), %ld positions of %s\n"
		       "perplexity: target %.4f, draft %.4f\n"
		       "alpha greedy %.4f, alpha stochastic %.4f\n"
		       "bursts: P(accept | accept) %.4f, P(accept | reject) %.4f, "
		       "mean run of accepts %.3f (iid %.3f)\n"
		       "tokens per verification (%s speculative decoding):",
		       target, tn, draft, dn, a.positions, text, a.ppl_target,
		       a.ppl_draft, a.alpha_greedy, a.alpha_stochastic,
		       burst.p_after_accept, burst.p_after_reject, burst.mean_run,
		       burst.iid_mean_run,
		       temp > 0 ? "sampled" : "greedy");
		for (int g = 1; g <= gamma; g++) {
			char key[16];
			json_t *ea;

			snprintf(key, sizeof(key), "%d", g);
			if ((ea = json_object_get(per_gamma, key)))
				printf(" g%d %.3f", g, json_real_value(ea));
		}
		printf("\n");
		json_decref(summary);
	}
	free(a.bits);
	free(toks);
done:
	kpool_free(pool);
	tok_release(&dt);
	llama_release(&dm);
	tok_release(&tt);
	llama_release(&tm);
	return rc;
}

int cli_eval(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "ppl"))
		return eval_ppl(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "accept"))
		return eval_accept(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(eval_help, stdout);
		return CLI_OK;
	}
	fputs(eval_help, stderr);
	return CLI_BAD_INPUT;
}
