/* test_gcheck.c: "gpu check" (study/gcheck.h) on small refs files of its
 * own, never the real configs/gpu-check/refs.json: the strict reader, the
 * pricing each point reports, a batch-1 decode step against the operator
 * table's, the median and worst, and the command's exit statuses. */
#define _DEFAULT_SOURCE /* realpath */
#include "harness.h"

#include "gcheck.h"
#include "gcompare.h"
#include "optab.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TABLES "results/calib/gpu"
#define H100_7B TABLES "/H100-SXM-llama2-7b-tp1.json"

/* A point of the refs format: its id, GPU and metric, and extra keys. */
#define POINT(id, gpu, metric, extra)                                     \
	"{\"id\": \"" id "\", \"gpu\": \"" gpu "\", \"tp\": 1, \"model\": "   \
	"\"llama2-7b\", \"framework\": \"test\", \"dtype\": \"fp16\", "     \
	"\"batch\": 1, \"concurrency\": null, \"prompt_tokens\": 16, "       \
	"\"output_tokens\": 8, \"metric\": \"" metric "\", \"value\": 0.01, " \
	"\"source\": \"s\", \"where\": \"w\", \"quote\": \"q\"" extra "}"

static const char *refs_of(const char *points)
{
	static char text[4096];

	snprintf(text, sizeof(text), "{\"about\": \"test\", \"points\": [%s]}",
		 points);
	return t_write("refs.json", text);
}

/* Loads refs from points and expects the error to hold want. */
static void refused(const char *points, const char *want)
{
	struct gcheck_refs r;
	struct err e;

	CHECK(gcheck_refs_load(&r, refs_of(points), &e) < 0);
	CHECK_MSG(strstr(e.msg, want), "expected \"%s\" in: %s", want, e.msg);
}

static void reader(void)
{
	struct gcheck_refs r;
	struct err e;

	CHECK_MSG(gcheck_refs_load(&r, refs_of(POINT("a", "H100-SXM", "tpot_s",
		  ", \"repeat_range_s\": [0.009, 0.011]")), &e) == 0, "%s", e.msg);
	CHECK(r.n == 1 && r.v[0].batch == 1 && r.v[0].concurrency == 0 &&
	      r.v[0].metric == GCHECK_M_TPOT && r.v[0].value == 0.01);
	gcheck_refs_release(&r);
	refused(POINT("a", "H100-SXM", "tpot_s", "") ","
		POINT("b", "H100-SXM", "latency", ""),
		"refs.json: /points/1/metric: expected one of \"tpot_s\", "
		"\"throughput_tok_s\"");
	refused(POINT("a", "H200-SXM", "tpot_s", ""),
		"/points/0/gpu: expected one of \"H100-SXM\"");
	refused(POINT("a", "H100-SXM", "tpot_s", ", \"colour\": 1"),
		"/points/0/colour: unknown key");
	refused(POINT("a", "H100-SXM", "tpot_s", ", \"dtype_assumed\": 1"),
		"/points/0/dtype_assumed: expected true or false, got 1");
	refused(POINT("a", "H100-SXM", "tpot_s", "") ","
		POINT("a", "H100-SXM", "tpot_s", ""),
		"/points/1/id: expected an id no point before has");
	refused(POINT("a", "H100-SXM", "tpot_s", "") ", {\"id\": \"b\", "
		"\"gpu\": \"H100-SXM\", \"tp\": 1, \"model\": \"llama2-7b\", "
		"\"dtype\": \"fp16\", \"batch\": 2, \"concurrency\": 2}",
		"/points/1/batch: expected a static batch, or null with a "
		"concurrency");
	/* a TPOT of one output token has no value (it was predicted 0) */
	refused("{\"id\": \"a\", \"gpu\": \"H100-SXM\", \"tp\": 1, "
		"\"model\": \"llama2-7b\", \"framework\": \"t\", "
		"\"dtype\": \"fp16\", \"batch\": 1, \"prompt_tokens\": 16, "
		"\"output_tokens\": 1, \"metric\": \"tpot_s\", \"value\": "
		"0.01, \"source\": \"s\", \"where\": \"w\", \"quote\": "
		"\"q\"}", "/points/0/output_tokens: expected 2 or more for a "
		"tpot_s figure");
}

/* Runs points with the tables in tables (NULL: none); 0 on success. */
static int run(const char *points, const char *tables, struct gcheck_refs *r,
	       struct gcheck *g)
{
	struct gcheck_opts o = { .tables = tables };
	struct err e;

	CHECK_MSG(gcheck_refs_load(r, refs_of(points), &e) == 0, "%s", e.msg);
	if (r->n == 0)
		return -1;
	CHECK_MSG(gcheck_run(g, r, &o, &e) == 0, "%s", e.msg);
	return g->n == r->n ? 0 : -1;
}

/* The H100 has a table of llama2-7b at tp 1, the A100-40G none. */
static void pricing(void)
{
	struct gcheck_refs r;
	struct gcheck g;

	if (run(POINT("h", "H100-SXM", "tpot_s", "") ","
		POINT("a", "A100-40G", "ttft_s", ""), TABLES, &r, &g) == 0) {
		CHECK(g.rows[0].priced_by && !strcmp(g.rows[0].priced_by,
						     "measured") &&
		      !strncmp(g.rows[0].pricing, "measured: ", 10));
		CHECK(g.rows[1].priced_by && !strcmp(g.rows[1].priced_by,
						     "derived") &&
		      !strncmp(g.rows[1].pricing, "derived: ", 9));
		CHECK(!g.rows[0].refused.msg[0] && isfinite(g.rows[1].predicted));
		gcheck_release(&g);
	}
	gcheck_refs_release(&r);
	if (run(POINT("h", "H100-SXM", "tpot_s", ""), NULL, &r, &g) == 0) {
		CHECK(g.rows[0].priced_by &&
		      !strcmp(g.rows[0].priced_by, "derived"));
		gcheck_release(&g);
	}
	gcheck_refs_release(&r);
}

/* A batch of one decodes a token a step: about the table's layers at one
 * token, plus what the step adds (overhead, KV, logits), not twice it. */
static void decode_step(void)
{
	struct gcheck_refs r;
	struct gcheck g;
	struct optab t;
	struct err e;

	CHECK_MSG(optab_load(&t, H100_7B, "llama2-7b", &e) == 0, "%s", e.msg);
	if (run(POINT("h", "H100-SXM", "tpot_s", ""), TABLES, &r, &g) == 0) {
		double tpot = g.rows[0].predicted;

		CHECK_MSG(tpot > t.layers_s[0] && tpot < 2 * t.layers_s[0],
			  "TPOT %g s against the layers' %g s", tpot,
			  t.layers_s[0]);
		gcheck_release(&g);
	}
	gcheck_refs_release(&r);
}

static struct gcheck_row hand_row(const char *gpu, enum gcheck_metric m,
				  enum gcheck_class cls, double published,
				  double predicted)
{
	return (struct gcheck_row){ .pt = { .id = "x", .gpu = gpu,
		.framework = "f", .metric = m, .value = published },
		.cls = cls, .predicted = predicted };
}

#define LOOP(id, clients, extra)                                          \
	"{\"id\": \"" id "\", \"gpu\": \"L4\", \"tp\": 1, \"model\": "        \
	"\"llama2-7b\", \"framework\": \"test\", \"dtype\": \"fp16\", "     \
	"\"batch\": null, \"concurrency\": " clients ", \"prompt_tokens\": " \
	"2000, \"output_tokens\": 1000, \"metric\": \"tpot_s\", \"value\": " \
	"0.05, \"source\": \"s\", \"where\": \"w\", \"quote\": \"q\"" extra "}"

/* An L4 holds about 14,000 tokens of llama2-7b's FP16 KV beside its
 * weights: 8 clients of 3,000-token requests outgrow it (a
 * concurrency-bound point), 2 do not, nor 8 with an FP8 KV cache. */
static void bound(void)
{
	struct gcheck_refs r;
	struct gcheck g;

	if (run(LOOP("c8", "8", "") "," LOOP("c2", "2", "") ","
		LOOP("c8-fp8", "8", ", \"kv_dtype\": \"fp8\"") ","
		LOOP("c8-reserve", "8", ", \"kv_policy\": \"reserve\""),
		NULL, &r, &g) == 0) {
		CHECK(g.rows[0].cls == GCHECK_BOUND &&
		      g.rows[1].cls == GCHECK_DECODE &&
		      g.rows[2].cls == GCHECK_DECODE &&
		      g.rows[3].cls == GCHECK_BOUND);
		for (int i = 0; i < 4; i++)
			CHECK_MSG(isfinite(g.rows[i].predicted), "%s",
				  g.rows[i].refused.msg);
		/* fewer requests at once, each alone the faster */
		CHECK(g.rows[3].predicted < g.rows[0].predicted);
		gcheck_release(&g);
	}
	gcheck_refs_release(&r);
}

/* |ratio - 1| of the decode rows: 0.05, 0.1, 0.3, 0.03 (and one not
 * simulated, one prefill, one concurrency-bound): median 0.075, worst 0.3
 * (over 25%). */
static void stats(void)
{
	const enum gcheck_class D = GCHECK_DECODE;
	const struct gcheck_row rows[] = {
		hand_row("A", GCHECK_M_TPOT, D, 0.02, 0.021),
		hand_row("B", GCHECK_M_THROUGHPUT, D, 100, 90),
		hand_row("A", GCHECK_M_E2E, D, 1, 1.3),
		hand_row("B", GCHECK_M_TPOT, D, 0.1, 0.097),
		hand_row("A", GCHECK_M_TPOT, D, 0.1, NAN),
		hand_row("A", GCHECK_M_TTFT, GCHECK_PREFILL, 0.1, 0.14),
		hand_row("A", GCHECK_M_TPOT, GCHECK_BOUND, 0.1, 0.12),
	};
	struct gcheck_stat s = gcheck_stat(rows, 7, GCHECK_DECODE, GCHECK_ALL,
					   NULL);

	CHECK(s.n == 4);
	CHECK_NEAR(s.median, 0.075, 1e-12);
	CHECK_NEAR(s.worst, 0.3, 1e-12);
	CHECK(!gcheck_holds(GCHECK_DECODE, &s));
	s = gcheck_stat(rows, 6, GCHECK_DECODE, GCHECK_BY_GPU, "A");
	CHECK(s.n == 2 && fabs(s.median - 0.175) < 1e-12);
	s = gcheck_stat(rows, 6, GCHECK_PREFILL, GCHECK_BY_SOURCE, "f");
	CHECK(s.n == 1 && fabs(s.worst - 0.4) < 1e-12 &&
	      !gcheck_holds(GCHECK_PREFILL, &s));
	s = gcheck_stat(rows, 7, GCHECK_BOUND, GCHECK_ALL, NULL);
	CHECK(s.n == 1 && fabs(s.worst - 0.2) < 1e-12 &&
	      gcheck_holds(GCHECK_BOUND, &s));
	s = gcheck_stat(rows, 2, GCHECK_DECODE, GCHECK_ALL, NULL);
	CHECK(gcheck_holds(GCHECK_DECODE, &s));
	s = gcheck_stat(rows, 0, GCHECK_DECODE, GCHECK_ALL, NULL);
	CHECK(s.n == 0 && isnan(s.median) && !gcheck_holds(GCHECK_DECODE, &s));
}

/* The command: 0 with the CSV written, 2 on a bad file. */
static void command(void)
{
	char args[PATH_MAX + 64], out[8192], tables[PATH_MAX];
	char *csv;

	if (!realpath(TABLES, tables)) {
		CHECK_MSG(0, "no %s", TABLES);
		return;
	}
	refs_of(POINT("h", "H100-SXM", "tpot_s", ""));
	snprintf(args, sizeof(args), "gpu check refs.json --tables '%s' -o "
		 "rows.csv", tables);
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	CHECK(strstr(out, "gpu check: 1/1 h: tpot_s published 0.01") &&
	      strstr(out, "decode (tpot_s, throughput_tok_s, e2e_s): 1 points"));
	csv = t_slurp("rows.csv");
	CHECK(csv && !strncmp(csv, "id,gpu,model,tp,batch,", 22) &&
	      strstr(csv, "\nh,H100-SXM,llama2-7b,1,1,,16,8,test,tpot_s,0.01,"));
	free(csv);
	/* its own table again with --overwrite, yes (without, it says to
	 * add it, before simulating); the REFS file, a stranger's or
	 * another command's of hybridspec's (a profile), no */
	CHECK_MSG(t_run(args, out, sizeof(out)) == 2 &&
		  strstr(out, "'rows.csv' exists: add --overwrite") &&
		  !strstr(out, "1/1 h:"), "%s", out);
	strcat(args, " --overwrite");
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	snprintf(args, sizeof(args), "gpu check refs.json --tables '%s' -o "
		 "refs.json --overwrite", tables);
	CHECK_MSG(t_run(args, out, sizeof(out)) == 2 &&
		  strstr(out, "'refs.json' exists and is not a file gpu check "
			 "wrote"), "%s", out);
	t_write("profile.json", "{\"kind\": \"edge\", \"provenance\": "
		"{\"command\": \"hybridspec calib cpu\"}}\n");
	snprintf(args, sizeof(args), "gpu check refs.json --tables '%s' -o "
		 "profile.json --overwrite", tables);
	CHECK_MSG(t_run(args, out, sizeof(out)) == 2 &&
		  strstr(out, "'profile.json' exists and is not a file gpu "
			 "check wrote"), "%s", out);
	/* a table that does not read is bad input, not a refused point */
	snprintf(tables, sizeof(tables), "%s/bad-tables", t_tmpdir());
	mkdir(tables, 0777);
	t_write("bad-tables/A100-80G-llama2-7b-tp1.json", "{bad");
	CHECK(t_run("gpu check refs.json --tables bad-tables -o again.csv", out,
		    sizeof(out)) == 2 &&
	      strstr(out, "A100-80G-llama2-7b-tp1.json:1:") &&
	      !t_exists("again.csv"));
	/* nor one that reads as JSON but is no table (every point had been
	 * "not simulated", exit 0) */
	t_write("bad-tables/A100-80G-llama2-7b-tp1.json", "{}");
	CHECK_MSG(t_run("gpu check refs.json --tables bad-tables -o again.csv",
			out, sizeof(out)) == 2 &&
		  strstr(out, "A100-80G-llama2-7b-tp1.json: /: missing required "
			 "key \"gpu\"") && !t_exists("again.csv"), "%s", out);
	refs_of(POINT("h", "H100-SXM", "speed", ""));
	CHECK(t_run("gpu check refs.json --quiet", out, sizeof(out)) == 2 &&
	      strstr(out, "refs.json: /points/0/metric: expected one of"));
}

/* gpu compare: a measured table's points priced in its order, by the
 * other GPU's operator table (FP16) or derived (INT4), dearer at longer
 * contexts and for more tokens; what it refuses. */
#define H200_TABLE(cal, quant) \
	"{\"kind\": \"verify\", \"gpu\": \"NVIDIA H200\", \"model\": " \
	"\"llama2-7b\", \"calibrated\": " cal ", \"tokens\": [1, 64], " \
	"\"ctx\": [128, 2048], \"seconds\": [[0.008, 0.02], [0.01, 0.04]], " \
	"\"provenance\": {\"gpu_device\": \"NVIDIA H200\", \"quant\": \"" \
	quant "\"}}"

static void compare(void)
{
	struct gcompare g;
	struct err e;
	char out[8192], m[4096], q[4096], rf[4096], tables[PATH_MAX], args[5000];

	snprintf(m, sizeof(m), "%s", t_write("m.json", H200_TABLE("true", "f16")));
	snprintf(q, sizeof(q), "%s", t_write("q.json", H200_TABLE("true",
								  "w4a16-g128-sym")));
	snprintf(rf, sizeof(rf), "%s", t_write("r.json", H200_TABLE("false", "f16")));
	if (!realpath(TABLES, tables)) {
		CHECK_MSG(0, "no %s", TABLES);
		return;
	}
	CHECK_MSG(gcompare_run(&g, m, NULL, "H100-SXM", TABLES,
			       &e) == 0, "%s", e.msg);
	CHECK(g.n == 4 && !strcmp(g.gpu, "H200") && !strcmp(g.dtype, "fp16"));
	CHECK(!strncmp(g.against_pricing, "measured", 8) &&
	      !strncmp(g.own_pricing, "derived", 7));
	for (size_t i = 0; g.n == 4 && i < 4; i++) {
		const struct gcompare_row *r = &g.rows[i];

		CHECK(r->tokens == (i < 2 ? 1 : 64) &&
		      r->ctx == (i % 2 ? 2048 : 128) && r->against_s > 0 &&
		      r->own_s > 0);
		if (i % 2)
			CHECK(r->against_s > g.rows[i - 1].against_s &&
			      r->own_s > g.rows[i - 1].own_s);
	}
	CHECK(g.n == 4 && g.rows[1].measured_s == 0.02 &&
	      g.rows[2].against_s > g.rows[0].against_s);
	gcompare_release(&g);
	CHECK_MSG(gcompare_run(&g, q, NULL, "H100-SXM", TABLES,
			       &e) == 0, "%s", e.msg);
	CHECK(!strcmp(g.dtype, "int4") && !strncmp(g.against_pricing,
						    "derived", 7));
	gcompare_release(&g);
	CHECK(gcompare_run(&g, rf, NULL, "H100-SXM", TABLES,
			   &e) < 0 && strstr(e.msg, "calib gpu measured"));
	CHECK(gcompare_run(&g, m, NULL, "H300", TABLES, &e) < 0 &&
	      strstr(e.msg, "H300"));
	CHECK(t_run("gpu compare r.json", out, sizeof(out)) == 2 &&
	      strstr(out, "r.json: expected a table"));
	/* a CPU's table (calib cpu --verify): no GPU named */
	t_write("c.json", "{\"kind\": \"verify\", \"gpu\": \"cpu-2t\", "
		"\"model\": \"llama2-7b\", \"calibrated\": true, \"tokens\": [1], "
		"\"ctx\": [128], \"seconds\": [[0.5]], \"provenance\": {}}");
	CHECK_MSG(t_run("gpu compare c.json", out, sizeof(out)) == 2 &&
		  strstr(out, "c.json: expected a table that calib gpu measured "
			 "on a GPU") && strstr(out, "got one of cpu-2t"), "%s", out);
	snprintf(args, sizeof(args), "gpu compare m.json --tables '%s'", tables);
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0 &&
		  strstr(out, "H100-SXM: median |diff|"), "%s", out);
	/* from a folder that is not the repository: the committed tables */
	CHECK_MSG(t_run("gpu compare m.json", out, sizeof(out)) == 0 &&
		  strstr(out, "H100-SXM: median |diff|"), "%s", out);
}

const struct tcase gcheck_tests[] = {
	{ "gpu check: the refs reader refuses with the pointer", reader },
	{ "gpu check: what priced each point, measured or derived", pricing },
	{ "gpu check: a batch-1 TPOT against the table's one-token layers",
	  decode_step },
	{ "gpu check: median and worst on a hand-made list", stats },
	{ "gpu check: points that outgrow the KV pool are concurrency-bound",
	  bound },
	{ "gpu check: the command's output and exit statuses", command },
	{ "gpu compare: a measured table against both pricings", compare },
	{ 0 },
};
