/* cli_validate.c: "hybridspec validate": the real deployment on loopback
 * against the simulator, point by point, for a sweep file (docs/sweep.md)
 * whose points use the sync or async protocol (the work of each point:
 * study/validate.h). It checks every point first, measures the profiles
 * once, runs the points, prints the table and writes the results whole or
 * not at all. */
#define _GNU_SOURCE /* realpath */
#include "cli.h"

#include "jx.h"
#include "mload.h"
#include "outdir.h"
#include "prov.h"
#include "validate.h"
#include "mem.h"
#include "fs.h"

#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define VAL_CLOSE 0.10 /* the first goal: sim within 10% of real */
#define VAL_TIGHT 0.05 /* the goal now: within 5% */
#define VAL_EDGE_BOUND 0.4 /* default --edge-bound: the most of an edge CPU
			      the simulated edges of a point may keep busy
			      (drafting, prefilling) for it to run: beyond,
			      the emulation's edge processes wait for each
			      other's CPU, which the simulator (a processor
			      per device) does not model (docs/deploy.md has
			      the measurements) */

static const char validate_help[] =
	"usage: hybridspec validate SWEEP.json [-o DIR] [--target NAME[:Q]]\n"
	"                           [--draft NAME[:Q]] [--text FILE] [--json]\n"
	"                           [--quick] [--quiet] [--timeout-s X]\n"
	"                           [--edges-sleep] [--no-retime]\n"
	"                           [--edge-bound X]\n"
	"\n"
	"Runs every point of the sweep twice: as a real deployment on this\n"
	"machine (hybridspec serve with the target model, default\n"
	"tinystories656K in f32, and one edge process per tenant drafting with\n"
	"the draft model, default tinystories656K in w4a16, over loopback TCP\n"
	"with the WAN emulated),\n"
	"and in the simulator with profiles measured first on\n"
	"the same models and machine. Prints ITL, alpha, tokens/s and the cloud's\n"
	"busy fraction of both with relative errors, and whether every edge's\n"
	"output equals the target's own greedy output. Prompts are slices of\n"
	"the text (default the TinyStories excerpt in ../shared/data).\n"
	"Points must use sync or async, closed-loop workloads with constant\n"
	"prompt and output lengths, one replica, continuous or window batching.\n"
	"Results: DIR (default results/runs/validate-NAME): validate.json,\n"
	"validate.csv, calib/ (the profiles), points/<i>/ (config, server and\n"
	"edge logs, simulated summary). Exit 1 when an output was not lossless.\n"
	"\"in situ\": the simulator again with the draft profile and the verify\n"
	"table scaled to the costs measured during the point's run (the\n"
	"ratios are in validate.csv): what it closes of a gap lies in the\n"
	"calibration's conditions, what it leaves in the simulator's model.\n"

	"Before each point the draft's forward pass and one verifier shape are\n"
	"timed again (a few seconds) and the point is simulated on the profiles\n"
	"scaled to them (points/<i>/retimed/; the ratios are in validate.csv):\n"
	"a shared machine's speed drifts by tens of percent between the\n"
	"calibration and a point minutes later. --no-retime: the calibration's\n"
	"profiles as they are. The same two passes are also timed after pauses\n"
	"of 2.5 to 160 ms (the wake tables: a pass after a pause is slower), and\n"
	"40 pings through the emulated link time the deployment's own software\n"
	"path (wan/stack_s); the point is simulated with both (docs/deploy.md).\n"
	"--quick: fewer timing repetitions in the calibration (for tests).\n"
	"When a point has no more edges than the edges' CPUs (all but the\n"
	"verifier's), each edge polls while it waits instead of sleeping, so\n"
	"its CPU is awake for the next draft step as a phone's drafting core\n"
	"would be; --edges-sleep makes them sleep anyway (to measure what a\n"
	"cold CPU costs).\n"
	"--edge-bound X: a point whose edges share a CPU and would keep more\n"
	"than X of each edge CPU busy in the simulation (drafting,\n"
	"prefilling) is not run (default 0.4; beyond it the edge processes\n"
	"wait for each other's CPU, which the simulator does not model);\n"
	"validate.json lists it under not_run.\n"
	"--timeout-s: kill a point's processes after X seconds (default 600).\n"
	"Documented in docs/deploy.md.\n"
	"\nexit status: 0 every output lossless, 1 an output was not lossless or\n"
	"a point failed, 2 bad usage or bad input\n";

/* ---- what a point needs, checked ---- */

static int dist_int(const struct dist *d, const char *what, int g, int *out,
		    struct err *e)
{
	if (d->kind != DIST_CONSTANT)
		return err_set(e, "/tenants/%d/workload/%s: the deployment needs "
			       "a constant", g, what);
	*out = (int)lround(d->a);
	return 0;
}

static int check_point(const struct cfg *c, int *np, int *nout, struct err *e)
{
	if (c->cloud.replicas != 1 || !cfg_sched_deployed(c->cloud.policy))
		return err_set(e, "/cloud: the deployment has one replica with "
			       "continuous or window batching");
	for (size_t g = 0; g < c->n_groups; g++) {
		const struct cfg_group *G = &c->groups[g];
		int p = 0, o = 0;

		if (!G->proto.caps.speculates)
			return err_set(e, "/tenants/%zu/protocol: the deployment "
				       "runs sync or async", g);
		if (G->workload.arrival != ARRIVAL_CLOSED)
			return err_set(e, "/tenants/%zu/workload/arrival: the "
				       "deployment runs closed loops", g);
		if (dist_int(&G->workload.prompt_tokens, "prompt_tokens", (int)g,
			     &p, e) < 0 ||
		    dist_int(&G->workload.output_tokens, "output_tokens", (int)g,
			     &o, e) < 0)
			return -1;
		if (g && (p != *np || o != *nout))
			return err_set(e, "/tenants/%zu/workload: every group needs "
				       "the same prompt and output lengths", g);
		*np = p;
		*nout = o;
	}
	return 0;
}

/* ---- the command ---- */

static double rel(double sim, double real)
{
	return real != 0 ? (sim - real) / real : 0;
}

/* "/tenants/0/count=4 /protocol/kind=sync" style label of a point. */
static void point_label(const struct sweep *sw, size_t point, char *buf,
			size_t n)
{
	size_t at = 0;

	buf[0] = 0;
	for (size_t a = 0; a < sw->n_axes && at < n; a++) {
		char *v = json_dumps(json_array_get(sw->axes[a].values,
						    sweep_value_index(sw, point, a)),
				     JSON_ENCODE_ANY | JSON_COMPACT |
				     JSON_REAL_PRECISION(6));
		const char *ptr = sw->axes[a].ptr, *key = strrchr(ptr, '/');

		/* a distribution's parameter is named with its key */
		if (key && key > ptr &&
		    (!strcmp(key, "/mean") || !strcmp(key, "/sd") ||
		     !strcmp(key, "/value")))
			while (--key > ptr && *key != '/')
				;
		at += (size_t)snprintf(buf + at, n - at, "%s%s=%s", a ? " " : "",
				       key ? key + 1 : ptr, v);
		free(v);
	}
}

static json_t *side_json(const struct val_side *s)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:f}", "itl_s", s->itl_s,
			 "tokens_per_s", s->tokens_per_s, "alpha", s->alpha,
			 "busy_fraction", s->busy, "ttft_s", s->ttft_s);
}

static void print_row(FILE *f, const char *label, const struct val_point *p)
{
	fprintf(f, "%-34s %7.2f %7.2f %+6.1f%%  %7.1f %7.1f %+6.1f%%  %5.3f %5.3f"
		"  %5.3f %5.3f  %-3s  %+6.1f%% %+6.1f%%\n", label, 1e3 * p->real.itl_s,
		1e3 * p->sim.itl_s, 100 * rel(p->sim.itl_s, p->real.itl_s),
		p->real.tokens_per_s, p->sim.tokens_per_s,
		100 * rel(p->sim.tokens_per_s, p->real.tokens_per_s),
		p->real.alpha, p->sim.alpha, p->real.busy, p->sim.busy,
		p->mismatched ? "NO" : "yes",
		100 * rel(p->insitu.itl_s, p->real.itl_s),
		100 * rel(p->insitu.tokens_per_s, p->real.tokens_per_s));
}

/* Ends the JSON object of "POINTER=VALUE" at buf (cap bytes, at of them
 * written) with, unless extra_s is NULL, "wake": {"idle_s": pause_s,
 * "extra_s": extra_s} (VAL_WAKE_PAUSES each); returns a copy the caller
 * frees. */
static char *end_object(char *buf, size_t cap, int at, const double *pause_s,
			const double *extra_s)
{
	for (int k = 0; extra_s && k < 2; k++) {
		const double *x = k ? extra_s : pause_s;

		at += snprintf(buf + at, cap - (size_t)at, k ? "], \"extra_s\": ["
			       : ", \"wake\": {\"idle_s\": [");
		for (int i = 0; i < VAL_WAKE_PAUSES; i++)
			at += snprintf(buf + at, cap - (size_t)at, "%s%.6g",
				       i ? ", " : "", x[i]);
	}
	snprintf(buf + at, cap - (size_t)at, extra_s ? "]}}" : "}");
	return xstrdup(buf);
}

static json_t *nums_json(const double *x, int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_real(x[i]));
	return a;
}

/* val_wake's tables of a point. */
static json_t *wake_json(const struct val_point *p)
{
	return json_pack("{s:o,s:o,s:o}", "pause_s",
			 nums_json(p->wake_pause_s, VAL_WAKE_PAUSES),
			 "draft_extra_s", nums_json(p->draft_wake_s,
						    VAL_WAKE_PAUSES),
			 "verify_extra_s", nums_json(p->verify_wake_s,
						     VAL_WAKE_PAUSES));
}

/* Overrides that point the simulator at the measured profiles (and a
 * two-token pass of pair_s seconds beside the edge profile's, unless
 * negative), give every link the hosts' software time p->stack_s and,
 * with wake, the devices and the GPU p's wake tables. The
 * verifier is this CPU: its measured bandwidth and FMA peak (the edge
 * profile's) and its memory stand for a GPU's figures, which set only MBU,
 * MFU and the default KV capacity beside the measured table. Caller frees
 * with sweep_sets_free. */
static char **profile_sets(const char *cdir, const char *pdir,
			   const struct cfg *c, const char *model,
			   const struct prof_edge *pe, double pair_s,
			   const struct val_point *p, bool wake, size_t *n)
{
	char **s = xcalloc(3 * c->n_groups + 2, sizeof(char *));
	size_t k = 0;
	char buf[8400];

	for (size_t g = 0; g < c->n_groups; g++) {
		int at = snprintf(buf, sizeof(buf), "/tenants/%zu/device="
				  "{\"profile\": \"%s/edge.json\"", g, cdir);

		if (pair_s >= 0)
			at += snprintf(buf + at, sizeof(buf) - (size_t)at,
				       ", \"draft_pair_s\": %.9g", pair_s);
		s[k++] = end_object(buf, sizeof(buf), at, p->wake_pause_s,
				    wake ? p->draft_wake_s : NULL);
		snprintf(buf, sizeof(buf), "/tenants/%zu/acceptance={\"profile\": "
			 "\"%s/accept-%zu.json\", \"replay\": \"request\"}",
			 g, pdir, g);
		s[k++] = xstrdup(buf);
		snprintf(buf, sizeof(buf), "/tenants/%zu/wan/stack_s=%.9g", g,
			 p->stack_s);
		s[k++] = xstrdup(buf);
	}
	snprintf(buf, sizeof(buf), "/cloud/model=\"%s\"", model);
	s[k++] = xstrdup(buf);
	{
		int at = snprintf(buf, sizeof(buf), "/cloud/gpu={\"name\": "
				  "\"cpu-1t\", \"mem_bw_Bps\": %.6g, "
				  "\"fp16_flops\": %.6g, \"mem_bytes\": %.6g, "
				  "\"table\": \"%s/verify.json\"",
				  pe->stream_Bps, pe->peak_flops,
				  (double)sysconf(_SC_PHYS_PAGES) *
				  (double)sysconf(_SC_PAGESIZE), cdir);

		s[k++] = end_object(buf, sizeof(buf), at, p->wake_pause_s,
				    wake ? p->verify_wake_s : NULL);
	}
	*n = k;
	return s;
}

/* The simulator again, on the costs the run had: the profiles scaled by
 * the draft step measured in the run (the steps feeding one token) over
 * the profile's and by the run's verifier time over what the table
 * gives for the run's own iterations, with the run's two-token pass
 * (pdir/insitu/), into p->insitu. No wake tables: the run's mean costs
 * hold its passes after a pause already. */
static int simulate_insitu(const struct sweep *sw, size_t pt,
			   const struct cfg *c, const char *cdir,
			   const char *pdir, const struct val *v,
			   double step_prof, struct val_point *p, struct err *e)
{
	struct val_point q = { 0 };
	char dir[4500];
	char **extra;
	size_t nx;
	double pair_s = p->draft_pair_s > 0 ? p->draft_pair_s : -1;
	int r;

	p->draft_ratio = step_prof > 0 ? p->draft_step_s / step_prof : 1;
	snprintf(dir, sizeof(dir), "%.4400s/verify.json", cdir);
	p->verify_ratio = val_verify_ratio(pdir, dir, v->tm.name, e);
	snprintf(dir, sizeof(dir), "%.4400s/insitu", pdir);
	if (p->verify_ratio < 0 || fs_mkdirs(dir, e) < 0 ||
	    val_scaled_profiles(cdir, dir, p->draft_ratio, p->verify_ratio,
				"as in the run", e) < 0)
		return -1;
	extra = profile_sets(dir, pdir, c, v->tm.name, &v->edge, pair_s, p,
			     false, &nx);
	r = val_simulate(sw, pt, extra, nx, dir, &q, e);
	sweep_sets_free(extra, nx);
	p->insitu = q.sim;
	return r;
}

/* Text with every occurrence of from replaced by to. Caller frees. */
static char *replace_all(const char *text, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to), n = 0;
	const char *p;
	char *out, *q;

	for (p = text; (p = strstr(p, from)); p += nf)
		n++;
	out = q = xmalloc(strlen(text) + n * (nt > nf ? nt - nf : 0) + 1);
	for (p = text; *p;) {
		if (!strncmp(p, from, nf)) {
			memcpy(q, to, nt);
			q += nt;
			p += nf;
		} else {
			*q++ = *p++;
		}
	}
	*q = 0;
	return out;
}

int cli_validate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "target", required_argument, NULL, 'T' },
		{ "draft", required_argument, NULL, 'D' },
		{ "text", required_argument, NULL, 't' },
		{ "timeout-s", required_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "quick", no_argument, NULL, 'Q' },
		{ "edges-sleep", no_argument, NULL, 'S' },
		{ "no-retime", no_argument, NULL, 'R' },
		{ "edge-bound", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *out = NULL, *target = "tinystories656K",
		   *draft = "tinystories656K:w4a16", *text = NULL;
	char textbuf[4096], outbuf[4096], tmp_abs[4096], cdir[4200],
	     out_abs[4200];
	bool json = false, quick = false, quiet = false, sleep = false,
	     retime = true;
	double timeout_s = 600, step_prof, bound = VAL_EDGE_BOUND;
	struct val v;
	struct sweep sw;
	struct od o = { 0 };
	struct err e;
	json_t *rows = NULL, *prov, *doc;
	FILE *csv = NULL;
	int ch, rc = CLI_FAILED, gamma = 1, budget = 2, np = 0, nout = 0;
	long lossy = 0, close = 0, tight = 0; /* requests not lossless; points
					     within VAL_CLOSE, VAL_TIGHT on
					     ITL and tokens/s */
	json_t *skipped = NULL; /* points over the edge bound */

	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'o': out = optarg; break;
		case 'T': target = optarg; break;
		case 'D': draft = optarg; break;
		case 't': text = optarg; break;
		case 'j': json = true; break;
		case 'q': quiet = true; break;
		case 'Q': quick = true; break;
		case 'S': sleep = true; break;
		case 'R': retime = false; break;
		case 'B':
			if (cli_double("--edge-bound", optarg, 0, &bound))
				return CLI_BAD_INPUT;
			break;
		case 'x':
			if (cli_double("--timeout-s", optarg, 1, &timeout_s))
				return CLI_BAD_INPUT;
			break;
		case 'h':
			fputs(validate_help, stdout);
			return CLI_OK;
		default:
			fputs(validate_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc - 1) {
		fputs(validate_help, stderr);
		return CLI_BAD_INPUT;
	}
	if (sweep_load(&sw, argv[optind], &e) < 0)
		return cli_fail("%s", e.msg);
	/* every point must be one the deployment can run */
	for (size_t pt = 0; pt < sw.n_points; pt++) {
		struct cfg c;
		int pnp = 0, pnout = 0;
		int r = val_cfg_load(&sw, pt, -1, NULL, 0, &c, &e);

		if (r == 0) {
			r = check_point(&c, &pnp, &pnout, &e);
			if (r < 0)
				err_prefix(&e, "%s: point %zu", sw.file, pt);
			for (size_t g = 0; g < c.n_groups; g++)
				if (c.groups[g].proto.gamma > gamma)
					gamma = c.groups[g].proto.gamma;
			if (c.cloud.max_batch_tokens > budget)
				budget = (int)c.cloud.max_batch_tokens;
			if (r == 0 && pt > 0 && (pnp != np || pnout != nout))
				r = err_set(&e, "%s: every point needs the same "
					    "prompt and output lengths", sw.file);
			np = pnp;
			nout = pnout;
			cfg_release(&c);
		}
		if (r < 0) {
			sweep_release(&sw);
			return cli_fail("%s", e.msg);
		}
	}
	if (!text) {
		snprintf(textbuf, sizeof(textbuf), "%.4000s/TinyStories-valid-excerpt.txt",
			 mload_data_dir() ? mload_data_dir() : "../shared/data");
		text = textbuf;
	}
	if (!out) {
		snprintf(outbuf, sizeof(outbuf), "results/runs/validate-%s", sw.name);
		out = outbuf;
	}
	if (!quiet)
		fprintf(stderr, "validate: loading %s and %s, the target's greedy "
			"continuations of the prompts\n", target, draft);
	if (val_init(&v, target, draft, text, np, nout, budget, &e) < 0) {
		sweep_release(&sw);
		return cli_fail("%s", e.msg);
	}
	v.quick = quick;
	v.quiet = quiet;
	v.edges_sleep = sleep;
	prov = prov_new(argc, argv);
	if (od_begin(&o, out, &e) < 0 || !realpath(o.tmp, tmp_abs))
		goto done;
	snprintf(cdir, sizeof(cdir), "%.4000s/calib", tmp_abs);
	if (fs_mkdirs(cdir, &e) < 0 ||
	    val_calibrate(&v, cdir, gamma, budget, prov, &e) < 0)
		goto done;
	if (out[0] == '/') {
		snprintf(out_abs, sizeof(out_abs), "%.4000s", out);
	} else {
		char cwd[4096];

		if (!getcwd(cwd, sizeof(cwd)))
			cwd[0] = 0;
		snprintf(out_abs, sizeof(out_abs), "%.2000s/%.2000s", cwd, out);
	}
	/* the profile's draft step at the mean context of a request */
	step_prof = v.edge.draft_base_s + v.edge.draft_per_ctx_s *
		    (v.np + v.nout / 2.0);
	if (!(csv = od_open(&o, "validate.csv", &e)))
		goto done;
	rows = json_array();
	skipped = json_array();
	fprintf(csv, "point,label,itl_real_s,itl_sim_s,itl_err,tokens_per_s_real,"
		"tokens_per_s_sim,tokens_per_s_err,alpha_real,alpha_sim,"
		"busy_real,busy_sim,ttft_real_s,ttft_sim_s,lossless,"
		"draft_step_real_s,draft_step_profile_s,"
		"draft_pair_real_s,draft_pair_profile_s,"
		"retime_draft_ratio,"
		"retime_verify_ratio,stack_s,edges_per_cpu,edges_spin,"
		"edge_demand_per_cpu,draft_ratio,verify_ratio,itl_err_in_situ,"
		"tokens_per_s_err_in_situ\n");
	if (!json)
		printf("%-34s %23s  %23s  %11s  %11s  %-8s %s\n%-34s %7s %7s %7s  "
		       "%7s %7s %7s  %5s %5s  %5s %5s  %8s %7s %7s\n", "point",
		       "ITL ms", "tokens/s", "alpha", "cloud busy", "lossless",
		       "in situ err", "", "real", "sim", "err", "real", "sim",
		       "err", "real", "sim", "real", "sim", "", "ITL", "tok/s");
	for (size_t pt = 0; pt < sw.n_points; pt++) {
		size_t nx;
		char **extra;
		char pdir[4400], rdir[4500], label[512], *resolved, *fixed;
		struct val_point p = { 0 };
		int within, within5;
		double err_itl, err_tps, demand, prof_s, pair_prof_s;
		long long edges;
		struct cfg c;
		int r;

		point_label(&sw, pt, label, sizeof(label));
		snprintf(pdir, sizeof(pdir), "%.4000s/points/%zu", tmp_abs, pt);
		snprintf(rdir, sizeof(rdir), "%.4400s/retimed", pdir);
		if (!v.quiet)
			fprintf(stderr, "validate: point %zu of %zu: %s\n", pt + 1,
				sw.n_points, label);
		if (retime)
			val_retime(&v, &p.retime_draft, &p.retime_verify);
		else
			p.retime_draft = p.retime_verify = 1;
		if (val_cfg_load(&sw, pt, sw.seeds[0], NULL, 0, &c, &e) < 0)
			goto done;
		val_wake(&v, &c, &p);
		if (val_stack(&v, &c, &p.stack_s, &e) < 0 ||
		    fs_mkdirs(rdir, &e) < 0 ||
		    val_scaled_profiles(cdir, rdir, p.retime_draft, p.retime_verify,
					"timed again before the point", &e) < 0) {
			cfg_release(&c);
			goto done;
		}
		extra = profile_sets(rdir, pdir, &c, v.tm.name, &v.edge, -1, &p,
				     true, &nx);
		prof_s = step_prof * p.retime_draft; /* the step it ran on */
		pair_prof_s = v.edge.draft_pair_s * p.retime_draft;
		r = val_accept_profile(&v, &c, pdir, prov, &e);
		if (r == 0)
			r = val_simulate(&sw, pt, extra, nx, pdir, &p, &e);
		demand = p.edge_demand / v.edge_cpus;
		edges = 0;
		for (size_t g = 0; g < c.n_groups; g++)
			edges += c.groups[g].count;
		/* edges that share a CPU, each kept busy past the bound */
		if (r == 0 && edges > v.edge_cpus && demand > bound) {
			json_array_append_new(skipped, json_pack(
				"{s:I,s:s,s:f,s:i}", "point", (json_int_t)pt,
				"label", label, "edge_demand_per_cpu", demand,
				"edge_cpus", v.edge_cpus));
			if (!json)
				printf("%-34s not run: its edges would keep %.2f of "
				       "each edge CPU busy (--edge-bound %.2f)\n",
				       label, demand, bound);
			cfg_release(&c);
			sweep_sets_free(extra, nx);
			continue;
		}
		if (r == 0)
			r = val_deploy(&v, &c, pdir, timeout_s, &p, &e);
		if (r == 0)
			r = simulate_insitu(&sw, pt, &c, rdir, pdir, &v,
					    prof_s, &p, &e);
		cfg_release(&c);
		if (r == 0) {
			/* the resolved config, naming the profiles where they
			 * will be */
			r = val_cfg_load(&sw, pt, sw.seeds[0], extra, nx, &c,
					 &e);
			if (r == 0) {
				char name[64];

				resolved = cfg_resolved(&c);
				fixed = replace_all(resolved, tmp_abs, out_abs);
				snprintf(name, sizeof(name), "points/%zu/config.json",
					 pt);
				r = od_write(&o, name, fixed, &e);
				free(resolved);
				free(fixed);
				cfg_release(&c);
			}
		}
		sweep_sets_free(extra, nx);
		if (r < 0)
			goto done;
		lossy += p.mismatched;
		err_itl = fabs(rel(p.sim.itl_s, p.real.itl_s));
		err_tps = fabs(rel(p.sim.tokens_per_s, p.real.tokens_per_s));
		within = err_itl <= VAL_CLOSE && err_tps <= VAL_CLOSE;
		within5 = err_itl <= VAL_TIGHT && err_tps <= VAL_TIGHT;
		close += within;
		tight += within5;
		json_array_append_new(rows, json_pack(
			"{s:I,s:s,s:o,s:o,s:{s:f,s:f,s:f},s:{s:f,s:f,s:f},s:b,s:b,"
			"s:I,s:I,s:I,s:b,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:o,s:f,s:b,"
			"s:f,s:f,s:f}",
			"point", (json_int_t)pt, "label", label,
			"real", side_json(&p.real), "sim", side_json(&p.sim),
			"error", "itl", rel(p.sim.itl_s, p.real.itl_s),
			"tokens_per_s", rel(p.sim.tokens_per_s, p.real.tokens_per_s),
			"busy_fraction", rel(p.sim.busy, p.real.busy),
			"in_situ", "itl", rel(p.insitu.itl_s, p.real.itl_s),
			"tokens_per_s", rel(p.insitu.tokens_per_s,
					    p.real.tokens_per_s),
			"busy_fraction", rel(p.insitu.busy, p.real.busy),
			"within_10pct", within, "within_5pct", within5,
			"requests", (json_int_t)p.requests,
			"not_lossless", (json_int_t)p.mismatched,
			"protocol_errors", (json_int_t)p.errors,
			"lossless", !p.mismatched,
			"draft_step_s_real", p.draft_step_s,
			"draft_step_s_profile", prof_s,
			"draft_pair_s_real", p.draft_pair_s,
			"draft_pair_s_profile", pair_prof_s,
			"retime_draft_ratio", p.retime_draft,
			"retime_verify_ratio", p.retime_verify,
			"stack_s", p.stack_s,
			"wake", wake_json(&p),
			"edges_per_cpu", p.edges_per_cpu,
			"edges_spin", p.edges_spin,
			"edge_demand_per_cpu", demand,
			"draft_ratio", p.draft_ratio,
			"verify_ratio", p.verify_ratio));
		fprintf(csv, "%zu,", pt);
		sweep_csv_field(csv, label);
		fprintf(csv, ",%.6g,%.6g,%.4f,%.6g,%.6g,%.4f,%.4f,%.4f,"
			"%.4f,%.4f,%.6g,%.6g,%d,%.6g,%.6g,%.6g,%.6g,%.4f,%.4f,%.6g,%.3g,"
			"%d,%.3g,"
			"%.4f,%.4f,%.4f,%.4f\n",
			p.real.itl_s,
			p.sim.itl_s, rel(p.sim.itl_s, p.real.itl_s),
			p.real.tokens_per_s, p.sim.tokens_per_s,
			rel(p.sim.tokens_per_s, p.real.tokens_per_s), p.real.alpha,
			p.sim.alpha, p.real.busy, p.sim.busy, p.real.ttft_s,
			p.sim.ttft_s, !p.mismatched, p.draft_step_s, prof_s,
			p.draft_pair_s, pair_prof_s,
			p.retime_draft, p.retime_verify, p.stack_s,
			p.edges_per_cpu, p.edges_spin, demand,
			p.draft_ratio, p.verify_ratio,
			rel(p.insitu.itl_s, p.real.itl_s),
			rel(p.insitu.tokens_per_s, p.real.tokens_per_s));
		if (!json) {
			print_row(stdout, label, &p);
			fflush(stdout);
		}
	}
	if (fclose(csv) != 0) {
		csv = NULL;
		err_set(&e, "%s: cannot write validate.csv", out);
		goto done;
	}
	csv = NULL;
	doc = json_pack("{s:s,s:s,s:s,s:s,s:O,s:I,s:I,s:O,s:f,s:O}", "name",
			sw.name, "target", target, "draft", draft, "text", text,
			"points", rows, "points_within_10pct", (json_int_t)close,
			"points_within_5pct", (json_int_t)tight,
			"not_run", skipped, "edge_bound", bound,
			"provenance", prov);
	{
		char *t = jx_dumps(doc), *sr = sweep_resolved(&sw);

		rc = od_write(&o, "validate.json", t, &e) < 0 ||
		     od_write(&o, OD_MARKER, sr, &e) < 0 ? -1 : 0;
		if (json && rc == 0)
			fputs(t, stdout);
		free(t);
		free(sr);
	}
	json_decref(doc);
	if (rc < 0 || od_commit(&o, &e) < 0) {
		rc = CLI_FAILED;
		goto done;
	}
	if (!json)
		printf("within 5%% on ITL and tokens/s: %ld of %zu points run "
		       "(10%%: %ld; %zu not run, over the edge bound); %s\n"
		       "results: %s\n", tight, sw.n_points -
		       json_array_size(skipped), close, json_array_size(skipped),
		       lossy ?
		       "some outputs were NOT the target's greedy output" :
		       "every output was the target's greedy output", out);
	rc = lossy ? CLI_FAILED : CLI_OK;
	if (lossy)
		err_set(&e, "%ld requests were not lossless", lossy);
done:
	if (rc != CLI_OK)
		fprintf(stderr, "hybridspec: %s\n", e.msg);
	if (csv)
		fclose(csv);
	od_abort(&o);
	json_decref(rows);
	json_decref(skipped);
	json_decref(prov);
	val_release(&v);
	sweep_release(&sw);
	return rc;
}
