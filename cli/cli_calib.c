/* cli_calib.c: "hybridspec calib", a table of subcommands (the timings on
 * this machine are in cli_calib_measure.c), what they share, and the
 * subcommands over the device library, "calib derive" (calib_derive_file)
 * and "calib devices" (dfit_blind_print), and "calib accept" (eval
 * accept for each draft format). Each writes its profile with provenance
 * through a temporary file, so an interrupted run leaves nothing
 * half-written. */
#include "derive.h"
#include "devlib.h"
#include "dfit.h"
#include "fs.h"
#include "eval.h"
#include "mload.h"

#include "cli.h"
#include "cli_calib.h"
#include "cli_sub.h"
#include "jx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_calib_emit(json_t *v, const struct err *e, const char *path,
		   bool overwrite)
{
	struct err save;
	int rc = CLI_OK;

	if (!v)
		return cli_fail("%s", e->msg);
	if (!path)
		cli_print_json(v);
	else if (jx_replaceable(path, NULL, NULL, overwrite, &save) < 0 ||
		 jx_save(path, v, &save) < 0)
		rc = cli_fail("%s", save.msg);
	else
		fprintf(stderr, "calib: wrote %s\n", path);
	json_decref(v);
	return rc;
}

static const struct opt_cmd derive_cmd = {
	.name = "calib derive",
	.usage = "[PROFILE] --device NAME|FILE [--model NAME|FILE]\n"
		 " [--kernel generic|repack] [--library DIR] [-o OUT [--overwrite]]",
	.about = "An edge profile for a device that cannot be run here: its level from\n"
		 "the device model fitted on the library's published llama.cpp figures\n"
		 "(with the device's own), its shape (how a step grows with the context,\n"
		 "the fixed part of a prefill) from PROFILE, measured here (default: the\n"
		 "committed one); for --model (a built-in shape or a config.json or GGUF\n"
		 "file), else PROFILE's model. It carries the model's held-out error band\n"
		 "and how far the model lies from the device's figures (docs/calib.md).\n"
		 "A device is a name in the library (--library, $HYBRIDSPEC_DEVICES,\n"
		 "else results/calib/devices, found from any directory) or a device\n"
		 "file of your own.\n",
	.exit_status = CLI_CALIB_EXIT,
	.operands = "PROFILE",
	.min_operands = 0,
	.max_operands = 1,
	.required = { "device" },
	.needs = { { "overwrite", "out" } },
};

static int derive_sub(int argc, char **argv)
{
	const char *device = NULL, *out = NULL, *model = NULL;
	const char *kernel = "generic", *dir = calib_device_dir();
	bool overwrite = false;
	struct opt rows[] = {
		OPT_STR("device", 0, &device, "NAME|FILE",
			"the device: a name in the library or a device file"),
		OPT_STR("model", 0, &model, "NAME|FILE", "the model drafting "
			"(default: PROFILE's)"),
		OPT_STR("kernel", 0, &kernel, "FAMILY", "the prefill's kernel "
			"family: generic (llama.cpp's vector dot products), or "
			"repack (its repacked GEMM kernels, which it picks on Arm "
			"CPUs with dot products) (default: generic)"),
		CLI_OPT_LIBRARY(&dir),
		OPT_STR("out", 'o', &out, "OUT", "write the derived profile to OUT "
			"(default: stdout)"),
		CLI_OPT_OVERWRITE_FILE(&overwrite),
		OPT_END,
	};
	json_t *prov, *v;
	struct stat so, sf;
	const char *from;
	struct err e;
	int rc;

	if ((rc = cli_parse_prov(&derive_cmd, rows, &argc, argv, &prov)) != OPT_GO)
		return rc;
	if (calib_kernel_find(kernel, &e) < 0) {
		json_decref(prov);
		return cli_fail("calib derive: --kernel: %s", e.msg);
	}
	from = argc ? argv[0] : calib_measured_profile();
	if (out && !stat(out, &so) && !stat(from, &sf) && so.st_dev == sf.st_dev &&
	    so.st_ino == sf.st_ino) {
		json_decref(prov);
		return cli_fail("calib derive: -o %s is PROFILE, the measured "
				"profile it derives from", out);
	}
	v = calib_derive_file(from, device, model, kernel, dir, prov, &e);
	if (v)
		calib_derive_say(v, stderr);
	rc = cli_calib_emit(v, &e, out, overwrite);
	json_decref(prov);
	return rc;
}

static const struct opt_cmd devices_cmd = {
	.name = "calib devices",
	.usage = "[--blind] [--library DIR]",
	.about = "The device library, a line a device: its class, the peaks the device\n"
		 "model scales and its published figures. With --blind, the model's\n"
		 "held-out errors: each device's published figures predicted by the\n"
		 "model (what share of its DRAM peak and of its arithmetic peaks the\n"
		 "CPU cluster reaches, by class and kernel family, a decode at its\n"
		 "slowest thread's pace) fitted on the other devices alone\n"
		 "(leave-one-device-out), then the errors' median and worst for\n"
		 "decode and prefill, in all and by class (docs/calib.md).\n",
	.exit_status = CLI_CALIB_EXIT,
};

static int devices_sub(int argc, char **argv)
{
	const char *dir = calib_device_dir();
	bool blind = false;
	struct opt rows[] = {
		OPT_FLAG("blind", 0, &blind, "each device's figures predicted by "
			 "the model fitted without it, and the errors' median and "
			 "worst"),
		CLI_OPT_LIBRARY(&dir),
		OPT_END,
	};
	struct err e;
	int rc;

	if ((rc = opt_parse(&devices_cmd, rows, &argc, argv)) != OPT_GO)
		return rc;
	if ((blind ? dfit_blind_print : dfit_library_print)(dir, stdout, &e) < 0)
		return cli_fail("%s", e.msg);
	return CLI_OK;
}

static const struct opt_cmd accept_cmd = {
	.name = "calib accept",
	.usage = "--target T[:Q] --drafts Q1,Q2,... --text FILE\n"
		 " [--gamma G] [--prompts N] [--window N] [--windows W]\n"
		 " [--threads N] [--kernel K] [-o DIR [--overwrite]]",
	.about = "Runs `eval accept` for each draft format against the target and\n"
		 "writes DIR/accept-T-Q.json (alpha, E[A] per gamma) and its bits\n"
		 "(accept-T.TQ-Q.json for a target in format TQ, not f32);\n"
		 "the text's options, --kernel and the defaults as eval accept's.\n",
	.exit_status = CLI_CALIB_EXIT,
	.required = { "target", "drafts", "text" },
};

#define ACCEPT_DRAFTS_MAX 16

/* The names of draft format q of the target's model name in format tq:
 * the draft (the model in q), and its profile's path in dir,
 * accept-NAME-Q.json against an f32 target, else accept-NAME.TQ-Q.json
 * (two targets' profiles had shared a name) */
static void accept_names(const char *name, const char *tq, const char *q,
			 const char *dir, char draft[1100], char path[2300])
{
	const char *slash = strrchr(name, '/');
	bool f32 = !strcmp(tq, "f32");

	snprintf(draft, 1100, "%s:%s", name, q);
	snprintf(path, 2300, "%s/accept-%s%s%s-%s.json", dir,
		 slash ? slash + 1 : name, f32 ? "" : ".", f32 ? "" : tq, q);
}

static int accept_sub(int argc, char **argv)
{
	struct eval_accept_opts o = { .seed = 1 };
	const char *target = NULL, *drafts = NULL, *dir = "results/calib";
	long long gamma = 8, prompts = 16, window = 0, windows = 0,
		  threads = cli_eval_threads();
	bool overwrite = false;
	struct opt rows[] = {
		CLI_OPT_MODEL_SPEC("target", &target,
				   "the target model (a name or path; Q default f32)"),
		OPT_STR("drafts", 0, &drafts, "Q1,Q2,...",
			"the drafts: the target in each weight format"),
		CLI_OPT_EVAL_TEXT(&o.text, &window, &windows, &threads),
		CLI_OPT_GAMMA(&gamma, "E[A] for gamma = 1..G, G 0 to 16 (default 8)"),
		CLI_OPT_PROMPTS(&prompts, "prompts cut from the text, 1 to 100000\n"
				"(default 16)"),
		CLI_OPT_KERNEL(&o.kern),
		OPT_STR("out", 'o', &dir, "DIR", "where the profiles go, made if it is not\n"
			"there (default results/calib)"),
		OPT_FLAG("overwrite", 0, &overwrite,
			 "replace profiles in DIR if they exist (never a\n"
			 "file hybridspec did not write)"),
		OPT_END,
	};
	char list[1024], *q[ACCEPT_DRAFTS_MAX], *save = NULL;
	char draft[1100], path[2300], name[1024];
	const char *tq;
	int n = 0;
	json_t *prov = NULL;
	struct err e;
	int rc = cli_parse_prov(&accept_cmd, rows, &argc, argv, &prov);

	if (rc != OPT_GO)
		goto out;
	o.window = (int)window;
	o.windows = windows;
	o.threads = (int)threads;
	o.gamma = (int)gamma;
	o.prompts = (int)prompts;
	snprintf(list, sizeof(list), "%s", drafts);
	/* every format and its files checked before any is measured */
	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		struct quant qt;
		char why[OPT_WHY_BYTES];

		if (n == ACCEPT_DRAFTS_MAX) {
			rc = cli_fail("--drafts: expected at most %d formats, "
				      "got more", ACCEPT_DRAFTS_MAX);
			goto out;
		}
		if (cli_parse_quant(t, &qt, why) < 0) {
			rc = cli_fail("--drafts: %s", why);
			goto out;
		}
		for (int i = 0; i < n; i++)
			if (!strcmp(q[i], t)) {
				rc = cli_fail("--drafts: expected a format not "
					      "listed before, got \"%s\" twice", t);
				goto out;
			}
		q[n++] = t;
	}
	if (!n) {
		rc = cli_fail("--drafts: expected a weight format or more, got "
			      "\"%s\"", drafts);
		goto out;
	}
	if (mload_spec_split(target, "f32", name, sizeof(name), &tq, &e) < 0 ||
	    fs_mkdirs(dir, &e) < 0) {
		rc = cli_fail("%s", e.msg);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		accept_names(name, tq, q[i], dir, draft, path);
		if (eval_accept_writable(path, overwrite, &e) < 0) {
			rc = cli_fail("%s", e.msg);
			goto out;
		}
	}
	for (int i = 0; i < n; i++) {
		accept_names(name, tq, q[i], dir, draft, path);
		o.target = target;
		o.draft = draft;
		fprintf(stderr, "calib: acceptance of %s against %s\n", draft,
			target);
		if ((rc = cli_eval_accept(&o, path, overwrite, false, prov)) !=
		    CLI_OK)
			goto out;
		fprintf(stderr, "calib: wrote %s\n", path);
	}
	rc = CLI_OK;
out:
	json_decref(prov);
	return rc;
}

static const struct cli_sub calib_subs_table[] = {
	{ "cpu", cli_calib_cpu, "time the draft forward on this CPU: an edge profile" },
	{ "derive", derive_sub,
	  "a profile for a device of the library, from a measured one" },
	{ "devices", devices_sub,
	  "the device library; --blind: its figures against the model held out" },
	{ "accept", accept_sub, "acceptance profiles of draft formats (eval accept)" },
	{ "gpu", cli_calib_gpu, "the verify-cost table of GPU 0, or a preset's roofline" },
	{ "check", cli_calib_check, "the simulator against the real models timed here" },
	{ "import-profiles", cli_calib_import,
	  "operator tables from measured GPU profiles (Vidur's layout)" },
	{ NULL, NULL, NULL },
};

static const struct cli_subs calib_subs = {
	.name = "calib",
	.exit_status = "0 done (check: every check within its bound), 1 a check\n"
		       "missed its bound, 2 bad usage or bad input (a missing model, a bad file)",
	.subs = calib_subs_table,
};

int cli_calib(int argc, char **argv)
{
	return cli_sub_run(&calib_subs, argc, argv);
}
