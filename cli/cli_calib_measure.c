/* cli_calib_measure.c: the calib subcommands that time this machine:
 * "calib cpu" (calib_cpu_profile), "calib gpu" (calib_gpu_table) and
 * "calib check" (check_run). A list option (--ctx, --prefill, --tokens)
 * is a struct counts: its row's limit and default set by the command,
 * then the values given, increasing, in [1, max], and a 0 after them. */
#include "ccpu.h"
#include "cgpu.h"
#include "gpu.h"
#include "check.h"

#include "cli.h"
#include "cli_calib.h"
#include "fs.h"
#include "jx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A list's value: increasing integers in [1, max], 0-terminated */
struct counts {
	int max;
	int v[CALIB_MAX_POINTS];
};

/* "16,32,64" into a struct counts */
static int parse_counts(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	struct counts *c = dest;
	const char *p = arg;
	int n = 0;

	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < 1 || v > c->max || n == CALIB_MAX_POINTS - 1 ||
		    (*end && *end != ',') || (n && v <= c->v[n - 1]))
			break;
		c->v[n++] = (int)v;
		p = *end ? end + 1 : end;
	}
	c->v[n] = 0;
	if (!*p && n)
		return 0;
	snprintf(why, OPT_WHY_BYTES, "expected at most %d increasing integers in "
		 "[1, %d] separated by commas, got \"%s\"", CALIB_MAX_POINTS - 1,
		 c->max, arg);
	return -1;
}

/* Says so where --opt int8 was asked for and not had (the profile v's
 * key names other activations): the kernel set has no integer path, or
 * the layers are not W4A16 */
static void int8_lost(const json_t *v, const struct opt *rows,
		      const char *opt, bool int8, const char *key,
		      const char *what)
{
	const char *acts = json_string_value(json_object_get(v, key));

	if (v && opt_given(rows, opt) && int8 && acts && strcmp(acts, "int8"))
		fprintf(stderr, "calib: --%s int8: the %s took %s activations "
			"(kernel set %s, weights %s)\n", opt, what, acts,
			json_string_value(json_object_get(v, "kernel")),
			json_string_value(json_object_get(v, "quant")));
}

static const struct opt_cmd cpu_cmd = {
	.name = "calib cpu",
	.usage = "(--model NAME|PATH | --shape SHAPE) [--quant Q]\n"
		 " [--threads N] [--device NAME] [--ctx LIST]\n"
		 " [--prefill LIST] [--reps N] [--verify FILE]\n"
		 " [--block-acts int8|fp16] [--decode-acts int8|fp16]\n"
		 " [--kernel K] [-o PROFILE] [--overwrite]",
	.about = "Times the real draft forward (the project's kernels) on this CPU: one\n"
		 "draft step at each context of --ctx and prompt prefills of each length\n"
		 "of --prefill, beside STREAM bandwidth, the FMA peak and the int8 peak of\n"
		 "the kernel set's integer instruction (0 where none is timed) measured in\n"
		 "the same run; fits draft_base_s + draft_per_ctx_s * ctx and\n"
		 "prefill_base_s + prefill_per_token_s * n and prints the residuals.\n"
		 "--shape times synthetic weights of a shape: a name (llama2-7b, ...), a\n"
		 "Hugging Face config.json (or its folder) or a GGUF file (its metadata\n"
		 "only); dense models. --block-acts: how W4A16 layers take blocks of 4 or\n"
		 "more tokens (prefill, verification): int8 (default where the kernel set\n"
		 "has an integer path: activations quantised to int8 a group, as\n"
		 "llama.cpp's products do) or fp16 (W4A16's exact FP16 activations);\n"
		 "--decode-acts: how they take a draft step's token and blocks of 1 to 3\n"
		 "tokens (default fp16; int8 as llama.cpp decodes). The profile says which\n"
		 "(prefill_activations, decode_activations). --verify FILE also writes a\n"
		 "verify-cost table (block forwards of 1, 2, 4, 8, 16 tokens) the\n"
		 "simulator reads as cloud/gpu/table.\n",
	.exit_status = CLI_CALIB_EXIT,
};

int cli_calib_cpu(int argc, char **argv)
{
	struct calib_cpu_job j = { .int8_blocks = true };
	struct counts ctx = { 1 << 20, { 16, 32, 64, 128, 256, 512, 1024, 2048 } },
		      pre = { 1 << 20, { 16, 32, 64, 128 } };
	const char *out = NULL, *verify_path = NULL;
	long long threads = 2, reps = 3;
	bool overwrite = false;
	struct quant q;
	struct opt rows[] = {
		CLI_OPT_MODEL(&j.model, "a trained model, by name or path"),
		OPT_STR("shape", 0, &j.shape, "SHAPE", "synthetic weights of a shape (above)"),
		CLI_OPT_QUANT("quant", &q, "the weight format (default w4a16)"),
		CLI_OPT_THREADS(&threads, 64, "threads, 1 to 64 (default 2)"),
		OPT_STR("device", 0, &j.device, "NAME",
			"the profile's device (default: this host's name)"),
		OPT_PARSE("ctx", 0, &ctx, "LIST", parse_counts,
			  "contexts of the draft steps, increasing, each at most\n"
			  "1048576 (default 16,32,...,2048, capped by the model's\n"
			  "seq_len)"),
		OPT_PARSE("prefill", 0, &pre, "LIST", parse_counts,
			  "prompt lengths of the prefills, increasing, each at\n"
			  "most 1048576 (default 16,32,64,128)"),
		CLI_OPT_REPS(&reps, 1000, "timed runs a point, 1 to 1000 (default 3), and\n"
			     "runs for at least 0.1 s"),
		OPT_STR("verify", 0, &verify_path, "FILE",
			"also write the verify-cost table to FILE"),
		CLI_OPT_ACTS("block-acts", &j.int8_blocks, "how W4A16 layers take "
			     "blocks of 4+ tokens\n(default int8)"),
		CLI_OPT_ACTS("decode-acts", &j.int8_decode, "how W4A16 layers take a "
			     "draft step's token and\nblocks of 1-3 tokens "
			     "(default fp16)"),
		CLI_OPT_KERNEL(&j.kern),
		OPT_STR("out", 'o', &out, "PROFILE", "write the profile to PROFILE "
			"(default: stdout)"),
		CLI_OPT_OVERWRITE_FILE(&overwrite),
		OPT_END,
	};
	json_t *prov, *verify;
	char qn[32];
	struct err e;
	int rc;

	if ((rc = cli_parse_prov(&cpu_cmd, rows, &argc, argv, &prov)) != OPT_GO)
		return rc;
	j.quant = opt_given(rows, "quant") ? mload_quant_name(&q, qn) : "w4a16";
	j.threads = (int)threads;
	j.ctx = ctx.v;
	j.prefill = pre.v;
	j.reps = (int)reps;
	j.verify = verify_path != NULL;
	if (!j.model == !j.shape)
		rc = opt_fail(&cpu_cmd, "give --model or --shape (one of them)");
	else if (!ctx.v[1] || !pre.v[1]) /* before minutes of loading */
		rc = opt_fail(&cpu_cmd, "expected two contexts (--ctx) and two "
			      "prefill lengths (--prefill) at least, got %d and "
			      "%d: a line is fitted to each", ctx.v[1] ? 2 : 1,
			      pre.v[1] ? 2 : 1);
	else if (out && verify_path && fs_same_file(out, verify_path))
		rc = opt_fail(&cpu_cmd, "-o and --verify name one file");
	else if ((out && jx_replaceable(out, NULL, NULL, overwrite, &e) < 0) ||
		 (verify_path &&
		  jx_replaceable(verify_path, NULL, NULL, overwrite, &e) < 0))
		rc = cli_fail("%s", e.msg); /* before minutes of measuring */
	else {
		json_t *v = calib_cpu_profile(&j, prov, &verify, &e);

		int8_lost(v, rows, "block-acts", j.int8_blocks,
			  "prefill_activations", "prefill");
		int8_lost(v, rows, "decode-acts", j.int8_decode,
			  "decode_activations", "draft steps");
		rc = cli_calib_emit(v, &e, out, overwrite);
		if (rc == CLI_OK && verify)
			rc = cli_calib_emit(verify, &e, verify_path, overwrite);
		else
			json_decref(verify);
	}
	json_decref(prov);
	return rc;
}

static const struct opt_cmd gpu_cmd = {
	.name = "calib gpu",
	.usage = "[--model SHAPE] [--quant f16|w4a16[-gG]]\n"
		 " [--tokens LIST] [--ctx LIST] [--reps N] [-o TABLE] [--overwrite]\n"
		 "--roofline [--gpu PRESET] [--model SHAPE] [-o TABLE] [--overwrite]",
	.about = "The verify-cost table of GPU 0 for a model shape (default llama2-7b,\n"
		 "FP16 through cuBLAS; w4a16 through the project's kernel): whole\n"
		 "forwards of batches of ceil(t / 5) verify blocks for t in --tokens\n"
		 "(default 1,2,4,...,512) at each context of --ctx (default\n"
		 "128,256,512,1024,2048), median of --reps (20) runs; to -o, default\n"
		 "results/calib/verify-GPU-SHAPE-QUANT.json. --roofline: no GPU needed:\n"
		 "the roofline of a preset (--gpu, default H100-SXM; `gpu compare\n"
		 "--help` lists them) from datasheet constants, marked uncalibrated, on\n"
		 "its own grid (tokens 1 to 4096, contexts 128 to 4096); to -o, default\n"
		 "standard output. An existing TABLE is replaced only with --overwrite,\n"
		 "checked before the GPU is timed.\n",
	.exit_status = CLI_CALIB_EXIT,
	/* the roofline's grid is fixed and its quant FP16 */
	.conflicts = { { "roofline", "quant" }, { "roofline", "tokens" },
		       { "roofline", "ctx" }, { "roofline", "reps" } },
};

int cli_calib_gpu(int argc, char **argv)
{
	struct counts tokens = { 4096, { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512 } },
		      ctx = { 1 << 17, { 128, 256, 512, 1024, 2048 } };
	struct calib_gpu_opts o = { .model = "llama2-7b", .quant = "f16",
				    .tokens = tokens.v, .ctx = ctx.v,
				    .progress = true };
	const char *gpu = NULL;
	long long reps = 20;
	bool roofline = false;
	struct opt rows[] = {
		OPT_STR("model", 0, &o.model, "SHAPE", "the model's shape (default llama2-7b)"),
		OPT_STR("quant", 0, &o.quant, "f16|w4a16[-gG]",
			"the linear layers: FP16 through cuBLAS (default) or\n"
			"W4A16 through the project's kernel"),
		OPT_PARSE("tokens", 0, &tokens, "LIST", parse_counts,
			  "tokens of a batch, increasing, each at most 4096\n"
			  "(default 1,2,4,...,512)"),
		OPT_PARSE("ctx", 0, &ctx, "LIST", parse_counts,
			  "contexts, increasing, each at most 131072 (default\n"
			  "128,256,512,1024,2048)"),
		CLI_OPT_REPS(&reps, 100000, "timed runs a point, 1 to 100000, the median\n"
			     "kept (default 20)"),
		OPT_FLAG("roofline", 0, &roofline,
			 "the uncalibrated roofline of a preset; no GPU needed"),
		OPT_STR("gpu", 0, &gpu, "PRESET",
			"the roofline's GPU preset (default H100-SXM)"),
		OPT_STR("out", 'o', &o.out, "TABLE", "write the table to TABLE"),
		CLI_OPT_OVERWRITE_FILE(&o.overwrite),
		OPT_END,
	};
	char path[CALIB_PATH_BYTES];
	json_t *prov, *t;
	struct err e;
	int rc;

	if ((rc = cli_parse_prov(&gpu_cmd, rows, &argc, argv, &prov)) != OPT_GO)
		return rc;
	o.reps = (int)reps;
	if (!roofline && gpu)
		rc = opt_fail(&gpu_cmd, "--gpu names a preset for --roofline; a "
			      "measurement is of GPU 0");
	else {
		t = calib_gpu_table(&o, roofline ? (gpu ? gpu : GPU_PRESET_DEFAULT)
					       : NULL,
				    prov, path, &e);
		rc = cli_calib_emit(t, &e, *path ? path : NULL, o.overwrite);
	}
	json_decref(prov);
	return rc;
}

static const struct opt_cmd check_cmd = {
	.name = "calib check",
	.usage = "[--draft NAME[:Q]] [--target NAME[:Q]] [--text FILE]\n"
		 " [--threads N] [--quick] [--json]",
	.about = "The simulator with profiles measured here against the real models\n"
		 "(default draft stories260K W4A16, target stories260K FP32): time per\n"
		 "token within 5%, verify blocks within 10% (--quick: fewer\n"
		 "repetitions, 50%).\n",
	.exit_status = "0 every check within its bound, 1 a check missed its bound,\n"
		       "2 bad usage or bad input (a missing model, a bad file)",
};

int cli_calib_check(int argc, char **argv)
{
	struct check_opts o = { 0 };
	const char *draft = "stories260K:w4a16", *target = "stories260K:f32";
	long long threads = 1;
	bool json = false;
	struct opt rows[] = {
		CLI_OPT_MODEL_SPEC("draft", &draft, "the edge's model and its weight "
				   "format\n(default stories260K:w4a16; Q default "
				   "w4a16)"),
		CLI_OPT_MODEL_SPEC("target", &target, "the verifier's model (default "
				   "stories260K:f32;\nQ default f32)"),
		CLI_OPT_TEXT(&o.text, "the prompts' text (default the TinyStories\n"
			     "excerpt of the data folder)"),
		CLI_OPT_THREADS(&threads, 64, "threads, 1 to 64 (default 1)"),
		CLI_OPT_QUICK(&o.quick, "fewer repetitions, bounds of 50%"),
		CLI_OPT_JSON(&json, "{\"checks\": [{\"name\", \"predicted_s\", "
			     "\"measured_s\",\n\"rel_error\", \"bound\", \"pass\"}]}"),
		OPT_END,
	};
	json_t *prov;
	struct check k;
	struct err e;
	char dname[1024], tname[1024];
	int rc;

	if ((rc = cli_parse_prov(&check_cmd, rows, &argc, argv, &prov)) != OPT_GO)
		return rc;
	if (mload_spec_split(draft, "w4a16", dname, sizeof(dname),
			     &o.draft_quant, &e) < 0 ||
	    mload_spec_split(target, "f32", tname, sizeof(tname),
			     &o.target_quant, &e) < 0) {
		json_decref(prov);
		return cli_fail("calib check: %s", e.msg);
	}
	o.draft = dname;
	o.target = tname;
	o.threads = (int)threads;
	o.progress = !json && isatty(2);
	rc = check_run(&k, &o, prov, &e);
	json_decref(prov);
	if (rc < 0)
		return cli_fail("%s", e.msg);
	return check_print(&k, json, stdout) ? CLI_FAILED : CLI_OK;
}
