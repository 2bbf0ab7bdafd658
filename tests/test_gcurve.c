/* test_gcurve.c: GPU costs by operator: the compiled curves against the
 * committed curves.json, derivation for a GPU without a curve, operator
 * tables read and written, their iteration cost against a hand count, and
 * calib import-profiles on a small profiling folder of Vidur's layout. */
#include "harness.h"

#include "cprof.h"
#include "cfg.h"
#include "cost.h"
#include "gcurve.h"
#include "gpu.h"
#include "jx.h"
#include "optab.h"
#include "plan.h"
#include "shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CURVES "results/calib/gpu/curves.json"
#define H100_7B "results/calib/gpu/H100-SXM-llama2-7b-tp1.json"

/* The rows compiled into sim/gcurve.c are what import-profiles wrote. */
static void compiled_rows(void)
{
	struct err e;
	json_t *doc = jx_load(CURVES, &e), *rows;
	const struct gcurve *f = gcurve_fitted();
	size_t n = 0;

	CHECK_MSG(doc, "%s", e.msg);
	if (!doc)
		return;
	rows = json_object_get(doc, "curves");
	for (; f->gpu[0]; f++, n++) {
		json_t *r = json_array_get(rows, n);

		CHECK(r && !strcmp(json_string_value(json_object_get(r, "gpu")),
				   f->gpu));
		if (!r)
			break;
		CHECK_NEAR(json_number_value(json_object_get(r, "eta_bw")),
			   f->eta_bw, 5e-5);
		for (size_t i = 0; i < GCURVE_N; i++) {
			CHECK_NEAR(json_number_value(json_array_get(
					   json_object_get(r, "eff"), i)),
				   f->eff[i], 5e-5);
			CHECK_NEAR(json_number_value(json_array_get(
					   json_object_get(r, "eta_flops"), i)),
				   f->eta_flops[i], 5e-5);
		}
	}
	CHECK(n >= 2 && n == json_array_size(rows));
	json_decref(doc);
}

/* A profiled GPU keeps its curve; another gets the average at the same
 * distance from its ridge, named after the GPUs it comes from. */
static void derived_curve(void)
{
	const struct gpu_spec *h100 = gpu_preset_find("H100-SXM");
	const struct gpu_spec *h200 = gpu_preset_find("H200");
	struct gcurve c, own;
	double lo = 1, hi = 0;

	gcurve_for(&own, h100);
	CHECK(!strncmp(own.from, "fitted on H100-SXM", 18));
	gcurve_for(&c, h200);
	CHECK(!strncmp(c.from, "derived from", 12) && strstr(c.from, "H100-SXM"));
	for (const struct gcurve *f = gcurve_fitted(); f->gpu[0]; f++) {
		lo = fmin(lo, f->eta_bw);
		hi = fmax(hi, f->eta_bw);
	}
	CHECK(c.eta_bw >= lo && c.eta_bw <= hi);
	for (size_t i = 0; i < GCURVE_N; i++)
		CHECK(c.eff[i] > 0 && c.eff[i] <= 1 && c.eta_flops[i] > 0 &&
		      c.eta_flops[i] <= 1);
	/* a GPU of a ridge far below every fitted one reads the curves far
	 * past their grid: held at its end, never drawn on (A40's falling
	 * last segment had made the average negative, and formulas print a
	 * ridge of -11 tokens) */
	{
		const struct gpu_spec low = { .name = "low", .mem_bw_Bps = 1e12,
					      .fp16_flops = 1e12,
					      .mem_bytes = 8e10 };

		gcurve_for(&c, &low);
		for (size_t i = 0; i < GCURVE_N; i++)
			CHECK_MSG(c.eff[i] > 0 && c.eff[i] <= 1 &&
				  c.eta_flops[i] > 0 && c.eta_flops[i] <= 1,
				  "%g tokens: eff %g, eta_flops %g",
				  gcurve_tok[i], c.eff[i], c.eta_flops[i]);
	}
	/* interpolation: between two grid points, linear */
	CHECK_NEAR(gcurve_at(own.eff, 1.5), (own.eff[0] + own.eff[1]) / 2,
		   1e-12);
}

/* A derived table is the roofline over the curve: never faster than the
 * datasheet, never faster with more tokens. */
static void derived_table(void)
{
	const struct gpu_spec *g = gpu_preset_find("B200");
	const struct shape *m = shape_find("llama3-70b");
	struct gcurve c;
	struct optab t;

	gcurve_for(&c, g);
	optab_derive(&t, m, 2, g, 4, gpu_link_find(g->link), &c);
	for (size_t i = 0; i < GCURVE_N; i++) {
		double by, fl;

		gcurve_body(m, 2, 4, gcurve_tok[i], &by, &fl);
		CHECK(t.layers_s[i] >= gcurve_roofline_s(g, by, fl));
		CHECK(t.allreduce_s[i] > 0);
		if (i)
			CHECK(t.allreduce_s[i] >= t.allreduce_s[i - 1]);
	}
	CHECK(!t.measured && strstr(t.pricing, "derived from"));
	/* the layers too, where the curve's efficiency outgrows the
	 * roofline's time (L4 with llama2-7b had fallen 0.7% from 2 tokens
	 * to 8) */
	for (int k = 0; k < 4; k++) {
		static const char *const gpus[] = { "L4", "H200", "B200",
						    "MI300X" };

		g = gpu_preset_find(gpus[k]);
		m = shape_find(k % 2 ? "llama3-70b" : "llama2-7b");
		gcurve_for(&c, g);
		optab_derive(&t, m, 2, g, 1, gpu_link_find(g->link), &c);
		for (size_t i = 1; i < GCURVE_N; i++)
			CHECK_MSG(t.layers_s[i] >= t.layers_s[i - 1], "%s: %g "
				  "tokens %g s, %g tokens %g s", gpus[k],
				  gcurve_tok[i - 1], t.layers_s[i - 1],
				  gcurve_tok[i], t.layers_s[i]);
	}
}

/* Written and read back equal; a table off the grid is refused at the
 * point, one of another model at /model. */
static void table_io(void)
{
	struct optab t, u;
	struct err e;
	json_t *j;

	CHECK_MSG(optab_load(&t, H100_7B, "llama2-7b", &e) == 0, "%s", e.msg);
	CHECK(t.measured && t.tp == 1 && !strcmp(t.gpu, "H100-SXM"));
	j = optab_json(&t, NULL);
	CHECK_MSG(optab_parse(&u, j, "mem", "llama2-7b", &e) == 0, "%s", e.msg);
	CHECK(!memcmp(u.layers_s, t.layers_s, sizeof(t.layers_s)) &&
	      u.curve.eta_bw == t.curve.eta_bw);
	CHECK(optab_parse(&u, j, "mem", "llama2-70b", &e) < 0 &&
	      strstr(e.msg, "mem: /model: expected \"llama2-70b\""));
	json_array_set_new(json_object_get(j, "tokens"), 3, json_real(9));
	CHECK(optab_parse(&u, j, "mem", "llama2-7b", &e) < 0 &&
	      strstr(e.msg, "mem: /tokens/3: expected 8"));
	json_decref(j);
}

/* A decode step priced by a measured table, counted by hand. */
static void ops_cost(void)
{
	const char *sets[] = { "/cloud/gpu/table=../../" H100_7B, NULL };
	struct cfg c;
	struct cost k;
	struct err e;
	struct optab t;
	double ctx = 1000, want, cls;
	const struct shape *m = shape_find("llama2-7b");

	if (optab_load(&t, H100_7B, "llama2-7b", &e) < 0 ||
	    cfg_load(&c, "configs/paper/cloud_only.json", sets, 1, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	cost_init(&k, &c.cloud);
	CHECK(k.by_ops && k.ops.measured);
	cls = fmax((double)m->vocab * m->dim * 2 / 3.35e12,
		   2.0 * m->vocab * m->dim / 989.4e12) / t.curve.eff[0];
	want = t.layers_s[0] + c.cloud.gpu.overhead_s +
	       2 * shape_kv_elems_per_token(m) * (ctx + 1) /
		       (t.curve.eta_bw * 3.35e12) +
	       shape_attn_flops(m) * ctx / (t.curve.eta_flops[0] * 989.4e12) +
	       cls;
	CHECK_NEAR(cost_iter_s(&k, &(struct cost_batch){ 1, 1, ctx, ctx, 1 },
			       NULL, NULL), want, 1e-12);
	cfg_release(&c);
}

/* A small profiling folder: llama2-7b's layer on a made-up GPU line, time
 * 0.1 ms + 1 us a token, the linear operators half of it. */
static const char *write_profile(const char *gpu, bool drop_emb, int last)
{
	static char root[512];
	char dir[1024], path[1100];
	FILE *f;

	snprintf(root, sizeof(root), "%s/prof", t_tmpdir());
	snprintf(dir, sizeof(dir), "%s/compute/%s/meta-llama/Llama-2-7b-hf",
		 root, gpu);
	for (char *p = dir + strlen(t_tmpdir()) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(dir, 0755);
		*p = '/';
	}
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/mlp.csv", dir);
	if (!(f = fopen(path, "w")))
		return NULL;
	fprintf(f, "%stime_stats.attn_pre_proj.median,time_stats.attn_post_proj."
		"median,time_stats.mlp_up_proj.median,time_stats.mlp_down_proj."
		"median,time_stats.add.median,n_head,n_kv_head,n_embd,"
		"n_expanded_embd,use_gated_mlp,num_tokens,"
		"num_tensor_parallel_workers\n",
		drop_emb ? "" : "time_stats.emb.median,");
	for (int t = 1; t <= last; t *= 2) {
		double ms = 0.1 + 0.001 * t;

		if (!drop_emb)
			fprintf(f, "0.01,");
		fprintf(f, "%g,%g,%g,%g,%g,32,32,4096,11008,True,%d,1\n",
			ms / 8, ms / 8, ms / 8, ms / 8, ms / 2, t);
	}
	fclose(f);
	return root;
}

static void import(void)
{
	struct calib_import o = { .source = "test", .print_rows = false };
	char out[600], path[700];
	struct optab t;
	struct err e;
	json_t *prov = json_object();

	snprintf(out, sizeof(out), "%s/tables", t_tmpdir());
	o.out = out;
	o.dir = write_profile("h100", false, 4096);
	CHECK_MSG(calib_import_profiles(&o, prov, &e) == 0, "%s", e.msg);
	CHECK(t_exists("tables/H100-SXM-llama2-7b-tp1.json") &&
	      t_exists("tables/curves.json"));
	snprintf(path, sizeof(path), "%s/H100-SXM-llama2-7b-tp1.json", out);
	CHECK_MSG(optab_load(&t, path, "llama2-7b", &e) == 0, "%s", e.msg);
	/* 32 layers of 0.101 ms and the embedding's 0.01 ms */
	CHECK_NEAR(t.layers_s[0], 32 * 0.101e-3 + 0.01e-3, 1e-12);
	CHECK_NEAR(t.layers_s[GCURVE_N - 1], 32 * 4.196e-3 + 0.01e-3, 1e-12);
	CHECK_MSG(!strstr(t.pricing, "extrapolated"), "%s", t.pricing);
	/* a stranger's file in OUT: refused before any table is written */
	snprintf(out, sizeof(out), "%s/tables2", t_tmpdir());
	mkdir(out, 0755);
	t_write("tables2/curves.json", "notes\n");
	CHECK(calib_import_profiles(&o, prov, &e) < 0 &&
	      strstr(e.msg, "curves.json' exists and is not a file hybridspec "
		     "wrote") && !t_exists("tables2/H100-SXM-llama2-7b-tp1.json"));
	/* a time that is no number >= 0, named by its line and column */
	snprintf(out, sizeof(out), "%s/tables3", t_tmpdir());
	{
		char csv[1100];
		FILE *f;

		snprintf(csv, sizeof(csv), "%s/compute/h100/meta-llama/"
			 "Llama-2-7b-hf/mlp.csv", o.dir);
		if ((f = fopen(csv, "a"))) {
			fprintf(f, "0.01,-5,0.1,0.1,0.1,0.4,32,32,4096,11008,True,"
				"8192,1\n");
			fclose(f);
		}
	}
	CHECK_MSG(calib_import_profiles(&o, prov, &e) < 0 &&
		  strstr(e.msg, "mlp.csv:15: time_stats.attn_pre_proj.median: "
			 "expected a number in [0, 1e9], got \"-5\"") &&
		  !t_exists("tables3"), "%s", e.msg);
	/* a profile of 1 to 4 tokens: the grid past it a line, and said */
	snprintf(out, sizeof(out), "%s/tables4", t_tmpdir());
	o.dir = write_profile("h100", false, 4);
	CHECK_MSG(calib_import_profiles(&o, prov, &e) == 0, "%s", e.msg);
	snprintf(path, sizeof(path), "%s/H100-SXM-llama2-7b-tp1.json", out);
	CHECK_MSG(optab_load(&t, path, "llama2-7b", &e) == 0, "%s", e.msg);
	CHECK_NEAR(t.layers_s[GCURVE_N - 1], 32 * 4.196e-3 + 0.01e-3, 1e-12);
	CHECK_MSG(strstr(t.pricing, "; past 4 tokens (its last) extrapolated "
			 "from its last two points"), "%s", t.pricing);
	/* one count: no grid can be read off it */
	snprintf(out, sizeof(out), "%s/tables5", t_tmpdir());
	o.dir = write_profile("h100", false, 1);
	CHECK_MSG(calib_import_profiles(&o, prov, &e) < 0 &&
		  strstr(e.msg, "mlp.csv: num_tokens at tp 1: expected two token "
			 "counts or more, the first at most 4096 (the grid's "
			 "last), got 1 from 1") && !t_exists("tables5"),
		  "%s", e.msg);
	o.dir = write_profile("h100", true, 4096);
	CHECK(calib_import_profiles(&o, prov, &e) < 0 &&
	      strstr(e.msg, "mlp.csv") && strstr(e.msg, "time_stats.emb.median"));
	o.dir = t_tmpdir();
	CHECK(calib_import_profiles(&o, prov, &e) < 0 &&
	      strstr(e.msg, "expected a profiling folder in Vidur's layout"));
	json_decref(prov);
}

/* /cloud/gpu/tables: the folder's table of the GPU, model and tp when it
 * has one, else derived; a table of another tp refused. */
static void tables_folder(void)
{
	const char *h100[] = { "/cloud/gpu/tables=../../results/calib/gpu",
			       NULL };
	const char *l3[] = { "/cloud/gpu/tables=../../results/calib/gpu",
			     "/cloud/model=llama3-8b", NULL };
	const char *none[] = { "/cloud/gpu/tables=../../no-such-folder", NULL };
	const char *tp[] = { "/cloud/gpu/table=../../" H100_7B, "/cloud/tp=2",
			     NULL };
	struct cfg c;
	struct cost k;
	struct err e;

	CHECK_MSG(cfg_load(&c, "configs/paper/cloud_only.json", h100, 1, &e) == 0,
		  "%s", e.msg);
	cost_init(&k, &c.cloud);
	CHECK(k.by_ops && k.ops.measured &&
	      !strncmp(cost_pricing(&k), "measured: ", 10));
	cfg_release(&c);
	CHECK_MSG(cfg_load(&c, "configs/paper/cloud_only.json", l3, 2, &e) == 0,
		  "%s", e.msg);
	cost_init(&k, &c.cloud);
	CHECK(k.by_ops && !k.ops.measured &&
	      strstr(cost_pricing(&k), "derived: ") &&
	      strstr(cost_pricing(&k), "fitted on H100-SXM"));
	cfg_release(&c);
	CHECK(cfg_load(&c, "configs/paper/cloud_only.json", none, 1, &e) < 0 &&
	      strstr(e.msg, "/cloud/gpu/tables: cannot read the folder"));
	CHECK(cfg_load(&c, "configs/paper/cloud_only.json", tp, 2, &e) < 0 &&
	      strstr(e.msg, "/cloud/gpu/table: the operator table is of FP16 "
		     "weights (2 bytes) on tp 1"));
}

/* A plan's candidate GPUs keep the base's tables folder: the H100 is
 * priced by its measured table, the L40S derived. */
static void plan_pricing(void)
{
	char text[2048], cwd[1024];
	const char *kinds[2] = { NULL, NULL };
	struct plan p;
	struct err e;

	if (!getcwd(cwd, sizeof(cwd)))
		return;
	snprintf(text, sizeof(text), "{\"base\": \"%s/configs/paper/async.json\","
		 " \"slo\": {\"ttft_s\": 40, \"tpot_s\": 0.25, "
		 "\"attainment\": 0.9}, \"candidates\": {\"gpus\": "
		 "[\"H100-SXM\", \"L40S\"], \"protocols\": [\"cloud_only\"]}}",
		 cwd);
	if (plan_load(&p, t_write("p.json", text), &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	CHECK(p.n_candidates == 2);
	for (size_t c = 0; c < 2; c++)
		CHECK_MSG(plan_lower_bound(&p, c, &kinds[c], &e) >= 1, "%s",
			  e.msg);
	CHECK(kinds[0] && kinds[1] &&
	      !strcmp(kinds[0], "measured") != !strcmp(kinds[1], "measured") &&
	      (!strcmp(kinds[0], "derived") || !strcmp(kinds[1], "derived")));
	plan_release(&p);
}

const struct tcase gcurve_tests[] = {
	{ "gcurve: plan's candidate GPUs keep the base's tables", plan_pricing },
	{ "gcurve: a config's tables folder", tables_folder },
	{ "gcurve: the compiled curves are the committed curves.json", compiled_rows },
	{ "gcurve: a GPU without profiles derives its curve", derived_curve },
	{ "gcurve: a derived table is the roofline over the curve", derived_table },
	{ "gcurve: operator tables read and written", table_io },
	{ "gcurve: a measured decode step against the hand count", ops_cost },
	{ "gcurve: import-profiles on a small Vidur folder", import },
	{ 0 },
};
