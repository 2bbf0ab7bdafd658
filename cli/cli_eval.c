/* cli_eval.c: "hybridspec eval ppl" and "hybridspec eval accept", the
 * command lines of eval_ppl and eval_accept (models/eval.h), dispatched
 * by a table of the two. */
#include "cli.h"
#include "cli_sub.h"

#include "eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVAL_TEXT \
	"The text: with a tokenizer that adds a start token (stories260K,\n" \
	"tinystories656K) each non-empty line is a document after it; without one\n" \
	"(smollm2-135m) the whole file is one text (CR LF read as LF).\n"
#define EVAL_EXIT \
	"0 done, 2 bad usage or bad input (a missing model or\n" \
	"text)"
#define EVAL_EXIT_OUT \
	"0 done, 2 bad usage or bad input (a missing model or\n" \
	"text, a profile that cannot be written)"

long long cli_eval_threads(void)
{
	int n = kpool_cpus();

	return n > CLI_EVAL_THREADS_MAX ? CLI_EVAL_THREADS_MAX : n;
}

static const struct opt_cmd ppl_cmd = {
	.name = "eval ppl",
	.usage = "--model NAME|PATH [--quant Q] --text FILE\n"
		 " [--window N] [--windows W] [--score-from F]\n"
		 " [--threads N] [--block-acts fp16|int8] [--kernel K]\n"
		 " [--json]",
	.about = EVAL_TEXT "\n"
		 "Perplexity over the text in windows of N tokens, each from an empty\n"
		 "cache; every token after a window's first is predicted (the GPTQ\n"
		 "convention), or with --score-from F only those after position F (F =\n"
		 "N/2 is llama.cpp's perplexity convention). --block-acts int8: a\n"
		 "window's W4A16 layers quantise their activations to int8 a group (the\n"
		 "integer path calib cpu's prefill takes by default); fp16 (default):\n"
		 "exact FP16 activations.\n",
	.exit_status = EVAL_EXIT,
	.required = { "model", "text" },
};

static const struct opt_cmd accept_cmd = {
	.name = "eval accept",
	.usage = "--target NAME[:Q] --draft NAME[:Q] --text FILE\n"
		 " [--gamma G] [--prompts N] [--temperature T]\n"
		 " [--window N] [--windows W] [--threads N]\n"
		 " [--seed S] [--kernel K] [-o PROFILE [--overwrite]] [--json]",
	.about = EVAL_TEXT "\n"
		 "Teacher-forced along the text, the greedy agreement of draft and\n"
		 "target (alpha_greedy) and the mean of sum min(p, q) (alpha_stochastic);\n"
		 "then real greedy speculative decoding from N prompts cut from the text\n"
		 "(32 tokens each, 128 new tokens) for gamma = 1..G: tokens committed per\n"
		 "verification of a whole block (the last block of a run, cut short, is\n"
		 "left out); greedy verification, or rejection sampling at temperature\n"
		 "T > 0. --out writes PROFILE (JSON) and PROFILE.bits (P.bits for\n"
		 "P.json), the accept/reject bits the simulator's trace model replays.\n",
	.exit_status = EVAL_EXIT_OUT,
	.required = { "target", "draft", "text" },
};

static int ppl_sub(int argc, char **argv)
{
	struct eval_ppl_opts o = { .q = { LIN_F32, 128, Q4_SYM, false, false } };
	long long window = 0, windows = 0, from = 0, threads = cli_eval_threads();
	bool json = false;
	struct opt rows[] = {
		CLI_OPT_MODEL(&o.model, "the model (required)"),
		CLI_OPT_QUANT("quant", &o.q, "its weights' format (default f32)"),
		CLI_OPT_EVAL_TEXT(&o.text, &window, &windows, &threads),
		OPT_INT("score-from", 0, &from, "F", 0, 1 << 20,
			"score only the tokens after position F of a window\n"
			"(default 0: every one after the first)"),
		CLI_OPT_ACTS("block-acts", &o.int8, "how W4A16 layers take a "
			     "window's\nactivations (default fp16)"),
		CLI_OPT_KERNEL(&o.kern),
		CLI_OPT_JSON(&json, "print the result as JSON"),
		OPT_END,
	};
	struct eval_ppl r;
	struct err e;
	char qn[32];
	int rc;

	if ((rc = opt_parse(&ppl_cmd, rows, &argc, argv)) != OPT_GO)
		return rc;
	o.window = (int)window;
	o.windows = windows;
	o.score_from = (int)from;
	o.threads = (int)threads;
	if (eval_ppl(&o, &r, &e) < 0)
		return cli_fail("%s", e.msg);
	if (r.int8_lost)
		fprintf(stderr, "eval: --block-acts int8 has no effect: %s\n",
			r.int8_lost);
	mload_quant_name(&o.q, qn);
	if (json) {
		json_t *j = json_pack("{s:s,s:s,s:s,s:f,s:I,s:i,s:I,s:s}", "model",
				      o.model, "quant", qn, "text", o.text, "ppl",
				      r.ppl, "tokens", (json_int_t)r.count, "window",
				      r.window, "score_from", (json_int_t)from,
				      "block_activations", r.acts);

		cli_print_json(j);
		json_decref(j);
	} else {
		printf("%s %s on %s: perplexity %.4f over %ld tokens (windows of "
		       "%d, scored from position %lld; activations %s)\n", o.model,
		       qn, o.text, r.ppl, r.count, r.window, from, r.acts);
	}
	return CLI_OK;
}

/* v in fmt into buf (16 bytes), or "n/a" where it is not finite */
static void known(char buf[16], const char *fmt, double v)
{
	if (isfinite(v))
		snprintf(buf, 16, fmt, v);
	else
		snprintf(buf, 16, "n/a");
}

static void print_accept(const struct eval_accept_opts *o,
			 const struct eval_accept *r)
{
	const struct spec_burst *b = &r->burst;

	char aa[16], ar[16], iid[16];

	known(aa, "%.4f", b->p_after_accept);
	known(ar, "%.4f", b->p_after_reject);
	known(iid, "%.3f", b->iid_mean_run);
	printf("target %s (%s), draft %s (%s), %ld positions of %s\n"
	       "perplexity: target %.4f, draft %.4f\n"
	       "alpha greedy %.4f, alpha stochastic %.4f\n"
	       "bursts: P(accept | accept) %s, P(accept | reject) %s, "
	       "mean run of accepts %.3f (iid %s)\n",
	       o->target, r->target_quant, o->draft, r->draft_quant,
	       r->a.positions, o->text, r->a.ppl_target, r->a.ppl_draft,
	       r->a.alpha_greedy, r->a.alpha_stochastic, aa, ar, b->mean_run,
	       iid);
	if (!r->gammas) /* --gamma 0: no decoding */
		return;
	printf("tokens per verification (%s speculative decoding):",
	       o->temperature > 0 ? "sampled" : "greedy");
	for (int g = 0; g < r->gammas; g++)
		if (isfinite(r->per_gamma[g]))
			printf(" g%d %.3f", g + 1, r->per_gamma[g]);
	printf("\n");
}

int cli_eval_accept(const struct eval_accept_opts *o, const char *out,
		    bool overwrite, bool json, json_t *prov)
{
	struct eval_accept r;
	json_t *summary;
	struct err e;
	int rc = CLI_OK;

	if (out && eval_accept_writable(out, overwrite, &e) < 0)
		return cli_fail("%s", e.msg);
	if (eval_accept(o, &r, &e) < 0)
		return cli_fail("%s", e.msg);
	summary = eval_accept_json(o, &r);
	if (out && eval_accept_save(&r, summary, out, overwrite, prov, &e) < 0)
		rc = cli_fail("%s", e.msg);
	if (json)
		cli_print_json(summary);
	else
		print_accept(o, &r);
	json_decref(summary);
	eval_accept_release(&r);
	return rc;
}

static int accept_sub(int argc, char **argv)
{
	struct eval_accept_opts o = { 0 };
	long long window = 0, windows = 0, threads = cli_eval_threads(), gamma = 8,
		  prompts = 16, seed = 1;
	const char *out = NULL;
	bool json = false, overwrite = false;
	struct opt rows[] = {
		CLI_OPT_MODEL_SPEC("target", &o.target,
				   "the target (required; Q default f32)"),
		CLI_OPT_MODEL_SPEC("draft", &o.draft,
				   "the draft (required; Q default w4a16)"),
		CLI_OPT_EVAL_TEXT(&o.text, &window, &windows, &threads),
		CLI_OPT_GAMMA(&gamma, "decode with blocks of 1..G (default 8; 0: none,\n"
			      "only the teacher-forced measures)"),
		CLI_OPT_PROMPTS(&prompts, "prompts cut from the text (default 16)"),
		CLI_OPT_TEMPERATURE(&o.temperature, "verify by rejection sampling at T;\n"
				    "0 (the default): greedy verification"),
		CLI_OPT_SEED(&seed, "the samples' seed (default 1)"),
		CLI_OPT_KERNEL(&o.kern),
		OPT_STR("out", 'o', &out, "PROFILE", "write PROFILE and PROFILE.bits"),
		OPT_FLAG("overwrite", 0, &overwrite,
			 "replace PROFILE and its bits if they exist (never a\n"
			 "file hybridspec did not write)"),
		CLI_OPT_JSON(&json, "print the summary as JSON"),
		OPT_END,
	};
	json_t *prov = NULL;
	int rc = cli_parse_prov(&accept_cmd, rows, &argc, argv, &prov);

	if (rc == OPT_GO) {
		o.window = (int)window;
		o.windows = windows;
		o.threads = (int)threads;
		o.gamma = (int)gamma;
		o.prompts = (int)prompts;
		o.seed = (uint64_t)seed;
		rc = cli_eval_accept(&o, out, overwrite, json, prov);
	}
	json_decref(prov);
	return rc;
}

static const struct cli_sub eval_table[] = {
	{ "ppl", ppl_sub, "perplexity of a model over a text" },
	{ "accept", accept_sub,
	  "a draft's acceptance against its target; a profile" },
	{ NULL, NULL, NULL },
};

static const struct cli_subs eval_subs = {
	.name = "eval",
	.about = EVAL_TEXT,
	.exit_status = EVAL_EXIT,
	.subs = eval_table,
};

int cli_eval(int argc, char **argv)
{
	return cli_sub_run(&eval_subs, argc, argv);
}
