/* cli_generate.c: "hybridspec generate": text from a real model, greedy or
 * sampled, so that one can see the model and its quantised forms work
 * (eval_generate). */
#include "cli.h"

#include "eval.h"

#include <stdio.h>

static const struct opt_cmd generate_cmd = {
	.name = "generate",
	.usage = "--model NAME|PATH [--quant Q] [--prompt TEXT]\n"
		 " [--steps N] [--temperature T] [--seed S] [--kernel K]",
	.about = "Generates text from a model (a llama2.c checkpoint, a GGUF file or a\n"
		 "folder with config.json: a path, or a name found in $HYBRIDSPEC_MODELS,\n"
		 "../shared/models or ~/.cache/hybridspec/models, e.g. stories260K or\n"
		 "smollm2-135m), its weights in\n"
		 "format Q (f32, f16, w8a16, w4a16[-g32|-g64|-g128][-sym|-asym], w4a4;\n"
		 "default f32). Greedy when T is 0 (the default). Stops at the end of\n"
		 "the sequence or after N tokens (default 256).\n",
	.exit_status = "0 done, 2 bad usage or bad input (a missing model, an\n"
		       "unknown format)",
	.required = { "model" },
};

int cli_generate(int argc, char **argv)
{
	struct eval_gen g = { .q = { LIN_F32, 128, Q4_SYM, false, false },
			      .prompt = "" };
	long long steps = 256, seed = 1;
	struct opt rows[] = {
		CLI_OPT_MODEL(&g.model, "the model (required)"),
		CLI_OPT_QUANT("quant", &g.q, "its weights' format (default f32)"),
		OPT_STR("prompt", 0, &g.prompt, "TEXT",
			"the text to go on from (default none)"),
		OPT_INT("steps", 0, &steps, "N", 1, LLONG_MAX,
			"tokens at most, the prompt's included (default 256)"),
		CLI_OPT_TEMPERATURE(&g.temperature,
				    "sample at T; 0 (the default): greedy"),
		CLI_OPT_SEED(&seed, "the samples' seed (default 1)"),
		CLI_OPT_KERNEL(&g.kern),
		OPT_END,
	};
	struct err e;
	int rc;

	if ((rc = opt_parse(&generate_cmd, rows, &argc, argv)) != OPT_GO)
		return rc;
	g.steps = steps;
	g.seed = (uint64_t)seed;
	if (eval_generate(&g, stdout, &e) < 0)
		return cli_fail("%s", e.msg);
	return CLI_OK;
}
