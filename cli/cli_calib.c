/* cli_calib.c: "hybridspec calib cpu|derive|accept|gpu|check". Each
 * subcommand writes its profile with provenance through a temporary file,
 * so an interrupted run leaves nothing half-written. */
#include "calib.h"
#include "check.h"

#include "cli.h"
#include "jx.h"
#include "prof.h"
#include "prov.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char calib_help[] =
	"usage: hybridspec calib cpu    (--model NAME|PATH | --shape SHAPE) [--quant Q]\n"
	"                               [--threads N] [--device NAME] [--ctx LIST]\n"
	"                               [--prefill LIST] [--reps N] [--verify FILE]\n"
	"                               [--block-acts int8|fp16] [-o PROFILE]\n"
	"       hybridspec calib derive PROFILE --device NAME|FILE [--library DIR]\n"
	"                               [-o OUT]\n"
	"       hybridspec calib devices PROFILE [--library DIR]\n"
	"       hybridspec calib accept --target T --drafts Q1,Q2,... --text FILE\n"
	"                               [--gamma G] [--prompts N] [--window N]\n"
	"                               [--threads N] [-o DIR]\n"
	"       hybridspec calib gpu    [--model SHAPE] [--quant f16|w4a16[-gG]]\n"
	"                               [--tokens LIST] [--ctx LIST] [--reps N]\n"
	"                               [-o TABLE]\n"
	"       hybridspec calib gpu    --roofline [--gpu PRESET] [--model SHAPE]\n"
	"                               [-o TABLE]\n"
	"       hybridspec calib check  [--draft M] [--target M] [--text FILE]\n"
	"                               [--threads N] [--quick] [--json]\n"
	"\n"
	"cpu     times the real draft forward (the project's kernels) on this CPU:\n"
	"        one draft step at each context of LIST (default 16,32,...,2048,\n"
	"        capped by the model's seq_len) and prompt prefills (default\n"
	"        16,32,64,128), beside STREAM bandwidth and the FMA peak measured\n"
	"        in the same run; fits draft_base_s + draft_per_ctx_s * ctx and\n"
	"        prefill_base_s + prefill_per_token_s * n and prints the residuals.\n"
	"        --shape times synthetic weights of a shape: a name (llama2-7b, ...),\n"
	"        a Hugging Face config.json (or its folder) or a GGUF file (its\n"
	"        metadata only); dense models.\n"
	"        --block-acts: how W4A16 layers take blocks of 4 or more tokens\n"
	"        (prefill, verification): int8 (default where the kernel set has\n"
	"        an integer path: activations quantised to int8 a group, as\n"
	"        llama.cpp's prefill does) or fp16 (W4A16's exact FP16\n"
	"        activations). The profile says which (prefill_activations).\n"
	"        --verify FILE also writes a verify-cost table (block forwards of\n"
	"        1, 2, 4, 8, 16 tokens) the simulator reads as cloud/gpu/table.\n"
	"derive  a profile for a device that cannot be run here, from a measured\n"
	"        one: scaled by the ratios of bandwidth and of the peaks of the\n"
	"        arithmetic its prefill ran (the device file's datasheet figures),\n"
	"        then corrected by the llama.cpp CPU figures published for the\n"
	"        device, or by the median correction of the library's devices\n"
	"        (docs/calib.md); marked derived. A device is a name in the\n"
	"        library (--library, $HYBRIDSPEC_DEVICES, else results/calib/\n"
	"        devices) or a device file of your own.\n"
	"devices the library's published figures against what the derivation\n"
	"        from PROFILE predicts for them: the error of the datasheet alone,\n"
	"        of the device's own correction from its other figures, and of\n"
	"        the library's from the other devices.\n"
	"accept  runs `eval accept` for each draft format against the target and\n"
	"        writes DIR/accept-T-Q.json (alpha, E[A] per gamma) and its bits;\n"
	"        --window and --threads as eval's.\n"
	"gpu     the verify-cost table of GPU 0 for a model shape (default\n"
	"        llama2-7b, FP16 through cuBLAS; w4a16 through the project's\n"
	"        kernel): whole forwards of batches of ceil(t / 5) verify blocks\n"
	"        for t in --tokens (default 1,2,4,...,512) at each context of\n"
	"        --ctx (default 128,256,512,1024,2048), median of --reps (20)\n"
	"        runs; to -o, default results/calib/verify-GPU-SHAPE-QUANT.json.\n"
	"        --roofline: no GPU needed: the roofline of a preset (--gpu,\n"
	"        default H100-SXM) from datasheet constants, marked uncalibrated.\n"
	"check   the simulator with profiles measured here against the real models\n"
	"        (default draft stories260K W4A16, target stories260K FP32): time\n"
	"        per token within 5%, verify blocks within 10% (--quick: fewer\n"
	"        repetitions, 50%). Exit 1 if a check misses its bound.\n"
	"\nexit status: 0 done (check: every check within its bound), 1 a check\n"
	"missed its bound, 2 bad usage or bad input (a missing model, a bad file)\n";

/* The provenance of a subcommand: cli_calib passes its own argv + 1, so
 * argv[-1] is "calib". */
static json_t *calib_prov(int argc, char **argv)
{
	return prov_new(argc + 1, argv - 1);
}

/* "16,32,64" into a 0-terminated array of at most 63 values in [1, hi] */
static int parse_list(const char *name, const char *text, int hi, int *out)
{
	int n = 0;
	const char *p = text;

	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < 1 || v > hi || n == 63 ||
		    (*end && *end != ',') || (n && v <= out[n - 1])) {
			fprintf(stderr, "hybridspec: %s: expected increasing "
				"integers in [1, %d] separated by commas, got "
				"'%s'\n", name, hi, text);
			return CLI_BAD_INPUT;
		}
		out[n++] = (int)v;
		p = *end ? end + 1 : end;
	}
	out[n] = 0;
	return n ? 0 : (fprintf(stderr, "hybridspec: %s: empty list\n", name),
			CLI_BAD_INPUT);
}

/* Writes v to path, or to stdout without one. */
static int emit(const char *path, const json_t *v)
{
	struct err e;

	if (!path) {
		char *s = jx_dumps(v);

		fputs(s, stdout);
		free(s);
		return CLI_OK;
	}
	if (jx_save(path, v, &e) < 0)
		return cli_fail("%s", e.msg);
	fprintf(stderr, "calib: wrote %s\n", path);
	return CLI_OK;
}

static int calib_cpu_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "shape", required_argument, NULL, 's' },
		{ "quant", required_argument, NULL, 'q' },
		{ "threads", required_argument, NULL, 't' },
		{ "device", required_argument, NULL, 'd' },
		{ "ctx", required_argument, NULL, 'c' },
		{ "prefill", required_argument, NULL, 'p' },
		{ "reps", required_argument, NULL, 'r' },
		{ "verify", required_argument, NULL, 'v' },
		{ "block-acts", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const int verify_tokens[] = { 1, 2, 4, 8, 16, 0 };
	bool int8 = true;
	const char *model = NULL, *shape = NULL, *quant = "w4a16", *out = NULL,
		   *device = NULL, *verify_path = NULL;
	int ctx[64] = { 16, 32, 64, 128, 256, 512, 1024, 2048, 0 },
	    pre[64] = { 16, 32, 64, 128, 0 }, ch, nctx = 0;
	long long threads = 2, reps = 3;
	struct calib_cpu_opts co = { .min_s = 0.1, .progress = true };
	struct calib_model c;
	json_t *prov, *profile, *verify;
	char host[128] = "this machine";
	struct err e;
	int rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (ch) {
		case 'm':
			model = optarg;
			break;
		case 's':
			shape = optarg;
			break;
		case 'q':
			quant = optarg;
			break;
		case 't':
			if (cli_long("--threads", optarg, 1, 64, &threads))
				return CLI_BAD_INPUT;
			break;
		case 'd':
			device = optarg;
			break;
		case 'c':
			if (parse_list("--ctx", optarg, 1 << 20, ctx))
				return CLI_BAD_INPUT;
			break;
		case 'p':
			if (parse_list("--prefill", optarg, 1 << 20, pre))
				return CLI_BAD_INPUT;
			break;
		case 'r':
			if (cli_long("--reps", optarg, 1, 1000, &reps))
				return CLI_BAD_INPUT;
			break;
		case 'v':
			verify_path = optarg;
			break;
		case 'a':
			if (cli_block_acts(optarg, &int8))
				return CLI_BAD_INPUT;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(calib_help, stdout);
			return CLI_OK;
		default:
			fputs(calib_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc || !model == !shape)
		return cli_fail("calib cpu: give --model or --shape (one of "
				"them)");
	/* a synthetic model's cache only needs the largest context asked */
	while (ctx[nctx])
		nctx++;
	if (calib_model_init(&c, model, shape, quant, (int)threads,
			     ctx[nctx - 1] + 16, &e) < 0)
		return cli_fail("%s", e.msg);
	c.m.int8_batches = int8;
	llama_pack_a8(&c.m);
	/* contexts and prompts the model holds (a step at ctx needs ctx + 1
	 * positions, the verify table ctx + 16) */
	for (int i = 0; i < nctx; i++)
		if (ctx[i] + 16 > c.m.c.seq_len) {
			fprintf(stderr, "calib: %s holds %d positions: contexts "
				"from %d on left out\n", c.name, c.m.c.seq_len,
				ctx[i]);
			ctx[i] = 0;
			break;
		}
	for (int i = 0; pre[i]; i++)
		if (pre[i] > c.m.c.seq_len) {
			pre[i] = 0;
			break;
		}
	if (!ctx[0] || !ctx[1] || !pre[0]) {
		calib_model_release(&c);
		return cli_fail("calib cpu: %s holds too few positions for two "
				"contexts and a prefill", c.name);
	}
	co.ctx = ctx;
	co.prefill = pre;
	co.reps = (int)reps;
	co.verify_tokens = verify_path ? verify_tokens : NULL;
	prov = calib_prov(argc, argv);
	profile = calib_cpu(&c, &co, prov, &verify);
	if (!device) {
		gethostname(host, sizeof(host) - 1);
		device = host;
	}
	json_object_set_new(profile, "device", json_string(device));
	{
		json_t *fit = json_object_get(profile, "fit");
		double v[6];
		const char *k[] = { "draft_base_s", "draft_per_ctx_s",
			"prefill_base_s", "prefill_per_token_s",
			"draft_max_rel_residual", "prefill_max_rel_residual" };

		for (int i = 0; i < 6; i++)
			v[i] = json_number_value(json_object_get(fit, k[i]));
		fprintf(stderr, "calib: draft   %.4f ms + %.3f us x ctx "
			"(largest residual %.1f%%)\ncalib: prefill %.4f ms + "
			"%.4f ms x tokens (largest residual %.1f%%)\n",
			1e3 * v[0], 1e6 * v[1], 100 * v[4], 1e3 * v[2],
			1e3 * v[3], 100 * v[5]);
	}
	rc = emit(out, profile);
	if (rc == CLI_OK && verify)
		rc = emit(verify_path, verify);
	json_decref(verify);
	json_decref(profile);
	json_decref(prov);
	calib_model_release(&c);
	return rc;
}

/* Reads PROFILE strictly and then as JSON; NULL after the message */
static json_t *measured_profile(const char *path)
{
	struct prof_edge pe;
	struct err e;
	json_t *m;

	/* the strict reader first: a bad profile is named field by field */
	if (prof_edge_load(path, &pe, &e) < 0 || !(m = jx_load(path, &e))) {
		cli_fail("%s", e.msg);
		return NULL;
	}
	return m;
}

/* "+12.3%" or "-" for a NAN */
static const char *pct(double v, char buf[16])
{
	if (isnan(v))
		return "-";
	snprintf(buf, 16, "%+.0f%%", 100 * v);
	return buf;
}

/* d's figures against the derivation from measured, a line each */
static int print_errors(const json_t *measured, const char *path,
			const struct calib_device *d, const char *dir)
{
	struct calib_error er[CALIB_MAX_FIGURES];
	struct err e;
	int n = calib_device_errors(measured, path, d, dir, er, &e);

	if (n < 0)
		return cli_fail("%s", e.msg);
	for (int i = 0; i < n; i++) {
		char a[16], b[16], c[16], g[16];

		printf("%-22s %-14s %-7s %s %8.2f  datasheet %6s  own %6s  "
		       "library %6s  derived %6s  %s\n", d->name, er[i].fig->model,
		       er[i].fig->quant, er[i].fig->prefill ? "pp" : "tg",
		       er[i].fig->tokens_per_s, pct(er[i].datasheet, a),
		       pct(er[i].own, b), pct(er[i].library, c),
		       pct(er[i].derived, g), er[i].fig->source);
	}
	if (!n)
		printf("%-22s (no CPU figure: %s)\n", d->name,
		       json_string_value(json_object_get(d->doc, "why_not")));
	return CLI_OK;
}

static int calib_derive_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "library", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *device = NULL, *out = NULL, *dir = calib_device_dir();
	struct calib_device d;
	json_t *measured, *prov, *derived;
	struct err e;
	int ch, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			device = optarg;
			break;
		case 'l':
			dir = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(calib_help, stdout);
			return CLI_OK;
		default:
			fputs(calib_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind + 1 != argc || !device)
		return cli_fail("calib derive: give one PROFILE and --device");
	if (!(measured = measured_profile(argv[optind])))
		return CLI_BAD_INPUT;
	if (calib_device_load(&d, device, dir, &e) < 0) {
		json_decref(measured);
		return cli_fail("%s", e.msg);
	}
	prov = calib_prov(argc, argv);
	derived = calib_derive(measured, argv[optind], &d, dir, prov, &e);
	rc = derived ? emit(out, derived) : cli_fail("%s", e.msg);
	json_decref(derived);
	json_decref(prov);
	json_decref(measured);
	calib_device_release(&d);
	return rc;
}

static int calib_devices_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "library", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *dir = calib_device_dir();
	json_t *measured;
	char **names;
	int ch, rc = CLI_OK;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			dir = optarg;
			break;
		case 'h':
			fputs(calib_help, stdout);
			return CLI_OK;
		default:
			fputs(calib_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind + 1 != argc)
		return cli_fail("calib devices: give one measured PROFILE");
	if (!(measured = measured_profile(argv[optind])))
		return CLI_BAD_INPUT;
	names = calib_device_names(dir);
	if (!*names)
		rc = cli_fail("calib devices: no device files in %s", dir);
	printf("# tokens/s derived from %s over published, less 1: from the "
	       "datasheet alone; corrected by the device's other figures (own) "
	       "or by the other devices' (library); the derived profile "
	       "(corrected by all the device's figures)\n", argv[optind]);
	for (char **p = names; *p && rc == CLI_OK; p++) {
		struct calib_device d;
		struct err e;

		if (calib_device_load(&d, *p, dir, &e) < 0) {
			rc = cli_fail("%s", e.msg);
			break;
		}
		rc = print_errors(measured, argv[optind], &d, dir);
		calib_device_release(&d);
	}
	calib_device_names_free(names);
	json_decref(measured);
	return rc;
}

static int calib_accept_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 'T' },
		{ "drafts", required_argument, NULL, 'D' },
		{ "text", required_argument, NULL, 't' },
		{ "gamma", required_argument, NULL, 'g' },
		{ "prompts", required_argument, NULL, 'p' },
		{ "window", required_argument, NULL, 'w' },
		{ "threads", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *target = NULL, *drafts = NULL, *text = NULL,
		   *gamma = "8", *prompts = "16", *dir = "results/calib",
		   *window = "0", *threads = "1";
	char list[1024], *save = NULL;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (ch) {
		case 'T':
			target = optarg;
			break;
		case 'D':
			drafts = optarg;
			break;
		case 't':
			text = optarg;
			break;
		case 'g':
			gamma = optarg;
			break;
		case 'p':
			prompts = optarg;
			break;
		case 'w':
			window = optarg;
			break;
		case 'j':
			threads = optarg;
			break;
		case 'o':
			dir = optarg;
			break;
		case 'h':
			fputs(calib_help, stdout);
			return CLI_OK;
		default:
			fputs(calib_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc || !target || !drafts || !text)
		return cli_fail("calib accept: give --target, --drafts and --text");
	snprintf(list, sizeof(list), "%s", drafts);
	for (char *q = strtok_r(list, ",", &save); q;
	     q = strtok_r(NULL, ",", &save)) {
		const char *slash = strrchr(target, '/');
		char draft[1100], out[2300];
		char *av[] = { "eval", "accept", "--target", (char *)target,
			       "--draft", draft, "--text", (char *)text,
			       "--gamma", (char *)gamma, "--prompts",
			       (char *)prompts, "--window", (char *)window,
			       "--threads", (char *)threads, "--out", out, NULL };
		int rc;

		snprintf(draft, sizeof(draft), "%s:%s", target, q);
		snprintf(out, sizeof(out), "%s/accept-%s-%s.json", dir,
			 slash ? slash + 1 : target, q);
		fprintf(stderr, "calib: acceptance of %s against %s\n", draft,
			target);
		if ((rc = cli_eval((int)(sizeof(av) / sizeof(av[0])) - 1, av)) !=
		    CLI_OK)
			return rc;
		fprintf(stderr, "calib: wrote %s\n", out);
	}
	return CLI_OK;
}

/* "NVIDIA H200" -> "NVIDIA-H200" for a file name */
static void file_word(char *dst, size_t n, const char *src)
{
	size_t i = 0;

	for (; src[i] && i + 1 < n; i++)
		dst[i] = (src[i] == ' ' || src[i] == '/') ? '-' : src[i];
	dst[i] = 0;
}

static int calib_gpu_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "gpu", required_argument, NULL, 'g' },
		{ "model", required_argument, NULL, 'm' },
		{ "quant", required_argument, NULL, 'q' },
		{ "tokens", required_argument, NULL, 't' },
		{ "ctx", required_argument, NULL, 'c' },
		{ "reps", required_argument, NULL, 'r' },
		{ "roofline", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int tokens[64] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 0 };
	int ctx[64] = { 128, 256, 512, 1024, 2048, 0 };
	struct calib_gpu_opts o = { "llama2-7b", "f16", tokens, ctx, 20, true };
	const char *gpu = NULL, *out = NULL;
	char path[512], dname[256];
	struct gk_device dev;
	long long num;
	json_t *prov, *t;
	struct err e;
	int ch, rc, roofline = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (ch) {
		case 'g':
			gpu = optarg;
			break;
		case 'm':
			o.model = optarg;
			break;
		case 'q':
			o.quant = optarg;
			break;
		case 't':
			if (parse_list("--tokens", optarg, 4096, tokens))
				return CLI_BAD_INPUT;
			break;
		case 'c':
			if (parse_list("--ctx", optarg, 1 << 17, ctx))
				return CLI_BAD_INPUT;
			break;
		case 'r':
			if (cli_long("--reps", optarg, 1, 100000, &num))
				return CLI_BAD_INPUT;
			o.reps = (int)num;
			break;
		case 'R':
			roofline = 1;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(calib_help, stdout);
			return CLI_OK;
		default:
			fputs(calib_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc)
		return cli_fail("calib gpu: unexpected '%s'", argv[optind]);
	if (!roofline && gpu)
		return cli_fail("calib gpu: --gpu names a preset for --roofline; "
				"a measurement is of GPU 0");
	prov = calib_prov(argc, argv);
	if (roofline) {
		fprintf(stderr, "calib: the uncalibrated roofline of %s for %s\n",
			gpu ? gpu : "H100-SXM", o.model);
		t = calib_gpu_roofline(gpu ? gpu : "H100-SXM", o.model, prov, &e);
	} else if ((t = calib_gpu(&o, prov, &dev, &e)) && !out) {
		file_word(dname, sizeof(dname), dev.name);
		snprintf(path, sizeof(path), "results/calib/verify-%s-%s-%s.json",
			 dname, o.model, o.quant);
		out = path;
	}
	if (!t)
		rc = cli_fail("calib gpu: %s", e.msg);
	else
		rc = emit(out, t);
	json_decref(t);
	json_decref(prov);
	return rc;
}

static int calib_check_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "draft", required_argument, NULL, 'd' },
		{ "draft-quant", required_argument, NULL, 'D' },
		{ "target", required_argument, NULL, 'T' },
		{ "text", required_argument, NULL, 't' },
		{ "threads", required_argument, NULL, 'n' },
		{ "quick", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct check_opts o = { .draft = "stories260K", .draft_quant = "w4a16",
				.target = "stories260K", .target_quant = "f32",
				.threads = 1, .progress = false };
	char text[1100];
	struct check k;
	long long threads = 1;
	json_t *prov;
	struct err e;
	int ch, json = 0, failed = 0;

	snprintf(text, sizeof(text), "%s/TinyStories-valid-excerpt.txt",
		 mload_data_dir());
	o.text = text;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			o.draft = optarg;
			break;
		case 'D':
			o.draft_quant = optarg;
			break;
		case 'T':
			o.target = optarg;
			break;
		case 't':
			o.text = optarg;
			break;
		case 'n':
			if (cli_long("--threads", optarg, 1, 64, &threads))
				return CLI_BAD_INPUT;
			o.threads = (int)threads;
			break;
		case 'q':
			o.quick = true;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(calib_help, stdout);
			return CLI_OK;
		default:
			fputs(calib_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc)
		return cli_fail("calib check: unexpected '%s'", argv[optind]);
	o.progress = !json && isatty(2);
	prov = calib_prov(argc, argv);
	if (check_run(&k, &o, prov, &e) < 0) {
		json_decref(prov);
		return cli_fail("%s", e.msg);
	}
	json_decref(prov);
	if (json)
		printf("{\"checks\": [");
	else
		printf("%-44s %12s %12s %8s %7s\n", "check", "predicted_ms",
		       "measured_ms", "error", "bound");
	for (int i = 0; i < k.n; i++) {
		const struct check_row *r = &k.rows[i];
		int miss = r->rel_error > r->bound || r->rel_error < -r->bound;

		failed |= miss;
		if (json)
			printf("%s{\"name\": \"%s\", \"predicted_s\": %.9g, "
			       "\"measured_s\": %.9g, \"rel_error\": %.6f, "
			       "\"bound\": %.3f, \"pass\": %s}", i ? ", " : "",
			       r->name, r->predicted_s, r->measured_s,
			       r->rel_error, r->bound, miss ? "false" : "true");
		else
			printf("%-44s %12.4f %12.4f %+7.1f%% %6.0f%%%s\n",
			       r->name, 1e3 * r->predicted_s,
			       1e3 * r->measured_s, 100 * r->rel_error,
			       100 * r->bound, miss ? "  MISSED" : "");
	}
	if (json)
		printf("]}\n");
	return failed ? CLI_FAILED : CLI_OK;
}

int cli_calib(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} subs[] = {
		{ "cpu", calib_cpu_cmd },       { "derive", calib_derive_cmd },
		{ "devices", calib_devices_cmd },
		{ "accept", calib_accept_cmd }, { "gpu", calib_gpu_cmd },
		{ "check", calib_check_cmd },
	};

	for (size_t i = 0; argc >= 2 && i < sizeof(subs) / sizeof(subs[0]); i++)
		if (!strcmp(argv[1], subs[i].name))
			return subs[i].fn(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(calib_help, stdout);
		return CLI_OK;
	}
	fputs(calib_help, stderr);
	return CLI_BAD_INPUT;
}
