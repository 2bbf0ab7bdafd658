/* cli_generate.c: "hybridspec generate": text from a real model, greedy or
 * sampled, so that one can see the model and its quantised forms work. */
#include "cli.h"

#include "mload.h"
#include "rng.h"
#include "spec.h"
#include "mem.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char generate_help[] =
	"usage: hybridspec generate --model NAME|PATH [--quant Q] [--prompt TEXT]\n"
	"                           [--steps N] [--temperature T] [--seed S]\n"
	"\n"
	"Generates text from a llama2.c checkpoint (a path, or a name found in\n"
	"$HYBRIDSPEC_MODELS or ../shared/models, e.g. stories260K), its weights in\n"
	"format Q (f32, f16, w8a16, w4a16[-g32|-g64|-g128][-sym|-asym], w4a4;\n"
	"default f32). Greedy when T is 0 (the default). Stops at the end of\n"
	"the sequence or after N tokens (default 256).\n"
	"\nexit status: 0 done, 2 bad usage or bad input (a missing model, an\n"
	"unknown format)\n";

/* The index of the next token: arg max at t = 0, else a sample; p is
 * scratch of n doubles. */
static int pick(const float *logits, int n, float temp, double *p, gsl_rng *r)
{
	if (temp <= 0)
		return spec_argmax(logits, n);
	spec_softmax(logits, n, temp, p);
	return spec_sample(p, n, r);
}

int cli_generate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "quant", required_argument, NULL, 'q' },
		{ "prompt", required_argument, NULL, 'p' },
		{ "steps", required_argument, NULL, 'n' },
		{ "temperature", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *model = NULL, *prompt = "";
	struct quant q = { LIN_F32, 128, Q4_SYM, false, false };
	long long steps = 256, seed = 1;
	double temp = 0;
	struct llama m;
	struct llama_state st;
	struct tok t;
	struct err e;
	int *toks, ntok, pos = 0, prev, ch;
	float *logits;
	double *p;
	gsl_rng *r;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			model = optarg;
			break;
		case 'q':
			if (quant_parse(optarg, &q, &e) < 0)
				return cli_fail("%s", e.msg);
			break;
		case 'p':
			prompt = optarg;
			break;
		case 'n':
			if (cli_long("--steps", optarg, 1, LLONG_MAX, &steps))
				return CLI_BAD_INPUT;
			break;
		case 't':
			if (cli_double("--temperature", optarg, 0, &temp))
				return CLI_BAD_INPUT;
			break;
		case 's':
			if (cli_long("--seed", optarg, 0, LLONG_MAX, &seed))
				return CLI_BAD_INPUT;
			break;
		case 'h':
			fputs(generate_help, stdout);
			return CLI_OK;
		default:
			fputs(generate_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (!model || optind != argc) {
		fputs(generate_help, stderr);
		return CLI_BAD_INPUT;
	}
	if (mload(model, &q, &m, &t, &e) < 0)
		return cli_fail("%s", e.msg);
	toks = xmalloc(sizeof(int) * (strlen(prompt) + 3));
	ntok = tok_encode(&t, prompt, 1, 0, toks);
	if (ntok == 0) /* no prompt and no start token: begin from it anyway */
		toks[ntok++] = t.bos;
	llama_state_init(&st, &m.c, ntok);
	logits = xmalloc(sizeof(float) * (size_t)ntok * m.c.vocab);
	p = xmalloc(sizeof(double) * (size_t)m.c.vocab);
	r = rng_new((uint64_t)seed, rng_stream_id("generate"));
	if (steps > m.c.seq_len)
		steps = m.c.seq_len;
	/* the prompt in one block, then a token at a time */
	llama_forward(&m, &st, toks, ntok, 0, logits);
	pos = ntok;
	prev = toks[ntok - 1];
	for (int i = toks[0] == t.bos ? 1 : 0; i < ntok; i++)
		fputs(tok_decode(&t, i ? toks[i - 1] : -1, toks[i]), stdout);
	while (pos < steps) {
		const float *last = logits + (size_t)(pos == ntok ? ntok - 1 : 0) *
						     m.c.vocab;
		int next;

		memmove(logits, last, sizeof(float) * m.c.vocab);
		next = pick(logits, m.c.vocab, (float)temp, p, r);
		if (next == t.bos || next == t.eos)
			break;
		fputs(tok_decode(&t, prev, next), stdout);
		fflush(stdout);
		llama_forward(&m, &st, &next, 1, pos++, logits);
		prev = next;
	}
	putchar('\n');
	rng_free(r);
	free(logits);
	free(p);
	free(toks);
	llama_state_release(&st);
	tok_release(&t);
	llama_release(&m);
	return CLI_OK;
}
